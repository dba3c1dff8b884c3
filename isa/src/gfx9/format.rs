//! LLVM's gfx9 assembly syntax for decoded instructions, as `llvm-objdump-19 -d --mcpu=<processor>`
//! prints it (`tests/llvm_agreement_gfx9.rs` compares the two on the checked-in golden text of
//! Debian's rocSPARSE and rocRAND gfx906, gfx908 and gfx90a code objects). Where a rule is LLVM's
//! printer's rather than the encoding's, it names the `AMDGPUInstPrinter` routine. The immediates,
//! source modifiers and the SDWA form print as gfx10's (`decode_core`).

use core::fmt::{self, Display, Formatter};

use super::decode::{Encoding, Extension, Instruction};
use super::fields::{Operand, scalar_operand, source_operand};
use super::table::Entry;
use super::table_types::{ABS, CLAMP, NEG, OMOD, OP_SEL, OperandType, Processor, SEXT0, SRC0, Slot};
use crate::decode_core::InlineFloat;
use crate::decode_core::immediates::{
    Modifiers, SignedHex, Swizzle, bit_list, write_immediate64, write_literal, write_omod,
};
use crate::decode_core::operand::aligned_scalar;
use crate::decode_core::sdwa;
use crate::decode_core::syntax::{self, Hwreg, Syntax, sign_extend};

impl Display for Instruction {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write_instruction(f, self)
    }
}

/// gfx9's numbering of scalar fields and its spelling of operands ([`Wide`]).
struct Gfx9;

impl Syntax for Gfx9 {
    fn scalar_operand(value: u32) -> Operand {
        scalar_operand(value)
    }

    fn write_operand(f: &mut Formatter<'_>, operand: Operand, width: u8) -> fmt::Result {
        write!(f, "{}", Wide(operand, width))
    }
}

type Operands<'a, 'b> = syntax::Operands<'a, 'b, Gfx9>;

/// An operand printed at a width in dwords; a pair of a named register is its pair's name
/// (`vcc`, `exec`, `flat_scratch`, `xnack_mask`).
struct Wide(Operand, u8);

impl Display for Wide {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let Wide(operand, width) = *self;
        let range = |f: &mut Formatter<'_>, file: &str, index: u32| {
            if width <= 1 {
                write!(f, "{file}{index}")
            } else {
                write!(f, "{file}[{index}:{}]", index + width as u32 - 1)
            }
        };
        let aligned = |index: u8| aligned_scalar(index, width);
        match operand {
            Operand::Sgpr(index) => range(f, "s", aligned(index) as u32),
            Operand::Vgpr(index) => range(f, "v", index as u32),
            Operand::Ttmp(index) => range(f, "ttmp", aligned(index) as u32),
            Operand::VccLo => f.write_str(if width == 2 { "vcc" } else { "vcc_lo" }),
            Operand::VccHi => f.write_str("vcc_hi"),
            Operand::ExecLo => f.write_str(if width == 2 { "exec" } else { "exec_lo" }),
            Operand::ExecHi => f.write_str("exec_hi"),
            Operand::Special(name) if width == 2 && name.ends_with("_lo") => f.write_str(&name[..name.len() - 3]),
            Operand::Null => f.write_str("null"),
            Operand::M0 => f.write_str("m0"),
            Operand::Scc => f.write_str("src_scc"),
            Operand::Int(value) => write!(f, "{value}"),
            Operand::Float(InlineFloat::InvTwoPi) if width == 2 => f.write_str("0.15915494309189532"),
            Operand::Float(value) => f.write_str(value.text()),
            Operand::Literal(value) if width == 2 => write_immediate64(f, value as u64, false),
            Operand::Literal(value) => write_literal(f, value),
            Operand::Special(name) => f.write_str(name),
            Operand::Reserved(value) => write!(f, "<reserved {value}>"),
        }
    }
}

/// A VGPR-file operand that may be an AGPR (`a[10:13]`).
struct Register {
    index: u8,
    width: u8,
    agpr: bool,
}

impl Display for Register {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if !self.agpr {
            return write!(f, "{}", Wide(Operand::Vgpr(self.index), self.width));
        }
        let index = self.index as u32;
        if self.width <= 1 { write!(f, "a{index}") } else { write!(f, "a[{index}:{}]", index + self.width as u32 - 1) }
    }
}

/// A 9-bit source that may name an AGPR (values 256..511 with `agpr`).
fn write_source(
    out: &mut Operands<'_, '_>,
    operand: Operand,
    width: u8,
    ty: OperandType,
    modifiers: Modifiers,
    agpr: bool,
) -> fmt::Result {
    match operand {
        Operand::Vgpr(index) if agpr => out.text(Register { index, width, agpr }),
        _ => out.source(operand, width, ty, modifiers),
    }
}

