//! Lane exchanges of the VALU: DPP's permutation of src0 (and the sources' preparation around
//! it: broadcasts, float modifiers), `v_permlane16/x16`, and `v_readlane_b32` and
//! `v_readfirstlane_b32`, one lane to an SGPR.

use dynasmrt::{DynasmApi, DynasmLabelApi, dynasm};

use super::emit::{Emitter, RAMP, ROW, SCC, SCRATCH, sgpr};
use super::sources::{Src, load, place, scratch_row};
use crate::gfx11::Opcode;
use crate::interp::operands::{DppPlan, INVALID, Source};
use crate::interp::valu::VOp;
use crate::interp::valu::readlane_destination;
use crate::interp::wave::{EXEC, NULL};

/// The sources where chunks read them (`place`), src0 through DPP's permutation where it has
/// DPP (`permute`, into scratch row 0), and each source with float modifiers (neg, abs: bit
/// operations on the sign, abs first, as `VOp::read` applies them) modified: a broadcast in
/// its register, a row into scratch row 1 + its index (or in place in row 0 after DPP).
pub(super) fn prepare(e: &mut Emitter<'_>, op: &VOp, count: usize) -> Vec<Src> {
    let mut srcs: Vec<Src> = (0..count).map(|index| place(e, op, index)).collect();
    if let (Some(dpp), Source::Vgpr(source)) = (&op.operands.dpp, op.operands.src[0]) {
        permute(e, dpp, source as u32);
        srcs[0] = Src::Scratch(0);
    }
    if op.operands.neg | op.operands.abs == 0 {
        return srcs;
    }
    // ymm1: the sign bit; ymm2: all but it.
    dynasm!(e.ops
        ; .arch x64
        ; vpcmpeqd ymm2, ymm2, ymm2
        ; vpslld ymm1, ymm2, 31
        ; vpsrld ymm2, ymm2, 1
    );
    for (index, src) in srcs.iter_mut().enumerate() {
        let (neg, abs) = (op.operands.neg >> index & 1 == 1, op.operands.abs >> index & 1 == 1);
        if !neg && !abs {
            continue;
        }
        let modify = |e: &mut Emitter<'_>, reg: u8| {
            if abs {
                dynasm!(e.ops ; .arch x64 ; vpand Ry(reg), Ry(reg), ymm2);
            }
            if neg {
                dynasm!(e.ops ; .arch x64 ; vpxor Ry(reg), Ry(reg), ymm1);
            }
        };
        match *src {
            Src::Reg(reg) => modify(e, reg),
            Src::Row(_) | Src::Scratch(_) => {
                let row = if let Src::Scratch(n) = *src { n } else { 1 + index as u8 };
                for k in 0..4 {
                    load(e, 0, *src, k);
                    modify(e, 0);
                    dynasm!(e.ops ; .arch x64 ; vmovdqa [r14 + scratch_row(row) + 32 * k], ymm0);
                }
                *src = Src::Scratch(row);
            }
        }
    }
    srcs
}

