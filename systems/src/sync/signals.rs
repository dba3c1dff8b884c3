//! Raw reads of HSA signal values, straight from their `amd_signal_t` as the packet processor
//! reads and writes them, and what a queue's endpoint says has retired on the device.

use std::sync::atomic::{AtomicI64, Ordering};

use aqueduct_abi::AmdSignal;
use aqueduct_components::directory::{CrossQueueWait, EPOCH_BASE, QueueEndpoint};

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

/// What a queue's endpoint says about its epochs on the device.
pub trait EndpointSignals {
    /// The highest epoch known to have retired on the device.
    fn device_retired(&self) -> u64;
}

impl EndpointSignals for QueueEndpoint {
    #[inline]
    fn device_retired(&self) -> u64 {
        let reclaimed = self.reclaimed.load(Ordering::Acquire);
        match self.strategy {
            CrossQueueWait::BarrierValue => {
                // SAFETY: the epoch signal lives as long as the endpoint is registered.
                let value = unsafe { signal_value(self.epoch_signal) }.load(Ordering::Acquire);
                (EPOCH_BASE.saturating_sub(value).max(0) as u64).max(reclaimed)
            }
            CrossQueueWait::BarrierAnd => {
                let submitted = self.submitted.load(Ordering::Acquire);
                let mut retired = reclaimed;
                while retired < submitted {
                    // SAFETY: per-epoch signals live as long as the endpoint.
                    let value = unsafe { signal_value(self.slot_signal(retired + 1)) }.load(Ordering::Acquire);
                    if value != 0 {
                        break;
                    }
                    retired += 1;
                }
                retired
            }
        }
    }
}