/// Whether printed operand `position` (slot `slot`) is an AGPR: by the opcode (`Entry::agprs`),
/// or by the encoding's `acc` bits where the processor has them (MI200 ISA guide: DS bit 25;
/// FLAT, MUBUF and MTBUF bit 55; MFMA's `acc_cd`, bit 15, for vdst and C, and its `acc` bits
/// [60:59] for A and B).
fn is_agpr(instruction: &Instruction, position: usize, slot: Slot) -> bool {
    if instruction.entry.agprs >> position & 1 == 1 {
        return true;
    }
    let [w0, w1, _] = instruction.words;
    let unified = instruction.processor.has_unified_registers();
    match (instruction.encoding, slot) {
        // Sparse MFMA's src2 is the VGPR of the sparsity index, never an AGPR.
        (Encoding::Vop3p, Slot::Src2(_)) if instruction.entry.mnemonic.starts_with("v_smfmac") => false,
        (Encoding::Vop3p, Slot::Vdst(_) | Slot::Src2(_)) if is_mfma(instruction.entry) => {
            unified && (w0 >> 15) & 1 == 1
        }
        (Encoding::Vop3p, Slot::Src0(_)) if is_mfma(instruction.entry) => (w1 >> 27) & 1 == 1,
        (Encoding::Vop3p, Slot::Src1(_)) if is_mfma(instruction.entry) => (w1 >> 28) & 1 == 1,
        (Encoding::Ds, Slot::Vdst(_) | Slot::Data0(_) | Slot::Data1(_)) => unified && (w0 >> 25) & 1 == 1,
        (Encoding::Flat | Encoding::Global | Encoding::Scratch, Slot::Vdst(_) | Slot::Data(_)) => {
            unified && (w1 >> 23) & 1 == 1
        }
        (Encoding::Mubuf | Encoding::Mtbuf, Slot::Vdata(_)) => unified && (w1 >> 23) & 1 == 1,
        _ => false,
    }
}

/// The matrix operations (VOP3P-MAI): their neg and op_sel bits are `blgp`, `cbsz`, `abid` and
/// the `acc` bits.
fn is_mfma(entry: &Entry) -> bool {
    entry.mnemonic.starts_with("v_mfma") || entry.mnemonic.starts_with("v_smfmac")
}

fn width_of(entry: &Entry, probe: fn(&Slot) -> Option<u8>) -> Option<u8> {
    entry.slots.iter().find_map(probe)
}

fn write_instruction(f: &mut Formatter<'_>, instruction: &Instruction) -> fmt::Result {
    let entry = instruction.entry;
    let [w0, w1, _] = instruction.words;
    let literal = instruction.literal();
    f.write_str(entry.mnemonic)?;
    match (instruction.encoding, instruction.extension) {
        (Encoding::Sopp, _) => return write_sopp(f, instruction),
        (Encoding::Sopk, _) => return write_sopk(f, instruction),
        (_, Extension::Sdwa) => {
            let vopc = instruction.encoding == Encoding::Vopc;
            return sdwa::write::<Gfx9>(f, w0, w1, entry.slots, entry.types, vopc, "vcc");
        }
        (_, Extension::Dpp) => return write_dpp(f, instruction),
        _ => {}
    }
    let mut out = Operands::new(f);
    // A returning FLAT/GLOBAL atomic prints its vdst first; MUBUF's vdata is both.
    if instruction.returns_data()
        && !matches!(instruction.encoding, Encoding::Mubuf | Encoding::Mtbuf)
        && let Some(width) = atomic_return_width(instruction)
    {
        let agpr = instruction.processor.has_unified_registers() && (w1 >> 23) & 1 == 1;
        out.text(Register { index: (w1 >> 24) as u8, width, agpr })?;
    }
    for (position, slot) in entry.slots.iter().enumerate() {
        let agpr = is_agpr(instruction, position, *slot);
        match (instruction.encoding, *slot) {
            (Encoding::Sop2 | Encoding::Sop1, Slot::Sdst(width)) => {
                out.item(scalar_operand((w0 >> 16) & 0x7F), width)?
            }
            (_, Slot::Ssrc0(width)) => out.item(source_operand(w0 & 0xFF, literal), width)?,
            (_, Slot::Ssrc1(width)) => out.item(source_operand((w0 >> 8) & 0xFF, literal), width)?,
            // `s_set_gpr_idx_on`'s index mode (`AMDGPUInstPrinter::printVGPRIndexMode`).
            (Encoding::Sopc, Slot::Imm) => out.text(GprIdx((w0 >> 8) & 0xFF))?,
            (Encoding::Smem, _) => write_smem_slot(&mut out, instruction, *slot)?,
            (Encoding::Vop2 | Encoding::Vop1 | Encoding::Vopc, _) => match *slot {
                Slot::Vdst(width) => out.text(Register { index: (w0 >> 17) as u8, width, agpr })?,
                Slot::ScalarVdst(width) => out.item(scalar_operand((w0 >> 17) & 0xFF), width)?,
                Slot::Src0(width) => {
                    let operand = source_operand(w0 & 0x1FF, literal);
                    write_source(&mut out, operand, width, entry.types[0], Modifiers::default(), agpr)?
                }
                Slot::Src1(width) => out.text(Register { index: (w0 >> 9) as u8, width, agpr })?,
                Slot::Fixed(name) => out.text(name)?,
                Slot::Imm => out.text(format_args!("0x{:x}", literal.unwrap_or(0)))?,
                other => out.text(format_args!("{other:?}"))?,
            },
            (Encoding::Vop3 | Encoding::Vop3p, _) => write_vop3_slot(&mut out, instruction, *slot, agpr)?,
            (Encoding::Ds, _) => write_ds_slot(&mut out, *slot, w1, agpr)?,
            (Encoding::Flat | Encoding::Global | Encoding::Scratch, _) => {
                write_flat_slot(&mut out, instruction, *slot, agpr)?
            }
            (Encoding::Mubuf | Encoding::Mtbuf, _) => write_mubuf_slot(&mut out, instruction, *slot, agpr)?,
            (_, Slot::Fixed(name)) => out.text(name)?,
            (_, other) => out.text(format_args!("{other:?}"))?,
        }
    }
    write_modifiers(&mut out, instruction)
}

