//! LLVM's gfx10 assembly syntax for decoded instructions, as `llvm-objdump-19 -d --mcpu=gfx1030`
//! prints it (`tests/llvm_agreement_gfx10.rs` compares the two on every instruction of the
//! checked-in gfx1030 code objects and of the ROCm corpus in `tests/golden/gfx1030.txt`). Where a
//! rule is LLVM's printer's rather than the encoding's, it names the `AMDGPUInstPrinter` routine.

use core::fmt::{self, Display, Formatter};

use super::decode::{Encoding, Extension, Instruction};
use super::fields::InlineFloat;
use super::fields::{Operand, scalar_operand, source_operand};
use super::table::Entry;
use super::table_types::{ABS, CLAMP, NEG, OMOD, OP_SEL, OperandType, SEXT0, SRC0, Slot};
use crate::decode_core::immediates::{
    Modifiers, SignedHex, Swizzle, bit_list, write_immediate64, write_literal, write_omod,
};
use crate::decode_core::operand::aligned_scalar;
use crate::decode_core::sdwa;
use crate::decode_core::syntax::{self, Hwreg, Syntax, shared_hwreg_name, sign_extend, write_ds_slot};

impl Display for Instruction {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write_instruction(f, self)
    }
}

/// gfx10's numbering of scalar fields and its spelling of operands ([`Wide`]).
struct Gfx10;

impl Syntax for Gfx10 {
    fn scalar_operand(value: u32) -> Operand {
        scalar_operand(value)
    }

    fn write_operand(f: &mut Formatter<'_>, operand: Operand, width: u8) -> fmt::Result {
        write!(f, "{}", Wide(operand, width))
    }
}

/// The operand list, as gfx10 spells it.
type Operands<'a, 'b> = syntax::Operands<'a, 'b, Gfx10>;

