//! gfx10's SDWA (sub-dword addressing) form of VOP1, VOP2 and VOPC, which gfx11 dropped.
//!
//! The SDWA word (RDNA2 ISA guide 13.3.2, "SDWA"): src0 [7:0], dst_sel [10:8], dst_unused
//! [12:11], clamp 13, omod [15:14] (VOPC: sdst [14:8], sd 15), src0_sel [18:16], src0_sext 19,
//! src0_neg 20, src0_abs 21, s0 23, src1_sel [26:24], src1_sext 27, src1_neg 28, src1_abs 29,
//! s1 31. A select is BYTE_0..3 (0..3), WORD_0 (4), WORD_1 (5) or DWORD (6); a source's select
//! (zero- or, with sext, sign-extended) is what the operation reads, then its neg and abs apply;
//! the destination's select says which bits of the register the result's low bits go to, and
//! dst_unused what the others become: zeros (UNUSED_PAD, 0), the field's sign above it and zeros
//! below (UNUSED_SEXT, 1), or the register's own bits (UNUSED_PRESERVE, 2).
//!
//! Each instruction becomes its gfx11 VOP3 form (clamp, omod, neg, abs carried over), and:
//! - where every select is one VOP3 makes (a whole dword; a 16-bit operand's WORD_0 or WORD_1
//!   through op_sel; a 16-bit result's WORD_0/WORD_1 with UNUSED_PRESERVE through op_sel, or its
//!   DWORD, whose high half VOP3 keeps: LLVM treats that half as undefined on gfx10,
//!   `GCNSubtarget::zeroesHigh16BitsOfDest`), the VOP3 instruction is the translation;
//! - otherwise it runs as [`Plan::Sdwa`](super::super::decoded_kernel::Plan): the VOP3 operation with
//!   its selected sources read from three VGPRs past the kernel's own ([`Sdwa::shadow`]), which
//!   the step fills with the selected bits first, and its result, where the destination is
//!   selected, written there and then merged into the destination register.

use super::super::Plan;
use super::super::reencode::{self, E32, Numbering};
use super::{NUMBERING, Refusal, Vop3};
use crate::gfx10;
use crate::gfx11::{self, Encoding as E11, Opcode as O11, Slot};
use crate::interp::operands::{Operands, Source};
use crate::interp::valu::{self, VOp, half_operands, source_kind};
use crate::interp::wave::{Flow, Kind, LANES, Wave};

const WORD_0: u32 = 4;
const WORD_1: u32 = 5;
const DWORD: u32 = 6;
const PAD: u32 = 0;
const SEXT: u32 = 1;
const PRESERVE: u32 = 2;

/// A sub-dword select: `bits` bits at bit `offset`; read sign-extended where `sext`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Select {
    offset: u32,
    bits: u32,
    sext: bool,
}

impl Select {
    /// BYTE_0..3 and WORD_0..1; `None` for DWORD and the reserved 7.
    fn of(sel: u32, sext: bool) -> Option<Select> {
        match sel {
            0..=3 => Some(Select { offset: 8 * sel, bits: 8, sext }),
            WORD_0 | WORD_1 => Some(Select { offset: 16 * (sel - WORD_0), bits: 16, sext }),
            _ => None,
        }
    }

    fn mask(self) -> u32 {
        (1u32 << self.bits) - 1
    }

    /// The selected bits of `value`, zero- or sign-extended.
    fn extract(self, value: u32) -> u32 {
        let field = (value >> self.offset) & self.mask();
        if self.sext { (((field << (32 - self.bits)) as i32) >> (32 - self.bits)) as u32 } else { field }
    }

    /// `result`'s low bits placed at the select in `old`, the other bits as `unused` says.
    fn insert(self, result: u32, old: u32, unused: u32) -> u32 {
        let field_mask = self.mask() << self.offset;
        let field = (result << self.offset) & field_mask;
        match unused {
            PRESERVE => (old & !field_mask) | field,
            SEXT if (result >> (self.bits - 1)) & 1 == 1 => field | !(field_mask | ((1u32 << self.offset) - 1)),
            _ => field,
        }
    }
}

/// An SDWA instruction as gfx11's VOP3, with the selects VOP3 cannot make.
pub(crate) struct Form {
    /// The VOP3 instruction: its sources and destination the SDWA instruction's own registers.
    pub vop3: gfx11::Instruction,
    /// Per source, the select to make before the operation reads it.
    pub sources: [Option<Select>; 2],
    /// The destination's select and dst_unused, where the result is not written as VOP3 writes it.
    pub destination: Option<(Select, u32)>,
}

