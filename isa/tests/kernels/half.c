// 16-bit floating point and packed 16-bit math: scalar f16 arithmetic and conversions (v_add_f16,
// v_sub_f16, v_mul_f16, v_fma_f16/v_fmac_f16, v_min_f16, v_max_f16, v_cvt_f32_f16,
// v_cvt_f16_f32, v_cvt_i16_f16, v_cvt_u16_f16, v_cvt_f16_i16, v_cvt_f16_u16, v_floor_f16,
// v_ceil_f16, v_trunc_f16, v_rndne_f16, v_cmp_*_f16), packed half2 (v_pk_add_f16, v_pk_mul_f16,
// v_pk_fma_f16 with neg and op_sel modifiers, v_pk_min_f16, v_pk_max_f16), packed i16
// (v_pk_add_u16, v_pk_sub_u16, v_pk_mul_lo_u16, v_pk_mad_u16, v_pk_lshlrev_b16,
// v_pk_ashrrev_i16, v_pk_lshrrev_b16, v_pk_min/max_i16/u16), the dot products (v_dot2_f32_f16,
// v_dot2_f16_f16, v_dot2_f32_bf16, v_dot2_bf16_bf16, v_dot4_u32_u8, v_dot4_i32_iu8,
// v_dot8_u32_u4, v_dot8_i32_iu4, with and without clamp) and bf16 conversions (done with
// integer ops: gfx11 has no bf16 convert).
// gfx1030 builds only the kernels whose instructions it has (half_dots is gfx11-only).
typedef unsigned int u32;
typedef unsigned short u16;
typedef _Float16 half;
typedef half half2 __attribute__((ext_vector_type(2)));
typedef short short2 __attribute__((ext_vector_type(2)));
typedef unsigned short ushort2 __attribute__((ext_vector_type(2)));

#define KERNEL __attribute__((amdgpu_kernel))
#define global_id() (__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x())
#define BITS(h) __builtin_bit_cast(u16, (half)(h))

// Per work-item i: out16[i * 15 + k] holds f16 result k (bits), out32[i * 4 + k] f32/i32 results.
// a, b, c: any f16 values; f: any f32; to_i16/to_u16: f16 values inside the integer range;
// from_i16/from_u16: 16-bit integers.
KERNEL void half_scalar(u16 *out16, u32 *out32, const half *a, const half *b, const half *c, const float *f,
                        const half *to_i16, const half *to_u16, const short *from_i16, const u16 *from_u16) {
  u32 i = global_id();
  half x = a[i], y = b[i], z = c[i];
  u16 *o = out16 + i * 15;
  o[0] = BITS(x + y);
  o[1] = BITS(x - y);
  o[2] = BITS(x * y);
  o[3] = BITS(__builtin_fmaf16(x, y, z));
  o[4] = BITS(__builtin_fminf16(x, y));
  o[5] = BITS(__builtin_fmaxf16(x, y));
  o[6] = BITS((half)f[i]);
  o[7] = (u16)(short)to_i16[i];
  o[8] = (u16)to_u16[i];
  o[9] = BITS((half)from_i16[i]);
  o[10] = BITS((half)from_u16[i]);
  o[11] = BITS(__builtin_floorf16(x));
  o[12] = BITS(__builtin_ceilf16(x));
  o[13] = BITS(__builtin_truncf16(y));
  o[14] = BITS(__builtin_rintf16(z));
  u32 *w = out32 + i * 4;
  w[0] = __builtin_bit_cast(u32, (float)x);
  w[1] = (x < y) | (x == y) << 1 | (x != x) << 2 | (x >= z) << 3;
  // f32 -> bf16 (round to nearest even) and back.
  __bf16 bf = (__bf16)f[i];
  w[2] = __builtin_bit_cast(u16, bf);
  w[3] = __builtin_bit_cast(u32, (float)bf * 2.0f);
}

