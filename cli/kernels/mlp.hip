// The digits MLP's inference kernels (cli/models/digits), as a user writes them in HIP: device-only,
// no HIP headers (the few keywords are defined here), built by kernels/regen.sh for
// gfx11-generic and gfx10-3-generic. Every parameter list is buffer pointers, then 32-bit
// values, so a typed launch or a command buffer's bindings and constants fill it.
//
// - dense: out = act(in · w + b), in rows x k, w k x n (row-major), b n; act is ReLU when
//   `relu` is 1. A tiled GEMM: a 16 x 16 workgroup computes a 16 x 16 block of out, staging
//   16 x 16 tiles of in and w through LDS. Any rows, k and n (edges are bounds-checked).
// - softmax: probs = softmax(logits) per row, one 32-lane workgroup per row; the row's maximum
//   and sum are wave reductions through ds_bpermute (a butterfly over lane ^ 16, 8, 4, 2, 1).
// - argmax: classes[r] = the first index of row r's largest logit, one work-item per row.
typedef unsigned int u32;

#define KERNEL extern "C" __attribute__((global))
#define DEVICE __attribute__((device))
#define SHARED __attribute__((shared))
#define TILE 16
#define WAVE 32

static inline DEVICE void barrier(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

KERNEL void dense(float *out, const float *in, const float *w, const float *b, u32 rows, u32 k, u32 n,
                  u32 relu) {
  static SHARED float in_tile[TILE][TILE] __attribute__((loader_uninitialized));
  static SHARED float w_tile[TILE][TILE] __attribute__((loader_uninitialized));
  u32 tx = __builtin_amdgcn_workitem_id_x(), ty = __builtin_amdgcn_workitem_id_y();
  u32 column = __builtin_amdgcn_workgroup_id_x() * TILE + tx;
  u32 row = __builtin_amdgcn_workgroup_id_y() * TILE + ty;
  float acc = 0.0f;
  for (u32 k0 = 0; k0 < k; k0 += TILE) {
    in_tile[ty][tx] = row < rows && k0 + tx < k ? in[row * k + k0 + tx] : 0.0f;
    w_tile[ty][tx] = k0 + ty < k && column < n ? w[(k0 + ty) * n + column] : 0.0f;
    barrier();
    for (u32 p = 0; p < TILE; ++p) acc = __builtin_fmaf(in_tile[ty][p], w_tile[p][tx], acc);
    barrier();
  }
  if (row < rows && column < n) {
    float value = acc + b[column];
    out[row * n + column] = relu && value < 0.0f ? 0.0f : value;
  }
}

// The value of lane (this lane ^ mask), through ds_bpermute (its address is the source lane x 4).
static inline DEVICE float lane_xor(float value, u32 lane, u32 mask) {
  return __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute((int)((lane ^ mask) * 4), __builtin_bit_cast(int, value)));
}

KERNEL void softmax(float *probs, const float *logits, u32 rows, u32 n) {
  u32 lane = __builtin_amdgcn_workitem_id_x(), row = __builtin_amdgcn_workgroup_id_x();
  if (row >= rows) return;
  const float *x = logits + row * n;
  float largest = -__builtin_inff();
  for (u32 i = lane; i < n; i += WAVE) largest = __builtin_fmaxf(largest, x[i]);
  for (u32 mask = WAVE / 2; mask > 0; mask /= 2) largest = __builtin_fmaxf(largest, lane_xor(largest, lane, mask));
  float sum = 0.0f;
  for (u32 i = lane; i < n; i += WAVE) sum += __builtin_expf(x[i] - largest);
  for (u32 mask = WAVE / 2; mask > 0; mask /= 2) sum += lane_xor(sum, lane, mask);
  for (u32 i = lane; i < n; i += WAVE) probs[row * n + i] = __builtin_expf(x[i] - largest) / sum;
}

