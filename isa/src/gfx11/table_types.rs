//! The shapes of the generated opcode table (`table.rs`); its operand slots ([`Slot`]) are the
//! decode core's, which gfx10's table shares.

pub use crate::decode_core::Slot;

macro_rules! opcodes {
    ($($name:ident,)*) => {
        /// An operation, whatever its encoding (`v_add_nc_u32_e32` and `_e64` are one).
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
            pub slots: &'static [super::table_types::Slot],
        }
    };
}
pub(crate) use opcodes;
