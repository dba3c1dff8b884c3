//! gfx12 (RDNA4: gfx1200, gfx1201) code on the gfx11 interpreter: each decoded gfx12 instruction
//! is re-encoded as the gfx11 instruction that computes the same thing, which is then planned
//! and run as gfx11 code (`DecodedKernel::load_for` with [`Isa::Gfx12`](super::Isa)), as gfx10.3
//! and gfx9 code are (`from_gfx10.rs` says why translating beats a second interpreter).
//!
//! The operation pairs are `gfx12::Opcode::gfx11_equivalent` (LLVM 19's names for the same
//! operation on each target, renames included: `v_max_num_f32` is gfx11's `v_max_f32`,
//! `s_add_co_i32` its `s_add_i32`). The field layouts compared are the two decoders'
//! (`gfx12/decode.rs` from the RDNA4 ISA guide's "Microcode Formats"; `gfx11/decode.rs` from
//! the RDNA3 guide's chapter 15; both checked against `llvm-mc-19`). What differs, and what is
//! done here:
//!
//! - **Same layout, new numbers:** SOP*, VOP1/VOP2/VOPC/VOP3/VOP3P (DPP16/DPP8 included), VOPD
//!   and DS keep gfx11's fields and operand numbering; only the opcode fields change. A VOP2
//!   gfx12 added (`v_lshlrev_b64_e32`, `v_add_f64_e32`, ...) becomes gfx11's VOP3 form.
//! - **Split wait counters:** `s_wait_loadcnt`/`storecnt`/`samplecnt`/`bvhcnt` become gfx11's
//!   `s_waitcnt vmcnt(n)`, `s_wait_dscnt`/`kmcnt` its `lgkmcnt(n)`, `s_wait_expcnt` its
//!   `expcnt(n)`, the combined ones both counters (RDNA4 ISA guide, S_WAIT_LOADCNT_DSCNT:
//!   loadcnt [13:8], dscnt [5:0]); `s_wait_alu` becomes `s_waitcnt_depctr`. The interpreter's
//!   memory accesses complete before the next instruction, so all are no-ops there
//!   (`scalar.rs`'s SOPP), kept only so the translation reads as the code does.
//! - **Split barrier:** `s_barrier_signal -1` (the workgroup barrier) becomes gfx11's
//!   `s_barrier`, which signals and waits; `s_barrier_wait -1` becomes `s_nop 0`. Waiting at
//!   the signal is one of the orders the hardware allows (the wait may come at once after the
//!   signal), and LLVM 19 emits the two together. Named barriers are refused.
//! - **Cache policy:** gfx12's temporal hints (`th`) and scopes replace gfx11's glc/slc/dlc.
//!   Dropped: the interpreter's memory is the host's, coherent, and each access completes before
//!   the next instruction, so which cache keeps a line or how far a write is made visible does
//!   not change any value read. The one hint that changes a result, an atomic's
//!   `TH_ATOMIC_RETURN` (th bit 0), becomes gfx11's GLC (return the old value). Cache
//!   maintenance (`global_inv`, `global_wb`, `global_wbinv`) and prefetches become `s_nop 0`
//!   for the same reason.
//! - **SMEM:** the opcode moves to [20:13]; the offset widens to 24 bits signed: re-encoded as
//!   gfx11's (21 bits signed) where it fits, refused otherwise. `s_load_b96` and
//!   `s_buffer_load_b96`, which gfx11 lacks, run as a 64-bit and a 32-bit load ([`Step::Pair`]).
//! - **VFLAT/VSCRATCH/VGLOBAL** (three dwords): re-encoded as gfx11's FLAT/SCRATCH/GLOBAL, the
//!   24-bit signed offset kept where gfx11's field holds it (13 bits signed; FLAT 12 unsigned);
//!   scratch's SVE moves from bit 49 to 55. Where it does not fit (LLVM 19 gives FLAT negative
//!   offsets), a FLAT access or a GLOBAL one with a 64-bit VGPR address runs through shadow
//!   VGPRs holding address + offset ([`Step::Offset`]); SCRATCH and GLOBAL with a scalar base are
//!   refused.
//! - **VBUFFER** (three dwords): re-encoded as gfx11's MUBUF or (typed) MTBUF; the 24-bit
//!   offset must fit gfx11's 12 bits. gfx12 numbers buffer formats as gfx11 does (LLVM 19's
//!   `getUnifiedFormatName` has one table from gfx11 on). TFE is refused.
//! - **gfx12-only scalar operations:** the 64-bit integer ones (`s_add_nc_u64`, `s_sub_nc_u64`,
//!   `s_mul_u64`) and the f32 ones (`s_add_f32`, `s_fmac_f32`, `s_cvt_f32_u32`, `s_cmp_lt_f32`,
//!   ...) run in [`Salu`]; the f16 ones are refused. The f32 pseudo-scalar transcendentals
//!   (`v_s_exp_f32`, ...) run as gfx11's VALU operation in one lane ([`Step::ScalarTrans`]).
//! - **WMMA:** gfx12's operand layout differs from gfx11's (gfx11 repeats A and B in both halves
//!   of the wave, gfx12 splits K between them; `valu/wmma.rs` gives both and its sources), so
//!   the gfx11 instruction would read the wrong registers. The wave32 forms run as a
//!   [`Step::Wmma`] through `valu/wmma.rs`'s arithmetic with gfx12's placement ([`wmma`]): the
//!   16×16×16 f16, bf16, f16/bf16-result, iu8, iu4 and fp8/bf8 ones, `v_wmma_i32_16x16x32_iu4`,
//!   and the SWMMAC (sparse A) forms; with f16 A/B negation, float C negation/absolute value,
//!   and inline-constant C as LLVM 19 selects them; in wave64 the f16 and bf16 forms (AMD
//!   aiter's gfx1201 wave64 test gives their layout). Refused: the other forms in wave64 (no
//!   source gives their layout: composable_kernel, rocWMMA and llama.cpp use gfx12 WMMA in
//!   wave32 only), `op_sel` (other than SWMMAC's `index_key`), negation of bf16 or 8-bit A/B and of bf16 or SWMMAC C, float
//!   `clamp`, a bf16 C constant other than 0, and 1/(2π) as C.
//!
//! A refused instruction loads as [`Plan::Unsupported`]: reaching it is `ExecError::Unsupported`
//! naming the gfx12 mnemonic, never a silent result.

