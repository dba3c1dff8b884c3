// The MODE register and the clocks: s_getreg_b32 and s_setreg_imm32_b32 of hwreg(HW_REG_MODE),
// the f32, f64 and f16 rounding modes seen through v_add_f32/v_add_f64/v_add_f16, f32 denormal
// flushing seen through v_mul_f32 and v_add_f32, flat loads and stores (the volatile pointers
// are generic), s_sleep, and the clocks: on gfx11 s_getreg_b32 hwreg(HW_REG_SHADER_CYCLES) (a 20-bit
// cycle counter, __builtin_readcyclecounter) and s_sendmsg_rtn_b64 MSG_RTN_GET_REALTIME
// (__builtin_readsteadycounter); on gfx10.3 s_memtime and s_memrealtime.
//
// What the hardware gives (one work-item; the test expects the same):
// - out[0]: MODE bits 9:0 at entry, from the descriptor's COMPUTE_PGM_RSRC1: FLOAT_MODE 0xF0
//   (round to nearest even for all; f32 and f16/f64 denormals kept), DX10_CLAMP (bit 8) and
//   IEEE (bit 9) set: 0x3F0.
// - out[1..4]: a + b (f32) under round to nearest even, toward +inf, toward -inf, toward zero
//   (MODE bits 1:0 = 0, 1, 2, 3), and out[5..8] the same for c + d.
// - out[9]: MODE bits 9:0 while rounding toward zero: 0x3F3.
// - out[10..11], out[12..13]: e + f (f64) under nearest even and toward zero (bits 3:2);
//   out[24], out[25]: an f16 add under the same two modes (bits 3:2 govern f16 too).
// - out[14]: x * y (f32) with denormals kept (MODE bits 5:4 = 3): the denormal product;
//   out[15]: the same with f32 denormals flushed (bits 5:4 = 0): +0 or -0 by the product's sign;
//   out[16]: z + 0 with a denormal z, flushed: 0; out[17]: MODE bits 9:0 then: 0x3C0;
//   out[18]: x * y again after restoring: the denormal.
// - out[19], out[20]: the realtime clock read twice around s_sleep 1: the second >= the first
//   (each a 64-bit count, the low words here, the high words in out[21], out[22]).
// - out[23]: the cycle counter (gfx11: below 2^20).
// - out[26..27]: v_fma_f64(e, 1, f) toward zero (the FMA under bits 3:2, low then high word);
//   out[28], out[29]: v_cvt_f32_f64 of e + f's nearest sum toward +inf and toward -inf;
//   out[30], out[31]: v_cvt_f32_u32 of 2^24 + 1 toward +inf and toward zero;
//   out[32], out[33]: v_cvt_f16_f32 of 1 + 2^-11 + 2^-13 toward +inf and toward zero.
typedef unsigned int u32;
typedef unsigned long long u64;

#define KERNEL __attribute__((amdgpu_kernel))
// hwreg(id, offset, size) as s_getreg/s_setreg encode it.
#define HWREG(id, offset, size) ((id) | (offset) << 6 | ((size) - 1) << 11)
#define HW_REG_MODE 1
#define MODE_BITS HWREG(HW_REG_MODE, 0, 10)
#define ROUND_F32 HWREG(HW_REG_MODE, 0, 2)
#define DENORM_F32 HWREG(HW_REG_MODE, 4, 2)

