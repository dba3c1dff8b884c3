//! The memory-order variants of the signal and queue-index operations that ROCr 5.2.3 exports
//! beside the ones the engine's table uses (`hsa.h`: every operation in `relaxed`,
//! `scacquire`, `screlease` and `scacq_screl`, plus the deprecated `acquire`, `release` and
//! `acq_rel` names of the same orders). The drop-in exports them; the engine calls none, so they
//! are not in `HsaApi` (`drop_in.rs` lists them).
//!
//! Each is the same operation as its sibling with the order the name says (on the soft runtime
//! the order is the Rust atomic's). Signal changes wake waiters, as every change through the
//! soft runtime does, except the *silent* stores, which ROCr makes without signalling an event.

// Each keeps the C function's contract of `hsa.h`, as every entry point does (`entry.rs`).
#![allow(clippy::missing_safety_doc)]

use core::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use aqueduct_abi::AmdQueue;

use super::signals;
use aqueduct_hsa::sys::*;

/// The failure order of a compare-and-swap whose success order is `order`.
const fn failure_order(order: Ordering) -> Ordering {
    match order {
        Ordering::Release | Ordering::Relaxed => Ordering::Relaxed,
        _ => Ordering::Acquire,
    }
}

/// Applies `change` to a live signal's value and wakes its waiters; `None` for a handle that
/// names no live signal (ROCr's behaviour there is undefined; the soft runtime ignores it).
fn change_signal<R>(signal: hsa_signal_t, change: impl FnOnce(&AtomicI64) -> R) -> Option<R> {
    let slot = signals::slot(signal.handle)?;
    let mut result = None;
    slot.update(|value| result = Some(change(value)));
    result
}

/// Runs `f` on the write or read index of the live soft queue behind `queue`; 0 otherwise.
fn with_index(queue: *const hsa_queue_t, write: bool, f: impl FnOnce(&AtomicU64) -> u64) -> u64 {
    super::entry::queue_index(queue, |amd| {
        // SAFETY: the slot's `amd_queue_t` is valid memory for the process (`queue_slots.rs`),
        // and its indices are only accessed atomically.
        let index = unsafe {
            if write { AmdQueue::write_dispatch_id_atomic(amd) } else { AmdQueue::read_dispatch_id_atomic(amd) }
        };
        f(index)
    })
}

macro_rules! signal_rmw {
    ($($name:ident: $op:ident, $order:expr;)*) => {$(
        pub unsafe fn $name(signal: hsa_signal_t, value: hsa_signal_value_t) {
            change_signal(signal, |word| word.$op(value, $order));
        }
    )*};
}

signal_rmw! {
    hsa_signal_add_relaxed: fetch_add, Ordering::Relaxed;
    hsa_signal_add_scacquire: fetch_add, Ordering::Acquire;
    hsa_signal_add_acquire: fetch_add, Ordering::Acquire;
    hsa_signal_add_screlease: fetch_add, Ordering::Release;
    hsa_signal_add_release: fetch_add, Ordering::Release;
    hsa_signal_add_acq_rel: fetch_add, Ordering::AcqRel;
    hsa_signal_subtract_relaxed: fetch_sub, Ordering::Relaxed;
    hsa_signal_subtract_scacquire: fetch_sub, Ordering::Acquire;
    hsa_signal_subtract_acquire: fetch_sub, Ordering::Acquire;
    hsa_signal_subtract_screlease: fetch_sub, Ordering::Release;
    hsa_signal_subtract_release: fetch_sub, Ordering::Release;
    hsa_signal_subtract_acq_rel: fetch_sub, Ordering::AcqRel;
    hsa_signal_and_relaxed: fetch_and, Ordering::Relaxed;
    hsa_signal_and_scacquire: fetch_and, Ordering::Acquire;
    hsa_signal_and_acquire: fetch_and, Ordering::Acquire;
    hsa_signal_and_screlease: fetch_and, Ordering::Release;
    hsa_signal_and_release: fetch_and, Ordering::Release;
    hsa_signal_and_scacq_screl: fetch_and, Ordering::AcqRel;
    hsa_signal_and_acq_rel: fetch_and, Ordering::AcqRel;
    hsa_signal_or_relaxed: fetch_or, Ordering::Relaxed;
    hsa_signal_or_scacquire: fetch_or, Ordering::Acquire;
    hsa_signal_or_acquire: fetch_or, Ordering::Acquire;
    hsa_signal_or_screlease: fetch_or, Ordering::Release;
    hsa_signal_or_release: fetch_or, Ordering::Release;
    hsa_signal_or_scacq_screl: fetch_or, Ordering::AcqRel;
    hsa_signal_or_acq_rel: fetch_or, Ordering::AcqRel;
    hsa_signal_xor_relaxed: fetch_xor, Ordering::Relaxed;
    hsa_signal_xor_scacquire: fetch_xor, Ordering::Acquire;
    hsa_signal_xor_acquire: fetch_xor, Ordering::Acquire;
    hsa_signal_xor_screlease: fetch_xor, Ordering::Release;
    hsa_signal_xor_release: fetch_xor, Ordering::Release;
    hsa_signal_xor_scacq_screl: fetch_xor, Ordering::AcqRel;
    hsa_signal_xor_acq_rel: fetch_xor, Ordering::AcqRel;
}

