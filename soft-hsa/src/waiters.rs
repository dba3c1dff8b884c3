//! The wait and wake protocol of a soft signal: who is parked on it, and how a change reaches them.
//!
//! A waiter [`Waiters::register`]s, issues [`registered`] (a SeqCst fence), then checks the value
//! and parks; a changer stores the value, then [`Waiters::wake_all`] (a SeqCst fence, then the
//! waiter count). The two fences make a lost wake-up impossible: either the waiter's check sees
//! the new value, or the changer sees the registration and unparks the thread, whose park then
//! returns at once (a thread's unpark token outlives a park that has not started yet).
//!
//! This file depends on nothing but std (or loom under `--cfg loom`), so `loom-models/` includes
//! it by path and model-checks this very code.

#[cfg(loom)]
use loom::sync::Mutex;
#[cfg(loom)]
use loom::sync::atomic::{AtomicI64, AtomicU32, Ordering, fence};
#[cfg(loom)]
use loom::thread::{Thread, current};
#[cfg(not(loom))]
use std::sync::Mutex;
#[cfg(not(loom))]
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering, fence};
#[cfg(not(loom))]
use std::thread::{Thread, current};

/// The value a registered thread waits for: it is unparked only by a change after which
/// `holds(value, compare)` is true. `holds` is the wait's condition (`SignalCondition::holds`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WakeWhen {
    pub(crate) holds: fn(i64, i64) -> bool,
    pub(crate) compare: i64,
}

impl WakeWhen {
    /// Whether `value` meets the wait.
    pub(crate) fn met_by(&self, value: i64) -> bool {
        (self.holds)(value, self.compare)
    }
}

/// The threads parked, or about to park, on one signal.
pub(crate) struct Waiters {
    /// How many threads are registered: a changer takes the lock only when this is non-zero.
    count: AtomicU32,
    /// Each thread with what it waits for (`None`: any change).
    threads: Mutex<Vec<(Thread, Option<WakeWhen>)>>,
}

impl Waiters {
    pub(crate) fn new() -> Self {
        Self { count: AtomicU32::new(0), threads: Mutex::new(Vec::new()) }
    }

    /// Registers the calling thread, to be woken by a change after which `wake` holds (by every
    /// change when `None`); call [`registered`] before checking the value.
    pub(crate) fn register(&self, wake: Option<WakeWhen>) {
        self.count.fetch_add(1, Ordering::SeqCst);
        self.threads.lock().unwrap_or_else(|poison| poison.into_inner()).push((current(), wake));
    }

    /// Removes the calling thread's registration.
    pub(crate) fn unregister(&self) {
        let me = current().id();
        let mut threads = self.threads.lock().unwrap_or_else(|poison| poison.into_inner());
        if let Some(index) = threads.iter().position(|(thread, _)| thread.id() == me) {
            threads.swap_remove(index);
        }
        self.count.fetch_sub(1, Ordering::SeqCst);
    }

    /// Unparks the registered threads that `value` (the signal's value, read after the fence)
    /// now wakes; call after changing it.
    pub(crate) fn wake(&self, value: &AtomicI64) {
        self.unpark(Some(value));
    }

    /// Unparks every registered thread, whatever it waits for (the signal is going away).
    pub(crate) fn wake_all(&self) {
        self.unpark(None);
    }

    /// Unparks the registered threads whose condition `value` meets (all of them without one).
    fn unpark(&self, value: Option<&AtomicI64>) {
        // Pairs with the fence in `registered`: either the waiter sees the new value, or we see
        // its registration.
        fence(Ordering::SeqCst);
        if self.count.load(Ordering::Relaxed) > 0 {
            let threads = self.threads.lock().unwrap_or_else(|poison| poison.into_inner());
            let value = value.map(|value| value.load(Ordering::Acquire));
            for (thread, wake) in threads.iter() {
                if value.is_none_or(|value| wake.is_none_or(|wake| wake.met_by(value))) {
                    thread.unpark();
                }
            }
        }
    }
}

/// Orders a waiter's registrations before its next check of the value (see the module docs).
#[inline]
pub(crate) fn registered() {
    fence(Ordering::SeqCst);
}