/// A VGPR index mode: `gpr_idx(SRC0,SRC1,SRC2,DST)` naming the set bits, in hex past bit 3.
struct GprIdx(u32);

impl Display for GprIdx {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if self.0 > 0xF {
            return write!(f, "0x{:x}", self.0);
        }
        let names: Vec<&str> = ["SRC0", "SRC1", "SRC2", "DST"]
            .into_iter()
            .enumerate()
            .filter(|(bit, _)| self.0 >> bit & 1 == 1)
            .map(|(_, name)| name)
            .collect();
        write!(f, "gpr_idx({})", names.join(","))
    }
}

/// The vdst width of a returning atomic: its data width, halved for compare-and-swap.
fn atomic_return_width(instruction: &Instruction) -> Option<u8> {
    let entry = instruction.entry;
    let data = width_of(entry, |slot| match slot {
        Slot::Data(width) | Slot::Vdata(width) => Some(*width),
        _ => None,
    })?;
    Some(if entry.mnemonic.contains("cmpswap") { data / 2 } else { data })
}

/// SMEM (Vega ISA guide 12.2): sbase [5:0] in SGPR pairs, sdata [12:6], soe 14, imm 17; the
/// second word is the offset [20:0] (imm), an offset SGPR [6:0] (no imm), and with soe the
/// soffset SGPR [31:25] besides. LLVM prints the register, then `offset:` when both are present.
fn write_smem_slot(out: &mut Operands<'_, '_>, instruction: &Instruction, slot: Slot) -> fmt::Result {
    let [w0, w1, _] = instruction.words;
    let sdata = (w0 >> 6) & 0x7F;
    let (imm, soe) = ((w0 >> 17) & 1 == 1, (w0 >> 14) & 1 == 1);
    let offset = sign_extend(w1 & 0x1F_FFFF, 21);
    match slot {
        Slot::Sdata(width) => out.item(scalar_operand(sdata), width),
        Slot::Sbase(width) => out.item(scalar_operand((w0 & 0x3F) << 1), width),
        Slot::Imm if out.first && sdata <= 64 => out.text(sdata),
        Slot::Imm if out.first => out.text(format_args!("0x{sdata:x}")),
        Slot::Imm | Slot::Soffset(_) | Slot::Null => match (imm, soe) {
            (true, false) => out.text(SignedHex(offset)),
            (false, false) => out.item(scalar_operand(w1 & 0x7F), 1),
            (true, true) => {
                out.item(scalar_operand(w1 >> 25), 1)?;
                out.modifier(format_args!("offset:{}", SignedHex(offset)))
            }
            (false, true) => out.item(scalar_operand(w1 >> 25), 1),
        },
        other => out.text(format_args!("{other:?}")),
    }
}

/// VOP3 and VOP3P (Vega ISA guide 12.3.4/12.3.5): vdst [7:0], abs (VOP3P: neg_hi) [10:8]
/// (VOP3B: sdst [14:8]), op_sel [14:11], clamp 15; src0/1/2 [8:0]/[17:9]/[26:18] of the second
/// word, omod [28:27] (VOP3P: op_sel_hi), neg (VOP3P: neg_lo) [31:29].
fn write_vop3_slot(out: &mut Operands<'_, '_>, instruction: &Instruction, slot: Slot, agpr: bool) -> fmt::Result {
    let [w0, w1, _] = instruction.words;
    let entry = instruction.entry;
    let vop3p = instruction.encoding == Encoding::Vop3p;
    let mix = entry.mnemonic.starts_with("v_mad_mix") || entry.mnemonic.starts_with("v_fma_mix");
    if let Slot::Vdst(width) = slot {
        return out.text(Register { index: w0 as u8, width, agpr });
    }
    let source = |index: u32, width: u8, out: &mut Operands<'_, '_>| -> fmt::Result {
        let operand = source_operand((w1 >> (9 * index)) & 0x1FF, None);
        let neg_bit = (w1 >> (29 + index)) & 1 == 1;
        let abs_bit = (w0 >> (8 + index)) & 1 == 1;
        let modifiers = if vop3p {
            Modifiers { neg: mix && neg_bit, abs: mix && abs_bit, sext: false }
        } else {
            let has = entry.modifiers & (SRC0 << index) != 0;
            Modifiers {
                neg: has && entry.modifiers & NEG != 0 && neg_bit,
                abs: has && entry.modifiers & ABS != 0 && abs_bit,
                sext: entry.modifiers & (SEXT0 << index) != 0 && neg_bit,
            }
        };
        write_source(out, operand, width, entry.types[index as usize], modifiers, agpr)
    };
    syntax::write_vop3_slot(out, slot, w0, source)
}

