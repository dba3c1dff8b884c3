//! LLVM's assembly syntax for decoded instructions, as `llvm-objdump-19 -d` prints it (the
//! decoder's test compares the two on every checked-in gfx1100 code object).

use core::fmt::{self, Display, Formatter, Write};

use super::decode::{Dpp, Encoding, Instruction};
use super::fields::{Operand, scalar_operand, source_operand};
use super::table::Entry;
use super::table_types::Slot;
use crate::decode_core::operand::aligned_scalar;
use crate::decode_core::syntax::{self, Hwreg, Syntax, shared_hwreg_name, sign_extend, write_ds_slot};

impl Display for Instruction {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.dual {
            Some(dual) => {
                let [w0, w1, _] = self.words;
                let x = [(w1 >> 24) & 0xFF, w0 & 0x1FF, (w0 >> 9) & 0xFF];
                let y_dst = (((w1 >> 17) & 0x7F) << 1) | (!x[0] & 1);
                let y = [y_dst, w1 & 0x1FF, (w1 >> 9) & 0xFF];
                write_vopd_half(f, self.entry, x, self.literal())?;
                f.write_str(" :: ")?;
                write_vopd_half(f, dual, y, self.literal())
            }
            None => write_instruction(f, self),
        }
    }
}

fn write_vopd_half(
    f: &mut Formatter<'_>,
    entry: &Entry,
    [vdst, src0, vsrc1]: [u32; 3],
    literal: Option<u32>,
) -> fmt::Result {
    f.write_str(entry.mnemonic)?;
    let mut out = Operands::new(f);
    for slot in entry.slots {
        match *slot {
            Slot::Vdst(width) => out.item(Operand::Vgpr(vdst as u8), width)?,
            Slot::Src0(width) => out.item(source_operand(src0, literal), width)?,
            Slot::Src1(width) => out.item(Operand::Vgpr(vsrc1 as u8), width)?,
            Slot::Imm => out.text(format_args!("0x{:x}", literal.unwrap_or(0)))?,
            _ => out.text(format_args!("{slot:?}"))?,
        }
    }
    Ok(())
}

/// gfx11's numbering of scalar fields and its spelling of operands ([`Wide`]).
struct Gfx11;

impl Syntax for Gfx11 {
    fn scalar_operand(value: u32) -> Operand {
        scalar_operand(value)
    }

    fn write_operand(f: &mut Formatter<'_>, operand: Operand, width: u8) -> fmt::Result {
        write!(f, "{}", Wide(operand, width))
    }
}

/// The operand list, as gfx11 spells it.
type Operands<'a, 'b> = syntax::Operands<'a, 'b, Gfx11>;

/// An operand printed at a width in dwords.
struct Wide(Operand, u8);

impl Display for Wide {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let Wide(operand, width) = *self;
        let range = |f: &mut Formatter<'_>, file: char, index: u32| {
            if width <= 1 {
                write!(f, "{file}{index}")
            } else {
                write!(f, "{file}[{index}:{}]", index + width as u32 - 1)
            }
        };
        match operand {
            // Wide scalar fields read aligned down, as LLVM reads them.
            Operand::Sgpr(index) => range(f, 's', aligned_scalar(index, width) as u32),
            Operand::Vgpr(index) => range(f, 'v', index as u32),
            Operand::Ttmp(index) => {
                let index = aligned_scalar(index, width);
                f.write_str("ttmp")?;
                if width <= 1 {
                    write!(f, "{index}")
                } else {
                    write!(f, "[{index}:{}]", index as u32 + width as u32 - 1)
                }
            }
            Operand::VccLo => f.write_str(if width == 2 { "vcc" } else { "vcc_lo" }),
            Operand::VccHi => f.write_str("vcc_hi"),
            Operand::ExecLo => f.write_str(if width == 2 { "exec" } else { "exec_lo" }),
            Operand::ExecHi => f.write_str("exec_hi"),
            Operand::Null => f.write_str("null"),
            Operand::M0 => f.write_str("m0"),
            Operand::Scc => f.write_str("scc"),
            Operand::Int(value) => write!(f, "{value}"),
            Operand::Float(value) => f.write_str(value.text()),
            Operand::Literal(value) => write_literal(f, value),
            Operand::Special(name) => f.write_str(name),
            Operand::Reserved(value) => write!(f, "<reserved {value}>"),
        }
    }
}

