//! Where a VALU translation's sources are, eight lanes at a time: a VGPR row, a register
//! holding a broadcast scalar or constant, or one of the frame's scratch rows (a permuted or
//! modified source).

use dynasmrt::{DynasmApi, DynasmLabelApi, dynasm};

use super::emit::{Emitter, ROW, SCC, SCRATCH, sgpr};
use super::frame::Part;
use crate::interp::operands::Source;
use crate::interp::valu::VOp;
use crate::interp::wave::NULL;

/// Where a source's chunk of 8 lanes is: a VGPR row's bytes from `r13`, or a register holding a
/// broadcast scalar.
#[derive(Clone, Copy)]
pub(super) enum Src {
    Row(i32),
    Reg(u8),
    /// Row `n` of the frame's scratch rows (`Frame::scratch`): src0 after DPP's permutation
    /// (row 0), a source with its float modifiers applied (row 1 + its index).
    Scratch(u8),
}

/// The registers a source's broadcast goes to, by source index.
pub(super) const BROADCAST: [u8; 3] = [8, 9, 10];

/// Puts source `index` where chunks read it: broadcasts a scalar or constant into its register.
/// Mask sources are broadcast as they are (the select expands them per chunk).
pub(super) fn place(e: &mut Emitter<'_>, op: &VOp, index: usize) -> Src {
    let reg = BROADCAST[index];
    match op.operands.src[index] {
        Source::Vgpr(v) => return Src::Row(v as i32 * ROW),
        Source::Sgpr(s) | Source::Mask(s) => {
            // A mask reads the running half's part of it; a value reads the same in both.
            let slot = if matches!(op.operands.src[index], Source::Mask(_)) { e.mask_slot(s as u32) } else { s as u32 };
            if s as u32 == NULL || slot >= 128 {
                dynasm!(e.ops ; .arch x64 ; vpxor Rx(reg), Rx(reg), Rx(reg));
            } else if matches!(op.operands.src[index], Source::Mask(_)) {
                e.broadcast_mask(reg, sgpr(slot));
            } else {
                dynasm!(e.ops ; .arch x64 ; vpbroadcastd Ry(reg), [r12 + sgpr(slot)]);
            }
        }
        Source::Scc => broadcast_scc(e, reg),
        Source::Constant(value) => broadcast_constant(e, reg, value as u32),
        // Each half reads its own 32 bits of a constant mask.
        Source::ConstantMask(value) if e.part == Part::Running && value as u32 != (value >> 32) as u32 => {
            // The running half's 32 bits, chosen at run time by `rbx` (0: low, 1: high).
            let done = e.ops.new_dynamic_label();
            dynasm!(e.ops
                ; .arch x64
                ; mov eax, value as u32 as i32
                ; test ebx, ebx
                ; jz =>done
                ; mov eax, (value >> 32) as u32 as i32
                ; =>done
                ; vmovd Rx(reg), eax
                ; vpbroadcastd Ry(reg), Rx(reg)
            );
        }
        Source::ConstantMask(value) => {
            let shift = if e.part == Part::High { 32 } else { 0 };
            broadcast_constant(e, reg, (value >> shift) as u32)
        }
    }
    Src::Reg(reg)
}

/// `ymm(reg)` = `value` in every lane.
pub(super) fn broadcast_constant(e: &mut Emitter<'_>, reg: u8, value: u32) {
    dynasm!(e.ops
        ; .arch x64
        ; mov eax, value as i32
        ; vmovd Rx(reg), eax
        ; vpbroadcastd Ry(reg), Rx(reg)
    );
}

/// `ymm(reg)` = SCC (0 or 1) in every lane.
pub(super) fn broadcast_scc(e: &mut Emitter<'_>, reg: u8) {
    dynasm!(e.ops
        ; .arch x64
        ; movzx eax, BYTE [r12 + SCC]
        ; vmovd Rx(reg), eax
        ; vpbroadcastd Ry(reg), Rx(reg)
    );
}

/// Loads chunk `k` of `src` into `ymm(dst)`, its inactive lanes zeroed where the emitter says
/// so (`Emitter::zero_inactive`; a broadcast is the same in every lane and stays whole).
pub(super) fn load(e: &mut Emitter<'_>, dst: u8, src: Src, k: i32) {
    match src {
        Src::Row(offset) => dynasm!(e.ops ; .arch x64 ; vmovdqu Ry(dst), [r13 + offset + 32 * k]),
        Src::Reg(reg) => dynasm!(e.ops ; .arch x64 ; vmovdqa Ry(dst), Ry(reg)),
        Src::Scratch(n) => dynasm!(e.ops ; .arch x64 ; vmovdqa Ry(dst), [r14 + scratch_row(n) + 32 * k]),
    }
    if e.zero_inactive && !matches!(src, Src::Reg(_)) {
        dynasm!(e.ops ; .arch x64 ; vpandn Ry(dst), Ry(12 + k as u8), Ry(dst));
    }
}

/// The byte offset of the frame's scratch row `n`.
pub(super) fn scratch_row(n: u8) -> i32 {
    SCRATCH + n as i32 * ROW
}