/// An operand printed at a width in dwords.
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
        match operand {
            // Wide scalar fields read aligned down, as LLVM reads them.
            Operand::Sgpr(index) => range(f, "s", aligned_scalar(index, width) as u32),
            Operand::Vgpr(index) => range(f, "v", index as u32),
            Operand::Ttmp(index) => range(f, "ttmp", aligned_scalar(index, width) as u32),
            Operand::VccLo => f.write_str(if width == 2 { "vcc" } else { "vcc_lo" }),
            Operand::VccHi => f.write_str("vcc_hi"),
            Operand::ExecLo => f.write_str(if width == 2 { "exec" } else { "exec_lo" }),
            Operand::ExecHi => f.write_str("exec_hi"),
            Operand::Null => f.write_str("null"),
            Operand::M0 => f.write_str("m0"),
            Operand::Scc => f.write_str("src_scc"),
            Operand::Int(value) => write!(f, "{value}"),
            Operand::Float(InlineFloat::InvTwoPi) if width == 2 => f.write_str("0.15915494309189532"),
            Operand::Float(value) => f.write_str(value.text()),
            // A 64-bit integer operand's literal is zero-extended (`printImmediate64`).
            Operand::Literal(value) if width == 2 => write_immediate64(f, value as u64, false),
            Operand::Literal(value) => write_literal(f, value),
            Operand::Special(name) => f.write_str(name),
            Operand::Reserved(value) => write!(f, "<reserved {value}>"),
        }
    }
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
        (_, Extension::Sdwa) => return write_sdwa(f, instruction),
        (_, Extension::Dpp16 | Extension::Dpp8 { .. }) => return write_dpp(f, instruction),
        _ => {}
    }
    let mut out = Operands::new(f);
    // A returning FLAT/GLOBAL atomic prints its vdst first; MUBUF's vdata is both.
    if instruction.returns_data()
        && instruction.encoding != Encoding::Mubuf
        && let Some(width) = atomic_return_width(instruction)
    {
        out.item(Operand::Vgpr((w1 >> 24) as u8), width)?;
    }
    for slot in entry.slots {
        match (instruction.encoding, *slot) {
            (Encoding::Sop2 | Encoding::Sop1, Slot::Sdst(width)) => {
                out.item(scalar_operand((w0 >> 16) & 0x7F), width)?
            }
            (_, Slot::Ssrc0(width)) => out.item(source_operand(w0 & 0xFF, literal), width)?,
            (_, Slot::Ssrc1(width)) => out.item(source_operand((w0 >> 8) & 0xFF, literal), width)?,
            (Encoding::Smem, _) => write_smem_slot(&mut out, instruction, *slot)?,
            (Encoding::Vop2 | Encoding::Vop1 | Encoding::Vopc, _) => {
                let field = match *slot {
                    Slot::Vdst(width) => Some((Operand::Vgpr((w0 >> 17) as u8), width)),
                    Slot::ScalarVdst(width) => Some((scalar_operand((w0 >> 17) & 0xFF), width)),
                    Slot::Src0(width) => {
                        let operand = source_operand(w0 & 0x1FF, literal);
                        out.source(operand, width, entry.types[0], Modifiers::default())?;
                        continue;
                    }
                    Slot::Src1(width) => Some((Operand::Vgpr((w0 >> 9) as u8), width)),
                    _ => None,
                };
                match (field, *slot) {
                    (Some((operand, width)), _) => out.item(operand, width)?,
                    (None, Slot::Fixed(name)) => out.text(name)?,
                    (None, Slot::Imm) => out.text(format_args!("0x{:x}", literal.unwrap_or(0)))?,
                    (None, other) => out.text(format_args!("{other:?}"))?,
                }
            }
            (Encoding::Vop3, _) => write_vop3_slot(&mut out, instruction, *slot)?,
            (Encoding::Vop3p, _) => write_vop3p_slot(&mut out, instruction, *slot)?,
            (Encoding::Ds, _) => write_ds_slot(&mut out, *slot, w1)?,
            (Encoding::Flat | Encoding::Global | Encoding::Scratch, _) => {
                write_flat_slot(&mut out, instruction, *slot)?
            }
            (Encoding::Mubuf, _) => write_mubuf_slot(&mut out, instruction, *slot)?,
            (_, Slot::Fixed(name)) => out.text(name)?,
            (_, other) => out.text(format_args!("{other:?}"))?,
        }
    }
    write_modifiers(&mut out, instruction)
}

/// The vdst width of a returning atomic: its data width, halved for compare-and-swap (whose
/// data holds the value and the comparand).
fn atomic_return_width(instruction: &Instruction) -> Option<u8> {
    let entry = instruction.entry;
    let data = width_of(entry, |slot| match slot {
        Slot::Data(width) | Slot::Vdata(width) => Some(*width),
        _ => None,
    })?;
    Some(if entry.mnemonic.contains("cmpswap") { data / 2 } else { data })
}

/// SMEM (RDNA2 ISA guide 13.2): sdata [12:6], sbase [5:0] in SGPR pairs, a 21-bit signed offset
/// [52:32] and soffset [63:57], `null` (125) for none. LLVM prints the soffset register, then
/// the offset as `offset:` when both are present.
fn write_smem_slot(out: &mut Operands<'_, '_>, instruction: &Instruction, slot: Slot) -> fmt::Result {
    let [w0, w1, _] = instruction.words;
    let offset = sign_extend(w1 & 0x1F_FFFF, 21);
    let soffset = w1 >> 25;
    let sdata = (w0 >> 6) & 0x7F;
    match slot {
        Slot::Sdata(width) => out.item(scalar_operand(sdata), width),
        Slot::Sbase(width) => out.item(scalar_operand((w0 & 0x3F) << 1), width),
        // `s_atc_probe`'s first operand is its sdata field, a number: decimal up to 64.
        Slot::Imm if out.first && sdata <= 64 => out.text(sdata),
        Slot::Imm if out.first => out.text(format_args!("0x{sdata:x}")),
        Slot::Imm | Slot::Null | Slot::Soffset(_) => match (soffset, offset) {
            (0x7D, 0) => out.text("null"),
            (0x7D, offset) => out.text(SignedHex(offset)),
            (register, 0) => out.item(scalar_operand(register), 1),
            (register, offset) => {
                out.item(scalar_operand(register), 1)?;
                out.modifier(format_args!("offset:{}", SignedHex(offset)))
            }
        },
        other => out.text(format_args!("{other:?}")),
    }
}

