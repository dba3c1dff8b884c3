//! Who drains: the submitter drains a retired batch of epochs after its pass, and the completion
//! thread covers the rest. A host wait never depends on a later submission: one submitted to an
//! idle queue, and the last of a burst, are drained as soon as they retire, not at the
//! completion thread's 100 ms fallback wake-up (both strategies).

mod common;

use std::time::Duration;

use aqueduct_engine::WaitStrategy;
use common::*;

const STRATEGIES: [WaitStrategy; 2] = [WaitStrategy::BarrierValue, WaitStrategy::BarrierAnd];

const ROUNDS: u64 = 20;

// The tests' completion threads never wake on their own (`COMPLETION_FALLBACK`): a missed
// wake-up leaves the semaphore unreached and the wait times out.

#[test]
fn a_submission_to_an_idle_queue_is_drained_without_another() {
    for strategy in STRATEGIES {
        let engine = engine(strategy);
        let queue = queue(engine.device());
        let semaphore = engine.device().create_semaphore(0).unwrap();
        for round in 1..=ROUNDS {
            // Let the completion thread go idle (under BarrierAnd it then sleeps on the control
            // signal alone, and the publication must poke it).
            std::thread::sleep(Duration::from_millis(2));
            queue.barrier().signal(semaphore.at(round)).submit().unwrap();
            semaphore.wait(round, TIMEOUT).unwrap();
        }
    }
}

#[test]
fn the_last_submission_of_a_burst_is_drained_without_another() {
    const BURST: u64 = 100; // more than the submitter's batch, fewer than the completion thread's
    for strategy in STRATEGIES {
        let engine = engine(strategy);
        let queue = queue(engine.device());
        let semaphore = engine.device().create_semaphore(0).unwrap();
        for round in 0..ROUNDS {
            for step in 1..=BURST {
                queue.barrier().signal(semaphore.at(round * BURST + step)).submit().unwrap();
            }
            semaphore.wait((round + 1) * BURST, TIMEOUT).unwrap();
        }
    }
}

#[test]
fn a_host_wait_is_not_held_back_by_later_work_still_running() {
    // The completion thread batches its drains behind work in flight; a parked host thread makes
    // it drain each epoch as it retires, so a wait on the first submission returns while the
    // second is still stalled (the fallback sleep, which would hide a miss, is an hour here).
    for strategy in STRATEGIES {
        let engine = engine(strategy);
        let queue = queue(engine.device());
        let (first, second) =
            (engine.device().create_semaphore(0).unwrap(), engine.device().create_semaphore(0).unwrap());
        queue.barrier().signal(first.at(1)).submit().unwrap();
        stall_next(&queue);
        queue.barrier().signal(second.at(1)).submit().unwrap();
        first.wait(1, TIMEOUT).unwrap();
        assert_eq!(second.value(), 0, "{strategy:?}: the second submission is still stalled");
        release(&queue, || second.value() == 1);
    }
}
