/* Hostile calls through the drop-in's C ABI (issue 29, finding 4): NULL, zero, random,
 * destroyed and double-destroyed handles; SIZE_MAX sizes; bad queue sizes and enums; calls
 * before hsa_init and after hsa_shut_down; and 32 threads churning signals, queues and memory
 * while racing double destroys. Prints `call=status` for each call (the value a call returns
 * when it returns no status), one per line; the test counts the lines, checks the statuses ROCr
 * gives where it gives one, and requires a clean exit: no entry point may abort the process.
 *
 * Handles are looked up by the soft runtime, so random and destroyed ones are safe to pass;
 * ROCr dereferences them, so this program runs only on the drop-in.
 *
 * Usage: hostile CODE_OBJECT.hsaco
 */
#define _POSIX_C_SOURCE 200809L
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SHOW(call) printf("%s=0x%llx\n", #call, (unsigned long long)(call))
#define CHURN_THREADS 32
#define CHURN_ROUNDS 100
#define SHARED_SIGNALS 64

static hsa_agent_t gpu;
static hsa_amd_memory_pool_t pool;
static hsa_signal_t shared[SHARED_SIGNALS];

static hsa_status_t find_gpu(hsa_agent_t agent, void *data) {
  hsa_device_type_t type;
  (void)data;
  if (hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) == HSA_STATUS_SUCCESS && type == HSA_DEVICE_TYPE_GPU) {
    gpu = agent;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_pool(hsa_amd_memory_pool_t candidate, void *data) {
  bool allowed = false;
  (void)data;
  if (hsa_amd_memory_pool_get_info(candidate, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &allowed) ==
          HSA_STATUS_SUCCESS &&
      allowed) {
    pool = candidate;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

static void *read_file(const char *path, size_t *size) {
  FILE *file = fopen(path, "rb");
  if (!file) return NULL;
  fseek(file, 0, SEEK_END);
  *size = (size_t)ftell(file);
  fseek(file, 0, SEEK_SET);
  void *bytes = malloc(*size);
  if (bytes && fread(bytes, 1, *size, file) != *size) {
    free(bytes);
    bytes = NULL;
  }
  fclose(file);
  return bytes;
}

/* Calls every kind of entry point must refuse before hsa_init and after hsa_shut_down. */
static void closed_runtime(void) {
  hsa_signal_t signal = {0};
  hsa_executable_t executable = {0};
  hsa_code_object_reader_t reader = {0};
  uint64_t timestamp = 0;
  const char *text = NULL;
  char bytes[16] = {0};
  SHOW(hsa_shut_down());
  SHOW(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &timestamp));
  SHOW(hsa_iterate_agents(find_gpu, NULL));
  SHOW(hsa_signal_create(1, 0, NULL, &signal));
  SHOW(hsa_amd_signal_create(1, 0, NULL, 0, &signal));
  SHOW(hsa_signal_destroy((hsa_signal_t){0x1234}));
  SHOW(hsa_signal_load_relaxed((hsa_signal_t){0x1234}));
  SHOW(hsa_queue_destroy(NULL));
  SHOW(hsa_queue_load_write_index_relaxed(NULL));
  SHOW(hsa_code_object_reader_create_from_memory(bytes, sizeof bytes, &reader));
  SHOW(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &executable));
  SHOW(hsa_amd_memory_pool_free((void *)0x4000));
  SHOW(hsa_amd_register_system_event_handler(NULL, NULL));
  SHOW(hsa_status_string(HSA_STATUS_ERROR, &text));
}

static void *churn(void *argument) {
  unsigned seed = (unsigned)(uintptr_t)argument;
  for (int round = 0; round < CHURN_ROUNDS; ++round) {
    hsa_signal_t signal;
    if (hsa_signal_create(1, 0, NULL, &signal) == HSA_STATUS_SUCCESS) {
      hsa_signal_subtract_scacq_screl(signal, 1);
      hsa_signal_wait_scacquire(signal, HSA_SIGNAL_CONDITION_EQ, 0, 1000, HSA_WAIT_STATE_ACTIVE);
      hsa_signal_destroy(signal);
      hsa_signal_destroy(signal); /* double destroy */
    }
    /* No write to the memory: another thread's double free may release it once this thread's
     * allocation reuses the address (as on ROCr, a free names an address, not an allocation), so a
     * write here would be this program's own use after free, not the runtime's. */
    void *memory = NULL;
    if (hsa_amd_memory_pool_allocate(pool, 4096, 0, &memory) == HSA_STATUS_SUCCESS) {
      hsa_amd_memory_pool_free(memory);
      hsa_amd_memory_pool_free(memory); /* double free */
    }
    if (round % 10 == 0) {
      hsa_queue_t *queue = NULL;
      if (hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &queue) ==
          HSA_STATUS_SUCCESS) {
        hsa_queue_add_write_index_relaxed(queue, 0);
        hsa_queue_destroy(queue);
        hsa_queue_destroy(queue); /* double destroy of a freed queue */
      }
    }
    /* Racing destroys and loads of the shared signals, from every thread. */
    seed = seed * 1103515245u + 12345u;
    hsa_signal_t victim = shared[(seed >> 16) % SHARED_SIGNALS];
    hsa_signal_load_scacquire(victim);
    hsa_signal_add_scacq_screl(victim, 1);
    hsa_signal_destroy(victim);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s CODE_OBJECT.hsaco\n", argv[0]);
    return 2;
  }
  size_t size = 0;
  void *code_object = read_file(argv[1], &size);
  if (!code_object) {
    fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  closed_runtime();
  if (hsa_init() != HSA_STATUS_SUCCESS) {
    fprintf(stderr, "hsa_init failed\n");
    return 1;
  }
  hsa_iterate_agents(find_gpu, NULL);
  hsa_amd_agent_iterate_memory_pools(gpu, find_pool, NULL);
  const hsa_agent_t random_agent = {0x7f3a9c5e11d2ull};
  const hsa_signal_t random_signal = {0x5eed5eed5eedull};
  const hsa_amd_memory_pool_t random_pool = {0x0badf00dull};
  const hsa_executable_t random_executable = {0xdeadbeefull};
  const hsa_code_object_reader_t random_reader = {0xfeedfaceull};
  const hsa_executable_symbol_t random_symbol = {0xc0ffeeull};
  hsa_queue_t *const random_queue = (hsa_queue_t *)(uintptr_t)0x10000ull;
  char name[64];
  uint64_t value = 0;
  void *pointer = NULL;
  const char *text = NULL;
  hsa_signal_t signal = {0};
  hsa_queue_t *queue = NULL;
  hsa_executable_t executable = {0};
  hsa_code_object_reader_t reader = {0};
  hsa_executable_symbol_t symbol = {0};
  hsa_amd_profiling_dispatch_time_t time;
  uint32_t mask[4] = {0};
  hsa_signal_condition_t conditions[1] = {HSA_SIGNAL_CONDITION_EQ};
  hsa_signal_value_t values[1] = {0};

  /* NULL outputs and callbacks. */
  SHOW(hsa_status_string(HSA_STATUS_ERROR, NULL));
  SHOW(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, NULL));
  SHOW(hsa_iterate_agents(NULL, NULL));
  SHOW(hsa_agent_get_info(gpu, HSA_AGENT_INFO_NAME, NULL));
  SHOW(hsa_agent_iterate_isas(gpu, NULL, NULL));
  SHOW(hsa_isa_get_info_alt((hsa_isa_t){0}, HSA_ISA_INFO_NAME, NULL));
  SHOW(hsa_amd_agent_iterate_memory_pools(gpu, NULL, NULL));
  SHOW(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SIZE, NULL));
  SHOW(hsa_amd_agent_memory_pool_get_info(gpu, pool, HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, NULL));
  SHOW(hsa_amd_memory_pool_allocate(pool, 64, 0, NULL));
  SHOW(hsa_signal_create(1, 0, NULL, NULL));
  SHOW(hsa_amd_signal_create(1, 0, NULL, 0, NULL));
  SHOW(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, NULL));
  SHOW(hsa_code_object_reader_create_from_memory(code_object, size, NULL));
  SHOW(hsa_code_object_reader_create_from_memory(NULL, 16, &reader));
  SHOW(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, NULL));
  SHOW(hsa_amd_profiling_convert_tick_to_system_domain(gpu, 1, NULL));
  SHOW(hsa_amd_queue_cu_get_mask(NULL, 32, mask));
  SHOW(hsa_amd_signal_wait_any(1, NULL, conditions, values, 1000, HSA_WAIT_STATE_ACTIVE, NULL));
  SHOW(hsa_amd_agents_allow_access(1, NULL, NULL, code_object));

  /* Zero sizes and counts. */
  SHOW(hsa_amd_memory_pool_allocate(pool, 0, 0, &pointer));
  SHOW(hsa_queue_create(gpu, 0, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &queue));
  SHOW(hsa_code_object_reader_create_from_memory(code_object, 0, &reader));
  SHOW(hsa_amd_signal_wait_any(0, &signal, conditions, values, 1000, HSA_WAIT_STATE_ACTIVE, NULL));
  SHOW(hsa_amd_agents_allow_access(0, &gpu, NULL, code_object));

  /* Random handles. */
  SHOW(hsa_agent_get_info(random_agent, HSA_AGENT_INFO_NAME, name));
  SHOW(hsa_agent_iterate_isas(random_agent, NULL, NULL));
  SHOW(hsa_amd_agent_iterate_memory_pools(random_agent, find_pool, NULL));
  SHOW(hsa_amd_memory_pool_get_info(random_pool, HSA_AMD_MEMORY_POOL_INFO_SIZE, &value));
  SHOW(hsa_amd_memory_pool_allocate(random_pool, 64, 0, &pointer));
  SHOW(hsa_amd_memory_pool_free((void *)0x7f0000001000ull));
  SHOW(hsa_signal_destroy(random_signal));
  SHOW(hsa_signal_load_scacquire(random_signal));
  SHOW(hsa_signal_wait_scacquire(random_signal, HSA_SIGNAL_CONDITION_EQ, 0, 1000, HSA_WAIT_STATE_ACTIVE));
  SHOW(hsa_amd_profiling_get_dispatch_time(gpu, random_signal, &time));
  SHOW(hsa_amd_profiling_convert_tick_to_system_domain(random_agent, 1, &value));
  SHOW(hsa_queue_destroy(random_queue));
  SHOW(hsa_queue_load_read_index_scacquire(random_queue));
  SHOW(hsa_queue_cas_write_index_scacq_screl(random_queue, 0, 1));
  SHOW(hsa_amd_queue_set_priority(random_queue, HSA_AMD_QUEUE_PRIORITY_HIGH));
  SHOW(hsa_amd_queue_cu_set_mask(random_queue, 32, mask));
  SHOW(hsa_amd_profiling_set_profiler_enabled(random_queue, 1));
  SHOW(hsa_code_object_reader_destroy(random_reader));
  SHOW(hsa_executable_freeze(random_executable, NULL));
  SHOW(hsa_executable_destroy(random_executable));
  SHOW(hsa_executable_load_agent_code_object(random_executable, gpu, random_reader, NULL, NULL));
  SHOW(hsa_executable_get_symbol_by_name(random_executable, "fill_x4.kd", &gpu, &symbol));
  SHOW(hsa_executable_symbol_get_info(random_symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &value));

  /* SIZE_MAX sizes and out-of-range counts. */
  SHOW(hsa_code_object_reader_create_from_memory(code_object, SIZE_MAX, &reader));
  SHOW(hsa_code_object_reader_create_from_memory(code_object, (size_t)1 << 63, &reader));
  SHOW(hsa_amd_memory_pool_allocate(pool, SIZE_MAX, 0, &pointer));
  SHOW(hsa_amd_memory_pool_allocate(pool, SIZE_MAX - 4095, 0, &pointer));
  SHOW(hsa_amd_agents_allow_access(UINT32_MAX, NULL, NULL, code_object));
  SHOW(hsa_amd_signal_wait_any(UINT32_MAX, NULL, NULL, NULL, 1000, HSA_WAIT_STATE_ACTIVE, NULL));

  /* Bad queue sizes. */
  SHOW(hsa_queue_create(gpu, 3, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &queue));
  SHOW(hsa_queue_create(gpu, 100, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &queue));
  SHOW(hsa_queue_create(gpu, UINT32_MAX, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &queue));
  SHOW(hsa_queue_create(gpu, 1u << 31, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &queue));
  SHOW(hsa_queue_create(random_agent, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &queue));
  SHOW(hsa_queue_create(gpu, 64, (hsa_queue_type32_t)99, NULL, NULL, UINT32_MAX, UINT32_MAX, &queue));

  /* Bad enumerations. */
  SHOW(hsa_status_string((hsa_status_t)0xFFFF, &text));
  SHOW(hsa_system_get_info((hsa_system_info_t)0xFFFF, &value));
  SHOW(hsa_agent_get_info(gpu, (hsa_agent_info_t)999999, name));
  SHOW(hsa_executable_create_alt((hsa_profile_t)7, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &executable));
  SHOW(hsa_executable_create_alt(HSA_PROFILE_FULL, (hsa_default_float_rounding_mode_t)99, NULL, &executable));

  /* Destroyed and double-destroyed handles. */
  SHOW(hsa_signal_create(1, 0, NULL, &signal));
  SHOW(hsa_signal_destroy(signal));
  SHOW(hsa_signal_destroy(signal));
  SHOW(hsa_signal_load_relaxed(signal));
  SHOW(hsa_signal_wait_scacquire(signal, HSA_SIGNAL_CONDITION_LT, 1, 1000, HSA_WAIT_STATE_BLOCKED));
  SHOW(hsa_amd_memory_pool_allocate(pool, 4096, 0, &pointer));
  SHOW(hsa_amd_memory_pool_free(pointer));
  SHOW(hsa_amd_memory_pool_free(pointer));
  SHOW(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &queue));
  SHOW(hsa_queue_destroy(queue));
  SHOW(hsa_queue_destroy(queue));
  SHOW(hsa_queue_load_write_index_relaxed(queue));
  SHOW(hsa_amd_queue_set_priority(queue, HSA_AMD_QUEUE_PRIORITY_LOW));

  /* The loader: one reader loaded twice into one executable, a frozen executable, garbage. */
  SHOW(hsa_code_object_reader_create_from_memory(code_object, size, &reader));
  SHOW(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &executable));
  SHOW(hsa_executable_load_agent_code_object(executable, gpu, reader, NULL, NULL));
  SHOW(hsa_executable_load_agent_code_object(executable, gpu, reader, NULL, NULL));
  SHOW(hsa_executable_freeze(executable, NULL));
  SHOW(hsa_executable_freeze(executable, NULL));
  SHOW(hsa_executable_load_agent_code_object(executable, gpu, reader, NULL, NULL));
  SHOW(hsa_executable_get_symbol_by_name(executable, NULL, &gpu, &symbol));
  SHOW(hsa_executable_get_symbol_by_name(executable, "no_such_kernel.kd", &gpu, &symbol));
  SHOW(hsa_executable_destroy(executable));
  SHOW(hsa_executable_destroy(executable));
  SHOW(hsa_code_object_reader_destroy(reader));
  SHOW(hsa_code_object_reader_destroy(reader));
  SHOW(hsa_code_object_reader_create_from_memory(name, sizeof name, &reader));

  /* 32 threads churning, racing destroys of shared signals. */
  for (int index = 0; index < SHARED_SIGNALS; ++index) hsa_signal_create(0, 0, NULL, &shared[index]);
  pthread_t threads[CHURN_THREADS];
  int started = 0;
  for (int index = 0; index < CHURN_THREADS; ++index) {
    if (pthread_create(&threads[index], NULL, churn, (void *)(uintptr_t)(index + 1)) == 0) ++started;
  }
  for (int index = 0; index < started; ++index) pthread_join(threads[index], NULL);
  printf("churn_threads=0x%x\n", (unsigned)started);

  SHOW(hsa_shut_down());
  closed_runtime();
  free(code_object);
  return 0;
}
