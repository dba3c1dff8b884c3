// Cross-lane data movement within a wave32 wave: DPP16 (quad_perm, row_shl/shr/ror, row_mirror,
// row_half_mirror, row_share, row_xmask; row and bank masks; bound_ctrl), DPP8, v_permlane16_b32,
// v_permlanex16_b32, ds_bpermute_b32, ds_permute_b32 and ds_swizzle_b32 (quad-perm and bitmask
// modes), then the reductions and scans users build from them, where LLVM folds the moves into
// the arithmetic (v_add_u32_dpp, v_add_f32_dpp, v_max_i32_dpp, ...).
// Built by ../../gen/test_kernels.sh; run by ../kernels_exec.rs. gfx10.3 has every one of these
// instructions, so the file builds for gfx1030 too.
typedef unsigned int u32;

#define KERNEL __attribute__((amdgpu_kernel))
#define lane_id() __builtin_amdgcn_workitem_id_x()
// DPP16 control values (AMDGPU DppCtrl).
#define QUAD_PERM(a, b, c, d) ((a) | (b) << 2 | (c) << 4 | (d) << 6)
#define ROW_SHL(n) (0x100 + (n))
#define ROW_SHR(n) (0x110 + (n))
#define ROW_ROR(n) (0x120 + (n))
#define ROW_MIRROR 0x140
#define ROW_HALF_MIRROR 0x141
#define ROW_SHARE(n) (0x150 + (n))
#define ROW_XMASK(n) (0x160 + (n))
// DPP8: lane i of each group of 8 reads lane s_i of the group.
#define DPP8(s0, s1, s2, s3, s4, s5, s6, s7)                                                       \
  ((s0) | (s1) << 3 | (s2) << 6 | (s3) << 9 | (s4) << 12 | (s5) << 15 | (s6) << 18 | (s7) << 21)
// ds_swizzle offsets: quad-perm mode (bit 15), bitmask mode (and, or, xor over 5-bit lane ids).
#define SWIZZLE_QUAD(a, b, c, d) (0x8000 | QUAD_PERM(a, b, c, d))
#define SWIZZLE_MASK(and_, or_, xor_) ((and_) | (or_) << 5 | (xor_) << 10)

