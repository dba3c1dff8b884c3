//! The f32, f64 and f16 division sequence's helpers (`v_div_scale`, `v_div_fmas`, `v_div_fixup`):
//! the special cases and scalings that make the compiler's reciprocal-and-FMA division IEEE-exact,
//! as `division_sequences_are_ieee` checks against the host's division.

use super::f16_values::{h, to_h64};
use super::lane_math::{ldexp32, ldexp64, two_sum};
use super::rows::{d3, lanes, map3};
use super::{Out, VOp};
use crate::gfx11::Opcode;
use crate::interp::wave::{VCC, Wave};

/// `v_div_scale`, `v_div_fmas` and `v_div_fixup` of every width; `None` for another operation.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn compute(wave: &Wave, op: &VOp) -> Option<Out> {
    let a = || op.read(wave, 0);
    let b = || op.read(wave, 1);
    let c = || op.read(wave, 2);
    let a64 = || op.read64(wave, 0);
    let b64 = || op.read64(wave, 1);
    let c64 = || op.read64(wave, 2);
    use Opcode::*;
    let row = match op.opcode {
        VDivFmasF32 | VDivFixupF32 | VDivScaleF32 => {
            let (x, y, z, vcc) = (a(), b(), c(), wave.sgpr[wave.mask_register(VCC) as usize]);
            let mut flags = 0u32;
            let row = lanes(|lane| {
                let [x, y, z] = [x[lane], y[lane], z[lane]].map(f32::from_bits);
                let (value, flag) = division_lane_f32(op.opcode, x, y, z, vcc >> lane & 1 == 1);
                flags |= (flag as u32) << lane;
                value.to_bits()
            });
            if op.opcode == VDivScaleF32 {
                return Some(Out::Carry(row, flags));
            }
            row
        }
        VDivFmasF64 => {
            let (x, y, z, vcc) = (a64(), b64(), c64(), wave.sgpr[wave.mask_register(VCC) as usize]);
            return Some(Out::B64(lanes(|lane| {
                let [x, y, z] = [x[lane], y[lane], z[lane]].map(f64::from_bits);
                div_fmas64(x, y, z, vcc >> lane & 1 == 1).to_bits()
            })));
        }
        VDivFixupF64 => return Some(Out::B64(d3(a64(), b64(), c64(), |q, d, n| div_fixup(q, d, n, FloatWidth::F64)))),
        VDivScaleF64 => {
            let (x, y, z) = (a64(), b64(), c64());
            let mut vcc = 0u32;
            let row = lanes(|lane| {
                let (value, flag) =
                    div_scale64(f64::from_bits(x[lane]), f64::from_bits(y[lane]), f64::from_bits(z[lane]));
                vcc |= (flag as u32) << lane;
                value.to_bits()
            });
            return Some(Out::Carry64(row, vcc));
        }
        VDivFixupF16 => {
            map3(a(), b(), c(), |q, d, n| to_h64(div_fixup(h(q) as f64, h(d) as f64, h(n) as f64, FloatWidth::F16)))
        }
        _ => return None,
    };
    Some(Out::B32(row))
}

/// One lane of the f32 division sequence's helpers: `v_div_scale_f32` (the scaled operand and
/// its VCC bit), `v_div_fmas_f32` (reading the lane's VCC bit) and `v_div_fixup_f32`. (The
/// native tier computes ordinary lanes in vectors and leaves the rest to this, through the
/// interpreter's step: `native::checked::division`.)
pub(crate) fn division_lane_f32(opcode: Opcode, x: f32, y: f32, z: f32, vcc: bool) -> (f32, bool) {
    match opcode {
        Opcode::VDivScaleF32 => div_scale32(x, y, z),
        Opcode::VDivFmasF32 => (div_fmas32(x, y, z, vcc), false),
        _ => (div_fixup(x as f64, y as f64, z as f64, FloatWidth::F32) as f32, false),
    }
}

/// A float format's exponent field: its biased value, and the bias plus the mantissa's bits,
/// below which a quotient's exponent difference means it underflows to zero.
#[derive(Clone, Copy)]
pub(super) enum FloatWidth {
    F16,
    F32,
    F64,
}

