// RDNA4 (gfx12) matrix forms beyond wmma_gfx12.c, wave32: the iu4 WMMAs
// (v_wmma_i32_16x16x16_iu4, v_wmma_i32_16x16x32_iu4), the sparse-A SWMMACs (v_swmmac_*: A
// 2:4-compressed, an index register placing it), and the modifiers clang folds into a WMMA
// (negated f16 A and B, also in a SWMMAC; negated or absolute float C; a constant C). As
// wmma_gfx12.c, the kernels know nothing of the layout: lane i loads its own A, B, C (and
// index) images and stores its D image; the test (gfx12_exec.rs) places the elements.
typedef unsigned int u32;
typedef _Float16 v8h __attribute__((ext_vector_type(8)));
typedef _Float16 v16h __attribute__((ext_vector_type(16)));
typedef short v8s __attribute__((ext_vector_type(8)));
typedef short v16s __attribute__((ext_vector_type(16)));
typedef float v8f __attribute__((ext_vector_type(8)));
typedef int v8i __attribute__((ext_vector_type(8)));
typedef int v4i __attribute__((ext_vector_type(4)));
typedef int v2i __attribute__((ext_vector_type(2)));

#define KERNEL __attribute__((amdgpu_kernel))
#define global_id() (__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x())

// d[2i]: A and B signed, wrapping; d[2i+1]: A unsigned, B signed, saturating (clamp).
KERNEL void wmma_i32_iu4(v8i *d, const int *a, const int *b, const v8i *c) {
  u32 i = global_id();
  d[2 * i] = __builtin_amdgcn_wmma_i32_16x16x16_iu4_w32_gfx12(1, a[i], 1, b[i], c[i], 0);
  d[2 * i + 1] = __builtin_amdgcn_wmma_i32_16x16x16_iu4_w32_gfx12(0, a[i], 1, b[i], c[i], 1);
}

// K = 32: 16 nibbles a lane.
KERNEL void wmma_i32_iu4_k32(v8i *d, const v2i *a, const v2i *b, const v8i *c) {
  u32 i = global_id();
  d[2 * i] = __builtin_amdgcn_wmma_i32_16x16x32_iu4_w32_gfx12(1, a[i], 1, b[i], c[i], 0);
  d[2 * i + 1] = __builtin_amdgcn_wmma_i32_16x16x32_iu4_w32_gfx12(0, a[i], 0, b[i], c[i], 1);
}

// d[2i]: the index in bits 15:0 of idx[i]; d[2i+1]: in bits 31:16 (index_key:1).
KERNEL void swmmac_f32_f16(v8f *d, const v8h *a, const v16h *b, const v8f *c, const int *idx) {
  u32 i = global_id();
  d[2 * i] = __builtin_amdgcn_swmmac_f32_16x16x32_f16_w32(a[i], b[i], c[i], (short)idx[i]);
  d[2 * i + 1] = __builtin_amdgcn_swmmac_f32_16x16x32_f16_w32(a[i], b[i], c[i], (short)(idx[i] >> 16));
}

KERNEL void swmmac_f32_bf16(v8f *d, const v8s *a, const v16s *b, const v8f *c, const int *idx) {
  u32 i = global_id();
  d[i] = __builtin_amdgcn_swmmac_f32_16x16x32_bf16_w32(a[i], b[i], c[i], (short)idx[i]);
}

KERNEL void swmmac_f16(v8h *d, const v8h *a, const v16h *b, const v8h *c, const int *idx) {
  u32 i = global_id();
  d[i] = __builtin_amdgcn_swmmac_f16_16x16x32_f16_w32(a[i], b[i], c[i], (short)idx[i]);
}

KERNEL void swmmac_bf16(v8s *d, const v8s *a, const v16s *b, const v8s *c, const int *idx) {
  u32 i = global_id();
  d[i] = __builtin_amdgcn_swmmac_bf16_16x16x32_bf16_w32(a[i], b[i], c[i], (short)idx[i]);
}

// d[2i]: A and B signed; d[2i+1]: A unsigned, B signed, saturating (clamp).
KERNEL void swmmac_i32_iu8(v8i *d, const v2i *a, const v4i *b, const v8i *c, const int *idx) {
  u32 i = global_id();
  d[2 * i] = __builtin_amdgcn_swmmac_i32_16x16x32_iu8_w32(1, a[i], 1, b[i], c[i], (short)idx[i], 0);
  d[2 * i + 1] = __builtin_amdgcn_swmmac_i32_16x16x32_iu8_w32(0, a[i], 1, b[i], c[i], (short)idx[i], 1);
}

