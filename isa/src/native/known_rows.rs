//! Which LDS loads find their address row already in its shape slot, so that their code skips
//! the test of the row against the slot (`lds.rs`): a tiled GEMM loads from each of its two
//! address rows about eight times between barriers, and the test (four compares of 32 lanes) was
//! a third of each load.
//!
//! A whole-row LDS load leaves its slot (`Frame::row_shapes`, by address VGPR modulo
//! `ROW_SHAPES`) holding its address row whenever EXEC held every lane (the slot is only read
//! then). A later load from the same VGPR finds it there when, on every path between them, the
//! row is not written, no other load takes the slot, EXEC is not written (so where the later
//! load has every lane, the earlier one had too), and the wave neither leaves compiled code
//! (other waves of the workgroup share the frame) nor arrives from elsewhere. This file proves
//! that only for straight-line runs of instructions whose effects are known exactly; anything
//! else forgets every slot.

use super::lds::whole_dword_load;
use super::reach::Reach;
use super::vector::row_only_write;
use crate::gfx11::{Encoding, Opcode};
use crate::interp::DecodedKernel;
use crate::interp::decoded_kernel::{Decoded, Plan};
use crate::interp::wave::VCC;

use super::frame::ROW_SHAPES;

/// Per word of `kernel`: whether the whole-row LDS load starting there finds its address row
/// in its slot. A wave64 kernel's halves each have their own slots (`Frame::row_shapes`) and
/// run the same instructions, each writing its own rows and EXEC word, so what holds for one
/// half's slots holds for the other's. Nothing is known in a kernel with an indirect jump (an
/// instruction may then be arrived at from anywhere), or in unreached code.
pub(super) fn known_rows(kernel: &DecodedKernel, reach: &Reach, vgprs: u32) -> Vec<bool> {
    let words = kernel.words();
    let mut known = vec![false; words];
    if reach.indirect {
        return known;
    }
    // The address VGPR whose row each slot is known to hold here.
    let mut slots: [Option<u32>; ROW_SHAPES] = [None; ROW_SHAPES];
    for index in (0..words).filter(|&index| reach.reached[index]) {
        let Some(decoded) = kernel.at(index) else {
            slots = [None; ROW_SHAPES];
            continue;
        };
        if reach.targets[index] {
            slots = [None; ROW_SHAPES];
        }
        // The rows the instruction writes, or `None` where its effects are not all known.
        let written: Option<Vec<u32>> = if let Some((addr, rows)) = whole_dword_load(decoded, vgprs) {
            let slot = addr as usize % ROW_SHAPES;
            known[index] = slots[slot] == Some(addr);
            slots[slot] = Some(addr);
            Some(rows.collect())
        } else {
            quiet_writes(decoded)
        };
        match written {
            Some(rows) => {
                for slot in &mut slots {
                    if slot.is_some_and(|addr| rows.contains(&addr)) {
                        *slot = None;
                    }
                }
            }
            None => slots = [None; ROW_SHAPES],
        }
    }
    known
}