/// `instruction` (a gfx10 SDWA VOP1, VOP2 or VOPC) as [`Form`].
pub(crate) fn form(instruction: &gfx10::Instruction, equivalent: O11) -> Result<Form, Refusal> {
    let written = Written {
        w0: instruction.words[0],
        word: instruction.words[1],
        slots: instruction.entry.slots,
        vopc: instruction.encoding == gfx10::Encoding::Vopc,
    };
    form_of(&written, equivalent, NUMBERING, false)
}

/// An SDWA VOP1, VOP2 or VOPC instruction as written, on gfx9 or gfx10 (whose SDWA words are
/// laid out alike: the Vega ISA guide's 12.3.2 and the RDNA2 ISA guide's 13.3.2).
pub(crate) struct Written<'a> {
    /// The VOP1/VOP2/VOPC dword.
    pub w0: u32,
    /// The SDWA dword.
    pub word: u32,
    /// The operation's printed operands.
    pub slots: &'a [Slot],
    pub vopc: bool,
}

/// `written` as [`Form`], its operands numbered by `numbering`. `zeroes_high`: a 16-bit result
/// written whole (DWORD) has its high half zeroed, as gfx9 does (LLVM's
/// `GCNSubtarget::zeroesHigh16BitsOfDest`), rather than kept.
pub(crate) fn form_of(
    written: &Written<'_>,
    equivalent: O11,
    numbering: Numbering,
    zeroes_high: bool,
) -> Result<Form, Refusal> {
    let word = written.word;
    let vop3 = gfx11::entry_of(E11::Vop3, equivalent).ok_or(Refusal("gfx11 has no VOP3 form of this operation"))?;
    let name = vop3.mnemonic.trim_end_matches("_e64");
    let half = half_operands(name);
    let float = source_kind(name) != Kind::Int;
    let mut fields = Vop3::default();
    let e32 = E32::of(written.w0, written.vopc, written.slots, true, numbering)?;
    let mut sources = [None; 2];
    let count = written.slots.iter().filter(|slot| matches!(slot, Slot::Src0(_) | Slot::Src1(_))).count();
    for (index, selected) in sources.iter_mut().enumerate().take(count) {
        let base = 16 + 8 * index as u32;
        let (sel, sext) = ((word >> base) & 7, (word >> (base + 3)) & 1 == 1);
        let (neg, abs) = ((word >> (base + 4)) & 1, (word >> (base + 5)) & 1);
        if float && sext || !float && neg | abs != 0 {
            return Err(Refusal("SDWA sign extension of a float source, or neg/abs of an integer one"));
        }
        let high = match sel {
            DWORD if !sext => false,
            WORD_0 if half >> index & 1 == 1 && !sext => false,
            WORD_1 if half >> index & 1 == 1 && !sext => true,
            _ => {
                *selected = Some(Select::of(sel, sext).ok_or(Refusal("a reserved SDWA select"))?);
                false
            }
        };
        fields.op_sel |= (high as u32) << index;
        fields.neg |= neg << index;
        fields.abs |= abs << index;
    }
    // src0 is the word's [7:0], a scalar where s0 is set; src1 the VOP2/VOPC vsrc1 field, a
    // scalar where s1 is set.
    let source = numbering.source;
    fields.src[0] = if (word >> 23) & 1 == 1 { source(word & 0xFF)? } else { 256 + (word & 0xFF) };
    fields.src[1] = if (word >> 31) & 1 == 1 { source(e32.vsrc1)? } else { 256 + e32.vsrc1 };
    let mut destination = None;
    if written.vopc {
        if (word >> 15) & 1 == 1 {
            if !written.slots.iter().any(|slot| matches!(slot, Slot::Sdst(_))) {
                return Err(Refusal("an SDWA v_cmpx with a scalar destination"));
            }
            fields.sdst = Some((numbering.scalar)((word >> 8) & 0x7F)?);
        }
    } else {
        let (dst_sel, unused) = ((word >> 8) & 7, (word >> 11) & 3);
        let high = match (dst_sel, unused) {
            // gfx9: the 16-bit result in the low half, zeros above.
            (DWORD, _) if zeroes_high && half & 8 != 0 => {
                destination = Some((Select { offset: 0, bits: 16, sext: false }, PAD));
                false
            }
            (DWORD, _) => false,
            (WORD_0, PRESERVE) if half & 8 != 0 => false,
            (WORD_1, PRESERVE) if half & 8 != 0 => true,
            (_, PAD | SEXT | PRESERVE) => {
                destination = Some((Select::of(dst_sel, false).ok_or(Refusal("a reserved SDWA select"))?, unused));
                false
            }
            _ => return Err(Refusal("the reserved dst_unused 3")),
        };
        fields.op_sel |= (high as u32) << 3;
        fields.clamp = (word >> 13) & 1;
        fields.omod = (word >> 14) & 3;
    }
    let vop3 = reencode::vop3_of(written.slots, equivalent, e32, fields, numbering)?;
    Ok(Form { vop3, sources, destination })
}

