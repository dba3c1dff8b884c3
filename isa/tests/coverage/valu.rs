//! The vector ALU family: each lane-wise operation of both instruction sets (every encoding:
//! VOP1, VOP2, VOP3, gfx10.3's SDWA and DPP forms) run alone on 32 lanes of edge and random
//! operands against a reference written here from the RDNA3 ISA guide's pseudocode: integer
//! arithmetic and bit operations exactly, float arithmetic as IEEE 754 gives it (round to nearest
//! even, denormals kept: MODE as a kernel starts).
//!
//! Operands: src0 v0, src1 v2, src2 v4, result to v4 (64-bit: pairs from those registers). A
//! 16-bit result is written to the low half and the high half kept.

use aqueduct_isa::interp::Isa;
use aqueduct_isa::interp::coverage::{Operation, Registers};
use half::f16;

use super::{Rng, assert_registers};

/// How an operand or result is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum W {
    /// Not an operand.
    No,
    /// 16 bits: the low half of a VGPR.
    H,
    /// 32 bits.
    S,
    /// 64 bits: a VGPR pair.
    D,
}

/// The values an operand takes: integers, or floats of a width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Values {
    Int,
    F16,
    F32,
    F64,
}

struct Reference {
    sources: [W; 3],
    result: W,
    values: Values,
    f: fn(u64, u64, u64) -> u64,
}

// Float helpers on raw bits.
fn f32_of(bits: u64) -> f32 {
    f32::from_bits(bits as u32)
}
fn bits32(value: f32) -> u64 {
    value.to_bits() as u64
}
fn f64_of(bits: u64) -> f64 {
    f64::from_bits(bits)
}
fn f16_of(bits: u64) -> f64 {
    f16::from_bits(bits as u16).to_f64()
}
fn bits16(value: f64) -> u64 {
    f16::from_f64(value).to_bits() as u64
}

/// IEEE mode's quieting of a signaling NaN.
fn quiet16(bits: u64) -> u64 {
    bits | 0x200
}

/// V_MIN_*/V_MAX_* (RDNA3 ISA guide, IEEE mode): a signaling NaN is returned quieted; a quiet
/// NaN loses to a number; −0 is below +0.
macro_rules! reference_min_max {
    ($name:ident, $float:ty, $quiet:expr) => {
        fn $name(x: $float, y: $float, max: bool) -> $float {
            let signaling = |v: $float| v.is_nan() && v.to_bits() & $quiet == 0;
            if signaling(x) {
                return <$float>::from_bits(x.to_bits() | $quiet);
            }
            if signaling(y) {
                return <$float>::from_bits(y.to_bits() | $quiet);
            }
            if x.is_nan() {
                return y;
            }
            if y.is_nan() {
                return x;
            }
            if x == 0.0 && y == 0.0 {
                let negative = if max {
                    x.is_sign_negative() && y.is_sign_negative()
                } else {
                    x.is_sign_negative() || y.is_sign_negative()
                };
                return if negative { -0.0 } else { 0.0 };
            }
            if (x < y) != max { x } else { y }
        }
    };
}

reference_min_max!(min_max32, f32, 0x0040_0000u32);
reference_min_max!(min_max64, f64, 0x0008_0000_0000_0000u64);

fn min_max16(x: u64, y: u64, max: bool) -> u64 {
    let nan = |bits: u64| bits & 0x7C00 == 0x7C00 && bits & 0x3FF != 0;
    let signaling = |bits: u64| nan(bits) && bits & 0x200 == 0;
    if signaling(x) {
        return quiet16(x);
    }
    if signaling(y) {
        return quiet16(y);
    }
    if nan(x) {
        return y;
    }
    if nan(y) {
        return x;
    }
    let (a, b) = (f16_of(x), f16_of(y));
    if a == 0.0 && b == 0.0 {
        let (nx, ny) = (x & 0x8000 != 0, y & 0x8000 != 0);
        let negative = if max { nx && ny } else { nx || ny };
        return if negative { 0x8000 } else { 0 };
    }
    if (a < b) != max { x } else { y }
}

/// The median of three (V_MED3: NaN-free inputs here; the family's values keep them out).
fn med3_int(a: i64, b: i64, c: i64) -> i64 {
    a.max(b).min(a.min(b).max(c))
}

/// Rounds an f64 that holds an exact f32 or f16 operation's result, or a host f32 result.
fn round_f32(value: f64) -> u64 {
    bits32(value as f32)
}

/// Float to integer as V_CVT_I32_F32/U32 convert: toward zero, saturated, NaN to 0.
fn to_i32(value: f64) -> u64 {
    if value.is_nan() { 0 } else { value.trunc().clamp(i32::MIN as f64, i32::MAX as f64) as i32 as u32 as u64 }
}
fn to_u32(value: f64) -> u64 {
    if value.is_nan() { 0 } else { value.trunc().clamp(0.0, u32::MAX as f64) as u32 as u64 }
}
fn to_i16(value: f64) -> u64 {
    if value.is_nan() { 0 } else { value.trunc().clamp(i16::MIN as f64, i16::MAX as f64) as i16 as u16 as u64 }
}
fn to_u16(value: f64) -> u64 {
    if value.is_nan() { 0 } else { value.trunc().clamp(0.0, u16::MAX as f64) as u16 as u64 }
}

fn sext(bits: u64, width: u32) -> i64 {
    ((bits << (64 - width)) as i64) >> (64 - width)
}

/// `frexp`'s mantissa in [0.5, 1) and exponent; NaN and infinity give themselves (mantissa) and
/// 0 (exponent), as V_FREXP_* do.
fn frexp(x: f64) -> (f64, i64) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let mut exponent = 0;
    let mut m = x;
    while m.abs() >= 1.0 {
        m /= 2.0;
        exponent += 1;
    }
    while m.abs() < 0.5 {
        m *= 2.0;
        exponent -= 1;
    }
    (m, exponent)
}

/// `x − floor(x)`, below 1 (V_FRACT_*: the largest value below 1 where the subtraction rounds to
/// 1); NaN and infinity give NaN.
fn fract(x: f64, below_one: f64) -> f64 {
    if !x.is_finite() { f64::NAN } else { (x - x.floor()).min(below_one) }
}

