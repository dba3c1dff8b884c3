//! How another queue reads a [`crate::directory::QueueEndpoint`]'s retirement without a lock: the
//! order of its loads. `aqueduct-systems`' `strategy` drives these with the endpoint's counters
//! and its device signals.
//!
//! The endpoint's owner arms an epoch's per-epoch signal (BarrierAnd: store 1) before it
//! publishes the epoch (`submitted`, release), and stores `drained` only after the epoch's signal
//! reached 0 and it drained the epoch. A reader loads `drained`, then `submitted` (both acquire),
//! then the signals of the epochs between: any signal it finds at 0 for an epoch at or below
//! `submitted` is that epoch's own retirement, never the previous use of the slot.
//!
//! This file depends on nothing but std (or loom under `--cfg loom`), so `loom-models/` includes
//! it by path and model-checks this very code.

#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, Ordering};

/// BarrierAnd: the highest epoch known retired. Starts from `drained` and walks the submitted
/// epochs while `retired_on_device(epoch)` (its own signal reads 0) holds.
#[inline]
pub fn scan_retired(drained: &AtomicU64, submitted: &AtomicU64, mut retired_on_device: impl FnMut(u64) -> bool) -> u64 {
    let drained = drained.load(Ordering::Acquire);
    let submitted = submitted.load(Ordering::Acquire);
    let mut retired = drained;
    while retired < submitted && retired_on_device(retired + 1) {
        retired += 1;
    }
    retired
}