impl FloatWidth {
    /// The biased exponent field of `x`, a value of this width held as an f64 (0 for subnormals).
    fn exponent(self, x: f64) -> i32 {
        match self {
            FloatWidth::F16 => ((to_h64(x) >> 10) & 0x1F) as i32,
            FloatWidth::F32 => exponent32(x as f32),
            FloatWidth::F64 => exponent64(x),
        }
    }

    /// `exponent(n) − exponent(d)` below this and `n / d` is below half the smallest subnormal:
    /// −(bias + mantissa bits + 1), the RDNA3 ISA guide's 1075 for f64.
    fn underflow(self) -> i32 {
        match self {
            FloatWidth::F16 => -(15 + 10),
            FloatWidth::F32 => -(127 + 23),
            FloatWidth::F64 => -(1023 + 52),
        }
    }
}

/// `V_DIV_FIXUP`: the quotient `q` of `n / d` with IEEE's special cases put back (RDNA3 ISA
/// guide's pseudocode): NaNs, 0/0 and ∞/∞, division by zero or of infinity, and a quotient so
/// small that it underflows to a signed zero whatever `q` says (the scaled quotient of such a
/// pair can overflow in `V_DIV_SCALE`'s scaling).
pub(super) fn div_fixup(q: f64, d: f64, n: f64, width: FloatWidth) -> f64 {
    let negative = d.is_sign_negative() != n.is_sign_negative();
    let signed = |value: f64| if negative { -value.abs() } else { value.abs() };
    if n.is_nan() {
        return n;
    }
    if d.is_nan() {
        return d;
    }
    if (d == 0.0 && n == 0.0) || (d.is_infinite() && n.is_infinite()) {
        return f64::NAN;
    }
    if d == 0.0 || n.is_infinite() {
        return signed(f64::INFINITY);
    }
    if d.is_infinite() || n == 0.0 {
        return signed(0.0);
    }
    if width.exponent(n) - width.exponent(d) < width.underflow() {
        return signed(0.0);
    }
    // The guide's "exponent(S1) == 2047: the result overflowed" branch: S1's infinity is caught
    // above, so read as the quotient's exponent, all ones (an infinite or NaN quotient of finite
    // operands). It is what makes an overflowing division infinite (`division_sequences_are_ieee`).
    if q.is_nan() || q.is_infinite() {
        return signed(f64::INFINITY);
    }
    signed(q)
}

/// `V_DIV_FMAS_F32`: `x·y + z`, and where `V_DIV_SCALE` set VCC, scaled back by 2^±64: up when
/// the quotient estimate `z` was scaled down (its exponent is at least the bias, |z| ≥ 1), down
/// when it was scaled up (a quotient near zero). The scale is fused: one rounding. The RDNA3
/// guide's pseudocode writes a fixed 2^32 here; that leaves the quotient of a huge or tiny
/// division off by 2^32, which the compiler's division sequence (LLVM's `LowerFDIV32`) never gets
/// on hardware, so this follows the sequence's arithmetic: `division_sequences_are_ieee` checks it
/// against the host's division.
pub(super) fn div_fmas32(x: f32, y: f32, z: f32, vcc: bool) -> f32 {
    // In f64 the product is exact, so the sum is one rounding and its error is exact.
    let product = x as f64 * y as f64;
    let (sum, error) = two_sum(product, z as f64);
    let scale = match (vcc, exponent32(z) >= 127) {
        (false, _) => 0,
        (true, true) => 64,
        (true, false) => -64,
    };
    let value = ldexp64(sum, scale);
    let rounded = value as f32;
    if !rounded.is_finite() {
        return rounded;
    }
    // A tie at f32's precision that the f64 sum made: the exact value's side breaks it.
    let back = rounded as f64;
    let beside = if value > back { rounded.next_up() } else { rounded.next_down() };
    if error != 0.0 && value != back && (value - back) * 2.0 == beside as f64 - back {
        let away = (error > 0.0) == (value > back);
        return if away { beside } else { rounded };
    }
    rounded
}

