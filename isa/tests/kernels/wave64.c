// Wave64 (built with -mwavefrontsize64 for gfx1030 and gfx1100): what differs from wave32 is
// everything that sees the whole 64-lane wave. Lane masks are SGPR pairs (v_cmp into s[n:n+1],
// v_cndmask and carry chains reading them, s_and_saveexec_b64 and s_cbranch_execz on the EXEC
// pair); v_mbcnt_hi counts the high half; v_readlane/v_readfirstlane reach lanes 32-63;
// ds_bpermute/ds_permute address all 64 lanes. DPP rows and v_permlanex16 stay within each
// half, and gfx11's v_permlane64_b32 swaps the halves.
typedef unsigned int u32;
typedef unsigned long long u64;

#define KERNEL __attribute__((amdgpu_kernel))

// One wave of 64: pattern p's result for lane l at out[p * 64 + l]; each lane's ballot of
// (v & 1) at ballots[l].
KERNEL void wave64_lanes(u32 *out, u64 *ballots, const u32 *in) {
  u32 lane = __builtin_amdgcn_workitem_id_x();
  u32 v = in[lane];
  u32 r[14];
  r[0] = __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
  r[1] = __builtin_amdgcn_mbcnt_hi(0xF0F0F0F0u, __builtin_amdgcn_mbcnt_lo(0x12345678u, 0u));
  r[2] = __builtin_amdgcn_readlane(v, 40) + __builtin_amdgcn_readlane(v, 7);
  r[3] = __builtin_amdgcn_ds_bpermute((int)((lane * 37 + 5) % 64 * 4), v);
  r[4] = __builtin_amdgcn_ds_bpermute((int)((lane + 32) * 4), v);
  r[5] = __builtin_amdgcn_ds_permute((int)((lane * 5 + 3) % 64 * 4), v);
  r[6] = v > 1000u ? v * 3u : v + 7u;
  u64 wide = (u64)v * 0x9E3779B97F4A7C15ull + ((u64)in[(lane + 1) % 64] << 32 | lane);
  r[7] = (u32)wide;
  r[8] = (u32)(wide >> 32);
  ballots[lane] = __builtin_amdgcn_ballot_w64(v & 1);
  // Only lanes past 44 with bit 1 set are active here: the first of them is in the high half.
  r[9] = 0xFFFFFFFFu;
  if (lane >= 45 && (v & 2)) r[9] = __builtin_amdgcn_readfirstlane(v);
  // A loop each lane leaves after its own count: EXEC narrows pass by pass until it is empty.
  u32 acc = 0;
  for (u32 i = 0; i < v % 13u; ++i) acc = acc * 31u + i + lane;
  r[10] = acc;
  r[11] = __builtin_amdgcn_update_dpp(0, v, 0x165, 0xF, 0xF, 0); // row_xmask:5
  r[12] = __builtin_amdgcn_permlanex16(0, v, 0x76543210u, 0xFEDCBA98u, 0, 0);
#ifdef __GFX11__
  r[13] = __builtin_amdgcn_permlane64(v);
#else
  r[13] = v ^ 0x5A5A5A5Au;
#endif
  for (int p = 0; p < 14; ++p) out[p * 64 + lane] = r[p];
}

// A global atomic add whose old values come back, over n elements in workgroups of 256: LLVM's
// atomic optimizer turns it into one atomic per wave, scanning the wave's values across both
// halves (DPP row scans, v_permlanex16, v_readlane/v_writelane across lane 31/32) and handing
// each lane its exclusive prefix.
KERNEL void wave64_atomic_scan(u32 *total, u32 *olds, const u32 *in, u32 n) {
  u32 i = __builtin_amdgcn_workgroup_id_x() * 256u + __builtin_amdgcn_workitem_id_x();
  if (i < n) olds[i] = __atomic_fetch_add(total, in[i], __ATOMIC_RELAXED);
}