/// A DS operand, a VGPR (or with `acc`, an AGPR) from the second word: vdst [31:24], addr [7:0],
/// data0 [15:8], data1 [23:16].
fn write_ds_slot(out: &mut Operands<'_, '_>, slot: Slot, w1: u32, agpr: bool) -> fmt::Result {
    let (index, width, agpr) = match slot {
        Slot::Vdst(width) => (w1 >> 24, width, agpr),
        Slot::Addr(width) => (w1, width, false),
        Slot::Data0(width) => (w1 >> 8, width, agpr),
        Slot::Data1(width) => (w1 >> 16, width, agpr),
        other => return out.text(format_args!("{other:?}")),
    };
    out.text(Register { index: index as u8, width, agpr })
}

/// FLAT/GLOBAL/SCRATCH (Vega ISA guide 12.8): addr [39:32], data [47:40], saddr [54:48]
/// (`off`: 0x7F), vdst [63:56]. GLOBAL with a scalar base takes a 32-bit VGPR offset; SCRATCH
/// takes either the VGPR address (saddr `off`) or the scalar base.
fn write_flat_slot(out: &mut Operands<'_, '_>, instruction: &Instruction, slot: Slot, agpr: bool) -> fmt::Result {
    let [w0, w1, _] = instruction.words;
    let saddr = (w1 >> 16) & 0x7F;
    let has_saddr = instruction.encoding != Encoding::Flat && saddr != 0x7F;
    if instruction.encoding == Encoding::Scratch && instruction.processor == Processor::Gfx942 {
        return write_gfx942_scratch_slot(out, instruction, slot, agpr);
    }
    match (instruction.encoding, slot) {
        // With LDS set (bit 13) a load's data goes to LDS: no vdst.
        (_, Slot::Vdst(_)) if (w0 >> 13) & 1 == 1 => Ok(()),
        (_, Slot::Vdst(width)) => out.text(Register { index: (w1 >> 24) as u8, width, agpr }),
        (_, Slot::Data(width)) => out.text(Register { index: (w1 >> 8) as u8, width, agpr }),
        (Encoding::Scratch, Slot::Addr(width)) => {
            if has_saddr {
                out.text("off")
            } else {
                out.item(Operand::Vgpr(w1 as u8), width)
            }
        }
        (Encoding::Scratch, Slot::Off) => {
            if has_saddr {
                out.item(scalar_operand(saddr), 1)
            } else {
                out.text("off")
            }
        }
        (_, Slot::Addr(width)) => out.item(Operand::Vgpr(w1 as u8), if has_saddr { 1 } else { width }),
        (_, Slot::Off) => {
            if has_saddr {
                out.item(scalar_operand(saddr), 2)
            } else {
                out.text("off")
            }
        }
        (_, other) => out.text(format_args!("{other:?}")),
    }
}

/// gfx942's SCRATCH (MI300 ISA guide, "Scratch"): bit 13 is `sve`, the VGPR address's enable
/// (not `lds`); LLVM prints both address operands as `off` when unused: the first is the VGPR
/// address, the second the scalar base (0x7F: `off`).
fn write_gfx942_scratch_slot(
    out: &mut Operands<'_, '_>,
    instruction: &Instruction,
    slot: Slot,
    agpr: bool,
) -> fmt::Result {
    let [w0, w1, _] = instruction.words;
    let saddr = (w1 >> 16) & 0x7F;
    let vgpr_address = (w0 >> 13) & 1 == 1;
    match slot {
        Slot::Vdst(width) => out.text(Register { index: (w1 >> 24) as u8, width, agpr }),
        Slot::Data(width) => out.text(Register { index: (w1 >> 8) as u8, width, agpr }),
        Slot::Addr(_) | Slot::Off if out.offs == 0 && vgpr_address => {
            out.offs += 1;
            out.item(Operand::Vgpr(w1 as u8), 1)
        }
        Slot::Off if out.offs > 0 && saddr != 0x7F => out.item(scalar_operand(saddr), 1),
        Slot::Addr(_) | Slot::Off => {
            out.offs += 1;
            out.text("off")
        }
        other => out.text(format_args!("{other:?}")),
    }
}

/// MUBUF's and MTBUF's TFE bit (bit 55: a status dword follows the loaded data), which gfx90a
/// and gfx942 spend on `acc`.
fn tfe(instruction: &Instruction) -> bool {
    !instruction.processor.has_unified_registers()
        && matches!(instruction.encoding, Encoding::Mubuf | Encoding::Mtbuf)
        && (instruction.words[1] >> 23) & 1 == 1
}

