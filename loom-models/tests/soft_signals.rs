//! loom models of the soft runtime's signal wait and wake (`soft-hsa/src/waiters.rs`, driven by
//! `soft-hsa/src/signals.rs`) and of its doorbell handoff to the queue processor
//! (`soft-hsa/src/queue.rs`, `soft-hsa/src/processor.rs`).
//!
//! The checked product code is `Waiters::{register, unregister, wake}` and `registered`. The
//! signal value is an atomic of the model, used the way `SignalSlot::update` and `wait_until` use
//! theirs: a change is a store or RMW on the value followed by `wake`; a waiter registers (with
//! the condition it waits for, or none),
//! fences, then checks and parks. Those two functions carry timing (spin phase, park timeouts,
//! deadlines) that loom cannot model, so the model parks without a timeout: a lost wake-up is then
//! a deadlock, which loom reports.
#![cfg(loom)]

#[allow(dead_code)]
#[path = "../../soft-hsa/src/waiters.rs"]
mod waiters;

use aqueduct_loom_models::{Exploration, check};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicI64, Ordering};
use loom::thread;
use waiters::{Waiters, WakeWhen};

struct Signal {
    value: AtomicI64,
    waiters: Waiters,
}

impl Signal {
    fn new(value: i64) -> Self {
        Self { value: AtomicI64::new(value), waiters: Waiters::new() }
    }

    /// As `SignalSlot::update` with a decrement.
    fn decrement(&self) {
        self.value.fetch_sub(1, Ordering::AcqRel);
        self.waiters.wake(&self.value);
    }

    /// As `wait_until` for `value == 0`, past its spin phase, with an unbounded park: woken by
    /// every change, or (`conditional`) only by one that leaves 0, as `hsa_signal_wait_*` wait.
    fn wait_zero(&self, conditional: bool) {
        let zero = WakeWhen { holds: |value, compare| value == compare, compare: 0 };
        self.waiters.register(conditional.then_some(zero));
        waiters::registered();
        while self.value.load(Ordering::Acquire) != 0 {
            thread::park();
        }
        self.waiters.unregister();
    }
}

/// Invariant: no lost wake-up. A signal starts at 2; two threads each decrement it once while
/// a waiter waits for 0. Every interleaving ends with the waiter returned (a waiter parked with
/// no unpark to come is a deadlock loom reports), the value at 0, and no registration left.
#[test]
fn a_waiter_always_sees_the_last_change() {
    check("soft signal wait/wake (1 waiter, 2 changers)", Exploration::Exhaustive, || one_waiter_two_changers(false));
}

/// Invariant: no lost wake-up for a waiter that registered its condition, though the changes
/// that do not meet it wake nobody: as above, the waiter waiting for 0 and woken only by a
/// change after which the value is 0.
#[test]
fn a_conditional_waiter_wakes_on_the_change_that_meets_it() {
    check("soft signal conditional wait/wake (1 waiter, 2 changers)", Exploration::Preemptions(3), || {
        one_waiter_two_changers(true)
    });
}

/// The two models above: a signal at 2, decremented once by each of two threads while this
/// thread waits for 0 (`conditional`: with its condition registered).
fn one_waiter_two_changers(conditional: bool) {
    let signal = Arc::new(Signal::new(2));
    let changers: Vec<_> = (0..2)
        .map(|_| {
            let signal = signal.clone();
            thread::spawn(move || signal.decrement())
        })
        .collect();
    signal.wait_zero(conditional);
    assert_eq!(signal.value.load(Ordering::Acquire), 0);
    for changer in changers {
        changer.join().unwrap();
    }
}

/// Invariant: every waiter of one change wakes, whichever registers first or last: two waiters
/// (one with its condition registered, one without) wait for 0 while one thread decrements the
/// signal from 1, over every interleaving.
#[test]
fn every_waiter_wakes() {
    check("soft signal wait/wake (2 waiters, 1 changer)", Exploration::Preemptions(3), || {
        let signal = Arc::new(Signal::new(1));
        let waiter = {
            let signal = signal.clone();
            thread::spawn(move || signal.wait_zero(true))
        };
        let changer = {
            let signal = signal.clone();
            thread::spawn(move || signal.decrement())
        };
        signal.wait_zero(false);
        waiter.join().unwrap();
        changer.join().unwrap();
    });
}

/// Never rung, as `DOORBELL_NEVER_RUNG`.
const NEVER_RUNG: i64 = -1;

/// Invariant: the doorbell handoff loses no packet and publishes each one. The processor
/// registers on the doorbell signal once and fences, as `processor::run` does, then loops: read the
/// doorbell (acquire), consume every packet up to it, park when there is nothing new. A producer
/// writes packet 0, rings 0, writes packet 1, rings 1, each ring a release store followed by
/// `wake_all` (`SignalSlot::update` on the doorbell). The processor consumes both packets and
/// reads each one's contents race-free (loom checks the plain cells), in every interleaving.
#[test]
fn doorbell_hands_every_packet_to_the_processor() {
    check("soft doorbell handoff (producer, processor)", Exploration::Exhaustive, || {
        let doorbell = Arc::new((AtomicI64::new(NEVER_RUNG), Waiters::new()));
        let packets = Arc::new([UnsafeCell::new(0u64), UnsafeCell::new(0u64)]);
        let processor = {
            let (doorbell, packets) = (doorbell.clone(), packets.clone());
            thread::spawn(move || {
                doorbell.1.register(None);
                // Without this fence a ring made while the processor registers is lost: the
                // processor reads the old doorbell and the ringer misses the registration (this
                // model found it; `processor::run` had no fence and slept out a park timeout).
                waiters::registered();
                let mut read = 0;
                let mut rung_until = 0;
                let mut seen = Vec::new();
                while read < 2 {
                    let rung = doorbell.0.load(Ordering::Acquire);
                    if rung != NEVER_RUNG {
                        rung_until = rung_until.max(rung + 1);
                    }
                    if read >= rung_until {
                        thread::park();
                        continue;
                    }
                    // SAFETY: the acquire load of the doorbell ordered the producer's write of
                    // this packet before this read; the producer never writes it again.
                    seen.push(packets[read as usize].with(|packet| unsafe { *packet }));
                    read += 1;
                }
                doorbell.1.unregister();
                seen
            })
        };
        for (index, packet) in packets.iter().enumerate() {
            // SAFETY: the processor reads a packet only after the doorbell below names it.
            packet.with_mut(|packet| unsafe { *packet = 10 + index as u64 });
            doorbell.0.store(index as i64, Ordering::Release);
            doorbell.1.wake(&doorbell.0);
        }
        assert_eq!(processor.join().unwrap(), [10, 11]);
    });
}
