//! The shapes of the generated gfx1030 opcode table (`table.rs`). The operand slots are gfx11's
//! ([`Slot`]): the same printed operands, read from gfx10's field positions (`format.rs`).

pub use crate::decode_core::Slot;

pub use crate::decode_core::immediates::OperandType;

pub use crate::decode_core::immediates::{ABS, CLAMP, NEG, OMOD, OP_SEL, SEXT0, SEXT1, SEXT2, SRC0, SRC1, SRC2};

/// Declares `Opcode` from the generated list `Name => Gfx11Name,` (or `Name,` where gfx11 has
/// no such operation), with `Opcode::gfx11_equivalent`.
macro_rules! opcodes {
    ($($name:ident $(=> $gfx11:ident)?,)*) => {
        /// A gfx10 operation, whatever its encoding (`v_add_nc_u32_e32`, `_e64`, `_sdwa` and
        /// `_dpp` are one).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[allow(missing_docs)]
        pub enum Opcode {
            $($name,)*
        }

        /// One opcode of one encoding.
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
            /// inline constant there. `OperandType::B32` outside the VALU.
            pub types: [super::table_types::OperandType; 3],
            /// The VOP3 modifiers the operation has (`ABS` and `NEG` on the sources `SRC0`,
            /// `SRC1`, `SRC2` name; `OP_SEL`, `CLAMP`, `OMOD`; neg as sign extension on the
            /// integer sources `SEXT0`, `SEXT1`, `SEXT2` name); LLVM prints, and the operation
            /// reads, only these (0 outside VOP3).
            pub modifiers: u16,
        }

        impl Opcode {
            /// Every gfx10 operation, in name order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$name,)*];

            /// The gfx11 operation that computes the same thing, under the name LLVM gives it
            /// for gfx11 (`s_andn2_b32` is `s_and_not1_b32`, `global_load_dword` is
            /// `global_load_b32`, `ds_read2_b32` is `ds_load_2addr_b32`); `None` where gfx11
            /// has no such operation. Immediates may still be laid out differently
            /// (`s_waitcnt`'s counters, `s_getreg`/`s_setreg`'s register ids, `s_sendmsg`'s
            /// messages).
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
