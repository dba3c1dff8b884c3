//! Host threads parked until a semaphore advances.
//!
//! A waiter registers in [`HostWaiters::parked`] and sleeps on the condvar; a signaller (reclaim
//! after a drain, a host signal or failure) calls [`HostParking::notify`], which touches the
//! mutex only when someone is parked.

use std::sync::atomic::Ordering;
use std::time::Instant;

use aqueduct_components::semaphore_table::{HostWaiters, SemaphoreTable};

/// Parking and waking host waiters on a semaphore table.
pub trait HostParking {
    /// Wakes parked host waiters, if any. Call after a batch of signals or failures.
    fn notify(&self);

    /// Blocks until `done()` holds or `deadline` passes; `done` is rechecked after every
    /// [`Self::notify`]. Returns whether `done()` held.
    fn park_until(&self, deadline: Instant, done: impl FnMut() -> bool) -> bool;
}

impl HostParking for SemaphoreTable {
    #[inline]
    fn notify(&self) {
        notify(&self.waiters);
    }

    fn park_until(&self, deadline: Instant, done: impl FnMut() -> bool) -> bool {
        park_until(&self.waiters, deadline, done)
    }
}

#[inline]
fn notify(waiters: &HostWaiters) {
    if waiters.parked.load(Ordering::SeqCst) == 0 {
        return;
    }
    let mut generation = waiters.generation.lock().unwrap_or_else(|poison| poison.into_inner());
    *generation = generation.wrapping_add(1);
    waiters.condvar.notify_all();
}

fn park_until(waiters: &HostWaiters, deadline: Instant, mut done: impl FnMut() -> bool) -> bool {
    waiters.parked.fetch_add(1, Ordering::SeqCst);
    let mut generation = waiters.generation.lock().unwrap_or_else(|poison| poison.into_inner());
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
            waiters.condvar.wait_timeout(generation, deadline - now).unwrap_or_else(|poison| poison.into_inner());
        generation = guard;
    };
    drop(generation);
    waiters.parked.fetch_sub(1, Ordering::SeqCst);
    result
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::sync::SemaphoreSync;

    #[test]
    fn parked_waiter_wakes_on_notify() {
        let table = Arc::new(SemaphoreTable::new(1));
        let slot = table.allocate(0).unwrap();
        let waiter = {
            let table = table.clone();
            std::thread::spawn(move || {
                table.park_until(Instant::now() + Duration::from_secs(10), || table.value(slot) >= 1)
            })
        };
        std::thread::sleep(Duration::from_millis(5));
        table.signal(slot, 1);
        table.notify();
        assert!(waiter.join().unwrap());
        assert!(!table.park_until(Instant::now() + Duration::from_millis(2), || false), "times out");
    }
}
