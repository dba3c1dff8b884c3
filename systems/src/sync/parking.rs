//! Host threads parked until a semaphore advances.
//!
//! A waiter registers and sleeps on the table's condvar; a signaller (reclaim after a drain, a
//! host signal or failure) calls [`HostParking::notify`], which touches the mutex only when
//! someone is parked. The protocol is `aqueduct_components::host_waiters` (model-checked by
//! `loom-models/`).
//!
//! **Contract.** `park_until` calls `done` under the table's parking mutex, so `done` may read atomics
//! and the failure log but must not take a queue's lock: drains call `notify` under theirs. `notify`
//! takes that mutex only when a thread is parked.

use std::time::Instant;

use aqueduct_components::semaphore_table::SemaphoreTable;

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
        self.waiters.notify();
    }

    fn park_until(&self, deadline: Instant, done: impl FnMut() -> bool) -> bool {
        self.waiters.park_until(deadline, done)
    }
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
