//! gfx9's VALU encodings as gfx11's: VOP1/VOP2/VOPC (plain or DPP), VOP3 and VOP3P. The layouts
//! agree but for VOP3's and VOP3P's identity bits (Vega ISA guide 12.3; RDNA3 ISA guide 15.3);
//! what differs in meaning is refused (the module's note).

use super::{NUMBERING, Plan, Refusal};
use crate::decode_core::immediates::OP_SEL;
use crate::gfx9::{self, Extension};
use crate::gfx11::{self, Encoding as E11, Opcode as O11, Slot};
use crate::interp::decoded_kernel::from_gfx10::{SdwaForm, SdwaWritten, sdwa_form_of};
use crate::interp::decoded_kernel::reencode::{self, E32, E32Form, Vop3, encode};
use crate::interp::valu::VOp;

/// gfx9's 16-bit operations that keep the high half of their destination, as gfx11's do: those
/// for which LLVM's `GCNSubtarget::zeroesHigh16BitsOfDest` is false on gfx9 (it is true for
/// every other 16-bit result), and the mixed-precision `v_fma_mixlo_f16`/`v_fma_mixhi_f16`,
/// which write one half by definition (Vega ISA guide, V_MAD_MIXLO_F16).
const KEEPS_HIGH_HALF: [O11; 6] =
    [O11::VMadU16, O11::VMadI16, O11::VFmaF16, O11::VDivFixupF16, O11::VFmaMixloF16, O11::VFmaMixhiF16];

/// Whether `instruction` is a `v_cmpx_*`, which on gfx9 writes its mask to VCC (e32) or its
/// sdst (VOP3) as well as to EXEC, and on gfx11 only to EXEC ([`cmpx`]).
pub(super) fn is_cmpx(instruction: &gfx9::Instruction) -> bool {
    instruction.entry.mnemonic.starts_with("v_cmpx")
}

/// Refuses what gfx9 and gfx11 compute differently though LLVM names it alike: `v_cmpx`, which
/// runs as [`cmpx`] plans it, never through the plain translations.
fn same_meaning(instruction: &gfx9::Instruction) -> Result<(), Refusal> {
    if is_cmpx(instruction) {
        return Err(Refusal("gfx9's v_cmpx also writes VCC or its sdst; gfx11's writes only EXEC"));
    }
    Ok(())
}

/// gfx9's `v_cmpx_*` (VOPC e32, plain or DPP, and VOP3), which writes its lane mask to EXEC and
/// to VCC (e32) or its sdst (VOP3) (Vega ISA guide, "VOPC": "V_CMPX: write VCC/sdst and EXEC";
/// LLVM prints that destination on gfx9, `gfx9/table.rs`'s `Fixed("vcc")` and `ScalarVdst`
/// slots), where gfx11's writes only EXEC (RDNA3 ISA guide, VOPC): translated as gfx11's
/// `v_cmp_*` of the same condition, which writes VCC or sdst with 0 for the lanes EXEC disables
/// (`valu/compare.rs`), and planned as [`Plan::CmpxMask`], which then copies that mask to EXEC.
/// An SDWA `v_cmpx` (its sdst the SDWA word's, Vega ISA guide 12.3.2: SD 15, SDST [14:8]) runs
/// so where gfx11's VOP3 makes its selects (`from_gfx10/sdwa.rs`: DWORD, or a 16-bit operand's
/// high word as op_sel); other selects are refused.
pub(super) fn cmpx(instruction: &gfx9::Instruction, equivalent: O11) -> Result<(gfx11::Instruction, Plan), Refusal> {
    let compare = plain_compare(equivalent)?;
    let translated = match (instruction.encoding, instruction.extension) {
        (gfx9::Encoding::Vopc, Extension::None | Extension::Dpp) => e32_form(instruction, compare)?,
        (gfx9::Encoding::Vop3, _) => vop3_form(instruction, compare)?,
        (gfx9::Encoding::Vopc, Extension::Sdwa) => {
            let form = sdwa_form(instruction, compare)?;
            if form.sources != [None, None] || form.destination.is_some() {
                return Err(Refusal("an SDWA v_cmpx with selects gfx11's VOP3 cannot make"));
            }
            form.vop3
        }
        _ => return Err(Refusal("a v_cmpx in an encoding gfx9 lacks")),
    };
    match Plan::of(&translated) {
        Plan::Vector(op) => Ok((translated, Plan::CmpxMask(Box::new(op)))),
        _ => Err(Refusal("the compare does not plan as a VALU row")),
    }
}

