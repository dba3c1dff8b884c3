//! VALU operations whose result some lanes' operands leave to the interpreter (a NaN's payload,
//! a conversion out of range): computed into the frame's scratch row, tested, then written or
//! handed to the interpreter's step before anything is written.

use dynasmrt::{DynasmApi, DynasmLabelApi, dynasm};

use super::emit::Emitter;
use super::sources::{Src, load, scratch_row};
use crate::interp::program::Decoded;

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

/// Chunk `k` of `v_dot2acc_f32_f16` as the interpreter computes it (`valu::dot2_f16`): the f16
/// halves to f64 (exact), the two products (exact) summed in f64, the accumulator (`vdst`) added
/// in f64, rounded once more to f32. A NaN result (whose payload the interpreter picks its own
/// way) is the interpreter's.
pub(super) fn dot2(e: &mut Emitter<'_>, vdst: i32, a: Src, b: Src, k: i32) {
    // (a0 a1 a2 a3 in f64) from halves (lo, hi) of four lanes: [l0, l2, l1, l3] after `vhaddpd`,
    // put back in lane order by `vpermpd`.
    const LANE_ORDER: i8 = 0b11_01_10_00_u8 as i8;
    load(e, 0, a, k);
    load(e, 1, b, k);
    dynasm!(e.ops
        ; .arch x64
        ; vmovdqu ymm2, [r13 + vdst + 32 * k]
        // Halves as f32: lanes 0–3 in ymm3 (a) and ymm4 (b), lanes 4–7 in ymm5 and ymm6.
        ; vcvtph2ps ymm3, xmm0
        ; vcvtph2ps ymm4, xmm1
        ; vextracti128 xmm0, ymm0, 1
        ; vextracti128 xmm1, ymm1, 1
        ; vcvtph2ps ymm5, xmm0
        ; vcvtph2ps ymm6, xmm1
        // Lanes 0–3: products of lanes 0–1 and 2–3, each lane's two summed, plus c.
        ; vcvtps2pd ymm0, xmm3
        ; vcvtps2pd ymm1, xmm4
        ; vmulpd ymm7, ymm0, ymm1
        ; vextractf128 xmm3, ymm3, 1
        ; vextractf128 xmm4, ymm4, 1
        ; vcvtps2pd ymm0, xmm3
        ; vcvtps2pd ymm1, xmm4
        ; vmulpd ymm0, ymm0, ymm1
        ; vhaddpd ymm7, ymm7, ymm0
        ; vpermpd ymm7, ymm7, LANE_ORDER
        ; vcvtps2pd ymm0, xmm2
        ; vaddpd ymm7, ymm7, ymm0
        ; vcvtpd2ps xmm7, ymm7
        // Lanes 4–7 likewise.
        ; vcvtps2pd ymm0, xmm5
        ; vcvtps2pd ymm1, xmm6
        ; vmulpd ymm3, ymm0, ymm1
        ; vextractf128 xmm5, ymm5, 1
        ; vextractf128 xmm6, ymm6, 1
        ; vcvtps2pd ymm0, xmm5
        ; vcvtps2pd ymm1, xmm6
        ; vmulpd ymm0, ymm0, ymm1
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

/// Chunk `k` of `v_max_f32` (`max`) or `v_min_f32` as `valu::min_max32` decides: the greater
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

/// Chunk `k` of `v_ldexp_f32` as `valu::ldexp32` computes it: x · 2^n exactly in f64, rounded
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

/// `vcmpps` predicates.
const EQUAL: u8 = 0x00;
const UNORDERED: u8 = 0x03;
