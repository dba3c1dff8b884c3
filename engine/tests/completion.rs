//! Who drains: the submitter drains a retired batch of epochs after its pass, and the completion
//! thread covers the rest. A host wait never depends on a later submission: one submitted to an
//! idle queue, and the last of a burst, are drained as soon as they retire, not at the
//! completion thread's 100 ms fallback wake-up (both strategies).

mod common;

use std::time::{Duration, Instant};

use aqueduct_engine::WaitStrategy;
use common::*;

const STRATEGIES: [WaitStrategy; 2] = [WaitStrategy::BarrierValue, WaitStrategy::BarrierAnd];

const ROUNDS: u64 = 20;

/// A missed wake-up costs the completion thread's 100 ms fallback sleep. The bound is a fifth of
/// what missing every round would cost, so a loaded machine does not fail it; missed wake-ups do.
const BOUND: Duration = Duration::from_millis(ROUNDS * 100 / 5);

#[test]
fn a_submission_to_an_idle_queue_is_drained_without_another() {
    for strategy in STRATEGIES {
        let engine = engine(strategy);
        let queue = queue(engine.device());
        let semaphore = engine.device().create_semaphore(0).unwrap();
        let mut waited = Duration::ZERO;
        for round in 1..=ROUNDS {
            // Let the completion thread go idle (under BarrierAnd it then sleeps on the control
            // signal alone, and the publication must poke it).
            std::thread::sleep(Duration::from_millis(2));
            let start = Instant::now();
            queue.barrier(&[], &[semaphore.at(round)]).unwrap();
            semaphore.wait(round, TIMEOUT).unwrap();
            waited += start.elapsed();
        }
        assert!(waited < BOUND, "{strategy:?}: {ROUNDS} idle submissions took {waited:?} to drain");
    }
}

#[test]
fn the_last_submission_of_a_burst_is_drained_without_another() {
    const BURST: u64 = 100; // more than the submitter's batch, fewer than the completion thread's
    for strategy in STRATEGIES {
        let engine = engine(strategy);
        let queue = queue(engine.device());
        let semaphore = engine.device().create_semaphore(0).unwrap();
        let mut waited = Duration::ZERO;
        for round in 0..ROUNDS {
            let start = Instant::now();
            for step in 1..=BURST {
                queue.barrier(&[], &[semaphore.at(round * BURST + step)]).unwrap();
            }
            semaphore.wait((round + 1) * BURST, TIMEOUT).unwrap();
            waited += start.elapsed();
        }
        assert!(waited < BOUND, "{strategy:?}: {ROUNDS} bursts took {waited:?} to drain");
    }
}
