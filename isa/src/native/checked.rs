//! VALU operations whose result some lanes' operands leave to the interpreter (a NaN's payload,
//! a conversion out of range): computed into the frame's scratch row, tested, then written or
//! handed to the interpreter's step before anything is written.

use dynasmrt::{DynasmApi, DynasmLabelApi, dynasm};

use super::emit::{Emitter, LANE_BITS, sgpr};
use super::sources::{Src, load, scratch_row};
use crate::interp::decoded_kernel::Decoded;
use crate::interp::wave::VCC;

/// The emitter of one chunk of a checked operation: chunk `k`'s result into `ymm7`, and the
/// lanes that need the interpreter into `ymm0`.
pub(super) type Chunk<'a> = Box<dyn FnMut(&mut Emitter<'_>, i32) + 'a>;

/// Operations whose result some lanes' operands make the interpreter's business (a NaN's
/// payload, say), one or both halves of a VOPD pair: `(vdst, chunk)` each, whose results go to
/// the frame's scratch rows (half `h` to row `h`); where any active lane of any of them needs
/// the interpreter, the instruction is its step, before anything is written; otherwise each
/// scratch row is written to its `vdst` in the active lanes, in order (so every source is read
/// before any destination is written, as a VOPD pair's halves read theirs).
pub(super) fn checked_rows(e: &mut Emitter<'_>, index: u32, decoded: &Decoded, mut halves: Vec<(i32, Chunk<'_>)>) {
    assert!(halves.len() <= 2, "a scratch row per half");
    let resume = e.next_label(index, decoded);
    let slow = e.slow_path(index, resume);
    dynasm!(e.ops ; .arch x64 ; vpxor xmm11, xmm11, xmm11);
    for k in 0..4 {
        for (half, (_, chunk)) in halves.iter_mut().enumerate() {
            chunk(e, k);
            let scratch = scratch_row(half as u8) + 32 * k;
            dynasm!(e.ops
                ; .arch x64
                ; vmovaps [r14 + scratch], ymm7
                ; vpandn ymm0, Ry(12 + k as u8), ymm0
                ; vpor ymm11, ymm11, ymm0
            );
        }
    }
    dynasm!(e.ops
        ; .arch x64
        ; vptest ymm11, ymm11
        ; jnz =>slow
    );
    for (half, (vdst, _)) in halves.iter().enumerate() {
        e.write_scratch_row(half as u8, *vdst);
    }
}

/// Chunk `k` of `v_dot2acc_f32_f16` as the interpreter computes it (`valu::f16_values::dot2_f16`): the two
/// products (exact), summed in f64, the accumulator (`vdst`) added in f64, rounded once more to
/// f32. A product of two f16 values is exact in f32 too (22 significant bits, exponents within
/// 2^−48 to 2^32), so the products are taken eight at a time in f32 and only they and the
/// accumulator are widened. A NaN result (whose payload the interpreter picks its own way) is
/// the interpreter's.
pub(super) fn dot2(e: &mut Emitter<'_>, vdst: i32, a: Src, b: Src, k: i32) {
    load(e, 2, Src::Row(vdst), k);
    dot2_onto(e, a, b, k);
}

