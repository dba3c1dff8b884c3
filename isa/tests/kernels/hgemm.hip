// HIP (device-only, no HIP headers: the few keywords are defined here). Half-precision GEMMs,
// small and also speed benchmarks, one C element per work-item over a
// 16x16 workgroup with the tiles in LDS:
// - hgemm_dot2: A (M x K) times B, given transposed (N x K), both f16; f32 accumulation with
//   v_dot2_f32_f16 over half2 pairs; C f32.
// - hgemm_pk_fma: the same product accumulated in half2 with v_pk_fma_f16 (even k in the low
//   half, odd k in the high half), the halves added at the end (v_add_f16); C f16.
// K must be a multiple of 32; M and N any (bounds-checked).
typedef unsigned int u32;
typedef _Float16 half;
typedef half half2 __attribute__((ext_vector_type(2)));

#define KERNEL extern "C" __attribute__((global))
#define SHARED __attribute__((shared))
#define TILE 16

#define DEVICE __attribute__((device))
static inline DEVICE void barrier(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// Loads a 16-row x 32-half tile of `src` (rows x k, row-major, as half2 pairs) at row `r0`,
// column pair `p0`; rows past `rows` are zero.
#define LOAD_TILE(tile, src, r0, rows, k, p0)                                                      \
  tile[ty][tx] = (r0) + ty < (rows) ? src[((r0) + ty) * ((k) / 2) + (p0) + tx] : half2(0)

KERNEL void hgemm_dot2(float *c, const half2 *a, const half2 *bt, u32 m, u32 n, u32 k) {
  static SHARED half2 as[TILE][TILE] __attribute__((loader_uninitialized));
  static SHARED half2 bs[TILE][TILE] __attribute__((loader_uninitialized));
  u32 tx = __builtin_amdgcn_workitem_id_x(), ty = __builtin_amdgcn_workitem_id_y();
  u32 c0 = __builtin_amdgcn_workgroup_id_x() * TILE, r0 = __builtin_amdgcn_workgroup_id_y() * TILE;
  float acc = 0.0f;
  for (u32 p0 = 0; p0 < k / 2; p0 += TILE) {
    LOAD_TILE(as, a, r0, m, k, p0);
    LOAD_TILE(bs, bt, c0, n, k, p0);
    barrier();
    for (u32 p = 0; p < TILE; ++p) acc = __builtin_amdgcn_fdot2(as[ty][p], bs[tx][p], acc, 0);
    barrier();
  }
  if (r0 + ty < m && c0 + tx < n) c[(r0 + ty) * n + c0 + tx] = acc;
}

KERNEL void hgemm_pk_fma(half *c, const half2 *a, const half2 *bt, u32 m, u32 n, u32 k) {
  static SHARED half2 as[TILE][TILE] __attribute__((loader_uninitialized));
  static SHARED half2 bs[TILE][TILE] __attribute__((loader_uninitialized));
  u32 tx = __builtin_amdgcn_workitem_id_x(), ty = __builtin_amdgcn_workitem_id_y();
  u32 c0 = __builtin_amdgcn_workgroup_id_x() * TILE, r0 = __builtin_amdgcn_workgroup_id_y() * TILE;
  half2 acc = half2(0);
  for (u32 p0 = 0; p0 < k / 2; p0 += TILE) {
    LOAD_TILE(as, a, r0, m, k, p0);
    LOAD_TILE(bs, bt, c0, n, k, p0);
    barrier();
    for (u32 p = 0; p < TILE; ++p) acc = __builtin_elementwise_fma(as[ty][p], bs[tx][p], acc);
    barrier();
  }
  if (r0 + ty < m && c0 + tx < n) c[(r0 + ty) * n + c0 + tx] = acc.x + acc.y;
}
