//! loom model of a queue directory endpoint read by other queues
//! (`components/src/endpoint_scan.rs`, the BarrierAnd `device_retired` of
//! `systems/src/strategy.rs`, over the counters of `components/src/directory.rs`).
//!
//! The checked product code is `scan_retired`, the reader. The endpoint's owner and the device
//! are restated here with the orderings the product uses: admission arms an epoch's per-epoch
//! signal (store 1, release, `BarrierAnd::reserve_epoch`) before publication stores `submitted`
//! (release); the device stores 0 (release) when the epoch retires; reclaim stores `drained`
//! (SeqCst) after it saw that 0, and an epoch's slot is armed again only once the epoch that last
//! used it drained.
#![cfg(loom)]

#[path = "../../components/src/endpoint_scan.rs"]
mod endpoint_scan;

use aqueduct_loom_models::{Exploration, check};
use endpoint_scan::scan_retired;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicU64, Ordering};
use loom::thread;

/// Per-epoch signal slots: epoch 3 reuses epoch 1's.
const SLOTS: u64 = 2;
const EPOCHS: u64 = 3;

struct Endpoint {
    submitted: AtomicU64,
    drained: AtomicU64,
    /// The per-epoch signals' values (1 armed, 0 retired or never used).
    slots: [AtomicU64; SLOTS as usize],
    /// Ghost, not product state: the last epoch the device retired, stored before the signal's 0.
    device_retired: AtomicU64,
}

fn wait_until(condition: impl Fn() -> bool) {
    while !condition() {
        thread::yield_now();
    }
}

/// Invariant: a reader never reports an epoch retired before the device retired it, even when a
/// per-epoch signal is reused: whatever `scan_retired` returns, the device had retired at least
/// that many epochs (the ghost counter, which the 0 or `drained` the reader saw publishes). The
/// owner submits 3 epochs on
/// 2 slots and drains epoch 1 to reuse its slot; the device retires them in order; a reader
/// scans concurrently.
#[test]
fn a_reader_never_sees_an_epoch_retire_early() {
    check("queue directory endpoint (owner, device, reader)", Exploration::Preemptions(2), || {
        let endpoint = Arc::new(Endpoint {
            submitted: AtomicU64::new(0),
            drained: AtomicU64::new(0),
            slots: [AtomicU64::new(0), AtomicU64::new(0)],
            device_retired: AtomicU64::new(0),
        });
        let owner = {
            let endpoint = endpoint.clone();
            thread::spawn(move || {
                for epoch in 1..=EPOCHS {
                    if epoch > SLOTS {
                        // Reuse: drain the epoch that last used the slot first.
                        let previous = epoch - SLOTS;
                        wait_until(|| endpoint.slots[(previous % SLOTS) as usize].load(Ordering::Acquire) == 0);
                        endpoint.drained.store(previous, Ordering::SeqCst);
                    }
                    endpoint.slots[(epoch % SLOTS) as usize].store(1, Ordering::Release);
                    endpoint.submitted.store(epoch, Ordering::Release);
                }
            })
        };
        let device = {
            let endpoint = endpoint.clone();
            thread::spawn(move || {
                for epoch in 1..=EPOCHS {
                    wait_until(|| endpoint.submitted.load(Ordering::Acquire) >= epoch);
                    endpoint.device_retired.store(epoch, Ordering::Relaxed);
                    endpoint.slots[(epoch % SLOTS) as usize].store(0, Ordering::Release);
                }
            })
        };
        let retired = scan_retired(&endpoint.drained, &endpoint.submitted, |epoch| {
            endpoint.slots[(epoch % SLOTS) as usize].load(Ordering::Acquire) == 0
        });
        assert!(retired <= EPOCHS);
        let device_retired = endpoint.device_retired.load(Ordering::Relaxed);
        assert!(retired <= device_retired, "reported {retired}, the device had retired {device_retired}");
        owner.join().unwrap();
        device.join().unwrap();
    });
}
