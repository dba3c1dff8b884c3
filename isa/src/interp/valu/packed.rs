//! VOP3P: packed 16-bit operations, dot products, mixed-precision FMA, and WMMA (in `wmma.rs`).

use super::f16_values::{dot2_rows, h, hfma, to_h, to_h64};
use super::lane_math::{clamp01, fmax, fmin};
use super::rows::{lanes, map3, pk2, pk3};
use super::{Out, VOp, wmma};
use crate::gfx11::Opcode;
use crate::interp::operands::Row;
use crate::interp::wave::{LANES, MODE_IEEE, Wave};
use half::bf16;

/// VOP3P: packed 16-bit operations, dot products, mixed-precision FMA and WMMA. Each source's
/// halves are arranged first: the result's low half reads the half `op_sel` names, its high half
/// the half `op_sel_hi` names; `neg_lo`/`neg_hi` negate float halves (RDNA3 ISA guide, VOP3P).
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn packed(wave: &mut Wave, op: &VOp) -> Option<Out> {
    let ieee = wave.mode & MODE_IEEE != 0;
    use Opcode::*;
    if matches!(
        op.opcode,
        VWmmaF3216x16x16F16
            | VWmmaF3216x16x16Bf16
            | VWmmaF1616x16x16F16
            | VWmmaBf1616x16x16Bf16
            | VWmmaI3216x16x16Iu8
            | VWmmaI3216x16x16Iu4
    ) {
        return wmma::run(wave, op).map(|()| Out::Done);
    }
    let operands = &op.operands;
    let float =
        matches!(op.opcode, VPkFmaF16 | VPkAddF16 | VPkMulF16 | VPkMinF16 | VPkMaxF16 | VDot2F32F16 | VDot2F32Bf16);
    let arranged = |index: usize| -> Row {
        let row = op.read(wave, index);
        let (low_high, high_high) = (operands.op_sel >> index & 1 == 1, operands.op_sel_hi >> index & 1 == 1);
        let (neg_low, neg_high) = (operands.neg >> index & 1 == 1, operands.neg_hi >> index & 1 == 1);
        let flip = if float { (neg_low as u32) << 15 | (neg_high as u32) << 31 } else { 0 };
        row.map(|value| {
            let low = if low_high { value >> 16 } else { value & 0xFFFF };
            let high = if high_high { value >> 16 } else { value & 0xFFFF };
            (low | high << 16) ^ flip
        })
    };
    let a = || arranged(0);
    let b = || arranged(1);
    let c = || arranged(2);
    let clamp = operands.clamp;
    let row = match op.opcode {
        VPkAddF16 => pk2(a(), b(), |x, y| to_h(h(x) + h(y))),
        VPkMulF16 => pk2(a(), b(), |x, y| to_h(h(x) * h(y))),
        VPkMinF16 => pk2(a(), b(), |x, y| to_h(fmin(h(x), h(y), ieee))),
        VPkMaxF16 => pk2(a(), b(), |x, y| to_h(fmax(h(x), h(y), ieee))),
        VPkFmaF16 => pk3(a(), b(), c(), hfma),
        VPkAddU16 if clamp => pk2(a(), b(), |x, y| (x as u16).saturating_add(y as u16) as u32),
        VPkAddU16 | VPkAddI16 if !clamp => pk2(a(), b(), u32::wrapping_add),
        VPkAddI16 => pk2(a(), b(), |x, y| (x as i16).saturating_add(y as i16) as u16 as u32),
        VPkSubU16 if clamp => pk2(a(), b(), |x, y| (x as u16).saturating_sub(y as u16) as u32),
        VPkSubU16 | VPkSubI16 if !clamp => pk2(a(), b(), u32::wrapping_sub),
        VPkSubI16 => pk2(a(), b(), |x, y| (x as i16).saturating_sub(y as i16) as u16 as u32),
        VPkMulLoU16 => pk2(a(), b(), u32::wrapping_mul),
        VPkMadU16 => pk3(a(), b(), c(), |x, y, z| x.wrapping_mul(y).wrapping_add(z)),
        VPkMadI16 => pk3(a(), b(), c(), |x, y, z| x.wrapping_mul(y).wrapping_add(z)),
        VPkLshlrevB16 => pk2(a(), b(), |x, y| y << (x & 15)),
        VPkLshrrevB16 => pk2(a(), b(), |x, y| y >> (x & 15)),
        VPkAshrrevI16 => pk2(a(), b(), |x, y| ((y as i16) >> (x & 15)) as u16 as u32),
        VPkMaxI16 => pk2(a(), b(), |x, y| (x as i16).max(y as i16) as u16 as u32),
        VPkMinI16 => pk2(a(), b(), |x, y| (x as i16).min(y as i16) as u16 as u32),
        VPkMaxU16 => pk2(a(), b(), |x, y| x.max(y)),
        VPkMinU16 => pk2(a(), b(), |x, y| x.min(y)),
        VDot2F32F16 => dot2_rows(a(), b(), c()),
        VDot2F32Bf16 => map3(a(), b(), c(), |x, y, z| {
            {
                let v = |bits: u32| bf16::from_bits(bits as u16).to_f64();
                ((v(x & 0xFFFF) * v(y & 0xFFFF) + v(x >> 16) * v(y >> 16)) + f32::from_bits(z) as f64) as f32
            }
            .to_bits()
        }),
        // Integer dot products: for the `iu` forms, neg_lo bits 0 and 1 say whether A and B are
        // signed (LLVM's `v_dot4_i32_iu8 ... neg_lo:[1,1,0]`).
        VDot4I32Iu8 | VDot4U32U8 | VDot8I32Iu4 | VDot8U32U4 => {
            let (x, y, z) = (op.read(wave, 0), op.read(wave, 1), op.read(wave, 2));
            let signed =
                |index: usize| matches!(op.opcode, VDot4I32Iu8 | VDot8I32Iu4) && operands.neg >> index & 1 == 1;
            let (bits, count) = if matches!(op.opcode, VDot4I32Iu8 | VDot4U32U8) { (8, 4) } else { (4, 8) };
            let element = |word: u32, index: u32, signed: bool| -> i64 {
                let raw = (word >> (bits * index)) & ((1 << bits) - 1);
                if signed { ((raw << (32 - bits)) as i32 >> (32 - bits)) as i64 } else { raw as i64 }
            };
            let (sa, sb) = (signed(0), signed(1));
            let integer = matches!(op.opcode, VDot4I32Iu8 | VDot8I32Iu4);
            lanes(|lane| {
                let sum: i64 = (0..count).map(|i| element(x[lane], i, sa) * element(y[lane], i, sb)).sum::<i64>();
                let total = sum + if integer { z[lane] as i32 as i64 } else { z[lane] as i64 };
                match (clamp, integer) {
                    (true, true) => total.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32,
                    (true, false) => total.clamp(0, u32::MAX as i64) as u32,
                    _ => total as u32,
                }
            })
        }
        // Mixed precision: each source is f32, or (op_sel_hi set) the f16 half op_sel names.
        VFmaMixF32 | VFmaMixloF16 | VFmaMixhiF16 => {
            let source = |index: usize| -> [f64; LANES] {
                let row = operands.row(wave, index);
                let is_half = operands.op_sel_hi >> index & 1 == 1;
                let high = operands.op_sel >> index & 1 == 1;
                let (neg, abs) = (operands.neg >> index & 1 == 1, operands.neg_hi >> index & 1 == 1);
                row.map(|bits| {
                    let mut value = if is_half {
                        h(if high { bits >> 16 } else { bits }) as f64
                    } else {
                        f32::from_bits(bits) as f64
                    };
                    if abs {
                        value = value.abs();
                    }
                    if neg { -value } else { value }
                })
            };
            let (x, y, z) = (source(0), source(1), source(2));
            let exec = op.writes(wave);
            let current = wave.vgpr.get(operands.vdst as usize).copied().unwrap_or([0; LANES]);
            let row: Row = lanes(|lane| {
                let value = x[lane].mul_add(y[lane], z[lane]);
                match op.opcode {
                    VFmaMixF32 => {
                        let value = value as f32;
                        if clamp { clamp01(value).to_bits() } else { value.to_bits() }
                    }
                    _ => {
                        let value = to_h64(if clamp { value.clamp(0.0, 1.0) } else { value });
                        if op.opcode == VFmaMixloF16 {
                            (current[lane] & 0xFFFF_0000) | value
                        } else {
                            (current[lane] & 0xFFFF) | value << 16
                        }
                    }
                }
            });
            if let Some(target) = wave.vgpr.get_mut(operands.vdst as usize) {
                for lane in (0..LANES).filter(|lane| exec >> lane & 1 == 1) {
                    target[lane] = row[lane];
                }
            }
            return Some(Out::Done);
        }
        _ => return None,
    };
    Some(Out::B32(row))
}
