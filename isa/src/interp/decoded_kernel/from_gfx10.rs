//! gfx10.3 (RDNA2, wave32 and wave64) code on the gfx11 interpreter: each decoded gfx10 instruction is
//! re-encoded as the gfx11 instruction that computes the same thing, which is then planned and
//! run as gfx11 code (`DecodedKernel::load_for` with [`Isa::Gfx10_3`](super::Isa)).
//!
//! Why translate rather than interpret gfx10 directly: the two ISAs share their operations and
//! nearly all their field layouts, and the gfx11 machinery (planning, rows, modifiers, DPP,
//! memory) is tested against compiler output; a second interpreter would duplicate all of it.
//!
//! The operation pairs are `gfx10::Opcode::gfx11_equivalent` (LLVM 19's names for the same
//! operation on each target). The field layouts compared are the two decoders' (`gfx10/decode.rs`
//! and `gfx10/format.rs` from the RDNA2 ISA guide, chapter 13; `gfx11/decode.rs` and
//! `gfx11/format.rs` from the RDNA3 ISA guide, chapter 15; both checked against `llvm-mc-19`).
//! What differs, and what is done here:
//!
//! - **Scalar operand numbers.** gfx10 numbers `m0` 124 and `null` 125, gfx11 the reverse
//!   (`gfx10/fields.rs`, `gfx11/fields.rs`): every scalar field is renumbered ([`scalar`]):
//!   SOP sdst and sources, SMEM sdata and soffset, VALU sources, VOP3 sdst and scalar vdst,
//!   `v_readfirstlane`'s destination, FLAT/GLOBAL/SCRATCH saddr (gfx10's `off` is its null,
//!   0x7D; gfx11's 0x7C), MUBUF soffset. gfx10's `src_vccz`, `src_execz`, `src_lds_direct` and
//!   `src_pops_exiting_wave_id` have no gfx11 value and are refused.
//! - **SMEM:** glc moves from bit 16 to 14 and dlc from 14 to 13; the offset and soffset dwords
//!   are laid out alike.
//! - **FLAT/GLOBAL/SCRATCH:** the segment moves from bits 15:14 to 17:16, glc/slc/dlc from
//!   16/17/12 to 14/15/13; GLOBAL's and SCRATCH's signed offset widens from 12 to 13 bits.
//!   gfx10 SCRATCH addresses by the VGPR when saddr is `off` (and by neither when it is 0x7F);
//!   gfx11 says so with its SVE bit (23 of the second dword). The LDS bit (gfx10's 13) is
//!   refused.
//! - **MUBUF:** offen and idxen move from the first dword's bits 12/13 to the second's 22/23,
//!   glc/dlc/slc from 14/15/(second dword) 22 to 14/13/12. LDS, TFE and a literal soffset are
//!   refused.
//! - **VOP1/VOP2/VOPC, VOP3, VOP3P, DS, DPP16, DPP8:** laid out alike; only the opcode numbers
//!   differ (VOP3's promoted VOPC/VOP2/VOP1 included: the gfx11 VOP3 entry of the operation is
//!   looked up, [`gfx11::entry_of`]). One difference in meaning: a gfx11 VOP1/VOP2/VOPC 16-bit
//!   operand names a half register (bit 7 of the VGPR number is the high half, RDNA3 ISA guide
//!   "16-bit VGPRs"), a gfx10 one the whole register's low half. Such an instruction that names a
//!   VGPR above v127 becomes its VOP3 form.
//! - **DS compare-store:** gfx10's `ds_cmpst_*` take the comparand in DATA0 and the new value in
//!   DATA1, gfx11's `ds_cmpstore_*` the reverse (RDNA2 and RDNA3 ISA guides, DS_CMPST_B32 and
//!   DS_CMPSTORE_B32): the two fields swap.
//! - **`s_waitcnt`:** re-laid out (gfx10: vmcnt 3:0 and 15:14, expcnt 6:4, lgkmcnt 13:8; gfx11:
//!   vmcnt 15:10, lgkmcnt 9:4, expcnt 2:0), though the interpreter's waits are no-ops.
//! - **`s_getreg`/`s_setreg`:** hardware register ids pass where both ISAs give the id the same
//!   register (LLVM's `HW_REG_*` tables for each, printed by the two formatters: MODE is 1 and
//!   SHADER_CYCLES 29 on both); ids that name different registers (16–19, 25, 27) are refused.
//! - **`s_sendmsg`:** only `MSG_INTERRUPT` (1 on both) passes; gfx10's other messages are
//!   graphics or system messages whose numbers gfx11 reuses (3 is gfx10's `MSG_GS_DONE` and
//!   gfx11's `MSG_DEALLOC_VGPRS`).
//! - **gfx10-only operations:** `s_memtime` and `s_memrealtime` read the agent's clock as
//!   gfx11's `s_sendmsg_rtn_b64 MSG_RTN_GET_REALTIME` does (the interpreter has the one clock);
//!   the signed integer dot products `v_dot4_i32_i8`, `v_dot8_i32_i4` and `v_dot4c_i32_i8`
//!   become gfx11's `v_dot4_i32_iu8`/`v_dot8_i32_iu4` with `neg_lo:[1,1,0]` (both operands
//!   signed; `v_dot4c` accumulates into its destination, so that is also src2); the 16-bit ones
//!   (`v_dot2_i32_i16`, `v_dot2_u32_u16`), which gfx11 lacks, run in [`dot2_16`].
//! - **SDWA:** translated to VOP3 where it means a VOP3 operand selection: whole-dword selects,
//!   or a 16-bit operation's WORD_0/WORD_1 sources (op_sel), its WORD_0/WORD_1 destination with
//!   UNUSED_PRESERVE (op_sel), or its DWORD destination. (For that last one the high half is
//!   kept, as gfx11's VOP3 does; LLVM treats the high bits of a gfx10 16-bit result as
//!   undefined, `GCNSubtarget::zeroesHigh16BitsOfDest`, so compiled code never reads them.)
//!   Byte selects, sign extension, padding or sign-extending a half destination are refused.
//!
//! A refused instruction (or one gfx11 lacks) loads as [`Plan::Unsupported`]: reaching it is
//! `ExecError::Unsupported` naming the gfx10 mnemonic, never a silent result.
//!
//! Instruction lengths may change (`s_memtime`'s two dwords become one; a promoted VOP2 grows
//! to VOP3's two), so the kernel keeps each instruction's gfx10 length for the program counter
//! ([`Decoded::len`]).

