// Kernels for `aqueduct demo`, written against the work-item shim
// (builtins/device/aqueduct_kernel.h) and compiled twice: for AMDGPU by regen.sh (the checked-in
// code object) and for the host by the root crate's build.rs (what the soft HSA runtime runs for
// that code object). The host entries are at the end of the file.
#include "aqueduct_kernel.h"

// out[i] = base + i
AQ_KERNEL void iota(u32 *out, u32 base, u32 count) {
  u32 i = (u32)aq_global_id_x();
  if (i < count) out[i] = base + i;
}

// y[i] = a * x[i] + y[i]
AQ_KERNEL void saxpy(float *y, const float *x, float a, u32 count) {
  u32 i = (u32)aq_global_id_x();
  if (i < count) y[i] = a * x[i] + y[i];
}

#ifndef __AMDGPU__

typedef struct {
  u32 *out;
  u32 base;
  u32 count;
} iota_args;
static const aq_host_arg iota_layout[] = {
    AQ_ARG(iota_args, out, AQ_ARG_POINTER),
    AQ_ARG(iota_args, base, 0),
    AQ_ARG(iota_args, count, 0),
};
AQ_HOST_ENTRY(iota, iota_args, args.out, args.base, args.count)

typedef struct {
  float *y;
  const float *x;
  float a;
  u32 count;
} saxpy_args;
static const aq_host_arg saxpy_layout[] = {
    AQ_ARG(saxpy_args, y, AQ_ARG_POINTER),
    AQ_ARG(saxpy_args, x, AQ_ARG_POINTER),
    AQ_ARG(saxpy_args, a, 0),
    AQ_ARG(saxpy_args, count, 0),
};
AQ_HOST_ENTRY(saxpy, saxpy_args, args.y, args.x, args.a, args.count)

AQ_HOST_TABLE(aq_demo_kernels,
              AQ_HOST_KERNEL(iota, iota_args, iota_layout),
              AQ_HOST_KERNEL(saxpy, saxpy_args, saxpy_layout))

#endif // !__AMDGPU__