macro_rules! signal_exchange {
    ($($name:ident: $order:expr;)*) => {$(
        pub unsafe fn $name(signal: hsa_signal_t, value: hsa_signal_value_t) -> hsa_signal_value_t {
            change_signal(signal, |word| word.swap(value, $order)).unwrap_or(0)
        }
    )*};
}

signal_exchange! {
    hsa_signal_exchange_relaxed: Ordering::Relaxed;
    hsa_signal_exchange_scacquire: Ordering::Acquire;
    hsa_signal_exchange_acquire: Ordering::Acquire;
    hsa_signal_exchange_screlease: Ordering::Release;
    hsa_signal_exchange_release: Ordering::Release;
    hsa_signal_exchange_scacq_screl: Ordering::AcqRel;
    hsa_signal_exchange_acq_rel: Ordering::AcqRel;
}

macro_rules! signal_cas {
    ($($name:ident: $order:expr;)*) => {$(
        pub unsafe fn $name(
            signal: hsa_signal_t,
            expected: hsa_signal_value_t,
            value: hsa_signal_value_t,
        ) -> hsa_signal_value_t {
            change_signal(signal, |word| match word.compare_exchange(expected, value, $order, failure_order($order)) {
                Ok(previous) | Err(previous) => previous,
            })
            .unwrap_or(0)
        }
    )*};
}

signal_cas! {
    hsa_signal_cas_relaxed: Ordering::Relaxed;
    hsa_signal_cas_scacquire: Ordering::Acquire;
    hsa_signal_cas_acquire: Ordering::Acquire;
    hsa_signal_cas_screlease: Ordering::Release;
    hsa_signal_cas_release: Ordering::Release;
    hsa_signal_cas_scacq_screl: Ordering::AcqRel;
    hsa_signal_cas_acq_rel: Ordering::AcqRel;
}

/// `hsa_signal_load_acquire`: the deprecated name of `hsa_signal_load_scacquire`.
pub unsafe fn hsa_signal_load_acquire(signal: hsa_signal_t) -> hsa_signal_value_t {
    // SAFETY: forwarded.
    unsafe { super::entry::hsa_signal_load_scacquire(signal) }
}

/// `hsa_signal_store_release`: the deprecated name of `hsa_signal_store_screlease`.
pub unsafe fn hsa_signal_store_release(signal: hsa_signal_t, value: hsa_signal_value_t) {
    // SAFETY: forwarded.
    unsafe { super::entry::hsa_signal_store_screlease(signal, value) }
}

macro_rules! signal_silent_store {
    ($($name:ident: $order:expr;)*) => {$(
        /// Stores without waking waiters (ROCr's silent store raises no event); a parked waiter
        /// sees the value at its next bounded park.
        pub unsafe fn $name(signal: hsa_signal_t, value: hsa_signal_value_t) {
            if let Some(slot) = signals::slot(signal.handle) {
                slot.value().store(value, $order);
            }
        }
    )*};
}

