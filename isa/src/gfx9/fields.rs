//! Operand values of gfx9's register fields (Vega and MI200 ISA guides, the SSRC, SDST and SRC
//! operand tables; confirmed with `llvm-mc-19 -mcpu=gfx90a`). gfx9 has SGPRs 0 to 101 only:
//! 102/103 are `flat_scratch`, 104/105 `xnack_mask`; 124 is `m0`. The guides reserve 125, which
//! LLVM 19 prints as `null` on gfx9 too (`llvm-mc-19 -mcpu=gfx900`). The values above are gfx10's.

pub use crate::decode_core::Operand;
use crate::decode_core::operand;

/// A 9-bit source field (`src0`, VOP3 sources; SOP sources are its low 256 values).
pub fn source_operand(value: u32, literal: Option<u32>) -> Operand {
    operand::source_operand(value, literal, scalar_operand)
}

/// A scalar field (SDST, SSRC below 255).
pub fn scalar_operand(value: u32) -> Operand {
    match value {
        102 => Operand::Special("flat_scratch_lo"),
        103 => Operand::Special("flat_scratch_hi"),
        104 => Operand::Special("xnack_mask_lo"),
        105 => Operand::Special("xnack_mask_hi"),
        _ => operand::scalar_operand(value, |value| match value {
            124 => Operand::M0,
            125 => Operand::Null,
            239 => Operand::Special("src_pops_exiting_wave_id"),
            251 => Operand::Special("src_vccz"),
            252 => Operand::Special("src_execz"),
            254 => Operand::Special("src_lds_direct"),
            other => Operand::Reserved(other),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gfx9_names_its_own_registers() {
        assert_eq!(scalar_operand(101), Operand::Sgpr(101));
        assert_eq!(scalar_operand(102), Operand::Special("flat_scratch_lo"));
        assert_eq!(scalar_operand(124), Operand::M0);
        assert_eq!(scalar_operand(125), Operand::Null);
        assert_eq!(source_operand(256 + 7, None), Operand::Vgpr(7));
    }
}