/// gfx11's `v_cmp_*` of the condition and type of `cmpx`, a `v_cmpx_*` (the same name without
/// the x: RDNA3 ISA guide, VOPC opcodes, each `V_CMPX_*` 0x80 above its `V_CMP_*`).
fn plain_compare(cmpx: O11) -> Result<O11, Refusal> {
    let entry = gfx11::entry_of(E11::Vopc, cmpx).ok_or(Refusal("gfx11 has no VOPC form of this v_cmpx"))?;
    let name = entry.mnemonic.replacen("v_cmpx_", "v_cmp_", 1);
    let plain = gfx11::table::VOPC.iter().find(|entry| entry.mnemonic == name);
    plain.map(|entry| entry.opcode).ok_or(Refusal("gfx11 has no v_cmp of this v_cmpx"))
}

/// Whether `instruction` writes a 16-bit result whose high half gfx9 zeroes and gfx11 keeps
/// (its translation then runs as [`Plan::ZeroHigh`](crate::interp::decoded_kernel::Plan)).
pub(crate) fn zeroes_high_half(instruction: &gfx9::Instruction) -> bool {
    let Some(equivalent) = instruction.gfx11_equivalent() else { return false };
    let writes_half = gfx11::entry_of(E11::Vop3, equivalent)
        .or_else(|| gfx11::entry_of(instruction.encoding.gfx11(), equivalent))
        .is_some_and(reencode::writes_half);
    // SDWA zeroes it through its destination select (`sdwa`).
    let valu = matches!(instruction.encoding, gfx9::Encoding::Vop1 | gfx9::Encoding::Vop2 | gfx9::Encoding::Vop3)
        && instruction.extension != Extension::Sdwa;
    valu && writes_half && !KEEPS_HIGH_HALF.contains(&equivalent)
}

/// VOP1/VOP2/VOPC, plain or with a DPP word ([`reencode::vop_e32`]); SDWA is refused.
pub(super) fn e32(instruction: &gfx9::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    same_meaning(instruction)?;
    e32_form(instruction, equivalent)
}

/// [`e32`], `v_cmpx` included (as `equivalent`, which [`cmpx`] makes gfx11's `v_cmp`).
fn e32_form(instruction: &gfx9::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    let dpp = match instruction.extension {
        Extension::None => None,
        Extension::Sdwa => {
            let form = sdwa(instruction, equivalent)?;
            if form.sources != [None, None] || form.destination.is_some() {
                return Err(Refusal("SDWA selects gfx11's VOP3 cannot make (they run as an SDWA plan)"));
            }
            return Ok(form.vop3);
        }
        Extension::Dpp => Some(dpp_word(instruction)?),
    };
    let form = E32Form {
        encoding: instruction.encoding.gfx11(),
        w0: instruction.words[0],
        slots: instruction.entry.slots,
        literal: instruction.literal(),
        dpp,
    };
    if zeroes_high_half(instruction) {
        // The VOP3 form, whose vdst is a whole register (gfx11's e32 16-bit vdst names a half).
        if dpp.is_some() {
            return Err(Refusal("a 16-bit DPP result: gfx9 zeroes its high half in the lanes it writes"));
        }
        let fields = E32::of(form.w0, form.encoding == E11::Vopc, form.slots, false, NUMBERING)?;
        return reencode::promote(form.slots, form.literal, equivalent, fields, NUMBERING);
    }
    reencode::vop_e32(&form, equivalent, NUMBERING)
}

/// An SDWA VOP1/VOP2/VOPC instruction as gfx11's VOP3 and the selects it cannot make
/// (`from_gfx10/sdwa.rs`: gfx9's SDWA word is laid out as gfx10's, Vega ISA guide 12.3.2), a
/// 16-bit result written whole zeroing its high half as gfx9 does.
pub(super) fn sdwa(instruction: &gfx9::Instruction, equivalent: O11) -> Result<SdwaForm, Refusal> {
    same_meaning(instruction)?;
    sdwa_form(instruction, equivalent)
}