mod sdwa;

// gfx9's SDWA is laid out as gfx10's: `from_gfx9` uses the same forms and plans.
pub(crate) use sdwa::{
    Form as SdwaForm, SHADOW_VGPRS, Sdwa, Written as SdwaWritten, form_of as sdwa_form_of, planned as sdwa_planned,
    step as sdwa_step,
};

use super::super::AtomicOp;
pub(crate) use super::reencode::Refusal;
use super::reencode::{self, E32, E32Form, NULL, Numbering, Vop3, encode, placeholder, sign_extend};
use super::{Decoded, Plan};
use crate::gfx10::{self, Extension};
use crate::gfx11;
use crate::gfx11::{Encoding as E11, Opcode as O11, Slot};
use crate::interp::valu::VOp;
use crate::interp::wave::{Flow, LANES, Wave};

/// gfx10's `null` (`off` for FLAT/GLOBAL/SCRATCH saddr and SMEM soffset).
const NULL_10: u32 = 125;

/// gfx10's operand numbers as gfx11's ([`scalar`], [`source`]).
const NUMBERING: Numbering = Numbering { scalar: |field| Ok(scalar(field)), source };

/// The instruction the wave loop runs for `instruction`, with its plan: its gfx11 translation
/// planned as gfx11 code, `dot2_16`'s or an SDWA plan, or `Plan::Unsupported`. An SDWA plan's
/// shadow VGPRs start at `shadow` (the first past the kernel's own).
pub(crate) fn decoded(instruction: &gfx10::Instruction, shadow: u16) -> Decoded {
    let source = Some(instruction.entry.mnemonic);
    let len = instruction.len() as u8;
    let equivalent = instruction.opcode().gfx11_equivalent();
    let planned = match (instruction.opcode(), instruction.extension, equivalent) {
        (gfx10::Opcode::VDot2I32I16 | gfx10::Opcode::VDot2U32U16, _, _) => {
            dot2_16_stand_in(instruction).and_then(|stand_in| {
                let op = VOp::plan(&stand_in).ok_or(Refusal("the operands do not resolve"))?;
                let signed = instruction.opcode() == gfx10::Opcode::VDot2I32I16;
                Ok((stand_in, Plan::Dot2x16(Box::new((op, signed)))))
            })
        }
        (_, Extension::Sdwa, Some(equivalent)) => {
            sdwa::form(instruction, equivalent).and_then(|form| sdwa::planned(&form, shadow))
        }
        (opcode, _, None) if let Some((stand_in, op)) = float64_atomic(opcode) => {
            let translated = match instruction.encoding {
                gfx10::Encoding::Mubuf => mubuf(instruction, stand_in),
                _ => flat(instruction, stand_in),
            };
            translated.and_then(|translated| reencode::wide_atomic(translated, op))
        }
        _ => translate(instruction).map(|translated| (translated, Plan::of(&translated))),
    };
    match planned {
        Ok((instruction, plan)) => Decoded { instruction, plan, len, source },
        Err(_) => Decoded { instruction: placeholder(), plan: Plan::Unsupported, len, source },
    }
}