/// [`dot2`] onto the accumulator's chunk in `ymm2` (which it clobbers).
pub(super) fn dot2_onto(e: &mut Emitter<'_>, a: Src, b: Src, k: i32) {
    // (a0 a1 a2 a3 in f64) from halves (lo, hi) of four lanes: [l0, l2, l1, l3] after `vhaddpd`,
    // put back in lane order by `vpermpd`.
    const LANE_ORDER: i8 = 0b11_01_10_00_u8 as i8;
    load(e, 0, a, k);
    load(e, 1, b, k);
    dynasm!(e.ops
        ; .arch x64
        // Products of lanes 0–3's halves in ymm3 (lo, hi per lane), of lanes 4–7's in ymm5.
        ; vcvtph2ps ymm3, xmm0
        ; vcvtph2ps ymm4, xmm1
        ; vmulps ymm3, ymm3, ymm4
        ; vextracti128 xmm0, ymm0, 1
        ; vextracti128 xmm1, ymm1, 1
        ; vcvtph2ps ymm5, xmm0
        ; vcvtph2ps ymm6, xmm1
        ; vmulps ymm5, ymm5, ymm6
        // Lanes 0–3: each lane's two products summed in f64, plus c.
        ; vcvtps2pd ymm7, xmm3
        ; vextractf128 xmm3, ymm3, 1
        ; vcvtps2pd ymm0, xmm3
        ; vhaddpd ymm7, ymm7, ymm0
        ; vpermpd ymm7, ymm7, LANE_ORDER
        ; vcvtps2pd ymm0, xmm2
        ; vaddpd ymm7, ymm7, ymm0
        ; vcvtpd2ps xmm7, ymm7
        // Lanes 4–7 likewise.
        ; vcvtps2pd ymm3, xmm5
        ; vextractf128 xmm5, ymm5, 1
        ; vcvtps2pd ymm0, xmm5
        ; vhaddpd ymm3, ymm3, ymm0
        ; vpermpd ymm3, ymm3, LANE_ORDER
        ; vextractf128 xmm2, ymm2, 1
        ; vcvtps2pd ymm0, xmm2
        ; vaddpd ymm3, ymm3, ymm0
        ; vcvtpd2ps xmm3, ymm3
        ; vinsertf128 ymm7, ymm7, xmm3, 1
    );
    e.vcmpps(0, 7, 7, UNORDERED);
}

/// Chunk `k` of `v_max_f32` (`max`) or `v_min_f32` as `valu::lane_math::min_max32` decides: the greater
/// (or lesser) of two numbers, a tie S0 for max and S1 for min (equal numbers have equal bits),
/// and of two zeros the positive for max (the signs ANDed) and the negative for min (ORed). A
/// NaN operand is the interpreter's (IEEE mode's quieting, the other operand otherwise).
pub(super) fn min_max(e: &mut Emitter<'_>, max: bool, a: Src, b: Src, k: i32) {
    load(e, 1, a, k);
    load(e, 2, b, k);
    if max {
        dynasm!(e.ops ; .arch x64 ; vmaxps ymm7, ymm1, ymm2 ; vandps ymm3, ymm1, ymm2);
    } else {
        dynasm!(e.ops ; .arch x64 ; vminps ymm7, ymm1, ymm2 ; vorps ymm3, ymm1, ymm2);
    }
    // Both zero (either sign): the signs' combination instead.
    dynasm!(e.ops ; .arch x64 ; vxorps xmm4, xmm4, xmm4);
    e.vcmpps(5, 1, 4, EQUAL);
    e.vcmpps(6, 2, 4, EQUAL);
    e.vcmpps(0, 1, 2, UNORDERED);
    dynasm!(e.ops
        ; .arch x64
        ; vandps ymm5, ymm5, ymm6
        ; vblendvps ymm7, ymm7, ymm3, ymm5
    );
}

/// Chunk `k` of `v_rndne_f32` (to the nearest integer, ties to even: `vroundps` mode 0, its
/// precision exception masked) or, `convert`, `v_cvt_i32_f32` (toward zero, `vcvttps2dq`). A
/// NaN source is the interpreter's (its payload), and so is a conversion `vcvttps2dq` answers
/// with 0x8000_0000: out of range or NaN, which the interpreter saturates (and −2^31 itself).
pub(super) fn round(e: &mut Emitter<'_>, convert: bool, a: Src, k: i32) {
    load(e, 1, a, k);
    if convert {
        dynasm!(e.ops
            ; .arch x64
            ; vcvttps2dq ymm7, ymm1
            ; vpcmpeqd ymm0, ymm0, ymm0
            ; vpslld ymm0, ymm0, 31
            ; vpcmpeqd ymm0, ymm0, ymm7
        );
    } else {
        dynasm!(e.ops ; .arch x64 ; vroundps ymm7, ymm1, 8);
        e.vcmpps(0, 1, 1, UNORDERED);
    }
}

/// Chunk `k` of `v_rcp_f32`: `1.0 / x` as the interpreter computes it (one IEEE division,
/// correctly rounded, infinities and zeros exact). A NaN source is the interpreter's.
pub(super) fn reciprocal(e: &mut Emitter<'_>, a: Src, k: i32) {
    load(e, 1, a, k);
    let one = e.constant([1.0f32.to_bits(); 8]);
    dynasm!(e.ops
        ; .arch x64
        ; vmovaps ymm2, [=>one]
        ; vdivps ymm7, ymm2, ymm1
    );
    e.vcmpps(0, 1, 1, UNORDERED);
}