pub(crate) use super::reencode::Refusal;
use super::reencode::{self, E32, NULL, Numbering, encode, placeholder, sign_extend};
use super::{Decoded, Plan};
use crate::gfx11::{self, Encoding as E, Opcode as O11, Slot};
use crate::gfx12::{self, Dpp, Opcode as O12};
use crate::interp::operands::Source;
use crate::interp::valu::wmma::{self, Input, Layout, Matrix, Output};
use crate::interp::wave::{EXEC, Flow, Kind, LANES, Wave};
use crate::interp::{ExecError, Memory};

/// gfx12 numbers operands as gfx11 does (RDNA4 and RDNA3 ISA guides, the SSRC/SRC tables).
const NUMBERING: Numbering = Numbering { scalar: Ok, source: Ok };

/// The instruction the wave loop runs for `instruction`, with its plan: its gfx11 translation
/// planned as gfx11 code, a [`Step`] of its own, or `Plan::Unsupported`. A [`Step::Offset`]'s
/// two shadow VGPRs start at `shadow` (the first past the kernel's own).
pub(crate) fn decoded(instruction: &gfx12::Instruction, shadow: u16) -> Decoded {
    let source = Some(instruction.entry.mnemonic);
    let len = instruction.len() as u8;
    match planned(instruction, shadow) {
        Ok((instruction, plan)) => Decoded { instruction, plan, len, source },
        Err(_) => Decoded { instruction: placeholder(), plan: Plan::Unsupported, len, source },
    }
}

fn planned(instruction: &gfx12::Instruction, shadow: u16) -> Result<(gfx11::Instruction, Plan), Refusal> {
    if let Some(salu) = Salu::of(instruction)? {
        return Ok((placeholder(), Plan::Gfx12(Box::new(Step::Salu(salu)))));
    }
    if let Some(trans) = pseudo_scalar(instruction, shadow)? {
        return Ok((placeholder(), Plan::Gfx12(Box::new(Step::ScalarTrans(trans)))));
    }
    if let Some(matrix) = wmma(instruction)? {
        return Ok((placeholder(), Plan::Gfx12(Box::new(Step::Wmma(matrix)))));
    }
    if matches!(instruction.opcode(), O12::SLoadB96 | O12::SBufferLoadB96) {
        let pair = load_b96(instruction)?;
        return Ok((pair.0, Plan::Gfx12(Box::new(Step::Pair(pair)))));
    }
    match translate(instruction) {
        Err(OFFSET_RANGE) if matches!(instruction.encoding, E::Flat | E::Global) => offset_step(instruction, shadow),
        translated => translated.map(|translated| (translated, Plan::of(&translated))),
    }
}

/// Why `instruction` loads as `Plan::Unsupported`, or `None` where it runs.
pub(crate) fn refusal(instruction: &gfx12::Instruction) -> Option<&'static str> {
    planned(instruction, 0).err().map(|refusal| refusal.0)
}

/// The refusal of a VFLAT/VGLOBAL offset gfx11's field cannot hold, which [`offset_step`] runs.
const OFFSET_RANGE: Refusal = Refusal("a memory offset beyond gfx11's 13 bits");

/// A VFLAT access, or a VGLOBAL one with a 64-bit VGPR address (no saddr), whose offset gfx11's
/// field cannot hold (FLAT's is 12 bits unsigned, gfx12's 24 bits signed: LLVM 19 gives FLAT
/// negative offsets): its gfx11 translation with offset 0 reading its address from two shadow
/// VGPRs, which [`step`] fills with each lane's address plus the offset first. The same 64-bit
/// sum as the hardware's (RDNA4 ISA guide, "Flat addressing": address = VGPR pair + offset).
fn offset_step(instruction: &gfx12::Instruction, shadow: u16) -> Result<(gfx11::Instruction, Plan), Refusal> {
    let [w0, w1, w2] = instruction.words;
    if instruction.encoding == E::Global && w0 & 0x7F != NULL {
        return Err(Refusal("a VGLOBAL offset beyond gfx11's 13 bits with a scalar base"));
    }
    let offset = sign_extend(w2 >> 8, 24) as i32 as i64;
    let mut zeroed = *instruction;
    // Offset 0, the address the shadow pair.
    zeroed.words = [w0, w1, shadow as u32];
    let translated = translate(&zeroed)?;
    let Plan::Memory(access) = Plan::of(&translated) else {
        return Err(Refusal("the translation does not plan as a memory access"));
    };
    let step = Step::Offset(Offset { access, address: w2 & 0xFF, shadow: shadow as u32, offset });
    Ok((translated, Plan::Gfx12(Box::new(step))))
}

