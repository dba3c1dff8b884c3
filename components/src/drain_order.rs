//! The causal drain order's wake-up protocol: a queue whose drain stopped at an epoch that waited
//! (from the device) on another queue's epoch, because the producer has not drained that epoch
//! yet, registers on the producer's waiter mask; the producer, after advancing its drained count,
//! takes the mask and pokes each registered queue (`aqueduct-systems`' `reclaim`).
//!
//! The store-buffer shape `parked_queues` documents: the waiter sets its bit, then re-reads the
//! drained count; the producer stores the count, then reads the mask. A SeqCst fence between
//! each side's write and read orders them, so either the waiter's re-read sees the drain or the
//! producer's read sees the bit, and no wake-up is lost. SeqCst accesses alone would do in the
//! C++ model, but loom models them as acquire/release and found the lost wake-up without the
//! fences (`loom-models/tests/drain_order.rs`); the fences are what it can check.
//!
//! This file depends on nothing but std (or loom under `--cfg loom`), so `loom-models/` includes
//! it by path and model-checks this very code.

#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering, fence};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, Ordering, fence};

/// What a waiter learnt about the producing epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProducerDrain {
    /// The producer drained it: go on.
    Drained,
    /// Not yet; the waiter is registered, and the producer's next drain wakes it. `newly` when
    /// this call set the bit: the caller pokes the producer's completion thread, which may be
    /// asleep until a later epoch retires.
    Registered { newly: bool },
}

/// Whether the producer whose counters are `drained` and `waiters` drained `epoch`; if not,
/// registers queue `me` first.
#[inline]
pub fn await_drain(drained: &AtomicU64, waiters: &AtomicU64, me: u16, epoch: u64) -> ProducerDrain {
    if drained.load(Ordering::SeqCst) >= epoch {
        return ProducerDrain::Drained;
    }
    let before = waiters.fetch_or(1 << me, Ordering::SeqCst);
    fence(Ordering::SeqCst); // pairs with the fence in `publish_drained`
    if drained.load(Ordering::SeqCst) >= epoch {
        return ProducerDrain::Drained;
    }
    ProducerDrain::Registered { newly: before & (1 << me) == 0 }
}

/// The producer drained up to `value`: stores it and takes the queues to wake (bit per queue).
#[inline]
pub fn publish_drained(drained: &AtomicU64, waiters: &AtomicU64, value: u64) -> u64 {
    drained.store(value, Ordering::SeqCst);
    fence(Ordering::SeqCst); // pairs with the fence in `await_drain`
    if waiters.load(Ordering::SeqCst) == 0 {
        return 0;
    }
    waiters.swap(0, Ordering::SeqCst)
}
