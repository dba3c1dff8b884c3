// The digits MLP's inference kernels (models/digits), as a user writes them in HIP: device-only,
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