/// The reference of operation `name` (gfx11's spelling, without its encoding suffix).
fn reference(name: &str) -> Option<Reference> {
    use Values::*;
    use W::*;
    let int = |sources: [W; 3], result: W, f: fn(u64, u64, u64) -> u64| Reference { sources, result, values: Int, f };
    let float = |values: Values, sources: [W; 3], result: W, f: fn(u64, u64, u64) -> u64| Reference {
        sources,
        result,
        values,
        f,
    };
    let u2 = |f| int([S, S, No], S, f);
    let u3 = |f| int([S, S, S], S, f);
    let u1 = |f| int([S, No, No], S, f);
    let h2 = |f| int([H, H, No], H, f);
    let h3 = |f| int([H, H, H], H, f);
    let s2 = |f| float(F32, [S, S, No], S, f);
    let s3 = |f| float(F32, [S, S, S], S, f);
    let s1 = |f| float(F32, [S, No, No], S, f);
    let d2 = |f| float(F64, [D, D, No], D, f);
    let d3 = |f| float(F64, [D, D, D], D, f);
    let d1 = |f| float(F64, [D, No, No], D, f);
    let f2 = |f| float(F16, [H, H, No], H, f);
    let f3 = |f| float(F16, [H, H, H], H, f);
    let f1 = |f| float(F16, [H, No, No], H, f);
    Some(match name {
        // 32-bit integer.
        "v_add_nc_u32" => u2(|a, b, _| (a as u32).wrapping_add(b as u32) as u64),
        "v_sub_nc_u32" => u2(|a, b, _| (a as u32).wrapping_sub(b as u32) as u64),
        "v_subrev_nc_u32" => u2(|a, b, _| (b as u32).wrapping_sub(a as u32) as u64),
        "v_add_nc_i32" => u2(|a, b, _| (a as u32).wrapping_add(b as u32) as u64),
        "v_sub_nc_i32" => u2(|a, b, _| (a as u32).wrapping_sub(b as u32) as u64),
        "v_mul_lo_u32" => u2(|a, b, _| (a as u32).wrapping_mul(b as u32) as u64),
        "v_mul_hi_u32" => u2(|a, b, _| (a as u32 as u64 * b as u32 as u64) >> 32),
        "v_mul_hi_i32" => u2(|a, b, _| ((sext(a, 32) * sext(b, 32)) >> 32) as u32 as u64),
        "v_mul_u32_u24" => u2(|a, b, _| ((a & 0xFF_FFFF) * (b & 0xFF_FFFF)) as u32 as u64),
        "v_mul_hi_u32_u24" => u2(|a, b, _| ((a & 0xFF_FFFF) * (b & 0xFF_FFFF)) >> 32),
        "v_mul_i32_i24" => u2(|a, b, _| (sext(a, 24) * sext(b, 24)) as u32 as u64),
        "v_mul_hi_i32_i24" => u2(|a, b, _| ((sext(a, 24) * sext(b, 24)) >> 32) as u32 as u64),
        "v_min_i32" => u2(|a, b, _| sext(a, 32).min(sext(b, 32)) as u32 as u64),
        "v_max_i32" => u2(|a, b, _| sext(a, 32).max(sext(b, 32)) as u32 as u64),
        "v_min_u32" => u2(|a, b, _| (a as u32).min(b as u32) as u64),
        "v_max_u32" => u2(|a, b, _| (a as u32).max(b as u32) as u64),
        "v_lshlrev_b32" => u2(|a, b, _| ((b as u32) << (a & 31)) as u64),
        "v_lshrrev_b32" => u2(|a, b, _| ((b as u32) >> (a & 31)) as u64),
        "v_ashrrev_i32" => u2(|a, b, _| ((b as u32 as i32) >> (a & 31)) as u32 as u64),
        "v_and_b32" => u2(|a, b, _| (a & b) & 0xFFFF_FFFF),
        "v_or_b32" => u2(|a, b, _| (a | b) & 0xFFFF_FFFF),
        "v_xor_b32" => u2(|a, b, _| (a ^ b) & 0xFFFF_FFFF),
        "v_xnor_b32" => u2(|a, b, _| !(a ^ b) & 0xFFFF_FFFF),
        "v_bfm_b32" => u2(|a, b, _| (((1u64 << (a & 31)) - 1) << (b & 31)) as u32 as u64),
        "v_bcnt_u32_b32" => u2(|a, b, _| ((a as u32).count_ones() as u64 + b) as u32 as u64),
        "v_bfe_u32" => u3(|a, b, c| {
            let (offset, size) = (b & 31, c & 31);
            if size == 0 { 0 } else { ((a as u32 >> offset) & ((1u64 << size) - 1) as u32) as u64 }
        }),
        "v_bfe_i32" => u3(|a, b, c| {
            let (offset, size) = (b & 31, c & 31);
            if size == 0 {
                0
            } else {
                sext((a as u32 >> offset) as u64 & ((1u64 << size) - 1), size as u32) as u32 as u64
            }
        }),
        "v_bfi_b32" => u3(|a, b, c| ((a & b) | (!a & c)) & 0xFFFF_FFFF),
        "v_alignbit_b32" => u3(|a, b, c| ((((a as u32 as u64) << 32) | b as u32 as u64) >> (c & 31)) as u32 as u64),
        "v_alignbyte_b32" => {
            u3(|a, b, c| ((((a as u32 as u64) << 32) | b as u32 as u64) >> (8 * (c & 3))) as u32 as u64)
        }
        "v_add3_u32" => u3(|a, b, c| (a as u32).wrapping_add(b as u32).wrapping_add(c as u32) as u64),
        "v_lshl_add_u32" => u3(|a, b, c| ((a as u32) << (b & 31)).wrapping_add(c as u32) as u64),
        "v_add_lshl_u32" => u3(|a, b, c| ((a as u32).wrapping_add(b as u32) << (c & 31)) as u64),
        "v_lshl_or_b32" => u3(|a, b, c| (((a as u32) << (b & 31)) | c as u32) as u64),
        "v_and_or_b32" => u3(|a, b, c| ((a & b) | c) & 0xFFFF_FFFF),
        "v_or3_b32" => u3(|a, b, c| (a | b | c) & 0xFFFF_FFFF),
        "v_xor3_b32" => u3(|a, b, c| (a ^ b ^ c) & 0xFFFF_FFFF),
        "v_xad_u32" => u3(|a, b, c| ((a as u32) ^ (b as u32)).wrapping_add(c as u32) as u64),
        "v_mad_u32_u24" => u3(|a, b, c| ((a & 0xFF_FFFF) * (b & 0xFF_FFFF)).wrapping_add(c) as u32 as u64),
        "v_mad_i32_i24" => u3(|a, b, c| (sext(a, 24) * sext(b, 24)).wrapping_add(sext(c, 32)) as u32 as u64),
        "v_mad_u32_u16" => u3(|a, b, c| ((a & 0xFFFF) * (b & 0xFFFF)).wrapping_add(c) as u32 as u64),
        "v_mad_i32_i16" => u3(|a, b, c| (sext(a, 16) * sext(b, 16)).wrapping_add(sext(c, 32)) as u32 as u64),
        "v_min3_i32" => u3(|a, b, c| sext(a, 32).min(sext(b, 32)).min(sext(c, 32)) as u32 as u64),
        "v_max3_i32" => u3(|a, b, c| sext(a, 32).max(sext(b, 32)).max(sext(c, 32)) as u32 as u64),
        "v_min3_u32" => u3(|a, b, c| (a as u32).min(b as u32).min(c as u32) as u64),
        "v_max3_u32" => u3(|a, b, c| (a as u32).max(b as u32).max(c as u32) as u64),
        "v_med3_i32" => u3(|a, b, c| med3_int(sext(a, 32), sext(b, 32), sext(c, 32)) as u32 as u64),
        "v_med3_u32" => u3(|a, b, c| med3_int(a as u32 as i64, b as u32 as i64, c as u32 as i64) as u64),
        "v_maxmin_i32" => u3(|a, b, c| sext(a, 32).max(sext(b, 32)).min(sext(c, 32)) as u32 as u64),
        "v_minmax_i32" => u3(|a, b, c| sext(a, 32).min(sext(b, 32)).max(sext(c, 32)) as u32 as u64),
        "v_maxmin_u32" => u3(|a, b, c| (a as u32).max(b as u32).min(c as u32) as u64),
        "v_minmax_u32" => u3(|a, b, c| (a as u32).min(b as u32).max(c as u32) as u64),
        "v_sad_u8" => u3(|a, b, c| {
            let sum: u64 = (0..4).map(|i| ((a >> (8 * i)) & 0xFF).abs_diff((b >> (8 * i)) & 0xFF)).sum();
            (sum + c) as u32 as u64
        }),
        "v_sad_hi_u8" => u3(|a, b, c| {
            let sum: u64 = (0..4).map(|i| ((a >> (8 * i)) & 0xFF).abs_diff((b >> (8 * i)) & 0xFF)).sum();
            ((sum << 16) + c) as u32 as u64
        }),
        "v_sad_u16" => u3(|a, b, c| {
            let sum: u64 = (0..2).map(|i| ((a >> (16 * i)) & 0xFFFF).abs_diff((b >> (16 * i)) & 0xFFFF)).sum();
            (sum + c) as u32 as u64
        }),
        "v_sad_u32" => u3(|a, b, c| ((a as u32).abs_diff(b as u32) as u64 + c) as u32 as u64),
        "v_not_b32" => u1(|a, _, _| !a & 0xFFFF_FFFF),
        "v_bfrev_b32" => u1(|a, _, _| (a as u32).reverse_bits() as u64),
        "v_clz_i32_u32" => {
            u1(|a, _, _| if a as u32 == 0 { u32::MAX as u64 } else { (a as u32).leading_zeros() as u64 })
        }
        "v_ctz_i32_b32" => {
            u1(|a, _, _| if a as u32 == 0 { u32::MAX as u64 } else { (a as u32).trailing_zeros() as u64 })
        }
        "v_cls_i32" => u1(|a, _, _| {
            let value = a as u32;
            if value == 0 || value == u32::MAX {
                u32::MAX as u64
            } else {
                (if (value as i32) < 0 { !value } else { value }).leading_zeros() as u64
            }
        }),
        "v_mov_b32" => u1(|a, _, _| a & 0xFFFF_FFFF),
        "v_cvt_f32_ubyte0" => u1(|a, _, _| bits32((a & 0xFF) as f32)),
        "v_cvt_f32_ubyte1" => u1(|a, _, _| bits32(((a >> 8) & 0xFF) as f32)),
        "v_cvt_f32_ubyte2" => u1(|a, _, _| bits32(((a >> 16) & 0xFF) as f32)),
        "v_cvt_f32_ubyte3" => u1(|a, _, _| bits32(((a >> 24) & 0xFF) as f32)),
        "v_cvt_f32_u32" => u1(|a, _, _| bits32(a as u32 as f32)),
        "v_cvt_f32_i32" => u1(|a, _, _| bits32(a as u32 as i32 as f32)),
        "v_cvt_f64_u32" => int([S, No, No], D, |a, _, _| (a as u32 as f64).to_bits()),
        "v_cvt_f64_i32" => int([S, No, No], D, |a, _, _| (a as u32 as i32 as f64).to_bits()),
        "v_cvt_off_f32_i4" => u1(|a, _, _| bits32(sext(a & 0xF, 4) as f32 / 16.0)),
        "v_cvt_pk_u16_u32" => u2(|a, b, _| (a & 0xFFFF) | (b & 0xFFFF) << 16),
        "v_cvt_pk_i16_i32" => u2(|a, b, _| {
            let clamp = |x: u64| sext(x, 32).clamp(i16::MIN as i64, i16::MAX as i64) as u16 as u64;
            clamp(a) | clamp(b) << 16
        }),
        // 16-bit integer (the low halves).
        "v_add_nc_u16" => h2(|a, b, _| (a as u16).wrapping_add(b as u16) as u64),
        "v_sub_nc_u16" => h2(|a, b, _| (a as u16).wrapping_sub(b as u16) as u64),
        "v_add_nc_i16" => h2(|a, b, _| (a as u16).wrapping_add(b as u16) as u64),
        "v_sub_nc_i16" => h2(|a, b, _| (a as u16).wrapping_sub(b as u16) as u64),
        "v_mul_lo_u16" => h2(|a, b, _| (a as u16).wrapping_mul(b as u16) as u64),
        "v_min_u16" => h2(|a, b, _| (a as u16).min(b as u16) as u64),
        "v_max_u16" => h2(|a, b, _| (a as u16).max(b as u16) as u64),
        "v_min_i16" => h2(|a, b, _| (a as u16 as i16).min(b as u16 as i16) as u16 as u64),
        "v_max_i16" => h2(|a, b, _| (a as u16 as i16).max(b as u16 as i16) as u16 as u64),
        "v_lshlrev_b16" => h2(|a, b, _| ((b as u16) << (a & 15)) as u64),
        "v_lshrrev_b16" => h2(|a, b, _| ((b as u16) >> (a & 15)) as u64),
        "v_ashrrev_i16" => h2(|a, b, _| ((b as u16 as i16) >> (a & 15)) as u16 as u64),
        "v_and_b16" => h2(|a, b, _| a & b & 0xFFFF),
        "v_or_b16" => h2(|a, b, _| (a | b) & 0xFFFF),
        "v_xor_b16" => h2(|a, b, _| (a ^ b) & 0xFFFF),
        "v_not_b16" => int([H, No, No], H, |a, _, _| !a & 0xFFFF),
        "v_mad_u16" => h3(|a, b, c| (a as u16).wrapping_mul(b as u16).wrapping_add(c as u16) as u64),
        "v_mad_i16" => h3(|a, b, c| (a as u16).wrapping_mul(b as u16).wrapping_add(c as u16) as u64),
        "v_min3_i16" => h3(|a, b, c| (a as u16 as i16).min(b as u16 as i16).min(c as u16 as i16) as u16 as u64),
        "v_max3_i16" => h3(|a, b, c| (a as u16 as i16).max(b as u16 as i16).max(c as u16 as i16) as u16 as u64),
        "v_min3_u16" => h3(|a, b, c| (a as u16).min(b as u16).min(c as u16) as u64),
        "v_max3_u16" => h3(|a, b, c| (a as u16).max(b as u16).max(c as u16) as u64),
        "v_med3_i16" => h3(|a, b, c| med3_int(sext(a, 16), sext(b, 16), sext(c, 16)) as u16 as u64),
        "v_med3_u16" => h3(|a, b, c| med3_int(a as u16 as i64, b as u16 as i64, c as u16 as i64) as u64),
        "v_cvt_i32_i16" => int([H, No, No], S, |a, _, _| sext(a, 16) as u32 as u64),
        "v_cvt_u32_u16" => int([H, No, No], S, |a, _, _| a & 0xFFFF),
        "v_cvt_f16_u16" => int([H, No, No], H, |a, _, _| bits16((a & 0xFFFF) as f64)),
        "v_cvt_f16_i16" => int([H, No, No], H, |a, _, _| bits16(sext(a, 16) as f64)),
        // f32.
        "v_add_f32" => s2(|a, b, _| bits32(f32_of(a) + f32_of(b))),
        "v_sub_f32" => s2(|a, b, _| bits32(f32_of(a) - f32_of(b))),
        "v_subrev_f32" => s2(|a, b, _| bits32(f32_of(b) - f32_of(a))),
        "v_mul_f32" => s2(|a, b, _| bits32(f32_of(a) * f32_of(b))),
        "v_min_f32" => s2(|a, b, _| bits32(min_max32(f32_of(a), f32_of(b), false))),
        "v_max_f32" => s2(|a, b, _| bits32(min_max32(f32_of(a), f32_of(b), true))),
        "v_ldexp_f32" => float(F32, [S, S, No], S, |a, b, _| {
            round_f32(f32_of(a) as f64 * 2f64.powi(sext(b, 32).clamp(-400, 400) as i32))
        }),
        "v_fma_f32" => s3(|a, b, c| bits32(f32_of(a).mul_add(f32_of(b), f32_of(c)))),
        "v_fmac_f32" => s3(|a, b, c| bits32(f32_of(a).mul_add(f32_of(b), f32_of(c)))),
        "v_min3_f32" => s3(|a, b, c| bits32(min_max32(min_max32(f32_of(a), f32_of(b), false), f32_of(c), false))),
        "v_max3_f32" => s3(|a, b, c| bits32(min_max32(min_max32(f32_of(a), f32_of(b), true), f32_of(c), true))),
        "v_minmax_f32" => s3(|a, b, c| bits32(min_max32(min_max32(f32_of(a), f32_of(b), false), f32_of(c), true))),
        "v_maxmin_f32" => s3(|a, b, c| bits32(min_max32(min_max32(f32_of(a), f32_of(b), true), f32_of(c), false))),
        "v_floor_f32" => s1(|a, _, _| bits32(f32_of(a).floor())),
        "v_ceil_f32" => s1(|a, _, _| bits32(f32_of(a).ceil())),
        "v_trunc_f32" => s1(|a, _, _| bits32(f32_of(a).trunc())),
        "v_rndne_f32" => s1(|a, _, _| bits32(f32_of(a).round_ties_even())),
        "v_fract_f32" => s1(|a, _, _| bits32(fract(f32_of(a) as f64, f32::from_bits(0x3F7F_FFFF) as f64) as f32)),
        "v_frexp_mant_f32" => s1(|a, _, _| bits32(frexp(f32_of(a) as f64).0 as f32)),
        "v_frexp_exp_i32_f32" => s1(|a, _, _| frexp(f32_of(a) as f64).1 as i32 as u32 as u64),
        "v_cvt_i32_f32" => s1(|a, _, _| to_i32(f32_of(a) as f64)),
        "v_cvt_u32_f32" => s1(|a, _, _| to_u32(f32_of(a) as f64)),
        "v_cvt_floor_i32_f32" => s1(|a, _, _| to_i32((f32_of(a) as f64).floor())),
        // floor(S0 + 0.5) with the sum in f32, as the guide writes it (8388609 + 0.5 rounds to
        // 8388610 there).
        "v_cvt_nearest_i32_f32" => s1(|a, _, _| to_i32((f32_of(a) + 0.5).floor() as f64)),
        "v_cvt_f64_f32" => float(F32, [S, No, No], D, |a, _, _| (f32_of(a) as f64).to_bits()),
        "v_cvt_f16_f32" => float(F32, [S, No, No], H, |a, _, _| f16::from_f32(f32_of(a)).to_bits() as u64),
        // f64.
        "v_add_f64" => d2(|a, b, _| (f64_of(a) + f64_of(b)).to_bits()),
        "v_mul_f64" => d2(|a, b, _| (f64_of(a) * f64_of(b)).to_bits()),
        "v_min_f64" => d2(|a, b, _| min_max64(f64_of(a), f64_of(b), false).to_bits()),
        "v_max_f64" => d2(|a, b, _| min_max64(f64_of(a), f64_of(b), true).to_bits()),
        "v_fma_f64" => d3(|a, b, c| f64_of(a).mul_add(f64_of(b), f64_of(c)).to_bits()),
        "v_floor_f64" => d1(|a, _, _| f64_of(a).floor().to_bits()),
        "v_ceil_f64" => d1(|a, _, _| f64_of(a).ceil().to_bits()),
        "v_trunc_f64" => d1(|a, _, _| f64_of(a).trunc().to_bits()),
        "v_rndne_f64" => d1(|a, _, _| f64_of(a).round_ties_even().to_bits()),
        "v_fract_f64" => d1(|a, _, _| fract(f64_of(a), f64::from_bits(0x3FEF_FFFF_FFFF_FFFF)).to_bits()),
        "v_frexp_mant_f64" => d1(|a, _, _| frexp(f64_of(a)).0.to_bits()),
        "v_frexp_exp_i32_f64" => float(F64, [D, No, No], S, |a, _, _| frexp(f64_of(a)).1 as i32 as u32 as u64),
        "v_cvt_i32_f64" => float(F64, [D, No, No], S, |a, _, _| to_i32(f64_of(a))),
        "v_cvt_u32_f64" => float(F64, [D, No, No], S, |a, _, _| to_u32(f64_of(a))),
        "v_cvt_f32_f64" => float(F64, [D, No, No], S, |a, _, _| bits32(f64_of(a) as f32)),
        // f16 (exact in f64, rounded once).
        "v_add_f16" => f2(|a, b, _| bits16(f16_of(a) + f16_of(b))),
        "v_sub_f16" => f2(|a, b, _| bits16(f16_of(a) - f16_of(b))),
        "v_subrev_f16" => f2(|a, b, _| bits16(f16_of(b) - f16_of(a))),
        "v_mul_f16" => f2(|a, b, _| bits16(f16_of(a) * f16_of(b))),
        "v_min_f16" => f2(|a, b, _| min_max16(a & 0xFFFF, b & 0xFFFF, false)),
        "v_max_f16" => f2(|a, b, _| min_max16(a & 0xFFFF, b & 0xFFFF, true)),
        "v_fma_f16" => f3(|a, b, c| bits16(f16_of(a).mul_add(f16_of(b), f16_of(c)))),
        "v_fmac_f16" => f3(|a, b, c| bits16(f16_of(a).mul_add(f16_of(b), f16_of(c)))),
        "v_min3_f16" => f3(|a, b, c| min_max16(min_max16(a & 0xFFFF, b & 0xFFFF, false), c & 0xFFFF, false)),
        "v_max3_f16" => f3(|a, b, c| min_max16(min_max16(a & 0xFFFF, b & 0xFFFF, true), c & 0xFFFF, true)),
        "v_minmax_f16" => f3(|a, b, c| min_max16(min_max16(a & 0xFFFF, b & 0xFFFF, false), c & 0xFFFF, true)),
        "v_maxmin_f16" => f3(|a, b, c| min_max16(min_max16(a & 0xFFFF, b & 0xFFFF, true), c & 0xFFFF, false)),
        "v_floor_f16" => f1(|a, _, _| bits16(f16_of(a).floor())),
        "v_ceil_f16" => f1(|a, _, _| bits16(f16_of(a).ceil())),
        "v_trunc_f16" => f1(|a, _, _| bits16(f16_of(a).trunc())),
        "v_rndne_f16" => f1(|a, _, _| bits16(f16_of(a).round_ties_even())),
        "v_fract_f16" => f1(|a, _, _| bits16(fract(f16_of(a), f16::from_bits(0x3BFF).to_f64()))),
        "v_frexp_mant_f16" => f1(|a, _, _| bits16(frexp(f16_of(a)).0)),
        "v_frexp_exp_i16_f16" => f1(|a, _, _| frexp(f16_of(a)).1 as i16 as u16 as u64),
        "v_cvt_f32_f16" => float(F16, [H, No, No], S, |a, _, _| bits32(f16_of(a) as f32)),
        "v_cvt_i16_f16" => f1(|a, _, _| to_i16(f16_of(a))),
        "v_cvt_u16_f16" => f1(|a, _, _| to_u16(f16_of(a))),
        "v_ldexp_f16" => {
            float(F16, [H, S, No], H, |a, b, _| bits16(f16_of(a) * 2f64.powi(sext(b, 16).clamp(-100, 100) as i32)))
        }
        "v_ashrrev_i64" => int([S, D, No], D, |a, b, _| ((b as i64) >> (a & 63)) as u64),
        "v_lerp_u8" => u3(|a, b, c| {
            (0..4).fold(0, |out, i| {
                out | ((((a >> (8 * i)) & 0xFF) + ((b >> (8 * i)) & 0xFF) + ((c >> (8 * i)) & 1)) >> 1) << (8 * i)
            })
        }),
        "v_msad_u8" => u3(|a, b, c| {
            let sum: u64 = (0..4)
                .map(|i| {
                    let (p, q) = ((a >> (8 * i)) & 0xFF, (b >> (8 * i)) & 0xFF);
                    if q == 0 { 0 } else { p.abs_diff(q) }
                })
                .sum();
            (sum + c) as u32 as u64
        }),
        "v_qsad_pk_u16_u8" | "v_mqsad_pk_u16_u8" => int(
            [D, S, D],
            D,
            if name == "v_qsad_pk_u16_u8" { |a, b, c| qsad(a, b, c, false) } else { |a, b, c| qsad(a, b, c, true) },
        ),
        "v_cvt_pk_i16_f32" => s2(|a, b, _| {
            let convert = |x: u64| to_i16(f32_of(x) as f64);
            convert(a) | convert(b) << 16
        }),
        "v_cvt_pk_u16_f32" => s2(|a, b, _| {
            let convert = |x: u64| to_u16(f32_of(x) as f64);
            convert(a) | convert(b) << 16
        }),
        "v_cubeid_f32" | "v_cubesc_f32" | "v_cubetc_f32" | "v_cubema_f32" => s3(match name {
            "v_cubeid_f32" => |a, b, c| cube(a, b, c, 0),
            "v_cubesc_f32" => |a, b, c| cube(a, b, c, 1),
            "v_cubetc_f32" => |a, b, c| cube(a, b, c, 2),
            _ => |a, b, c| cube(a, b, c, 3),
        }),
        "v_mullit_f32" => s3(|a, b, c| {
            let (x, y, z) = (f32_of(a), f32_of(b), f32_of(c));
            bits32(if y == -f32::MAX || y == f32::NEG_INFINITY || y.is_nan() || z <= 0.0 || z.is_nan() {
                -f32::MAX
            } else {
                x * y
            })
        }),
        "v_mad_i64_i32" => int([S, S, D], D, |a, b, c| (sext(a, 32) * sext(b, 32)).wrapping_add(c as i64) as u64),
        "v_mad_u64_u32" => int([S, S, D], D, |a, b, c| ((a as u32 as u64) * (b as u32 as u64)).wrapping_add(c)),
        "v_mul_dx9_zero_f32" | "v_mul_legacy_f32" => s2(|a, b, _| {
            let (x, y) = (f32_of(a), f32_of(b));
            // 0 × anything (infinity and NaN included) is 0 (RDNA3 ISA guide, V_MUL_DX9_ZERO_F32).
            if x == 0.0 || y == 0.0 { 0 } else { bits32(x * y) }
        }),
        "v_fma_dx9_zero_f32" | "v_fma_legacy_f32" | "v_fmac_dx9_zero_f32" | "v_fmac_legacy_f32" => s3(|a, b, c| {
            let (x, y, z) = (f32_of(a), f32_of(b), f32_of(c));
            if x == 0.0 || y == 0.0 { bits32(0.0 + z) } else { bits32(x.mul_add(y, z)) }
        }),
        "v_med3_f16" => f3(|a, b, c| {
            let (a, b, c) = (a & 0xFFFF, b & 0xFFFF, c & 0xFFFF);
            let nan = |bits: u64| bits & 0x7C00 == 0x7C00 && bits & 0x3FF != 0;
            if nan(a) || nan(b) || nan(c) {
                return min_max16(min_max16(a, b, false), c, false);
            }
            let max = min_max16(min_max16(a, b, true), c, true);
            if max == a {
                min_max16(b, c, true)
            } else if max == b {
                min_max16(a, c, true)
            } else {
                min_max16(a, b, true)
            }
        }),
        "v_cvt_pk_rtz_f16_f32" | "v_cvt_pkrtz_f16_f32" => {
            s2(|a, b, _| f16_toward_zero(f32_of(a)) | f16_toward_zero(f32_of(b)) << 16)
        }
        "v_cvt_pk_u8_f32" => s3(|a, b, c| {
            let value =
                if f32_of(a).is_nan() { 0 } else { (f32_of(a) as f64).round_ties_even().clamp(0.0, 255.0) as u64 };
            let shift = 8 * (b & 3);
            (c & !(0xFF << shift) | value << shift) & 0xFFFF_FFFF
        }),
        // Integer dot products (no clamp): the fields' products and the accumulator, wrapping.
        "v_dot2_i32_i16" => u3(|a, b, c| dot(a, b, c, 16, true)),
        "v_dot2_u32_u16" => u3(|a, b, c| dot(a, b, c, 16, false)),
        "v_dot4_i32_i8" | "v_dot4c_i32_i8" => u3(|a, b, c| dot(a, b, c, 8, true)),
        "v_dot4_u32_u8" => u3(|a, b, c| dot(a, b, c, 8, false)),
        "v_dot8_i32_i4" => u3(|a, b, c| dot(a, b, c, 4, true)),
        "v_dot8_u32_u4" => u3(|a, b, c| dot(a, b, c, 4, false)),
        // Packed 16-bit integer halves (VOP3P with op_sel_hi set: each half from its own).
        "v_pk_add_i16" | "v_pk_add_u16" => u2(|a, b, _| packed(a, b, 0, |x, y, _| x.wrapping_add(y))),
        "v_pk_sub_i16" | "v_pk_sub_u16" => u2(|a, b, _| packed(a, b, 0, |x, y, _| x.wrapping_sub(y))),
        "v_pk_mad_i16" | "v_pk_mad_u16" => u3(|a, b, c| packed(a, b, c, |x, y, z| x.wrapping_mul(y).wrapping_add(z))),
        "v_pk_mul_lo_u16" => u2(|a, b, _| packed(a, b, 0, |x, y, _| x.wrapping_mul(y))),
        // Each i16 half saturated to a byte (RDNA3 ISA guide, V_SAT_PK_U8_I16).
        "v_sat_pk_u8_i16" => int([S, No, No], H, |a, _, _| {
            let byte = |half: u64| (half as u16 as i16).clamp(0, 255) as u64;
            byte(a & 0xFFFF) | byte(a >> 16 & 0xFFFF) << 8
        }),
        // Normalized conversions: ×32767 (or ×65535), rounded once to nearest even, saturated to
        // [−32767, 32767] (or [0, 65535]), NaN to 0 (measured on RDNA4 hardware by AMD's emulator
        // tests, `rdna4_normalized_reference`; the guides write f16_to_snorm without a rule).
        "v_cvt_norm_i16_f16" => f1(|a, _, _| snorm(f16_of(a))),
        "v_cvt_norm_u16_f16" => f1(|a, _, _| unorm(f16_of(a))),
        "v_cvt_pk_norm_i16_f32" | "v_cvt_pknorm_i16_f32" => {
            s2(|a, b, _| snorm(f32_of(a) as f64) | snorm(f32_of(b) as f64) << 16)
        }
        "v_cvt_pk_norm_u16_f32" | "v_cvt_pknorm_u16_f32" => {
            s2(|a, b, _| unorm(f32_of(a) as f64) | unorm(f32_of(b) as f64) << 16)
        }
        "v_cvt_pk_norm_i16_f16" | "v_cvt_pknorm_i16_f16" => {
            float(F16, [H, H, No], S, |a, b, _| snorm(f16_of(a)) | snorm(f16_of(b)) << 16)
        }
        "v_cvt_pk_norm_u16_f16" | "v_cvt_pknorm_u16_f16" => {
            float(F16, [H, H, No], S, |a, b, _| unorm(f16_of(a)) | unorm(f16_of(b)) << 16)
        }
        // Mixed precision (VOP3P, op_sel_hi set: every source an f16 low half): the FMA in f32;
        // the f16 forms then round it to f16 into the low (mixlo) or high (mixhi) half.
        "v_fma_mix_f32" => float(F16, [S, S, S], S, |a, b, c| bits32(mix(a, b, c))),
        "v_fma_mixlo_f16" => {
            float(F16, [S, S, S], S, |a, b, c| (c & 0xFFFF_0000) | f16::from_f32(mix(a, b, c)).to_bits() as u64)
        }
        "v_fma_mixhi_f16" => {
            float(F16, [S, S, S], S, |a, b, c| (c & 0xFFFF) | (f16::from_f32(mix(a, b, c)).to_bits() as u64) << 16)
        }
        // V_DIV_FIXUP_F16 (the guide's pseudocode, f16's underflow threshold).
        "v_div_fixup_f16" => f3(|a, b, c| {
            let (q, d, n) = (f16_of(a), f16_of(b), f16_of(c));
            let negative = ((b ^ c) >> 15) & 1 == 1;
            let signed = |bits: u64| if negative { bits | 0x8000 } else { bits & 0x7FFF };
            let exponent = |bits: u64| ((bits >> 10) & 0x1F) as i32;
            if n.is_nan() {
                quiet16(c & 0xFFFF)
            } else if d.is_nan() {
                quiet16(b & 0xFFFF)
            } else if (d == 0.0 && n == 0.0) || (d.is_infinite() && n.is_infinite()) {
                0xFE00
            } else if d == 0.0 || n.is_infinite() {
                signed(0x7C00)
            } else if d.is_infinite() || n == 0.0 || exponent(c) - exponent(b) < -25 {
                signed(0)
            } else if q.is_nan() || q.is_infinite() {
                // The "result overflowed" branch (the quotient's exponent all ones).
                signed(0x7C00)
            } else {
                signed(a & 0x7FFF)
            }
        }),
        _ => return None,
    })
}

