/* The vendor extension of aqueduct's soft HSA runtime, built as a drop-in libhsa-runtime64.so.1
 * by scripts/build-libhsa.sh. These functions are exported under the version node
 * AQUEDUCT_SOFT_1; ROCr does not have them, so a program that may run on either resolves them
 * with dlsym and treats their absence as "this is ROCr". Every function returns an hsa_status_t;
 * the contracts are documented where they are defined (soft-hsa/src/lib.rs).
 *
 * Compile with -I soft-hsa/include, after <hsa/hsa.h>.
 */
#ifndef AQUEDUCT_SOFT_H
#define AQUEDUCT_SOFT_H

#include <hsa/hsa.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The context a host build runs with, once per workgroup: `aq_workgroup` of
 * builtins/device/aqueduct_kernel.h. */
struct aq_workgroup;
typedef void (*aqueduct_soft_kernel_fn)(const struct aq_workgroup *context);

/* Registers `function` as the CPU implementation of kernel `symbol` ("name.kd") of the code
 * object of `size` bytes at `code_object` (keyed by its content). */
hsa_status_t aqueduct_soft_register_kernel(const void *code_object, size_t size, const char *symbol,
                                           aqueduct_soft_kernel_fn function);

/* The configuration the next hsa_init that starts the runtime uses, as a JSON object of
 * SoftConfig's fields, e.g. {"default_mode":"relaxed","queue_min_packets":4}. Fields left out
 * take their defaults. HSA_STATUS_ERROR_INVALID_ARGUMENT for text that is not such an object. */
hsa_status_t aqueduct_soft_configure(const char *config);

/* Fault kinds for aqueduct_soft_inject_fault, and what its argument means for each. */
enum {
  AQUEDUCT_SOFT_FAULT_KERNEL = 0, /* argument: the status the queue fails with */
  AQUEDUCT_SOFT_FAULT_STALL = 1,  /* until aqueduct_soft_release_stall; no argument */
  AQUEDUCT_SOFT_FAULT_SLOW = 2,   /* argument: nanoseconds */
  AQUEDUCT_SOFT_FAULT_MEMORY = 3, /* argument: the faulting address */
};

/* Arms a fault for the packet with id `packet_id` on `queue`. */
hsa_status_t aqueduct_soft_inject_fault(const hsa_queue_t *queue, uint64_t packet_id, uint32_t kind,
                                        uint64_t argument);

/* Lets every packet stalled on `queue` proceed. */
hsa_status_t aqueduct_soft_release_stall(const hsa_queue_t *queue);

/* Execution modes for aqueduct_soft_set_queue_mode. */
enum {
  AQUEDUCT_SOFT_MODE_STRICT = 0,      /* packets run one at a time, in order */
  AQUEDUCT_SOFT_MODE_RELAXED = 1,     /* dispatches without the barrier bit run in reverse order */
  AQUEDUCT_SOFT_MODE_RETIRE_ONLY = 2, /* packets retire without running kernels */
  AQUEDUCT_SOFT_MODE_CONCURRENT = 3,  /* dispatches without the barrier bit run at once (default) */
};

hsa_status_t aqueduct_soft_set_queue_mode(const hsa_queue_t *queue, uint32_t mode);

/* Why `queue` failed: `*length` receives the detail's length (0 while it has not failed), and
 * up to `capacity` bytes of it (no terminator) go to `buffer`. */
hsa_status_t aqueduct_soft_queue_error_detail(const hsa_queue_t *queue, char *buffer, size_t capacity,
                                              size_t *length);

#ifdef __cplusplus
}
#endif

#endif