// Packed half2: out[i * 8 + k].
KERNEL void half_packed(half2 *out, const half2 *a, const half2 *b, const half2 *c) {
  u32 i = global_id();
  half2 x = a[i], y = b[i], z = c[i];
  half2 *o = out + i * 8;
  o[0] = x + y;
  o[1] = x - y;
  o[2] = x * y;
  o[3] = __builtin_elementwise_fma(x, y, z);
  o[4] = __builtin_elementwise_min(x, y);
  o[5] = __builtin_elementwise_max(x, y);
  o[6] = __builtin_elementwise_fma(-x, y.yx, z);  // neg_lo/neg_hi and op_sel
  o[7] = __builtin_elementwise_fma(x.xx, y, -z.yy);
}

// Packed 16-bit integers: out[i * 10 + k] (the sign of the element type decides the op).
KERNEL void packed_i16(ushort2 *out, const ushort2 *a, const ushort2 *b, const ushort2 *c) {
  u32 i = global_id();
  ushort2 x = a[i], y = b[i], z = c[i];
  short2 sx = __builtin_bit_cast(short2, x), sy = __builtin_bit_cast(short2, y);
  ushort2 *o = out + i * 10;
  o[0] = x + y;
  o[1] = x - y;
  o[2] = x * y;
  o[3] = x * y + z;
  o[4] = x << (y & 15);
  o[5] = __builtin_bit_cast(ushort2, (short2)(sx >> (sy & 15)));
  o[6] = x >> (y & 15);
  o[7] = __builtin_bit_cast(ushort2, __builtin_elementwise_min(sx, sy)) ^ __builtin_elementwise_max(x, y);
  o[8] = __builtin_bit_cast(ushort2, __builtin_elementwise_max(sx, sy));
  o[9] = __builtin_elementwise_min(x, y);
}

#ifdef __GFX11__
// One record of inputs per work-item (40 bytes), one of outputs (11 words). clang 19 declares
// the bf16 dot builtins over shorts, so their operands are raw bits here.
struct dot_in {
  half2 ha, hb;   // f16 pairs
  float hc;       // f32 accumulator
  short2 ba, bb;  // bf16 pairs (raw bits: the bf16 builtins take shorts)
  float bc;       // f32 accumulator
  u32 ia, ib, ic; // 4 x 8-bit / 8 x 4-bit lanes, and the accumulator
  half hc16;      // f16 accumulator
  short bc16;     // bf16 accumulator (raw bits; a __bf16 here would convert by value)
};

KERNEL void half_dots(u32 *out, const struct dot_in *in) {
  u32 i = global_id();
  struct dot_in d = in[i];
  u32 *o = out + i * 11;
  o[0] = __builtin_bit_cast(u32, __builtin_amdgcn_fdot2(d.ha, d.hb, d.hc, 0));
  o[1] = __builtin_bit_cast(u32, __builtin_amdgcn_fdot2(d.ha, d.hb, d.hc, 1));  // clamp to [0, 1]
  o[2] = __builtin_bit_cast(u16, __builtin_amdgcn_fdot2_f16_f16(d.ha, d.hb, d.hc16));
  o[3] = __builtin_bit_cast(u32, __builtin_amdgcn_fdot2_f32_bf16(d.ba, d.bb, d.bc, 0));
  o[4] = __builtin_bit_cast(u16, __builtin_amdgcn_fdot2_bf16_bf16(d.ba, d.bb, d.bc16));
  o[5] = __builtin_amdgcn_udot4(d.ia, d.ib, d.ic, 0);  // wraps
  o[6] = __builtin_amdgcn_udot4(d.ia, d.ib, d.ic, 1);  // saturates
  o[7] = __builtin_amdgcn_sudot4(1, d.ia, 1, d.ib, d.ic, 0);
  o[8] = __builtin_amdgcn_sudot4(0, d.ia, 1, d.ib, d.ic, 1);  // a unsigned, b signed, saturating
  o[9] = __builtin_amdgcn_udot8(d.ia, d.ib, d.ic, 0);
  o[10] = __builtin_amdgcn_sudot8(1, d.ia, 1, d.ib, d.ic, 0);
}
#endif