/// VOP3A/VOP3B (RDNA2 ISA guide 13.3.4): vdst [7:0], abs [10:8] (VOP3B: sdst [14:8]), op_sel
/// [14:11], clamp 15; src0/src1/src2 [8:0]/[17:9]/[26:18] of the second word, omod [28:27],
/// neg [31:29].
fn write_vop3_slot(out: &mut Operands<'_, '_>, instruction: &Instruction, slot: Slot) -> fmt::Result {
    let [w0, w1, _] = instruction.words;
    let literal = instruction.literal();
    let entry = instruction.entry;
    let source = |index: u32, width: u8, out: &mut Operands<'_, '_>| -> fmt::Result {
        let operand = source_operand((w1 >> (9 * index)) & 0x1FF, literal);
        let has = entry.modifiers & (SRC0 << index) != 0;
        let neg_bit = (w1 >> (29 + index)) & 1 == 1;
        let neg = has && entry.modifiers & NEG != 0 && neg_bit;
        let abs = has && entry.modifiers & ABS != 0 && (w0 >> (8 + index)) & 1 == 1;
        let sext = entry.modifiers & (SEXT0 << index) != 0 && neg_bit;
        out.source(operand, width, entry.types[index as usize], Modifiers { neg, abs, sext })
    };
    syntax::write_vop3_slot(out, slot, w0, source)
}

/// VOP3P (RDNA2 ISA guide 13.3.5): as VOP3 with neg_hi [10:8], op_sel [13:11], op_sel_hi
/// [60:59] and 14, neg_lo [63:61]. The mixed-precision `v_fma_mix*` print neg_lo as `-` and
/// neg_hi as `|...|` (`AMDGPUInstPrinter::printOperandAndFPInputMods`).
fn write_vop3p_slot(out: &mut Operands<'_, '_>, instruction: &Instruction, slot: Slot) -> fmt::Result {
    let [w0, w1, _] = instruction.words;
    let literal = instruction.literal();
    let entry = instruction.entry;
    let mix = entry.mnemonic.starts_with("v_fma_mix");
    let source = |index: u32, width: u8, out: &mut Operands<'_, '_>| -> fmt::Result {
        let operand = source_operand((w1 >> (9 * index)) & 0x1FF, literal);
        let neg = mix && (w1 >> (29 + index)) & 1 == 1;
        let abs = mix && (w0 >> (8 + index)) & 1 == 1;
        out.source(operand, width, entry.types[index as usize], Modifiers { neg, abs, sext: false })
    };
    // VOP3's writer serves: gfx10's VOP3P operations have only vdst and sources, placed as VOP3's.
    syntax::write_vop3_slot(out, slot, w0, source)
}

