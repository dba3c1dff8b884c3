// OpenCL C. A tiled f32 GEMM with LDS, C = relu(A x B + bias[col]): 16x16 tiles, a 16x16
// workgroup (eight waves, 2-D work-item ids; reqd_work_group_size in the metadata), ds_store /
// ds_load_2addr of the tiles between s_barriers, v_fmac_f32 (the accumulation is an explicit fma,
// so the host reference repeats it bit for bit), v_max_f32 for the ReLU, and bounds checks for
// M, N, K that are not multiples of 16 (out-of-range tile elements load as 0).
// Also a speed benchmark: the test's sizes are small, any size works.
// No OpenCL library is linked (-nogpulib): work-item ids and the barrier are builtins.
#define TILE 16

static inline void barrier_wg(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// A: M x K, B: K x N, C: M x N, all row-major; bias: N. Grid: (ceil(N/16)*16, ceil(M/16)*16).
__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1))) void gemm_bias_relu(
    __global float *c, __global const float *a, __global const float *b, __global const float *bias, uint m,
    uint n, uint k) {
  __local float as[TILE][TILE];
  __local float bs[TILE][TILE];
  uint tx = __builtin_amdgcn_workitem_id_x(), ty = __builtin_amdgcn_workitem_id_y();
  uint col = __builtin_amdgcn_workgroup_id_x() * TILE + tx;
  uint row = __builtin_amdgcn_workgroup_id_y() * TILE + ty;
  float acc = 0.0f;
  for (uint k0 = 0; k0 < k; k0 += TILE) {
    as[ty][tx] = row < m && k0 + tx < k ? a[row * k + k0 + tx] : 0.0f;
    bs[ty][tx] = k0 + ty < k && col < n ? b[(k0 + ty) * n + col] : 0.0f;
    barrier_wg();
    for (uint kk = 0; kk < TILE; ++kk) acc = __builtin_fmaf(as[ty][kk], bs[kk][tx], acc);
    barrier_wg();
  }
  if (row < m && col < n) {
    float v = acc + bias[col];
    c[row * n + col] = v > 0.0f ? v : 0.0f;
  }
}
