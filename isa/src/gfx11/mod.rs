//! gfx11 (RDNA3, wave32): gfx1100's instruction set.

mod buffer_format;
mod decode;
mod fields;
mod format;
#[rustfmt::skip]
pub(crate) mod table;
mod table_types;

pub use buffer_format::{BufferFormat, Numeric, buffer_format, buffer_format_name};
pub use decode::{Dpp, Encoding, Instruction, decode, decode_all, entry_of};
pub use fields::{InlineFloat, Operand, scalar_operand, source_operand};
pub use table::{Entry, Opcode};
pub use table_types::Slot;
