//! loom model of host threads parked on a semaphore table (`components/src/host_waiters.rs`,
//! driven by `systems/src/sync/parking.rs`), woken by signals through the semaphore slot's real
//! protocol (`components/src/semaphore_slot.rs`).
#![cfg(loom)]

#[allow(dead_code)]
#[path = "../../components/src/host_waiters.rs"]
mod host_waiters;
#[allow(dead_code)]
#[path = "../../components/src/semaphore_slot.rs"]
mod semaphore_slot;

use std::time::{Duration, Instant};

use aqueduct_loom_models::{Exploration, check};
use host_waiters::HostWaiters;
use loom::sync::Arc;
use loom::thread;
use semaphore_slot::SemaphoreSlot;

/// Invariant: no lost wake-up between a host waiter and a signaller. A waiter parks until the
/// semaphore reaches 2 (`park_until`, whose condvar wait loom runs without a timeout, so a
/// waiter no notify reaches is a deadlock loom reports); two signallers each raise it (to 1 and
/// to 2) and notify, as reclaim and host signals do. In every interleaving the waiter returns
/// true, and `parked` is back to 0.
#[test]
fn a_parked_host_waiter_always_wakes() {
    check("host parking (1 waiter, 2 signallers)", Exploration::Preemptions(3), || {
        let state = Arc::new((SemaphoreSlot::default(), HostWaiters::default()));
        let signallers: Vec<_> = [1, 2]
            .into_iter()
            .map(|value| {
                let state = state.clone();
                thread::spawn(move || {
                    state.0.signal(value);
                    state.1.notify();
                })
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(3600);
        assert!(state.1.park_until(deadline, || state.0.value() >= 2));
        for signaller in signallers {
            signaller.join().unwrap();
        }
        assert_eq!(state.1.parked.load(loom::sync::atomic::Ordering::SeqCst), 0);
    });
}
