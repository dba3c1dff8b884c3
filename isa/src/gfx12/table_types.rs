//! The shapes of the generated gfx1200 opcode table (`table.rs`). The operand slots are gfx11's
//! ([`crate::gfx11::Slot`]): the same printed operands.

/// Declares `Opcode` from the generated list `Name => Gfx11Name,` (or `Name,` where gfx11 has
/// no such operation), with `Opcode::gfx11_equivalent`, and the table's `Entry`.
macro_rules! opcodes {
    ($($name:ident $(=> $gfx11:ident)?,)*) => {
        /// A gfx12 operation, whatever its encoding (`v_add_f32_e32`, `_e64` and `_dpp` are one).
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
            /// The mnemonic as LLVM prints it (`_e32`/`_e64` included).
            pub mnemonic: &'static str,
            /// The operation, shared by its encodings.
            pub opcode: Opcode,
            /// The printed operands, in order.
            pub slots: &'static [crate::gfx11::Slot],
        }

        impl Opcode {
            /// Every gfx12 operation, in name order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$name,)*];

            /// The gfx11 operation that computes the same thing, under the name LLVM gives it
            /// for gfx11 (`v_max_num_f32` is `v_max_f32`, `s_add_co_i32` is `s_add_i32`,
            /// `v_mad_co_u64_u32` is `v_mad_u64_u32`); `None` where gfx11 has no such
            /// operation. Immediates may still be laid out differently.
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
