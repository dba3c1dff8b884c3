//! f32 operations outside the common path: DX9 multiplies, three-operand min/max/med3, the
//! one-source lane functions (square root, exp, log, sine...) that the native tier shares,
//! rounding, ldexp/frexp, cubemap coordinates and `v_mullit`.

use super::lane_math::{cos_revolutions, fmax, fmed3, fmin, fract32, frexp, ldexp32, sin_revolutions};
use super::rows::{f1, f2, f3, map1, map2};
use super::{Out, VOp};
use crate::gfx11::Opcode;
use crate::interp::wave::{LANES, MODE_IEEE, Wave};

/// The f32 operations; `None` for another.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn compute(wave: &Wave, op: &VOp) -> Option<Out> {
    let a = || op.read(wave, 0);
    let b = || op.read(wave, 1);
    let c = || op.read(wave, 2);
    let ieee = wave.mode & MODE_IEEE != 0;
    let vdst = || wave.vgpr.get(op.operands.vdst as usize).copied().unwrap_or([0; LANES]);
    use Opcode::*;
    let row = match op.opcode {
        // f32.
        // DX9 rules: 0 × anything (NaN and infinity included) is 0.
        VMulDx9ZeroF32 => f2(a(), b(), |x, y| if x == 0.0 || y == 0.0 { 0.0 } else { x * y }),
        VFmaDx9ZeroF32 => f3(a(), b(), c(), |x, y, z| if x == 0.0 || y == 0.0 { z } else { x.mul_add(y, z) }),
        VFmacDx9ZeroF32 => f3(a(), b(), vdst(), |x, y, z| if x == 0.0 || y == 0.0 { z } else { x.mul_add(y, z) }),
        VMin3F32 => f3(a(), b(), c(), |x, y, z| fmin(fmin(x, y, ieee), z, ieee)),
        VMax3F32 => f3(a(), b(), c(), |x, y, z| fmax(fmax(x, y, ieee), z, ieee)),
        VMed3F32 => f3(a(), b(), c(), |x, y, z| fmed3(x, y, z, ieee)),
        VMaxminF32 => f3(a(), b(), c(), |x, y, z| fmin(fmax(x, y, ieee), z, ieee)),
        VMinmaxF32 => f3(a(), b(), c(), |x, y, z| fmax(fmin(x, y, ieee), z, ieee)),
        VRcpF32 | VRcpIflagF32 => f1(a(), |x| 1.0 / x),
        opcode if lane_function_f32(opcode).is_some() => {
            f1(a(), lane_function_f32(opcode).expect("the guard found the function"))
        }
        VTruncF32 => f1(a(), f32::trunc),
        VFloorF32 => f1(a(), f32::floor),
        VCeilF32 => f1(a(), f32::ceil),
        VRndneF32 => f1(a(), f32::round_ties_even),
        VFrexpExpI32F32 => map1(a(), |x| frexp(f32::from_bits(x) as f64).1 as u32),
        VLdexpF32 => map2(a(), b(), |x, y| ldexp32(f32::from_bits(x), y as i32).to_bits()),
        // The cubemap face of (x, y, z) = (S0, S1, S2) and its coordinates (RDNA3 ISA guide,
        // V_CUBEID_F32 and siblings): z's face where |z| is largest, then y's, then x's.
        VCubeidF32 | VCubescF32 | VCubetcF32 | VCubemaF32 => f3(a(), b(), c(), |x, y, z| {
            let face = if z.abs() >= x.abs() && z.abs() >= y.abs() {
                2
            } else if y.abs() >= x.abs() {
                1
            } else {
                0
            };
            let negative = [x, y, z][face] < 0.0;
            match (op.opcode, face) {
                (VCubeidF32, _) => (2 * face + negative as usize) as f32,
                (VCubescF32, 2) => {
                    if negative {
                        -x
                    } else {
                        x
                    }
                }
                (VCubescF32, 1) => x,
                (VCubescF32, _) => {
                    if negative {
                        z
                    } else {
                        -z
                    }
                }
                (VCubetcF32, 1) => {
                    if negative {
                        -z
                    } else {
                        z
                    }
                }
                (VCubetcF32, _) => -y,
                (_, face) => [x, y, z][face] * 2.0,
            }
        }),
        // Legacy lighting's multiply: -MAX_FLOAT where S1 is -MAX_FLOAT, -inf or NaN or S2 is at
        // most 0 or NaN (RDNA3 ISA guide, V_MULLIT_F32).
        VMullitF32 => f3(a(), b(), c(), |x, y, z| {
            if y == -f32::MAX || y == f32::NEG_INFINITY || y.is_nan() || z <= 0.0 || z.is_nan() {
                -f32::MAX
            } else {
                x * y
            }
        }),
        _ => return None,
    };
    Some(Out::B32(row))
}

/// The one-source f32 operations whose lane result is a function of that lane's source alone
/// (MODE aside, which the caller applies): the interpreter maps the function over a row, and
/// the native tier calls the same function over a row (`native::frame::map_row`), so the two
/// tiers compute every lane with one piece of code, libm's transcendentals included.
pub(crate) fn lane_function_f32(opcode: Opcode) -> Option<fn(f32) -> f32> {
    use Opcode::*;
    Some(match opcode {
        VSqrtF32 => f32::sqrt,
        VRsqF32 => |x| (1.0 / (x as f64).sqrt()) as f32,
        VExpF32 => f32::exp2,
        VLogF32 => f32::log2,
        VSinF32 => sin_revolutions,
        VCosF32 => cos_revolutions,
        VFractF32 => fract32,
        VFrexpMantF32 => |x| frexp(x as f64).0 as f32,
        _ => return None,
    })
}
