//! f16 operations on one half of each register (VOP1/VOP2/VOP3, not packed): arithmetic, min/max,
//! transcendentals and rounding, computed in f32 and rounded once, and the dot products
//! (`v_dot2acc_f32_f16`, `v_dot2_f16_f16`, `v_dot2_bf16_bf16`, `v_pk_fmac_f16`).

use super::f16_values::{dot2_rows, h, hfma, to_h, to_h64};
use super::lane_math::{cos_revolutions, fmax, fmed3, fmin, fract16, frexp, ldexp64, sin_revolutions};
use super::rows::{h1, h2, lanes, map1, map2, map3, pk3};
use super::{Out, VOp};
use crate::gfx11::Opcode;
use crate::interp::wave::{LANES, MODE_IEEE, Wave};
use half::bf16;

/// The f16 operations; `None` for another.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn compute(wave: &Wave, op: &VOp) -> Option<Out> {
    let a = || op.read(wave, 0);
    let b = || op.read(wave, 1);
    let c = || op.read(wave, 2);
    let literal = op.operands.literal;
    let ieee = wave.mode & MODE_IEEE != 0;
    let vdst = || wave.vgpr.get(op.operands.vdst as usize).copied().unwrap_or([0; LANES]);
    use Opcode::*;
    let row = match op.opcode {
        // f16 (one half of each register).
        VAddF16 => h2(a(), b(), |x, y| x + y),
        VSubF16 => h2(a(), b(), |x, y| x - y),
        VSubrevF16 => h2(a(), b(), |x, y| y - x),
        VMulF16 => h2(a(), b(), |x, y| x * y),
        VFmaF16 => map3(a(), b(), c(), hfma),
        VFmacF16 => {
            let accumulator =
                vdst().map(|value| if op.operands.op_sel & 8 != 0 { value >> 16 } else { value & 0xFFFF });
            map3(a(), b(), accumulator, hfma)
        }
        VFmaakF16 => map2(a(), b(), |x, y| hfma(x, y, literal & 0xFFFF)),
        VFmamkF16 => map2(a(), b(), |x, y| hfma(x, literal & 0xFFFF, y)),
        VMinF16 => h2(a(), b(), |x, y| fmin(x, y, ieee)),
        VMaxF16 => h2(a(), b(), |x, y| fmax(x, y, ieee)),
        VMin3F16 => map3(a(), b(), c(), |x, y, z| to_h(fmin(fmin(h(x), h(y), ieee), h(z), ieee))),
        VMax3F16 => map3(a(), b(), c(), |x, y, z| to_h(fmax(fmax(h(x), h(y), ieee), h(z), ieee))),
        VMed3F16 => map3(a(), b(), c(), |x, y, z| to_h(fmed3(h(x), h(y), h(z), ieee))),
        VMaxminF16 => map3(a(), b(), c(), |x, y, z| to_h(fmin(fmax(h(x), h(y), ieee), h(z), ieee))),
        VMinmaxF16 => map3(a(), b(), c(), |x, y, z| to_h(fmax(fmin(h(x), h(y), ieee), h(z), ieee))),
        VLdexpF16 => map2(a(), b(), |x, y| to_h64(ldexp64(h(x) as f64, y as i16 as i32))),
        VRcpF16 => h1(a(), |x| 1.0 / x),
        VSqrtF16 => h1(a(), f32::sqrt),
        VRsqF16 => h1(a(), |x| 1.0 / x.sqrt()),
        VLogF16 => h1(a(), f32::log2),
        VExpF16 => h1(a(), f32::exp2),
        VSinF16 => h1(a(), sin_revolutions),
        VCosF16 => h1(a(), cos_revolutions),
        VFloorF16 => h1(a(), f32::floor),
        VCeilF16 => h1(a(), f32::ceil),
        VTruncF16 => h1(a(), f32::trunc),
        VRndneF16 => h1(a(), f32::round_ties_even),
        VFractF16 => h1(a(), fract16),
        VFrexpMantF16 => h1(a(), |x| frexp(x as f64).0 as f32),
        VFrexpExpI16F16 => map1(a(), |x| frexp(h(x) as f64).1 as u16 as u32),
        VDot2accF32F16 => dot2_rows(a(), b(), vdst()),
        VDot2F16F16 | VDot2Bf16Bf16 => {
            let (x, y, z) = (a(), b(), c());
            let bf = op.opcode == VDot2Bf16Bf16;
            lanes(|lane| {
                let (x, y) = (x[lane], y[lane]);
                let value = |bits: u32| if bf { bf16::from_bits(bits as u16).to_f32() } else { h(bits) };
                let sum = value(x & 0xFFFF) * value(y & 0xFFFF) + value(x >> 16) * value(y >> 16) + value(z[lane]);
                if bf { bf16::from_f32(sum).to_bits() as u32 } else { to_h(sum) }
            })
        }
        VPkFmacF16 => {
            let (x, y, z) = (a(), b(), vdst());
            pk3(x, y, z, hfma)
        }
        _ => return None,
    };
    Some(Out::B32(row))
}
