/* The soft runtime's vendor extension (soft-hsa/include/aqueduct_soft.h) through the C ABI: bad
 * input gets HSA statuses and changes nothing, a configuration set before hsa_init is the one the
 * runtime starts with, and a queue failed by an injected fault says why. Prints `call=status`
 * and `name=value` lines for tests/soft_drop_in.rs to check.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep under -std=c11 */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aqueduct_soft.h"

#define SHOW(call) printf("%s=0x%x\n", #call, (unsigned)(call))

static int gpus = 0;
static hsa_agent_t first_gpu = {0};

static hsa_status_t count_gpus(hsa_agent_t agent, void *data) {
  (void)data;
  hsa_device_type_t type;
  if (hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) == HSA_STATUS_SUCCESS && type == HSA_DEVICE_TYPE_GPU) {
    if (gpus++ == 0) first_gpu = agent;
    char name[64] = {0};
    hsa_agent_get_info(agent, HSA_AGENT_INFO_NAME, name);
    printf("gpu=%s\n", name);
  }
  return HSA_STATUS_SUCCESS;
}

static atomic_uint queue_error = 0;

static void on_queue_error(hsa_status_t status, hsa_queue_t *queue, void *data) {
  (void)queue;
  (void)data;
  atomic_store(&queue_error, (unsigned)status);
}

#define AGENT(name, isa, wave)                                                                       \
  "{\"name\":\"" name "\",\"isa_name\":\"amdgcn-amd-amdhsa--" isa "\",\"wavefront_size\":" #wave \
  ",\"compute_units\":4,\"device_memory_bytes\":1073741824}"

int main(void) {
  size_t length = 0;
  char detail[256];
  /* Before hsa_init: the runtime's controls have no queues to find. */
  SHOW(aqueduct_soft_release_stall(NULL));
  SHOW(aqueduct_soft_queue_error_detail(NULL, NULL, 0, &length));
  /* Configurations that are not one; each changes nothing. */
  SHOW(aqueduct_soft_configure(NULL));
  SHOW(aqueduct_soft_configure("{\"agents\": 3"));
  SHOW(aqueduct_soft_configure("{\"agents\": 3}"));
  SHOW(aqueduct_soft_configure("{\"no_such_field\": true}"));
  SHOW(aqueduct_soft_configure("{\"default_mode\": \"sideways\"}"));
  SHOW(aqueduct_soft_register_kernel(NULL, 16, "k.kd", NULL));
  /* Two GPUs, as the runtime starts at the next hsa_init. */
  SHOW(aqueduct_soft_configure("{\"agents\":[" AGENT("first", "gfx1100", 32) "," AGENT("second", "gfx90a", 64) "]}"));
  if (hsa_init() != HSA_STATUS_SUCCESS) {
    fprintf(stderr, "hsa_init failed\n");
    return 1;
  }
  hsa_iterate_agents(count_gpus, NULL);
  printf("gpus=%d\n", gpus);

  hsa_queue_t *queue = NULL;
  if (hsa_queue_create(first_gpu, 64, HSA_QUEUE_TYPE_SINGLE, on_queue_error, NULL, UINT32_MAX, UINT32_MAX, &queue) !=
      HSA_STATUS_SUCCESS) {
    fprintf(stderr, "hsa_queue_create failed\n");
    return 1;
  }
  hsa_queue_t stale = *queue;
  SHOW(aqueduct_soft_set_queue_mode(queue, 7));
  SHOW(aqueduct_soft_set_queue_mode(&stale, AQUEDUCT_SOFT_MODE_RELAXED));
  SHOW(aqueduct_soft_inject_fault(queue, 0, 9, 0));
  SHOW(aqueduct_soft_queue_error_detail(queue, NULL, 8, &length));
  SHOW(aqueduct_soft_queue_error_detail(queue, detail, sizeof detail, NULL));
  SHOW(aqueduct_soft_queue_error_detail(&stale, NULL, 0, &length));
  SHOW(aqueduct_soft_queue_error_detail(queue, NULL, 0, &length));
  printf("length_before=%zu\n", length);

  /* Packet 0 faults: a barrier-AND with no dependencies, which would otherwise just retire. */
  SHOW(aqueduct_soft_inject_fault(queue, 0, AQUEDUCT_SOFT_FAULT_KERNEL, HSA_STATUS_ERROR_EXCEPTION));
  uint64_t id = hsa_queue_add_write_index_relaxed(queue, 1);
  hsa_barrier_and_packet_t *packet = (hsa_barrier_and_packet_t *)queue->base_address + (id & (queue->size - 1));
  memset((char *)packet + 4, 0, sizeof *packet - 4);
  uint16_t header = HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE |
                    HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE |
                    HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE;
  __atomic_store_n((uint32_t *)packet, header, __ATOMIC_RELEASE);
  hsa_signal_store_screlease(queue->doorbell_signal, (hsa_signal_value_t)id);
  for (int waited_ms = 0; atomic_load(&queue_error) == 0; ++waited_ms) {
    if (waited_ms == 10000) {
      fprintf(stderr, "the injected fault never reached the queue's error callback\n");
      return 1;
    }
    nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
  }
  printf("callback_status=0x%x\n", atomic_load(&queue_error));
  SHOW(aqueduct_soft_queue_error_detail(queue, NULL, 0, &length));
  size_t full = length;
  SHOW(aqueduct_soft_queue_error_detail(queue, detail, 4, &length));
  printf("truncated=%.4s length=%zu\n", detail, length);
  if (full >= sizeof detail) return 1;
  SHOW(aqueduct_soft_queue_error_detail(queue, detail, sizeof detail, &length));
  printf("detail=%.*s\n", (int)length, detail);
  SHOW(hsa_queue_destroy(queue));
  SHOW(hsa_shut_down());
  return 0;
}
