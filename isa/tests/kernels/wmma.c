// RDNA3 wave matrix multiply-accumulate, D = A x B + C on 16x16x16 tiles: v_wmma_f32_16x16x16_f16,
// v_wmma_f32_16x16x16_bf16, v_wmma_f16_16x16x16_f16, v_wmma_bf16_16x16x16_bf16 (op_sel low and
// high halves, the tied forms keeping the other half of C), v_wmma_i32_16x16x16_iu8 and
// v_wmma_i32_16x16x16_iu4 (signed and unsigned inputs, with and without clamp).
// The kernels know nothing of the matrix layout: each lane loads its own A, B and C register
// images (a[i], b[i], c[i] for work-item i) and stores its D image. Which matrix element sits in
// which lane and register is the test's business (kernels_exec.rs, `mod wmma_layout`). Each
// wave of 32 computes one product; a dispatch of n waves computes n independent ones.
// gfx11 only (gfx1030 has no WMMA).
typedef unsigned int u32;
typedef _Float16 v16h __attribute__((ext_vector_type(16)));
typedef short v16s __attribute__((ext_vector_type(16)));
typedef float v8f __attribute__((ext_vector_type(8)));
typedef int v8i __attribute__((ext_vector_type(8)));
typedef int v4i __attribute__((ext_vector_type(4)));
typedef int v2i __attribute__((ext_vector_type(2)));

#define KERNEL __attribute__((amdgpu_kernel))
#define global_id() (__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x())

KERNEL void wmma_f32_f16(v8f *d, const v16h *a, const v16h *b, const v8f *c) {
  u32 i = global_id();
  d[i] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a[i], b[i], c[i]);
}

KERNEL void wmma_f32_bf16(v8f *d, const v16s *a, const v16s *b, const v8f *c) {
  u32 i = global_id();
  d[i] = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(a[i], b[i], c[i]);
}

// d[2i]: op_sel 0 (C and D in the low halves; the high halves of D are not defined). d[2i+1]:
// the tied form with op_sel 1 (C and D in the high halves; the low halves keep C's).
KERNEL void wmma_f16(v16h *d, const v16h *a, const v16h *b, const v16h *c) {
  u32 i = global_id();
  d[2 * i] = __builtin_amdgcn_wmma_f16_16x16x16_f16_w32(a[i], b[i], c[i], 0);
  d[2 * i + 1] = __builtin_amdgcn_wmma_f16_16x16x16_f16_tied_w32(a[i], b[i], c[i], 1);
}

KERNEL void wmma_bf16(v16s *d, const v16s *a, const v16s *b, const v16s *c) {
  u32 i = global_id();
  d[2 * i] = __builtin_amdgcn_wmma_bf16_16x16x16_bf16_w32(a[i], b[i], c[i], 0);
  d[2 * i + 1] = __builtin_amdgcn_wmma_bf16_16x16x16_bf16_tied_w32(a[i], b[i], c[i], 1);
}

// d[2i]: A and B signed, wrapping; d[2i+1]: A unsigned, B signed, saturating (clamp).
KERNEL void wmma_i32_iu8(v8i *d, const v4i *a, const v4i *b, const v8i *c) {
  u32 i = global_id();
  d[2 * i] = __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32(1, a[i], 1, b[i], c[i], 0);
  d[2 * i + 1] = __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32(0, a[i], 1, b[i], c[i], 1);
}

// d[2i]: signed 4-bit, wrapping; d[2i+1]: unsigned 4-bit, saturating.
KERNEL void wmma_i32_iu4(v8i *d, const v2i *a, const v2i *b, const v8i *c) {
  u32 i = global_id();
  d[2 * i] = __builtin_amdgcn_wmma_i32_16x16x16_iu4_w32(1, a[i], 1, b[i], c[i], 0);
  d[2 * i + 1] = __builtin_amdgcn_wmma_i32_16x16x16_iu4_w32(0, a[i], 0, b[i], c[i], 1);
}

// rocjitsu's thread-scaling workload (ROCm/rocm-systems, emulation/rocjitsu,
// docs/desktop-thread-scaling.md): per one-wave workgroup, `iterations` rounds of four
// independent f16 WMMA chains. The chains read a[i] and b[i] as both operands (a[i] read as B
// is A's transpose), so each adds a different product; d[4i + j] is chain j.
KERNEL void wmma_chains(v8f *d, const v16h *a, const v16h *b, u32 iterations) {
  u32 i = global_id();
  v16h x = a[i], y = b[i];
  v8f c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};
  for (u32 round = 0; round < iterations; ++round) {
    c0 = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(x, y, c0);
    c1 = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(y, x, c1);
    c2 = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(x, x, c2);
    c3 = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(y, y, c3);
  }
  d[4 * i] = c0;
  d[4 * i + 1] = c1;
  d[4 * i + 2] = c2;
  d[4 * i + 3] = c3;
}