/// FLAT/GLOBAL/SCRATCH (RDNA2 ISA guide 13.8): addr [39:32], data [47:40], saddr [54:48]
/// (`off`: 125; scratch also 127), vdst [63:56]. GLOBAL with a scalar base takes a 32-bit
/// VGPR offset; SCRATCH takes either the VGPR address (saddr `off`) or the scalar base.
fn write_flat_slot(out: &mut Operands<'_, '_>, instruction: &Instruction, slot: Slot) -> fmt::Result {
    let [_, w1, _] = instruction.words;
    let saddr = (w1 >> 16) & 0x7F;
    let scratch = instruction.encoding == Encoding::Scratch;
    let has_saddr = instruction.encoding != Encoding::Flat && saddr != 0x7D && !(scratch && saddr == 0x7F);
    match (instruction.encoding, slot) {
        // With LDS set (bit 13) a load's data goes to LDS: no vdst.
        (_, Slot::Vdst(_)) if (instruction.words[0] >> 13) & 1 == 1 => Ok(()),
        (_, Slot::Vdst(width)) => out.item(Operand::Vgpr((w1 >> 24) as u8), width + tfe(instruction)),
        (_, Slot::Data(width)) => out.item(Operand::Vgpr((w1 >> 8) as u8), width),
        (Encoding::Scratch, Slot::Addr(width)) => {
            if saddr == 0x7D {
                out.item(Operand::Vgpr(w1 as u8), width)
            } else {
                out.text("off")
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

/// MUBUF's TFE bit (bit 55: a status dword follows the loaded data); FLAT has none.
fn tfe(instruction: &Instruction) -> u8 {
    (instruction.encoding == Encoding::Mubuf && (instruction.words[1] >> 23) & 1 == 1) as u8
}

/// MUBUF (RDNA2 ISA guide 13.4): offset [11:0], offen 12, idxen 13; vaddr [39:32], vdata
/// [47:40], srsrc [52:48] in SGPR quads, soffset [63:56].
fn write_mubuf_slot(out: &mut Operands<'_, '_>, instruction: &Instruction, slot: Slot) -> fmt::Result {
    let [w0, w1, _] = instruction.words;
    match slot {
        // With LDS set (bit 16) the data goes to LDS: no vdata.
        Slot::Vdata(_) if (w0 >> 16) & 1 == 1 => Ok(()),
        Slot::Vdata(width) => out.item(Operand::Vgpr((w1 >> 8) as u8), width + tfe(instruction)),
        Slot::Off => {
            let (offen, idxen) = ((w0 >> 12) & 1 == 1, (w0 >> 13) & 1 == 1);
            let width = if offen && idxen { 2 } else { 1 };
            if offen || idxen { out.item(Operand::Vgpr(w1 as u8), width) } else { out.text("off") }
        }
        Slot::Srsrc(width) => out.item(scalar_operand(((w1 >> 16) & 0x1F) << 2), width),
        Slot::Imm => out.item(source_operand(w1 >> 24, instruction.literal()), 1),
        other => out.text(format_args!("{other:?}")),
    }
}

fn source_count(entry: &Entry) -> u32 {
    entry.slots.iter().filter(|slot| matches!(slot, Slot::Src0(_) | Slot::Src1(_) | Slot::Src2(_))).count() as u32
}

fn write_modifiers(out: &mut Operands<'_, '_>, instruction: &Instruction) -> fmt::Result {
    let [w0, w1, _] = instruction.words;
    match instruction.encoding {
        // Only the loads have cache-policy operands.
        Encoding::Smem if instruction.entry.mnemonic.contains("_load_") => {
            if (w0 >> 16) & 1 == 1 {
                out.modifier("glc")?;
            }
            if (w0 >> 14) & 1 == 1 {
                out.modifier("dlc")?;
            }
        }
        Encoding::Vop3 => {
            let modifiers = instruction.entry.modifiers;
            let op_sel = (w0 >> 11) & 0xF;
            if instruction.entry.mnemonic.starts_with("v_permlane") {
                // v_permlane16/x16's op_sel is [fi, bound_ctrl].
                if op_sel & 3 != 0 {
                    out.modifier(format_args!("op_sel:{}", bit_list(op_sel & 3, 2)))?;
                }
            } else if modifiers & OP_SEL != 0 && op_sel != 0 {
                let sources = source_count(instruction.entry);
                let list = bit_list(op_sel & 7, sources);
                out.modifier(format_args!("op_sel:{},{}]", &list[..list.len() - 1], op_sel >> 3))?;
            }
            if modifiers & CLAMP != 0 && (w0 >> 15) & 1 == 1 {
                out.modifier("clamp")?;
            }
            if modifiers & OMOD != 0 {
                write_omod(out, (w1 >> 27) & 3)?;
            }
        }
        Encoding::Vop3p => {
            let sources = source_count(instruction.entry);
            let all = (1 << sources) - 1;
            let op_sel = (w0 >> 11) & 7;
            let op_sel_hi = ((w1 >> 27) & 3) | (((w0 >> 14) & 1) << 2);
            let (neg_lo, neg_hi) = ((w1 >> 29) & 7, (w0 >> 8) & 7);
            if op_sel & all != 0 {
                out.modifier(format_args!("op_sel:{}", bit_list(op_sel, sources)))?;
            }
            let mix = instruction.entry.mnemonic.starts_with("v_fma_mix");
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
        }
        Encoding::Ds => {
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
            if (w0 >> 17) & 1 == 1 {
                out.modifier("gds")?;
            }
        }
        Encoding::Flat | Encoding::Global | Encoding::Scratch => {
            // FLAT's offset is 12 bits unsigned; GLOBAL's and SCRATCH's signed.
            let offset =
                if instruction.encoding == Encoding::Flat { (w0 & 0xFFF) as i32 } else { sign_extend(w0 & 0xFFF, 12) };
            if offset != 0 {
                out.modifier(format_args!("offset:{offset}"))?;
            }
            for (bit, name) in [(16, "glc"), (17, "slc"), (12, "dlc"), (13, "lds")] {
                if (w0 >> bit) & 1 == 1 {
                    out.modifier(name)?;
                }
            }
        }
        Encoding::Mubuf => {
            let (offen, idxen) = ((w0 >> 12) & 1 == 1, (w0 >> 13) & 1 == 1);
            if instruction.entry.slots.is_empty() {
                return Ok(());
            }
            if idxen {
                out.modifier("idxen")?;
            }
            if offen {
                out.modifier("offen")?;
            }
            if w0 & 0xFFF != 0 {
                out.modifier(format_args!("offset:{}", w0 & 0xFFF))?;
            }
            for (bit, name) in
                [(w0 >> 14, "glc"), (w1 >> 22, "slc"), (w0 >> 15, "dlc"), (w0 >> 16, "lds"), (w1 >> 23, "tfe")]
            {
                if bit & 1 == 1 {
                    out.modifier(name)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// The SDWA word: the shared printer ([`sdwa::write`]), with gfx10's `vcc_lo` for VOPC's implied
/// destination.
fn write_sdwa(f: &mut Formatter<'_>, instruction: &Instruction) -> fmt::Result {
    let entry = instruction.entry;
    let vopc = instruction.encoding == Encoding::Vopc;
    sdwa::write::<Gfx10>(f, instruction.words[0], instruction.words[1], entry.slots, entry.types, vopc, "vcc_lo")
}

/// The DPP16 and DPP8 words (RDNA2 ISA guide 13.3.3). DPP16: src0 [7:0], dpp_ctrl [16:8], fi
/// 18, bound_ctrl 19, src0 neg 20 and abs 21, src1 neg 22 and abs 23, bank_mask [27:24],
/// row_mask [31:28]. DPP8: src0 [7:0], eight 3-bit lane selects [31:8].
fn write_dpp(f: &mut Formatter<'_>, instruction: &Instruction) -> fmt::Result {
    let w0 = instruction.words[0];
    let dpp = instruction.words[1];
    let dpp16 = instruction.extension == Extension::Dpp16;
    let mut out = Operands::new(f);
    // Source neg, abs and sext (DPP16 only), where the operation has them (`Entry::modifiers`).
    let flags = instruction.entry.modifiers;
    let modifiers = |index: u32| {
        let (neg_bit, has) = (20 + 2 * index, dpp16 && flags & (SRC0 << index) != 0);
        Modifiers {
            neg: has && flags & NEG != 0 && (dpp >> neg_bit) & 1 == 1,
            abs: has && flags & ABS != 0 && (dpp >> (neg_bit + 1)) & 1 == 1,
            sext: dpp16 && flags & (SEXT0 << index) != 0 && (dpp >> neg_bit) & 1 == 1,
        }
    };
    for slot in instruction.entry.slots {
        match *slot {
            Slot::Vdst(width) => out.item(Operand::Vgpr((w0 >> 17) as u8), width)?,
            Slot::ScalarVdst(width) => out.item(scalar_operand((w0 >> 17) & 0xFF), width)?,
            Slot::Src0(width) => out.source(Operand::Vgpr(dpp as u8), width, OperandType::B32, modifiers(0))?,
            Slot::Src1(width) => out.source(Operand::Vgpr((w0 >> 9) as u8), width, OperandType::B32, modifiers(1))?,
            Slot::Fixed(name) => out.text(name)?,
            other => out.text(format_args!("{other:?}"))?,
        }
    }
    match instruction.extension {
        Extension::Dpp8 { fetch_inactive } => {
            let lanes: Vec<String> = (0..8).map(|lane| ((dpp >> (8 + 3 * lane)) & 7).to_string()).collect();
            out.modifier(format_args!("dpp8:[{}]", lanes.join(",")))?;
            if fetch_inactive {
                out.modifier("fi:1")?;
            }
        }
        _ => {
            out.modifier(DppCtrl((dpp >> 8) & 0x1FF))?;
            out.modifier(format_args!("row_mask:0x{:x} bank_mask:0x{:x}", dpp >> 28, (dpp >> 24) & 0xF))?;
            if (dpp >> 19) & 1 == 1 {
                out.modifier("bound_ctrl:1")?;
            }
            if (dpp >> 18) & 1 == 1 {
                out.modifier("fi:1")?;
            }
        }
    }
    Ok(())
}

/// A DPP16 `dpp_ctrl` as LLVM names it for gfx10 (`AMDGPUInstPrinter::printDPPCtrl`), its
/// comments for the gfx9 controls gfx10 dropped included.
struct DppCtrl(u32);

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
            0x130 => f.write_str("/* wave_shl is not supported starting from GFX10 */"),
            0x134 => f.write_str("/* wave_rol is not supported starting from GFX10 */"),
            0x138 => f.write_str("/* wave_shr is not supported starting from GFX10 */"),
            0x13C => f.write_str("/* wave_ror is not supported starting from GFX10 */"),
            0x140 => f.write_str("row_mirror"),
            0x141 => f.write_str("row_half_mirror"),
            0x142 | 0x143 => f.write_str("/* row_bcast is not supported starting from GFX10 */"),
            0x150..=0x15F => write!(f, "row_share:{}", ctrl & 0xF),
            0x160..=0x16F => write!(f, "row_xmask:{}", ctrl & 0xF),
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
    match instruction.entry.mnemonic {
        "s_getreg_b32" => write!(f, " {}, {}", Wide(sdst, 1), Hwreg(simm, hwreg_name)),
        "s_setreg_b32" => write!(f, " {}, {}", Hwreg(simm, hwreg_name), Wide(sdst, 1)),
        "s_setreg_imm32_b32" => {
            f.write_str(" ")?;
            write!(f, "{}, ", Hwreg(simm, hwreg_name))?;
            write_literal(f, instruction.literal().unwrap_or(0))
        }
        "s_version" => write!(f, " {}", Version(simm)),
        // Branch targets: decimal.
        "s_call_b64" | "s_subvector_loop_begin" | "s_subvector_loop_end" => {
            write!(f, " {}, {simm}", Wide(sdst, width.unwrap_or(1)))
        }
        _ => match width {
            Some(width) => write!(f, " {}, 0x{simm:x}", Wide(sdst, width)),
            None => write!(f, " 0x{simm:x}"),
        },
    }
}

/// `s_version`'s operand (`AMDGPUInstPrinter::printSVersion`'s gfx10 form): a named
/// microcode version, then the flag bits.
struct Version(u32);

impl Display for Version {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let value = self.0;
        if value & 0x1F00 != 0 {
            return write!(f, "0x{value:x}");
        }
        let mut text = match value & 0xFF {
            0 => "UC_VERSION_GFX7".to_owned(),
            4 => "UC_VERSION_GFX10".to_owned(),
            6 => "UC_VERSION_GFX11".to_owned(),
            other => other.to_string(),
        };
        // An MCExpr of nested ors: `(a|b)|c`.
        let mut flags = 0;
        for (bit, name) in [(13, "UC_VERSION_W64_BIT"), (14, "UC_VERSION_W32_BIT"), (15, "UC_VERSION_MDP_BIT")] {
            if (value >> bit) & 1 == 1 {
                text = if flags == 0 { format!("{text}|{name}") } else { format!("({text})|{name}") };
                flags += 1;
            }
        }
        f.write_str(&text)
    }
}

/// gfx10's own names of hardware registers (LLVM's `AMDGPUAsmUtils` `Hwreg` table, probed for
/// every id with llvm-mc-19), then those it shares with gfx11 ([`shared_hwreg_name`]).
fn hwreg_name(id: u32) -> Option<&'static str> {
    Some(match id {
        16 => "HW_REG_TBA_LO",
        17 => "HW_REG_TBA_HI",
        18 => "HW_REG_TMA_LO",
        19 => "HW_REG_TMA_HI",
        25 => "HW_REG_POPS_PACKER",
        _ => return shared_hwreg_name(id),
    })
}

fn write_sopp(f: &mut Formatter<'_>, instruction: &Instruction) -> fmt::Result {
    let simm = instruction.words[0] & 0xFFFF;
    let mnemonic = instruction.entry.mnemonic;
    if instruction.entry.slots.is_empty() {
        return Ok(());
    }
    match mnemonic {
        "s_waitcnt" => write!(f, " {}", Waitcnt(simm)),
        "s_waitcnt_depctr" => write!(f, " {}", Depctr(simm)),
        "s_sendmsg" | "s_sendmsghalt" => write!(f, " {}", Sendmsg(simm)),
        "s_endpgm" if simm == 0 => Ok(()),
        // Branch targets and `s_endpgm`'s operand: decimal.
        "s_endpgm" | "s_branch" => write!(f, " {simm}"),
        _ if mnemonic.starts_with("s_cbranch") => write!(f, " {simm}"),
        // Operands LLVM always prints in hex.
        "s_inst_prefetch" | "s_clause" | "s_round_mode" | "s_ttracedata_imm" => write!(f, " 0x{simm:x}"),
        // The rest (`printU16ImmOperand`): decimal up to 64, hex above.
        _ if simm <= 64 => write!(f, " {simm}"),
        _ => write!(f, " 0x{simm:x}"),
    }
}

/// `s_waitcnt`'s counters, gfx10 layout (RDNA2 ISA guide, S_WAITCNT; LLVM's `AMDGPUBaseInfo`):
/// vmcnt [3:0] and [15:14], expcnt [6:4], lgkmcnt [13:8]. LLVM prints the counters below their
/// maximum, or all three when none is.
struct Waitcnt(u32);

impl Display for Waitcnt {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let simm = self.0;
        let (vm, exp, lgkm) = ((simm & 0xF) | ((simm >> 14) << 4), (simm >> 4) & 7, (simm >> 8) & 0x3F);
        let parts: Vec<String> = [
            (vm != 0x3F).then(|| format!("vmcnt({vm})")),
            (exp != 7).then(|| format!("expcnt({exp})")),
            (lgkm != 0x3F).then(|| format!("lgkmcnt({lgkm})")),
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

/// `s_waitcnt_depctr`'s fields for gfx10 (LLVM's `DepCtr` table): printed by name where they
/// differ from their maximum, all of them where none does; in hex if unused bits (5, 6) are set.
struct Depctr(u32);

impl Display for Depctr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        const FIELDS: [(&str, u32, u32); 7] = [
            ("depctr_hold_cnt", 7, 1),
            ("depctr_sa_sdst", 0, 1),
            ("depctr_va_vdst", 12, 4),
            ("depctr_va_sdst", 9, 3),
            ("depctr_va_ssrc", 8, 1),
            ("depctr_va_vcc", 1, 1),
            ("depctr_vm_vsrc", 2, 3),
        ];
        let value = self.0;
        if value & 0x60 != 0 {
            return write!(f, "0x{value:x}");
        }
        let fields: Vec<(&str, u32, bool)> = FIELDS
            .iter()
            .map(|&(name, shift, width)| {
                let mask = (1 << width) - 1;
                let field = (value >> shift) & mask;
                (name, field, field != mask)
            })
            .collect();
        let all = !fields.iter().any(|&(_, _, differs)| differs);
        let parts: Vec<String> = fields
            .into_iter()
            .filter(|&(_, _, differs)| differs || all)
            .map(|(name, field, _)| format!("{name}({field})"))
            .collect();
        f.write_str(&parts.join(" "))
    }
}

/// A message as LLVM names it for gfx10 (`AMDGPUInstPrinter::printSendMsg`; SIDefines.h's
/// `SendMsg`): id [3:0], operation [6:4], stream [9:8].
pub(crate) struct Sendmsg(pub(crate) u32);

impl Display for Sendmsg {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let imm = self.0;
        let (id, op, stream) = (imm & 0xF, (imm >> 4) & 7, (imm >> 8) & 3);
        let name = match id {
            1 => "MSG_INTERRUPT",
            2 => "MSG_GS",
            3 => "MSG_GS_DONE",
            4 => "MSG_SAVEWAVE",
            5 => "MSG_STALL_WAVE_GEN",
            6 => "MSG_HALT_WAVES",
            7 => "MSG_ORDERED_PS_DONE",
            8 => "MSG_EARLY_PRIM_DEALLOC",
            9 => "MSG_GS_ALLOC_REQ",
            10 => "MSG_GET_DOORBELL",
            11 => "MSG_GET_DDID",
            15 => "MSG_SYSMSG",
            _ => "",
        };
        let gs = matches!(id, 2 | 3);
        let op_name = match (id, op) {
            (2 | 3, 0) if id == 3 => Some("GS_OP_NOP"),
            (2 | 3, 1) => Some("GS_OP_CUT"),
            (2 | 3, 2) => Some("GS_OP_EMIT"),
            (2 | 3, 3) => Some("GS_OP_EMIT_CUT"),
            (15, 1) => Some("SYSMSG_OP_ECC_ERR_INTERRUPT"),
            (15, 2) => Some("SYSMSG_OP_REG_RD"),
            (15, 4) => Some("SYSMSG_OP_TTRACE_PC"),
            _ => None,
        };
        let stream_allowed = gs && op != 0;
        let valid = !name.is_empty()
            && match id {
                2 | 3 | 15 => op_name.is_some() && (stream_allowed || stream == 0),
                _ => op == 0 && stream == 0,
            };
        if !valid {
            // The numeric form only where it spells the whole immediate.
            return if imm & !0x37F == 0 { write!(f, "sendmsg({id}, {op}, {stream})") } else { write!(f, "{imm}") };
        }
        write!(f, "sendmsg({name}")?;
        if let Some(op_name) = op_name {
            write!(f, ", {op_name}")?;
            if stream_allowed {
                write!(f, ", {stream}")?;
            }
        }
        f.write_str(")")
    }
}
