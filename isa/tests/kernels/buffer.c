// MUBUF through buffer resources made in the kernel (s_mov/s_or building the V#):
// buffer_load_u8, buffer_load_u16, buffer_load_b32, buffer_load_b64, buffer_load_b96,
// buffer_load_b128, buffer_store_b8/b16/b32/b64/b96/b128, with VGPR offsets (offen), the
// instruction's immediate offset, an SGPR offset (soffset) and the glc/slc cache bits; and the
// range check of raw buffers (stride 0): an access at or past num_records reads 0 and writes
// nothing. Every access here is either wholly inside num_records or wholly outside, so per-access
// and per-dword checking agree.
// clang 19 has no struct (indexed, idxen) buffer builtins, so only raw buffers are reached.
typedef unsigned int u32;
typedef unsigned char u8;
typedef unsigned short u16;
typedef u32 v2u __attribute__((ext_vector_type(2)));
typedef u32 v3u __attribute__((ext_vector_type(3)));
typedef u32 v4u __attribute__((ext_vector_type(4)));

#define KERNEL __attribute__((amdgpu_kernel))
#define lane_id() __builtin_amdgcn_workitem_id_x()

// Dword 3 of the V# (stride 0, so num_records counts bytes): DST_SEL 0, FORMAT 4, OOB_SELECT 3
// (raw), and on gfx10.3 RESOURCE_LEVEL 1, as AMD's composable_kernel builds it
// (CK_BUFFER_RESOURCE_3RD_DWORD). Untyped loads ignore the format but need it non-zero.
#ifdef __GFX11__
#define RSRC_FLAGS 0x31004000
#else
#define RSRC_FLAGS 0x31014000
#endif
#define GLC 1
#define SLC 2

// One workgroup of 64; out[i * 16 + k]. `src` holds at least 1024 bytes; the resource covers
// only its first `num_records` (the test passes 128).
KERNEL void buffer_loads(u32 *out, void *src, u32 num_records) {
  __amdgpu_buffer_rsrc_t r = __builtin_amdgcn_make_buffer_rsrc(src, 0, num_records, RSRC_FLAGS);
  u32 i = lane_id();
  u32 *o = out + i * 16;
  o[0] = __builtin_amdgcn_raw_buffer_load_b32(r, i * 4, 0, 0);
  o[1] = __builtin_amdgcn_raw_buffer_load_b8(r, i * 3, 0, 0);
  o[2] = __builtin_amdgcn_raw_buffer_load_b16(r, i * 2, 0, SLC);
  v2u q = __builtin_amdgcn_raw_buffer_load_b64(r, i * 8, 0, GLC);
  o[3] = q.x;
  o[4] = q.y;
  v4u w = __builtin_amdgcn_raw_buffer_load_b128(r, i * 16, 0, 0);
  o[5] = w.x;
  o[6] = w.y;
  o[7] = w.z;
  o[8] = w.w;
  o[9] = __builtin_amdgcn_raw_buffer_load_b32(r, i * 4 + 32, 0, 0);   // immediate offset 32
  o[10] = __builtin_amdgcn_raw_buffer_load_b32(r, i % 16 * 4, 16, 0); // soffset 16, in range
  v3u t = __builtin_amdgcn_raw_buffer_load_b96(r, i * 16, 0, GLC | SLC);
  o[11] = t.x;
  o[12] = t.y;
  o[13] = t.z;
  o[14] = __builtin_amdgcn_raw_buffer_load_b16(r, i * 2 + 64, 0, 0);  // immediate offset 64
  o[15] = 0x600DF00Du;
}

// One workgroup of 64 storing through six resources over parts of `dst` (1024 bytes), each
// with a num_records smaller than its part: the stores past it must leave the bytes alone.
KERNEL void buffer_stores(u8 *dst) {
  u32 i = lane_id();
  __amdgpu_buffer_rsrc_t r32 = __builtin_amdgcn_make_buffer_rsrc(dst, 0, 96, RSRC_FLAGS);
  __amdgpu_buffer_rsrc_t r8 = __builtin_amdgcn_make_buffer_rsrc(dst + 256, 0, 40, RSRC_FLAGS);
  __amdgpu_buffer_rsrc_t r16 = __builtin_amdgcn_make_buffer_rsrc(dst + 320, 0, 64, RSRC_FLAGS);
  __amdgpu_buffer_rsrc_t r64 = __builtin_amdgcn_make_buffer_rsrc(dst + 448, 0, 64, RSRC_FLAGS);
  __amdgpu_buffer_rsrc_t r128 = __builtin_amdgcn_make_buffer_rsrc(dst + 576, 0, 128, RSRC_FLAGS);
  __amdgpu_buffer_rsrc_t r96 = __builtin_amdgcn_make_buffer_rsrc(dst + 832, 0, 48, RSRC_FLAGS);
  __builtin_amdgcn_raw_buffer_store_b32(0xC0DE0000u | i, r32, i * 4, 0, 0);
  __builtin_amdgcn_raw_buffer_store_b8((u8)(0x80 | i), r8, i, 0, GLC);
  __builtin_amdgcn_raw_buffer_store_b16((u16)(0xB000 | i), r16, i * 2, 0, 0);
  __builtin_amdgcn_raw_buffer_store_b64((v2u){0x64000000u | i, ~i}, r64, i * 8, 0, SLC);
  if (i < 16) {
    __builtin_amdgcn_raw_buffer_store_b128((v4u){i, i << 8, i << 16, i << 24}, r128, i * 16, 0, 0);
  }
  if (i < 8) {
    __builtin_amdgcn_raw_buffer_store_b96((v3u){0x96000000u | i, 0x96000100u | i, 0x96000200u | i}, r96, i * 16, 0, 0);
  }
}
