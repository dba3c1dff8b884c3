//! A wave64 instruction whose two halves must both read a scalar source before either writes
//! the lane mask that source lies in.
//!
//! A wave64 wave runs a per-half VALU instruction twice (`launch::per_half`), and each half
//! writes its own 32 bits of a mask destination as it runs: the low half `s[n]`, the high half
//! `s[n+1]` (`Wave::mask_register`). Hardware reads every operand before it writes any, so an
//! instruction such as clang's `v_mad_u64_u32 v[0:1], s[2:3], s2, v2, v[0:1]` (the carry-out to
//! `s[2:3]`, the multiplier in `s2`, as gfx9 code computes a work-item's global id) must see the
//! old `s2` in both halves. Run half by half, the high half would read the low half's carry
//! mask instead. Such an instruction is planned as [`Plan::BothHalves`]: it runs once for the
//! wave, both halves inside one step (`launch::both_halves`), and the low half's mask word is
//! written only after the high half has read its sources.
//!
//! Instructions whose scalar sources do not overlap their mask destination (nearly all) keep
//! their own plan, so nothing is added to the common path.

use super::{Decoded, Plan};
use crate::gfx11::{Instruction, Slot};
use crate::interp::operands::Source;
use crate::interp::valu::{Form, VOp};
use crate::interp::wave;

/// Replaces the plan of each instruction of wave64 code whose low half's mask write would
/// reach a scalar source of its high half with [`Plan::BothHalves`] around it.
pub(crate) fn guard(code: &mut [Option<Decoded>]) {
    for decoded in code.iter_mut().flatten() {
        let Some(register) = overlapping_mask(&decoded.plan, &decoded.instruction) else { continue };
        let plan = core::mem::replace(&mut decoded.plan, Plan::Unsupported);
        let inner = Decoded { instruction: decoded.instruction, plan, len: decoded.len, source: decoded.source };
        decoded.plan = Plan::BothHalves(Box::new((inner, register)));
    }
}

/// The SGPR a per-half plan's low half writes its mask word to, where a source the instruction
/// reads (one its gfx11 entry names) is read by the high half from that SGPR: a scalar source
/// that is that SGPR, or a 64-bit one whose pair holds it, or a mask source whose high word it
/// is. A mask source equal to the destination (a carry-in pair that is also the carry-out) is no
/// hazard: each half reads and writes its own word. `None` otherwise.
fn overlapping_mask(plan: &Plan, instruction: &Instruction) -> Option<u8> {
    let op: &VOp = match plan {
        Plan::Vector(op) => op,
        Plan::ZeroHigh(op) | Plan::CmpxMask(op) => op,
        Plan::Unfused(mad) => &mad.0,
        Plan::Dot2x16(dot) => &dot.0,
        _ => return None,
    };
    let register = mask_destination(op)?;
    // Each source's register count, where the instruction reads it at all (an unused field may
    // decode as any register).
    let widths = [0, 1, 2].map(|index| {
        instruction.entry.slots.iter().find_map(|slot| match (slot, index) {
            (Slot::Src0(width), 0) | (Slot::Src1(width), 1) | (Slot::Src2(width), 2) => Some(*width),
            _ => None,
        })
    });
    op.operands
        .src
        .iter()
        .zip(widths)
        .any(|(source, width)| match (*source, width) {
            (Source::Sgpr(first), Some(width)) => first == register || (width > 1 && first + 1 == register),
            (Source::Mask(first), Some(_)) => first + 1 == register,
            _ => false,
        })
        .then_some(register)
}