/// The gfx11 instruction that computes what `instruction` computes, or why there is none.
pub(crate) fn translate(instruction: &gfx12::Instruction) -> Result<gfx11::Instruction, Refusal> {
    let [w0, ..] = instruction.words;
    let simm = w0 & 0xFFFF;
    let mnemonic = instruction.mnemonic();
    if mnemonic.starts_with("v_wmma") || mnemonic.starts_with("v_swmmac") {
        return Err(Refusal("gfx12's WMMA operand layout is not gfx11's"));
    }
    // (vmcnt, expcnt, lgkmcnt) of gfx11's `s_waitcnt`; 63/7/63 wait for nothing.
    let wait = |vm: u32, exp: u32, lgkm: u32| sopp(O11::SWaitcnt, reencode::waitcnt(vm, exp, lgkm));
    match instruction.opcode() {
        O12::SWaitLoadcnt | O12::SWaitStorecnt | O12::SWaitSamplecnt | O12::SWaitBvhcnt => {
            return wait(simm & 0x3F, 7, 0x3F);
        }
        O12::SWaitDscnt | O12::SWaitKmcnt => return wait(0x3F, 7, simm & 0x3F),
        O12::SWaitExpcnt => return wait(0x3F, simm & 7, 0x3F),
        O12::SWaitLoadcntDscnt | O12::SWaitStorecntDscnt => return wait((simm >> 8) & 0x3F, 7, simm & 0x3F),
        O12::SWaitAlu => return sopp(O11::SWaitcntDepctr, simm),
        // -1 (193, the inline constant) names the workgroup barrier.
        O12::SBarrierSignal if w0 & 0xFF == 193 => return sopp(O11::SBarrier, 0),
        O12::SBarrierWait if simm == 0xFFFF => return sopp(O11::SNop, 0),
        O12::SBarrierSignal | O12::SBarrierWait | O12::SBarrierSignalIsfirst => {
            return Err(Refusal("a named barrier"));
        }
        O12::GlobalInv
        | O12::GlobalWb
        | O12::GlobalWbinv
        | O12::SPrefetchData
        | O12::SPrefetchDataPcRel
        | O12::SPrefetchInst
        | O12::SPrefetchInstPcRel
        | O12::SBufferPrefetchData => return sopp(O11::SNop, 0),
        _ => {}
    }
    let equivalent = instruction.gfx11_equivalent().ok_or(Refusal("gfx11 has no such operation"))?;
    let encoding = instruction.encoding;
    let words = instruction.words;
    match encoding {
        E::Sop2 | E::Sopc | E::Sop1 => {
            let reads_ssrc0 = instruction.entry.slots.iter().any(|slot| matches!(slot, Slot::Ssrc0(_)));
            reencode::sop(encoding, w0, instruction.literal(), reads_ssrc0, equivalent, NUMBERING)
        }
        E::Sopk => {
            if matches!(equivalent, O11::SGetregB32 | O11::SSetregB32 | O11::SSetregImm32B32)
                && !SAME_HWREGS.contains(&(simm & 0x3F))
            {
                return Err(Refusal("a hardware register gfx11 numbers differently"));
            }
            encode(E::Sopk, equivalent, words)
        }
        E::Sopp => {
            // MSG_INTERRUPT (1) and MSG_DEALLOC_VGPRS (3) are numbered alike on both (LLVM's
            // SIDefines.h `SendMsg`; `gfx12/format.rs`'s names).
            if matches!(equivalent, O11::SSendmsg | O11::SSendmsghalt) && simm != 1 && simm != 3 {
                return Err(Refusal("a message gfx11 numbers differently"));
            }
            encode(E::Sopp, equivalent, words)
        }
        E::Smem => smem(instruction, equivalent, 0, 0).map(|(translated, _)| translated),
        E::Vop1 | E::Vop2 | E::Vopc => {
            if gfx11::entry_of(encoding, equivalent).is_some() {
                return encode(encoding, equivalent, words);
            }
            if instruction.dpp != Dpp::None {
                return Err(Refusal("gfx11 has no DPP form of this operation"));
            }
            let fields = E32::of(w0, encoding == E::Vopc, instruction.entry.slots, false, NUMBERING)?;
            reencode::promote(instruction.entry.slots, instruction.literal(), equivalent, fields, NUMBERING)
        }
        E::Vop3 | E::Vop3p | E::Ds => encode(encoding, equivalent, words),
        E::Vopd => vopd(instruction, equivalent),
        E::Flat | E::Scratch | E::Global => flat(instruction, equivalent),
        E::Mubuf | E::Mtbuf => buffer(instruction, equivalent),
    }
}

/// Hardware register ids naming the same register on gfx12 and gfx11 (`gfx12/format.rs`'s and
/// `gfx11/format.rs`'s names, from LLVM 19) that pass: MODE and the shader cycle counter (gfx11's
/// SHADER_CYCLES, gfx12's SHADER_CYCLES_LO). STATUS, GPR_ALLOC, LDS_ALLOC, IB_STS, HW_ID1 and
/// HW_ID2 share ids too, but the interpreter reads them in gfx11's layout
/// (`interp/hw_registers.rs`) and gfx12's is not checked against it (its trap handler,
/// `cwsr_trap_handler_gfx12.asm`, reads LDS_ALLOC in other units): refused.
const SAME_HWREGS: [u32; 2] = [1, 29];

