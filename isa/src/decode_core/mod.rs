//! The decode core the ISA front-ends share (issue 56: one decode core for gfx10 and gfx11): the
//! encodings and how a first word names one, each encoding's opcode field, the table lookup, the
//! source values that mean a literal or DPP, the walk over a code object, the operand vocabulary
//! ([`operand`]) and the printer's common pieces ([`syntax`]). Each front-end passes in what differs:
//! its 64-bit encodings' major opcodes, its tables, its register numbering and spelling.
//!
//! Field positions: AMD's "RDNA2" (2020, chapter 13) and "RDNA3" (2023, chapter 15) "Instruction
//! Set Architecture Reference Guide"s, "Microcode Formats", which agree on every field here.

pub(crate) mod immediates;
pub(crate) mod operand;
pub(crate) mod sdwa;
pub(crate) mod syntax;

pub use operand::{InlineFloat, Operand, Slot};

use crate::DecodeError;

/// The instruction encodings of gfx11. gfx10's are these but VOPD, which gfx10 lacks, and MTBUF,
/// which its decoder refuses; [`DecodeError::UnknownOpcode`] names one for either ISA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    Sop2,
    Sopk,
    Sop1,
    Sopc,
    Sopp,
    Smem,
    Vop2,
    Vop1,
    Vopc,
    Vop3,
    Vop3p,
    Vopd,
    Ds,
    Flat,
    Scratch,
    Global,
    Mubuf,
    Mtbuf,
}

/// The 9-bit source operand value that means "a literal dword follows" (the SSRC/SRC operand
/// tables).
pub(crate) const LITERAL: u32 = 255;
/// Source values that select DPP: DPP8, DPP8 with `fi:1`, DPP16.
pub(crate) const DPP8: u32 = 233;
pub(crate) const DPP8_FI: u32 = 234;
pub(crate) const DPP16: u32 = 250;

/// The encoding `word` (an instruction's first) names. Both ISAs tell the 32-bit encodings (VOP1,
/// VOP2, VOPC, the SOP forms) apart alike; `wide` names the rest (bits 31:30 set), whose major
/// opcodes differ. An `Err` names an encoding the decoder does not read.
pub(crate) fn identify(
    word: u32,
    wide: impl FnOnce(u32) -> Result<Encoding, &'static str>,
) -> Result<Encoding, &'static str> {
    Ok(if word >> 31 == 0 {
        match word >> 25 {
            0x3E => Encoding::Vopc,
            0x3F => Encoding::Vop1,
            _ => Encoding::Vop2,
        }
    } else if word >> 30 == 0b10 {
        match word >> 23 {
            0x17F => Encoding::Sopp,
            0x17E => Encoding::Sopc,
            0x17D => Encoding::Sop1,
            _ if word >> 28 == 0xB => Encoding::Sopk,
            _ => Encoding::Sop2,
        }
    } else {
        return wide(word);
    })
}

/// The opcode field of `encoding`'s first word `w0` (the same bits on gfx10 and gfx11).
pub(crate) fn opcode_field(encoding: Encoding, w0: u32) -> u16 {
    let op = match encoding {
        Encoding::Sop2 => (w0 >> 23) & 0x7F,
        Encoding::Sopk => (w0 >> 23) & 0x1F,
        Encoding::Sop1 => (w0 >> 8) & 0xFF,
        Encoding::Sopc | Encoding::Sopp => (w0 >> 16) & 0x7F,
        Encoding::Smem => (w0 >> 18) & 0xFF,
        Encoding::Vop2 => (w0 >> 25) & 0x3F,
        Encoding::Vop1 => (w0 >> 9) & 0xFF,
        Encoding::Vopc => (w0 >> 17) & 0xFF,
        Encoding::Vop3 => (w0 >> 16) & 0x3FF,
        Encoding::Vop3p => (w0 >> 16) & 0x7F,
        Encoding::Vopd => (w0 >> 22) & 0xF,
        Encoding::Ds => (w0 >> 18) & 0xFF,
        Encoding::Flat | Encoding::Scratch | Encoding::Global => (w0 >> 18) & 0x7F,
        // MUBUF: op [24:18] and its bit 7 at 25.
        Encoding::Mubuf => (w0 >> 18) & 0xFF,
        Encoding::Mtbuf => (w0 >> 15) & 0xF,
    };
    op as u16
}

/// Dwords of `encoding` without its literal or extension (SDWA, DPP) word.
pub(crate) fn base_dwords(encoding: Encoding) -> u8 {
    match encoding {
        Encoding::Sop2 | Encoding::Sopk | Encoding::Sop1 | Encoding::Sopc | Encoding::Sopp => 1,
        Encoding::Vop2 | Encoding::Vop1 | Encoding::Vopc => 1,
        _ => 2,
    }
}

/// The entry of opcode field value `op` in `entries`, which the generated tables sort by it
/// (`key` reads an entry's value).
pub(crate) fn lookup<E>(entries: &'static [E], op: u16, key: impl Fn(&E) -> u16) -> Option<&'static E> {
    entries.binary_search_by_key(&op, key).ok().map(|index| &entries[index])
}

/// Decodes every instruction of `code`, which starts at byte address `base`, with a front-end's
/// `decode` (`dwords` is a decoded instruction's length), stopping after the first error.
pub(crate) fn decode_all<I>(
    code: &[u8],
    base: u64,
    decode: impl Fn(&[u32], u64) -> Result<I, DecodeError>,
    dwords: impl Fn(&I) -> u8,
) -> impl Iterator<Item = Result<(u64, I), DecodeError>> {
    let words: Vec<u32> =
        code.chunks_exact(4).map(|chunk| u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]])).collect();
    let mut index = 0usize;
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed || index >= words.len() {
            return None;
        }
        let pc = base + index as u64 * 4;
        match decode(&words[index..], pc) {
            Ok(instruction) => {
                index += dwords(&instruction) as usize;
                Some(Ok((pc, instruction)))
            }
            Err(error) => {
                failed = true;
                Some(Err(error))
            }
        }
    })
}

/// The accessors both front-ends' `Instruction`s have (`opcode`, `mnemonic`, `len`, `is_empty`,
/// `literal`, `base_dwords` and `$word`, the getter of the extension word that follows the
/// encoding when field `$extension` is not `$none`), written once. A macro, not a trait, so that
/// callers keep calling them without importing one.
macro_rules! instruction_accessors {
    ($extension:ident, $none:expr, $(#[$word_doc:meta])* $word:ident) => {
        /// The operation.
        pub fn opcode(&self) -> Opcode {
            self.entry.opcode
        }

        /// The mnemonic as LLVM prints it.
        pub fn mnemonic(&self) -> &'static str {
            self.entry.mnemonic
        }

        /// Its length in bytes.
        pub fn len(&self) -> usize {
            self.dwords as usize * 4
        }

        /// Whether it has no words (never: every instruction has at least one).
        pub fn is_empty(&self) -> bool {
            self.dwords == 0
        }

        /// The 32-bit literal that follows the encoding, if it has one.
        pub fn literal(&self) -> Option<u32> {
            let base = self.base_dwords();
            (self.dwords > base && self.$extension == $none).then(|| self.words[base as usize])
        }

        $(#[$word_doc])*
        pub fn $word(&self) -> Option<u32> {
            (self.$extension != $none).then(|| self.words[self.base_dwords() as usize])
        }

        /// Dwords of the encoding without its literal or extension word.
        pub fn base_dwords(&self) -> u8 {
            $crate::decode_core::base_dwords(self.encoding.into())
        }
    };
}
pub(crate) use instruction_accessors;