/// `form`'s instruction and plan: its VOP3 instruction planned as gfx11 code where VOP3 makes
/// every select, else an SDWA plan whose shadow VGPRs start at `shadow`.
pub(crate) fn planned(form: &Form, shadow: u16) -> Result<(gfx11::Instruction, Plan), Refusal> {
    if form.sources == [None, None] && form.destination.is_none() {
        return Ok((form.vop3, Plan::of(&form.vop3)));
    }
    let plan = Sdwa::plan(form, shadow).ok_or(Refusal("the operation does not run"))?;
    Ok((form.vop3, Plan::Sdwa(Box::new(plan))))
}

/// An SDWA instruction whose selects VOP3 cannot make, planned ([`form`]'s VOP3 operation with
/// the selected operands redirected through the shadow VGPRs).
#[derive(Debug)]
pub(crate) struct Sdwa {
    /// The operation, reading a selected source from `shadow + index` and, where the
    /// destination is selected, writing `shadow + 2`.
    op: VOp,
    /// The operands as the instruction names them.
    original: Operands,
    sources: [Option<Select>; 2],
    destination: Option<(Select, u32)>,
    /// The first of the three VGPRs past the kernel's own that this passes values through.
    shadow: u16,
}

/// VGPRs an SDWA plan needs past the kernel's own ([`Sdwa::shadow`]).
pub(crate) const SHADOW_VGPRS: usize = 3;

impl Sdwa {
    /// Plans `form`, whose shadow VGPRs start at `shadow`; `None` if the operation cannot run.
    pub fn plan(form: &Form, shadow: u16) -> Option<Sdwa> {
        let mut op = VOp::plan(&form.vop3)?;
        let original = op.operands;
        for (index, select) in form.sources.iter().enumerate() {
            if select.is_some() {
                op.operands.src[index] = Source::Vgpr(shadow + index as u16);
            }
        }
        if form.destination.is_some() {
            op.operands.vdst = shadow + 2;
        }
        Some(Sdwa { op, original, sources: form.sources, destination: form.destination, shadow })
    }
}

/// Runs `sdwa`: the selected sources into their shadow VGPRs, the operation, the selected result
/// into the destination (in EXEC's lanes, which VOP1 and VOP2 write). `None` where the operation
/// does not run (nothing written to the kernel's registers).
pub(crate) fn step<const WIDE: bool>(wave: &mut Wave, sdwa: &Sdwa) -> Option<Flow> {
    for (index, select) in sdwa.sources.iter().enumerate() {
        if let Some(select) = select {
            let row = sdwa.original.row(wave, index);
            let shadow = &mut wave.vgpr[sdwa.shadow as usize + index];
            for lane in 0..LANES {
                shadow[lane] = select.extract(row[lane]);
            }
        }
    }
    let flow = valu::step::<WIDE>(wave, &sdwa.op)?;
    if let Some((select, unused)) = sdwa.destination {
        let result = wave.vgpr[sdwa.shadow as usize + 2];
        let exec = wave.exec();
        if let Some(target) = wave.vgpr.get_mut(sdwa.original.vdst as usize) {
            for lane in (0..LANES).filter(|lane| exec >> lane & 1 == 1) {
                target[lane] = select.insert(result[lane], target[lane], unused);
            }
        }
    }
    Some(flow)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selects_extract_and_insert_as_the_rdna2_guide_says() {
        let byte1 = Select::of(1, false).unwrap();
        assert_eq!(byte1.extract(0x1234_80FF), 0x80);
        assert_eq!(Select { sext: true, ..byte1 }.extract(0x1234_80FF), 0xFFFF_FF80);
        let word1 = Select::of(WORD_1, false).unwrap();
        assert_eq!(word1.extract(0x8765_4321), 0x8765);
        assert_eq!(Select::of(DWORD, false), None);
        // The result's low byte into byte 1: zeros, the sign above and zeros below, or the rest kept.
        assert_eq!(byte1.insert(0x0000_01F0, 0xAAAA_AAAA, PAD), 0x0000_F000);
        assert_eq!(byte1.insert(0x0000_01F0, 0xAAAA_AAAA, SEXT), 0xFFFF_F000);
        assert_eq!(byte1.insert(0x0000_0170, 0xAAAA_AAAA, SEXT), 0x0000_7000);
        assert_eq!(byte1.insert(0x0000_01F0, 0xAAAA_AAAA, PRESERVE), 0xAAAA_F0AA);
        assert_eq!(word1.insert(0x1234_5678, 0xAAAA_AAAA, PRESERVE), 0x5678_AAAA);
    }
}
