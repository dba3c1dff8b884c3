//! Conversions between the number formats (`v_cvt_*` outside the common path's four, `v_pack`,
//! `v_sat_pk`): integers of every width, f16, f32 and f64, normalised and packed forms.

use super::f16_values::{h, to_h};
use super::rows::{map1, map2, map3, wide};
use super::{Out, VOp};
use crate::gfx11::Opcode;
use crate::interp::wave::Wave;
use half::f16;

/// The conversions; `None` for another operation.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn compute(wave: &Wave, op: &VOp) -> Option<Out> {
    let a = || op.read(wave, 0);
    let b = || op.read(wave, 1);
    let c = || op.read(wave, 2);
    let a64 = || op.read64(wave, 0);
    use Opcode::*;
    let row = match op.opcode {
        VCvtI32I16 => map1(a(), |x| x as i16 as i32 as u32),
        VCvtU32U16 => map1(a(), |x| x & 0xFFFF),
        VCvtPkU16U32 => map2(a(), b(), |x, y| (x & 0xFFFF) | y << 16),
        VCvtPkI16I32 => map2(a(), b(), |x, y| {
            let s = |v: u32| (v as i32).clamp(i16::MIN as i32, i16::MAX as i32) as u16 as u32;
            s(x) | s(y) << 16
        }),
        VCvtNearestI32F32 => map1(a(), |x| (f32::from_bits(x) + 0.5).floor() as i32 as u32),
        VCvtFloorI32F32 => map1(a(), |x| f32::from_bits(x).floor() as i32 as u32),
        VCvtOffF32I4 => map1(a(), |x| ((((x & 15) as i32) << 28 >> 28) as f32 / 16.0).to_bits()),
        VCvtF32Ubyte0 => map1(a(), |x| ((x & 0xFF) as f32).to_bits()),
        VCvtF32Ubyte1 => map1(a(), |x| (((x >> 8) & 0xFF) as f32).to_bits()),
        VCvtF32Ubyte2 => map1(a(), |x| (((x >> 16) & 0xFF) as f32).to_bits()),
        VCvtF32Ubyte3 => map1(a(), |x| ((x >> 24) as f32).to_bits()),
        VCvtPkU8F32 => map3(a(), b(), c(), |x, y, z| {
            let byte = (f32::from_bits(x).round_ties_even() as u32).min(255);
            let shift = 8 * (y & 3);
            (z & !(0xFF << shift)) | byte << shift
        }),
        VCvtPkRtzF16F32 => map2(a(), b(), |x, y| f16_toward_zero(x) | f16_toward_zero(y) << 16),
        // Each f32 toward zero to 16 bits, saturated, NaN to 0 (V_CVT_PK_I16_F32, _U16_F32).
        VCvtPkI16F32 => map2(a(), b(), |x, y| {
            let convert =
                |v: u32| f32::from_bits(v).trunc().clamp(i16::MIN as f32, i16::MAX as f32) as i16 as u16 as u32;
            convert(x) | convert(y) << 16
        }),
        VCvtPkU16F32 => map2(a(), b(), |x, y| {
            let convert = |v: u32| f32::from_bits(v).trunc().clamp(0.0, u16::MAX as f32) as u16 as u32;
            convert(x) | convert(y) << 16
        }),
        VCvtPkNormI16F32 => map2(a(), b(), |x, y| norm_i16(f32::from_bits(x)) | norm_i16(f32::from_bits(y)) << 16),
        VCvtPkNormU16F32 => map2(a(), b(), |x, y| norm_u16(f32::from_bits(x)) | norm_u16(f32::from_bits(y)) << 16),
        VCvtF32F64 => a64().map(|x| (f64::from_bits(x) as f32).to_bits()),
        VCvtU32F64 => a64().map(|x| f64::from_bits(x) as u32),
        VCvtI32F64 => a64().map(|x| f64::from_bits(x) as i32 as u32),
        VCvtF64F32 => return Some(Out::B64(wide(a()).map(|x| (f32::from_bits(x as u32) as f64).to_bits()))),
        VCvtF64U32 => return Some(Out::B64(wide(a()).map(|x| (x as u32 as f64).to_bits()))),
        VCvtF64I32 => return Some(Out::B64(wide(a()).map(|x| (x as u32 as i32 as f64).to_bits()))),
        VCvtF16F32 => map1(a(), |x| to_h(f32::from_bits(x))),
        VCvtF32F16 => map1(a(), |x| h(x).to_bits()),
        VCvtF16U16 => map1(a(), |x| to_h((x & 0xFFFF) as f32)),
        VCvtF16I16 => map1(a(), |x| to_h(x as i16 as f32)),
        VCvtU16F16 => map1(a(), |x| h(x) as u16 as u32),
        VCvtI16F16 => map1(a(), |x| h(x) as i16 as u16 as u32),
        VCvtNormI16F16 => map1(a(), |x| norm_i16(h(x))),
        VCvtNormU16F16 => map1(a(), |x| norm_u16(h(x))),
        VCvtPkNormI16F16 => map2(a(), b(), |x, y| norm_i16(h(x)) | norm_i16(h(y)) << 16),
        VCvtPkNormU16F16 => map2(a(), b(), |x, y| norm_u16(h(x)) | norm_u16(h(y)) << 16),
        VPackB32F16 => map2(a(), b(), |x, y| (x & 0xFFFF) | y << 16),
        VSatPkU8I16 => map1(a(), |x| {
            let s = |v: u32| (v as u16 as i16).clamp(0, 255) as u32;
            s(x & 0xFFFF) | s(x >> 16) << 8
        }),
        _ => return None,
    };
    Some(Out::B32(row))
}

/// f32 to f16, rounding toward zero (`V_CVT_PK_RTZ_F16_F32`).
pub(super) fn f16_toward_zero(bits: u32) -> u32 {
    let value = f32::from_bits(bits);
    let nearest = f16::from_f32(value);
    if nearest.is_nan() || nearest.to_f32().abs() <= value.abs() || value.is_infinite() {
        return nearest.to_bits() as u32;
    }
    // Rounded away from zero: step one unit toward zero.
    (nearest.to_bits() - 1) as u32
}

pub(super) fn norm_i16(value: f32) -> u32 {
    if value.is_nan() { 0 } else { (value.clamp(-1.0, 1.0) * 32767.0).round_ties_even() as i16 as u16 as u32 }
}

pub(super) fn norm_u16(value: f32) -> u32 {
    if value.is_nan() { 0 } else { (value.clamp(0.0, 1.0) * 65535.0).round_ties_even() as u16 as u32 }
}