// The inputs are read and the results written through volatile pointers, so the compiler keeps
// every add between the s_setreg that sets its mode and the one that restores it.
KERNEL void mode_register(volatile u32 *out, volatile const float *in, volatile const double *in64,
                          volatile const u32 *in16) {
  out[0] = __builtin_amdgcn_s_getreg(MODE_BITS);
  for (u32 mode = 0; mode < 4; ++mode) {
    __builtin_amdgcn_s_setreg(ROUND_F32, mode);
    out[1 + mode] = __builtin_bit_cast(u32, in[0] + in[1]);
    out[5 + mode] = __builtin_bit_cast(u32, in[2] + in[3]);
    if (mode == 3) out[9] = __builtin_amdgcn_s_getreg(MODE_BITS);
  }
  __builtin_amdgcn_s_setreg(ROUND_F32, 0);
  // LLVM's SIModeRegister pass resets the f64/f16 round mode to nearest before every f64 or f16
  // instruction it emits, so these adds are inline assembly, between their own s_setreg.
  double e = in64[0], f = in64[1], sum;
  __asm__ volatile("v_add_f64 %0, %1, %2" : "=v"(sum) : "v"(e), "v"(f));
  out[10] = (u32)__builtin_bit_cast(u64, sum);
  out[11] = (u32)(__builtin_bit_cast(u64, sum) >> 32);
  __asm__ volatile("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 2, 2), 3\n\t"
                   "s_nop 1\n\t"
                   "v_add_f64 %0, %1, %2\n\t"
                   "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 2, 2), 0"
                   : "=v"(sum) : "v"(e), "v"(f));
  out[12] = (u32)__builtin_bit_cast(u64, sum);
  out[13] = (u32)(__builtin_bit_cast(u64, sum) >> 32);
  // The f16 add of in16[0] + in16[1] (raw halves in the low bits), nearest then toward zero.
  u32 h0 = in16[0], h1 = in16[1], hs;
  __asm__ volatile("v_add_f16 %0, %1, %2" : "=v"(hs) : "v"(h0), "v"(h1));
  out[24] = hs & 0xFFFF;
  __asm__ volatile("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 2, 2), 3\n\t"
                   "s_nop 1\n\t"
                   "v_add_f16 %0, %1, %2\n\t"
                   "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 2, 2), 0"
                   : "=v"(hs) : "v"(h0), "v"(h1));
  out[25] = hs & 0xFFFF;
  // The FMA and the narrowing conversions, each between its own s_setreg.
  double one = 1.0, fma;
  __asm__ volatile("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 2, 2), 3\n\t"
                   "s_nop 1\n\t"
                   "v_fma_f64 %0, %1, %2, %3\n\t"
                   "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 2, 2), 0"
                   : "=v"(fma) : "v"(e), "v"(one), "v"(f));
  out[26] = (u32)__builtin_bit_cast(u64, fma);
  out[27] = (u32)(__builtin_bit_cast(u64, fma) >> 32);
  double wide = e + f * 0x1p28; // 1 + 1.5 × 2^-25: between two f32s, nearer the lower
  u32 narrow;
  __asm__ volatile("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 2), 1\n\t"
                   "s_nop 1\n\t"
                   "v_cvt_f32_f64 %0, %1\n\t"
                   "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 2), 0"
                   : "=v"(narrow) : "v"(wide));
  out[28] = narrow;
  __asm__ volatile("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 2), 2\n\t"
                   "s_nop 1\n\t"
                   "v_cvt_f32_f64 %0, -%1\n\t"
                   "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 2), 0"
                   : "=v"(narrow) : "v"(wide));
  out[29] = narrow;
  u32 big = in16[2];
  __asm__ volatile("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 2), 1\n\t"
                   "s_nop 1\n\t"
                   "v_cvt_f32_u32 %0, %1\n\t"
                   "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 2), 0"
                   : "=v"(narrow) : "v"(big));
  out[30] = narrow;
  __asm__ volatile("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 2), 3\n\t"
                   "s_nop 1\n\t"
                   "v_cvt_f32_u32 %0, %1\n\t"
                   "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 2), 0"
                   : "=v"(narrow) : "v"(big));
  out[31] = narrow;
  float single = in[8];
  __asm__ volatile("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 2, 2), 1\n\t"
                   "s_nop 1\n\t"
                   "v_cvt_f16_f32 %0, %1\n\t"
                   "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 2, 2), 0"
                   : "=v"(hs) : "v"(single));
  out[32] = hs & 0xFFFF;
  __asm__ volatile("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 2, 2), 3\n\t"
                   "s_nop 1\n\t"
                   "v_cvt_f16_f32 %0, %1\n\t"
                   "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 2, 2), 0"
                   : "=v"(hs) : "v"(single));
  out[33] = hs & 0xFFFF;
  out[14] = __builtin_bit_cast(u32, in[4] * in[5]);
  __builtin_amdgcn_s_setreg(DENORM_F32, 0);
  out[15] = __builtin_bit_cast(u32, in[4] * in[5]);
  out[16] = __builtin_bit_cast(u32, in[6] + in[7]);
  out[17] = __builtin_amdgcn_s_getreg(MODE_BITS);
  __builtin_amdgcn_s_setreg(DENORM_F32, 3);
  out[18] = __builtin_bit_cast(u32, in[4] * in[5]);
#ifdef __GFX11__
  u64 t0 = __builtin_readsteadycounter();
  __builtin_amdgcn_s_sleep(1);
  u64 t1 = __builtin_readsteadycounter();
  u64 cycles = __builtin_readcyclecounter();
#else
  u64 t0 = __builtin_amdgcn_s_memrealtime();
  __builtin_amdgcn_s_sleep(1);
  u64 t1 = __builtin_amdgcn_s_memrealtime();
  u64 cycles = __builtin_amdgcn_s_memtime();
#endif
  out[19] = (u32)t0;
  out[20] = (u32)t1;
  out[21] = (u32)(t0 >> 32);
  out[22] = (u32)(t1 >> 32);
  out[23] = (u32)cycles;
}
