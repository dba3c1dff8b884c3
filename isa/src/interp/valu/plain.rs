//! The small path: the common 32-bit operations without modifiers, DPP or 16-bit halves, in a
//! function of their own, and [`common_row`], their arithmetic, which the general path shares.

use super::compare::holds;
use super::lane_math::{fmax, fmin};
use super::rows::{f2, fma_rows, map1, map2, map3, ordered_nans};
use super::{CompareType, Condition, Form, VOp};
use crate::gfx11::Opcode;
use crate::interp::operands::Row;
use crate::interp::wave::{EXEC, LANES, MODE_IEEE, Wave};

/// The common 32-bit operations without modifiers, DPP or 16-bit halves, in a small function of
/// their own: sources read as rows, one lane loop, the masked write. (The general path's size,
/// its result enum and its modifier stages cost several times the arithmetic.) Returns false
/// for an operation this path does not have.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn plain(wave: &mut Wave, op: &VOp) -> bool {
    use Opcode::*;
    let operands = &op.operands;
    let a = operands.row(wave, 0);
    let b = || operands.row(wave, 1);
    let c = || operands.row(wave, 2);
    let current = || wave.vgpr.get(operands.vdst as usize).copied().unwrap_or([0; LANES]);
    let exec = wave.exec();
    if let Form::Compare { condition, ty, into_exec } = op.form {
        if condition == Condition::Class {
            return false;
        }
        let b = b();
        let mut order = [core::cmp::Ordering::Equal; LANES];
        let mut unordered = 0u32;
        match ty {
            CompareType::U32 => {
                for lane in 0..LANES {
                    order[lane] = a[lane].cmp(&b[lane]);
                }
            }
            CompareType::I32 => {
                for lane in 0..LANES {
                    order[lane] = (a[lane] as i32).cmp(&(b[lane] as i32));
                }
            }
            CompareType::F32 => {
                for lane in 0..LANES {
                    match f32::from_bits(a[lane]).partial_cmp(&f32::from_bits(b[lane])) {
                        Some(value) => order[lane] = value,
                        None => unordered |= 1 << lane,
                    }
                }
            }
            _ => return false,
        }
        let mut result = 0u32;
        for lane in 0..LANES {
            let ordering = if unordered >> lane & 1 == 1 { None } else { Some(order[lane]) };
            result |= (holds(condition, ordering) as u32) << lane;
        }
        let target = if into_exec { EXEC } else { operands.sdst as u32 };
        wave.write_mask(target, result & exec);
        return true;
    }
    if matches!(op.opcode, VAddCoU32 | VAddCoCiU32 | VSubCoU32 | VSubCoCiU32) {
        let (b, carry_in) = (b(), if matches!(op.opcode, VAddCoCiU32 | VSubCoCiU32) { c()[0] } else { 0 });
        let (mut row, mut carry) = ([0u32; LANES], 0u32);
        for lane in 0..LANES {
            let (x, y, cin) = (a[lane] as u64, b[lane] as u64, (carry_in >> lane & 1) as u64);
            let (value, out) = if matches!(op.opcode, VAddCoU32 | VAddCoCiU32) {
                let sum = x + y + cin;
                (sum as u32, sum >> 32 != 0)
            } else {
                (x.wrapping_sub(y + cin) as u32, y + cin > x)
            };
            row[lane] = value;
            carry |= (out as u32) << lane;
        }
        write_plain(wave, operands.vdst, row, exec);
        wave.write_mask(operands.sdst as u32, carry & exec);
        return true;
    }
    let ieee = wave.mode & MODE_IEEE != 0;
    let Some(row) = common_row(op.opcode, a, b, c, current, operands.literal, ieee) else { return false };
    write_plain(wave, operands.vdst, row, exec);
    true
}