/// gfx10's f64 float atomics, which gfx11 dropped: the gfx11 64-bit integer atomic with the same
/// operands that stands in for each (its words and register use), and the operation it runs
/// instead (RDNA2 ISA guide: `*_ATOMIC_FCMPSWAP_X2`, `FMIN_X2`, `FMAX_X2`).
fn float64_atomic(opcode: gfx10::Opcode) -> Option<(O11, AtomicOp)> {
    use gfx10::Opcode::*;
    Some(match opcode {
        FlatAtomicFcmpswapX2 => (O11::FlatAtomicCmpswapB64, AtomicOp::CompareSwapFloat),
        FlatAtomicFminX2 => (O11::FlatAtomicMinU64, AtomicOp::MinFloat),
        FlatAtomicFmaxX2 => (O11::FlatAtomicMaxU64, AtomicOp::MaxFloat),
        GlobalAtomicFcmpswapX2 => (O11::GlobalAtomicCmpswapB64, AtomicOp::CompareSwapFloat),
        GlobalAtomicFminX2 => (O11::GlobalAtomicMinU64, AtomicOp::MinFloat),
        GlobalAtomicFmaxX2 => (O11::GlobalAtomicMaxU64, AtomicOp::MaxFloat),
        BufferAtomicFcmpswapX2 => (O11::BufferAtomicCmpswapB64, AtomicOp::CompareSwapFloat),
        BufferAtomicFminX2 => (O11::BufferAtomicMinU64, AtomicOp::MinFloat),
        BufferAtomicFmaxX2 => (O11::BufferAtomicMaxU64, AtomicOp::MaxFloat),
        _ => return None,
    })
}

/// The gfx11 instruction that computes what `instruction` computes, or why there is none.
pub(crate) fn translate(instruction: &gfx10::Instruction) -> Result<gfx11::Instruction, Refusal> {
    use gfx10::Encoding as E10;
    let opcode = instruction.opcode();
    match opcode {
        gfx10::Opcode::SMemtime | gfx10::Opcode::SMemrealtime => return clock(instruction),
        gfx10::Opcode::VDot4I32I8 => return signed_dot(instruction, O11::VDot4I32Iu8),
        gfx10::Opcode::VDot8I32I4 => return signed_dot(instruction, O11::VDot8I32Iu4),
        gfx10::Opcode::VDot4cI32I8 => return dot4c(instruction),
        // Clears the exception status the interpreter does not keep: gfx11's v_nop.
        gfx10::Opcode::VClrexcp => return encode(E11::Vop1, O11::VNop, [0x7E00_0000, 0, 0]),
        _ => {}
    }
    let equivalent = opcode.gfx11_equivalent().ok_or(Refusal("gfx11 has no such operation"))?;
    match instruction.encoding {
        E10::Sop2 | E10::Sopc | E10::Sop1 => sop(instruction, equivalent),
        E10::Sopk => sopk(instruction, equivalent),
        E10::Sopp => sopp(instruction, equivalent),
        E10::Smem => smem(instruction, equivalent),
        E10::Vop1 | E10::Vop2 | E10::Vopc => match instruction.extension {
            Extension::Sdwa => {
                let form = sdwa::form(instruction, equivalent)?;
                if form.sources != [None, None] || form.destination.is_some() {
                    return Err(Refusal("SDWA selects gfx11's VOP3 cannot make (they run as an SDWA plan)"));
                }
                Ok(form.vop3)
            }
            _ => vop_e32(instruction, equivalent),
        },
        E10::Vop3 => vop3(instruction, equivalent),
        E10::Vop3p => vop3p(instruction, equivalent),
        E10::Ds => ds(instruction, equivalent),
        E10::Flat | E10::Global | E10::Scratch => flat(instruction, equivalent),
        E10::Mubuf => mubuf(instruction, equivalent),
    }
}

/// A scalar register field renumbered: gfx10's `m0` (124) is gfx11's 125, gfx10's `null` (125)
/// gfx11's 124; everything else keeps its number.
fn scalar(field: u32) -> u32 {
    match field {
        124 => 125,
        125 => 124,
        other => other,
    }
}

/// An 8-bit SSRC or 9-bit SRC field: scalar registers renumbered; inline constants, apertures,
/// SCC, the literal marker and VGPRs are numbered alike on both (RDNA2 and RDNA3 ISA guides,
/// the SRC operand tables).
fn source(field: u32) -> Result<u32, Refusal> {
    match field {
        0..=127 => Ok(scalar(field)),
        239 | 251 | 252 | 254 => {
            Err(Refusal("a gfx10-only source (src_pops_exiting_wave_id, src_vccz, src_execz, src_lds_direct)"))
        }
        other => Ok(other),
    }
}

/// The gfx10 encoding's gfx11 namesake (every encoding here has one).
fn same_encoding(instruction: &gfx10::Instruction) -> E11 {
    instruction.encoding.gfx11()
}

/// SOP2, SOPC, SOP1: laid out alike on both ([`reencode::sop`]).
fn sop(instruction: &gfx10::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    let reads_ssrc0 = instruction.entry.slots.iter().any(|slot| matches!(slot, Slot::Ssrc0(_)));
    let (encoding, w0, literal) = (same_encoding(instruction), instruction.words[0], instruction.literal());
    reencode::sop(encoding, w0, literal, reads_ssrc0, equivalent, NUMBERING)
}

