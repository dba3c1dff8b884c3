//! Operand values of gfx10's register fields (RDNA2 ISA guide, the SSRC, SDST and SRC operand
//! tables; confirmed with `llvm-mc-19 -mcpu=gfx1030` on `v_mov_b32_e32 v0, <value>` for every
//! value). gfx10 numbers `m0` 124 and `null` 125, the reverse of gfx11; it also has
//! `src_pops_exiting_wave_id` (239), `src_vccz` (251), `src_execz` (252) and `src_lds_direct`
//! (254), and names SCC `src_scc` (253). The values are gfx11's [`Operand`]s.

pub use crate::gfx11::{InlineFloat, Operand};

/// A 9-bit source field (`src0`, VOP3 sources; SOP sources are its low 256 values).
pub fn source_operand(value: u32, literal: Option<u32>) -> Operand {
    match value {
        256..=511 => Operand::Vgpr((value - 256) as u8),
        255 => Operand::Literal(literal.unwrap_or(0)),
        _ => scalar_operand(value),
    }
}

/// A scalar field (SDST, SSRC below 255).
pub fn scalar_operand(value: u32) -> Operand {
    match value {
        0..=105 => Operand::Sgpr(value as u8),
        106 => Operand::VccLo,
        107 => Operand::VccHi,
        108..=123 => Operand::Ttmp((value - 108) as u8),
        124 => Operand::M0,
        125 => Operand::Null,
        126 => Operand::ExecLo,
        127 => Operand::ExecHi,
        128..=192 => Operand::Int((value - 128) as i8),
        193..=208 => Operand::Int(-((value - 192) as i8)),
        235 => Operand::Special("src_shared_base"),
        236 => Operand::Special("src_shared_limit"),
        237 => Operand::Special("src_private_base"),
        238 => Operand::Special("src_private_limit"),
        239 => Operand::Special("src_pops_exiting_wave_id"),
        240 => Operand::Float(InlineFloat::Half),
        241 => Operand::Float(InlineFloat::MinusHalf),
        242 => Operand::Float(InlineFloat::One),
        243 => Operand::Float(InlineFloat::MinusOne),
        244 => Operand::Float(InlineFloat::Two),
        245 => Operand::Float(InlineFloat::MinusTwo),
        246 => Operand::Float(InlineFloat::Four),
        247 => Operand::Float(InlineFloat::MinusFour),
        248 => Operand::Float(InlineFloat::InvTwoPi),
        251 => Operand::Special("src_vccz"),
        252 => Operand::Special("src_execz"),
        253 => Operand::Scc,
        254 => Operand::Special("src_lds_direct"),
        other => Operand::Reserved(other),
    }
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