/// Two 16-bit halves, each `f` of the sources' same half.
fn packed(a: u64, b: u64, c: u64, f: fn(u16, u16, u16) -> u16) -> u64 {
    let half = |value: u64, index: u32| (value >> (16 * index)) as u16;
    (f(half(a, 0), half(b, 0), half(c, 0)) as u64) | (f(half(a, 1), half(b, 1), half(c, 1)) as u64) << 16
}

/// The dot product of `a`'s and `b`'s `bits`-wide fields (signed or not) plus `c`, in 32 bits.
fn dot(a: u64, b: u64, c: u64, bits: u32, signed: bool) -> u64 {
    let field = |value: u64, index: u32| {
        let raw = (value >> (bits * index)) & ((1 << bits) - 1);
        if signed { sext(raw, bits) } else { raw as i64 }
    };
    let sum: i64 = (0..32 / bits).map(|index| field(a, index) * field(b, index)).sum();
    (sum.wrapping_add(c as u32 as i64)) as u32 as u64
}

/// V_FMA_MIX's FMA of three f16 low halves, in f32.
fn mix(a: u64, b: u64, c: u64) -> f32 {
    let value = |bits: u64| f16::from_bits(bits as u16).to_f32();
    value(a).mul_add(value(b), value(c))
}

fn snorm(x: f64) -> u64 {
    if x.is_nan() { 0 } else { (x * 32767.0).round_ties_even().clamp(-32767.0, 32767.0) as i16 as u16 as u64 }
}
fn unorm(x: f64) -> u64 {
    if x.is_nan() { 0 } else { (x * 65535.0).round_ties_even().clamp(0.0, 65535.0) as u16 as u64 }
}