// One wave of 32: every pattern's result for every lane, out[pattern * 32 + lane]. `old` is
// what a lane keeps where DPP does not write it (masked rows/banks, or an invalid source lane
// without bound_ctrl).
KERNEL void dpp_patterns(u32 *out, const u32 *in) {
  u32 lane = lane_id();
  u32 v = in[lane];
  u32 old = 0xDEAD0000u | lane;
  u32 r[32];
  r[0] = __builtin_amdgcn_update_dpp(old, v, QUAD_PERM(3, 2, 1, 0), 0xF, 0xF, 0);
  r[1] = __builtin_amdgcn_update_dpp(old, v, QUAD_PERM(1, 1, 0, 2), 0xF, 0xF, 0);
  r[2] = __builtin_amdgcn_update_dpp(old, v, ROW_SHR(1), 0xF, 0xF, 0);  // row starts keep old
  r[3] = __builtin_amdgcn_update_dpp(old, v, ROW_SHR(3), 0xF, 0xF, 1);  // bound_ctrl: zero
  r[4] = __builtin_amdgcn_update_dpp(old, v, ROW_SHL(2), 0xF, 0xF, 0);
  r[5] = __builtin_amdgcn_update_dpp(old, v, ROW_ROR(5), 0xF, 0xF, 0);
  r[6] = __builtin_amdgcn_update_dpp(old, v, ROW_MIRROR, 0xF, 0xF, 0);
  r[7] = __builtin_amdgcn_update_dpp(old, v, ROW_HALF_MIRROR, 0xF, 0xF, 0);
  r[8] = __builtin_amdgcn_update_dpp(old, v, ROW_SHARE(5), 0xF, 0xF, 0);
  r[9] = __builtin_amdgcn_update_dpp(old, v, ROW_XMASK(3), 0xF, 0xF, 0);
  // Row 1 masked off; banks 0 and 2 (lanes 0-3 and 8-11 of each row) masked off.
  r[10] = __builtin_amdgcn_update_dpp(old, v, ROW_SHR(1), 0x1, 0xA, 0);
  r[11] = __builtin_amdgcn_update_dpp(old, v, ROW_ROR(15), 0x2, 0x5, 1);
  r[12] = __builtin_amdgcn_mov_dpp(v, ROW_SHL(1), 0xF, 0xF, 1);
  r[13] = __builtin_amdgcn_mov_dpp8(v, DPP8(7, 6, 5, 4, 3, 2, 1, 0));
  r[14] = __builtin_amdgcn_mov_dpp8(v, DPP8(1, 0, 3, 2, 5, 4, 7, 7));
  // permlane16: lane i of each row reads lane sel[i] of the same row; x16: of the other row.
  r[15] = __builtin_amdgcn_permlane16(old, v, 0x01234567u, 0x89ABCDEFu, 0, 0);
  r[16] = __builtin_amdgcn_permlane16(old, v, 0x33333333u, 0xFEDCBA98u, 0, 0);
  r[17] = __builtin_amdgcn_permlanex16(old, v, 0x76543210u, 0xFEDCBA98u, 0, 0);
  r[18] = __builtin_amdgcn_permlanex16(old, v, 0xFFFFFFFFu, 0x0F0F0F0Fu, 0, 0);
  // Byte addresses, lane * 4; only the lane bits count (the rest wrap).
  r[19] = __builtin_amdgcn_ds_bpermute((int)((lane * 7 + 3) % 32 * 4), v);
  r[20] = __builtin_amdgcn_ds_bpermute((int)((lane + 33) * 4), v);
  r[21] = __builtin_amdgcn_ds_permute((int)((lane * 5 + 1) % 32 * 4), v);
  // Two sources per target: the higher lane wins; lanes nobody targets read 0.
  r[22] = __builtin_amdgcn_ds_permute((int)(lane / 2 * 4), v);
  r[23] = __builtin_amdgcn_ds_swizzle(v, SWIZZLE_QUAD(2, 3, 0, 1));
  r[24] = __builtin_amdgcn_ds_swizzle(v, SWIZZLE_QUAD(0, 0, 3, 1));
  r[25] = __builtin_amdgcn_ds_swizzle(v, SWIZZLE_MASK(0x1F, 0, 0x10));  // swap halves
  r[26] = __builtin_amdgcn_ds_swizzle(v, SWIZZLE_MASK(0x18, 3, 0));     // broadcast lane 3 of 8
  r[27] = __builtin_amdgcn_ds_swizzle(v, SWIZZLE_MASK(0x1F, 0, 7));     // reverse within 8
  r[28] = __builtin_amdgcn_ds_swizzle(v, SWIZZLE_MASK(0x0F, 0x10, 1));
  for (int p = 0; p < 29; ++p) out[p * 32 + lane] = r[p];
}

// Inclusive prefix sums within each wave: the row_shr ladder with bound_ctrl, then row 1 adds
// the last lane of row 0 (v_permlanex16 with every select 15). Integers (v_add_u32_dpp) and
// floats (v_add_f32_dpp; the inputs are small integers, so every order gives the same sum).
KERNEL void wave_prefix_sums(u32 *out_u, float *out_f, const u32 *in_u, const float *in_f) {
  u32 lane = lane_id();
  u32 i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + lane;
  u32 x = in_u[i];
  float f = in_f[i];
#define SCAN_STEP(n)                                                                               \
  x += __builtin_amdgcn_update_dpp(0, x, ROW_SHR(n), 0xF, 0xF, 1);                                 \
  f += __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(0, __builtin_bit_cast(int, f), ROW_SHR(n), 0xF, 0xF, 1));
  SCAN_STEP(1) SCAN_STEP(2) SCAN_STEP(4) SCAN_STEP(8)
  u32 carry = __builtin_amdgcn_permlanex16(0, x, 0xFFFFFFFFu, 0xFFFFFFFFu, 0, 0);
  float carry_f = __builtin_bit_cast(float, __builtin_amdgcn_permlanex16(0, __builtin_bit_cast(int, f), 0xFFFFFFFFu, 0xFFFFFFFFu, 0, 0));
  // Masks rather than a branch: the compiler would sink the v_permlanex16 into the branch,
  // where its source lanes (row 0) are inactive.
  u32 upper = 0u - ((lane >> 4) & 1);
  x += carry & upper;
  f += __builtin_bit_cast(float, __builtin_bit_cast(u32, carry_f) & upper);
  out_u[i] = x;
  out_f[i] = f;
}