/// `V_DIV_FMAS_F64`: as [`div_fmas32`], scaled by 2^±128, the scale `V_DIV_SCALE_F64` applies.
/// A result in the subnormal range is rounded once: a tie left by the unscaled FMA's rounding is
/// broken by the sign of its error.
pub(super) fn div_fmas64(x: f64, y: f64, z: f64, vcc: bool) -> f64 {
    let sum = x.mul_add(y, z);
    let scale = match (vcc, exponent64(z) >= 1023) {
        (false, _) => return sum,
        (true, true) => 128,
        (true, false) => -128,
    };
    let value = ldexp64(sum, scale);
    if scale > 0 || !sum.is_finite() || value.abs() >= f64::MIN_POSITIVE {
        return value; // the same precision at either scale: exact
    }
    // The subnormal grid at `sum`'s scale is 2^(-1074-scale); `sum` a midpoint of it is a tie.
    let back = ldexp64(value, -scale);
    let offset = sum - back;
    if offset == 0.0 || offset.abs() * 2.0 != ldexp64(f64::from_bits(1), -scale) {
        return value;
    }
    // The FMA's rounding error: x·y + z − sum, its sign from error-free transformations.
    let product = x * y;
    let product_error = x.mul_add(y, -product);
    let (total, total_error) = two_sum(product, z);
    let error = (total - sum) + total_error + product_error;
    if error == 0.0 {
        return value;
    }
    let away = (error > 0.0) == (offset > 0.0);
    if away { ldexp64(back + 2.0 * offset, scale) } else { value }
}

pub(super) fn exponent32(x: f32) -> i32 {
    ((x.to_bits() >> 23) & 0xFF) as i32
}

pub(super) fn exponent64(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7FF) as i32
}

/// `V_DIV_SCALE_F32` (RDNA3 ISA guide's pseudocode): scales the numerator or denominator `s0`
/// (one of `s1` denominator, `s2` numerator) so the reciprocal iteration cannot underflow or
/// overflow; the flag tells `V_DIV_FMAS` to scale the quotient back. One case differs from the
/// guide's text, which scales a huge denominator up (to infinity, past f32's range) where its
/// reciprocal and the quotient are both subnormal: here it scales the denominator down and flags
/// the quotient, scaled up, for `V_DIV_FMAS` to scale down, which is what makes the compiler's
/// division sequence IEEE-exact (`division_sequences_are_ieee`).
pub(super) fn div_scale32(s0: f32, s1: f32, s2: f32) -> (f32, bool) {
    if s2 == 0.0 || s1 == 0.0 {
        return (f32::NAN, false);
    }
    let scale = |x: f32, e: i32| ldexp32(x, e);
    let denormal = |x: f32| x != 0.0 && exponent32(x) == 0;
    if exponent32(s2) - exponent32(s1) >= 96 {
        return (if s0 == s1 { scale(s0, 64) } else { s0 }, true);
    }
    if denormal(s1) {
        return (scale(s0, 64), false);
    }
    let reciprocal = 1.0 / s1 as f64;
    let quotient = s2 as f64 / s1 as f64;
    let denormal64 = |x: f64| x != 0.0 && x.abs() < f32::MIN_POSITIVE as f64;
    if denormal64(reciprocal) && denormal64(quotient) {
        return (if s0 == s1 { scale(s0, -64) } else { s0 }, true);
    }
    if denormal64(reciprocal) {
        return (scale(s0, -64), false);
    }
    if denormal64(quotient) {
        return (if s0 == s2 { scale(s0, 64) } else { s0 }, true);
    }
    if exponent32(s2) <= 23 {
        return (scale(s0, 64), false);
    }
    (s0, false)
}

