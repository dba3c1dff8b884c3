// A kernel as any clang or hipcc user writes one: plain C with clang's AMDGPU builtins and no
// aqueduct header, so nothing here can be compiled for the host. Its CPU implementation for the
// soft HSA runtime is the Rust host build in examples/own_kernel.rs, which the soft runtime
// checks against this code object's metadata. regen.sh builds saxpy_gfx11-generic.hsaco.

typedef unsigned int u32;

// y[i] = a * x[i] + y[i] for i < count; one work-item per element.
__attribute__((amdgpu_kernel, visibility("default"))) void saxpy(float *y, const float *x, float a, u32 count) {
  u32 i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
  if (i < count)
    y[i] = a * x[i] + y[i];
}