KERNEL void swmmac_i32_iu4(v8i *d, const int *a, const v2i *b, const v8i *c, const int *idx) {
  u32 i = global_id();
  d[i] = __builtin_amdgcn_swmmac_i32_16x16x32_iu4_w32(1, a[i], 1, b[i], c[i], (short)idx[i], 0);
}

// K = 64: 16 compressed nibbles a lane, the index's 32 bits.
KERNEL void swmmac_i32_iu4_k64(v8i *d, const v2i *a, const v4i *b, const v8i *c, const int *idx) {
  u32 i = global_id();
  d[i] = __builtin_amdgcn_swmmac_i32_16x16x64_iu4_w32(1, a[i], 1, b[i], c[i], idx[i], 0);
}

// d[4i + j]: A and B as (fp8, fp8), (fp8, bf8), (bf8, fp8), (bf8, bf8).
KERNEL void swmmac_f32_fp8(v8f *d, const v2i *a, const v4i *b, const v8f *c, const int *idx) {
  u32 i = global_id();
  short index = (short)idx[i];
  d[4 * i] = __builtin_amdgcn_swmmac_f32_16x16x32_fp8_fp8_w32(a[i], b[i], c[i], index);
  d[4 * i + 1] = __builtin_amdgcn_swmmac_f32_16x16x32_fp8_bf8_w32(a[i], b[i], c[i], index);
  d[4 * i + 2] = __builtin_amdgcn_swmmac_f32_16x16x32_bf8_fp8_w32(a[i], b[i], c[i], index);
  d[4 * i + 3] = __builtin_amdgcn_swmmac_f32_16x16x32_bf8_bf8_w32(a[i], b[i], c[i], index);
}

// Modifiers: d[4i] = (-A) B + C, d[4i+1] = A (-B) - C, d[4i+2] = A B + |C|, d[4i+3] = A B - |C|.
KERNEL void wmma_f32_f16_negated(v8f *d, const v8h *a, const v8h *b, const v8f *c) {
  u32 i = global_id();
  v8f magnitude = __builtin_elementwise_abs(c[i]);
  d[4 * i] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(-a[i], b[i], c[i]);
  d[4 * i + 1] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a[i], -b[i], -c[i]);
  d[4 * i + 2] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a[i], b[i], magnitude);
  d[4 * i + 3] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a[i], b[i], -magnitude);
}

// f16 C negated and made absolute.
KERNEL void wmma_f16_negated(v8h *d, const v8h *a, const v8h *b, const v8h *c) {
  u32 i = global_id();
  d[2 * i] = __builtin_amdgcn_wmma_f16_16x16x16_f16_w32_gfx12(a[i], b[i], -c[i]);
  d[2 * i + 1] = __builtin_amdgcn_wmma_f16_16x16x16_f16_w32_gfx12(a[i], b[i], __builtin_elementwise_abs(c[i]));
}

// Inline-constant C: f32 -4.0, f16 2.0, i32 -3.
KERNEL void wmma_constant_c(v8f *d, v8h *h, v8i *n, const v8h *a, const v8h *b, const v2i *a8, const v2i *b8) {
  u32 i = global_id();
  d[i] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a[i], b[i], (v8f)(-4.0f));
  h[i] = __builtin_amdgcn_wmma_f16_16x16x16_f16_w32_gfx12(a[i], b[i], (v8h)((_Float16)2.0f));
  n[i] = __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32_gfx12(1, a8[i], 1, b8[i], (v8i)(-3), 0);
}

// SWMMAC with f16 A or B negated: d[2i] = (-A) B + C, d[2i+1] = A (-B) + C.
KERNEL void swmmac_f32_f16_negated(v8f *d, const v8h *a, const v16h *b, const v8f *c, const int *idx) {
  u32 i = global_id();
  d[2 * i] = __builtin_amdgcn_swmmac_f32_16x16x32_f16_w32(-a[i], b[i], c[i], (short)idx[i]);
  d[2 * i + 1] = __builtin_amdgcn_swmmac_f32_16x16x32_f16_w32(a[i], -b[i], c[i], (short)idx[i]);
}