/// Hardware register ids LLVM gives the same register on gfx10 and gfx11 (`gfx10/format.rs` and
/// `gfx11/format.rs`, `Hwreg`) whose fields the interpreter reads as gfx11 lays them out
/// (`interp/hw_registers.rs`): MODE, STATUS, TRAPSTS, LDS_ALLOC, IB_STS, SH_MEM_BASES,
/// FLAT_SCR_LO/HI, HW_ID1/2, SHADER_CYCLES. HW_ID1's SE_ID is 19:18 on gfx10, 20:18 on gfx11
/// (AMD's embers `hwid.h`): alike for the at most 4 engines of a gfx10.3 agent. GPR_ALLOC (5)
/// is refused: its VGPR_SIZE is 13:8 on gfx10 and 19:12 on gfx11 (`cwsr_trap_handler_gfx10.asm`).
const SAME_HWREGS: [u32; 11] = [1, 2, 3, 6, 7, 15, 20, 21, 23, 24, 29];

/// SOPK: sdst [22:16], simm16 [15:0] (`s_setreg_imm32_b32`'s literal follows).
fn sopk(instruction: &gfx10::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    let w0 = instruction.words[0];
    let simm = w0 & 0xFFFF;
    if matches!(equivalent, O11::SGetregB32 | O11::SSetregB32 | O11::SSetregImm32B32)
        && !SAME_HWREGS.contains(&(simm & 0x3F))
    {
        return Err(Refusal("a hardware register gfx11 numbers differently"));
    }
    let out = (w0 & 0xF000_0000) | scalar((w0 >> 16) & 0x7F) << 16 | simm;
    encode(E11::Sopk, equivalent, [out, instruction.literal().unwrap_or(0), 0])
}

/// SOPP: simm16 [15:0]; `s_waitcnt` and `s_sendmsg` re-laid out or checked.
fn sopp(instruction: &gfx10::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    let w0 = instruction.words[0];
    let simm = w0 & 0xFFFF;
    let simm = match equivalent {
        O11::SWaitcnt => reencode::waitcnt((simm & 0xF) | ((simm >> 14) & 3) << 4, (simm >> 4) & 7, (simm >> 8) & 0x3F),
        O11::SSendmsg | O11::SSendmsghalt => reencode::sendmsg(simm)?,
        _ => simm,
    };
    encode(E11::Sopp, equivalent, [(w0 & 0xFFFF_0000) | simm, 0, 0])
}

/// SMEM: gfx10 sbase [5:0], sdata [12:6], dlc 14, glc 16; offset [52:32], soffset [63:57]
/// (RDNA2 ISA guide 13.2). gfx11: dlc 13, glc 14, the rest alike (RDNA3 ISA guide 15.2).
fn smem(instruction: &gfx10::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    let [w0, w1, _] = instruction.words;
    let (glc, dlc) = ((w0 >> 16) & 1, (w0 >> 14) & 1);
    let out0 = 0x3D << 26 | glc << 14 | dlc << 13 | scalar((w0 >> 6) & 0x7F) << 6 | (w0 & 0x3F);
    let out1 = (w1 & 0x1F_FFFF) | scalar(w1 >> 25) << 25;
    encode(E11::Smem, equivalent, [out0, out1, 0])
}

/// `s_memtime`/`s_memrealtime sdata`: [`reencode::clock`]. `s_memtime` is the shader clock on
/// gfx10; the interpreter's one clock serves both.
fn clock(instruction: &gfx10::Instruction) -> Result<gfx11::Instruction, Refusal> {
    reencode::clock(scalar((instruction.words[0] >> 6) & 0x7F))
}

/// VOP1/VOP2/VOPC with a literal or a DPP16/DPP8 word: laid out alike on both
/// ([`reencode::vop_e32`]).
fn vop_e32(instruction: &gfx10::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    let form = E32Form {
        encoding: same_encoding(instruction),
        w0: instruction.words[0],
        slots: instruction.entry.slots,
        literal: instruction.literal(),
        dpp: instruction.extension_word(),
    };
    reencode::vop_e32(&form, equivalent, NUMBERING)
}

/// The fields of a gfx10 VOP1/VOP2/VOPC instruction ([`E32::of`]).
fn e32_of(instruction: &gfx10::Instruction) -> Result<E32, Refusal> {
    let vopc = instruction.encoding == gfx10::Encoding::Vopc;
    let extended = instruction.extension != Extension::None;
    E32::of(instruction.words[0], vopc, instruction.entry.slots, extended, NUMBERING)
}

/// VOP3 (RDNA2 ISA guide 13.3.4; RDNA3 ISA guide 15.3.4): laid out alike; renumbered are the
/// sources, VOP3B's sdst [14:8] and a scalar vdst [7:0] (`v_cmp*_e64`, `v_readlane_b32`).
fn vop3(instruction: &gfx10::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    let [w0, w1, _] = instruction.words;
    let out0 = reencode::vop3_scalars(instruction.entry.slots, w0, NUMBERING)?;
    let out1 = sources(instruction, w1)?;
    encode(E11::Vop3, equivalent, [out0, out1, instruction.literal().unwrap_or(0)])
}

