//! Bitwise operations: logic, shifts (16, 32 and 64-bit), bit fields, alignment, byte permutes,
//! bit counts (`v_bcnt`, `v_mbcnt`, `v_clz`...) and `v_cndmask_b16`.

use super::lane_math::perm;
use super::rows::{map1, map2, map3};
use super::{Out, VOp};
use crate::gfx11::Opcode;
use crate::interp::wave::{LANES, Wave};

/// The bitwise operations; `None` for another.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn compute(wave: &Wave, op: &VOp) -> Option<Out> {
    let a = || op.read(wave, 0);
    let b = || op.read(wave, 1);
    let c = || op.read(wave, 2);
    let b64 = || op.read64(wave, 1);
    use Opcode::*;
    let row = match op.opcode {
        VMovB16 => a(),
        // Bitwise and shifts.
        VXnorB32 => map2(a(), b(), |x, y| !(x ^ y)),
        VNotB32 => map1(a(), |x| !x),
        VAndB16 => map2(a(), b(), |x, y| x & y),
        VOrB16 => map2(a(), b(), |x, y| x | y),
        VXorB16 => map2(a(), b(), |x, y| x ^ y),
        VNotB16 => map1(a(), |x| !x),
        VBfrevB32 => map1(a(), u32::reverse_bits),
        VLshlrevB16 => map2(a(), b(), |x, y| (y << (x & 15)) & 0xFFFF),
        VLshrrevB16 => map2(a(), b(), |x, y| (y & 0xFFFF) >> (x & 15)),
        VAshrrevI16 => map2(a(), b(), |x, y| ((y as i16) >> (x & 15)) as u16 as u32),
        VLshlrevB64 | VLshrrevB64 | VAshrrevI64 => {
            let (shift, value) = (a(), b64());
            let mut out = [0u64; LANES];
            for lane in 0..LANES {
                let (x, y) = (shift[lane] & 63, value[lane]);
                out[lane] = match op.opcode {
                    VLshlrevB64 => y << x,
                    VLshrrevB64 => y >> x,
                    _ => ((y as i64) >> x) as u64,
                };
            }
            return Some(Out::B64(out));
        }
        VXor3B32 => map3(a(), b(), c(), |x, y, z| x ^ y ^ z),
        VXadU32 => map3(a(), b(), c(), |x, y, z| (x ^ y).wrapping_add(z)),
        VBfeU32 => map3(a(), b(), c(), |x, y, z| {
            let (offset, size) = (y & 31, z & 31);
            if size == 0 { 0 } else { (x >> offset) & ((1u32 << size) - 1) }
        }),
        VBfeI32 => map3(a(), b(), c(), |x, y, z| {
            let (offset, size) = (y & 31, z & 31);
            if size == 0 { 0 } else { ((((x >> offset) << (32 - size)) as i32) >> (32 - size)) as u32 }
        }),
        VBfiB32 => map3(a(), b(), c(), |x, y, z| (x & y) | (!x & z)),
        VBfmB32 => map2(a(), b(), |x, y| (((1u64 << (x & 31)) - 1) << (y & 31)) as u32),
        VAlignbitB32 => map3(a(), b(), c(), |x, y, z| (((x as u64) << 32 | y as u64) >> (z & 31)) as u32),
        VAlignbyteB32 => map3(a(), b(), c(), |x, y, z| (((x as u64) << 32 | y as u64) >> (8 * (z & 3))) as u32),
        VPermB32 => map3(a(), b(), c(), perm),
        VBcntU32B32 => map2(a(), b(), |x, y| x.count_ones().wrapping_add(y)),
        VClzI32U32 => map1(a(), |x| if x == 0 { u32::MAX } else { x.leading_zeros() }),
        VCtzI32B32 => map1(a(), |x| if x == 0 { u32::MAX } else { x.trailing_zeros() }),
        VClsI32 => map1(a(), |x| {
            let leading = if (x as i32) < 0 { (!x).leading_zeros() } else { x.leading_zeros() };
            if x == 0 || x == u32::MAX { u32::MAX } else { leading }
        }),
        // The bits of the mask's low (high) 32 below the lane's position in the wave: lanes
        // 32–63 of a wave64 wave count all of the low half, and only they count any of the high.
        VMbcntLoU32B32 => {
            let (x, y) = (a(), b());
            let mut out = [0u32; LANES];
            for lane in 0..LANES {
                let below = if wave.half == 0 { ((1u64 << lane) - 1) as u32 } else { u32::MAX };
                out[lane] = (x[lane] & below).count_ones().wrapping_add(y[lane]);
            }
            out
        }
        VMbcntHiU32B32 => {
            if wave.half == 0 {
                b()
            } else {
                let (x, y) = (a(), b());
                let mut out = [0u32; LANES];
                for lane in 0..LANES {
                    out[lane] = (x[lane] & ((1u64 << lane) - 1) as u32).count_ones().wrapping_add(y[lane]);
                }
                out
            }
        }
        VCndmaskB16 => {
            let (x, y, select) = (a(), b(), c());
            let mut out = [0u32; LANES];
            for lane in 0..LANES {
                out[lane] = if select[lane] >> lane & 1 == 1 { y[lane] } else { x[lane] };
            }
            out
        }
        _ => return None,
    };
    Some(Out::B32(row))
}
