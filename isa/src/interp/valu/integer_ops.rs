//! Integer arithmetic: 16 and 32-bit adds with clamping, multiplies (24-bit, high halves),
//! multiply-adds (to 64 bits as well), min/max/med3, SADs and `v_lerp_u8`, and the carry operations,
//! which write a lane mask to sdst as well.

use super::lane_math::{i24, med3, sad_u8};
use super::rows::{lanes, map2, map3};
use super::{Out, VOp};
use crate::gfx11::Opcode;
use crate::interp::wave::Wave;

/// The integer operations; `None` for another.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn compute(wave: &Wave, op: &VOp) -> Option<Out> {
    let a = || op.read(wave, 0);
    let b = || op.read(wave, 1);
    let c = || op.read(wave, 2);
    let a64 = || op.read64(wave, 0);
    let c64 = || op.read64(wave, 2);
    let clamp = op.operands.clamp;
    use Opcode::*;
    let row = match op.opcode {
        // Integer arithmetic.
        VAddNcU32 if clamp => map2(a(), b(), u32::saturating_add),
        VSubNcU32 if clamp => map2(a(), b(), u32::saturating_sub),
        VAddNcI32 if clamp => map2(a(), b(), |x, y| (x as i32).saturating_add(y as i32) as u32),
        VAddNcI32 => map2(a(), b(), u32::wrapping_add),
        VSubNcI32 if clamp => map2(a(), b(), |x, y| (x as i32).saturating_sub(y as i32) as u32),
        VSubNcI32 => map2(a(), b(), u32::wrapping_sub),
        VAddNcU16 if clamp => map2(a(), b(), |x, y| (x as u16).saturating_add(y as u16) as u32),
        VAddNcU16 => map2(a(), b(), u32::wrapping_add),
        VSubNcU16 if clamp => map2(a(), b(), |x, y| (x as u16).saturating_sub(y as u16) as u32),
        VSubNcU16 => map2(a(), b(), u32::wrapping_sub),
        VAddNcI16 if clamp => map2(a(), b(), |x, y| (x as i16).saturating_add(y as i16) as u16 as u32),
        VAddNcI16 => map2(a(), b(), u32::wrapping_add),
        VSubNcI16 if clamp => map2(a(), b(), |x, y| (x as i16).saturating_sub(y as i16) as u16 as u32),
        VSubNcI16 => map2(a(), b(), u32::wrapping_sub),
        VMulLoU16 => map2(a(), b(), u32::wrapping_mul),
        VMadU16 => map3(a(), b(), c(), |x, y, z| x.wrapping_mul(y).wrapping_add(z)),
        VMadI16 => map3(a(), b(), c(), |x, y, z| x.wrapping_mul(y).wrapping_add(z)),
        VMadU32U16 => map3(a(), b(), c(), |x, y, z| (x & 0xFFFF).wrapping_mul(y & 0xFFFF).wrapping_add(z)),
        VMadI32I16 => {
            map3(a(), b(), c(), |x, y, z| ((x as i16 as i32).wrapping_mul(y as i16 as i32) as u32).wrapping_add(z))
        }
        VMinU16 => map2(a(), b(), |x, y| (x as u16).min(y as u16) as u32),
        VMaxU16 => map2(a(), b(), |x, y| (x as u16).max(y as u16) as u32),
        VMinI16 => map2(a(), b(), |x, y| (x as i16).min(y as i16) as u16 as u32),
        VMaxI16 => map2(a(), b(), |x, y| (x as i16).max(y as i16) as u16 as u32),
        VMin3U16 => map3(a(), b(), c(), |x, y, z| (x as u16).min(y as u16).min(z as u16) as u32),
        VMax3U16 => map3(a(), b(), c(), |x, y, z| (x as u16).max(y as u16).max(z as u16) as u32),
        VMed3U16 => map3(a(), b(), c(), |x, y, z| med3(x as u16, y as u16, z as u16) as u32),
        VMin3I16 => map3(a(), b(), c(), |x, y, z| (x as i16).min(y as i16).min(z as i16) as u16 as u32),
        VMax3I16 => map3(a(), b(), c(), |x, y, z| (x as i16).max(y as i16).max(z as i16) as u16 as u32),
        VMed3I16 => map3(a(), b(), c(), |x, y, z| med3(x as i16, y as i16, z as i16) as u16 as u32),
        VMulHiU32 => map2(a(), b(), |x, y| ((x as u64 * y as u64) >> 32) as u32),
        VMulHiI32 => map2(a(), b(), |x, y| ((x as i32 as i64 * y as i32 as i64) >> 32) as u32),
        VMulHiU32U24 => map2(a(), b(), |x, y| (((x & 0xFF_FFFF) as u64 * (y & 0xFF_FFFF) as u64) >> 32) as u32),
        VMulI32I24 => map2(a(), b(), |x, y| (i24(x).wrapping_mul(i24(y))) as u32),
        VMulHiI32I24 => map2(a(), b(), |x, y| ((i24(x) as i64 * i24(y) as i64) >> 32) as u32),
        VMadU32U24 => map3(a(), b(), c(), |x, y, z| (x & 0xFF_FFFF).wrapping_mul(y & 0xFF_FFFF).wrapping_add(z)),
        VMadI32I24 => map3(a(), b(), c(), |x, y, z| (i24(x).wrapping_mul(i24(y)) as u32).wrapping_add(z)),
        VMin3U32 => map3(a(), b(), c(), |x, y, z| x.min(y).min(z)),
        VMax3U32 => map3(a(), b(), c(), |x, y, z| x.max(y).max(z)),
        VMed3U32 => map3(a(), b(), c(), med3),
        VMin3I32 => map3(a(), b(), c(), |x, y, z| (x as i32).min(y as i32).min(z as i32) as u32),
        VMax3I32 => map3(a(), b(), c(), |x, y, z| (x as i32).max(y as i32).max(z as i32) as u32),
        VMed3I32 => map3(a(), b(), c(), |x, y, z| med3(x as i32, y as i32, z as i32) as u32),
        VMaxminU32 => map3(a(), b(), c(), |x, y, z| x.max(y).min(z)),
        VMinmaxU32 => map3(a(), b(), c(), |x, y, z| x.min(y).max(z)),
        VMaxminI32 => map3(a(), b(), c(), |x, y, z| (x as i32).max(y as i32).min(z as i32) as u32),
        VMinmaxI32 => map3(a(), b(), c(), |x, y, z| (x as i32).min(y as i32).max(z as i32) as u32),
        VSadU32 => map3(a(), b(), c(), |x, y, z| x.abs_diff(y).wrapping_add(z)),
        VSadU8 => map3(a(), b(), c(), |x, y, z| sad_u8(x, y, false).wrapping_add(z)),
        VSadHiU8 => map3(a(), b(), c(), |x, y, z| (sad_u8(x, y, false) << 16).wrapping_add(z)),
        VMsadU8 => map3(a(), b(), c(), |x, y, z| sad_u8(x, y, true).wrapping_add(z)),
        VSadU16 => map3(a(), b(), c(), |x, y, z| {
            let half = |shift: u32| ((x >> shift) as u16).abs_diff((y >> shift) as u16) as u32;
            (half(0) + half(16)).wrapping_add(z)
        }),
        // Each byte the rounded average of the two sources' (RDNA3 ISA guide, V_LERP_U8: bit 8i
        // of S2 rounds byte i up).
        VLerpU8 => map3(a(), b(), c(), |x, y, z| {
            (0..4).fold(0, |out, i| {
                let byte = |v: u32| (v >> (8 * i)) & 0xFF;
                out | ((byte(x) + byte(y) + ((z >> (8 * i)) & 1)) >> 1) << (8 * i)
            })
        }),
        // Four SADs of S1's bytes against S0's 64 bits at byte offsets 0 to 3, each plus S2's
        // 16-bit field and kept to 16 bits (V_QSAD_PK_U16_U8; masked: V_MQSAD_PK_U16_U8).
        VQsadPkU16U8 | VMqsadPkU16U8 => {
            let masked = op.opcode == VMqsadPkU16U8;
            let (x, y, z) = (a64(), b(), c64());
            return Some(Out::B64(lanes(|lane| {
                (0..4).fold(0u64, |out, k| {
                    let window = (x[lane] >> (8 * k)) as u32;
                    let sum = sad_u8(window, y[lane], masked).wrapping_add((z[lane] >> (16 * k)) as u32 & 0xFFFF);
                    out | ((sum & 0xFFFF) as u64) << (16 * k)
                })
            })));
        }
        // Carry operations write a lane mask to sdst as well.
        VAddCoU32 | VSubCoU32 | VSubrevCoU32 | VAddCoCiU32 | VSubCoCiU32 | VSubrevCoCiU32 => {
            let (x, y) = (a(), b());
            let carry_in = if matches!(op.opcode, VAddCoCiU32 | VSubCoCiU32 | VSubrevCoCiU32) { c()[0] } else { 0 };
            let mut carry = 0u32;
            let row = lanes(|lane| {
                let cin = (carry_in >> lane & 1) as u64;
                let (x, y) = (x[lane] as u64, y[lane] as u64);
                let (value, out) = match op.opcode {
                    VAddCoU32 | VAddCoCiU32 => {
                        let sum = x + y + cin;
                        (sum, sum >> 32 != 0)
                    }
                    VSubCoU32 | VSubCoCiU32 => (x.wrapping_sub(y + cin), y + cin > x),
                    _ => (y.wrapping_sub(x + cin), x + cin > y),
                };
                carry |= (out as u32) << lane;
                value as u32
            });
            return Some(Out::Carry(row, carry));
        }
        VMadU64U32 | VMadI64I32 => {
            let (x, y, z) = (a(), b(), c64());
            let mut carry = 0u32;
            let row = lanes(|lane| {
                let (value, overflow) = if op.opcode == VMadU64U32 {
                    (x[lane] as u64 * y[lane] as u64).overflowing_add(z[lane])
                } else {
                    // The carry out is bit 64 of the 65-bit signed sum (RDNA3 ISA guide,
                    // V_MAD_I64_I32: `{ D1.i1, D0.i64 } = 65'I(S0.i32 * S1.i32 + S2.i64)`).
                    let exact = x[lane] as i32 as i128 * y[lane] as i32 as i128 + z[lane] as i64 as i128;
                    (exact as u64, (exact >> 64) & 1 == 1)
                };
                carry |= (overflow as u32) << lane;
                value
            });
            return Some(Out::Carry64(row, carry));
        }
        _ => return None,
    };
    Some(Out::B32(row))
}