/// A literal as LLVM prints a 32-bit immediate (AMDGPUInstPrinter): values an inline constant
/// could hold in decimal or as the float, others in hex.
fn write_literal(f: &mut Formatter<'_>, value: u32) -> fmt::Result {
    if (-16..=64).contains(&(value as i32)) {
        return write!(f, "{}", value as i32);
    }
    let float = [0.5f32, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0].into_iter().find(|float| float.to_bits() == value);
    match float {
        Some(float) => write!(f, "{float:?}"),
        None if value == 0x3E22_F983 => f.write_str("0.15915494"),
        None => write!(f, "0x{value:x}"),
    }
}

fn write_instruction(f: &mut Formatter<'_>, instruction: &Instruction) -> fmt::Result {
    let entry = instruction.entry;
    let [w0, w1, _] = instruction.words;
    let literal = instruction.literal();
    if instruction.dpp == Dpp::None {
        f.write_str(entry.mnemonic)?;
    } else {
        // LLVM names the DPP forms `<op>_dpp` (VOP1, VOP2, VOPC) and `<op>_e64_dpp` (VOP3).
        let base = entry.mnemonic.trim_end_matches("_e32").trim_end_matches("_e64");
        let suffix = if matches!(instruction.encoding, Encoding::Vop3 | Encoding::Vop3p) { "_e64_dpp" } else { "_dpp" };
        write!(f, "{base}{suffix}")?;
    }
    match instruction.encoding {
        Encoding::Sopp => return write_sopp(f, instruction),
        Encoding::Sopk => return write_sopk(f, instruction),
        _ => {}
    }
    let mut out = Operands::new(f);
    let returns = instruction.returns_data();
    if returns && let Some(width) = atomic_return_width(entry) {
        out.item(Operand::Vgpr((w1 >> 24) as u8), width)?;
    }
    for slot in entry.slots {
        match (instruction.encoding, *slot) {
            (Encoding::Sop2 | Encoding::Sop1, Slot::Sdst(width)) => {
                out.item(scalar_operand((w0 >> 16) & 0x7F), width)?
            }
            (_, Slot::Ssrc0(width)) => out.item(source_operand(w0 & 0xFF, literal), width)?,
            (_, Slot::Ssrc1(width)) => out.item(source_operand((w0 >> 8) & 0xFF, literal), width)?,
            (Encoding::Sop1, Slot::Imm) if entry.mnemonic.starts_with("s_sendmsg_rtn") => {
                out.text(Sendmsg(w0 & 0xFF))?
            }
            (Encoding::Sop1, Slot::Imm) => out.item(source_operand(w0 & 0xFF, literal), 1)?,
            (Encoding::Smem, _) => write_smem_slot(&mut out, instruction, *slot)?,
            (Encoding::Vop2 | Encoding::Vop1 | Encoding::Vopc, _) => {
                let field = match *slot {
                    Slot::Vdst(width) => Some((Operand::Vgpr((w0 >> 17) as u8), width)),
                    Slot::ScalarVdst(width) => Some((scalar_operand((w0 >> 17) & 0xFF), width)),
                    Slot::Src0(width) => Some((source_operand(w0 & 0x1FF, literal), width)),
                    Slot::Src1(width) => Some((Operand::Vgpr((w0 >> 9) as u8), width)),
                    _ => None,
                };
                // DPP16 carries src0's and src1's neg and abs in its word.
                if let (Some(word), Slot::Src0(_) | Slot::Src1(_)) = (instruction.dpp_word(), *slot) {
                    let index = if matches!(slot, Slot::Src0(_)) { 0 } else { 1 };
                    let operand =
                        if index == 0 { Operand::Vgpr(word as u8) } else { field.map_or(Operand::Null, |f| f.0) };
                    let sixteen = instruction.dpp == Dpp::Dpp16;
                    let neg = sixteen && (word >> (20 + 2 * index)) & 1 == 1;
                    let abs = sixteen && (word >> (21 + 2 * index)) & 1 == 1;
                    out.separator()?;
                    let width = field.map_or(1, |f| f.1);
                    let prefix = if neg { "-" } else { "" };
                    if abs {
                        write!(out.f, "{prefix}|{}|", Wide(operand, width))?;
                    } else {
                        write!(out.f, "{prefix}{}", Wide(operand, width))?;
                    }
                    continue;
                }
                match (field, *slot) {
                    (Some((operand, width)), _) => out.item(operand, width)?,
                    (None, Slot::Fixed(name)) => out.text(name)?,
                    (None, Slot::Imm) => out.text(format_args!("0x{:x}", literal.unwrap_or(0)))?,
                    (None, other) => out.text(format_args!("{other:?}"))?,
                }
            }
            (Encoding::Vop3 | Encoding::Vop3p, _) => write_vop3_slot(&mut out, instruction, *slot)?,
            (Encoding::Ds, _) => write_ds_slot(&mut out, *slot, w1)?,
            (Encoding::Flat | Encoding::Global | Encoding::Scratch, _) => {
                write_flat_slot(&mut out, instruction, *slot)?
            }
            (Encoding::Mubuf | Encoding::Mtbuf, _) => write_mubuf_slot(&mut out, instruction, *slot)?,
            (_, Slot::Fixed(name)) => out.text(name)?,
            (_, other) => out.text(format_args!("{other:?}"))?,
        }
    }
    write_modifiers(&mut out, instruction)
}

