//! The shapes of the generated gfx9 opcode table (`table.rs`): gfx10's, with the operands that are
//! AGPRs by the opcode and the processors that have each row.

pub use crate::decode_core::Slot;
pub use crate::decode_core::immediates::OperandType;
pub use crate::decode_core::immediates::{ABS, CLAMP, NEG, OMOD, OP_SEL, SEXT0, SEXT1, SEXT2, SRC0, SRC1, SRC2};

/// A gfx9 processor whose machine code this front-end decodes; one bit of `Entry::processors`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Processor {
    /// Vega 10 (GCN5).
    Gfx900,
    /// Vega 20: MI50, MI60, Radeon VII (adds the dot products).
    Gfx906,
    /// CDNA1: MI100 (adds MFMA and the AGPRs).
    Gfx908,
    /// CDNA2: MI200 (a unified register file, packed f32, f64 MFMA).
    Gfx90a,
    /// CDNA3: MI300 (renamed MFMA, xf32/fp8/bf8, sc0/sc1/nt cache bits).
    Gfx942,
}

impl Processor {
    /// Every processor, in bit order.
    pub const ALL: [Processor; 5] = [Self::Gfx900, Self::Gfx906, Self::Gfx908, Self::Gfx90a, Self::Gfx942];

    /// Its bit in `Entry::processors`.
    pub const fn bit(self) -> u8 {
        1 << self as u8
    }

    /// The processor of a target name's processor part (`gfx90a` of `gfx90a:xnack-`).
    pub fn from_name(name: &str) -> Option<Self> {
        let processor = name.split(':').next().unwrap_or(name);
        Some(match processor {
            "gfx900" => Self::Gfx900,
            "gfx906" => Self::Gfx906,
            "gfx908" => Self::Gfx908,
            "gfx90a" => Self::Gfx90a,
            "gfx942" => Self::Gfx942,
            _ => return None,
        })
    }

    /// Whether memory instructions carry an `acc` bit that makes their data AGPRs, and MFMA an
    /// `acc_cd` bit (gfx90a's unified register file; MI200 ISA guide, "Microcode Formats").
    pub const fn has_unified_registers(self) -> bool {
        matches!(self, Self::Gfx90a | Self::Gfx942)
    }
}

pub const GFX900: u8 = Processor::Gfx900.bit();
pub const GFX906: u8 = Processor::Gfx906.bit();
pub const GFX908: u8 = Processor::Gfx908.bit();
pub const GFX90A: u8 = Processor::Gfx90a.bit();
pub const GFX942: u8 = Processor::Gfx942.bit();

/// Declares `Opcode` from the generated list `Name => Gfx11Name,` (or `Name,` where gfx11 has
/// no such operation), with `Opcode::gfx11_equivalent`.
macro_rules! opcodes {
    ($($name:ident $(=> $gfx11:ident)?,)*) => {
        /// A gfx9 operation, whatever its encoding (`v_add_u32_e32`, `_e64`, `_sdwa` and `_dpp`
        /// are one).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[allow(missing_docs)]
        pub enum Opcode {
            $($name,)*
        }

        /// One opcode of one encoding, as the processors in `processors` print it.
        #[derive(Debug)]
        pub struct Entry {
            /// The opcode field's value.
            pub op: u16,
            /// The mnemonic as LLVM prints it (`_e32`/`_e64`/`_sdwa`/`_dpp` included).
            pub mnemonic: &'static str,
            /// The operation, shared by its encodings.
            pub opcode: Opcode,
            /// The printed operands, in order.
            pub slots: &'static [super::table_types::Slot],
            /// The VALU sources' types (src0, src1, src2): how the operation reads a literal or an
            /// inline constant there.
            pub types: [super::table_types::OperandType; 3],
            /// The VOP3 modifiers the operation has (the flags of gfx10's table).
            pub modifiers: u16,
            /// The printed operands (bit n: operand n) that are AGPRs by the opcode
            /// (`v_accvgpr_read_b32`'s source, gfx908's MFMA destination and C); the `acc` and
            /// `acc_cd` bits of an encoding add others.
            pub agprs: u8,
            /// The processors that have this row (`Processor::bit`).
            pub processors: u8,
        }

        impl Opcode {
            /// Every gfx9 operation, in name order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$name,)*];

            /// The gfx11 operation that computes the same thing, under the name LLVM gives it
            /// for gfx11 (`v_add_u32` is `v_add_nc_u32`, `s_andn2_b32` is `s_and_not1_b32`);
            /// `None` where gfx11 has no such operation. Immediates may still be laid out
            /// differently (`s_waitcnt`'s counters, `s_getreg`'s register ids).
            pub const fn gfx11_equivalent(self) -> Option<crate::gfx11::Opcode> {
                match self {
                    $(Opcode::$name => opcodes!(@gfx11 $($gfx11)?),)*
                }
            }
        }
    };
    (@gfx11) => { None };
    (@gfx11 $gfx11:ident) => { Some(crate::gfx11::Opcode::$gfx11) };
}
pub(crate) use opcodes;