/// gfx11's SOPP `opcode` with immediate `simm`.
fn sopp(opcode: O11, simm: u32) -> Result<gfx11::Instruction, Refusal> {
    encode(E::Sopp, opcode, [0x17F << 23 | simm, 0, 0])
}

/// SMEM. gfx12 (RDNA4 ISA guide, "SMEM"): sbase [5:0], sdata [12:6], op [20:13], scope [22:21],
/// th [24:23]; offset [55:32] (24 bits, signed), soffset [63:57]. gfx11 (RDNA3 ISA guide 15.2):
/// sbase [5:0], sdata [12:6], dlc 13, glc 14, op [25:18]; offset [52:32] (21 bits, signed),
/// soffset [63:57]. `sdata_step` and `offset_step` move the destination and offset (for the
/// halves of a 96-bit load). The cache policy is dropped (the module's note). Returns the
/// translation and its offset.
fn smem(
    instruction: &gfx12::Instruction,
    equivalent: O11,
    sdata_step: u32,
    offset_step: i32,
) -> Result<(gfx11::Instruction, i32), Refusal> {
    let [w0, w1, _] = instruction.words;
    let offset = (sign_extend(w1 & 0xFF_FFFF, 24) as i32).wrapping_add(offset_step);
    if !(-(1 << 20)..(1 << 20)).contains(&offset) {
        return Err(Refusal("an SMEM offset beyond gfx11's 21 bits"));
    }
    let out0 = 0x3D << 26 | (((w0 >> 6) & 0x7F) + sdata_step) << 6 | (w0 & 0x3F);
    let out1 = (w1 & 0xFE00_0000) | (offset as u32 & 0x1F_FFFF);
    Ok((encode(E::Smem, equivalent, [out0, out1, 0])?, offset))
}

/// `s_load_b96`/`s_buffer_load_b96 sdata, sbase, offset`: gfx11's 64-bit load of sdata[0:1] at
/// the offset, then its 32-bit load of sdata[2] 8 bytes on (the same base and soffset).
fn load_b96(instruction: &gfx12::Instruction) -> Result<(gfx11::Instruction, gfx11::Instruction), Refusal> {
    // The 64-bit half needs an even SGPR (gfx11's pairs are aligned: RDNA3 ISA guide, "SGPR
    // alignment"); LLVM allocates 96-bit tuples aligned, but an odd one is refused, not realigned.
    if (instruction.words[0] >> 6) & 1 == 1 {
        return Err(Refusal("a 96-bit scalar load into an odd SGPR"));
    }
    let (wide, narrow) = match instruction.opcode() {
        O12::SLoadB96 => (O11::SLoadB64, O11::SLoadB32),
        _ => (O11::SBufferLoadB64, O11::SBufferLoadB32),
    };
    Ok((smem(instruction, wide, 0, 0)?.0, smem(instruction, narrow, 2, 8)?.0))
}

/// VOPD: gfx11's layout (RDNA3 and RDNA4 ISA guides, "VOPD": opX [25:22], opY [21:17]); both
/// halves' opcodes renumbered.
fn vopd(instruction: &gfx12::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    let y = instruction.dual.and_then(|dual| dual.opcode.gfx11_equivalent()).ok_or(Refusal("gfx11 has no such Y"))?;
    let x_op = gfx11::entry_of(E::Vopd, equivalent).ok_or(Refusal("gfx11 has no such VOPD X"))?.op as u32;
    let y_op = gfx11::table::VOPDY.iter().find(|entry| entry.opcode == y).ok_or(Refusal("gfx11 has no such VOPD Y"))?.op
        as u32;
    let mut words = instruction.words;
    words[0] = (words[0] & !(0xF << 22 | 0x1F << 17)) | x_op << 22 | y_op << 17;
    let translated = gfx11::decode(&words, 0).map_err(|_| Refusal("the VOPD words do not decode as gfx11"))?;
    if translated.opcode() != equivalent || translated.dual.map(|dual| dual.opcode) != Some(y) {
        return Err(Refusal("the VOPD words decode as other gfx11 operations"));
    }
    Ok(translated)
}

/// Whether th's bit 0 asks an atomic for the old value (`TH_ATOMIC_RETURN`, RDNA4 ISA guide,
/// "Memory Scope and Temporal Hints"): gfx11's GLC on an atomic.
fn glc(instruction: &gfx12::Instruction) -> u32 {
    instruction.returns_data() as u32
}

