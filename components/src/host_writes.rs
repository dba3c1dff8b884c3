//! Host writes into host-visible *device* memory (coarse-grained VRAM the CPU maps through the
//! PCIe BAR) pass through the GPU's HDP (host data path), which may hold them until it is flushed
//! by a write to its `HDP_MEM_FLUSH_CNTL` register (`HSA_AMD_AGENT_INFO_HDP_FLUSH`). This is the
//! agent's record of it: how many host writes there were and how many a flush has covered. The
//! publication stage flushes before it stores the first header that may consume them
//! (`aqueduct_systems::publication`); nothing else in the dispatch path knows about it.
//!
//! **Contract.** Atomics only: writers count with no lock, and publication flushes under its queue's
//! lock.

use std::sync::atomic::{AtomicU64, Ordering};

/// One agent's HDP publication state.
#[derive(Debug)]
pub struct HostWrites {
    /// The address of the agent's `HDP_MEM_FLUSH_CNTL` register.
    pub flush_register: u64,
    /// Host writes into the agent's host-visible device memory so far.
    pub written: AtomicU64,
    /// The `written` count the last completed flush covered.
    pub flushed: AtomicU64,
    /// Flushes made (a statistic).
    pub flushes: AtomicU64,
}

impl HostWrites {
    pub fn new(flush_register: u64) -> Self {
        Self { flush_register, written: AtomicU64::new(0), flushed: AtomicU64::new(0), flushes: AtomicU64::new(0) }
    }

    /// A host write landed in the agent's host-visible device memory.
    pub fn note_write(&self) {
        self.written.fetch_add(1, Ordering::Release);
    }
}