/// Chunk `k` of `v_ldexp_f32` as `valu::lane_math::ldexp32` computes it: x · 2^n exactly in f64, rounded
/// once to f32. n is clamped to ±300 first, which changes no result: an f32 times 2^300 is past
/// f32's range and times 2^−300 below half its least subnormal, and within the clamp every
/// product is exact in f64 (exponents −449 to 428). 2^n is built in each f64's high dword,
/// (n + 1023) << 20, moved up from the low dword `vpmovzxdq` leaves it in. A NaN source is the
/// interpreter's.
pub(super) fn ldexp(e: &mut Emitter<'_>, a: Src, b: Src, k: i32) {
    // `vpshufd`'s order for each qword's dwords swapped.
    const SWAP_DWORDS: i8 = 0b10_11_00_01_u8 as i8;
    load(e, 1, a, k);
    load(e, 2, b, k);
    let (most, least, bias) = (e.constant([300; 8]), e.constant([-300i32 as u32; 8]), e.constant([1023; 8]));
    dynasm!(e.ops
        ; .arch x64
        ; vpminsd ymm2, ymm2, [=>most]
        ; vpmaxsd ymm2, ymm2, [=>least]
        ; vpaddd ymm2, ymm2, [=>bias]
        ; vpslld ymm2, ymm2, 20
        // Lanes 0–3.
        ; vpmovzxdq ymm4, xmm2
        ; vpshufd ymm4, ymm4, SWAP_DWORDS
        ; vcvtps2pd ymm3, xmm1
        ; vmulpd ymm3, ymm3, ymm4
        ; vcvtpd2ps xmm7, ymm3
        // Lanes 4–7.
        ; vextracti128 xmm2, ymm2, 1
        ; vextractf128 xmm6, ymm1, 1
        ; vpmovzxdq ymm4, xmm2
        ; vpshufd ymm4, ymm4, SWAP_DWORDS
        ; vcvtps2pd ymm3, xmm6
        ; vmulpd ymm3, ymm3, ymm4
        ; vcvtpd2ps xmm3, ymm3
        ; vinsertf128 ymm7, ymm7, xmm3, 1
    );
    e.vcmpps(0, 1, 1, UNORDERED);
}

/// Chunk `k` of `v_cvt_f16_f32` as `valu::to_h` rounds (once, to nearest even, subnormal and
/// infinite results included: `vcvtps2ph` with rounding 0), in the low half of each lane, the
/// high half of `vdst` kept. A NaN source is the interpreter's (its payload).
pub(super) fn to_half(e: &mut Emitter<'_>, vdst: i32, a: Src, k: i32) {
    load(e, 1, a, k);
    dynasm!(e.ops
        ; .arch x64
        ; vcvtps2ph xmm7, ymm1, 0
        ; vpmovzxwd ymm7, xmm7
        ; vpcmpeqd ymm3, ymm3, ymm3
        ; vpslld ymm3, ymm3, 16
        ; vpand ymm3, ymm3, [r13 + vdst + 32 * k]
        ; vpor ymm7, ymm7, ymm3
    );
    e.vcmpps(0, 1, 1, UNORDERED);
}