pub(super) fn div_scale64(s0: f64, s1: f64, s2: f64) -> (f64, bool) {
    if s2 == 0.0 || s1 == 0.0 {
        return (f64::NAN, false);
    }
    let denormal = |x: f64| x != 0.0 && exponent64(x) == 0;
    if exponent64(s2) - exponent64(s1) >= 768 {
        return (if s0 == s1 { ldexp64(s0, 128) } else { s0 }, true);
    }
    if denormal(s1) {
        return (ldexp64(s0, 128), false);
    }
    let (reciprocal, quotient) = (1.0 / s1, s2 / s1);
    if denormal(reciprocal) && denormal(quotient) {
        return (if s0 == s1 { ldexp64(s0, -128) } else { s0 }, true);
    }
    if denormal(reciprocal) {
        return (ldexp64(s0, -128), false);
    }
    if denormal(quotient) {
        return (if s0 == s2 { ldexp64(s0, 128) } else { s0 }, true);
    }
    if exponent64(s2) <= 53 {
        return (ldexp64(s0, 128), false);
    }
    (s0, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The division sequences LLVM emits for `n / d` (`SITargetLowering::LowerFDIV64` and
    /// `LowerFDIV32` with denormals kept): `v_div_scale` ×2, `v_rcp`, FMA refinement,
    /// `v_div_fmas`, `v_div_fixup`. On hardware they give IEEE's correctly rounded quotient, so
    /// the helpers' model must make them do so here: over every pair of edge values (zeros,
    /// subnormals, the smallest normal, the largest finite, quotients that overflow and underflow)
    /// and 200,000 random pairs of each width, bit for bit against the host's division. The
    /// reciprocal is the exact one (the hardware's is within 1 ulp; the FMAs absorb it).
    #[test]
    fn division_sequences_are_ieee() {
        fn divide64(n: f64, d: f64) -> f64 {
            let (scaled_d, _) = div_scale64(d, d, n);
            let (scaled_n, vcc) = div_scale64(n, d, n);
            let rcp = 1.0 / scaled_d;
            let e = (-scaled_d).mul_add(rcp, 1.0);
            let rcp = rcp.mul_add(e, rcp);
            let e = (-scaled_d).mul_add(rcp, 1.0);
            let rcp = rcp.mul_add(e, rcp);
            let quotient = scaled_n * rcp;
            let residual = (-scaled_d).mul_add(quotient, scaled_n);
            div_fixup(div_fmas64(residual, rcp, quotient, vcc), d, n, FloatWidth::F64)
        }
        fn divide32(n: f32, d: f32) -> f32 {
            let (scaled_d, _) = div_scale32(d, d, n);
            let (scaled_n, vcc) = div_scale32(n, d, n);
            let rcp = 1.0 / scaled_d;
            let e = (-scaled_d).mul_add(rcp, 1.0);
            let rcp = e.mul_add(rcp, rcp);
            let quotient = scaled_n * rcp;
            let residual = (-scaled_d).mul_add(quotient, scaled_n);
            let quotient = residual.mul_add(rcp, quotient);
            let residual = (-scaled_d).mul_add(quotient, scaled_n);
            div_fixup(div_fmas32(residual, rcp, quotient, vcc) as f64, d as f64, n as f64, FloatWidth::F32) as f32
        }
        let edges64 = [
            0.0,
            f64::from_bits(1),
            f64::from_bits(0x000F_FFFF_FFFF_FFFF),
            f64::MIN_POSITIVE,
            1e-300,
            0.1,
            1.0,
            3.0,
            1e300,
            f64::MAX,
            f64::INFINITY,
        ];
        let edges32 = [
            0.0,
            f32::from_bits(1),
            f32::from_bits(0x007F_FFFF),
            f32::MIN_POSITIVE,
            1e-30,
            0.1,
            1.0,
            3.0,
            1e30,
            f32::MAX,
            f32::INFINITY,
        ];
        let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        for &n in &edges64 {
            for &d in &edges64 {
                for (n, d) in [(n, d), (-n, d), (n, -d)] {
                    assert!(same(divide64(n, d), n / d), "{n:e} / {d:e}: {:e}, IEEE {:e}", divide64(n, d), n / d);
                }
            }
        }
        for &n in &edges32 {
            for &d in &edges32 {
                for (n, d) in [(n, d), (-n, d), (n, -d)] {
                    let (ours, ieee) = (divide32(n, d) as f64, (n / d) as f64);
                    assert!(same(ours, ieee), "{n:e} / {d:e}: {ours:e}, IEEE {ieee:e}");
                }
            }
        }
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..200_000 {
            let (n, d) = (f64::from_bits(next()), f64::from_bits(next()));
            assert!(same(divide64(n, d), n / d), "{n:e} / {d:e}: {:e}, IEEE {:e}", divide64(n, d), n / d);
            let (n, d) = (f32::from_bits(next() as u32), f32::from_bits((next() >> 32) as u32));
            let (ours, ieee) = (divide32(n, d) as f64, (n / d) as f64);
            assert!(same(ours, ieee), "{n:e} / {d:e}: {ours:e}, IEEE {ieee:e}");
        }
    }
}