/// The second VOP3/VOP3P dword with the sources the operation reads renumbered.
fn sources(instruction: &gfx10::Instruction, w1: u32) -> Result<u32, Refusal> {
    reencode::vop3_sources(instruction.entry.slots, w1, NUMBERING)
}

/// VOP3P (RDNA2 ISA guide 13.3.5; RDNA3 ISA guide 15.3.5): laid out alike.
fn vop3p(instruction: &gfx10::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    let [w0, w1, _] = instruction.words;
    encode(E11::Vop3p, equivalent, [w0, sources(instruction, w1)?, instruction.literal().unwrap_or(0)])
}

/// `v_dot4_i32_i8`/`v_dot8_i32_i4` (VOP3P): gfx11's `iu` form with neg_lo [1,1,0] (second
/// dword bits 29, 30: the neg_lo of src0 and src1), which makes both operands signed (RDNA3 ISA
/// guide, V_DOT4_I32_IU8; LLVM's `v_dot4_i32_iu8 ... neg_lo:[1,1,0]`).
fn signed_dot(instruction: &gfx10::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    let [w0, w1, _] = instruction.words;
    let w1 = (sources(instruction, w1)? & !(7 << 29)) | 3 << 29;
    encode(E11::Vop3p, equivalent, [w0, w1, instruction.literal().unwrap_or(0)])
}

/// `v_dot4c_i32_i8 vdst, src0, vsrc1` (VOP2: vdst += signed dot4): gfx11's VOP3P
/// `v_dot4_i32_iu8 vdst, src0, vsrc1, vdst neg_lo:[1,1,0]` (op_sel_hi at its default, all ones:
/// w0 bit 14 and w1 bits 28:27).
fn dot4c(instruction: &gfx10::Instruction) -> Result<gfx11::Instruction, Refusal> {
    if instruction.extension != Extension::None {
        return Err(Refusal("gfx11 has no DPP form of v_dot4_i32_iu8 here"));
    }
    let fields = e32_of(instruction)?;
    let w0 = 0x198 << 23 | 1 << 14 | fields.vdst;
    let w1 = fields.src0 | (256 + fields.vsrc1) << 9 | (256 + fields.vdst) << 18 | 3 << 27 | 3 << 29;
    encode(E11::Vop3p, O11::VDot4I32Iu8, [w0, w1, instruction.literal().unwrap_or(0)])
}

/// `v_dot2_i32_i16`/`v_dot2_u32_u16`'s VOP3P words re-encoded with `v_dot4_u32_u8`'s opcode: a
/// gfx11 instruction whose plan resolves the same vdst, three 32-bit sources and clamp, for
/// [`dot2_16`] to compute with.
fn dot2_16_stand_in(instruction: &gfx10::Instruction) -> Result<gfx11::Instruction, Refusal> {
    let [w0, w1, _] = instruction.words;
    encode(E11::Vop3p, O11::VDot4U32U8, [w0, sources(instruction, w1)?, instruction.literal().unwrap_or(0)])
}

/// `v_dot2_i32_i16` (`signed`) and `v_dot2_u32_u16`: D = S0[15:0] × S1[15:0] + S0[31:16] ×
/// S1[31:16] + S2, the halves signed or unsigned and S2 an i32 or u32; clamp saturates to the
/// result's range, otherwise the sum wraps (RDNA2 ISA guide, V_DOT2_I32_I16, V_DOT2_U32_U16).
/// `op` is the stand-in's plan ([`dot2_16_stand_in`]).
pub(crate) fn dot2_16(wave: &mut Wave, op: &VOp, signed: bool) -> Flow {
    let operands = &op.operands;
    let (a, b, c) = (operands.row(wave, 0), operands.row(wave, 1), operands.row(wave, 2));
    let half = |word: u32, index: u32| -> i64 {
        let bits = (word >> (16 * index)) as u16;
        if signed { bits as i16 as i64 } else { bits as i64 }
    };
    let exec = wave.exec();
    for lane in 0..LANES {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let accumulator = if signed { c[lane] as i32 as i64 } else { c[lane] as i64 };
        let sum = half(a[lane], 0) * half(b[lane], 0) + half(a[lane], 1) * half(b[lane], 1) + accumulator;
        let value = match (operands.clamp, signed) {
            (true, true) => sum.clamp(i32::MIN as i64, i32::MAX as i64) as u32,
            (true, false) => sum.clamp(0, u32::MAX as i64) as u32,
            (false, _) => sum as u32,
        };
        wave.write_vgpr(operands.vdst as u32, lane, value);
    }
    Flow::Next
}