/// Chunk `k` of the division helpers (`which`: 0 `v_div_scale_f32`, 1 `v_div_fmas_f32`, 2
/// `v_div_fixup_f32`, sources S0–S2) where each lane's operands are ordinary, as
/// `valu::division::division_lane_f32` computes them; any other lane is the interpreter's. Ordinary:
/// - scale (S1 the denominator, S2 the numerator): exponents 1 ≤ e1 ≤ 250, 24 ≤ e2 ≤ 254 and
///   −125 ≤ e2 − e1 ≤ 95, where no reciprocal or quotient is subnormal and nothing is scaled:
///   S0 unchanged, its flag clear (`div_scale32`'s last case; the caller clears the mask);
/// - fmas: finite operands and the lane's VCC bit clear: the fused multiply-add, one rounding
///   (`div_fmas32` without a scale);
/// - fixup (S0 the quotient, S1 the denominator, S2 the numerator): S1 and S2 normal, S0
///   finite, e2 − e1 ≥ −150 (no underflow to 0): S0's magnitude with the sign S1 · S2 has
///   (`div_fixup`'s last case).
pub(super) fn division(e: &mut Emitter<'_>, which: u32, srcs: &[Src], k: i32) {
    let exponent_bits = e.constant([0x7F80_0000; 8]);
    load(e, 1, srcs[0], k);
    load(e, 2, srcs[1], k);
    load(e, 3, srcs[2], k);
    if which == 1 {
        // Any operand infinite or NaN (all exponent bits set), or VCC (the running half's) set
        // in the lane.
        let (bits, vcc) = (LANE_BITS + 32 * k, sgpr(e.mask_slot(VCC)));
        dynasm!(e.ops
            ; .arch x64
            ; vmovaps ymm7, ymm1
            ; vfmadd213ps ymm7, ymm2, ymm3
            ; vmovdqa ymm5, [=>exponent_bits]
            ; vpand ymm0, ymm1, ymm5
            ; vpcmpeqd ymm0, ymm0, ymm5
            ; vpand ymm4, ymm2, ymm5
            ; vpcmpeqd ymm4, ymm4, ymm5
            ; vpor ymm0, ymm0, ymm4
            ; vpand ymm4, ymm3, ymm5
            ; vpcmpeqd ymm4, ymm4, ymm5
            ; vpor ymm0, ymm0, ymm4
        );
        e.broadcast_mask(4, vcc);
        dynasm!(e.ops
            ; .arch x64
            ; vpand ymm4, ymm4, [r14 + bits]
            ; vpcmpeqd ymm4, ymm4, [r14 + bits]
            ; vpor ymm0, ymm0, ymm4
        );
        return;
    }
    // ymm4 = e1 (S1's biased exponent), ymm5 = e2 (S2's), ymm6 = e2 − e1.
    dynasm!(e.ops
        ; .arch x64
        ; vpsrld ymm4, ymm2, 23
        ; vpsrld ymm5, ymm3, 23
        ; vpcmpeqd ymm0, ymm0, ymm0
        ; vpsrld ymm0, ymm0, 24
        ; vpand ymm4, ymm4, ymm0
        ; vpand ymm5, ymm5, ymm0
        ; vpsubd ymm6, ymm5, ymm4
    );
    // Out of range: x < low or x > high, for each (x, low, high), ORed into ymm0.
    let bounds: &[(u8, i32, i32)] = if which == 0 {
        &[(4, 1, 250), (5, 24, 254), (6, -125, 95)]
    } else {
        &[(4, 1, 254), (5, 1, 254), (6, -150, i32::MAX)]
    };
    dynasm!(e.ops ; .arch x64 ; vpxor xmm0, xmm0, xmm0);
    for &(x, low, high) in bounds {
        let (low, high) = (e.constant([low as u32; 8]), e.constant([high as u32; 8]));
        dynasm!(e.ops
            ; .arch x64
            ; vmovdqa ymm7, [=>low]
            ; vpcmpgtd ymm7, ymm7, Ry(x)
            ; vpor ymm0, ymm0, ymm7
            ; vpcmpgtd ymm7, Ry(x), [=>high]
            ; vpor ymm0, ymm0, ymm7
        );
    }
    if which == 0 {
        dynasm!(e.ops ; .arch x64 ; vmovaps ymm7, ymm1);
        return;
    }
    // Fixup: S0 infinite or NaN is the interpreter's; else |S0| with the sign of S1 · S2.
    dynasm!(e.ops
        ; .arch x64
        ; vmovdqa ymm5, [=>exponent_bits]
        ; vpand ymm4, ymm1, ymm5
        ; vpcmpeqd ymm4, ymm4, ymm5
        ; vpor ymm0, ymm0, ymm4
        ; vpcmpeqd ymm5, ymm5, ymm5
        ; vpsrld ymm5, ymm5, 1
        ; vpxor ymm6, ymm2, ymm3
        ; vpandn ymm6, ymm5, ymm6
        ; vpand ymm7, ymm1, ymm5
        ; vpor ymm7, ymm7, ymm6
    );
}

/// `vcmpps` predicates.
const EQUAL: u8 = 0x00;
const UNORDERED: u8 = 0x03;