/// The vdst width of a returning atomic: its data width, halved for compare-and-swap (whose
/// data holds the value and the comparand).
fn atomic_return_width(entry: &Entry) -> Option<u8> {
    if !entry.mnemonic.contains("_atomic_") {
        return None;
    }
    let data = entry.slots.iter().find_map(|slot| match slot {
        Slot::Data(width) | Slot::Vdata(width) => Some(*width),
        _ => None,
    })?;
    Some(if entry.mnemonic.contains("cmpswap") { data / 2 } else { data })
}

fn write_smem_slot(out: &mut Operands<'_, '_>, instruction: &Instruction, slot: Slot) -> fmt::Result {
    let [w0, w1, _] = instruction.words;
    let offset = sign_extend(w1 & 0x1F_FFFF, 21);
    let soffset = w1 >> 25;
    match slot {
        Slot::Sdata(width) => out.item(scalar_operand((w0 >> 6) & 0x7F), width),
        Slot::Sbase(width) => out.item(Operand::Sgpr(((w0 & 0x3F) << 1) as u8), width),
        Slot::Imm | Slot::Null | Slot::Soffset(_) => match (soffset, offset) {
            (0x7C, 0) => out.text("null"),
            (0x7C, offset) => out.text(format_args!("0x{:x}", offset as u32 & 0x1F_FFFF)),
            (register, 0) => out.item(scalar_operand(register), 1),
            (register, offset) => {
                out.item(scalar_operand(register), 1)?;
                out.modifier(format_args!("offset:0x{:x}", offset as u32 & 0x1F_FFFF))
            }
        },
        other => out.text(format_args!("{other:?}")),
    }
}

fn write_vop3_slot(out: &mut Operands<'_, '_>, instruction: &Instruction, slot: Slot) -> fmt::Result {
    let [w0, w1, _] = instruction.words;
    let literal = instruction.literal();
    let packed = instruction.encoding == Encoding::Vop3p;
    let has_sdst = instruction.entry.slots.iter().any(|slot| matches!(slot, Slot::Sdst(_)));
    let source = |index: u32, width: u8, out: &mut Operands<'_, '_>| -> fmt::Result {
        let operand = match instruction.dpp_word() {
            Some(word) if index == 0 => Operand::Vgpr(word as u8),
            _ => source_operand((w1 >> (9 * index)) & 0x1FF, literal),
        };
        let neg = (w1 >> (29 + index)) & 1 == 1 && !packed;
        let abs = !has_sdst && !packed && (w0 >> (8 + index)) & 1 == 1;
        out.separator()?;
        let prefix = if neg { "-" } else { "" };
        if abs {
            write!(out.f, "{prefix}|{}|", Wide(operand, width))
        } else {
            write!(out.f, "{prefix}{}", Wide(operand, width))
        }
    };
    syntax::write_vop3_slot(out, slot, w0, source)
}

