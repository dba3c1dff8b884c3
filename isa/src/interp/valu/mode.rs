//! MODE's rounding and denormal controls (RDNA3 ISA guide, "MODE"). The host computes in
//! nearest-even with denormals kept; other modes are applied to the basic arithmetic and the
//! narrowing conversions from its exact error: the rounded result moves one unit toward the mode's
//! direction where the exact value lies that way. Input flushing applies to these operations;
//! output flushing to every float result. Other operations round to nearest even whatever the
//! mode (a stated limit).

use super::f16_values::{h, to_h64};
use super::lane_math::two_sum;
use super::rows::lanes;
use super::{Out, VOp};
use crate::gfx11::Opcode;
use crate::interp::operands::{Row, Row64};
use crate::interp::wave::{Kind, LANES, Wave};

/// A float width the directed roundings step through (f32 and f64 share one rule).
pub(super) trait Directed: Copy + PartialOrd {
    const ZERO: Self;
    const MAX: Self;
    fn is_nan(self) -> bool;
    fn is_infinite(self) -> bool;
    fn copysign(self, sign: Self) -> Self;
    fn next_up(self) -> Self;
    fn next_down(self) -> Self;
}

macro_rules! directed {
    ($($float:ty),*) => {$(
        impl Directed for $float {
            const ZERO: Self = 0.0;
            const MAX: Self = <$float>::MAX;
            #[inline]
            fn is_nan(self) -> bool { <$float>::is_nan(self) }
            #[inline]
            fn is_infinite(self) -> bool { <$float>::is_infinite(self) }
            #[inline]
            fn copysign(self, sign: Self) -> Self { <$float>::copysign(self, sign) }
            #[inline]
            fn next_up(self) -> Self { <$float>::next_up(self) }
            #[inline]
            fn next_down(self) -> Self { <$float>::next_down(self) }
        }
    )*};
}
directed!(f32, f64);

/// Where the exact value lies from a rounded one: the sign of exact − rounded (`error`), moved
/// to under the directed mode `mode` (1 toward +∞, 2 toward −∞, 3 toward zero).
#[inline]
pub(super) fn direct<F: Directed>(rounded: F, error: f64, mode: u32) -> F {
    // A NaN error: an infinite operand made the result, which is then exact (the callers turn
    // an overflow of finite operands, whose two-sum error is NaN too, into a finite one).
    if error == 0.0 || error.is_nan() || rounded.is_nan() {
        return rounded;
    }
    let negative = rounded < F::ZERO;
    if rounded.is_infinite() {
        // Rounded past the largest finite value: directed modes stop at it.
        let toward_zero = mode == 3 || (mode == 1 && negative) || (mode == 2 && !negative);
        return if toward_zero { F::MAX.copysign(rounded) } else { rounded };
    }
    match mode {
        1 if error > 0.0 => rounded.next_up(),
        2 if error < 0.0 => rounded.next_down(),
        3 if error < 0.0 && rounded > F::ZERO => rounded.next_down(),
        3 if error > 0.0 && negative => rounded.next_up(),
        _ => rounded,
    }
}

/// The sign of an exact zero sum (IEEE 754, 6.3): +0 in every mode but toward −∞ (mode 2),
/// where it is −0, unless both addends are zeros of one sign, whose sum keeps it. The host's sum
/// (`high`, with `low` its exact error) is +0 for a cancellation whatever the mode.
pub(super) fn zero_sum_sign(high: f64, low: f64, (p, q): (f64, f64), mode: u32) -> f64 {
    if high != 0.0 || low != 0.0 || (p == 0.0 && q == 0.0 && p.is_sign_negative() == q.is_sign_negative()) {
        return high;
    }
    if mode == 2 { -0.0 } else { 0.0 }
}

/// An f32 result in `mode` from its exact value `high + low` (two f64s).
pub(super) fn round32(high: f64, low: f64, mode: u32) -> f32 {
    let rounded = high as f32;
    let error = (high - rounded as f64) + low;
    direct(rounded, error, mode)
}

/// An f16 result (bits) in `mode` from its exact value `high + low`: rounded once to nearest
/// even (`to_h64`), then one step in f16's ordered bit patterns where the mode says.
pub(super) fn round16(high: f64, low: f64, mode: u32) -> u32 {
    let bits = to_h64(high);
    let rounded = h(bits) as f64;
    let error = (high - rounded) + low;
    if error == 0.0 || error.is_nan() || rounded.is_nan() {
        return bits;
    }
    let up = error > 0.0;
    if rounded.is_infinite() {
        // Past the largest finite value (65504, 0x7BFF): directed modes stop at it.
        let toward_zero = mode == 3 || (mode == 1 && rounded < 0.0) || (mode == 2 && rounded > 0.0);
        return if toward_zero { bits - 1 } else { bits };
    }
    let step = |toward_up: bool| {
        if rounded == 0.0 {
            if toward_up { 0x0001 } else { 0x8001 }
        } else if (rounded > 0.0) == toward_up {
            bits + 1
        } else {
            bits - 1
        }
    };
    // Rounded away from zero: the exact value lies between it and zero.
    let overshot = rounded != 0.0 && up != (rounded > 0.0);
    match mode {
        1 if up => step(true),
        2 if !up => step(false),
        3 if overshot => step(up),
        _ => bits,
    }
}