/// DS (RDNA2 ISA guide 13.5; RDNA3 ISA guide 15.5): laid out alike (every register a VGPR);
/// compare-stores swap DATA0 and DATA1 (the module's note).
fn ds(instruction: &gfx10::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    let [w0, w1, _] = instruction.words;
    let compare_store = matches!(
        instruction.opcode(),
        gfx10::Opcode::DsCmpstB32
            | gfx10::Opcode::DsCmpstB64
            | gfx10::Opcode::DsCmpstF32
            | gfx10::Opcode::DsCmpstF64
            | gfx10::Opcode::DsCmpstRtnB32
            | gfx10::Opcode::DsCmpstRtnB64
            | gfx10::Opcode::DsCmpstRtnF32
            | gfx10::Opcode::DsCmpstRtnF64
    );
    let w1 = if compare_store { reencode::swap_ds_data(w1) } else { w1 };
    encode(E11::Ds, equivalent, [w0, w1, 0])
}

/// FLAT/GLOBAL/SCRATCH. gfx10 (RDNA2 ISA guide 13.8): offset [11:0] (FLAT unsigned, the others
/// signed), dlc 12, lds 13, seg [15:14], glc 16, slc 17; addr [39:32], data [47:40], saddr
/// [54:48], vdst [63:56]. gfx11 (RDNA3 ISA guide 15.8): offset [12:0] (FLAT 12 bits unsigned),
/// dlc 13, glc 14, slc 15, seg [17:16]; SVE 55.
fn flat(instruction: &gfx10::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    use gfx10::Encoding as E10;
    let [w0, w1, _] = instruction.words;
    if (w0 >> 13) & 1 == 1 {
        return Err(Refusal("a load into LDS"));
    }
    let (segment, offset) = match instruction.encoding {
        E10::Flat => (0, w0 & 0xFFF),
        E10::Scratch => (1, sign_extend(w0, 12) & 0x1FFF),
        _ => (2, sign_extend(w0, 12) & 0x1FFF),
    };
    let (dlc, glc, slc) = ((w0 >> 12) & 1, (w0 >> 16) & 1, (w0 >> 17) & 1);
    let out0 = 0x37 << 26 | segment << 16 | slc << 15 | glc << 14 | dlc << 13 | offset;
    let saddr = (w1 >> 16) & 0x7F;
    let (saddr, sve) = match instruction.encoding {
        E10::Flat => (NULL, 0),
        // gfx10 scratch: the VGPR address when saddr is `off`, neither at 0x7F.
        E10::Scratch if saddr == NULL_10 => (NULL, 1),
        E10::Scratch if saddr == 0x7F => (NULL, 0),
        _ if saddr == NULL_10 => (NULL, 0),
        _ => (scalar(saddr), 0),
    };
    let out1 = (w1 & 0xFF00_FFFF) | sve << 23 | saddr << 16;
    encode(same_encoding(instruction), equivalent, [out0, out1, 0])
}

