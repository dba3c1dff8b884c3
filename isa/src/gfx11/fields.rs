//! Operand values of the encodings' register fields (RDNA3 ISA guide, the SSRC, SDST and SRC
//! operand tables; gfx11 numbers `null` 124 and `m0` 125, the reverse of gfx10).

use crate::decode_core::operand;
pub use crate::decode_core::{InlineFloat, Operand};

/// A 9-bit source field (`src0`, VOP3 sources; SOP sources are its low 256 values).
pub fn source_operand(value: u32, literal: Option<u32>) -> Operand {
    operand::source_operand(value, literal, scalar_operand)
}

/// A scalar field (SDST, SSRC below 255).
pub fn scalar_operand(value: u32) -> Operand {
    operand::scalar_operand(value, |value| match value {
        124 => Operand::Null,
        125 => Operand::M0,
        other => Operand::Reserved(other),
    })
}