/// MUBUF and MTBUF (Vega ISA guide 12.4): offset [11:0], offen 12, idxen 13; vaddr [39:32],
/// vdata [47:40], srsrc [52:48] in SGPR quads, soffset [63:56].
fn write_mubuf_slot(out: &mut Operands<'_, '_>, instruction: &Instruction, slot: Slot, agpr: bool) -> fmt::Result {
    let [w0, w1, _] = instruction.words;
    match slot {
        // With LDS set (MUBUF bit 16) the data goes to LDS: no vdata.
        Slot::Vdata(_) if instruction.encoding == Encoding::Mubuf && (w0 >> 16) & 1 == 1 => Ok(()),
        Slot::Vdata(width) => {
            out.text(Register { index: (w1 >> 8) as u8, width: width + tfe(instruction) as u8, agpr })
        }
        Slot::Off => {
            let (offen, idxen) = ((w0 >> 12) & 1 == 1, (w0 >> 13) & 1 == 1);
            let width = if offen && idxen { 2 } else { 1 };
            if offen || idxen { out.item(Operand::Vgpr(w1 as u8), width) } else { out.text("off") }
        }
        Slot::Srsrc(width) => out.item(scalar_operand(((w1 >> 16) & 0x1F) << 2), width),
        Slot::Imm => out.item(source_operand(w1 >> 24, None), 1),
        other => out.text(format_args!("{other:?}")),
    }
}

fn takes_glc(entry: &Entry) -> bool {
    ["_load", "_store", "_atomic"].iter().any(|kind| entry.mnemonic.contains(kind))
}

fn source_count(entry: &Entry) -> u32 {
    entry.slots.iter().filter(|slot| matches!(slot, Slot::Src0(_) | Slot::Src1(_) | Slot::Src2(_))).count() as u32
}

/// The cache-policy bits, as bit positions in the instruction's first two words (bit 32 is the
/// second word's bit 0): glc (FLAT 16, MUBUF and MTBUF 14), slc (FLAT and MUBUF 17, MTBUF 54),
/// and the third bit (FLAT 25, MUBUF 15, MTBUF 53) that gfx90a calls `scc`; gfx940 renamed glc
/// `sc0`, slc `nt` and the third `sc1`.
fn write_cache_policy(out: &mut Operands<'_, '_>, instruction: &Instruction) -> fmt::Result {
    let [w0, w1, _] = instruction.words;
    let bits = w0 as u64 | (w1 as u64) << 32;
    let (glc, slc, third) = match instruction.encoding {
        Encoding::Mubuf => (14, 17, 15),
        Encoding::Mtbuf => (14, 54, 53),
        _ => (16, 17, 25),
    };
    let names: [(u32, &str); 3] = match instruction.processor {
        Processor::Gfx942 => [(glc, "sc0"), (slc, "nt"), (third, "sc1")],
        Processor::Gfx90a => [(glc, "glc"), (slc, "slc"), (third, "scc")],
        _ => [(glc, "glc"), (slc, "slc"), (64, "")],
    };
    for (bit, name) in names {
        if bit < 64 && (bits >> bit) & 1 == 1 {
            out.modifier(name)?;
        }
    }
    Ok(())
}

fn write_modifiers(out: &mut Operands<'_, '_>, instruction: &Instruction) -> fmt::Result {
    let [w0, w1, _] = instruction.words;
    match instruction.encoding {
        // Only the loads, stores and atomics print glc; the cache operations and the clocks
        // ignore it.
        Encoding::Smem if (w0 >> 16) & 1 == 1 && takes_glc(instruction.entry) => out.modifier("glc")?,
        Encoding::Vop3 => {
            let modifiers = instruction.entry.modifiers;
            let op_sel = (w0 >> 11) & 0xF;
            if modifiers & OP_SEL != 0 && op_sel != 0 {
                let list = bit_list(op_sel & 7, source_count(instruction.entry));
                out.modifier(format_args!("op_sel:{},{}]", &list[..list.len() - 1], op_sel >> 3))?;
            }
            if modifiers & CLAMP != 0 && (w0 >> 15) & 1 == 1 {
                out.modifier("clamp")?;
            }
            if modifiers & OMOD != 0 {
                write_omod(out, (w1 >> 27) & 3)?;
            }
        }
        Encoding::Vop3p if is_mfma(instruction.entry) => write_mfma_modifiers(out, instruction)?,
        Encoding::Vop3p => write_vop3p_modifiers(out, instruction)?,
        Encoding::Ds => write_ds_modifiers(out, instruction)?,
        Encoding::Flat | Encoding::Global | Encoding::Scratch => {
            // The offset is 13 bits: unsigned for FLAT, signed for GLOBAL and SCRATCH.
            let offset = if instruction.encoding == Encoding::Flat {
                (w0 & 0x1FFF) as i32
            } else {
                sign_extend(w0 & 0x1FFF, 13)
            };
            if offset != 0 {
                out.modifier(format_args!("offset:{offset}"))?;
            }
            write_cache_policy(out, instruction)?;
            let sve = instruction.encoding == Encoding::Scratch && instruction.processor == Processor::Gfx942;
            if (w0 >> 13) & 1 == 1 && !sve {
                out.modifier("lds")?;
            }
        }
        Encoding::Mubuf | Encoding::Mtbuf => write_buffer_modifiers(out, instruction)?,
        _ => {}
    }
    Ok(())
}