/// MUBUF. gfx10 (RDNA2 ISA guide 13.4): offset [11:0], offen 12, idxen 13, glc 14, dlc 15, lds
/// 16; vaddr [39:32], vdata [47:40], srsrc [52:48], slc 54, tfe 55, soffset [63:56]. gfx11
/// (RDNA3 ISA guide 15.4): offset [11:0], slc 12, dlc 13, glc 14; srsrc [52:48], tfe 53, offen
/// 54, idxen 55, soffset [63:56].
fn mubuf(instruction: &gfx10::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    let [w0, w1, _] = instruction.words;
    // A typed access takes its format from the V#, whose numbers gfx10.3 assigns differently
    // from gfx11 (RDNA2 and RDNA3 ISA guides, "Buffer Resource"): run as gfx11's, it would
    // convert by the wrong format, so it is refused until gfx10.3's table is modelled.
    if instruction.entry.mnemonic.contains("_format_") {
        return Err(Refusal("a typed access through a V# whose format gfx10.3 numbers differently"));
    }
    if (w0 >> 16) & 1 == 1 || (w1 >> 23) & 1 == 1 {
        return Err(Refusal("a buffer access into LDS or with TFE"));
    }
    let soffset = w1 >> 24;
    if soffset == 255 {
        return Err(Refusal("a literal soffset"));
    }
    let (offen, idxen, glc, dlc, slc) =
        ((w0 >> 12) & 1, (w0 >> 13) & 1, (w0 >> 14) & 1, (w0 >> 15) & 1, (w1 >> 22) & 1);
    let out0 = 0x38 << 26 | glc << 14 | dlc << 13 | slc << 12 | (w0 & 0xFFF);
    let out1 = source(soffset)? << 24 | idxen << 23 | offen << 22 | (w1 & 0x1F_FFFF);
    encode(E11::Mubuf, equivalent, [out0, out1, 0])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each case: a gfx10 instruction's words as `llvm-mc-19 -mcpu=gfx1030 -show-encoding`
    /// encodes it (the text in the comment), and its translation as gfx11's formatter prints it
    /// (which agrees with `llvm-objdump-19 --mcpu=gfx1100` on every checked-in gfx11 object).
    const CASES: &[(&[u32], &str)] = &[
        // s_mov_b32 m0, s1
        (&[0xBEFC_0301], "s_mov_b32 m0, s1"),
        // s_and_b32 s0, m0, 0x1234
        (&[0x8700_FF7C, 0x1234], "s_and_b32 s0, m0, 0x1234"),
        // s_mov_b32 s3, null
        (&[0xBE83_037D], "s_mov_b32 s3, null"),
        // s_movk_i32 m0, 0x10
        (&[0xB07C_0010], "s_movk_i32 m0, 0x10"),
        // s_getreg_b32 s8, hwreg(HW_REG_MODE, 0, 10)
        (&[0xB908_4801], "s_getreg_b32 s8, hwreg(HW_REG_MODE, 0, 10)"),
        // s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 2), 1
        (&[0xBA80_0801, 1], "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 2), 1"),
        // s_waitcnt vmcnt(1) lgkmcnt(2)
        (&[0xBF8C_0271], "s_waitcnt vmcnt(1) lgkmcnt(2)"),
        // s_load_dwordx2 s[0:1], s[4:5], 0x10
        (&[0xF404_0002, 0xFA00_0010], "s_load_b64 s[0:1], s[4:5], 0x10"),
        // s_load_dword s0, s[4:5], m0
        (&[0xF400_0002, 0xF800_0000], "s_load_b32 s0, s[4:5], m0"),
        // s_buffer_load_dwordx4 s[8:11], s[4:7], 0x20 glc
        (&[0xF429_0202, 0xFA00_0020], "s_buffer_load_b128 s[8:11], s[4:7], 0x20 glc"),
        // s_memrealtime s[0:1]
        (&[0xF494_0000, 0], "s_sendmsg_rtn_b64 s[0:1], sendmsg(MSG_RTN_GET_REALTIME)"),
        // s_memtime s[2:3]
        (&[0xF490_0080, 0], "s_sendmsg_rtn_b64 s[2:3], sendmsg(MSG_RTN_GET_REALTIME)"),
        // s_cbranch_scc1 3
        (&[0xBF85_0003], "s_cbranch_scc1 3"),
        // s_endpgm
        (&[0xBF81_0000], "s_endpgm"),
        // v_add_f32_e32 v1, m0, v2
        (&[0x0602_047C], "v_add_f32_e32 v1, m0, v2"),
        // v_readfirstlane_b32 m0, v1
        (&[0x7EF8_0501], "v_readfirstlane_b32 m0, v1"),
        // v_cmp_gt_u32_e64 s0, m0, v1
        (&[0xD4C4_0000, 0x0002_027C], "v_cmp_gt_u32_e64 s0, m0, v1"),
        // v_cmpx_gt_u32_e32 v0, v1
        (&[0x7DA8_0300], "v_cmpx_gt_u32_e32 v0, v1"),
        // v_add_co_u32 v0, s0, v1, v2
        (&[0xD70F_0000, 0x0002_0501], "v_add_co_u32 v0, s0, v1, v2"),
        // v_mad_u64_u32 v[0:1], null, v2, v3, v[4:5]
        (&[0xD576_7D00, 0x0412_0702], "v_mad_u64_u32 v[0:1], null, v2, v3, v[4:5]"),
        // v_lshlrev_b64 v[0:1], 2, v[2:3]
        (&[0xD6FF_0000, 0x0002_0482], "v_lshlrev_b64 v[0:1], 2, v[2:3]"),
        // v_fmac_f32_e32 v0, 0x12345678, v1
        (&[0x5600_02FF, 0x1234_5678], "v_fmac_f32_e32 v0, 0x12345678, v1"),
        // v_pk_fma_f16 v0, v1, v2, v3 op_sel:[1,0,0]
        (&[0xCC0E_4800, 0x1C0E_0501], "v_pk_fma_f16 v0, v1, v2, v3 op_sel:[1,0,0]"),
        // v_dot4_i32_i8 v0, v1, v2, v3
        (&[0xCC16_4000, 0x1C0E_0501], "v_dot4_i32_iu8 v0, v1, v2, v3 neg_lo:[1,1,0]"),
        // v_dot4c_i32_i8 v0, v1, v2
        (&[0x1A00_0501], "v_dot4_i32_iu8 v0, v1, v2, v0 neg_lo:[1,1,0]"),
        // v_dot2c_f32_f16 v0, v1, v2
        (&[0x0400_0501], "v_dot2acc_f32_f16 v0, v1, v2"),
        // v_mov_b32_dpp v0, v1 row_shr:1 row_mask:0xf bank_mask:0xf
        (&[0x7E00_02FA, 0xFF01_1101], "v_mov_b32_dpp v0, v1 row_shr:1 row_mask:0xf bank_mask:0xf"),
        // v_add_f16_sdwa v2, v7, v7 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD
        // src1_sel:WORD_1
        (&[0x6404_0EF9, 0x0506_0607], "v_add_f16_e64 v2, v7, v7 op_sel:[0,1,0]"),
        // v_add_f16_e32 v130, v1, v2 (gfx11's VOP2 would name v2.h and v2.l halves)
        (&[0x6504_0501], "v_add_f16_e64 v130, v1, v2"),
        // ds_cmpst_rtn_b32 v0, v1, v2, v3 offset:8 (comparand v2, new value v3)
        (&[0xD8C0_0008, 0x0003_0201], "ds_cmpstore_rtn_b32 v0, v1, v3, v2 offset:8"),
        // global_load_dword v0, v[1:2], off offset:-16
        (&[0xDC30_8FF0, 0x007D_0001], "global_load_b32 v0, v[1:2], off offset:-16"),
        // global_store_dword v0, v1, s[2:3] offset:4 glc
        (&[0xDC71_8004, 0x0002_0100], "global_store_b32 v0, v1, s[2:3] offset:4 glc"),
        // global_atomic_add v0, v1, v2, s[2:3] glc
        (&[0xDCC9_8000, 0x0002_0201], "global_atomic_add_u32 v0, v1, v2, s[2:3] glc"),
        // scratch_load_dword v0, v1, off
        (&[0xDC30_4000, 0x007D_0001], "scratch_load_b32 v0, v1, off"),
        // scratch_store_dword off, v0, s2 offset:8
        (&[0xDC70_4008, 0x0002_0000], "scratch_store_b32 off, v0, s2 offset:8"),
        // flat_load_dword v0, v[1:2] offset:4 slc
        (&[0xDC32_0004, 0x007D_0001], "flat_load_b32 v0, v[1:2] offset:4 slc"),
        // buffer_load_dword v0, v1, s[4:7], 0 offen offset:16 glc slc
        (&[0xE030_5010, 0x8041_0001], "buffer_load_b32 v0, v1, s[4:7], 0 offen offset:16 glc slc"),
        // buffer_store_dword v0, off, s[4:7], m0
        (&[0xE070_0000, 0x7C01_0000], "buffer_store_b32 v0, off, s[4:7], m0"),
    ];

    #[test]
    fn gfx10_instructions_become_the_gfx11_instructions_llvm_names() {
        for (words, expected) in CASES {
            let gfx10 = gfx10::decode(words, 0).unwrap_or_else(|error| panic!("{expected}: {error}"));
            let translated = translate(&gfx10).unwrap_or_else(|refusal| panic!("{gfx10}: {}", refusal.0));
            assert_eq!(translated.to_string(), *expected, "{gfx10}");
        }
    }

    #[test]
    fn gfx10_instructions_without_an_equivalent_are_refused() {
        // s_ff0_i32_b32 s0, s1: gfx11 dropped find-first-zero.
        let ff0 = gfx10::decode(&[0xBE80_1101], 0).unwrap();
        assert_eq!(translate(&ff0).err(), Some(Refusal("gfx11 has no such operation")));
        let planned = decoded(&ff0, 64);
        assert!(matches!(planned.plan, Plan::Unsupported));
        assert_eq!(planned.source, Some("s_ff0_i32_b32"));
        // v_dot2_i32_i16 has no gfx11 instruction but its own plan.
        let dot2 = gfx10::decode(&[0xCC14_C000, 0x1C0E_0501], 0).unwrap();
        assert!(matches!(decoded(&dot2, 64).plan, Plan::Dot2x16(_)));
    }

    /// Every instruction of `tests/golden/gfx1030.txt` (the gfx1030 test kernels and a sample of
    /// Debian's rocSPARSE and rocRAND, 21,915 instructions) translates, or gets its own plan
    /// (SDWA selects, the 16-bit dots); the only refusal is `v_illegal`.
    #[test]
    fn the_gfx1030_corpus_translates() {
        let mut refused = std::collections::BTreeMap::new();
        let mut sdwa_plans = 0;
        for line in include_str!("../../../tests/golden/gfx1030.txt").lines() {
            let words: Vec<u32> = line
                .split('\t')
                .next()
                .unwrap()
                .split_whitespace()
                .map(|word| u32::from_str_radix(word, 16).unwrap())
                .collect();
            let instruction = gfx10::decode(&words, 0).unwrap_or_else(|error| panic!("{line}: {error}"));
            match decoded(&instruction, 256).plan {
                Plan::Sdwa(_) => sdwa_plans += 1,
                Plan::Dot2x16(_) => {}
                _ => {
                    if let Err(refusal) = translate(&instruction) {
                        *refused.entry((instruction.mnemonic(), refusal.0)).or_insert(0) += 1;
                    }
                }
            }
        }
        assert_eq!(refused.keys().map(|(mnemonic, _)| *mnemonic).collect::<Vec<_>>(), ["v_illegal"], "{refused:#?}");
        assert!(sdwa_plans > 200, "{sdwa_plans} SDWA plans");
    }
}
