//! The pieces of LLVM's assembly syntax both front-ends print alike: the operand list, the VOP3
//! and DS operand fields, `hwreg(...)`. Each ISA's printer supplies its [`Syntax`].

use core::fmt::{self, Display, Formatter};
use core::marker::PhantomData;

use super::operand::{Operand, Slot};

/// What the shared printing needs from an ISA: how it numbers scalar fields and spells operands.
pub(crate) trait Syntax {
    /// The operand a scalar field's value names (the ISA's `scalar_operand`).
    fn scalar_operand(value: u32) -> Operand;

    /// Writes `operand` printed at a width of `width` dwords.
    fn write_operand(f: &mut Formatter<'_>, operand: Operand, width: u8) -> fmt::Result;
}

/// Writes ", "-separated operands after the mnemonic's space, as ISA `S` spells them.
pub(crate) struct Operands<'a, 'b, S> {
    pub(crate) f: &'a mut Formatter<'b>,
    pub(crate) first: bool,
    /// `off`s printed so far (gfx11's scratch prints the address's, then the scalar base's).
    pub(crate) offs: u8,
    syntax: PhantomData<S>,
}

impl<'a, 'b, S: Syntax> Operands<'a, 'b, S> {
    /// An empty list on `f`.
    pub(crate) fn new(f: &'a mut Formatter<'b>) -> Self {
        Self { f, first: true, offs: 0, syntax: PhantomData }
    }

    /// Starts the next operand: a space before the first, ", " before the others.
    pub(crate) fn separator(&mut self) -> fmt::Result {
        let separator = if self.first { " " } else { ", " };
        self.first = false;
        self.f.write_str(separator)
    }

    /// An operand at a width in dwords.
    pub(crate) fn item(&mut self, operand: Operand, width: u8) -> fmt::Result {
        self.separator()?;
        S::write_operand(self.f, operand, width)
    }

    /// An operand printed as `text`.
    pub(crate) fn text(&mut self, text: impl Display) -> fmt::Result {
        self.separator()?;
        write!(self.f, "{text}")
    }

    /// A modifier: space-separated after the operands.
    pub(crate) fn modifier(&mut self, text: impl Display) -> fmt::Result {
        write!(self.f, " {text}")
    }
}

/// A VOP3 or VOP3P operand, whose fields both ISAs place alike: vdst [7:0] (an SGPR for
/// `ScalarVdst`), sdst [14:8]; `source` prints source `index` (0 to 2) with the ISA's modifiers.
pub(crate) fn write_vop3_slot<S: Syntax>(
    out: &mut Operands<'_, '_, S>,
    slot: Slot,
    w0: u32,
    source: impl FnOnce(u32, u8, &mut Operands<'_, '_, S>) -> fmt::Result,
) -> fmt::Result {
    match slot {
        Slot::Vdst(width) => out.item(Operand::Vgpr(w0 as u8), width),
        Slot::ScalarVdst(width) => out.item(S::scalar_operand(w0 & 0xFF), width),
        Slot::Sdst(width) => out.item(S::scalar_operand((w0 >> 8) & 0x7F), width),
        Slot::Src0(width) => source(0, width, out),
        Slot::Src1(width) => source(1, width, out),
        Slot::Src2(width) => source(2, width, out),
        Slot::Fixed(name) => out.text(name),
        other => out.text(format_args!("{other:?}")),
    }
}

/// A DS operand, a VGPR from the second word `w1` on both ISAs: vdst [63:56], addr [39:32],
/// data0 [47:40], data1 [55:48].
pub(crate) fn write_ds_slot<S: Syntax>(out: &mut Operands<'_, '_, S>, slot: Slot, w1: u32) -> fmt::Result {
    let (register, width) = match slot {
        Slot::Vdst(width) => ((w1 >> 24) & 0xFF, width),
        Slot::Addr(width) => (w1 & 0xFF, width),
        Slot::Data0(width) => ((w1 >> 8) & 0xFF, width),
        Slot::Data1(width) => ((w1 >> 16) & 0xFF, width),
        other => return out.text(format_args!("{other:?}")),
    };
    out.item(Operand::Vgpr(register as u8), width)
}

/// A hardware register operand, `hwreg(...)`: id [5:0], offset [10:6], size - 1 [15:11]. The
/// second field is the ISA's name of an id (`None`: printed as a number); most ISAs compose it
/// from their own names and [`shared_hwreg_name`].
pub(crate) struct Hwreg(pub u32, pub fn(u32) -> Option<&'static str>);

impl Display for Hwreg {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let (id, offset, size) = (self.0 & 0x3F, (self.0 >> 6) & 0x1F, ((self.0 >> 11) & 0x1F) + 1);
        f.write_str("hwreg(")?;
        match (self.1)(id) {
            Some(name) => f.write_str(name)?,
            None => write!(f, "{id}")?,
        }
        if offset != 0 || size != 32 {
            write!(f, ", {offset}, {size}")?;
        }
        f.write_str(")")
    }
}

/// The hardware registers gfx10 and gfx11 both name (LLVM 19's names, `llvm-mc-19` on
/// `s_getreg_b32` over every id).
pub(crate) fn shared_hwreg_name(id: u32) -> Option<&'static str> {
    Some(match id {
        1 => "HW_REG_MODE",
        2 => "HW_REG_STATUS",
        3 => "HW_REG_TRAPSTS",
        5 => "HW_REG_GPR_ALLOC",
        6 => "HW_REG_LDS_ALLOC",
        7 => "HW_REG_IB_STS",
        15 => "HW_REG_SH_MEM_BASES",
        20 => "HW_REG_FLAT_SCR_LO",
        21 => "HW_REG_FLAT_SCR_HI",
        23 => "HW_REG_HW_ID1",
        24 => "HW_REG_HW_ID2",
        29 => "HW_REG_SHADER_CYCLES",
        _ => return None,
    })
}

/// `value`'s low `bits` bits as a signed number.
pub(crate) fn sign_extend(value: u32, bits: u32) -> i32 {
    let shift = 32 - bits;
    ((value << shift) as i32) >> shift
}
