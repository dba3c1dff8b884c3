//! f16 values held as the low 16 bits of a lane: to f32 exactly ([`h`]), from f32 and f64 rounded
//! once to nearest even ([`to_h`], [`to_h64`]), and the two f16 computations several families
//! share (a fused multiply-add and the two-term dot product). A leaf: it imports no family.

use crate::interp::operands::Row;
use crate::interp::wave::LANES;

#[inline(always)]
pub(crate) fn h(bits: u32) -> f32 {
    // Every f16 is an f32: its exponent and mantissa bits, shifted into f32's places, are the
    // value times 2^-112 (denormals included, as f32 normals or denormals), so one exact multiply
    // rescales them; infinities and NaNs keep their payload. (half's `to_f32` checks the CPU's
    // features on every call.)
    let sign = (bits & 0x8000) << 16;
    let magnitude = bits & 0x7FFF;
    if magnitude >= 0x7C00 {
        return f32::from_bits(sign | 0x7F80_0000 | (magnitude & 0x3FF) << 13);
    }
    let scaled = f32::from_bits(magnitude << 13) * f32::from_bits((127 + 112) << 23);
    f32::from_bits(scaled.to_bits() | sign)
}
/// f32 to f16 bits, rounded once to nearest even (f32 to f64 is exact).
#[inline(always)]
pub(crate) fn to_h(value: f32) -> u32 {
    to_h64(value as f64)
}
/// f64 to f16 bits, rounded once to nearest even. (half's `from_f64` goes through f32 on CPUs
/// with F16C, rounding twice, and checks the CPU's features on every call.)
#[inline(always)]
pub(super) fn to_h64(value: f64) -> u32 {
    let sign = ((value.to_bits() >> 48) & 0x8000) as u32;
    let magnitude = value.abs();
    if magnitude.is_nan() {
        // Quiet, with the payload's top bits (min and max return an operand NaN as it was,
        // quieted: RDNA3 ISA guide, V_MAX_F16).
        return sign | 0x7E00 | ((value.to_bits() >> 42) & 0x3FF) as u32;
    }
    // Past the midpoint between the largest f16 (65504) and 2^16, nearest even is infinity.
    if magnitude >= 65520.0 {
        return sign | 0x7C00;
    }
    // Nearest even of a non-negative value below 2^52: (y + 2^52) − 2^52, exact otherwise.
    let nearest = |y: f64| (y + 4503599627370496.0) - 4503599627370496.0;
    if magnitude < f64::from_bits(0x3F10_0000_0000_0000) {
        // Below 2^-14: multiples of 2^-24 (1024 of them is the smallest normal, 0x0400).
        return sign | nearest(magnitude * 16777216.0) as u32;
    }
    let exponent = ((magnitude.to_bits() >> 52) & 0x7FF) as i32 - 1023;
    // The value in units of its f16 quantum, 2^(exponent − 10): 1024 to 2048 after rounding.
    let units = nearest(magnitude * f64::from_bits(((1023 + 10 - exponent) as u64) << 52)) as u32;
    let (exponent, units) = if units == 2048 { (exponent + 1, 1024) } else { (exponent, units) };
    sign | ((exponent + 15) as u32) << 10 | (units - 1024)
}
/// A fused multiply-add of f16 values: exact in f64, rounded once to f16.
#[inline(always)]
pub(super) fn hfma(a: u32, b: u32, c: u32) -> u32 {
    let value = (h(a) as f64).mul_add(h(b) as f64, h(c) as f64);
    to_h64(value)
}

/// `v_dot2_f32_f16` over a row. A loop of its own rather than a closure through `lanes`: the
/// optimizer left that closure out of line, one call per lane, which cost the f16 GEMM 60 %
/// more host instructions once the general path was its own function.
#[inline(always)]
pub(super) fn dot2_rows(x: Row, y: Row, z: Row) -> Row {
    let mut row = [0; LANES];
    for lane in 0..LANES {
        row[lane] = dot2_f16(x[lane], y[lane], f32::from_bits(z[lane])).to_bits();
    }
    row
}

#[inline(always)]
fn dot2_f16(x: u32, y: u32, accumulator: f32) -> f32 {
    let product = h(x & 0xFFFF) as f64 * h(y & 0xFFFF) as f64 + h(x >> 16) as f64 * h(y >> 16) as f64;
    (product + accumulator as f64) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every f16, its neighbours' midpoints and the values just beside them round as IEEE's
    /// nearest even says: exhaustively, over all 63,488 finite positive and negative patterns.
    #[test]
    fn f16_conversions_round_once_to_nearest_even() {
        for sign in [0u32, 0x8000] {
            for bits in 0..0x7C00u32 {
                let value = h(sign | bits) as f64;
                assert_eq!(value.abs(), half::f16::from_bits(bits as u16).to_f64(), "{bits:#x}");
                assert_eq!(to_h64(value), sign | bits, "{bits:#x} round-trips");
                let next = if bits + 1 == 0x7C00 { 65536.0 } else { h(bits + 1) as f64 };
                let middle = (value.abs() + next) / 2.0;
                let even = if bits & 1 == 0 { bits } else { bits + 1 };
                let signed = |magnitude: f64| if sign != 0 { -magnitude } else { magnitude };
                assert_eq!(to_h64(signed(middle)), sign | even.min(0x7C00), "{bits:#x} midpoint");
                assert_eq!(to_h64(signed(middle.next_down())), sign | bits, "{bits:#x} below the midpoint");
                assert_eq!(to_h64(signed(middle.next_up())), sign | (bits + 1), "{bits:#x} above the midpoint");
            }
        }
        assert_eq!(to_h64(f64::INFINITY), 0x7C00);
        assert!(h(to_h64(f64::NAN)).is_nan());
        assert_eq!(h(0xFC00), f32::NEG_INFINITY);
    }
}