KERNEL void argmax(u32 *classes, const float *logits, u32 rows, u32 n) {
  u32 row = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
  if (row >= rows) return;
  const float *x = logits + row * n;
  u32 best = 0;
  for (u32 i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;
  classes[row] = best;
}

// ---------------------------------------------------------------------------------------------
// The f16 model: weights given transposed (n x k, so a column of w is contiguous), inputs and
// the hidden layer in f16, accumulation, bias and logits in f32.
// - dense_h_hidden / dense_h_logits: packed math, v_dot2_f32_f16 over half2 pairs, the tiles
//   staged through LDS as in `dense`; k a multiple of 32. ReLU and an f16 result for the hidden
//   layer, an f32 result for the logits.
// - dense_wmma_hidden / dense_wmma_logits (gfx11 only): one wave per 16 x 16 block of out, the
//   products by v_wmma_f32_16x16x16_f16 (A: lane % 16 holds row r's 16 k values; B: lane % 16
//   holds column c's; C/D: register i of lane l is row 2i + l / 16, column l % 16); k a
//   multiple of 16.
typedef _Float16 half;
typedef half half2 __attribute__((ext_vector_type(2)));

template <bool Hidden> struct Out;
template <> struct Out<true> {
  typedef half type;
  static DEVICE half store(float value) { return (half)(value < 0.0f ? 0.0f : value); }
};
template <> struct Out<false> {
  typedef float type;
  static DEVICE float store(float value) { return value; }
};

template <bool Hidden>
static DEVICE void dense_h(typename Out<Hidden>::type *out, const half2 *in, const half2 *wt, const float *b, u32 rows,
                           u32 k, u32 n) {
  static SHARED half2 in_tile[TILE][TILE] __attribute__((loader_uninitialized));
  static SHARED half2 w_tile[TILE][TILE] __attribute__((loader_uninitialized));
  u32 tx = __builtin_amdgcn_workitem_id_x(), ty = __builtin_amdgcn_workitem_id_y();
  u32 c0 = __builtin_amdgcn_workgroup_id_x() * TILE, r0 = __builtin_amdgcn_workgroup_id_y() * TILE;
  float acc = 0.0f;
  for (u32 p0 = 0; p0 < k / 2; p0 += TILE) {
    in_tile[ty][tx] = r0 + ty < rows ? in[(r0 + ty) * (k / 2) + p0 + tx] : half2(0);
    w_tile[ty][tx] = c0 + ty < n ? wt[(c0 + ty) * (k / 2) + p0 + tx] : half2(0);
    barrier();
    for (u32 p = 0; p < TILE; ++p) acc = __builtin_amdgcn_fdot2(in_tile[ty][p], w_tile[tx][p], acc, false);
    barrier();
  }
  if (r0 + ty < rows && c0 + tx < n) out[(r0 + ty) * n + c0 + tx] = Out<Hidden>::store(acc + b[c0 + tx]);
}

KERNEL void dense_h_hidden(half *out, const half2 *in, const half2 *wt, const float *b, u32 rows, u32 k, u32 n) {
  dense_h<true>(out, in, wt, b, rows, k, n);
}

KERNEL void dense_h_logits(float *out, const half2 *in, const half2 *wt, const float *b, u32 rows, u32 k, u32 n) {
  dense_h<false>(out, in, wt, b, rows, k, n);
}

#ifdef __GFX11__
typedef half v16h __attribute__((ext_vector_type(16)));
typedef float v8f __attribute__((ext_vector_type(8)));

// 16 consecutive halves of `row` (k values from k0), or zeros past the matrix.
static inline DEVICE v16h sixteen(const half *matrix, u32 row, u32 rows, u32 k, u32 k0) {
  v16h values = {};
  if (row < rows)
    for (u32 i = 0; i < 16; ++i) values[i] = matrix[row * k + k0 + i];
  return values;
}

template <bool Hidden>
static DEVICE void dense_wmma(typename Out<Hidden>::type *out, const half *in, const half *wt, const float *b, u32 rows,
                              u32 k, u32 n) {
  u32 lane = __builtin_amdgcn_workitem_id_x();
  u32 c0 = __builtin_amdgcn_workgroup_id_x() * 16, r0 = __builtin_amdgcn_workgroup_id_y() * 16;
  v8f acc = {};
  for (u32 k0 = 0; k0 < k; k0 += 16) {
    v16h a = sixteen(in, r0 + lane % 16, rows, k, k0);
    v16h w = sixteen(wt, c0 + lane % 16, n, k, k0);
    acc = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a, w, acc);
  }
  u32 column = c0 + lane % 16;
  for (u32 i = 0; i < 8; ++i) {
    u32 row = r0 + 2 * i + lane / 16;
    if (row < rows && column < n) out[row * n + column] = Out<Hidden>::store(acc[i] + b[column]);
  }
}

KERNEL void dense_wmma_hidden(half *out, const half *in, const half *wt, const float *b, u32 rows, u32 k, u32 n) {
  dense_wmma<true>(out, in, wt, b, rows, k, n);
}

KERNEL void dense_wmma_logits(float *out, const half *in, const half *wt, const float *b, u32 rows, u32 k, u32 n) {
  dense_wmma<false>(out, in, wt, b, rows, k, n);
}
#endif