/// [`sdwa`], `v_cmpx` included (as `equivalent`, which [`cmpx`] makes gfx11's `v_cmp`).
fn sdwa_form(instruction: &gfx9::Instruction, equivalent: O11) -> Result<SdwaForm, Refusal> {
    let written = SdwaWritten {
        w0: instruction.words[0],
        word: instruction.extension_word().ok_or(Refusal("an SDWA instruction without its word"))?,
        slots: instruction.entry.slots,
        vopc: instruction.encoding == gfx9::Encoding::Vopc,
    };
    sdwa_form_of(&written, equivalent, NUMBERING, true)
}

/// The DPP word (Vega ISA guide 12.3.3: src0 [7:0], dpp_ctrl [16:8], bound_ctrl 19, neg/abs
/// [23:20], bank_mask [27:24], row_mask [31:28]; gfx11's DPP16 alike, its bit 18 `fi`, reserved
/// on gfx9, cleared). The `dpp_ctrl` values both ISAs give the same meaning pass: quad_perm
/// (0x00..0xFF), row_shl/row_shr/row_ror (0x101..0x12F, but the reserved 0x100, 0x110, 0x120),
/// row_mirror and row_half_mirror (0x140, 0x141). gfx9's wave shifts and rotates (0x130..0x13C)
/// and row broadcasts (0x142, 0x143) are reserved on gfx11. gfx90a's `row_newbcast:n`
/// (0x150..0x15F; reserved before gfx90a) is gfx11's `row_share:n` by number and by meaning:
/// both give every lane of a row lane n of that row (LLVM's `DppCtrl`, SIDefines.h, numbers
/// them alike; AMDGPUModifierSyntax: "broadcast a thread within a row to the whole row" for
/// both; LLVM's `dpp64_combine.ll` compiles one `llvm.amdgcn.update.dpp` to gfx90a's
/// `row_newbcast:1` and gfx10's `row_share:1`).
fn dpp_word(instruction: &gfx9::Instruction) -> Result<u32, Refusal> {
    let word = instruction.extension_word().ok_or(Refusal("a DPP instruction without its word"))?;
    let control = (word >> 8) & 0x1FF;
    let newbcast = instruction.processor.has_unified_registers() && matches!(control, 0x150..=0x15F);
    let same = matches!(control, 0x00..=0xFF | 0x101..=0x10F | 0x111..=0x11F | 0x121..=0x12F | 0x140 | 0x141);
    if !same && !newbcast {
        return Err(Refusal("a DPP control gfx11 lacks (wave shift, row broadcast)"));
    }
    Ok(word & !(1 << 18))
}

/// VOP3 (Vega ISA guide 12.3.4: vdst [7:0], abs [10:8] or sdst [14:8], op_sel [14:11], clamp
/// 15, op [25:16], identity 0x34 [31:26]; the second dword's sources, omod and neg as gfx11's):
/// gfx11's identity 0x35, scalar fields and sources renumbered.
pub(super) fn vop3(instruction: &gfx9::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    same_meaning(instruction)?;
    vop3_form(instruction, equivalent)
}

/// [`vop3`], `v_cmpx` included (as `equivalent`, which [`cmpx`] makes gfx11's `v_cmp`).
fn vop3_form(instruction: &gfx9::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    let [w0, w1, _] = instruction.words;
    let slots = instruction.entry.slots;
    // Bits 14:11 are op_sel only for the operations that have it on gfx9 (v_mad_u16, v_fma_f16,
    // ...; `llvm-mc-19 -mcpu=gfx90a` rejects op_sel on v_add_f16_e64) and sdst in VOP3B; else
    // reserved, and cleared so that gfx11 does not read them as op_sel.
    let vop3b = slots.iter().any(|slot| matches!(slot, Slot::Sdst(_)));
    let reserved = if vop3b || instruction.entry.modifiers & OP_SEL != 0 { 0 } else { 0xF << 11 };
    let out0 = 0x35 << 26 | reencode::vop3_scalars(slots, w0 & !reserved, NUMBERING)? & 0x03FF_FFFF;
    let out1 = reencode::vop3_sources(slots, w1, NUMBERING)?;
    encode(E11::Vop3, equivalent, [out0, out1, 0])
}

/// VOP3P (Vega ISA guide 12.3.5: vdst [7:0], neg_hi [10:8], op_sel [13:11], op_sel_hi[2] 14,
/// clamp 15, op [22:16], identity 0x1A7 [31:23]; the second dword as gfx11's): gfx11's identity
/// 0x198 (RDNA3 ISA guide 15.3.5), sources renumbered. gfx90a's packed-f32 operations have no
/// gfx11 equivalent and never reach here.
pub(super) fn vop3p(instruction: &gfx9::Instruction, equivalent: O11) -> Result<gfx11::Instruction, Refusal> {
    same_meaning(instruction)?;
    let [w0, w1, _] = instruction.words;
    let out1 = reencode::vop3_sources(instruction.entry.slots, w1, NUMBERING)?;
    encode(E11::Vop3p, equivalent, [0x198 << 23 | (w0 & 0x7F_FFFF), out1, 0])
}