/// VFLAT/VSCRATCH/VGLOBAL. gfx12: saddr [6:0], op [20:14], seg [25:24]; vdst [39:32], SVE 49,
/// vsrc [62:55]; vaddr [71:64], offset [95:72] (24 bits, signed). gfx11 (RDNA3 ISA guide
/// 15.8): offset [12:0] (FLAT: 12 bits unsigned), dlc 13, glc 14, slc 15, seg [17:16], op
/// [24:18]; addr [39:32], data [47:40], saddr [54:48], SVE 55, vdst [63:56].
fn flat(instruction: &gfx12::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    let [w0, w1, w2] = instruction.words;
    let offset = sign_extend(w2 >> 8, 24) as i32;
    let (segment, fits) = match instruction.encoding {
        E::Flat => (0, (0..1 << 12).contains(&offset)),
        E::Scratch => (1, (-(1 << 12)..1 << 12).contains(&offset)),
        _ => (2, (-(1 << 12)..1 << 12).contains(&offset)),
    };
    if !fits {
        return Err(OFFSET_RANGE);
    }
    let saddr = if instruction.encoding == E::Flat { NULL } else { w0 & 0x7F };
    let sve = (w1 >> 17) & 1;
    let out0 = 0x37 << 26 | segment << 16 | glc(instruction) << 14 | (offset as u32 & 0x1FFF);
    let out1 = (w1 & 0xFF) << 24 | sve << 23 | saddr << 16 | ((w1 >> 23) & 0xFF) << 8 | (w2 & 0xFF);
    encode(instruction.encoding, equivalent, [out0, out1, 0])
}

/// VBUFFER. gfx12: soffset [6:0], op [21:14], tfe 22; vdata [39:32], rsrc [49:41], format
/// [61:55], offen 62, idxen 63; vaddr [71:64], offset [95:72] (24 bits). gfx11 (RDNA3 ISA guide
/// 15.4): offset [11:0], slc 12, dlc 13, glc 14, MUBUF op [25:18] or MTBUF op [18:15] and format
/// [25:19]; vaddr [39:32], vdata [47:40], srsrc [52:48] (in fours), tfe 53, offen 54, idxen 55,
/// soffset [63:56].
fn buffer(instruction: &gfx12::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    let [w0, w1, w2] = instruction.words;
    if (w0 >> 22) & 1 == 1 {
        return Err(Refusal("a buffer access with TFE"));
    }
    let offset = w2 >> 8;
    if offset >= 1 << 12 {
        return Err(Refusal("a buffer offset beyond gfx11's 12 bits"));
    }
    let rsrc = (w1 >> 9) & 0x1FF;
    if rsrc % 4 != 0 || rsrc >= 128 {
        return Err(Refusal("a resource not in four aligned SGPRs"));
    }
    let typed = instruction.mnemonic().starts_with("tbuffer_");
    let (encoding, format) = if typed { (E::Mtbuf, ((w1 >> 23) & 0x7F) << 19) } else { (E::Mubuf, 0) };
    let out0 = (if typed { 0x3A } else { 0x38 }) << 26 | format | glc(instruction) << 14 | offset;
    let out1 = (w0 & 0x7F) << 24
        | (w1 >> 31) << 23
        | ((w1 >> 30) & 1) << 22
        | (rsrc / 4) << 16
        | (w1 & 0xFF) << 8
        | (w2 & 0xFF);
    encode(encoding, equivalent, [out0, out1, 0])
}

/// gfx12's f32 pseudo-scalar transcendentals (`v_s_exp_f32 sdst, ssrc0`: VOP3, an SGPR result;
/// RDNA4 ISA guide, V_S_EXP_F32 ... V_S_SQRT_F32, "the same operation as V_EXP_F32 ... with a
/// scalar destination"), which LLVM 19 selects for uniform values: gfx11's VOP3 `v_exp_f32` with
/// the same source and modifiers into a shadow VGPR, run in one lane, whose value [`step`] then
/// writes to sdst. The f16 ones are refused (how they fill the SGPR's high half is not modelled).
fn pseudo_scalar(instruction: &gfx12::Instruction, shadow: u16) -> Result<Option<ScalarTrans>, Refusal> {
    let equivalent = match instruction.opcode() {
        O12::VSExpF32 => O11::VExpF32,
        O12::VSLogF32 => O11::VLogF32,
        O12::VSRcpF32 => O11::VRcpF32,
        O12::VSRsqF32 => O11::VRsqF32,
        O12::VSSqrtF32 => O11::VSqrtF32,
        _ => return Ok(None),
    };
    if shadow > 255 || instruction.dpp != Dpp::None {
        return Err(Refusal("a pseudo-scalar operation with no shadow VGPR field or with DPP"));
    }
    let [w0, w1, literal] = instruction.words;
    let sdst = w0 & 0xFF;
    let stand_in = encode(E::Vop3, equivalent, [(w0 & !0xFF) | shadow as u32, w1, literal])?;
    let op = crate::interp::valu::VOp::plan(&stand_in).ok_or(Refusal("the gfx11 stand-in does not plan"))?;
    Ok(Some(ScalarTrans { op, shadow: shadow as u32, sdst }))
}

/// [`Step::ScalarTrans`]'s fields.
pub(crate) struct ScalarTrans {
    op: crate::interp::valu::VOp,
    shadow: u32,
    sdst: u32,
}

/// What a gfx12 instruction with its own plan does ([`Plan::Gfx12`]).
pub(crate) enum Step {
    /// Two gfx11 scalar instructions, run in order (`s_load_b96`'s halves).
    Pair((gfx11::Instruction, gfx11::Instruction)),
    /// A gfx12-only scalar operation.
    Salu(Salu),
    /// A FLAT/GLOBAL access through shadow VGPRs holding address + offset ([`offset_step`]);
    /// the instruction is the decoded one's.
    Offset(Offset),
    /// A pseudo-scalar transcendental ([`pseudo_scalar`]).
    ScalarTrans(ScalarTrans),
    /// A WMMA in gfx12's operand layout ([`wmma`]).
    Wmma(Matrix),
}

