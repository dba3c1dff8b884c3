//! `v_trig_preop_f64`: a 53-bit segment of 2/π, scaled, for the range reduction of f64 sine and
//! cosine (ocml's `__ocml_sin_f64`/`cos_f64` take three segments for large arguments). RDNA3 ISA
//! guide, V_TRIG_PREOP_F64:
//!
//! ```text
//! shift = S1.u[4:0] * 53; if exponent(S0) > 1077 then shift += exponent(S0) - 1077
//! result = ((2/π)[1200:0] << shift)[1200:1148]     (a 53-bit integer)
//! scale = -53 - shift; if exponent(S0) >= 1968 then scale += 128
//! D = ldexp(result, scale), rounded toward zero
//! ```
//!
//! where exponent() is the biased exponent field and (2/π)[1200:0] its first 1,201 fraction bits,
//! `TWO_OVER_PI` (written by `isa/gen/two_over_pi.py`; its first 216 bits are fdlibm's `ipio2`).

#[rustfmt::skip]
const TWO_OVER_PI: [u64; 19] = [
    0xA2F9836E4E441529, 0xFC2757D1F534DDC0, 0xDB6295993C439041,
    0xFE5163ABDEBBC561, 0xB7246E3A424DD2E0, 0x06492EEA09D1921C,
    0xFE1DEB1CB129A73E, 0xE88235F52EBB4484, 0xE99C7026B45F7E41,
    0x3991D639835339F4, 0x9C845F8BBDF9283B, 0x1FF897FFDE05980F,
    0xEF2F118B5A0A6D1F, 0x6D367ECF27CB09B7, 0x4F463F669E5FEA2D,
    0x7527BAC7EBE5F17B, 0x3D0739F78A5292EA, 0x6BFB5FB11F8D5D08,
    0x56033046FC7B0000,
];

/// The 53 bits of 2/π from fraction bit `1200 - shift` down (bits past b_0 read 0).
fn window(shift: u32) -> u64 {
    let bit = |index: u32| -> u64 {
        // Fraction bit b_(1200 - index), counted from the table's most significant bit.
        TWO_OVER_PI.get(index as usize / 64).map_or(0, |word| (word >> (63 - index % 64)) & 1)
    };
    (0..53).fold(0, |value, offset| value << 1 | if shift + offset <= 1200 { bit(shift + offset) } else { 0 })
}

/// `v_trig_preop_f64(x, segment)`.
pub(crate) fn trig_preop(x: f64, segment: u32) -> f64 {
    let exponent = ((x.to_bits() >> 52) & 0x7FF) as i32;
    let shift = (segment & 31) * 53 + (exponent - 1077).max(0) as u32;
    let mut scale = -53 - shift as i32;
    if exponent >= 1968 {
        scale += 128;
    }
    scaled_toward_zero(window(shift), scale)
}

/// `value` × 2^`scale` as an f64, rounded toward zero (`value` < 2^53, so only a denormal
/// result rounds).
fn scaled_toward_zero(value: u64, scale: i32) -> f64 {
    if value == 0 {
        return 0.0;
    }
    let normalize = value.leading_zeros() as i32 - 11;
    let mantissa = value << normalize;
    let biased = scale - normalize + 52 + 1023;
    if biased >= 1 {
        return f64::from_bits((biased as u64) << 52 | (mantissa & ((1 << 52) - 1)));
    }
    let right = 1 - biased;
    f64::from_bits(if right >= 64 { 0 } else { mantissa >> right })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_segments_are_two_over_pi_truncated() {
        // 2/π = 0x0.A2F9836E4E441529FC2757D1F5...: its first 53 bits, truncated, are the double
        // 0x3FE45F306DC9C882 (round to nearest would give ...883).
        assert_eq!(trig_preop(1.0, 0).to_bits(), 0x3FE4_5F30_6DC9_C882);
        // Segments 0, 1 and 2 add up to 2/π within 2^-159.
        let (a, b, c) = (trig_preop(1.0, 0), trig_preop(1.0, 1), trig_preop(1.0, 2));
        assert!(b < a * 2f64.powi(-52) && c < b * 2f64.powi(-52));
        assert_eq!(a + b, core::f64::consts::FRAC_2_PI);
        // A large input shifts the window by its exponent past 1077.
        let big = f64::from_bits(1087u64 << 52);
        assert_eq!(trig_preop(big, 0), scaled_toward_zero(window(10), -63));
        // Past 1968 the result is scaled up by 2^128; far segments run out of bits.
        let huge = f64::from_bits(2000u64 << 52);
        assert_eq!(trig_preop(huge, 1), scaled_toward_zero(window(53 + 923), -53 - 976 + 128));
        assert_eq!(trig_preop(huge, 31), 0.0);
    }
}
