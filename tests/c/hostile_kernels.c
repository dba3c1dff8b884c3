/* Hostile packets and kernels through the drop-in (issue 55), as a buggy program would send them:
 * one case per process. Each prints its findings as `key=value` lines:
 *   status=0x...        what the queue's error callback received (0: none)
 *   completed=0|1       whether the dispatch's completion signal reached 0
 *   canaries=intact|... host globals, stack and heap the agent was never given
 *   after=ok            a valid dispatch on a new queue completed afterwards
 *   ms=N max_rss_kib=N  the case's wall time and the process's peak resident memory
 * and exits 0: the process survived. tests/soft_drop_in.rs runs each case and checks the values.
 *
 * Cases: private (1 GiB of scratch per work-item), grid (2^64 work-items), forged_signal (a
 * kernel rewrites its completion signal's kind and value to point at a host global), wild_store
 * (a store far from any allocation: a memory-fault event), spin_destroy (a kernel that never ends
 * on 64 workgroups, its queue destroyed), watchdog (the same spin under
 * AQUEDUCT_SOFT_DISPATCH_TIMEOUT_MS).
 *
 * Usage: hostile_kernels HOSTILE_KERNELS.hsaco CASE
 */
#define _POSIX_C_SOURCE 200809L
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "read_file.h"

#define CHECK(call)                                                                                     \
  do {                                                                                                  \
    hsa_status_t status_ = (call);                                                                      \
    if (status_ != HSA_STATUS_SUCCESS) {                                                                \
      fprintf(stderr, "%s:%d: %s failed: 0x%x\n", __FILE__, __LINE__, #call, (unsigned)status_);        \
      exit(1);                                                                                          \
    }                                                                                                   \
  } while (0)

#define CANARY 0x5eedcafef00dull

static hsa_agent_t gpu, cpu;
static hsa_amd_memory_pool_t kernarg_pool, fine_pool;
static uint64_t spin_until, store_word;
static volatile uint64_t global_canary = CANARY;
static volatile uint32_t callback_status;
static volatile uint64_t fault_events;

static hsa_status_t find_agents(hsa_agent_t agent, void *data) {
  hsa_device_type_t type;
  (void)data;
  CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type));
  if (type == HSA_DEVICE_TYPE_GPU && !gpu.handle) gpu = agent;
  if (type == HSA_DEVICE_TYPE_CPU && !cpu.handle) cpu = agent;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_pools(hsa_amd_memory_pool_t pool, void *data) {
  hsa_amd_segment_t segment;
  uint32_t flags = 0;
  (void)data;
  CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment));
  if (segment != HSA_AMD_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
  CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
  if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) && !kernarg_pool.handle) kernarg_pool = pool;
  else if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) && !fine_pool.handle) fine_pool = pool;
  return HSA_STATUS_SUCCESS;
}

static void on_queue_error(hsa_status_t status, hsa_queue_t *queue, void *data) {
  (void)queue;
  (void)data;
  callback_status = (uint32_t)status;
}

/* Takes every memory-fault event: without a handler that does, ROCr aborts the process. */
static hsa_status_t on_system_event(const hsa_amd_event_t *event, void *data) {
  (void)data;
  if (event->event_type == HSA_AMD_GPU_MEMORY_FAULT_EVENT) fault_events++;
  return HSA_STATUS_SUCCESS;
}

static uint64_t kernel_object(hsa_executable_t executable, const char *name) {
  hsa_executable_symbol_t symbol;
  uint64_t object;
  CHECK(hsa_executable_get_symbol_by_name(executable, name, &gpu, &symbol));
  CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object));
  return object;
}

static void *allocate(hsa_amd_memory_pool_t pool, size_t size) {
  void *pointer;
  CHECK(hsa_amd_memory_pool_allocate(pool, size, 0, &pointer));
  CHECK(hsa_amd_agents_allow_access(1, &gpu, NULL, pointer));
  memset(pointer, 0, size);
  return pointer;
}