impl Step {
    /// Whether a wave64 wave runs it once per half (the vector memory access does).
    pub(crate) fn per_half(&self) -> bool {
        matches!(self, Step::Offset(_))
    }

    /// Whether it uses the shadow VGPRs past the kernel's.
    pub(crate) fn uses_shadow(&self) -> bool {
        matches!(self, Step::Offset(_) | Step::ScalarTrans(_))
    }
}

/// [`Step::Offset`]'s fields.
pub(crate) struct Offset {
    access: crate::interp::memory_ops::Access,
    /// The address VGPR pair's first register.
    address: u32,
    /// The first shadow VGPR, which the translation addresses through.
    shadow: u32,
    offset: i64,
}

/// A gfx12-only SALU operation (RDNA4 ISA guide, SOP1/SOP2/SOPC): its fields and literal.
pub(crate) struct Salu {
    opcode: O12,
    sdst: u32,
    ssrc: [u32; 2],
    literal: Option<u32>,
}

impl Salu {
    /// The plan of `instruction` if it is one of the gfx12-only scalar operations run here; an
    /// f16 one (or another gfx11 lacks) is left to `translate`, which refuses it.
    fn of(instruction: &gfx12::Instruction) -> Result<Option<Salu>, Refusal> {
        use O12::*;
        let opcode = instruction.opcode();
        let runs = matches!(
            opcode,
            SAddNcU64
                | SSubNcU64
                | SMulU64
                | SAddF32
                | SSubF32
                | SMulF32
                | SFmacF32
                | SMinNumF32
                | SMaxNumF32
                | SCvtF32I32
                | SCvtF32U32
                | SCvtI32F32
                | SCvtU32F32
                | SCeilF32
                | SFloorF32
                | STruncF32
                | SRndneF32
                | SCmpLtF32
                | SCmpEqF32
                | SCmpLeF32
                | SCmpGtF32
                | SCmpLgF32
                | SCmpGeF32
                | SCmpOF32
                | SCmpUF32
                | SCmpNgeF32
                | SCmpNlgF32
                | SCmpNgtF32
                | SCmpNleF32
                | SCmpNeqF32
                | SCmpNltF32
        );
        if !runs {
            return Ok(None);
        }
        let w0 = instruction.words[0];
        Ok(Some(Salu {
            opcode,
            sdst: (w0 >> 16) & 0x7F,
            ssrc: [w0 & 0xFF, (w0 >> 8) & 0xFF],
            literal: instruction.literal(),
        }))
    }
}