signal_silent_store! {
    hsa_signal_silent_store_relaxed: Ordering::Relaxed;
    hsa_signal_silent_store_screlease: Ordering::Release;
}

macro_rules! signal_wait {
    ($($name:ident;)*) => {$(
        /// The same wait as `hsa_signal_wait_scacquire` (a stronger order than the name asks is
        /// allowed).
        pub unsafe fn $name(
            signal: hsa_signal_t,
            condition: hsa_signal_condition_t,
            compare_value: hsa_signal_value_t,
            timeout_hint: u64,
            wait_state_hint: hsa_wait_state_t,
        ) -> hsa_signal_value_t {
            // SAFETY: forwarded.
            unsafe { super::entry::hsa_signal_wait_scacquire(signal, condition, compare_value, timeout_hint, wait_state_hint) }
        }
    )*};
}

signal_wait! {
    hsa_signal_wait_relaxed;
    hsa_signal_wait_acquire;
}

macro_rules! queue_load {
    ($($name:ident: $write:expr, $order:expr;)*) => {$(
        pub unsafe fn $name(queue: *const hsa_queue_t) -> u64 {
            with_index(queue, $write, |index| index.load($order))
        }
    )*};
}

queue_load! {
    hsa_queue_load_read_index_relaxed: false, Ordering::Relaxed;
    hsa_queue_load_read_index_acquire: false, Ordering::Acquire;
    hsa_queue_load_write_index_scacquire: true, Ordering::Acquire;
    hsa_queue_load_write_index_acquire: true, Ordering::Acquire;
}

macro_rules! queue_store {
    ($($name:ident: $write:expr, $order:expr;)*) => {$(
        pub unsafe fn $name(queue: *const hsa_queue_t, value: u64) {
            with_index(queue, $write, |index| {
                index.store(value, $order);
                0
            });
        }
    )*};
}

queue_store! {
    hsa_queue_store_read_index_relaxed: false, Ordering::Relaxed;
    hsa_queue_store_read_index_screlease: false, Ordering::Release;
    hsa_queue_store_read_index_release: false, Ordering::Release;
    hsa_queue_store_write_index_relaxed: true, Ordering::Relaxed;
    hsa_queue_store_write_index_screlease: true, Ordering::Release;
    hsa_queue_store_write_index_release: true, Ordering::Release;
}

macro_rules! queue_add {
    ($($name:ident: $order:expr;)*) => {$(
        pub unsafe fn $name(queue: *const hsa_queue_t, value: u64) -> u64 {
            with_index(queue, true, |index| index.fetch_add(value, $order))
        }
    )*};
}

queue_add! {
    hsa_queue_add_write_index_scacquire: Ordering::Acquire;
    hsa_queue_add_write_index_acquire: Ordering::Acquire;
    hsa_queue_add_write_index_screlease: Ordering::Release;
    hsa_queue_add_write_index_release: Ordering::Release;
    hsa_queue_add_write_index_scacq_screl: Ordering::AcqRel;
    hsa_queue_add_write_index_acq_rel: Ordering::AcqRel;
}

macro_rules! queue_cas {
    ($($name:ident: $order:expr;)*) => {$(
        pub unsafe fn $name(queue: *const hsa_queue_t, expected: u64, value: u64) -> u64 {
            with_index(queue, true, |index| match index.compare_exchange(expected, value, $order, failure_order($order)) {
                Ok(previous) | Err(previous) => previous,
            })
        }
    )*};
}

queue_cas! {
    hsa_queue_cas_write_index_relaxed: Ordering::Relaxed;
    hsa_queue_cas_write_index_scacquire: Ordering::Acquire;
    hsa_queue_cas_write_index_acquire: Ordering::Acquire;
    hsa_queue_cas_write_index_screlease: Ordering::Release;
    hsa_queue_cas_write_index_release: Ordering::Release;
    hsa_queue_cas_write_index_acq_rel: Ordering::AcqRel;
}