/// `v_permlane16_b32` and `v_permlanex16_b32` as `valu::cross_lane::permlane` runs them: lane `i` of each
/// row of 16 reads src0's lane of the 4-bit select S1 (lanes 0–7) or S2 (8–15) holds for it,
/// within its own row or, `x16`, the other; a lane it may not read (inactive, without `fi`)
/// keeps vdst's value, or reads 0 with `bound_ctrl`. Each eight lanes permuted from the row of
/// 16 they read into the frame's scratch row (src0 and vdst may be one register), then the
/// write in EXEC's lanes.
pub(super) fn permlane(e: &mut Emitter<'_>, op: &VOp) -> bool {
    let operands = &op.operands;
    let plain = operands.neg | operands.abs | operands.omod == 0 && !operands.clamp && op.half == 0;
    let (Source::Vgpr(source), true) = (operands.src[0], plain && operands.dpp.is_none()) else { return false };
    let scalar = |source: Source| matches!(source, Source::Sgpr(_) | Source::Constant(_));
    if source as u32 >= e.vgprs
        || operands.vdst as u32 >= e.vgprs
        || !scalar(operands.src[1])
        || !scalar(operands.src[2])
    {
        return false;
    }
    let (fetch_inactive, bound_ctrl) = (operands.op_sel & 1 == 1, operands.op_sel & 2 == 2);
    let cross = op.opcode == Opcode::VPermlanex16B32;
    let (source, vdst) = (source as i32 * ROW, operands.vdst as i32 * ROW);
    // The selects, broadcast: S1 in ymm9, S2 in ymm10.
    let (Src::Reg(low), Src::Reg(high)) = (place(e, op, 1), place(e, op, 2)) else { unreachable!("scalar selects") };
    let exec = e.exec();
    dynasm!(e.ops
        ; .arch x64
        ; mov eax, 15
        ; vmovd xmm11, eax
        ; vpbroadcastd ymm11, xmm11
    );
    e.broadcast_mask(5, exec);
    for k in 0..4 {
        // Lanes 8k..8k+8: their selects' nibbles (the ramp 0, 4, …, 28 is 4 × the lane's index
        // in its half-row), plus the row they read.
        let select = if k % 2 == 0 { low } else { high };
        let row_read = if (k < 2) != cross { 0 } else { 16 };
        dynasm!(e.ops
            ; .arch x64
            ; vpsrlvd ymm0, Ry(select), [r14 + RAMP]
            ; vpand ymm0, ymm0, ymm11
            ; mov eax, row_read
            ; vmovd xmm1, eax
            ; vpbroadcastd ymm1, xmm1
            ; vpaddd ymm0, ymm0, ymm1
        );
        if fetch_inactive {
            dynasm!(e.ops ; .arch x64 ; vpcmpeqd ymm1, ymm1, ymm1);
        } else {
            dynasm!(e.ops
                ; .arch x64
                ; vpsrlvd ymm1, ymm5, ymm0
                ; vpslld ymm1, ymm1, 31
                ; vpsrad ymm1, ymm1, 31
            );
        }
        // The row read is chunks `row_read / 8` and the next: each permuted (vpermd uses the
        // index's low three bits), the second taken where the index's bit 3 is set (a gather
        // per chunk cost several times as much).
        let first_chunk = source + 4 * row_read;
        dynasm!(e.ops
            ; .arch x64
            ; vpermd ymm2, ymm0, [r13 + first_chunk]
            ; vpermd ymm6, ymm0, [r13 + first_chunk + 32]
            ; vpslld ymm7, ymm0, 28
            ; vblendvps ymm2, ymm2, ymm6, ymm7
        );
        // Where the lane may not read: vdst's value, or 0 with bound_ctrl.
        if bound_ctrl {
            dynasm!(e.ops ; .arch x64 ; vpxor xmm6, xmm6, xmm6);
        } else {
            dynasm!(e.ops ; .arch x64 ; vmovdqu ymm6, [r13 + vdst + 32 * k]);
        }
        dynasm!(e.ops
            ; .arch x64
            ; vblendvps ymm2, ymm6, ymm2, ymm1
            ; vmovdqa [r14 + SCRATCH + 32 * k], ymm2
        );
    }
    e.write_scratch_row(0, vdst);
    true
}

