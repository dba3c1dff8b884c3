//! gfx10.3 (RDNA2, wave32): gfx1030's instruction set, decoded and printed as LLVM 19 prints it.
//! Its operations are gfx10's own ([`Opcode`]); [`Opcode::gfx11_equivalent`] names the gfx11
//! operation that computes the same thing, where gfx11 has one.

mod decode;
mod fields;
pub(crate) mod format;
#[rustfmt::skip]
pub(crate) mod table;
mod table_types;

pub use decode::{Encoding, Extension, Instruction, decode, decode_all};
pub use fields::{InlineFloat, Operand, scalar_operand, source_operand};
pub use table::{Entry, Opcode};
pub use table_types::Slot;

/// The gfx11 operation that computes what `opcode` computes, if gfx11 has one
/// ([`Opcode::gfx11_equivalent`]).
pub fn gfx11_equivalent(opcode: Opcode) -> Option<crate::gfx11::Opcode> {
    opcode.gfx11_equivalent()
}
