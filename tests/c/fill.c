/* A plain HSA client, written against /usr/include/hsa/hsa.h and linked with -lhsa-runtime64:
 * it finds the GPU agent and its pools, creates a queue, loads a code object, dispatches the
 * device library's fill_x4 kernel with a hand-built AQL packet, waits on the completion signal
 * and checks the bytes. tests/soft_drop_in.rs builds it against the soft runtime's drop-in.
 *
 * Usage: fill CODE_OBJECT.hsaco   (exit 0 when every word holds the pattern)
 */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read_file.h"

#define CHECK(call)                                                                   \
  do {                                                                                \
    hsa_status_t status_ = (call);                                                    \
    if (status_ != HSA_STATUS_SUCCESS) {                                              \
      const char *text_ = "?";                                                        \
      hsa_status_string(status_, &text_);                                            \
      fprintf(stderr, "%s:%d: %s failed: 0x%x %s\n", __FILE__, __LINE__, #call,       \
              (unsigned)status_, text_);                                              \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

typedef struct {
  hsa_agent_t gpu, cpu;
  int have_gpu, have_cpu;
} agents_t;

static hsa_status_t find_agents(hsa_agent_t agent, void *data) {
  agents_t *agents = data;
  hsa_device_type_t type;
  CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type));
  if (type == HSA_DEVICE_TYPE_GPU && !agents->have_gpu) {
    agents->gpu = agent;
    agents->have_gpu = 1;
  } else if (type == HSA_DEVICE_TYPE_CPU && !agents->have_cpu) {
    agents->cpu = agent;
    agents->have_cpu = 1;
  }
  return HSA_STATUS_SUCCESS;
}

typedef struct {
  hsa_amd_memory_pool_t kernarg, fine;
  int have_kernarg, have_fine;
} pools_t;

/* The CPU agent's pools: ROCr puts the kernarg and fine-grained system pools there. */
static hsa_status_t find_pools(hsa_amd_memory_pool_t pool, void *data) {
  pools_t *pools = data;
  hsa_amd_segment_t segment;
  uint32_t flags = 0;
  CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment));
  if (segment != HSA_AMD_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
  CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
  if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) && !pools->have_kernarg) {
    pools->kernarg = pool;
    pools->have_kernarg = 1;
  } else if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) && !pools->have_fine) {
    pools->fine = pool;
    pools->have_fine = 1;
  }
  return HSA_STATUS_SUCCESS;
}