/// VOP3P's packed-math modifiers: op_sel [13:11], op_sel_hi [60:59] and 14, neg_lo [63:61],
/// neg_hi [10:8], clamp 15. The mixed-precision `v_mad_mix*`/`v_fma_mix*` print neg and abs on
/// the sources instead, and their op_sel_hi defaults to 0.
fn write_vop3p_modifiers(out: &mut Operands<'_, '_>, instruction: &Instruction) -> fmt::Result {
    let [w0, w1, _] = instruction.words;
    let mnemonic = instruction.entry.mnemonic;
    let sources = source_count(instruction.entry);
    let all = (1 << sources) - 1;
    let op_sel = (w0 >> 11) & 7;
    let op_sel_hi = ((w1 >> 27) & 3) | (((w0 >> 14) & 1) << 2);
    let (neg_lo, neg_hi) = ((w1 >> 29) & 7, (w0 >> 8) & 7);
    if op_sel & all != 0 {
        out.modifier(format_args!("op_sel:{}", bit_list(op_sel, sources)))?;
    }
    let mix = mnemonic.starts_with("v_mad_mix") || mnemonic.starts_with("v_fma_mix");
    let default_hi = if mix { 0 } else { all };
    if op_sel_hi & all != default_hi {
        out.modifier(format_args!("op_sel_hi:{}", bit_list(op_sel_hi, sources)))?;
    }
    if !mix {
        if neg_lo & all != 0 {
            out.modifier(format_args!("neg_lo:{}", bit_list(neg_lo, sources)))?;
        }
        if neg_hi & all != 0 {
            out.modifier(format_args!("neg_hi:{}", bit_list(neg_hi, sources)))?;
        }
    }
    if (w0 >> 15) & 1 == 1 {
        out.modifier("clamp")?;
    }
    Ok(())
}

/// MFMA's modifiers (MI200 ISA guide, VOP3P-MAI): cbsz [10:8], abid [14:11], blgp [63:61].
fn write_mfma_modifiers(out: &mut Operands<'_, '_>, instruction: &Instruction) -> fmt::Result {
    let [w0, w1, _] = instruction.words;
    let (cbsz, abid, blgp) = ((w0 >> 8) & 7, (w0 >> 11) & 0xF, w1 >> 29);
    for (value, name) in [(cbsz, "cbsz"), (abid, "abid")] {
        if value != 0 {
            out.modifier(format_args!("{name}:{value}"))?;
        }
    }
    // gfx942's f64 MFMA reads the blgp bits as the sources' neg.
    let f64_neg = instruction.processor == Processor::Gfx942 && instruction.entry.mnemonic.ends_with("_f64");
    match blgp {
        0 => Ok(()),
        _ if f64_neg => out.modifier(format_args!("neg:{}", bit_list(blgp, 3))),
        _ => out.modifier(format_args!("blgp:{blgp}")),
    }
}

/// DS (Vega ISA guide 12.6): offset0 [7:0], offset1 [15:8], gds 16.
fn write_ds_modifiers(out: &mut Operands<'_, '_>, instruction: &Instruction) -> fmt::Result {
    let w0 = instruction.words[0];
    let (offset0, offset1) = (w0 & 0xFF, (w0 >> 8) & 0xFF);
    let mnemonic = instruction.entry.mnemonic;
    let two_addresses = ["ds_read2", "ds_write2", "ds_wrxchg2"].iter().any(|two| mnemonic.starts_with(two));
    if two_addresses {
        if offset0 != 0 {
            out.modifier(format_args!("offset0:{offset0}"))?;
        }
        if offset1 != 0 {
            out.modifier(format_args!("offset1:{offset1}"))?;
        }
    } else if mnemonic == "ds_swizzle_b32" {
        if w0 & 0xFFFF != 0 {
            out.modifier(format_args!("offset:{}", Swizzle(w0 & 0xFFFF)))?;
        }
    } else if w0 & 0xFFFF != 0 {
        out.modifier(format_args!("offset:{}", w0 & 0xFFFF))?;
    }
    // gfx90a and gfx942 have no GDS: LLVM ignores the bit there.
    if (w0 >> 16) & 1 == 1 && !instruction.processor.has_unified_registers() {
        out.modifier("gds")?;
    }
    Ok(())
}

/// MUBUF's and MTBUF's modifiers: MTBUF's format (dfmt [22:19], nfmt [25:23]), idxen, offen,
/// offset, the cache policy, lds (MUBUF bit 16) and tfe.
fn write_buffer_modifiers(out: &mut Operands<'_, '_>, instruction: &Instruction) -> fmt::Result {
    let w0 = instruction.words[0];
    if instruction.entry.slots.is_empty() {
        // The cache operations (`buffer_wbl2`, `buffer_inv`) print only gfx942's scope bits,
        // sc0 (14) and sc1 (15).
        if instruction.processor == Processor::Gfx942 {
            for (bit, name) in [(14, "sc0"), (15, "sc1")] {
                if (w0 >> bit) & 1 == 1 {
                    out.modifier(name)?;
                }
            }
        }
        return Ok(());
    }
    if instruction.encoding == Encoding::Mtbuf {
        write_buffer_format(out, (w0 >> 19) & 0xF, (w0 >> 23) & 7)?;
    }
    let (offen, idxen) = ((w0 >> 12) & 1 == 1, (w0 >> 13) & 1 == 1);
    if idxen {
        out.modifier("idxen")?;
    }
    if offen {
        out.modifier("offen")?;
    }
    if w0 & 0xFFF != 0 {
        out.modifier(format_args!("offset:{}", w0 & 0xFFF))?;
    }
    write_cache_policy(out, instruction)?;
    if instruction.encoding == Encoding::Mubuf && (w0 >> 16) & 1 == 1 {
        out.modifier("lds")?;
    }
    if tfe(instruction) {
        out.modifier("tfe")?;
    }
    Ok(())
}