/// V_QSAD_PK_U16_U8 (masked: V_MQSAD_PK_U16_U8): four sums of S1's bytes' absolute differences
/// from S0's bytes at offsets 0 to 3, each plus S2's 16-bit field, kept to 16 bits.
fn qsad(a: u64, b: u64, c: u64, masked: bool) -> u64 {
    (0..4).fold(0, |out, k| {
        let window = a >> (8 * k);
        let sum: u64 = (0..4)
            .map(|i| {
                let (p, q) = ((window >> (8 * i)) & 0xFF, (b >> (8 * i)) & 0xFF);
                if masked && q == 0 { 0 } else { p.abs_diff(q) }
            })
            .sum();
        out | ((sum + ((c >> (16 * k)) & 0xFFFF)) & 0xFFFF) << (16 * k)
    })
}

/// The cubemap operations (RDNA3 ISA guide, V_CUBEID_F32 and siblings): `which` 0 the face id, 1
/// the S coordinate, 2 the T coordinate, 3 twice the major axis.
fn cube(a: u64, b: u64, c: u64, which: u32) -> u64 {
    let (x, y, z) = (f32_of(a), f32_of(b), f32_of(c));
    let result = if z.abs() >= x.abs() && z.abs() >= y.abs() {
        [if z < 0.0 { 5.0 } else { 4.0 }, if z < 0.0 { -x } else { x }, -y, z * 2.0][which as usize]
    } else if y.abs() >= x.abs() {
        [if y < 0.0 { 3.0 } else { 2.0 }, x, if y < 0.0 { -z } else { z }, y * 2.0][which as usize]
    } else {
        [if x < 0.0 { 1.0 } else { 0.0 }, if x < 0.0 { z } else { -z }, -y, x * 2.0][which as usize]
    };
    bits32(result)
}