/// gfx90a's `v_fmac_f64` (VOP2 e32 or VOP3), which gfx11 lacks: D = S0 × S1 + D, fused, one
/// rounding (MI200 ISA guide, V_FMAC_F64), as gfx11's `v_fma_f64 vdst, src0, src1, vdst`
/// (RDNA3 ISA guide, V_FMA_F64). LLVM's `V_FMAC_F64_e64` (VOP2Instructions.td, VOP_F64_F64_F64
/// tied to vdst) gives src0 and src1 abs and neg, clamp and omod, all of which gfx11's VOP3
/// has in the same bits (the module's VOP3 note); the accumulator has none (abs[2], neg[2]
/// set are refused) and gfx9's VOP3 has no literal. DPP and SDWA forms are refused.
pub(super) fn fmac_f64(instruction: &gfx9::Instruction) -> Result<gfx11::Instruction, Refusal> {
    let [w0, w1, _] = instruction.words;
    let source = NUMBERING.source;
    let fields = match (instruction.encoding, instruction.extension) {
        (gfx9::Encoding::Vop2, Extension::None) => {
            let e32 = E32::of(w0, false, instruction.entry.slots, false, NUMBERING)?;
            let src = [e32.src0, 256 + e32.vsrc1, 256 + e32.vdst];
            Vop3 { vdst: e32.vdst, src, literal: instruction.literal(), ..Vop3::default() }
        }
        (gfx9::Encoding::Vop3, _) if w0 >> 10 & 1 == 1 || w1 >> 31 == 1 => {
            return Err(Refusal("v_fmac_f64 with abs or neg on its accumulator"));
        }
        (gfx9::Encoding::Vop3, _) => Vop3 {
            vdst: w0 & 0xFF,
            src: [source(w1 & 0x1FF)?, source(w1 >> 9 & 0x1FF)?, 256 + (w0 & 0xFF)],
            abs: w0 >> 8 & 3,
            neg: w1 >> 29 & 3,
            clamp: w0 >> 15 & 1,
            omod: w1 >> 27 & 3,
            ..Vop3::default()
        },
        _ => return Err(Refusal("a DPP or SDWA v_fmac_f64")),
    };
    fields.encode(O11::VFmaF64)
}

/// gfx90a's `v_pk_mov_b32` (VOP3P), which gfx11 lacks: D.lo = op_sel[0] ? S0.hi : S0.lo and
/// D.hi = op_sel[1] ? S1.hi : S1.lo, each source a 64-bit register pair and each part a dword
/// (MI200 ISA guide, V_PK_MOV_B32; LLVM's `SIInstrInfo::expandPostRAPseudo` moves 64 bits
/// with it, op_sel picking the dwords). Planned as [`Plan::PkMov`]: the stand-in gfx11's
/// `v_add_f64 vdst, src0, src1`, whose plan resolves the destination and the two source pairs,
/// and op_sel [12:11]. op_sel_hi means nothing here and is ignored; neg and neg_hi (which
/// LLVM never encodes for it) are refused. An integer inline constant source gives its 32-bit
/// value as the dword op_sel 0 picks ([`pair_fields`]; the high dword, and float constants,
/// which the stand-in would widen as doubles, are refused but for 0).
pub(super) fn pk_mov(instruction: &gfx9::Instruction) -> Result<(gfx11::Instruction, Plan), Refusal> {
    let [w0, w1, _] = instruction.words;
    if w0 >> 8 & 7 != 0 || w1 >> 29 != 0 {
        return Err(Refusal("v_pk_mov_b32 with neg or neg_hi"));
    }
    let fields = pair_fields(instruction, 2, w0 >> 11 & 3, false)?;
    let src = [(NUMBERING.source)(fields[0])?, (NUMBERING.source)(fields[1])?, 0];
    let stand_in = Vop3 { vdst: w0 & 0xFF, src, ..Vop3::default() }.encode(O11::VAddF64)?;
    let op = vector_op(&stand_in)?;
    Ok((stand_in, Plan::PkMov(Box::new((op, (w0 >> 11 & 3) as u8)))))
}