/// MTBUF's `format:[...]` (`AMDGPUInstPrinter::printFORMAT`'s pre-gfx10 form): the data and
/// numeric formats, each omitted at its default (`BUF_DATA_FORMAT_8`, `BUF_NUM_FORMAT_UNORM`).
fn write_buffer_format(out: &mut Operands<'_, '_>, dfmt: u32, nfmt: u32) -> fmt::Result {
    use super::buffer_format::{DATA_FORMATS as DATA, NUM_FORMATS as NUM};
    match (dfmt != 1, nfmt != 0) {
        (false, false) => Ok(()),
        (true, false) => out.modifier(format_args!("format:[BUF_DATA_FORMAT_{}]", DATA[dfmt as usize])),
        (false, true) => out.modifier(format_args!("format:[BUF_NUM_FORMAT_{}]", NUM[nfmt as usize])),
        (true, true) => out.modifier(format_args!(
            "format:[BUF_DATA_FORMAT_{},BUF_NUM_FORMAT_{}]",
            DATA[dfmt as usize], NUM[nfmt as usize]
        )),
    }
}

/// The DPP word (Vega ISA guide 12.3.3): src0 [7:0], dpp_ctrl [16:8], bound_ctrl 19, src0 neg
/// 20 and abs 21, src1 neg 22 and abs 23, bank_mask [27:24], row_mask [31:28].
fn write_dpp(f: &mut Formatter<'_>, instruction: &Instruction) -> fmt::Result {
    let w0 = instruction.words[0];
    let dpp = instruction.words[1];
    let entry = instruction.entry;
    let mut out = Operands::new(f);
    // Source neg, abs and sext, where the operation has them (`Entry::modifiers`).
    let flags = entry.modifiers;
    let modifiers = |index: u32| {
        let (neg_bit, has) = (20 + 2 * index, flags & (SRC0 << index) != 0);
        Modifiers {
            neg: has && flags & NEG != 0 && (dpp >> neg_bit) & 1 == 1,
            abs: has && flags & ABS != 0 && (dpp >> (neg_bit + 1)) & 1 == 1,
            sext: flags & (SEXT0 << index) != 0 && (dpp >> neg_bit) & 1 == 1,
        }
    };
    for slot in entry.slots {
        match *slot {
            Slot::Vdst(width) => out.item(Operand::Vgpr((w0 >> 17) as u8), width)?,
            Slot::ScalarVdst(width) => out.item(scalar_operand((w0 >> 17) & 0xFF), width)?,
            Slot::Src0(width) => out.source(Operand::Vgpr(dpp as u8), width, OperandType::B32, modifiers(0))?,
            Slot::Src1(width) => out.source(Operand::Vgpr((w0 >> 9) as u8), width, OperandType::B32, modifiers(1))?,
            Slot::Fixed(name) => out.text(name)?,
            other => out.text(format_args!("{other:?}"))?,
        }
    }
    out.modifier(DppCtrl((dpp >> 8) & 0x1FF, instruction.processor))?;
    out.modifier(format_args!("row_mask:0x{:x} bank_mask:0x{:x}", dpp >> 28, (dpp >> 24) & 0xF))?;
    if (dpp >> 19) & 1 == 1 {
        out.modifier("bound_ctrl:1")?;
    }
    Ok(())
}

/// A `dpp_ctrl` as LLVM names it for gfx9 (`AMDGPUInstPrinter::printDPPCtrl`): gfx9's wave
/// shifts and row broadcasts; gfx90a's `row_newbcast`.
struct DppCtrl(u32, Processor);

impl Display for DppCtrl {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let ctrl = self.0;
        match ctrl {
            0x000..=0x0FF => {
                let lanes: Vec<String> = (0..4).map(|index| ((ctrl >> (2 * index)) & 3).to_string()).collect();
                write!(f, "quad_perm:[{}]", lanes.join(","))
            }
            0x101..=0x10F => write!(f, "row_shl:{}", ctrl & 0xF),
            0x111..=0x11F => write!(f, "row_shr:{}", ctrl & 0xF),
            0x121..=0x12F => write!(f, "row_ror:{}", ctrl & 0xF),
            0x130 => f.write_str("wave_shl:1"),
            0x134 => f.write_str("wave_rol:1"),
            0x138 => f.write_str("wave_shr:1"),
            0x13C => f.write_str("wave_ror:1"),
            0x140 => f.write_str("row_mirror"),
            0x141 => f.write_str("row_half_mirror"),
            0x142 => f.write_str("row_bcast:15"),
            0x143 => f.write_str("row_bcast:31"),
            0x150..=0x15F if self.1.has_unified_registers() => write!(f, "row_newbcast:{}", ctrl & 0xF),
            _ => f.write_str("/* Invalid dpp_ctrl value */"),
        }
    }
}

