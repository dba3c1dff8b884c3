//! One lane's arithmetic that the operation families share: IEEE min/max with their NaN and
//! signed-zero rules, med3, fract, frexp and ldexp, sine and cosine in revolutions, the
//! `v_cmp_class` bits, byte permutes and SADs, 24-bit integers, clamping, and the exact sum
//! (TwoSum). A leaf: it imports no family, so any family may use it.

use super::f16_values::h;

/// Clamps to [0, 1]; NaN clamps to 0 (RDNA3 ISA guide, "Output modifiers").
pub(super) fn clamp01(value: f32) -> f32 {
    if value.is_nan() { 0.0 } else { value.clamp(0.0, 1.0) }
}

/// The sum of the absolute differences of `x`'s and `y`'s bytes; `masked` skips a byte where `y`'s
/// is 0 (V_SAD_U8, V_MSAD_U8).
pub(super) fn sad_u8(x: u32, y: u32, masked: bool) -> u32 {
    (0..4)
        .map(|i| {
            let (p, q) = ((x >> (8 * i)) as u8, (y >> (8 * i)) as u8);
            if masked && q == 0 { 0 } else { p.abs_diff(q) as u32 }
        })
        .sum()
}

pub(super) fn med3<T: PartialOrd + Copy>(a: T, b: T, c: T) -> T {
    let (low, high) = if a < b { (a, b) } else { (b, a) };
    if c < low {
        low
    } else if c > high {
        high
    } else {
        c
    }
}

/// `V_MIN_*`/`V_MAX_*` (RDNA3 ISA guide's pseudocode, every width): in IEEE mode a signaling NaN
/// operand is returned quieted (S0's first); otherwise a NaN yields the other operand; −0 is
/// below +0; a tie takes S0 for max and S1 for min.
macro_rules! min_max {
    ($select:ident, $min:ident, $max:ident, $float:ty, $bits:ty, $quiet:expr) => {
        /// Min (`max` false) or max of `a` and `b`, S0 and S1.
        #[inline(always)]
        fn $select(a: $float, b: $float, ieee: bool, max: bool) -> $float {
            let quiet: $bits = $quiet;
            let signaling = |x: $float| x.is_nan() && x.to_bits() & quiet == 0;
            if ieee && signaling(a) {
                return <$float>::from_bits(a.to_bits() | quiet);
            }
            if ieee && signaling(b) {
                return <$float>::from_bits(b.to_bits() | quiet);
            }
            if a.is_nan() {
                return b;
            }
            if b.is_nan() {
                return a;
            }
            if a == 0.0 && b == 0.0 {
                // −0 below +0: min takes the negative zero, max the positive one.
                return if a.is_sign_negative() != max { a } else { b };
            }
            if max {
                if a >= b { a } else { b }
            } else if a < b {
                a
            } else {
                b
            }
        }
        pub(super) fn $min(a: $float, b: $float, ieee: bool) -> $float {
            $select(a, b, ieee, false)
        }
        pub(super) fn $max(a: $float, b: $float, ieee: bool) -> $float {
            $select(a, b, ieee, true)
        }
    };
}

min_max!(min_max32, fmin, fmax, f32, u32, 0x0040_0000);
min_max!(min_max64, fmin64, fmax64, f64, u64, 0x0008_0000_0000_0000);

pub(super) fn fmed3(a: f32, b: f32, c: f32, ieee: bool) -> f32 {
    if a.is_nan() || b.is_nan() || c.is_nan() {
        return fmin(fmin(a, b, ieee), c, ieee);
    }
    fmax(fmin(a, b, ieee), fmin(fmax(a, b, ieee), c, ieee), ieee)
}

/// `V_FRACT`: x − floor(x), below 1.0; NaN stays NaN and infinity gives NaN (RDNA3 ISA guide;
/// LLVM's gfx6 `v_fract_f64` workaround returns the input for NaN to match later chips).
pub(super) fn fract32(x: f32) -> f32 {
    if x.is_nan() {
        x
    } else if x.is_infinite() {
        f32::NAN
    } else {
        (x - x.floor()).min(f32::from_bits(0x3F7F_FFFF))
    }
}
pub(super) fn fract64(x: f64) -> f64 {
    if x.is_nan() {
        x
    } else if x.is_infinite() {
        f64::NAN
    } else {
        (x - x.floor()).min(f64::from_bits(0x3FEF_FFFF_FFFF_FFFF))
    }
}
pub(super) fn fract16(x: f32) -> f32 {
    if x.is_nan() {
        x
    } else if x.is_infinite() {
        f32::NAN
    } else {
        (x - x.floor()).min(h(0x3BFF))
    }
}