pub(super) fn flush32(value: u32) -> u32 {
    if value & 0x7F80_0000 == 0 { value & 0x8000_0000 } else { value }
}

pub(super) fn flush16(value: u32) -> u32 {
    if value & 0x7C00 == 0 { value & 0x8000 } else { value }
}

pub(super) fn flush64(value: u64) -> u64 {
    if value & (0x7FF << 52) == 0 { value & (1 << 63) } else { value }
}

/// The add, subtract, multiply and FMA families and the narrowing conversions (f64 and integers
/// to f32, f32 to f16) under a non-default MODE; `None` for the operations that round to nearest
/// whatever the mode.
pub(super) fn moded(wave: &mut Wave, op: &VOp, mode: u32) -> Option<Out> {
    use Opcode::*;
    let (round32_mode, round64_mode) = (mode & 3, (mode >> 2) & 3);
    let (keep_in32, keep_in64) = ((mode >> 4) & 1 == 1, (mode >> 6) & 1 == 1);
    let input32 = |row: Row| if keep_in32 { row } else { row.map(flush32) };
    let input16 = |row: Row| if keep_in64 { row } else { row.map(flush16) };
    let input64 = |row: Row64| if keep_in64 { row } else { row.map(flush64) };
    let f32s = |row: Row| row.map(|bits| f32::from_bits(bits) as f64);
    let literal = f32::from_bits(op.operands.literal) as f64;
    match op.opcode {
        VAddF32 | VSubF32 | VSubrevF32 | VMulF32 | VFmaF32 | VFmacF32 | VFmaakF32 | VFmamkF32 => {
            let a = f32s(input32(op.read(wave, 0)));
            let b = f32s(input32(op.read(wave, 1)));
            let c = match op.opcode {
                VFmaF32 => f32s(input32(op.read(wave, 2))),
                VFmacF32 => f32s(input32(wave.vgpr.get(op.operands.vdst as usize).copied().unwrap_or([0; LANES]))),
                _ => [literal; LANES],
            };
            let row = lanes(|lane| {
                let (x, y, z) = (a[lane], b[lane], c[lane]);
                // Sums and products of f32 values are exact in f64 up to one rounding, whose
                // error TwoSum (or an FMA) recovers; FMAs add an exact product.
                let addends = match op.opcode {
                    VAddF32 => (x, y),
                    VSubF32 => (x, -y),
                    VSubrevF32 => (y, -x),
                    VMulF32 => return round32(x * y, 0.0, round32_mode).to_bits(),
                    VFmaakF32 => (x * y, literal),
                    VFmamkF32 => (x * literal, y),
                    _ => (x * y, z),
                };
                let (high, low) = two_sum(addends.0, addends.1);
                round32(zero_sum_sign(high, low, addends, round32_mode), low, round32_mode).to_bits()
            });
            Some(Out::B32(row))
        }
        VAddF64 | VMulF64 => {
            let (a, b) = (input64(op.read64(wave, 0)), input64(op.read64(wave, 1)));
            Some(Out::B64(lanes(|lane| {
                let (x, y) = (f64::from_bits(a[lane]), f64::from_bits(b[lane]));
                let (rounded, error) = if op.opcode == VAddF64 {
                    let (sum, error) = two_sum(x, y);
                    (zero_sum_sign(sum, error, (x, y), round64_mode), error)
                } else {
                    let product = x * y;
                    (product, x.mul_add(y, -product))
                };
                // Finite operands past the largest finite value: an overflow, not exact.
                let overflow = rounded.is_infinite() && x.is_finite() && y.is_finite();
                direct(rounded, if overflow { -rounded } else { error }, round64_mode).to_bits()
            })))
        }
        VFmaF64 => {
            let (a, b, c) = (input64(op.read64(wave, 0)), input64(op.read64(wave, 1)), input64(op.read64(wave, 2)));
            Some(Out::B64(lanes(|lane| {
                let (x, y, z) = (f64::from_bits(a[lane]), f64::from_bits(b[lane]), f64::from_bits(c[lane]));
                let rounded = x.mul_add(y, z);
                let rounded =
                    if rounded == 0.0 { zero_sum_sign(rounded, 0.0, (x * y, z), round64_mode) } else { rounded };
                // exact = p + ep + z, with p + ep the exact product and (s, es) TwoSum(p, z); s and
                // the rounded FMA lie within an ulp of each other, so s − rounded is exact, and
                // the sum's sign is the error's (a last rounding cannot change a sign).
                let product = x * y;
                let product_error = x.mul_add(y, -product);
                let (sum, sum_error) = two_sum(product, z);
                let error = ((sum - rounded) + sum_error) + product_error;
                let overflow = rounded.is_infinite() && x.is_finite() && y.is_finite() && z.is_finite();
                direct(rounded, if overflow { -rounded } else { error }, round64_mode).to_bits()
            })))
        }
        VCvtF32F64 => {
            let a = input64(op.read64(wave, 0));
            Some(Out::B32(lanes(|lane| round32(f64::from_bits(a[lane]), 0.0, round32_mode).to_bits())))
        }
        VCvtF32I32 | VCvtF32U32 => {
            // Integers are exact in f64; above 2^24 the f32 rounds.
            let a = op.read(wave, 0);
            let signed = op.opcode == VCvtF32I32;
            Some(Out::B32(lanes(|lane| {
                let value = if signed { a[lane] as i32 as f64 } else { a[lane] as f64 };
                round32(value, 0.0, round32_mode).to_bits()
            })))
        }
        VCvtF16F32 => {
            let a = input32(op.read(wave, 0));
            Some(Out::B32(lanes(|lane| round16(f32::from_bits(a[lane]) as f64, 0.0, round64_mode))))
        }
        VAddF16 | VSubF16 | VSubrevF16 | VMulF16 | VFmaF16 | VFmacF16 => {
            let value = |row: Row| row.map(|bits| h(bits) as f64);
            let a = value(input16(op.read(wave, 0)));
            let b = value(input16(op.read(wave, 1)));
            let c = match op.opcode {
                VFmaF16 => value(input16(op.read(wave, 2))),
                // The accumulator is the destination's half (op_sel's, as the result's).
                VFmacF16 => {
                    let vdst = wave.vgpr.get(op.operands.vdst as usize).copied().unwrap_or([0; LANES]);
                    let high = op.operands.op_sel >> 3 & 1 == 1;
                    value(input16(vdst.map(|bits| if high { bits >> 16 } else { bits & 0xFFFF })))
                }
                _ => [0.0; LANES],
            };
            Some(Out::B32(lanes(|lane| {
                let (x, y, z) = (a[lane], b[lane], c[lane]);
                // f16 sums and products are exact in f64; an FMA's sum is TwoSum's pair.
                let addends = match op.opcode {
                    VAddF16 => (x, y),
                    VSubF16 => (x, -y),
                    VSubrevF16 => (y, -x),
                    VMulF16 => return round16(x * y, 0.0, round64_mode),
                    _ => (x * y, z),
                };
                let (high, low) = two_sum(addends.0, addends.1);
                round16(zero_sum_sign(high, low, addends, round64_mode), low, round64_mode)
            })))
        }
        _ => None,
    }
}

