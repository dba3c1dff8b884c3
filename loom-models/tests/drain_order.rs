//! loom model of the causal drain order's wake-up (`components/src/drain_order.rs`, driven by
//! `systems/src/reclaim.rs` and the engine's `queue/completion.rs`): a queue whose drain stopped
//! on a producer's undrained epoch is always woken once the producer has drained it.
#![cfg(loom)]

#[allow(dead_code)]
#[path = "../../components/src/drain_order.rs"]
mod drain_order;

use aqueduct_loom_models::{Control, Exploration, check};
use drain_order::{ProducerDrain, await_drain, publish_drained};
use loom::sync::Arc;
use loom::sync::atomic::AtomicU64;
use loom::thread;

#[derive(Default)]
struct Producer {
    drained: AtomicU64,
    waiters: AtomicU64,
}

const WAITER: u16 = 5;

/// The producer drains its epochs in `steps` (each a `publish_drained`, poking what it takes);
/// the waiter's completion thread loops as `queue::completion::run` does: read the control
/// value, try the drain (`await_drain` on the last epoch), and sleep until a poke while it is
/// held. In every interleaving the waiter gets through, including when the producer's first
/// drain stops short of the epoch it needs and it must register again.
fn model(steps: &'static [u64], needed: u64) {
    let producer = Arc::new(Producer::default());
    let control = Arc::new(Control::default());
    let drains = {
        let (producer, control) = (producer.clone(), control.clone());
        thread::spawn(move || {
            for &value in steps {
                if publish_drained(&producer.drained, &producer.waiters, value) & (1 << WAITER) != 0 {
                    control.poke();
                }
            }
        })
    };
    loop {
        let seen = control.read();
        match await_drain(&producer.drained, &producer.waiters, WAITER, needed) {
            ProducerDrain::Drained => break,
            ProducerDrain::Registered { .. } => control.wait_change(seen),
        }
    }
    drains.join().unwrap();
}

#[test]
fn a_held_drain_is_always_woken_once_its_producer_drained() {
    check("drain order: one producer drain", Exploration::Exhaustive, || model(&[1], 1));
}

#[test]
fn a_held_drain_registers_again_after_a_drain_that_stopped_short() {
    check("drain order: two producer drains", Exploration::Exhaustive, || model(&[1, 2], 2));
}
