//! Operand values of gfx10's register fields (RDNA2 ISA guide, the SSRC, SDST and SRC operand
//! tables; confirmed with `llvm-mc-19 -mcpu=gfx1030` on `v_mov_b32_e32 v0, <value>` for every
//! value). gfx10 numbers `m0` 124 and `null` 125, the reverse of gfx11; it also has
//! `src_pops_exiting_wave_id` (239), `src_vccz` (251), `src_execz` (252) and `src_lds_direct`
//! (254), and names SCC `src_scc` (253). The values are the [`Operand`]s gfx11 also reads.

use crate::decode_core::operand;
pub use crate::decode_core::{InlineFloat, Operand};

/// A 9-bit source field (`src0`, VOP3 sources; SOP sources are its low 256 values).
pub fn source_operand(value: u32, literal: Option<u32>) -> Operand {
    operand::source_operand(value, literal, scalar_operand)
}

/// A scalar field (SDST, SSRC below 255).
pub fn scalar_operand(value: u32) -> Operand {
    operand::scalar_operand(value, |value| match value {
        124 => Operand::M0,
        125 => Operand::Null,
        239 => Operand::Special("src_pops_exiting_wave_id"),
        251 => Operand::Special("src_vccz"),
        252 => Operand::Special("src_execz"),
        254 => Operand::Special("src_lds_direct"),
        other => Operand::Reserved(other),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gfx10_swaps_m0_and_null() {
        assert_eq!(scalar_operand(124), Operand::M0);
        assert_eq!(scalar_operand(125), Operand::Null);
        assert_eq!(source_operand(256 + 7, None), Operand::Vgpr(7));
        assert_eq!(source_operand(255, Some(9)), Operand::Literal(9));
    }
}
