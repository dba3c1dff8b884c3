//! gfx9 (GCN5 and CDNA: gfx900, gfx906, gfx908, gfx90a, gfx942; wave64): the family's instruction
//! sets, decoded and printed as LLVM 19 prints them for each processor. Its operations are gfx9's
//! own ([`Opcode`]); [`Opcode::gfx11_equivalent`] names the gfx11 operation that computes the same
//! thing, where gfx11 has one. The processors share one table: each row names the processors
//! that have it ([`Processor`]).

pub(crate) mod buffer_format;
mod decode;
mod fields;
mod format;
#[rustfmt::skip]
pub(crate) mod table;
mod table_types;

pub use decode::{Encoding, Extension, Instruction, decode, decode_all};
pub use fields::{Operand, scalar_operand, source_operand};
pub use table::{Entry, Opcode};
pub use table_types::{Processor, Slot};