fn write_flat_slot(out: &mut Operands<'_, '_>, instruction: &Instruction, slot: Slot) -> fmt::Result {
    let [_, w1, _] = instruction.words;
    let saddr = (w1 >> 16) & 0x7F;
    let has_saddr = saddr != 0x7C && instruction.encoding != Encoding::Flat;
    match (instruction.encoding, slot) {
        (_, Slot::Vdst(width)) => out.item(Operand::Vgpr((w1 >> 24) as u8), width),
        (_, Slot::Data(width)) => out.item(Operand::Vgpr((w1 >> 8) as u8), width),
        (Encoding::Scratch, Slot::Off) => {
            // Scratch's first `off` is the VGPR address (present when SVE is set), the second
            // its scalar base.
            out.offs += 1;
            if out.offs == 1 {
                if (w1 >> 23) & 1 == 1 { out.item(Operand::Vgpr(w1 as u8), 1) } else { out.text("off") }
            } else if has_saddr {
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

fn write_mubuf_slot(out: &mut Operands<'_, '_>, instruction: &Instruction, slot: Slot) -> fmt::Result {
    let [_, w1, _] = instruction.words;
    match slot {
        Slot::Vdata(width) => out.item(Operand::Vgpr((w1 >> 8) as u8), width),
        Slot::Off => {
            let (offen, idxen) = ((w1 >> 22) & 1 == 1, (w1 >> 23) & 1 == 1);
            let width = if offen && idxen { 2 } else { 1 };
            if offen || idxen { out.item(Operand::Vgpr(w1 as u8), width) } else { out.text("off") }
        }
        Slot::Srsrc(width) => out.item(Operand::Sgpr((((w1 >> 16) & 0x1F) << 2) as u8), width),
        Slot::Imm => out.item(source_operand(w1 >> 24, None), 1),
        other => out.text(format_args!("{other:?}")),
    }
}

fn write_modifiers(out: &mut Operands<'_, '_>, instruction: &Instruction) -> fmt::Result {
    let [w0, w1, _] = instruction.words;
    match instruction.encoding {
        Encoding::Smem => {
            if (w0 >> 14) & 1 == 1 {
                out.modifier("glc")?;
            }
            if (w0 >> 13) & 1 == 1 {
                out.modifier("dlc")?;
            }
        }
        Encoding::Vop3 if instruction.entry.mnemonic.starts_with("v_permlane") => {
            // op_sel here is `fi` and `bound_ctrl`, printed as two entries.
            let op_sel = (w0 >> 11) & 3;
            if op_sel != 0 {
                out.modifier(format_args!("op_sel:[{},{}]", op_sel & 1, op_sel >> 1))?;
            }
        }
        Encoding::Vop3p => write_vop3p_modifiers(out, instruction)?,
        Encoding::Vop3 => {
            let has_sdst = instruction.entry.slots.iter().any(|slot| matches!(slot, Slot::Sdst(_)));
            let op_sel = (w0 >> 11) & 0xF;
            if !has_sdst && op_sel != 0 {
                let sources = instruction
                    .entry
                    .slots
                    .iter()
                    .filter(|slot| matches!(slot, Slot::Src0(_) | Slot::Src1(_) | Slot::Src2(_)))
                    .count() as u32;
                let mut text = String::from("op_sel:[");
                for index in 0..sources {
                    let _ = write!(text, "{},", (op_sel >> index) & 1);
                }
                let _ = write!(text, "{}]", op_sel >> 3);
                out.modifier(text)?;
            }
            if (w0 >> 15) & 1 == 1 {
                out.modifier("clamp")?;
            }
            match (w1 >> 27) & 3 {
                1 => out.modifier("mul:2")?,
                2 => out.modifier("mul:4")?,
                3 => out.modifier("div:2")?,
                _ => {}
            }
        }
        Encoding::Ds => {
            let (offset0, offset1) = (w0 & 0xFF, (w0 >> 8) & 0xFF);
            if instruction.entry.mnemonic.contains("2addr") {
                if offset0 != 0 {
                    out.modifier(format_args!("offset0:{offset0}"))?;
                }
                if offset1 != 0 {
                    out.modifier(format_args!("offset1:{offset1}"))?;
                }
            } else if instruction.entry.mnemonic == "ds_swizzle_b32" {
                out.modifier(format_args!("offset:{}", Swizzle(w0 & 0xFFFF)))?;
            } else if w0 & 0xFFFF != 0 {
                out.modifier(format_args!("offset:{}", w0 & 0xFFFF))?;
            }
            if (w0 >> 17) & 1 == 1 {
                out.modifier("gds")?;
            }
        }
        Encoding::Flat | Encoding::Global | Encoding::Scratch => {
            let offset =
                if instruction.encoding == Encoding::Flat { (w0 & 0xFFF) as i32 } else { sign_extend(w0 & 0x1FFF, 13) };
            if offset != 0 {
                out.modifier(format_args!("offset:{offset}"))?;
            }
            for (bit, name) in [(14, "glc"), (15, "slc"), (13, "dlc")] {
                if (w0 >> bit) & 1 == 1 {
                    out.modifier(name)?;
                }
            }
        }
        Encoding::Mubuf | Encoding::Mtbuf => {
            let (offen, idxen) = ((w1 >> 22) & 1 == 1, (w1 >> 23) & 1 == 1);
            if instruction.entry.slots.is_empty() {
                return Ok(());
            }
            if instruction.encoding == Encoding::Mtbuf {
                // The default format, 1 (BUF_FMT_8_UNORM), is not printed.
                match (w0 >> 19) & 0x7F {
                    1 => {}
                    format => match crate::gfx11::buffer_format_name(format) {
                        Some(name) => out.modifier(format_args!("format:[BUF_FMT_{name}]"))?,
                        None => out.modifier(format_args!("format:{format}"))?,
                    },
                }
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
            for (bit, name) in [(14, "glc"), (12, "slc"), (13, "dlc")] {
                if (w0 >> bit) & 1 == 1 {
                    out.modifier(name)?;
                }
            }
        }
        _ => {}
    }
    write_dpp(out, instruction)
}

/// VOP3P's modifiers, each printed where it differs from its default: `op_sel` (all 0),
/// `op_sel_hi` (all 1; all 0 for the mixed-precision FMAs), `neg_lo`, `neg_hi`, then `clamp`.
fn write_vop3p_modifiers(out: &mut Operands<'_, '_>, instruction: &Instruction) -> fmt::Result {
    let [w0, w1, _] = instruction.words;
    let sources = instruction
        .entry
        .slots
        .iter()
        .filter(|slot| matches!(slot, Slot::Src0(_) | Slot::Src1(_) | Slot::Src2(_)))
        .count() as u32;
    let mask = (1u32 << sources) - 1;
    let op_sel = ((w0 >> 11) & 7) & mask;
    let op_sel_hi = (((w1 >> 27) & 3) | ((w0 >> 12) & 4)) & mask;
    let (neg_lo, neg_hi) = ((w1 >> 29) & mask, ((w0 >> 8) & 7) & mask);
    let mix = instruction.entry.mnemonic.starts_with("v_fma_mix");
    let list = |bits: u32| {
        let mut text = String::from("[");
        for index in 0..sources {
            let _ = write!(text, "{}{}", if index > 0 { "," } else { "" }, (bits >> index) & 1);
        }
        text + "]"
    };
    // gfx12's SWMMAC reads op_sel as the index register's part, which LLVM prints as
    // `index_key:N` (N in op_sel's low two bits; llvm-mc-19 -mcpu=gfx1200).
    if op_sel != 0 && instruction.entry.mnemonic.starts_with("v_swmmac") {
        out.modifier(format_args!("index_key:{}", op_sel & 3))?;
    } else if op_sel != 0 {
        out.modifier(format_args!("op_sel:{}", list(op_sel)))?;
    }
    if op_sel_hi != if mix { 0 } else { mask } {
        out.modifier(format_args!("op_sel_hi:{}", list(op_sel_hi)))?;
    }
    if neg_lo != 0 {
        out.modifier(format_args!("neg_lo:{}", list(neg_lo)))?;
    }
    if neg_hi != 0 {
        out.modifier(format_args!("neg_hi:{}", list(neg_hi)))?;
    }
    if (w0 >> 15) & 1 == 1 {
        out.modifier("clamp")?;
    }
    Ok(())
}

/// DPP's controls, after the operands: DPP8's lane selects, or DPP16's pattern, masks and
/// `bound_ctrl`, then `fi`.
fn write_dpp(out: &mut Operands<'_, '_>, instruction: &Instruction) -> fmt::Result {
    let Some(word) = instruction.dpp_word() else { return Ok(()) };
    match instruction.dpp {
        Dpp::Dpp8 { fetch_inactive } => {
            let lanes: Vec<String> = (0..8).map(|lane| ((word >> (8 + 3 * lane)) & 7).to_string()).collect();
            out.modifier(format_args!("dpp8:[{}]", lanes.join(",")))?;
            if fetch_inactive {
                out.modifier("fi:1")?;
            }
        }
        _ => {
            let control = (word >> 8) & 0x1FF;
            let n = control & 15;
            match control {
                0x000..=0x0FF => out.modifier(format_args!(
                    "quad_perm:[{},{},{},{}]",
                    control & 3,
                    (control >> 2) & 3,
                    (control >> 4) & 3,
                    (control >> 6) & 3
                ))?,
                0x101..=0x10F => out.modifier(format_args!("row_shl:{n}"))?,
                0x111..=0x11F => out.modifier(format_args!("row_shr:{n}"))?,
                0x121..=0x12F => out.modifier(format_args!("row_ror:{n}"))?,
                0x140 => out.modifier("row_mirror")?,
                0x141 => out.modifier("row_half_mirror")?,
                0x150..=0x15F => out.modifier(format_args!("row_share:{n}"))?,
                0x160..=0x16F => out.modifier(format_args!("row_xmask:{n}"))?,
                other => out.modifier(format_args!("<dpp_ctrl 0x{other:x}>"))?,
            }
            out.modifier(format_args!("row_mask:0x{:x} bank_mask:0x{:x}", word >> 28, (word >> 24) & 15))?;
            if (word >> 19) & 1 == 1 {
                out.modifier("bound_ctrl:1")?;
            }
            if (word >> 18) & 1 == 1 {
                out.modifier("fi:1")?;
            }
        }
    }
    Ok(())
}

fn write_sopk(f: &mut Formatter<'_>, instruction: &Instruction) -> fmt::Result {
    let w0 = instruction.words[0];
    let simm = w0 & 0xFFFF;
    let sdst = scalar_operand((w0 >> 16) & 0x7F);
    let width = instruction.entry.slots.iter().find_map(|slot| match slot {
        Slot::Sdst(width) => Some(*width),
        _ => None,
    });
    match instruction.entry.mnemonic {
        "s_getreg_b32" => write!(f, " {}, {}", Wide(sdst, 1), Hwreg(simm, hwreg_name)),
        "s_setreg_b32" => write!(f, " {}, {}", Hwreg(simm, hwreg_name), Wide(sdst, 1)),
        "s_setreg_imm32_b32" => {
            write!(f, " {}, {}", Hwreg(simm, hwreg_name), Literal(instruction.literal().unwrap_or(0)))
        }
        "s_version" => write!(f, " 0x{simm:x}"),
        _ => match width {
            Some(width) => write!(f, " {}, 0x{simm:x}", Wide(sdst, width)),
            None => write!(f, " 0x{simm:x}"),
        },
    }
}

/// gfx11's own names of hardware registers (LLVM 19's, `llvm-mc-19 --disassemble -mcpu=gfx1100`
/// of `s_getreg_b32` over every id), then those it shares with gfx10 ([`shared_hwreg_name`]).
fn hwreg_name(id: u32) -> Option<&'static str> {
    Some(match id {
        18 => "HW_REG_PERF_SNAPSHOT_PC_LO",
        19 => "HW_REG_PERF_SNAPSHOT_PC_HI",
        27 => "HW_REG_PERF_SNAPSHOT_DATA",
        _ => return shared_hwreg_name(id),
    })
}

/// An integer immediate: decimal where it is small, hex otherwise.
struct Literal(u32);

impl Display for Literal {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if (self.0 as i32) >= -16 && self.0 as i32 <= 64 {
            write!(f, "{}", self.0 as i32)
        } else {
            write!(f, "0x{:x}", self.0)
        }
    }
}

/// `ds_swizzle_b32`'s offset as LLVM prints it: `swizzle(QUAD_PERM,…)` for quad-permute mode
/// (bit 15 set), else the bit-mask mode's masks (and 4:0, or 9:5, xor 14:10) as SWAP, REVERSE,
/// BROADCAST or BITMASK_PERM with one character per lane-id bit, high first (`p` keep, `i`
/// invert, `0`/`1` force).
struct Swizzle(u32);

impl Display for Swizzle {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let offset = self.0;
        if offset & 0x8000 != 0 {
            let lanes: Vec<String> = (0..4).map(|lane| ((offset >> (2 * lane)) & 3).to_string()).collect();
            return write!(f, "swizzle(QUAD_PERM,{})", lanes.join(","));
        }
        let (and, or, xor) = (offset & 31, (offset >> 5) & 31, (offset >> 10) & 31);
        let group = 32 - and;
        if and == 31 && or == 0 && xor.count_ones() == 1 {
            write!(f, "swizzle(SWAP,{xor})")
        } else if and == 31 && or == 0 && xor > 0 && (xor + 1).is_power_of_two() {
            write!(f, "swizzle(REVERSE,{})", xor + 1)
        } else if group > 1 && group.is_power_of_two() && or < group && xor == 0 {
            write!(f, "swizzle(BROADCAST,{group},{or})")
        } else {
            f.write_str("swizzle(BITMASK_PERM,\"")?;
            for bit in (0..5).rev() {
                let c = match (and >> bit & 1, or >> bit & 1, xor >> bit & 1) {
                    (1, _, 1) => 'i',
                    (1, _, _) => 'p',
                    (_, 1, _) => '1',
                    _ => '0',
                };
                f.write_char(c)?;
            }
            f.write_str("\")")
        }
    }
}

fn write_sopp(f: &mut Formatter<'_>, instruction: &Instruction) -> fmt::Result {
    let simm = instruction.words[0] & 0xFFFF;
    let mnemonic = instruction.entry.mnemonic;
    if instruction.entry.slots.is_empty() {
        return Ok(());
    }
    match mnemonic {
        "s_waitcnt" => {
            // gfx11: vmcnt [15:10], lgkmcnt [9:4], expcnt [2:0]; LLVM prints the counters that
            // are not at their maximum (RDNA3 ISA guide; AMDGPUBaseInfo's waitcnt encoding).
            let (vm, lgkm, exp) = (simm >> 10, (simm >> 4) & 0x3F, simm & 7);
            let mut parts = Vec::new();
            if vm != 0x3F {
                parts.push(format!("vmcnt({vm})"));
            }
            if exp != 7 {
                parts.push(format!("expcnt({exp})"));
            }
            if lgkm != 0x3F {
                parts.push(format!("lgkmcnt({lgkm})"));
            }
            if parts.is_empty() {
                return write!(f, " vmcnt(63) expcnt(7) lgkmcnt(63)");
            }
            write!(f, " {}", parts.join(" "))
        }
        "s_delay_alu" => {
            const IDS: [&str; 12] = [
                "NO_DEP",
                "VALU_DEP_1",
                "VALU_DEP_2",
                "VALU_DEP_3",
                "VALU_DEP_4",
                "TRANS32_DEP_1",
                "TRANS32_DEP_2",
                "TRANS32_DEP_3",
                "FMA_ACCUM_CYCLE_1",
                "SALU_CYCLE_1",
                "SALU_CYCLE_2",
                "SALU_CYCLE_3",
            ];
            const SKIPS: [&str; 6] = ["SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4"];
            let name = |table: &[&'static str], value: u32| table.get(value as usize).copied().unwrap_or("?");
            let (id0, skip, id1) = (simm & 0xF, (simm >> 4) & 7, (simm >> 7) & 0xF);
            write!(f, " instid0({})", name(&IDS, id0))?;
            if skip != 0 {
                write!(f, " | instskip({})", name(&SKIPS, skip))?;
            }
            if id1 != 0 {
                write!(f, " | instid1({})", name(&IDS, id1))?;
            }
            Ok(())
        }
        "s_sendmsg" | "s_sendmsghalt" => write!(f, " {}", Sendmsg(simm)),
        "s_endpgm" if simm == 0 => Ok(()),
        // The ones LLVM prints in decimal.
        "s_nop" | "s_sleep" | "s_trap" | "s_endpgm" | "s_sethalt" | "s_setprio" | "s_setkill" | "s_incperflevel"
        | "s_decperflevel" => write!(f, " {simm}"),
        _ if mnemonic.starts_with("s_cbranch") || mnemonic == "s_branch" => write!(f, " {simm}"),
        _ => write!(f, " 0x{simm:x}"),
    }
}

/// A message id as LLVM names it for gfx11 (SIDefines.h, `SendMsg::Id`).
pub(crate) struct Sendmsg(pub u32);

impl Display for Sendmsg {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let name = match self.0 {
            1 => "MSG_INTERRUPT",
            3 => "MSG_DEALLOC_VGPRS",
            128 => "MSG_RTN_GET_DOORBELL",
            129 => "MSG_RTN_GET_DDID",
            130 => "MSG_RTN_GET_TMA",
            131 => "MSG_RTN_GET_REALTIME",
            132 => "MSG_RTN_SAVE_WAVE",
            133 => "MSG_RTN_GET_TBA",
            other => return write!(f, "sendmsg({other})"),
        };
        write!(f, "sendmsg({name})")
    }
}