/// f32 to f16 rounding toward zero (V_CVT_PK_RTZ_F16_F32); NaN stays NaN.
fn f16_toward_zero(x: f32) -> u64 {
    let nearest = f16::from_f32(x);
    if x.is_nan() || nearest.to_f32().abs() <= x.abs() || nearest.is_infinite() && x.is_infinite() {
        if x.is_nan() {
            return nearest.to_bits() as u64 | 0x200;
        }
        return nearest.to_bits() as u64;
    }
    // Rounded away from zero: one step back toward it.
    let bits = nearest.to_bits();
    (bits - 1) as u64
}

/// gfx10.3's names for operations gfx11 renamed.
fn gfx11_name(name: &str) -> &str {
    match name {
        "v_cvt_rpi_i32_f32" => "v_cvt_nearest_i32_f32",
        "v_cvt_flr_i32_f32" => "v_cvt_floor_i32_f32",
        "v_ffbh_u32" => "v_clz_i32_u32",
        "v_ffbl_b32" => "v_ctz_i32_b32",
        "v_ffbh_i32" => "v_cls_i32",
        other => other,
    }
}

/// A value for an operand: edges of its kind, then random.
fn value(rng: &mut Rng, values: Values, width: W, lane: usize) -> u64 {
    let edges: &[u64] = match values {
        Values::Int => {
            &[0, 1, 2, 0x7FFF, 0x8000, 0xFFFF, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 31, 32, 0x1_0000_0000, u64::MAX]
        }
        Values::F32 => &[
            0,
            0x8000_0000,
            1,
            0x8000_0001,
            0x007F_FFFF,
            0x0080_0000,
            0x3F80_0000,
            0xBF80_0000,
            0x3F00_0000,
            0x4B00_0001,
            0x7F7F_FFFF,
            0x7F80_0000,
            0xFF80_0000,
            0x7FC0_0000,
            0x7F80_0001,
            0x3FC0_0000,
            0xC0A0_0000,
        ],
        Values::F64 => &[
            0,
            1 << 63,
            1,
            0x000F_FFFF_FFFF_FFFF,
            0x0010_0000_0000_0000,
            0x3FF0_0000_0000_0000,
            0xBFF0_0000_0000_0000,
            0x3FE0_0000_0000_0000,
            0x4330_0000_0000_0001,
            0x7FEF_FFFF_FFFF_FFFF,
            0x7FF0_0000_0000_0000,
            0xFFF0_0000_0000_0000,
            0x7FF8_0000_0000_0000,
            0x7FF0_0000_0000_0001,
            0x3FF8_0000_0000_0000,
        ],
        Values::F16 => &[
            0, 0x8000, 1, 0x8001, 0x03FF, 0x0400, 0x3C00, 0xBC00, 0x3800, 0x6401, 0x7BFF, 0x7C00, 0xFC00, 0x7E00,
            0x7C01, 0x3E00, 0xC500,
        ],
    };
    let raw = if lane < edges.len() && !rng.next().is_multiple_of(4) {
        edges[(lane + rng.next() as usize) % edges.len()]
    } else {
        match values {
            // Floats near 1 as often as anywhere: random exponents rarely meet.
            Values::F32 if rng.next().is_multiple_of(2) => bits32((rng.next() % 20001) as f32 / 64.0 - 150.0),
            Values::F64 if rng.next().is_multiple_of(2) => ((rng.next() % 20001) as f64 / 64.0 - 150.0).to_bits(),
            Values::F16 if rng.next().is_multiple_of(2) => bits16((rng.next() % 2001) as f64 / 16.0 - 60.0),
            _ => rng.next(),
        }
    };
    match width {
        W::H => raw & 0xFFFF | (rng.next() & 0xFFFF_0000),
        W::S => raw & 0xFFFF_FFFF,
        _ => raw,
    }
}