/// The 9-bit source fields (VOP3P's second word: [8:0], [17:9], [26:18]) of a gfx90a VOP3P
/// instruction whose first `count` sources are 64-bit register pairs; `constant` where one of
/// those is an inline constant or a literal (128..=255), whose dwords the guides do not give.
///
/// A constant source is taken where what it gives is certain: its low dword is the 32-bit
/// inline constant (LLVM's V2FP32/V2INT32 operands hold a 32-bit inline value:
/// `AMDGPUBaseInfo`'s `getOperandSize` is 4 for them, and the printer prints them as 32-bit
/// immediates, as in `v_pk_fma_f32 v[0:1], v[4:5], v[0:1], 0 op_sel_hi:[1,0,0]`, which LLVM
/// emits for a splat); which high dword the hardware reads (bit `i` of `high_reads`: source i's
/// high dword is picked for one half) the guides do not say, so that is refused but for the
/// constant 0, whose both dwords are 0 either way. `floats`: the f32 inline constants
/// (240..=248) are taken too; otherwise only the integer ones (128..=208). Literals (255),
/// which gfx9's VOP3P lacks, and other special sources are refused.
fn pair_fields(
    instruction: &gfx9::Instruction,
    count: usize,
    high_reads: u32,
    floats: bool,
) -> Result<[u32; 3], Refusal> {
    let w1 = instruction.words[1];
    let fields = [w1 & 0x1FF, w1 >> 9 & 0x1FF, w1 >> 18 & 0x1FF];
    for (i, &field) in fields[..count].iter().enumerate() {
        let constant = (128..=208).contains(&field) || (floats && (240..=248).contains(&field));
        match field {
            128 => {}
            _ if constant && high_reads >> i & 1 == 0 => {}
            _ if constant => return Err(Refusal("a packed constant's high dword, which the guides do not give")),
            240..=248 => return Err(Refusal("a float constant in v_pk_mov_b32 (its f64 stand-in widens it)")),
            129..=255 => return Err(Refusal("a packed operand with a special or literal source")),
            _ => {}
        }
    }
    Ok(fields)
}

/// The VALU row `stand_in` (a gfx11 instruction) plans as.
pub(super) fn vector_op(stand_in: &gfx11::Instruction) -> Result<VOp, Refusal> {
    match Plan::of(stand_in) {
        Plan::Vector(op) => Ok(op),
        _ => Err(Refusal("the stand-in does not plan as a VALU row")),
    }
}

/// gfx90a's packed f32 arithmetic, which gfx11 lacks, as the gfx11 VOP3 operation each dword
/// of its result is and the number of its sources: `v_pk_fma_f32` as `v_fma_f32` (one
/// rounding), `v_pk_mul_f32` as `v_mul_f32`, `v_pk_add_f32` as `v_add_f32` (MI200 ISA guide,
/// VOP3P opcodes 48–50; LLVM's VOP3PInstructions.td, `V_PK_FMA_F32` and the others, which
/// select `fma`, `fmul` and `fadd` of v2f32 for them).
pub(super) fn packed_f32_op(opcode: gfx9::Opcode) -> Option<(O11, usize)> {
    match opcode {
        gfx9::Opcode::VPkFmaF32 => Some((O11::VFmaF32, 3)),
        gfx9::Opcode::VPkMulF32 => Some((O11::VMulF32, 2)),
        gfx9::Opcode::VPkAddF32 => Some((O11::VAddF32, 2)),
        _ => None,
    }
}