/// The common 32-bit operations, shared by the small path and the general one (which reads its
/// sources through DPP and modifiers first): `None` for any other operation.
#[inline(always)]
pub(super) fn common_row(
    opcode: Opcode,
    a: Row,
    b: impl Fn() -> Row,
    c: impl Fn() -> Row,
    current: impl Fn() -> Row,
    literal: u32,
    ieee: bool,
) -> Option<Row> {
    use Opcode::*;
    Some(match opcode {
        VMovB32 => a,
        VAddF32 => ordered_nans(f2(a, b(), |x, y| x + y), [&a, &b()]),
        VSubF32 => ordered_nans(f2(a, b(), |x, y| x - y), [&a, &b()]),
        VSubrevF32 => ordered_nans(f2(a, b(), |x, y| y - x), [&b(), &a]),
        VMulF32 => ordered_nans(f2(a, b(), |x, y| x * y), [&a, &b()]),
        VMaxF32 => f2(a, b(), |x, y| fmax(x, y, ieee)),
        VMinF32 => f2(a, b(), |x, y| fmin(x, y, ieee)),
        VFmacF32 => fma_rows(a, b(), current()),
        VFmaF32 => fma_rows(a, b(), c()),
        VFmaakF32 => fma_rows(a, b(), [literal; LANES]),
        VFmamkF32 => fma_rows(a, [literal; LANES], b()),
        VAddNcU32 => map2(a, b(), u32::wrapping_add),
        VSubNcU32 => map2(a, b(), u32::wrapping_sub),
        VSubrevNcU32 => map2(a, b(), |x, y| y.wrapping_sub(x)),
        VAndB32 => map2(a, b(), |x, y| x & y),
        VOrB32 => map2(a, b(), |x, y| x | y),
        VXorB32 => map2(a, b(), |x, y| x ^ y),
        VLshlrevB32 => map2(a, b(), |x, y| y << (x & 31)),
        VLshrrevB32 => map2(a, b(), |x, y| y >> (x & 31)),
        VAshrrevI32 => map2(a, b(), |x, y| ((y as i32) >> (x & 31)) as u32),
        VMulLoU32 => map2(a, b(), u32::wrapping_mul),
        VMulU32U24 => map2(a, b(), |x, y| (x & 0xFF_FFFF).wrapping_mul(y & 0xFF_FFFF)),
        VMaxU32 => map2(a, b(), u32::max),
        VMinU32 => map2(a, b(), u32::min),
        VMaxI32 => map2(a, b(), |x, y| (x as i32).max(y as i32) as u32),
        VMinI32 => map2(a, b(), |x, y| (x as i32).min(y as i32) as u32),
        VAdd3U32 => map3(a, b(), c(), |x, y, z| x.wrapping_add(y).wrapping_add(z)),
        VLshlAddU32 => map3(a, b(), c(), |x, y, z| (x << (y & 31)).wrapping_add(z)),
        VAddLshlU32 => map3(a, b(), c(), |x, y, z| x.wrapping_add(y) << (z & 31)),
        VLshlOrB32 => map3(a, b(), c(), |x, y, z| (x << (y & 31)) | z),
        VAndOrB32 => map3(a, b(), c(), |x, y, z| (x & y) | z),
        VOr3B32 => map3(a, b(), c(), |x, y, z| x | y | z),
        VCndmaskB32 => {
            let (y, select) = (b(), c());
            let mut out = [0u32; LANES];
            for lane in 0..LANES {
                out[lane] = if select[lane] >> lane & 1 == 1 { y[lane] } else { a[lane] };
            }
            out
        }
        VCvtF32U32 => map1(a, |x| (x as f32).to_bits()),
        VCvtF32I32 => map1(a, |x| (x as i32 as f32).to_bits()),
        VCvtU32F32 => map1(a, |x| f32::from_bits(x) as u32),
        VCvtI32F32 => map1(a, |x| f32::from_bits(x) as i32 as u32),
        _ => return None,
    })
}

/// Writes `row` to VGPR `vdst` in the lanes of `exec`.
#[inline(always)]
pub(super) fn write_plain(wave: &mut Wave, vdst: u16, row: Row, exec: u32) {
    let Some(target) = wave.vgpr.get_mut(vdst as usize) else { return };
    if exec == u32::MAX {
        *target = row;
    } else {
        for lane in 0..LANES {
            target[lane] = if exec >> lane & 1 == 1 { row[lane] } else { target[lane] };
        }
    }
}