/// Checks a lane-wise VALU operation; `None` if it has no reference here.
#[allow(clippy::needless_range_loop)] // rows of lanes indexed by one lane number
pub fn check_valu(isa: Isa, operation: &Operation) -> Option<()> {
    if !(operation.encoding.starts_with("Vop1")
        || operation.encoding.starts_with("Vop2")
        || operation.encoding.starts_with("Vop3"))
    {
        return None;
    }
    let name = gfx11_name(super::base_name(operation.mnemonic));
    let reference = reference(name)?;
    // Operations whose VOP3 form reads an SGPR or a carry (their own family), and those with
    // their VOP3B carry-out, are not here.
    let mut rng = Rng(0xA1 ^ operation.words[0] as u64 ^ (operation.words[1] as u64) << 29);
    for round in 0..8 {
        let mut registers = Registers::new(8);
        let mut operands = [[0u64; 32]; 3];
        for (index, &width) in reference.sources.iter().enumerate() {
            if width == W::No {
                continue;
            }
            for lane in 0..32 {
                // Integer shift and field operands get small values half the time.
                let mut value = value(&mut rng, reference.values, width, lane + round * 7);
                if reference.values == Values::Int && index > 0 && rng.next().is_multiple_of(2) {
                    value &= 0x3F;
                }
                if name == "v_ldexp_f32" || name == "v_ldexp_f16" {
                    if index == 1 {
                        value = (rng.next() % 61) | if rng.next().is_multiple_of(2) { 0xFFFF_FFC0 } else { 0 };
                    }
                    if index == 0 && reference.values == Values::F16 {
                        value &= 0xFFFF;
                    }
                }
                operands[index][lane] = value;
                let register = 2 * index;
                registers.vgpr[register][lane] = value as u32;
                if width == W::D {
                    registers.vgpr[register + 1][lane] = (value >> 32) as u32;
                }
            }
        }
        // The destination's old value (v4, src2 where there is one).
        if reference.sources[2] == W::No {
            for lane in 0..32 {
                registers.vgpr[4][lane] = rng.next() as u32;
                registers.vgpr[5][lane] = rng.next() as u32;
            }
        }
        let exec = if round % 2 == 0 { u32::MAX } else { rng.next() as u32 };
        registers.sgpr[super::EXEC] = exec;
        let mut expected = registers.clone();
        for lane in (0..32).filter(|lane| exec >> lane & 1 == 1) {
            let [a, b, c] = [0, 1, 2].map(|index| operands[index][lane]);
            let result = (reference.f)(a, b, c);
            match reference.result {
                W::H => expected.vgpr[4][lane] = (expected.vgpr[4][lane] & 0xFFFF_0000) | (result as u32 & 0xFFFF),
                W::S => expected.vgpr[4][lane] = result as u32,
                W::D => {
                    expected.vgpr[4][lane] = result as u32;
                    expected.vgpr[5][lane] = (result >> 32) as u32;
                }
                W::No => {}
            }
        }
        // VOP3B's carry out (s0 in the probe's words): bit 64 of the 65-bit sum (RDNA3 ISA guide,
        // V_MAD_U64_U32 and V_MAD_I64_I32).
        if matches!(name, "v_mad_u64_u32" | "v_mad_i64_i32") {
            let mut mask = 0u32;
            for lane in (0..32).filter(|lane| exec >> lane & 1 == 1) {
                let [a, b, c] = [0, 1, 2].map(|index| operands[index][lane]);
                let bit = if name == "v_mad_u64_u32" {
                    ((a as u32 as u128) * (b as u32 as u128) + c as u128) >> 64 & 1 == 1
                } else {
                    ((sext(a, 32) as i128) * (sext(b, 32) as i128) + c as i64 as i128) >> 64 & 1 == 1
                };
                mask |= (bit as u32) << lane;
            }
            expected.sgpr[0] = mask;
        }
        super::run_words(isa, operation, &operation.words, &mut registers);
        let what = format!("{isa:?} {} round {round}", operation.mnemonic);
        // A NaN an arithmetic operation makes may carry any payload (the guides pin none, and
        // IEEE 754 leaves it open); min and max return an operand, so theirs is exact.
        let pinned = name.contains("min") || name.contains("max") || name.contains("med3");
        if reference.values != Values::Int && !pinned {
            for lane in 0..32 {
                let is_nan = |registers: &Registers| match reference.result {
                    W::H => registers.vgpr[4][lane] & 0x7C00 == 0x7C00 && registers.vgpr[4][lane] & 0x3FF != 0,
                    W::S => f32::from_bits(registers.vgpr[4][lane]).is_nan(),
                    W::D => {
                        f64::from_bits(registers.vgpr[4][lane] as u64 | (registers.vgpr[5][lane] as u64) << 32).is_nan()
                    }
                    W::No => false,
                };
                if is_nan(&expected) && is_nan(&registers) {
                    expected.vgpr[4][lane] = registers.vgpr[4][lane];
                    expected.vgpr[5][lane] = registers.vgpr[5][lane];
                }
            }
        }
        assert_registers(&registers, &expected, &what);
    }
    Some(())
}

