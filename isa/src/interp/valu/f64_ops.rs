//! f64 operations: arithmetic, min/max, rounding, reciprocals and roots, ldexp/frexp and
//! `v_trig_preop`, each on VGPR pairs.

use super::lane_math::{fmax64, fmin64, fract64, frexp, ldexp64};
use super::rows::{d1, d2, d3, lanes};
use super::{Out, VOp};
use crate::gfx11::Opcode;
use crate::interp::wave::{MODE_IEEE, Wave};

/// The f64 operations; `None` for another.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn compute(wave: &Wave, op: &VOp) -> Option<Out> {
    let b = || op.read(wave, 1);
    let a64 = || op.read64(wave, 0);
    let b64 = || op.read64(wave, 1);
    let c64 = || op.read64(wave, 2);
    let ieee = wave.mode & MODE_IEEE != 0;
    use Opcode::*;
    let row = match op.opcode {
        // f64.
        VAddF64 => return Some(Out::B64(d2(a64(), b64(), |x, y| x + y))),
        VMulF64 => return Some(Out::B64(d2(a64(), b64(), |x, y| x * y))),
        VFmaF64 => return Some(Out::B64(d3(a64(), b64(), c64(), f64::mul_add))),
        VMinF64 => return Some(Out::B64(d2(a64(), b64(), |x, y| fmin64(x, y, ieee)))),
        VMaxF64 => return Some(Out::B64(d2(a64(), b64(), |x, y| fmax64(x, y, ieee)))),
        VTrigPreopF64 => {
            let (x, y) = (a64(), b());
            return Some(Out::B64(lanes(|l| {
                crate::interp::trig_preop::trig_preop(f64::from_bits(x[l]), y[l]).to_bits()
            })));
        }
        VLdexpF64 => {
            let (x, y) = (a64(), b());
            return Some(Out::B64(lanes(|l| ldexp64(f64::from_bits(x[l]), y[l] as i32).to_bits())));
        }
        VTruncF64 => return Some(Out::B64(d1(a64(), f64::trunc))),
        VFloorF64 => return Some(Out::B64(d1(a64(), f64::floor))),
        VCeilF64 => return Some(Out::B64(d1(a64(), f64::ceil))),
        VRndneF64 => return Some(Out::B64(d1(a64(), f64::round_ties_even))),
        VFractF64 => return Some(Out::B64(d1(a64(), fract64))),
        VRcpF64 => return Some(Out::B64(d1(a64(), |x| 1.0 / x))),
        VRsqF64 => return Some(Out::B64(d1(a64(), |x| 1.0 / x.sqrt()))),
        VSqrtF64 => return Some(Out::B64(d1(a64(), f64::sqrt))),
        VFrexpMantF64 => return Some(Out::B64(d1(a64(), |x| frexp(x).0))),
        VFrexpExpI32F64 => a64().map(|x| frexp(f64::from_bits(x)).1 as u32),
        _ => return None,
    };
    Some(Out::B32(row))
}