/// A gfx12 WMMA or SWMMAC (VOP3P, the fields of gfx11's: RDNA4 ISA guide, "VOP3P") that runs
/// here: its [`Matrix`] in gfx12's layout; `None` for other instructions, a refusal for the
/// modifiers and operands no source gives a meaning (the module notes, `valu/wmma.rs`).
fn wmma(instruction: &gfx12::Instruction) -> Result<Option<Matrix>, Refusal> {
    use Input::*;
    use O12::*;
    // (A, B, C/D, K, sparse A)
    let (a, b, out, k, sparse) = match instruction.opcode() {
        VWmmaF3216x16x16F16 => (F16, F16, Output::F32, 16, false),
        VWmmaF3216x16x16Bf16 => (Bf16, Bf16, Output::F32, 16, false),
        VWmmaF1616x16x16F16 => (F16, F16, Output::F16, 16, false),
        VWmmaBf1616x16x16Bf16 => (Bf16, Bf16, Output::Bf16, 16, false),
        VWmmaI3216x16x16Iu8 => (Iu8, Iu8, Output::I32, 16, false),
        VWmmaI3216x16x16Iu4 => (Iu4, Iu4, Output::I32, 16, false),
        VWmmaI3216x16x32Iu4 => (Iu4, Iu4, Output::I32, 32, false),
        VWmmaF3216x16x16Fp8Fp8 => (Fp8, Fp8, Output::F32, 16, false),
        VWmmaF3216x16x16Fp8Bf8 => (Fp8, Bf8, Output::F32, 16, false),
        VWmmaF3216x16x16Bf8Fp8 => (Bf8, Fp8, Output::F32, 16, false),
        VWmmaF3216x16x16Bf8Bf8 => (Bf8, Bf8, Output::F32, 16, false),
        VSwmmacF3216x16x32F16 => (F16, F16, Output::F32, 32, true),
        VSwmmacF3216x16x32Bf16 => (Bf16, Bf16, Output::F32, 32, true),
        VSwmmacF1616x16x32F16 => (F16, F16, Output::F16, 32, true),
        VSwmmacBf1616x16x32Bf16 => (Bf16, Bf16, Output::Bf16, 32, true),
        VSwmmacI3216x16x32Iu8 => (Iu8, Iu8, Output::I32, 32, true),
        VSwmmacI3216x16x32Iu4 => (Iu4, Iu4, Output::I32, 32, true),
        VSwmmacI3216x16x64Iu4 => (Iu4, Iu4, Output::I32, 64, true),
        VSwmmacF3216x16x32Fp8Fp8 => (Fp8, Fp8, Output::F32, 32, true),
        VSwmmacF3216x16x32Fp8Bf8 => (Fp8, Bf8, Output::F32, 32, true),
        VSwmmacF3216x16x32Bf8Fp8 => (Bf8, Fp8, Output::F32, 32, true),
        VSwmmacF3216x16x32Bf8Bf8 => (Bf8, Bf8, Output::F32, 32, true),
        _ => return Ok(None),
    };
    let [w0, w1, ..] = instruction.words;
    let (neg_hi, op_sel, clamp) = ((w0 >> 8) & 7, (w0 >> 11) & 7, w0 >> 15 & 1 == 1);
    let (src0, src1, src2, neg_lo) = (w1 & 0x1FF, (w1 >> 9) & 0x1FF, (w1 >> 18) & 0x1FF, w1 >> 29);
    let integer = out == Output::I32;
    // SWMMAC's op_sel[0] is index_key where a lane has 8 index fields (16 bits; the K = 64
    // form's 16 fields fill the register); WMMA takes no op_sel on gfx12 (llvm-mc-19 refuses it).
    let key = match (sparse, op_sel) {
        (_, 0) => 0,
        (true, 1) if k == 32 => 1,
        _ => return Err(Refusal("a gfx12 WMMA with op_sel")),
    };
    let both = |i: u32| neg_lo >> i & 1 == 1 && neg_hi >> i & 1 == 1;
    let c_modifiers = neg_lo & 4 != 0 || neg_hi & 4 != 0;
    // Integer forms: neg_lo[0..1] are signedness, nothing else. Float forms (LLVM's selection,
    // the module notes of `valu/wmma.rs`): f16 A/B negated whole; a dense float C negated or
    // made absolute, except bf16 C (LLVM 19 passes bf16 as i16 and never sets them).
    let negate = match () {
        _ if integer && (neg_hi != 0 || neg_lo & 4 != 0) => None,
        _ if integer => Some((false, false)),
        _ if (neg_lo ^ neg_hi) & 3 != 0 || (a != F16 && neg_lo & 3 != 0) => None,
        _ if c_modifiers && (sparse || out == Output::Bf16) => None,
        _ if clamp => None,
        _ => Some((both(0), both(1))),
    };
    let Some(negate) = negate else {
        return Err(Refusal("a gfx12 WMMA with negation or float clamp modifiers"));
    };
    if src0 < 256 || src1 < 256 || (sparse && src2 < 256) {
        return Err(Refusal("a gfx12 WMMA whose A or B is not in VGPRs"));
    }
    let vdst = w0 & 0xFF;
    let c = match src2 {
        // SWMMAC accumulates into D; src2 is its index register.
        _ if sparse => Source::Vgpr(vdst as u16),
        256.. => Source::Vgpr((src2 - 256) as u16),
        _ => Source::Constant(splat(src2, out).ok_or(Refusal("a gfx12 WMMA whose C is this constant"))? as u64),
    };
    Ok(Some(Matrix {
        layout: Layout::Gfx12,
        a,
        b,
        out,
        a_first: src0 - 256,
        b_first: src1 - 256,
        vdst,
        c,
        signed: if integer { (neg_lo & 1 == 1, neg_lo & 2 == 2) } else { (false, false) },
        clamp,
        high: false,
        k,
        negate,
        c_neg: !integer && neg_lo & 4 != 0,
        c_abs: !integer && neg_hi & 4 != 0,
        sparse: sparse.then(|| wmma::Sparse { index: src2 - 256, key }),
    }))
}

/// The C word a WMMA reads for inline constant `field` (both halves where C is 16-bit): what
/// LLVM 19 encodes a splat C as (the module notes of `valu/wmma.rs`): an integer constant is the
/// element's bits, a float one its value in the element's type. `None` for bf16 C (LLVM 19
/// folds no bf16 splat), 1/(2π), and fields that are not inline constants.
fn splat(field: u32, out: Output) -> Option<u32> {
    // RDNA4 ISA guide, "Inline constants": 128 + n is n (0..=64), 192 + n is −n (1..=16),
    // 240..=247 are ±0.5, ±1, ±2, ±4.
    let value = match field {
        128..=192 => Err(field as i32 - 128),
        193..=208 => Err(192 - field as i32),
        240..=247 => Ok([0.5f32, 1.0, 2.0, 4.0][(field as usize - 240) / 2] * if field % 2 == 1 { -1.0 } else { 1.0 }),
        _ => return None,
    };
    let pair = |bits: u16| bits as u32 | (bits as u32) << 16;
    Some(match (value, out) {
        (Err(0), _) => 0,
        (_, Output::Bf16) => return None,
        (Err(integer), Output::F16) => pair(integer as u16),
        (Err(integer), _) => integer as u32,
        (Ok(float), Output::F16) => pair(half::f16::from_f32(float).to_bits()),
        (Ok(float), _) => float.to_bits(),
    })
}

