//! AMDGPU machine code for the soft HSA runtime: decoders for the gfx1100 (RDNA3) and gfx1030
//! (RDNA2) encodings that clang emits, printing LLVM's syntax (and for gfx9 and gfx12/RDNA4,
//! `gfx9`, `gfx12`), and (`interp`) an interpreter that runs a dispatch's waves of gfx11 code, or
//! of gfx10.3, gfx9 or gfx12 code translated to gfx11, and (`native`) a translator that compiles
//! the interpreter's decoded kernel to x86-64 AVX2 code.

mod compiled;
mod decode_core;
pub mod gfx10;
pub mod gfx11;
pub mod gfx12;
pub mod gfx9;
pub mod interp;
pub mod native;
pub mod run;

pub use interp::{Interrupt, Ran, Rounds, RunFrom, SavedWorkgroup};
pub use run::{run_or_save, run_workgroup};

use decode_core::Encoding;

/// Why a word could not be decoded; each names the byte address (`pc`) and the word.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// An encoding this decoder does not handle (MIMG, EXP, DPP, ...).
    #[error("unsupported {what} encoding at pc 0x{pc:x}: word 0x{word:08x}")]
    Unsupported { pc: u64, word: u32, what: &'static str },
    /// An opcode value no gfx1100 instruction has.
    #[error("unknown {encoding:?} opcode {op} at pc 0x{pc:x}: word 0x{word:08x}")]
    UnknownOpcode { pc: u64, word: u32, encoding: Encoding, op: u16 },
    /// The code ends inside the instruction.
    #[error("the code ends inside the instruction at pc 0x{pc:x}: it needs {needed} dwords")]
    Truncated { pc: u64, needed: usize },
}
