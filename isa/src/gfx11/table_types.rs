//! The shapes of the generated opcode table (`table.rs`).

/// Where one printed operand comes from, with its width in dwords where it is a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// SOP destination.
    Sdst(u8),
    /// SOP first source (8-bit field).
    Ssrc0(u8),
    /// SOP second source.
    Ssrc1(u8),
    /// SMEM destination registers.
    Sdata(u8),
    /// SMEM base address registers (an SGPR pair, or four for buffer loads).
    Sbase(u8),
    /// SMEM offset register.
    Soffset(u8),
    /// VALU vector destination.
    Vdst(u8),
    /// VALU destination field holding an SGPR (VOPC promoted to VOP3, `v_readlane`).
    ScalarVdst(u8),
    /// VALU sources: 9-bit fields (src0, VOP3 src1 and src2) or the 8-bit VGPR `vsrc1`.
    Src0(u8),
    Src1(u8),
    Src2(u8),
    /// DS address, data and FLAT/GLOBAL/SCRATCH address and data.
    Addr(u8),
    Data0(u8),
    Data1(u8),
    Data(u8),
    /// GLOBAL/SCRATCH scalar base.
    Saddr(u8),
    /// MUBUF data, address and resource.
    Vdata(u8),
    Vaddr(u8),
    Srsrc(u8),
    /// A register the encoding implies, printed by name (`vcc_lo` in VOP2 carries, VOPC).
    Fixed(&'static str),
    /// An immediate: SOPP/SOPK `simm16`, SMEM and MUBUF offsets, literals.
    Imm,
    /// `off`: an absent address or scalar base.
    Off,
    /// `null`: SMEM without an offset register.
    Null,
}

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
