//! What every execution of a command buffer needs of its binding table: each slot's
//! requirements and the copies whose overlap depends on the table. The recorder collects them,
//! finishing hands them to the finished program and `execute` checks each table against them;
//! they live here, below all three, so the recorder and finishing do not import each other.

use aqueduct_abi::block_program::BindingSource;

/// What a binding-table slot must provide to every execution.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SlotNeed {
    pub used: bool,
    /// Bytes from the slot's start the program may touch.
    pub length: u64,
    /// A conditional branch reads it on the host.
    pub host_visible: bool,
    /// Alignment of the slot's base address.
    pub align: u64,
}

/// A copy with at least one dynamic side: its ranges are only known per execution.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CopyCheck {
    pub source: BindingSource,
    pub target: BindingSource,
    pub length: u64,
}