/* fill_x4's kernargs, as the device library lays them out (builtins/src/layout.rs FillArgs). */
typedef struct {
  uint64_t target;
  uint64_t element_count;
  uint64_t pattern;
} fill_args_t;

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s CODE_OBJECT.hsaco\n", argv[0]);
    return 2;
  }
  CHECK(hsa_init());
  agents_t agents = {0};
  CHECK(hsa_iterate_agents(find_agents, &agents));
  if (!agents.have_gpu || !agents.have_cpu) {
    fprintf(stderr, "no GPU or no CPU agent\n");
    return 1;
  }
  pools_t pools = {0};
  CHECK(hsa_amd_agent_iterate_memory_pools(agents.cpu, find_pools, &pools));
  if (!pools.have_kernarg || !pools.have_fine) {
    fprintf(stderr, "no kernarg or fine-grained pool\n");
    return 1;
  }

  hsa_queue_t *queue;
  CHECK(hsa_queue_create(agents.gpu, 64, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX, UINT32_MAX, &queue));

  size_t size;
  void *code_object = read_file(argv[1], &size);
  hsa_code_object_reader_t reader;
  CHECK(hsa_code_object_reader_create_from_memory(code_object, size, &reader));
  hsa_executable_t executable;
  CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &executable));
  CHECK(hsa_executable_load_agent_code_object(executable, agents.gpu, reader, NULL, NULL));
  CHECK(hsa_executable_freeze(executable, NULL));
  hsa_executable_symbol_t symbol;
  CHECK(hsa_executable_get_symbol_by_name(executable, "fill_x4.kd", &agents.gpu, &symbol));
  uint64_t kernel_object;
  uint32_t kernarg_size, group_size, private_size;
  CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &kernel_object));
  CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                                       &kernarg_size));
  CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, &group_size));
  CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
                                       &private_size));

  enum { WORDS = 1000 };
  const uint32_t pattern = 0xa5c3e1f0u;
  uint32_t *target;
  void *kernargs;
  CHECK(hsa_amd_memory_pool_allocate(pools.fine, WORDS * sizeof(uint32_t), 0, (void **)&target));
  CHECK(hsa_amd_memory_pool_allocate(pools.kernarg, kernarg_size < sizeof(fill_args_t) ? sizeof(fill_args_t)
                                                                                       : kernarg_size,
                                     0, &kernargs));
  /* Pool memory is mapped for its owner only until access is granted (ROCr's AllocateRestrict). */
  CHECK(hsa_amd_agents_allow_access(1, &agents.gpu, NULL, target));
  CHECK(hsa_amd_agents_allow_access(1, &agents.gpu, NULL, kernargs));
  memset(target, 0, WORDS * sizeof(uint32_t));
  fill_args_t args = {(uint64_t)(uintptr_t)target, WORDS, (uint64_t)pattern << 32 | pattern};
  memcpy(kernargs, &args, sizeof args);

  hsa_signal_t done;
  CHECK(hsa_signal_create(1, 0, NULL, &done));

  uint64_t id = hsa_queue_add_write_index_relaxed(queue, 1);
  hsa_kernel_dispatch_packet_t *packet =
      (hsa_kernel_dispatch_packet_t *)queue->base_address + (id & (queue->size - 1));
  memset((uint8_t *)packet + 4, 0, sizeof *packet - 4);
  packet->workgroup_size_x = 64;
  packet->workgroup_size_y = 1;
  packet->workgroup_size_z = 1;
  packet->grid_size_x = 1024;
  packet->grid_size_y = 1;
  packet->grid_size_z = 1;
  packet->private_segment_size = private_size;
  packet->group_segment_size = group_size;
  packet->kernel_object = kernel_object;
  packet->kernarg_address = kernargs;
  packet->completion_signal = done;
  uint16_t header = HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE |
                    1 << HSA_PACKET_HEADER_BARRIER |
                    HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE |
                    HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE;
  uint16_t setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  __atomic_store_n((uint32_t *)packet, header | (uint32_t)setup << 16, __ATOMIC_RELEASE);
  hsa_signal_store_screlease(queue->doorbell_signal, (hsa_signal_value_t)id);

  hsa_signal_value_t value =
      hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, 10ull * 1000 * 1000 * 1000, HSA_WAIT_STATE_BLOCKED);
  if (value != 0) {
    fprintf(stderr, "the dispatch did not complete (signal %ld)\n", (long)value);
    return 1;
  }
  for (int i = 0; i < WORDS; i++) {
    if (target[i] != pattern) {
      fprintf(stderr, "word %d is 0x%08x, not 0x%08x\n", i, target[i], pattern);
      return 1;
    }
  }

  /* Bad input gets the specification's status and changes nothing. */
  hsa_queue_t *refused = NULL;
  if (hsa_queue_create(agents.cpu, 64, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX, UINT32_MAX, &refused) ==
      HSA_STATUS_SUCCESS) {
    fprintf(stderr, "a queue on the CPU agent was created\n");
    return 1;
  }
  if (hsa_agent_get_info(agents.gpu, HSA_AGENT_INFO_NAME, NULL) != HSA_STATUS_ERROR_INVALID_ARGUMENT) {
    fprintf(stderr, "a null value pointer was not INVALID_ARGUMENT\n");
    return 1;
  }

  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_amd_memory_pool_free(kernargs));
  CHECK(hsa_amd_memory_pool_free(target));
  CHECK(hsa_executable_destroy(executable));
  CHECK(hsa_code_object_reader_destroy(reader));
  CHECK(hsa_queue_destroy(queue));
  CHECK(hsa_shut_down());
  free(code_object);
  printf("fill_x4: %d words of 0x%08x, all correct\n", WORDS, pattern);
  return 0;
}