/// The VGPR rows a non-LDS instruction writes where that is all it does to the state a slot
/// depends on (no EXEC write, no LDS load) and its code always goes on to the next instruction
/// without leaving compiled code: one-row VALU operations (and VOPD pairs of them), and the
/// scalar operations that write a plain SGPR or SCC, or wait. `None` for anything else.
fn quiet_writes(decoded: &Decoded) -> Option<Vec<u32>> {
    use Opcode::*;
    match &decoded.plan {
        Plan::Vector(op) => Some(vec![row_only_write(op)?]),
        Plan::Dual(pair) => Some(vec![row_only_write(&pair.0)?, row_only_write(&pair.1)?]),
        Plan::Scalar => {
            let instruction = &decoded.instruction;
            // SOP2's and SOPK's destination (bits 22:16): below VCC is a plain SGPR.
            let plain_destination = (instruction.words[0] >> 16) & 0x7F < VCC;
            let quiet = match instruction.encoding {
                Encoding::Sop2 => plain_destination,
                Encoding::Sopc => true,
                Encoding::Sopk => match instruction.opcode() {
                    SMovkI32 | SAddkI32 | SMulkI32 => plain_destination,
                    opcode => {
                        matches!(
                            opcode,
                            SCmpkEqI32
                                | SCmpkLgI32
                                | SCmpkGtI32
                                | SCmpkGeI32
                                | SCmpkLtI32
                                | SCmpkLeI32
                                | SCmpkEqU32
                                | SCmpkLgU32
                                | SCmpkGtU32
                                | SCmpkGeU32
                                | SCmpkLtU32
                                | SCmpkLeU32
                                | SWaitcntVscnt
                                | SWaitcntVmcnt
                                | SWaitcntExpcnt
                                | SWaitcntLgkmcnt
                        )
                    }
                },
                Encoding::Sopp => matches!(instruction.opcode(), SWaitcnt | SDelayAlu | SNop | SClause),
                _ => false,
            };
            quiet.then(Vec::new)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::{Isa, Regions};

    /// The words of `known_rows` for `code` (gfx11, then `s_endpgm`) as a kernel of 16 VGPRs,
    /// wave32 or wave64: the byte offsets into `code` of the loads it finds known.
    fn known_offsets(code: &[u32], wave32: bool) -> Vec<usize> {
        // A kernel descriptor (AMDGPUUsage): the code 64 bytes on, 16 VGPRs (two granules of 8
        // in wave32, four of 4 in wave64).
        let mut image = vec![0u32; 16];
        image[4] = 64;
        image[12] = if wave32 { 1 } else { 3 };
        image[14] = if wave32 { 1 << 10 } else { 0 };
        image.extend_from_slice(code);
        image.push(0xBFB0_0000);
        let memory = Regions(vec![(image.as_ptr() as u64, image.len() as u64 * 4)]);
        let kernel = DecodedKernel::load_for(&memory, image.as_ptr() as u64, Isa::Gfx11).expect("the kernel decodes");
        let reach = super::super::reach::reachable(&kernel);
        let vgprs = (kernel.descriptor.vgprs() + kernel.extra_vgprs) as u32;
        let known = known_rows(&kernel, &reach, vgprs);
        known.iter().enumerate().filter(|(_, known)| **known).map(|(index, _)| 4 * index).collect()
    }

    /// `ds_load_b32 vdst, vaddr offset:offset` (DS opcode 54).
    fn load(vdst: u32, vaddr: u32, offset: u32) -> [u32; 2] {
        [0xD8D8_0000 | offset, vdst << 24 | vaddr]
    }

    #[test]
    fn a_load_knows_its_row_only_while_nothing_else_could_have_changed_the_slot() {
        let code: Vec<u32> = [
            &load(1, 0, 0)[..], // 0: first through v0
            &[0x4A04_0702],     // 8: v_add_nc_u32 v2, v2, v3 (another row)
            &load(4, 0, 4),     // 12: known
            &[0x7E00_0305],     // 20: v_mov_b32 v0, v5 (the address row written)
            &load(6, 0, 0),     // 24: not known
            &load(7, 0, 0),     // 32: known
            &[0xBEFE_0000],     // 40: s_mov_b32 exec_lo, s0 (EXEC written)
            &load(8, 0, 0),     // 44: not known
            &load(9, 4, 0),     // 52: v4 takes v0's slot (4 slots): not known
            &load(10, 0, 0),    // 60: not known (the slot holds v4's row)
            &load(0, 0, 0),     // 68: known; it loads into its own address row
            &load(11, 0, 0),    // 76: so not known
        ]
        .concat();
        assert_eq!(known_offsets(&code, true), vec![12, 32, 68]);
        // wave64: each half has its own slots and runs the same code, so the same loads.
        assert_eq!(known_offsets(&code, false), vec![12, 32, 68]);
    }

    #[test]
    fn a_branch_target_and_an_indirect_jump_know_nothing() {
        // s_cbranch_scc0 0 (SOPP 33): its target is the next instruction, arrived at from it
        // either way, but a target all the same.
        let branch: Vec<u32> = [&load(1, 0, 0)[..], &[0xBFA1_0000], &load(2, 0, 0), &load(3, 0, 0)].concat();
        assert_eq!(known_offsets(&branch, true), vec![20], "the load at the target (12) is not known");
        let straight: Vec<u32> = [&load(1, 0, 0)[..], &load(2, 0, 0)].concat();
        assert_eq!(known_offsets(&straight, true), vec![8]);
        assert_eq!(known_offsets(&straight, false), vec![8], "wave64's halves each in their own slots");
        // s_setpc_b64 s[0:1] (SOP1 72) after the loads, never reached before them.
        let indirect: Vec<u32> = [&straight[..], &[0xBE80_4800]].concat();
        assert_eq!(known_offsets(&indirect, true), Vec::<usize>::new(), "an indirect jump may land anywhere");
    }
}
