//! gfx12 (RDNA4: gfx1200, gfx1201; wave32 and wave64): gfx1200's instruction set, decoded and
//! printed as LLVM 19 prints it (LLVM 19 decodes gfx1201 as gfx1200). Its operations are gfx12's
//! own ([`Opcode`]); [`Opcode::gfx11_equivalent`] names the gfx11 operation that computes the
//! same thing, where gfx11 has one.
//!
//! Most encodings are gfx11's field for field (SOP*, VOP1/VOP2/VOPC/VOP3/VOP3P/VOPD, DPP16/DPP8,
//! DS), so the decoder shares gfx11's decode core and its printer ([`format`]); SMEM,
//! VFLAT/VSCRATCH/VGLOBAL and VBUFFER are laid out anew (`decode.rs`).

mod decode;
mod format;
#[rustfmt::skip]
pub(crate) mod table;
mod table_types;

pub use crate::gfx11::{Dpp, Encoding, Operand, Slot, scalar_operand, source_operand};
pub use decode::{CachePolicy, Instruction, decode, decode_all};
pub use table::{Entry, Opcode};