/// A packed f32 instruction ([`packed_f32_op`] gives `equivalent` and `count`), each source a
/// 64-bit register pair: D.lo is `equivalent` of the sources' dwords op_sel [13:11] picks (0:
/// the pair's low dword, 1: its high) negated by neg_lo (second word [31:29]); D.hi of those
/// op_sel_hi (first word 14 for src2, second word [28:27] for src0 and src1) picks negated by
/// neg_hi (first word [10:8]); clamp (15) applies to both (MI200 ISA guide, "VOP3P"; LLVM 19
/// encodes `v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7]` with op_sel_hi all set, `00 40 b0 d3
/// 02 09 1a 1c`, and `op_sel:[1,0,0] op_sel_hi:[0,1,1] neg_lo:[1,0,0]` as `00 48 b0 d3 02 09
/// 1a 34`). Planned as [`Plan::Dual`] of the two gfx11 VOP3 operations (vdst and vdst + 1),
/// which read their sources before either writes, so MODE's rounding and denormals and the
/// clamp are the interpreter's f32 ops'. Inline constants as [`pair_fields`] takes them.
pub(super) fn packed_f32(
    instruction: &gfx9::Instruction,
    equivalent: O11,
    count: usize,
) -> Result<(gfx11::Instruction, Plan), Refusal> {
    let [w0, w1, _] = instruction.words;
    let high_reads = (w0 >> 11 & 7) | (w1 >> 27 & 3 | (w0 >> 14 & 1) << 2);
    let fields = pair_fields(instruction, count, high_reads, true)?;
    let half = |op_sel: u32, neg: u32, high: u32| -> Result<(gfx11::Instruction, VOp), Refusal> {
        let mut src = [0; 3];
        for (i, source) in src.iter_mut().enumerate().take(count) {
            *source = dword_of(fields[i], op_sel >> i & 1)?;
        }
        let (vdst, clamp, neg) = ((w0 & 0xFF) + high, w0 >> 15 & 1, neg & ((1 << count) - 1));
        let stand_in = Vop3 { vdst, src, neg, clamp, ..Vop3::default() }.encode(equivalent)?;
        let op = vector_op(&stand_in)?;
        Ok((stand_in, op))
    };
    if w0 & 0xFF == 0xFF {
        return Err(Refusal("packed f32 with v255 as its destination pair"));
    }
    let (low, low_op) = half(w0 >> 11 & 7, w1 >> 29, 0)?;
    let (_, high_op) = half(w1 >> 27 & 3 | (w0 >> 14 & 1) << 2, w0 >> 8 & 7, 1)?;
    Ok((low, Plan::Dual(Box::new((low_op, high_op)))))
}

/// gfx11's operand number of the dword `high` picks (0: the low, 1: the high) of the register
/// pair whose gfx9 9-bit source field is `field` (an SGPR, special or VGPR number), or the
/// inline constant itself (its dwords as [`pair_fields`] takes them); refused where the pair's
/// second dword would be past the register file.
fn dword_of(field: u32, high: u32) -> Result<u32, Refusal> {
    if (128..256).contains(&field) {
        return Ok(field);
    }
    match field + high {
        128 | 512 => Err(Refusal("a register pair past the register file")),
        number => (NUMBERING.source)(number),
    }
}

/// gfx9's non-fused f32 multiply-adds, which gfx11 lacks: the gfx11 operation whose operands
/// stand in for each (`v_fma_f32` for `v_mad_f32` and `v_mad_legacy_f32`, `v_fmac_f32` for
/// `v_mac_f32`, `v_fmaak_f32` for `v_madak_f32`, `v_fmamk_f32` for `v_madmk_f32`: the same
/// operand shapes, Vega ISA guide VOP2/VOP3 opcodes) and whether it is the DX9 legacy one.
pub(super) fn unfused_op(opcode: gfx9::Opcode) -> Option<(O11, bool)> {
    use gfx9::Opcode::*;
    Some(match opcode {
        VMadF32 => (O11::VFmaF32, false),
        VMadLegacyF32 => (O11::VFmaF32, true),
        VMacF32 => (O11::VFmacF32, false),
        VMadakF32 => (O11::VFmaakF32, false),
        VMadmkF32 => (O11::VFmamkF32, false),
        _ => return None,
    })
}

/// A non-fused multiply-add ([`unfused_op`] gives `stand_in` and `legacy`): the stand-in's
/// translation (e32, DPP or VOP3, fields as the plain translations move them), planned as
/// [`Plan::Unfused`], which rounds the product and the sum apart and flushes f32 denormals
/// (`valu/unfused.rs`). SDWA forms are refused.
pub(super) fn unfused(
    instruction: &gfx9::Instruction,
    stand_in: O11,
    legacy: bool,
) -> Result<(gfx11::Instruction, Plan), Refusal> {
    let translated = match (instruction.encoding, instruction.extension) {
        (_, Extension::Sdwa) => return Err(Refusal("an SDWA non-fused multiply-add (v_mac_f32_sdwa)")),
        (gfx9::Encoding::Vop3, _) => vop3_form(instruction, stand_in)?,
        _ => e32_form(instruction, stand_in)?,
    };
    let op = vector_op(&translated)?;
    Ok((translated, Plan::Unfused(Box::new((op, legacy)))))
}