/// DPP on src0 (`operands::DppPlan`, as the interpreter applies it): permutes VGPR `source`
/// into the frame's scratch row, where a lane whose source lane is outside its row (or, without
/// `fi`, inactive) reads 0, and narrows the inactive-lane masks in `ymm12`–`ymm15` to the
/// lanes that may write: not those the row and bank masks disable, nor, without `bound_ctrl`,
/// those that read nothing. The caller restores the masks after the instruction.
///
/// The pattern is known when the code is made, so each chunk of eight lanes is a `vpermd` of
/// each chunk its lanes read (one for DPP8 and most of DPP16, two where a row of 16 crosses
/// chunks), blended, then the unreadable lanes zeroed: a gather per chunk cost several times
/// as much (the DPP reduction's adds were its most expensive instructions).
fn permute(e: &mut Emitter<'_>, dpp: &DppPlan, source: u32) {
    let (row, exec) = (source as i32 * ROW, e.exec());
    for k in 0..4usize {
        let lane = |i: usize| 8 * k + i;
        let from_lane = |i: usize| match dpp.from[lane(i)] {
            INVALID => None,
            from => Some(from as usize & 31),
        };
        let from = e.constant(core::array::from_fn(|i| from_lane(i).map_or(0, |from| from as u32)));
        let valid = e.constant(core::array::from_fn(|i| if from_lane(i).is_some() { u32::MAX } else { 0 }));
        let disabled = e.constant(core::array::from_fn(|i| if dpp.enabled >> lane(i) & 1 == 1 { 0 } else { u32::MAX }));
        let (inactive, scratch) = (12 + k as u8, SCRATCH + 32 * k as i32);
        // The chunks this chunk's lanes read, in order.
        let mut read: Vec<usize> = (0..8).filter_map(|i| from_lane(i).map(|from| from / 8)).collect();
        read.sort_unstable();
        read.dedup();
        dynasm!(e.ops
            ; .arch x64
            ; vmovdqu ymm4, [=>from]
            ; vmovdqu ymm5, [=>valid]
        );
        if !dpp.fetch_inactive {
            // The source lane's EXEC bit, as a lane mask.
            e.broadcast_mask(1, exec);
            dynasm!(e.ops
                ; .arch x64
                ; vpsrlvd ymm1, ymm1, ymm4
                ; vpslld ymm1, ymm1, 31
                ; vpsrad ymm1, ymm1, 31
                ; vpand ymm5, ymm5, ymm1
            );
        }
        // ymm0: each lane's source value (vpermd uses the index's low three bits), chunk by
        // chunk read, each blended in where its lanes read it.
        dynasm!(e.ops ; .arch x64 ; vpxor xmm0, xmm0, xmm0);
        for (position, &chunk) in read.iter().enumerate() {
            let offset = row + 32 * chunk as i32;
            if position == 0 {
                dynasm!(e.ops ; .arch x64 ; vpermd ymm0, ymm4, [r13 + offset]);
                continue;
            }
            let reads_here = e.constant(core::array::from_fn(|i| {
                if from_lane(i).map(|from| from / 8) == Some(chunk) { u32::MAX } else { 0 }
            }));
            dynasm!(e.ops
                ; .arch x64
                ; vpermd ymm2, ymm4, [r13 + offset]
                ; vmovdqu ymm3, [=>reads_here]
                ; vblendvps ymm0, ymm0, ymm2, ymm3
            );
        }
        dynasm!(e.ops
            ; .arch x64
            ; vpand ymm0, ymm0, ymm5
            ; vmovdqa [r14 + scratch], ymm0
            ; vpor Ry(inactive), Ry(inactive), [=>disabled]
        );
        if !dpp.zero_invalid {
            dynasm!(e.ops
                ; .arch x64
                ; vpcmpeqd ymm1, ymm1, ymm1
                ; vpxor ymm1, ymm1, ymm5
                ; vpor Ry(inactive), Ry(inactive), ymm1
            );
        }
    }
}

/// `v_readlane_b32` (the lane src1 names, modulo 32) and `v_readfirstlane_b32` (EXEC's lowest
/// lane, lane 0 when EXEC is empty) of a VGPR row, to the scalar destination, as `valu` runs
/// them in a wave32 wave. False (nothing emitted) for other sources or any modifier.
pub(super) fn read_lane(e: &mut Emitter<'_>, op: &VOp) -> bool {
    let operands = &op.operands;
    let plain = operands.neg | operands.abs | operands.omod | operands.op_sel == 0 && !operands.clamp && op.half == 0;
    let (Source::Vgpr(source), true) = (operands.src[0], plain && operands.dpp.is_none()) else { return false };
    if source as u32 >= e.vgprs {
        return false;
    }
    if op.opcode == Opcode::VReadfirstlaneB32 {
        // TZCNT of an empty EXEC is 32, lane 0 once wrapped.
        dynasm!(e.ops
            ; .arch x64
            ; mov ecx, [r12 + sgpr(EXEC)]
            ; tzcnt ecx, ecx
        );
    } else {
        match operands.src[1] {
            Source::Sgpr(s) if s as u32 == NULL || s >= 128 => dynasm!(e.ops ; .arch x64 ; xor ecx, ecx),
            Source::Sgpr(s) => dynasm!(e.ops ; .arch x64 ; mov ecx, [r12 + sgpr(s as u32)]),
            Source::Constant(value) => dynasm!(e.ops ; .arch x64 ; mov ecx, value as i32),
            Source::Scc => dynasm!(e.ops ; .arch x64 ; movzx ecx, BYTE [r12 + SCC]),
            _ => return false,
        }
    }
    dynasm!(e.ops
        ; .arch x64
        ; and ecx, 31
        ; mov eax, [r13 + rcx * 4 + source as i32 * ROW]
    );
    let target = readlane_destination(op);
    if target != NULL && target < 128 {
        dynasm!(e.ops ; .arch x64 ; mov [r12 + sgpr(target)], eax);
        if target == EXEC {
            e.masks();
        }
    }
    true
}