/// The approximate operations' accuracy, as the RDNA3 ISA guide states it (the kernel tests'
/// table, `kernels_exec.rs`): ulps of the result's format, or an absolute bound where the guide
/// states none (sine and cosine).
/// An approximate operation's values, its bound (ulps, or an absolute bound when negative), its
/// exact function and the range of inputs it is tried on.
type Approximate = (Values, f64, fn(f64) -> f64, (f64, f64));

fn approximate(name: &str) -> Option<Approximate> {
    let (op, width) = name.strip_prefix("v_")?.rsplit_once('_')?;
    let values = match width {
        "f16" => Values::F16,
        "f32" => Values::F32,
        "f64" => Values::F64,
        _ => return None,
    };
    let wide_ulps = if values == Values::F64 { (1u64 << 29) as f64 } else { 1.0 };
    Some(match op {
        "rcp" | "rcp_iflag" => (values, wide_ulps, |x| 1.0 / x, (0.25, 1000.0)),
        "rsq" => (values, wide_ulps, |x| 1.0 / x.sqrt(), (0.25, 1000.0)),
        "sqrt" => (values, wide_ulps, f64::sqrt, (0.25, 1000.0)),
        "exp" if values != Values::F64 => (values, 1.0, f64::exp2, (-10.0, 10.0)),
        "log" if values != Values::F64 => (values, 1.0, f64::log2, (0.25, 1000.0)),
        "sin" if values != Values::F64 => (
            values,
            if values == Values::F16 { -1.0 / 512.0 } else { -1.0 / 262144.0 },
            |x| (x * core::f64::consts::TAU).sin(),
            (-2.0, 2.0),
        ),
        "cos" if values != Values::F64 => (
            values,
            if values == Values::F16 { -1.0 / 512.0 } else { -1.0 / 262144.0 },
            |x| (x * core::f64::consts::TAU).cos(),
            (-2.0, 2.0),
        ),
        _ => return None,
    })
}

/// Checks an approximate (transcendental) operation within its stated accuracy, over values in
/// its ordinary range; `None` if not one.
#[allow(clippy::needless_range_loop)] // rows of lanes indexed by one lane number
pub fn check_approximate(isa: Isa, operation: &Operation) -> Option<()> {
    if !(operation.encoding.starts_with("Vop1") || operation.encoding == "Vop3") {
        return None;
    }
    let name = super::base_name(operation.mnemonic);
    let (values, bound, f, (low, high)) = approximate(name)?;
    let mut rng = Rng(0xA99 ^ operation.words[0] as u64);
    let mut registers = Registers::new(8);
    let mut inputs = [0f64; 32];
    for lane in 0..32 {
        let x = low + (high - low) * (rng.next() % 1_000_001) as f64 / 1_000_000.0;
        let x = match values {
            Values::F16 => f16::from_f64(x).to_f64(),
            Values::F32 => x as f32 as f64,
            _ => x,
        };
        inputs[lane] = x;
        match values {
            Values::F16 => registers.vgpr[0][lane] = f16::from_f64(x).to_bits() as u32,
            Values::F32 => registers.vgpr[0][lane] = (x as f32).to_bits(),
            _ => {
                registers.vgpr[0][lane] = x.to_bits() as u32;
                registers.vgpr[1][lane] = (x.to_bits() >> 32) as u32;
            }
        }
    }
    super::run_words(isa, operation, &operation.words, &mut registers);
    for lane in 0..32 {
        let want = f(inputs[lane]);
        let (got, ulp) = match values {
            Values::F16 => {
                let got = f16::from_bits(registers.vgpr[4][lane] as u16).to_f64();
                (got, (f16::from_f64(want).to_f64().abs() * 2f64.powi(-10)).max(2f64.powi(-24)))
            }
            Values::F32 => {
                let got = f32::from_bits(registers.vgpr[4][lane]) as f64;
                (got, (want.abs() as f32 as f64 * 2f64.powi(-23)).max(f32::from_bits(1) as f64))
            }
            _ => {
                let got = f64::from_bits(registers.vgpr[4][lane] as u64 | (registers.vgpr[5][lane] as u64) << 32);
                (got, want.abs() * 2f64.powi(-52))
            }
        };
        let allowed = if bound < 0.0 { -bound } else { bound * ulp };
        assert!(
            (got - want).abs() <= allowed,
            "{isa:?} {} of {}: {got}, want {want} within {allowed:e}",
            operation.mnemonic,
            inputs[lane]
        );
    }
    Some(())
}

/// A value rounded by MODE's round field: 0 nearest even, 1 toward +∞, 2 toward −∞, 3 toward
/// zero (RDNA3 ISA guide, "MODE"). `nearest` is the value rounded to nearest even in the target
/// format and `above` whether the exact value lies above it (`None`: it is exact).
fn directed<T: Copy>(
    nearest: T,
    above: Option<bool>,
    negative: bool,
    mode: u32,
    up: fn(T) -> T,
    down: fn(T) -> T,
) -> T {
    let toward_positive = match mode {
        0 => return nearest,
        1 => true,
        2 => false,
        _ => negative,
    };
    match above {
        Some(true) if toward_positive => up(nearest),
        Some(false) if !toward_positive => down(nearest),
        _ => nearest,
    }
}

/// `x` with its exact excess over `nearest` (`hi + lo` exactly; `nearest` the target format's
/// nearest even): which side of `nearest` the exact value is on.
fn side(hi: f64, lo: f64, nearest: f64) -> Option<bool> {
    let difference = (hi - nearest) + lo;
    if difference == 0.0 || nearest.is_infinite() && hi.is_infinite() { None } else { Some(difference > 0.0) }
}

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let sum = a + b;
    let b_virtual = sum - a;
    let a_virtual = sum - b_virtual;
    (sum, (a - a_virtual) + (b - b_virtual))
}

