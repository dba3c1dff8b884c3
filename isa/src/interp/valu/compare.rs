//! VOPC compares (`v_cmp_*`, `v_cmpx_*`, `v_cmp_class_*`): each lane's ordering of its two
//! sources, or its class bits, tested against the planned condition, written as a lane mask to
//! sdst or EXEC. The condition and type are parsed from the mnemonic once, at plan time.

use super::f16_values::h;
use super::lane_math::class_bits;
use super::rows::{lanes, mask};
use super::{CompareType, Condition, Form, Out, VOp};
use crate::gfx11::Entry;
use crate::interp::wave::{EXEC, LANES, Wave};

#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn compare(wave: &mut Wave, op: &VOp) -> Option<Out> {
    use core::cmp::Ordering;
    let Form::Compare { condition, ty, into_exec } = op.form else { return None };
    let exec = op.writes(wave);
    let result = if condition == Condition::Class {
        let classes = op.read(wave, 1);
        match ty {
            CompareType::F64 => {
                let value = op.read64(wave, 0);
                mask(|lane| {
                    let x = f64::from_bits(value[lane]);
                    let bits = value[lane];
                    let denormal = bits & (0x7FF << 52) == 0 && bits << 1 != 0;
                    let signaling = x.is_nan() && bits >> 51 & 1 == 0;
                    class_bits(x, denormal, signaling) & classes[lane] != 0
                })
            }
            CompareType::F16 => {
                let value = op.read(wave, 0);
                mask(|lane| {
                    let bits = value[lane] as u16;
                    let denormal = bits & 0x7C00 == 0 && bits & 0x3FF != 0;
                    let signaling = h(bits as u32).is_nan() && bits >> 9 & 1 == 0;
                    class_bits(h(bits as u32) as f64, denormal, signaling) & classes[lane] != 0
                })
            }
            _ => {
                let value = op.read(wave, 0);
                mask(|lane| {
                    let bits = value[lane];
                    let denormal = bits & 0x7F80_0000 == 0 && bits & 0x7F_FFFF != 0;
                    let signaling = f32::from_bits(bits).is_nan() && bits >> 22 & 1 == 0;
                    class_bits(f32::from_bits(bits) as f64, denormal, signaling) & classes[lane] != 0
                })
            }
        }
    } else {
        let order: [Option<Ordering>; LANES] = match ty {
            CompareType::I64 | CompareType::U64 | CompareType::F64 => {
                let (x, y) = (op.read64(wave, 0), op.read64(wave, 1));
                lanes(|lane| match ty {
                    CompareType::I64 => Some((x[lane] as i64).cmp(&(y[lane] as i64))),
                    CompareType::U64 => Some(x[lane].cmp(&y[lane])),
                    _ => f64::from_bits(x[lane]).partial_cmp(&f64::from_bits(y[lane])),
                })
            }
            _ => {
                let (x, y) = (op.read(wave, 0), op.read(wave, 1));
                lanes(|lane| {
                    let (x, y) = (x[lane], y[lane]);
                    match ty {
                        CompareType::I16 => Some((x as i16).cmp(&(y as i16))),
                        CompareType::U16 => Some((x as u16).cmp(&(y as u16))),
                        CompareType::I32 => Some((x as i32).cmp(&(y as i32))),
                        CompareType::U32 => Some(x.cmp(&y)),
                        CompareType::F16 => h(x).partial_cmp(&h(y)),
                        _ => f32::from_bits(x).partial_cmp(&f32::from_bits(y)),
                    }
                })
            }
        };
        mask(|lane| holds(condition, order[lane]))
    };
    let target = if into_exec { EXEC } else { op.operands.sdst as u32 };
    wave.write_mask(target, result & exec);
    Some(Out::Done)
}

/// Whether `condition` holds for an ordering; `None` is unordered (a NaN): the ordered
/// conditions are false, their negations (`n*`) and `u` true.
pub(super) fn holds(condition: Condition, order: Option<core::cmp::Ordering>) -> bool {
    use core::cmp::Ordering::*;
    match condition {
        Condition::False => false,
        Condition::True => true,
        Condition::Lt => order == Some(Less),
        Condition::Eq => order == Some(Equal),
        Condition::Le => matches!(order, Some(Less | Equal)),
        Condition::Gt => order == Some(Greater),
        Condition::Lg => matches!(order, Some(Less | Greater)),
        Condition::Ne => order != Some(Equal),
        Condition::Ge => matches!(order, Some(Greater | Equal)),
        Condition::Ordered => order.is_some(),
        Condition::Unordered => order.is_none(),
        Condition::Nge => !matches!(order, Some(Greater | Equal)),
        Condition::Nlg => !matches!(order, Some(Less | Greater)),
        Condition::Ngt => order != Some(Greater),
        Condition::Nle => !matches!(order, Some(Less | Equal)),
        Condition::Nlt => order != Some(Less),
        Condition::Class => false,
    }
}

pub(super) fn parse_compare(entry: &Entry) -> Option<(bool, Condition, CompareType)> {
    let name = entry.mnemonic.trim_end_matches("_e32").trim_end_matches("_e64");
    let (into_exec, rest) = match name.strip_prefix("v_cmpx_") {
        Some(rest) => (true, rest),
        None => (false, name.strip_prefix("v_cmp_")?),
    };
    let (condition, ty) = rest.rsplit_once('_')?;
    let condition = match condition {
        "f" => Condition::False,
        "t" | "tru" => Condition::True,
        "lt" => Condition::Lt,
        "eq" => Condition::Eq,
        "le" => Condition::Le,
        "gt" => Condition::Gt,
        "lg" => Condition::Lg,
        "ne" | "neq" => Condition::Ne,
        "ge" => Condition::Ge,
        "o" => Condition::Ordered,
        "u" => Condition::Unordered,
        "nge" => Condition::Nge,
        "nlg" => Condition::Nlg,
        "ngt" => Condition::Ngt,
        "nle" => Condition::Nle,
        "nlt" => Condition::Nlt,
        "class" => Condition::Class,
        _ => return None,
    };
    let ty = match ty {
        "i16" => CompareType::I16,
        "u16" => CompareType::U16,
        "i32" => CompareType::I32,
        "u32" => CompareType::U32,
        "i64" => CompareType::I64,
        "u64" => CompareType::U64,
        "f16" => CompareType::F16,
        "f32" => CompareType::F32,
        "f64" => CompareType::F64,
        _ => return None,
    };
    Some((into_exec, condition, ty))
}