static void *kernargs2(uint64_t first, uint64_t second) {
  uint64_t *args = allocate(kernarg_pool, 64);
  args[0] = first;
  args[1] = second;
  return args;
}

/* Publishes one dispatch of `object` (grid x, workgroups of 64) on `queue`; `change` edits the
 * packet before its header is written. */
static void dispatch(hsa_queue_t *queue, uint64_t object, uint32_t grid, void *kernargs, hsa_signal_t done,
                     void (*change)(hsa_kernel_dispatch_packet_t *)) {
  uint64_t id = hsa_queue_add_write_index_relaxed(queue, 1);
  hsa_kernel_dispatch_packet_t *packet =
      (hsa_kernel_dispatch_packet_t *)queue->base_address + (id & (queue->size - 1));
  memset((uint8_t *)packet + 4, 0, sizeof *packet - 4);
  packet->workgroup_size_x = 64;
  packet->workgroup_size_y = 1;
  packet->workgroup_size_z = 1;
  packet->grid_size_x = grid;
  packet->grid_size_y = 1;
  packet->grid_size_z = 1;
  packet->kernel_object = object;
  packet->kernarg_address = kernargs;
  packet->completion_signal = done;
  packet->setup = 1;
  if (change) change(packet);
  uint16_t setup = packet->setup;
  uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) | (1 << HSA_PACKET_HEADER_BARRIER) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
  __atomic_store_n((uint32_t *)packet, header | ((uint32_t)setup << 16), __ATOMIC_RELEASE);
  hsa_signal_store_screlease(queue->doorbell_signal, (hsa_signal_value_t)id);
}

static hsa_queue_t *new_queue(void) {
  hsa_queue_t *queue;
  CHECK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, on_queue_error, NULL, UINT32_MAX, UINT32_MAX, &queue));
  return queue;
}

/* Waits up to `ms` for the callback, a memory-fault event or the completion; returns whether the
 * dispatch completed. */
static int settle(hsa_signal_t done, uint64_t ms) {
  hsa_signal_value_t value = 1;
  for (uint64_t waited = 0; waited < ms && !callback_status && !fault_events && value != 0; waited += 10) {
    value = hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, 10 * 1000 * 1000, HSA_WAIT_STATE_BLOCKED);
  }
  return hsa_signal_load_scacquire(done) == 0;
}

static void private_1gib(hsa_kernel_dispatch_packet_t *packet) { packet->private_segment_size = 1u << 30; }

static void grid_2_64(hsa_kernel_dispatch_packet_t *packet) {
  packet->setup = 2;
  packet->grid_size_x = UINT32_MAX;
  packet->grid_size_y = UINT32_MAX;
}