fn f16_step(bits: u16, up: bool) -> u16 {
    // Sign and magnitude: away from zero is +1 on the magnitude.
    let (negative, magnitude) = (bits & 0x8000 != 0, bits & 0x7FFF);
    let away = up != negative;
    match (away, magnitude) {
        (true, _) => bits + 1,
        (false, 0) => {
            if negative {
                1
            } else {
                0x8001
            }
        }
        (false, _) => bits - 1,
    }
}

/// Checks add, subtract, multiply and FMA of f16, f32 and f64 under every round mode and with
/// denormals flushed on input and output, against the exact result rounded as MODE says;
/// `None` for other operations.
pub fn check_modes(isa: Isa, operation: &Operation) -> Option<()> {
    if !(operation.encoding.starts_with("Vop2") || operation.encoding == "Vop3") {
        return None;
    }
    let name = super::base_name(operation.mnemonic);
    let (op, width) = name.strip_prefix("v_")?.rsplit_once('_')?;
    if !matches!(op, "add" | "sub" | "subrev" | "mul" | "fma" | "fmac") || !matches!(width, "f16" | "f32" | "f64") {
        return None;
    }
    if width == "f64" && op == "fma" {
        return None; // no exact residual of an f64 FMA on the host without wider arithmetic
    }
    let values = match width {
        "f16" => Values::F16,
        "f32" => Values::F32,
        _ => Values::F64,
    };
    let wide = values == Values::F64;
    let three = matches!(op, "fma" | "fmac");
    let mut rng = Rng(0x30DE ^ operation.words[0] as u64);
    for mode in 0..4u32 {
        for flush in [false, true] {
            let mut registers = Registers::new(8);
            let shift = if values == Values::F32 { 0 } else { 2 };
            let denorm_shift = if values == Values::F32 { 4 } else { 6 };
            registers.mode = (registers.mode & !(3 << shift) & !(3 << denorm_shift))
                | mode << shift
                | if flush { 0 } else { 3 << denorm_shift };
            let mut operands = [[0u64; 32]; 3];
            for (index, row) in operands.iter_mut().enumerate().take(if three { 3 } else { 2 }) {
                for (lane, value) in row.iter_mut().enumerate() {
                    *value = self::value(
                        &mut rng,
                        values,
                        if wide {
                            W::D
                        } else if values == Values::F16 {
                            W::H
                        } else {
                            W::S
                        },
                        lane + 3 * index,
                    );
                    // Ordinary values as well as edges: NaN results are not the point here.
                    if rng.next().is_multiple_of(3) {
                        let magnitude = (rng.next() % 100_000) as f64 / 7.0 * 2f64.powi((rng.next() % 40) as i32 - 20);
                        let sign = if rng.next().is_multiple_of(2) { 1.0 } else { -1.0 };
                        *value = match values {
                            Values::F16 => bits16(sign * magnitude.min(6e4)) | (*value & 0xFFFF_0000),
                            Values::F32 => bits32((sign * magnitude) as f32),
                            _ => (sign * magnitude).to_bits(),
                        };
                    }
                    let register = 2 * index;
                    registers.vgpr[register][lane] = *value as u32;
                    if wide {
                        registers.vgpr[register + 1][lane] = (*value >> 32) as u32;
                    }
                }
            }
            let expected_rows: Vec<Option<u64>> = (0..32)
                .map(|lane| {
                    let [a, b, c] = [0, 1, 2].map(|index| operands[index][lane]);
                    reference_mode(op, values, mode, flush, a, b, c)
                })
                .collect();
            super::run_words(isa, operation, &operation.words, &mut registers);
            for (lane, expected) in expected_rows.into_iter().enumerate() {
                let Some(want) = expected else { continue };
                let got = match values {
                    Values::F16 => (registers.vgpr[4][lane] & 0xFFFF) as u64,
                    Values::F32 => registers.vgpr[4][lane] as u64,
                    _ => registers.vgpr[4][lane] as u64 | (registers.vgpr[5][lane] as u64) << 32,
                };
                let [a, b, c] = [0, 1, 2].map(|index| operands[index][lane]);
                assert_eq!(
                    got, want,
                    "{isa:?} {} mode {mode} flush {flush}: {a:#x} {b:#x} {c:#x} gave {got:#x}, want {want:#x}",
                    operation.mnemonic
                );
            }
        }
    }
    Some(())
}

/// The exactly rounded result of `op` under MODE's `round` field, with denormals flushed to a
/// signed zero on input and output when `flush`; `None` where the result is a NaN (its payload is
/// the operation's own).
fn reference_mode(op: &str, values: Values, round: u32, flush: bool, a: u64, b: u64, c: u64) -> Option<u64> {
    let read = |bits: u64| -> f64 {
        let (value, denormal) = match values {
            Values::F16 => {
                let value = f16_of(bits);
                (value, bits & 0x7C00 == 0 && bits & 0x3FF != 0)
            }
            Values::F32 => {
                let value = f32_of(bits);
                (value as f64, value.is_subnormal())
            }
            _ => (f64_of(bits), f64_of(bits).is_subnormal()),
        };
        if flush && denormal { 0.0f64.copysign(value) } else { value }
    };
    let (x, y, z) = (read(a), read(b), read(c));
    // The exact result as hi + lo.
    let (hi, lo) = match op {
        "add" => two_sum(x, y),
        "sub" => two_sum(x, -y),
        "subrev" => two_sum(y, -x),
        "mul" => {
            let product = x * y;
            (product, x.mul_add(y, -product))
        }
        _ => {
            // f16 and f32 FMAs: the product is exact in f64, the sum exact as a two-sum.
            two_sum(x * y, z)
        }
    };
    if hi.is_nan() {
        return None;
    }
    let negative = hi < 0.0 || (hi == 0.0 && hi.is_sign_negative());
    let result = match values {
        Values::F16 => {
            let nearest = f16::from_f64(hi);
            let rounded = directed(
                nearest.to_bits(),
                side(hi, lo, nearest.to_f64()),
                negative,
                round,
                |bits| f16_step(bits, true),
                |bits| f16_step(bits, false),
            );
            rounded as u64
        }
        Values::F32 => {
            let nearest = hi as f32;
            let rounded =
                directed(nearest, side(hi, lo, nearest as f64), negative, round, f32::next_up, f32::next_down);
            rounded.to_bits() as u64
        }
        _ => {
            // An infinite result of finite operands overflowed: the exact value is finite.
            let finite = x.is_finite()
                && y.is_finite()
                && (op == "mul" || op == "add" || op == "sub" || op == "subrev" || z.is_finite());
            let above = match () {
                _ if hi.is_infinite() && finite => Some(hi < 0.0),
                _ if lo == 0.0 || lo.is_nan() || hi.is_infinite() => None,
                _ => Some(lo > 0.0),
            };
            directed(hi, above, negative, round, f64::next_up, f64::next_down).to_bits()
        }
    };
    // An exact zero sum is +0 except toward −∞, where it is −0, unless both addends are zeros of
    // one sign (IEEE 754, 6.3).
    let addends = match op {
        "add" => Some((x, y)),
        "sub" => Some((x, -y)),
        "subrev" => Some((y, -x)),
        "mul" => None,
        _ => Some((x * y, z)),
    };
    let result = match addends {
        Some((p, q))
            if hi == 0.0 && lo == 0.0 && !(p == 0.0 && q == 0.0 && p.is_sign_negative() == q.is_sign_negative()) =>
        {
            let negative = round == 2;
            match values {
                Values::F16 => {
                    if negative {
                        0x8000
                    } else {
                        0
                    }
                }
                Values::F32 => {
                    if negative {
                        0x8000_0000
                    } else {
                        0
                    }
                }
                _ => {
                    if negative {
                        1 << 63
                    } else {
                        0
                    }
                }
            }
        }
        _ => result,
    };
    if !flush {
        return Some(result);
    }
    let denormal = match values {
        Values::F16 => result & 0x7C00 == 0 && result & 0x3FF != 0,
        Values::F32 => f32::from_bits(result as u32).is_subnormal(),
        _ => f64::from_bits(result).is_subnormal(),
    };
    let sign = match values {
        Values::F16 => result & 0x8000,
        Values::F32 => result & 0x8000_0000,
        _ => result & (1 << 63),
    };
    Some(if denormal { sign } else { result })
}
