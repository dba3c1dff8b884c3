// RDNA4 (gfx12) wave matrix multiply-accumulate, D = A x B + C on 16x16x16 tiles, wave32:
// v_wmma_f32_16x16x16_f16, v_wmma_f32_16x16x16_bf16, v_wmma_f16_16x16x16_f16,
// v_wmma_bf16_16x16x16_bf16, v_wmma_i32_16x16x16_iu8 (signed and unsigned A, with and without
// clamp) and the four v_wmma_f32_16x16x16_{fp8,bf8}_{fp8,bf8}. gfx12's builtins (the *_gfx12
// ones) take half the A/B and C/D registers of gfx11's: gfx12 does not repeat A and B in the two
// halves of the wave. As wmma.c, the kernels know nothing of the matrix layout: each lane loads
// its own A, B and C register images (a[i], b[i], c[i] for work-item i) and stores its D image;
// which element sits where is the test's business (kernels_exec.rs, `mod wmma_layout`).
typedef unsigned int u32;
typedef _Float16 v8h __attribute__((ext_vector_type(8)));
typedef short v8s __attribute__((ext_vector_type(8)));
typedef float v8f __attribute__((ext_vector_type(8)));
typedef int v8i __attribute__((ext_vector_type(8)));
typedef int v2i __attribute__((ext_vector_type(2)));

#define KERNEL __attribute__((amdgpu_kernel))
#define global_id() (__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x())

KERNEL void wmma_f32_f16(v8f *d, const v8h *a, const v8h *b, const v8f *c) {
  u32 i = global_id();
  d[i] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a[i], b[i], c[i]);
}

KERNEL void wmma_f32_bf16(v8f *d, const v8s *a, const v8s *b, const v8f *c) {
  u32 i = global_id();
  d[i] = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32_gfx12(a[i], b[i], c[i]);
}

KERNEL void wmma_f16(v8h *d, const v8h *a, const v8h *b, const v8h *c) {
  u32 i = global_id();
  d[i] = __builtin_amdgcn_wmma_f16_16x16x16_f16_w32_gfx12(a[i], b[i], c[i]);
}

KERNEL void wmma_bf16(v8s *d, const v8s *a, const v8s *b, const v8s *c) {
  u32 i = global_id();
  d[i] = __builtin_amdgcn_wmma_bf16_16x16x16_bf16_w32_gfx12(a[i], b[i], c[i]);
}

// d[2i]: A and B signed, wrapping; d[2i+1]: A unsigned, B signed, saturating (clamp).
KERNEL void wmma_i32_iu8(v8i *d, const v2i *a, const v2i *b, const v8i *c) {
  u32 i = global_id();
  d[2 * i] = __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32_gfx12(1, a[i], 1, b[i], c[i], 0);
  d[2 * i + 1] = __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32_gfx12(0, a[i], 1, b[i], c[i], 1);
}

// d[4i + j]: A and B as (fp8, fp8), (fp8, bf8), (bf8, fp8), (bf8, bf8).
KERNEL void wmma_f32_fp8(v8f *d, const v2i *a, const v2i *b, const v8f *c) {
  u32 i = global_id();
  d[4 * i] = __builtin_amdgcn_wmma_f32_16x16x16_fp8_fp8_w32_gfx12(a[i], b[i], c[i]);
  d[4 * i + 1] = __builtin_amdgcn_wmma_f32_16x16x16_fp8_bf8_w32_gfx12(a[i], b[i], c[i]);
  d[4 * i + 2] = __builtin_amdgcn_wmma_f32_16x16x16_bf8_fp8_w32_gfx12(a[i], b[i], c[i]);
  d[4 * i + 3] = __builtin_amdgcn_wmma_f32_16x16x16_bf8_bf8_w32_gfx12(a[i], b[i], c[i]);
}
