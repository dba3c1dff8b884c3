/* Bad input through the C ABI: prints `call=status` for each call, one per line, so a test can
 * compare the soft runtime's drop-in with ROCr itself (mode `before-init`, which needs no GPU:
 * every call made before hsa_init) and with the HSA specification (mode `after-init`).
 *
 * Usage: bad_input before-init|after-init
 */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define SHOW(call) printf("%s=0x%x\n", #call, (unsigned)(call))

static hsa_status_t first_gpu(hsa_agent_t agent, void *data) {
  hsa_device_type_t type;
  if (hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) == HSA_STATUS_SUCCESS && type == HSA_DEVICE_TYPE_GPU) {
    *(hsa_agent_t *)data = agent;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t count(hsa_agent_t agent, void *data) {
  (void)agent;
  ++*(int *)data;
  return HSA_STATUS_SUCCESS;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s before-init|after-init\n", argv[0]);
    return 2;
  }
  hsa_signal_t signal = {0};
  uint64_t timestamp = 0;
  int agents = 0;
  if (strcmp(argv[1], "before-init") == 0) {
    SHOW(hsa_shut_down());
    SHOW(hsa_iterate_agents(count, &agents));
    SHOW(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &timestamp));
    SHOW(hsa_signal_create(1, 0, NULL, &signal));
    SHOW(hsa_signal_destroy(signal));
    return 0;
  }
  if (hsa_init() != HSA_STATUS_SUCCESS) {
    fprintf(stderr, "hsa_init failed\n");
    return 1;
  }
  hsa_agent_t gpu = {0};
  hsa_iterate_agents(first_gpu, &gpu);
  hsa_agent_t stale = {gpu.handle ^ 0x5a5a0000u};
  char name[64];
  hsa_queue_t *queue = NULL;
  void *pointer = NULL;
  SHOW(hsa_iterate_agents(NULL, NULL));
  SHOW(hsa_agent_get_info(stale, HSA_AGENT_INFO_NAME, name));
  SHOW(hsa_agent_get_info(gpu, HSA_AGENT_INFO_NAME, NULL));
  SHOW(hsa_queue_create(gpu, 100, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &queue));
  SHOW(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, NULL));
  SHOW(hsa_queue_destroy(NULL));
  SHOW(hsa_signal_create(1, 0, NULL, NULL));
  SHOW(hsa_signal_destroy((hsa_signal_t){0}));
  SHOW(hsa_amd_memory_pool_free((void *)0x4000));
  SHOW(hsa_amd_memory_pool_allocate((hsa_amd_memory_pool_t){0}, 64, 0, &pointer));
  SHOW(hsa_code_object_reader_create_from_memory(NULL, 16, NULL));
  SHOW(hsa_shut_down());
  return 0;
}
