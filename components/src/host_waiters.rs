//! Host threads parked until a semaphore advances: the registration count, the condvar, and the
//! protocol between a parking waiter and a notifier.
//!
//! A waiter counts itself in `parked`, fences, then checks its condition under the mutex and
//! sleeps on the condvar; a notifier, after changing what waiters check, fences, reads `parked`
//! and touches the mutex only when someone is parked. The two SeqCst fences order each side's
//! write before its read, so either the waiter's check sees the change or the notifier sees the
//! waiter (without them both may read the old value: the loom model found that lost wake-up).
//! Rechecking under the lock means a notify that takes the lock cannot slip between a waiter's
//! check and its wait.
//!
//! This file depends on nothing but std (or loom under `--cfg loom`), so `loom-models/` includes
//! it by path and model-checks this very code; `aqueduct-systems`' `sync::parking` drives it.

use std::time::Instant;

#[cfg(loom)]
use loom::sync::atomic::{AtomicUsize, Ordering, fence};
#[cfg(loom)]
use loom::sync::{Condvar, Mutex};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicUsize, Ordering, fence};
#[cfg(not(loom))]
use std::sync::{Condvar, Mutex};

/// Where host waiters park; notifiers only touch the mutex when someone is parked.
#[derive(Default)]
pub struct HostWaiters {
    /// Host threads parked, or about to park.
    pub parked: AtomicUsize,
    /// Bumped by every wake-up; the mutex the condvar waits with.
    pub generation: Mutex<u64>,
    pub condvar: Condvar,
}

impl HostWaiters {
    /// Wakes parked waiters, if any. Call after a batch of changes they may be waiting for.
    #[inline]
    pub fn notify(&self) {
        // Pairs with the fence in `park_until` (see the module documentation).
        fence(Ordering::SeqCst);
        if self.parked.load(Ordering::SeqCst) == 0 {
            return;
        }
        let mut generation = self.generation.lock().unwrap_or_else(|poison| poison.into_inner());
        *generation = generation.wrapping_add(1);
        self.condvar.notify_all();
    }

    /// Blocks until `done()` holds or `deadline` passes; `done` is rechecked after every
    /// [`Self::notify`]. Returns whether `done()` held.
    pub fn park_until(&self, deadline: Instant, mut done: impl FnMut() -> bool) -> bool {
        self.parked.fetch_add(1, Ordering::SeqCst);
        // Pairs with the fence in `notify`: the checks below see its change, or it sees us.
        fence(Ordering::SeqCst);
        let mut generation = self.generation.lock().unwrap_or_else(|poison| poison.into_inner());
        let result = loop {
            // Checked under the lock after registering, so a signal cannot slip between the check
            // and the wait: the signaller either sees `parked` or we see its value.
            if done() {
                break true;
            }
            let now = Instant::now();
            if now >= deadline {
                break false;
            }
            let (guard, _) =
                self.condvar.wait_timeout(generation, deadline - now).unwrap_or_else(|poison| poison.into_inner());
            generation = guard;
        };
        drop(generation);
        self.parked.fetch_sub(1, Ordering::SeqCst);
        result
    }
}