/// The SGPR `op` writes the running half's mask word to (`n` for the low half), if it writes
/// a mask other than EXEC: compares, and the carry-out operations (RDNA3 ISA guide, VOP3b).
fn mask_destination(op: &VOp) -> Option<u8> {
    use crate::gfx11::Opcode::*;
    let writes_mask = match op.form {
        Form::Compare { into_exec, .. } => !into_exec,
        Form::Alu => matches!(
            op.opcode,
            VAddCoU32
                | VSubCoU32
                | VSubrevCoU32
                | VAddCoCiU32
                | VSubCoCiU32
                | VSubrevCoCiU32
                | VMadU64U32
                | VMadI64I32
                | VDivScaleF32
                | VDivScaleF64
        ),
    };
    let register = op.operands.sdst;
    (writes_mask && u32::from(register) != wave::NULL && u32::from(register) != wave::EXEC).then_some(register)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compiled::Tier;
    use crate::interp::decoded_kernel::{DecodedKernel, Isa};
    use crate::interp::{Dispatch, Regions};

    /// gfx11 wave64 code whose carry-out pair `s[2:3]` holds its multiplier `s2`: every lane
    /// computes 0x8000_0000 × 2 + (0xFFFF_FFFF << 32 | lane), which carries out, so the result is
    /// `lane` and both mask words are all ones. Were the high half to read the low half's mask
    /// as its multiplier, its lanes would get 0xFFFF_FFFE + lane. Rows 0–2 of the output: v0,
    /// then s2 and s3 as each lane saw them after the instruction.
    const CARRY_INTO_SOURCE: &[u32] = &[
        0xBE8400FF, 0x11111111, // s_mov_b32 s4, 0x11111111
        0xBE8500FF, 0x22222222, // s_mov_b32 s5, 0x22222222
        0x30060082, // v_lshlrev_b32_e32 v3, 2, v0
        0xBE8200FF, 0x80000000, // s_mov_b32 s2, 0x80000000
        0x7E040282, // v_mov_b32_e32 v2, 2
        0x7E0202C1, // v_mov_b32_e32 v1, -1
        0xD6FE0200, 0x04020402, // v_mad_u64_u32 v[0:1], s[2:3], s2, v2, v[0:1]
        0x7E080202, // v_mov_b32_e32 v4, s2
        0x7E0A0203, // v_mov_b32_e32 v5, s3
        0xDC6A0000, 0x00040003, // global_store_b32 v3, v0, s[4:5]
        0xDC6A0100, 0x00040403, // global_store_b32 v3, v4, s[4:5] offset:256
        0xDC6A0200, 0x00040503, // global_store_b32 v3, v5, s[4:5] offset:512
        0xBFB00000, // s_endpgm
    ];

    fn run(tier: Tier) -> (Vec<u32>, bool) {
        let out = vec![0u32; 3 * 64];
        let address = out.as_ptr() as u64;
        let mut image = vec![0u32; 16];
        image[4] = 64; // kernel_code_entry_byte_offset
        image[12] = 7; // COMPUTE_PGM_RSRC1: 8 VGPR granules
        image.extend(CARRY_INTO_SOURCE.iter().map(|&word| match word {
            0x1111_1111 => address as u32,
            0x2222_2222 => (address >> 32) as u32,
            other => other,
        }));
        let memory = Regions(vec![(image.as_ptr() as u64, image.len() as u64 * 4), (address, out.len() as u64 * 4)]);
        let kernel = DecodedKernel::load_for(&memory, image.as_ptr() as u64, Isa::Gfx11).expect("the kernel decodes");
        let guarded = (0..kernel.words())
            .filter(|&index| kernel.at(index).is_some_and(|decoded| matches!(decoded.plan, Plan::BothHalves(_))))
            .count();
        let dispatch = Dispatch { instruction_limit: 100, tier, ..Dispatch::new(&kernel, [64, 1, 1], [64, 1, 1]) };
        crate::run_workgroup(&dispatch, &memory, [0; 3], &mut Vec::new()).expect("the kernel runs");
        (out, guarded == 1)
    }

    #[test]
    fn both_halves_read_a_scalar_source_before_the_low_half_writes_its_mask_word_over_it() {
        for tier in [Tier::Interpreter, Tier::Auto] {
            let (out, guarded) = run(tier);
            assert!(guarded, "exactly the v_mad_u64_u32 is planned as BothHalves");
            let lanes: Vec<u32> = (0..64).collect();
            assert_eq!(out[..64], lanes, "{tier:?}: v0");
            assert!(out[64..].iter().all(|&word| word == u32::MAX), "{tier:?}: s2 and s3 {:x?}", &out[64..]);
        }
    }
}