/// Runs `step`; `instruction` is the decoded instruction's gfx11 one.
pub(crate) fn step<M: Memory + ?Sized>(
    wave: &mut Wave,
    step: &Step,
    instruction: &gfx11::Instruction,
    memory: &M,
    lds: &mut [u8],
) -> Result<Flow, ExecError> {
    match step {
        Step::Offset(Offset { access, address, shadow, offset }) => {
            for lane in 0..LANES {
                let base = wave.vgpr(*address, lane) as u64 | (wave.vgpr(address + 1, lane) as u64) << 32;
                wave.write_vgpr64(*shadow, lane, base.wrapping_add_signed(*offset));
            }
            crate::interp::memory_ops::step(wave, instruction, access, memory, lds)
        }
        Step::Pair((first, second)) => {
            crate::interp::scalar::step(wave, first, memory)?;
            crate::interp::scalar::step(wave, second, memory)
        }
        Step::Salu(salu) => salu_step(wave, salu),
        Step::Wmma(matrix) => {
            // Wave64 places each matrix over 64 lanes in half the VGPRs; its layout is
            // established for the f16 and bf16 forms only (`valu/wmma.rs`).
            let matrix = match wave.wide {
                false => *matrix,
                true if matches!(matrix.a, Input::F16 | Input::Bf16) && matrix.sparse.is_none() => {
                    Matrix { layout: Layout::Gfx12Wave64, ..*matrix }
                }
                true => return Err(ExecError::Unsupported { pc: wave.pc, mnemonic: "a gfx12 WMMA in wave64" }),
            };
            let beyond = ExecError::Unsupported { pc: wave.pc, mnemonic: "a gfx12 WMMA reading past the VGPRs" };
            wmma::multiply(wave, &matrix).ok_or(beyond)?;
            Ok(Flow::Next)
        }
        Step::ScalarTrans(ScalarTrans { op, shadow, sdst }) => {
            // One lane computes the uniform result, whatever EXEC holds (its sources are
            // scalars or constants, the same in every lane).
            let exec = wave.read_sgpr(EXEC);
            wave.write_sgpr(EXEC, 1);
            let flow = crate::interp::valu::step::<false>(wave, op);
            wave.write_sgpr(EXEC, exec);
            let flow =
                flow.ok_or(ExecError::Unsupported { pc: wave.pc, mnemonic: "a pseudo-scalar transcendental" })?;
            let value = wave.vgpr(*shadow, 0);
            wave.write_sgpr(*sdst, value);
            Ok(flow)
        }
    }
}

/// The f32 SALU operations round to nearest even and keep denormals here (Rust's f32
/// arithmetic, IEEE 754); another MODE (RDNA4 ISA guide, "MODE": bits 1:0 f32 rounding, 5:4 f32
/// denormals) is refused rather than ignored.
fn salu_step(wave: &mut Wave, salu: &Salu) -> Result<Flow, ExecError> {
    use O12::*;
    let [a, b] = salu.ssrc;
    if let SAddNcU64 | SSubNcU64 | SMulU64 = salu.opcode {
        let (x, y) = (wave.scalar64(a, salu.literal, Kind::Int), wave.scalar64(b, salu.literal, Kind::Int));
        let value = match salu.opcode {
            SAddNcU64 => x.wrapping_add(y),
            SSubNcU64 => x.wrapping_sub(y),
            _ => x.wrapping_mul(y),
        };
        wave.write_sgpr64(salu.sdst, value);
        return Ok(Flow::Next);
    }
    if wave.mode & 0x33 != 0x30 {
        let mnemonic = "an f32 SALU operation under a MODE other than round-to-nearest-even with denormals";
        return Err(ExecError::Unsupported { pc: wave.pc, mnemonic });
    }
    let kind = if matches!(salu.opcode, SCvtF32I32 | SCvtF32U32) { Kind::Int } else { Kind::F32 };
    let (x, y) = (wave.scalar(a, salu.literal, kind), wave.scalar(b, salu.literal, kind));
    let (fx, fy) = (f32::from_bits(x), f32::from_bits(y));
    let unordered = fx.is_nan() || fy.is_nan();
    let value = match salu.opcode {
        SAddF32 => fx + fy,
        SSubF32 => fx - fy,
        SMulF32 => fx * fy,
        // D = S0 × S1 + D, fused.
        SFmacF32 => fx.mul_add(fy, f32::from_bits(wave.read_sgpr(salu.sdst))),
        // IEEE 754-2008 minNum/maxNum: a quiet NaN operand yields the other.
        SMinNumF32 => fx.min(fy),
        SMaxNumF32 => fx.max(fy),
        SCvtF32I32 => x as i32 as f32,
        SCvtF32U32 => x as f32,
        // Saturating, NaN to 0, as V_CVT_I32_F32/V_CVT_U32_F32 (RDNA4 ISA guide).
        SCvtI32F32 => f32::from_bits(fx as i32 as u32),
        SCvtU32F32 => f32::from_bits(fx as u32),
        SCeilF32 => fx.ceil(),
        SFloorF32 => fx.floor(),
        STruncF32 => fx.trunc(),
        SRndneF32 => fx.round_ties_even(),
        compare => {
            // The comparisons set SCC: ordered ones are false on a NaN, the N (not) and U ones
            // true (RDNA4 ISA guide, S_CMP_*_F32).
            wave.scc = match compare {
                SCmpLtF32 => fx < fy,
                SCmpEqF32 => fx == fy,
                SCmpLeF32 => fx <= fy,
                SCmpGtF32 => fx > fy,
                SCmpLgF32 => !unordered && fx != fy,
                SCmpGeF32 => fx >= fy,
                SCmpOF32 => !unordered,
                SCmpUF32 => unordered,
                SCmpNgeF32 => unordered || fx < fy,
                SCmpNlgF32 => unordered || fx == fy,
                SCmpNgtF32 => unordered || fx <= fy,
                SCmpNleF32 => unordered || fx > fy,
                SCmpNeqF32 => fx != fy,
                _ => unordered || fx >= fy,
            };
            return Ok(Flow::Next);
        }
    };
    wave.write_sgpr(salu.sdst, value.to_bits());
    Ok(Flow::Next)
}

#[cfg(test)]
mod tests;
