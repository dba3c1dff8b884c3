//! loom model of parked-work wake-ups (`components/src/parked_queues.rs`, driven by the engine's
//! `queue/deferral.rs`, `queue/completion.rs` and `DeviceShared::wake_deferred`), over the
//! semaphore slot's real value protocol (`components/src/semaphore_slot.rs`).
#![cfg(loom)]

#[allow(dead_code)]
#[path = "../../components/src/parked_queues.rs"]
mod parked_queues;
#[allow(dead_code)]
#[path = "../../components/src/semaphore_slot.rs"]
mod semaphore_slot;

use aqueduct_loom_models::{Control, Exploration, check};
use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::thread;
use parked_queues::ParkedQueues;
use semaphore_slot::SemaphoreSlot;

struct State {
    semaphore: SemaphoreSlot,
    parked: ParkedQueues,
    control: Control,
    admitted: AtomicBool,
}

const QUEUE: u16 = 3;

/// Invariant: no lost wake-up between a queue that parks a submission waiting for a semaphore
/// and a waker that advances the semaphore. The submitter finds the value short and parks
/// (`park`, then a poke); the waker signals, then pokes the queues `to_wake` names (as a drain
/// or a host signal does); the completion thread loops as `queue::completion::run` does (read
/// the control value, check `must_readmit`, re-read the semaphore, sleep until a poke). In every
/// interleaving the parked submission is admitted, by the submitter itself when it already sees
/// the value, or by the completion thread.
#[test]
fn parked_work_is_always_readmitted_after_its_semaphore_advances() {
    check("parked-work wake-up (submitter, waker, completion thread)", Exploration::Exhaustive, || {
        let state = Arc::new(State {
            semaphore: SemaphoreSlot::default(),
            parked: ParkedQueues::default(),
            control: Control::default(),
            admitted: AtomicBool::new(false),
        });
        let waker = {
            let state = state.clone();
            thread::spawn(move || {
                state.semaphore.signal(1);
                if state.parked.to_wake(None) & (1 << QUEUE) != 0 {
                    state.control.poke();
                }
            })
        };
        let submitter = {
            let state = state.clone();
            thread::spawn(move || {
                if state.semaphore.value() >= 1 {
                    state.admitted.store(true, Ordering::Release);
                } else {
                    state.parked.park(QUEUE);
                }
                // Parking pokes the completion thread; so, here, does an admission (it ends the
                // model's completion thread, which a real one outlives).
                state.control.poke();
            })
        };
        // The completion thread.
        loop {
            let seen = state.control.read();
            if state.admitted.load(Ordering::Acquire) {
                break;
            }
            if state.parked.must_readmit(QUEUE) && state.semaphore.value() >= 1 {
                state.parked.unpark(QUEUE);
                state.admitted.store(true, Ordering::Release);
                break;
            }
            state.control.wait_change(seen);
        }
        waker.join().unwrap();
        submitter.join().unwrap();
        assert!(state.admitted.load(Ordering::Acquire));
    });
}
