//! Lane-crossing and scalar-writing operations, which write for themselves: `v_readfirstlane`,
//! `v_readlane` and `v_writelane` (between a VGPR's lane and an SGPR), `v_permlane*` (lanes of one
//! row from others), `v_swap` and the M0-relative moves (`v_movrel*`, `v_swaprel`).

use super::rows::lanes;
use super::{Out, VOp};
use crate::gfx11::{Encoding, Opcode};
use crate::interp::wave::{EXEC, LANES, Wave};

/// The lane-crossing operations; `None` for another.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn compute(wave: &mut Wave, op: &VOp) -> Option<Out> {
    let a = || op.read(wave, 0);
    let b = || op.read(wave, 1);
    let vdst = || wave.vgpr.get(op.operands.vdst as usize).copied().unwrap_or([0; LANES]);
    use Opcode::*;
    let row = match op.opcode {
        // Lane-crossing and scalar-writing operations write for themselves.
        // These see the whole wave: a wave64 wave runs them once, from its low half, and they
        // reach lanes 32–63 in the other half's rows.
        VReadfirstlaneB32 => {
            let exec = wave.mask64(EXEC);
            let lane = if exec == 0 { 0 } else { exec.trailing_zeros() as usize };
            let value = lane_of(wave, op, lane);
            wave.write_sgpr(readlane_destination(op), value);
            return Some(Out::Done);
        }
        VReadlaneB32 => {
            let lane = b()[0] as usize % wave.lanes();
            let value = lane_of(wave, op, lane);
            wave.write_sgpr(readlane_destination(op), value);
            return Some(Out::Done);
        }
        VWritelaneB32 => {
            let lane = b()[0] as usize % wave.lanes();
            let value = a()[0];
            wave.set_lane_value(op.operands.vdst as u32, lane, value);
            return Some(Out::Done);
        }
        // Wave64 only: each half reads the other's lanes (RDNA3 ISA guide). A wave32 wave has
        // no other half; the instruction is wave64's.
        VPermlane64B32 => {
            if !wave.wide {
                return None;
            }
            let crate::interp::operands::Source::Vgpr(source) = op.operands.src[0] else { return None };
            let exec = wave.mask64(EXEC);
            let values: [u32; 2 * LANES] = core::array::from_fn(|lane| wave.lane_value(source as u32, lane ^ LANES));
            for lane in (0..2 * LANES).filter(|lane| exec >> lane & 1 == 1) {
                wave.set_lane_value(op.operands.vdst as u32, lane, values[lane]);
            }
            return Some(Out::Done);
        }
        VPermlane16B32 | VPermlanex16B32 => return Some(permlane(wave, op)),
        VSwapB32 => {
            let (source, target) = (a(), vdst());
            let exec = wave.exec();
            if let crate::interp::operands::Source::Vgpr(register) = op.operands.src[0] {
                for lane in (0..LANES).filter(|lane| exec >> lane & 1 == 1) {
                    wave.write_vgpr(register as u32, lane, target[lane]);
                }
            }
            source
        }
        VMovrelsB32 | VMovreldB32 | VMovrelsdB32 | VMovrelsd2B32 | VSwaprelB32 => return movrel(wave, op),
        _ => return None,
    };
    Some(Out::B32(row))
}

/// Lane `lane` (of the whole wave) of source 0: a VGPR's lane, or a scalar source's value.
pub(super) fn lane_of(wave: &Wave, op: &VOp, lane: usize) -> u32 {
    match op.operands.src[0] {
        crate::interp::operands::Source::Vgpr(register) => wave.lane_value(register as u32, lane),
        _ => op.operands.row(wave, 0)[0],
    }
}

/// The scalar destination of `v_readfirstlane`/`v_readlane`: the VOP1 vdst field or VOP3's.
pub(crate) fn readlane_destination(op: &VOp) -> u32 {
    match op.encoding {
        Encoding::Vop1 => op.operands.vdst as u32,
        _ => op.operands.sdst as u32,
    }
}

/// `v_permlane16_b32` / `v_permlanex16_b32`: each lane of a row of 16 reads the lane its 4-bit
/// select names (from S1 for lanes 0–7, S2 for 8–15), within its own row or, for `x16`, the
/// other row. `op_sel[0]` is `fi` (read inactive lanes), `op_sel[1]` `bound_ctrl` (RDNA3 ISA
/// guide; LLVM prints them as `op_sel:[fi,bc]`).
pub(super) fn permlane(wave: &mut Wave, op: &VOp) -> Out {
    let source = op.operands.row(wave, 0);
    let (low, high) = (op.operands.row(wave, 1)[0], op.operands.row(wave, 2)[0]);
    let fetch_inactive = op.operands.op_sel & 1 == 1;
    let bound_ctrl = op.operands.op_sel & 2 == 2;
    let exec = wave.exec();
    let cross = op.opcode == Opcode::VPermlanex16B32;
    let current = wave.vgpr.get(op.operands.vdst as usize).copied().unwrap_or([0; LANES]);
    let row = lanes(|lane| {
        let index = lane & 15;
        let select = if index < 8 { low >> (4 * index) } else { high >> (4 * (index - 8)) } & 15;
        let base = if cross { (lane & 16) ^ 16 } else { lane & 16 };
        let from = base + select as usize;
        if fetch_inactive || exec >> from & 1 == 1 {
            source[from]
        } else if bound_ctrl {
            0
        } else {
            current[lane]
        }
    });
    Out::B32(row)
}

/// `v_movrels`/`v_movreld`/`v_movrelsd`: VGPR indexing relative to M0 (RDNA3 ISA guide).
/// The VGPR-relative moves (RDNA3 ISA guide, `V_MOVRELS_B32` and siblings): the source, the
/// destination or both indexed by M0; `v_movrelsd_2_b32` and `v_swaprel_b32` index the source by
/// M0[9:0] and the destination by M0[25:16]; `v_swaprel_b32` exchanges the two. A register past
/// the wave's reads 0 and takes no write.
pub(super) fn movrel(wave: &mut Wave, op: &VOp) -> Option<Out> {
    let m0 = wave.sgpr[125];
    let crate::interp::operands::Source::Vgpr(source) = op.operands.src[0] else { return None };
    let vdst = op.operands.vdst;
    let (low, high) = ((m0 & 0x3FF) as u16, ((m0 >> 16) & 0x3FF) as u16);
    let (from, to) = match op.opcode {
        Opcode::VMovrelsB32 => (source.wrapping_add(m0 as u16), vdst),
        Opcode::VMovreldB32 => (source, vdst.wrapping_add(m0 as u16)),
        Opcode::VMovrelsdB32 => (source.wrapping_add(m0 as u16), vdst.wrapping_add(m0 as u16)),
        _ => (source.wrapping_add(low), vdst.wrapping_add(high)),
    };
    let row = wave.vgpr.get(from as usize).copied().unwrap_or([0; LANES]);
    let old = wave.vgpr.get(to as usize).copied().unwrap_or([0; LANES]);
    let exec = wave.exec();
    for lane in (0..LANES).filter(|lane| exec >> lane & 1 == 1) {
        wave.write_vgpr(to as u32, lane, row[lane]);
        if op.opcode == Opcode::VSwaprelB32 {
            wave.write_vgpr(from as u32, lane, old[lane]);
        }
    }
    Some(Out::Done)
}
