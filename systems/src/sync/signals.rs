//! Raw reads of HSA signal values, straight from their `amd_signal_t` as the packet processor
//! reads and writes them. What a queue's endpoint says has retired on the device depends on the
//! wait strategy: `crate::strategy`.
//!
//! **Contract.** Reads only, with no lock: the signal must be live (the caller's handle keeps it so).

use std::sync::atomic::AtomicI64;

use aqueduct_abi::AmdSignal;

/// A signal's value word.
///
/// # Safety
/// `handle` must be a live signal of the queue's provider, and stay live while the reference is
/// used.
#[inline]
pub unsafe fn signal_value(handle: u64) -> &'static AtomicI64 {
    // SAFETY: on both providers a signal handle is the address of its amd_signal_t, which
    // stays mapped while the signal is live (the caller's contract).
    unsafe { AmdSignal::value_atomic(handle as *const AmdSignal) }
}
