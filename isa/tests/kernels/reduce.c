// A sum reduction over a large array, as GPU libraries write it: each workgroup of 256 (eight
// waves) reduces its 256 elements, first within each wave with DPP (v_add_f32_dpp and
// v_add_nc_u32_dpp with row_xmask, then v_permlanex16_b32 across the two rows), then across the
// waves through LDS (ds_store/ds_load, s_barrier), the first wave reducing the eight wave sums
// with the same row butterfly and v_readlane_b32 of lanes 0 and 16. Lane 0 writes the
// workgroup's float partial and adds its integer sum to a global total with an atomic (LLVM's
// atomic optimizer rewrites it for the active lanes: v_mbcnt_lo_u32_b32, s_bcnt1_i32_b32,
// s_mul_i32, then one global_atomic_add_u32). The float sums use a fixed order the host repeats exactly: lanes paired
// by xor 1, 2, 4, 8, then the two rows added; then the wave sums the same way.
// Also a speed benchmark. The grid must be a multiple of 256 (elements past n read as 0), so
// every wave is full, as DPP needs.
// Every lane stores the same wave sum (rather than lane 0 alone) because LLVM 19 would otherwise
// sink the v_permlanex16_b32 under the `lane == 0` branch, where the lanes it reads are off.
typedef unsigned int u32;

#define KERNEL __attribute__((amdgpu_kernel))
#define LDS __attribute__((address_space(3)))
#define ROW_XMASK(n) (0x160 + (n))
#define XMASK_F(v, n) __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(0, __builtin_bit_cast(int, v), ROW_XMASK(n), 0xF, 0xF, 0))
#define XMASK_U(v, n) __builtin_amdgcn_update_dpp(0, v, ROW_XMASK(n), 0xF, 0xF, 0)

// Every lane of its row ends with the row's sum.
static inline float row_sum_f(float v) {
  v += XMASK_F(v, 1);
  v += XMASK_F(v, 2);
  v += XMASK_F(v, 4);
  return v + XMASK_F(v, 8);
}

static inline u32 row_sum_u(u32 v) {
  v += XMASK_U(v, 1);
  v += XMASK_U(v, 2);
  v += XMASK_U(v, 4);
  return v + XMASK_U(v, 8);
}

#define OTHER_ROW(v) __builtin_amdgcn_permlanex16(0, v, 0x76543210u, 0xFEDCBA98u, 0, 0)

KERNEL void reduce_sum(float *partials, u32 *total, const float *in, const u32 *in_u, u32 n) {
  static LDS float wave_f[8] __attribute__((loader_uninitialized));
  static LDS u32 wave_u[8] __attribute__((loader_uninitialized));
  u32 lane = __builtin_amdgcn_workitem_id_x();
  u32 group = __builtin_amdgcn_workgroup_id_x();
  u32 i = group * 256 + lane;
  float f = row_sum_f(i < n ? in[i] : 0.0f);
  f += __builtin_bit_cast(float, OTHER_ROW(__builtin_bit_cast(int, f)));
  u32 u = row_sum_u(i < n ? in_u[i] : 0u);
  u += OTHER_ROW(u);
  wave_f[lane / 32] = f;
  wave_u[lane / 32] = u;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  if (lane < 32) {
    f = row_sum_f(lane < 8 ? wave_f[lane] : 0.0f);
    f = __builtin_bit_cast(float, __builtin_amdgcn_readlane(__builtin_bit_cast(int, f), 0)) +
        __builtin_bit_cast(float, __builtin_amdgcn_readlane(__builtin_bit_cast(int, f), 16));
    u = row_sum_u(lane < 8 ? wave_u[lane] : 0u);
    u = __builtin_amdgcn_readlane(u, 0) + __builtin_amdgcn_readlane(u, 16);
    if (lane == 0) {
      partials[group] = f;
      __hip_atomic_fetch_add(total, u, __ATOMIC_RELAXED, 4 /* agent */);
    }
  }
}