static double now_ms(void) {
  struct timespec time;
  clock_gettime(CLOCK_MONOTONIC, &time);
  return time.tv_sec * 1e3 + time.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s HOSTILE_KERNELS.hsaco CASE\n", argv[0]);
    return 2;
  }
  const char *name = argv[2];
  volatile uint64_t stack_canary = CANARY;
  volatile uint64_t *heap_canary = malloc(sizeof *heap_canary);
  *heap_canary = CANARY;

  CHECK(hsa_init());
  CHECK(hsa_iterate_agents(find_agents, NULL));
  CHECK(hsa_amd_agent_iterate_memory_pools(cpu, find_pools, NULL));
  CHECK(hsa_amd_register_system_event_handler(on_system_event, NULL));
  size_t size;
  void *code = read_file(argv[1], &size);
  hsa_code_object_reader_t reader;
  CHECK(hsa_code_object_reader_create_from_memory(code, size, &reader));
  hsa_executable_t executable;
  CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &executable));
  CHECK(hsa_executable_load_agent_code_object(executable, gpu, reader, NULL, NULL));
  CHECK(hsa_executable_freeze(executable, NULL));
  spin_until = kernel_object(executable, "spin_until.kd");
  store_word = kernel_object(executable, "store_word.kd");

  uint32_t *flag = allocate(fine_pool, 4);
  uint32_t *marks = allocate(fine_pool, 64 * 64 * 4);
  uint32_t *word = allocate(fine_pool, 4);
  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));
  hsa_signal_t none = {0};
  hsa_queue_t *queue = new_queue();
  double started = now_ms();
  int completed = 0;

  if (!strcmp(name, "private")) {
    dispatch(queue, store_word, 64, kernargs2((uint64_t)(uintptr_t)word, 7), done, private_1gib);
    completed = settle(done, 10000);
  } else if (!strcmp(name, "grid")) {
    dispatch(queue, store_word, 64, kernargs2((uint64_t)(uintptr_t)word, 7), done, grid_2_64);
    completed = settle(done, 10000);
  } else if (!strcmp(name, "forged_signal")) {
    /* The signal's kind becomes DOORBELL (-1) and its value the global canary's address. */
    uint64_t amd = done.handle, canary = (uint64_t)(uintptr_t)&global_canary;
    uint32_t words[4] = {UINT32_MAX, UINT32_MAX, (uint32_t)canary, (uint32_t)(canary >> 32)};
    for (int i = 0; i < 4; ++i) {
      dispatch(queue, store_word, 64, kernargs2(amd + 4 * i, words[i]), i == 3 ? done : none, NULL);
    }
    /* The completion decrements the signal's own value, which the kernel made the address. */
    for (int waited = 0; waited < 10000 && hsa_signal_load_scacquire(done) != (hsa_signal_value_t)canary - 1;
         waited += 10) {
      struct timespec pause = {0, 10 * 1000 * 1000};
      nanosleep(&pause, NULL);
    }
    completed = hsa_signal_load_scacquire(done) == (hsa_signal_value_t)canary - 1;
  } else if (!strcmp(name, "wild_store")) {
    dispatch(queue, store_word, 64, kernargs2(0xdead00000000ull, 7), done, NULL);
    completed = settle(done, 10000);
    printf("fault_events=%llu\n", (unsigned long long)fault_events);
  } else if (!strcmp(name, "spin_destroy")) {
    dispatch(queue, spin_until, 64 * 64, kernargs2((uint64_t)(uintptr_t)flag, (uint64_t)(uintptr_t)marks), done,
             NULL);
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    double destroying = now_ms();
    CHECK(hsa_queue_destroy(queue));
    queue = NULL;
    printf("destroy_ms=%.3f\n", now_ms() - destroying);
    completed = hsa_signal_load_scacquire(done) == 0;
  } else if (!strcmp(name, "watchdog")) {
    dispatch(queue, spin_until, 64 * 64, kernargs2((uint64_t)(uintptr_t)flag, (uint64_t)(uintptr_t)marks), done,
             NULL);
    completed = settle(done, 30000);
  } else {
    fprintf(stderr, "unknown case %s\n", name);
    return 2;
  }
  double ms = now_ms() - started;
  if (queue) CHECK(hsa_queue_destroy(queue));

  /* A valid dispatch on a new queue completes. */
  uint32_t status = callback_status;
  callback_status = 0;
  fault_events = 0;
  hsa_queue_t *after = new_queue();
  hsa_signal_t after_done;
  CHECK(hsa_signal_create(1, 0, NULL, &after_done));
  dispatch(after, store_word, 64, kernargs2((uint64_t)(uintptr_t)word, 42), after_done, NULL);
  int after_ok = settle(after_done, 10000) && *word == 42 && !callback_status;

  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  int intact = global_canary == CANARY && stack_canary == CANARY && *heap_canary == CANARY;
  printf("status=0x%x\ncompleted=%d\ncanaries=%s\nafter=%s\nms=%.3f\nmax_rss_kib=%ld\n", status, completed,
         intact ? "intact" : "changed", after_ok ? "ok" : "failed", ms, usage.ru_maxrss);
  CHECK(hsa_queue_destroy(after));
  CHECK(hsa_shut_down());
  return 0;
}