/// The inexact float operations whose directed rounding `moded` does not model. The others
/// outside `moded` are exact (moves, min/max, compares, floor and the like, `v_div_scale`'s powers of
/// two), round by their own rule (`v_cvt_pk_rtz`, float-to-integer conversions), or are
/// approximations the RDNA3 guide bounds in ulps whatever the mode (`v_rcp`, `v_sqrt`, `v_exp`…).
pub(super) fn rounds_by_mode_unmodelled(opcode: Opcode) -> bool {
    use Opcode::*;
    matches!(
        opcode,
        VDivFmasF32
            | VDivFmasF64
            | VDivFixupF16
            | VLdexpF32
            | VLdexpF64
            | VLdexpF16
            | VPkAddF16
            | VPkMulF16
            | VPkFmaF16
            | VDot2F32F16
            | VDot2F16F16
            | VDot2Bf16Bf16
            | VDot2F32Bf16
            | VFmaMixF32
            | VFmaMixloF16
            | VFmaMixhiF16
            | VFmamkF16
            | VFmaakF16
            | VCvtF16U16
            | VCvtF16I16
            | VMulDx9ZeroF32
            | VFmaDx9ZeroF32
            | VFmacDx9ZeroF32
    )
}

/// MODE's output denormal flushing on a float result.
pub(super) fn flush_output(op: &VOp, out: Out, mode: u32) -> Out {
    let (keep_out32, keep_out64) = ((mode >> 5) & 1 == 1, (mode >> 7) & 1 == 1);
    match (out, op.result) {
        (Out::B32(row), Kind::F32) if !keep_out32 && op.half & 8 == 0 => Out::B32(row.map(flush32)),
        (Out::B32(row), Kind::F16) if !keep_out64 && op.half & 8 != 0 => Out::B32(row.map(flush16)),
        (Out::B64(row), Kind::F64) if !keep_out64 => Out::B64(row.map(flush64)),
        (out, _) => out,
    }
}
