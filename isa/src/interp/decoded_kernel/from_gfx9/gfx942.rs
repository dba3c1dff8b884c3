//! gfx942's 64-bit VALU operations, which gfx11 lacks; clang uses both for address arithmetic
//! and copies on gfx942, in nearly every kernel that indexes memory.
//!
//! - `v_lshl_add_u64`: `D.u64 = (S0.u64 << S1.u32[2:0]) + S2.u64` (MI300 ISA guide, VOP3
//!   opcode 520; LLVM selects it for a 64-bit add of a value shifted left by 0–4,
//!   `llvm/test/CodeGen/AMDGPU/lshl-add-u64.ll`). It runs as [`Plan::ShiftAdd64`] on two
//!   stand-ins whose operands read its sources with the right widths: gfx11's
//!   `v_lshlrev_b64 vdst, S1, S0` gives the 32-bit shift and the 64-bit value (an inline
//!   constant widened as a 64-bit integer), and `v_lshlrev_b64 vdst, 0, S2` the 64-bit addend.
//! - `v_mov_b64` (VOP1 opcode 56, and its VOP3 form): gfx11's `v_lshlrev_b64 vdst, 0, S0`,
//!   which moves the 64-bit source unchanged.

use super::vector::vector_op;
use super::{NUMBERING, Plan, Refusal};
use crate::gfx9;
use crate::gfx11::{self, Opcode as O11};
use crate::interp::decoded_kernel::reencode::Vop3;
use crate::interp::valu::VOp;
use crate::interp::wave::{LANES, Wave};

/// The inline constant 0 and the literal (the SSRC table).
const ZERO: u32 = 128;
const LITERAL: u32 = 255;

/// Plans gfx942's `v_lshl_add_u64` (VOP3: vdst [7:0], src0/src1/src2 [8:0]/[17:9]/[26:18] of
/// the second dword); its modifier fields must be clear, as LLVM's assembler makes them.
pub(super) fn lshl_add_u64(instruction: &gfx9::Instruction) -> Result<(gfx11::Instruction, Plan), Refusal> {
    let [w0, w1, _] = instruction.words;
    // abs [10:8], op_sel [14:11], clamp 15; omod [28:27], neg [31:29].
    if w0 >> 8 & 0xFF != 0 || w1 >> 27 != 0 {
        return Err(Refusal("v_lshl_add_u64 with modifiers"));
    }
    let field = |shift: u32| (NUMBERING.source)(w1 >> shift & 0x1FF);
    let (value, shift, addend) = (field(0)?, field(9)?, field(18)?);
    let vdst = w0 & 0xFF;
    let shifted = Vop3 { vdst, src: [shift, value, 0], ..Vop3::default() }.encode(O11::VLshlrevB64)?;
    let added = Vop3 { vdst, src: [ZERO, addend, 0], ..Vop3::default() }.encode(O11::VLshlrevB64)?;
    let pair = (vector_op(&shifted)?, vector_op(&added)?);
    Ok((shifted, Plan::ShiftAdd64(Box::new(pair))))
}

/// Re-encodes `v_mov_b64` (VOP1: src0 [8:0], vdst [24:17], a literal after it; VOP3 as in
/// [`lshl_add_u64`]) as gfx11's `v_lshlrev_b64 vdst, 0, src0`. Its DPP form is refused.
pub(super) fn mov_b64(instruction: &gfx9::Instruction) -> Result<(gfx11::Instruction, Plan), Refusal> {
    let [w0, w1, _] = instruction.words;
    let (vdst, field, literal) = match (instruction.encoding, instruction.extension) {
        (gfx9::Encoding::Vop1, gfx9::Extension::None) => (w0 >> 17 & 0xFF, w0 & 0x1FF, Some(w1)),
        (gfx9::Encoding::Vop3, _) if w0 >> 8 & 0xFF == 0 && w1 >> 27 == 0 => (w0 & 0xFF, w1 & 0x1FF, None),
        _ => return Err(Refusal("v_mov_b64 with DPP or modifiers")),
    };
    let literal = literal.filter(|_| field == LITERAL);
    let src = [ZERO, (NUMBERING.source)(field)?, 0];
    let moved = Vop3 { vdst, src, literal, ..Vop3::default() }.encode(O11::VLshlrevB64)?;
    let plan = Plan::of(&moved);
    Ok((moved, plan))
}

/// Runs a [`Plan::ShiftAdd64`] for the running half: both stand-ins' sources are read before
/// vdst is written, in each lane EXEC enables.
pub(crate) fn shift_add_step(wave: &mut Wave, shifted: &VOp, added: &VOp) {
    let (shift, value) = (shifted.operands.row(wave, 0), shifted.operands.row64(wave, 1));
    let addend = added.operands.row64(wave, 1);
    let exec = wave.exec();
    for lane in (0..LANES).filter(|lane| exec >> lane & 1 == 1) {
        let sum = (value[lane] << (shift[lane] & 7)).wrapping_add(addend[lane]);
        wave.write_vgpr64(u32::from(shifted.operands.vdst), lane, sum);
    }
}
