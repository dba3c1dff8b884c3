//! The SDWA form's printing, alike on gfx9 and gfx10 but for the name of VOPC's implied
//! destination (`vcc` on wave64 gfx9, `vcc_lo` on gfx10).

use core::fmt::{self, Formatter};

use super::immediates::{Modifiers, OperandType, write_omod};
use super::operand::{Operand, Slot};
use super::syntax::{Operands, Syntax};

/// Writes an SDWA instruction's operands and selects after its mnemonic. The SDWA word (RDNA2 ISA
/// guide 13.3.2; gfx9's is the same): src0 [7:0], dst_sel [10:8], dst_unused [12:11],
/// clamp 13, omod [15:14] (VOPC: sdst [14:8] and sd 15), src0_sel [18:16], src0_sext 19,
/// src0_neg 20, src0_abs 21, s0 23, src1_sel [26:24], src1_sext 27, src1_neg 28, src1_abs 29,
/// s1 31.
pub(crate) fn write<S: Syntax>(
    f: &mut Formatter<'_>,
    w0: u32,
    sdwa: u32,
    slots: &[Slot],
    types: [OperandType; 3],
    vopc: bool,
    vcc: &str,
) -> fmt::Result {
    const SEL: [&str; 8] = ["BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD", "7"];
    // LLVM prints the reserved dst_unused value 3 as UNUSED_PAD.
    const UNUSED: [&str; 4] = ["UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE", "UNUSED_PAD"];
    let mut out = Operands::<S>::new(f);
    let modifiers = |base: u32| Modifiers {
        sext: (sdwa >> (base + 3)) & 1 == 1,
        neg: (sdwa >> (base + 4)) & 1 == 1,
        abs: (sdwa >> (base + 5)) & 1 == 1,
    };
    for slot in slots {
        match *slot {
            Slot::Vdst(width) => out.item(Operand::Vgpr((w0 >> 17) as u8), width)?,
            Slot::Sdst(width) => {
                if (sdwa >> 15) & 1 == 1 {
                    out.item(S::scalar_operand((sdwa >> 8) & 0x7F), width)?
                } else {
                    out.text(vcc)?
                }
            }
            Slot::Src0(width) => {
                let operand =
                    if (sdwa >> 23) & 1 == 1 { S::scalar_operand(sdwa & 0xFF) } else { Operand::Vgpr(sdwa as u8) };
                out.source(operand, width, types[0], modifiers(16))?
            }
            Slot::Src1(width) => {
                let field = (w0 >> 9) & 0xFF;
                let operand = if (sdwa >> 31) & 1 == 1 { S::scalar_operand(field) } else { Operand::Vgpr(field as u8) };
                out.source(operand, width, types[1], modifiers(24))?
            }
            Slot::Fixed(name) => out.text(name)?,
            other => out.text(format_args!("{other:?}"))?,
        }
    }
    if !vopc {
        if (sdwa >> 13) & 1 == 1 {
            out.modifier("clamp")?;
        }
        write_omod(&mut out, (sdwa >> 14) & 3)?;
        let has_vdst = slots.iter().any(|slot| matches!(slot, Slot::Vdst(_)));
        if has_vdst {
            out.modifier(format_args!("dst_sel:{}", SEL[((sdwa >> 8) & 7) as usize]))?;
            out.modifier(format_args!("dst_unused:{}", UNUSED[((sdwa >> 11) & 3) as usize]))?;
        }
    }
    if slots.iter().any(|slot| matches!(slot, Slot::Src0(_))) {
        out.modifier(format_args!("src0_sel:{}", SEL[((sdwa >> 16) & 7) as usize]))?;
    }
    if slots.iter().any(|slot| matches!(slot, Slot::Src1(_))) {
        out.modifier(format_args!("src1_sel:{}", SEL[((sdwa >> 24) & 7) as usize]))?;
    }
    Ok(())
}