// Butterfly reductions with row_xmask (every lane ends with its row's result), then across the
// two rows with v_permlanex16 (identity selects): max of signed ints (v_max_i32_dpp), min of
// unsigned (v_min_u32_dpp), and a float sum. Every lane writes what it ends with (a store under
// `lane == 0` would let the compiler sink the v_permlanex16 under it, reading inactive lanes).
KERNEL void wave_butterfly_reductions(int *out_max, u32 *out_min, float *out_sum, const int *in_i, const float *in_f) {
  u32 lane = lane_id();
  u32 i = __builtin_amdgcn_workgroup_id_x() * 64 + lane;
  int m = in_i[i];
  u32 n = (u32)in_i[i] ^ 0x80000000u;
  float s = in_f[i];
#define BUTTERFLY(k)                                                                                \
  {                                                                                                 \
    int om = __builtin_amdgcn_update_dpp(0, m, ROW_XMASK(k), 0xF, 0xF, 0);                          \
    m = om > m ? om : m;                                                                            \
    u32 on = __builtin_amdgcn_update_dpp(0, n, ROW_XMASK(k), 0xF, 0xF, 0);                          \
    n = on < n ? on : n;                                                                            \
    s += __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(0, __builtin_bit_cast(int, s), ROW_XMASK(k), 0xF, 0xF, 0)); \
  }
  BUTTERFLY(1) BUTTERFLY(2) BUTTERFLY(4) BUTTERFLY(8)
  int xm = __builtin_amdgcn_permlanex16(0, m, 0x76543210u, 0xFEDCBA98u, 0, 0);
  u32 xn = __builtin_amdgcn_permlanex16(0, n, 0x76543210u, 0xFEDCBA98u, 0, 0);
  float xs = __builtin_bit_cast(float, __builtin_amdgcn_permlanex16(0, __builtin_bit_cast(int, s), 0x76543210u, 0xFEDCBA98u, 0, 0));
  m = xm > m ? xm : m;
  n = xn < n ? xn : n;
  s += xs;
  out_max[i] = m;
  out_min[i] = n;
  out_sum[i] = s;
}

// The reduction most user code writes: a shuffle-xor ladder over ds_bpermute, every lane ending
// with the wave's sum, and a DPP8 rotation folded into an integer add (v_add_nc_u32 with dpp8).
static inline float shuffle_xor(float v, u32 mask) {
  u32 lane = lane_id() & 31;
  return __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute((int)((lane ^ mask) << 2), __builtin_bit_cast(int, v)));
}

KERNEL void wave_sum_bpermute(float *out, u32 *out_rot, const float *in, const u32 *in_u) {
  u32 lane = lane_id();
  u32 i = __builtin_amdgcn_workgroup_id_x() * 64 + lane;
  float v = in[i];
  for (u32 mask = 16; mask > 0; mask >>= 1) v += shuffle_xor(v, mask);
  out[i] = v;
  u32 u = in_u[i];
  out_rot[i] = u + __builtin_amdgcn_mov_dpp8(u, DPP8(1, 2, 3, 4, 5, 6, 7, 0));
}