/// `frexp`: the mantissa in [0.5, 1) and the exponent; NaN and infinity give themselves and 0.
pub(super) fn frexp(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7FF) as i32;
    if exponent == 0 {
        let (mantissa, e) = frexp(x * 2f64.powi(64));
        return (mantissa, e - 64);
    }
    (f64::from_bits((bits & !(0x7FF << 52)) | (1022 << 52)), exponent - 1022)
}

pub(super) fn ldexp32(x: f32, e: i32) -> f32 {
    ldexp64(x as f64, e) as f32
}
pub(super) fn ldexp64(x: f64, e: i32) -> f64 {
    // One multiplication by an exact power of two, so a result in the subnormal range is rounded
    // once (scaling in steps would round twice): x = m · 2^ex with m in [0.5, 1).
    let (mantissa, exponent) = frexp(x);
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    match exponent.saturating_add(e) {
        // m · 2^n ≥ 2^1024: past the largest finite.
        n if n > 1024 => f64::INFINITY.copysign(x),
        // Below half the smallest subnormal (m < 1): rounds to zero.
        n if n < -1074 => 0.0f64.copysign(x),
        // 2^1024 is past the range where m · 2^1024 (m < 1) is not: split it.
        1024 => mantissa * 2.0 * power_of_two(1023),
        n => mantissa * power_of_two(n),
    }
}

/// 2^n, exactly, for n in −1074..=1023 (built from its bits: `powi` divides by 2^−n, which
/// overflows to a zero quotient below −1023).
fn power_of_two(n: i32) -> f64 {
    debug_assert!((-1074..=1023).contains(&n));
    if n >= -1022 { f64::from_bits(((n + 1023) as u64) << 52) } else { f64::from_bits(1u64 << (n + 1074)) }
}

/// `V_SIN_F32`/`V_COS_F32` take their angle in revolutions (the input is multiplied by 2π by
/// the hardware; RDNA3 ISA guide).
pub(super) fn sin_revolutions(x: f32) -> f32 {
    let turns = (x as f64) - (x as f64).round();
    (turns * core::f64::consts::TAU).sin() as f32
}
pub(super) fn cos_revolutions(x: f32) -> f32 {
    let turns = (x as f64) - (x as f64).round();
    (turns * core::f64::consts::TAU).cos() as f32
}

/// The `v_cmp_class` mask bit of a value (RDNA3 ISA guide, `V_CMP_CLASS_F32`): 0 signaling
/// NaN, 1 quiet NaN, 2–5 negative infinity, normal, denormal and zero, 6–9 their positives.
pub(super) fn class_bits(x: f64, is_denormal: bool, is_signaling: bool) -> u32 {
    let negative = x.is_sign_negative();
    if x.is_nan() {
        return if is_signaling { 1 } else { 2 };
    }
    let bit = if x.is_infinite() {
        if negative { 2 } else { 9 }
    } else if x == 0.0 {
        if negative { 5 } else { 6 }
    } else if is_denormal {
        if negative { 4 } else { 7 }
    } else if negative {
        3
    } else {
        8
    };
    1 << bit
}

pub(super) fn i24(value: u32) -> i32 {
    ((value << 8) as i32) >> 8
}

/// `V_PERM_B32`: each result byte chosen by a selector byte of S2 from the eight bytes of
/// {S0, S1} (S1 the low four), or a constant (RDNA3 ISA guide).
pub(super) fn perm(x: u32, y: u32, selectors: u32) -> u32 {
    let bytes = ((x as u64) << 32 | y as u64).to_le_bytes();
    let mut out = 0u32;
    for index in 0..4 {
        let selector = (selectors >> (8 * index)) & 0xFF;
        let byte = match selector {
            0..=7 => bytes[selector as usize] as u32,
            8 => {
                if bytes[1] & 0x80 != 0 {
                    0xFF
                } else {
                    0
                }
            }
            9 => {
                if bytes[3] & 0x80 != 0 {
                    0xFF
                } else {
                    0
                }
            }
            10 => {
                if bytes[5] & 0x80 != 0 {
                    0xFF
                } else {
                    0
                }
            }
            11 => {
                if bytes[7] & 0x80 != 0 {
                    0xFF
                } else {
                    0
                }
            }
            12 => 0,
            _ => 0xFF,
        };
        out |= byte << (8 * index);
    }
    out
}

/// Knuth's TwoSum: the rounded sum and its exact error.
pub(super) fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let sum = a + b;
    let b_virtual = sum - a;
    let error = (a - (sum - b_virtual)) + (b - b_virtual);
    (sum, error)
}
