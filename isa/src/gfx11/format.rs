//! LLVM's assembly syntax for decoded instructions, as `llvm-objdump-19 -d` prints it (the
//! decoder's test compares the two on every checked-in gfx1100 code object).

use core::fmt::{self, Display, Formatter, Write};

use super::decode::{Encoding, Instruction};
use super::fields::{Operand, scalar_operand, source_operand};
use super::table_types::{Entry, Slot};

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

/// Writes ", "-separated operands after the mnemonic's space.
struct Operands<'a, 'b> {
    f: &'a mut Formatter<'b>,
    first: bool,
    /// `off`s printed so far (scratch prints the address's, then the scalar base's).
    offs: u8,
}

impl<'a, 'b> Operands<'a, 'b> {
    fn new(f: &'a mut Formatter<'b>) -> Self {
        Self { f, first: true, offs: 0 }
    }

    fn separator(&mut self) -> fmt::Result {
        let separator = if self.first { " " } else { ", " };
        self.first = false;
        self.f.write_str(separator)
    }

    fn item(&mut self, operand: Operand, width: u8) -> fmt::Result {
        self.separator()?;
        write!(self.f, "{}", Wide(operand, width))
    }

    fn text(&mut self, text: impl Display) -> fmt::Result {
        self.separator()?;
        write!(self.f, "{text}")
    }

    /// A modifier: space-separated after the operands.
    fn modifier(&mut self, text: impl Display) -> fmt::Result {
        write!(self.f, " {text}")
    }
}

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
            Operand::Sgpr(index) => range(f, 's', index as u32),
            Operand::Vgpr(index) => range(f, 'v', index as u32),
            Operand::Ttmp(index) => {
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
    f.write_str(entry.mnemonic)?;
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
                match (field, *slot) {
                    (Some((operand, width)), _) => out.item(operand, width)?,
                    (None, Slot::Fixed(name)) => out.text(name)?,
                    (None, Slot::Imm) => out.text(format_args!("0x{:x}", literal.unwrap_or(0)))?,
                    (None, other) => out.text(format_args!("{other:?}"))?,
                }
            }
            (Encoding::Vop3 | Encoding::Vop3p, _) => write_vop3_slot(&mut out, instruction, *slot)?,
            (Encoding::Ds, _) => {
                let (operand, width) = match *slot {
                    Slot::Vdst(width) => ((w1 >> 24) & 0xFF, width),
                    Slot::Addr(width) => (w1 & 0xFF, width),
                    Slot::Data0(width) => ((w1 >> 8) & 0xFF, width),
                    Slot::Data1(width) => ((w1 >> 16) & 0xFF, width),
                    other => {
                        out.text(format_args!("{other:?}"))?;
                        continue;
                    }
                };
                out.item(Operand::Vgpr(operand as u8), width)?;
            }
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
        let operand = source_operand((w1 >> (9 * index)) & 0x1FF, literal);
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
    match slot {
        Slot::Vdst(width) => out.item(Operand::Vgpr(w0 as u8), width),
        Slot::ScalarVdst(width) => out.item(scalar_operand(w0 & 0xFF), width),
        Slot::Sdst(width) => out.item(scalar_operand((w0 >> 8) & 0x7F), width),
        Slot::Src0(width) => source(0, width, out),
        Slot::Src1(width) => source(1, width, out),
        Slot::Src2(width) => source(2, width, out),
        Slot::Fixed(name) => out.text(name),
        other => out.text(format_args!("{other:?}")),
    }
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
        Encoding::Mubuf => {
            let (offen, idxen) = ((w1 >> 22) & 1 == 1, (w1 >> 23) & 1 == 1);
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
            for (bit, name) in [(14, "glc"), (12, "slc"), (13, "dlc")] {
                if (w0 >> bit) & 1 == 1 {
                    out.modifier(name)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

pub(crate) fn sign_extend(value: u32, bits: u32) -> i32 {
    let shift = 32 - bits;
    ((value << shift) as i32) >> shift
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
        "s_getreg_b32" => write!(f, " {}, {}", Wide(sdst, 1), Hwreg(simm)),
        "s_setreg_b32" => write!(f, " {}, {}", Hwreg(simm), Wide(sdst, 1)),
        "s_setreg_imm32_b32" => write!(f, " 0x{:x}, {}", instruction.literal().unwrap_or(0), Hwreg(simm)),
        "s_version" => write!(f, " 0x{simm:x}"),
        _ => match width {
            Some(width) => write!(f, " {}, 0x{simm:x}", Wide(sdst, width)),
            None => write!(f, " 0x{simm:x}"),
        },
    }
}

struct Hwreg(u32);

impl Display for Hwreg {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let (id, offset, size) = (self.0 & 0x3F, (self.0 >> 6) & 0x1F, ((self.0 >> 11) & 0x1F) + 1);
        if offset == 0 && size == 32 { write!(f, "hwreg({id})") } else { write!(f, "hwreg({id}, {offset}, {size})") }
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
        "s_nop" | "s_sleep" | "s_trap" | "s_endpgm" => write!(f, " {simm}"),
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
