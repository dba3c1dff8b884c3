// Kernels for `aqueduct demo`. The CPU twins in src/demo/kernels.rs read the same kernarg layout,
// which a test checks against this code object's metadata.
typedef unsigned int u32;

static inline u32 global_id(void) {
  return __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
}

// out[i] = base + i
__attribute__((amdgpu_kernel)) void iota(u32 *out, u32 base, u32 count) {
  u32 i = global_id();
  if (i < count) out[i] = base + i;
}

// y[i] = a * x[i] + y[i]
__attribute__((amdgpu_kernel)) void saxpy(float *y, const float *x, float a, u32 count) {
  u32 i = global_id();
  if (i < count) y[i] = a * x[i] + y[i];
}