fn write_sopk(f: &mut Formatter<'_>, instruction: &Instruction) -> fmt::Result {
    let w0 = instruction.words[0];
    let simm = w0 & 0xFFFF;
    let sdst = scalar_operand((w0 >> 16) & 0x7F);
    let width = width_of(instruction.entry, |slot| match slot {
        Slot::Sdst(width) => Some(*width),
        _ => None,
    });
    let names = hwreg_names(instruction.processor);
    match instruction.entry.mnemonic {
        "s_getreg_b32" => write!(f, " {}, {}", Wide(sdst, 1), Hwreg(simm, names)),
        "s_setreg_b32" => write!(f, " {}, {}", Hwreg(simm, names), Wide(sdst, 1)),
        "s_setreg_imm32_b32" => {
            write!(f, " {}, ", Hwreg(simm, names))?;
            write_literal(f, instruction.literal().unwrap_or(0))
        }
        // Branch targets: decimal.
        "s_call_b64" | "s_cbranch_i_fork" => write!(f, " {}, {simm}", Wide(sdst, width.unwrap_or(2))),
        _ => match width {
            Some(width) => write!(f, " {}, 0x{simm:x}", Wide(sdst, width)),
            None => write!(f, " 0x{simm:x}"),
        },
    }
}

/// The hardware registers a processor names (LLVM 19, `llvm-mc-19 --disassemble` of
/// `s_getreg_b32` over every id for gfx900, gfx90a and gfx942): gfx9 has `HW_REG_HW_ID` at 4 and
/// the trap base and memory registers at 16..19; gfx942 adds 20..24.
fn hwreg_names(processor: Processor) -> fn(u32) -> Option<&'static str> {
    fn gfx9(id: u32) -> Option<&'static str> {
        Some(match id {
            1 => "HW_REG_MODE",
            2 => "HW_REG_STATUS",
            3 => "HW_REG_TRAPSTS",
            4 => "HW_REG_HW_ID",
            5 => "HW_REG_GPR_ALLOC",
            6 => "HW_REG_LDS_ALLOC",
            7 => "HW_REG_IB_STS",
            15 => "HW_REG_SH_MEM_BASES",
            16 => "HW_REG_TBA_LO",
            17 => "HW_REG_TBA_HI",
            18 => "HW_REG_TMA_LO",
            19 => "HW_REG_TMA_HI",
            _ => return None,
        })
    }
    fn gfx942(id: u32) -> Option<&'static str> {
        match id {
            20 => Some("HW_REG_XCC_ID"),
            21 => Some("HW_REG_SQ_PERF_SNAPSHOT_DATA"),
            22 => Some("HW_REG_SQ_PERF_SNAPSHOT_DATA1"),
            23 => Some("HW_REG_SQ_PERF_SNAPSHOT_PC_LO"),
            24 => Some("HW_REG_SQ_PERF_SNAPSHOT_PC_HI"),
            _ => gfx9(id),
        }
    }
    if processor == Processor::Gfx942 { gfx942 } else { gfx9 }
}

fn write_sopp(f: &mut Formatter<'_>, instruction: &Instruction) -> fmt::Result {
    let simm = instruction.words[0] & 0xFFFF;
    let mnemonic = instruction.entry.mnemonic;
    if instruction.entry.slots.is_empty() {
        return Ok(());
    }
    match mnemonic {
        "s_waitcnt" => write!(f, " {}", Waitcnt(simm)),
        "s_sendmsg" | "s_sendmsghalt" => write!(f, " {}", crate::gfx10::format::Sendmsg(simm)),
        "s_endpgm" if simm == 0 => Ok(()),
        "s_endpgm" | "s_branch" => write!(f, " {simm}"),
        _ if mnemonic.starts_with("s_cbranch") => write!(f, " {simm}"),
        _ if simm <= 64 => write!(f, " {simm}"),
        _ => write!(f, " 0x{simm:x}"),
    }
}

/// `s_waitcnt`'s counters, gfx9 layout (Vega ISA guide, S_WAITCNT; LLVM's `AMDGPUBaseInfo`):
/// vmcnt [3:0] and [15:14], expcnt [6:4], lgkmcnt [11:8]. LLVM prints the counters below their
/// maximum, or all three when none is.
struct Waitcnt(u32);

impl Display for Waitcnt {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let simm = self.0;
        let (vm, exp, lgkm) = ((simm & 0xF) | ((simm >> 14) << 4), (simm >> 4) & 7, (simm >> 8) & 0xF);
        let parts: Vec<String> = [
            (vm != 0x3F).then(|| format!("vmcnt({vm})")),
            (exp != 7).then(|| format!("expcnt({exp})")),
            (lgkm != 0xF).then(|| format!("lgkmcnt({lgkm})")),
        ]
        .into_iter()
        .flatten()
        .collect();
        if parts.is_empty() {
            return write!(f, "vmcnt({vm}) expcnt({exp}) lgkmcnt({lgkm})");
        }
        f.write_str(&parts.join(" "))
    }
}
