//! loom models of a semaphore slot (`components/src/semaphore_slot.rs`, the protocol that
//! `systems/src/sync/semaphores.rs` drives): the value, the failure, and the seqlocked producer
//! record.
#![cfg(loom)]

#[allow(dead_code)]
#[path = "../../components/src/semaphore_slot.rs"]
mod semaphore_slot;

use aqueduct_loom_models::{Exploration, check};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use semaphore_slot::{OrphanVerdict, RECORD_FRONTIER_WORDS, RecordSnapshot, SemaphoreSlot};

const FIRST: u64 = (1 << 48) | 7; // queue 0, epoch 7
const SECOND: u64 = (3 << 48) | 9; // queue 2, epoch 9

fn words(list: &[u64]) -> [u64; RECORD_FRONTIER_WORDS] {
    let mut words = [0; RECORD_FRONTIER_WORDS];
    words[..list.len()].copy_from_slice(list);
    words
}

/// Invariant: a reader of the producer record never sees a torn record. Two writers record
/// (value 1, FIRST, frontier [11, 12]) and (value 2, SECOND, frontier [21]) while a reader takes
/// `read_record` and `read_frontier(FIRST)`: the snapshot is the empty record or exactly one
/// writer's (its value, and a `queued_before` that is what the record held before it), and a
/// frontier read for FIRST is FIRST's words, zero after its end. Once both writers are done the
/// promise is 2 and the record is the last writer's.
///
/// Bound: 2 preemptions. At 3, loom's scheduler runs out of preemptions while a thread spins
/// (yielding) on the seqlock, so the yielding thread is rescheduled forever and the model exceeds
/// loom's branch limit; [`record_against_one_writer`] covers a writer and a reader exhaustively.
#[test]
fn producer_record_is_never_torn() {
    check("semaphore record (2 writers, 1 reader)", Exploration::Preemptions(2), || {
        let slot = Arc::new(SemaphoreSlot::default());
        let writers = [(1, FIRST, words(&[11, 12])), (2, SECOND, words(&[21]))].map(|(value, producer, frontier)| {
            let slot = slot.clone();
            thread::spawn(move || slot.write_record(value, producer, &frontier))
        });
        let record = slot.read_record();
        match record.producer {
            0 => assert_eq!(record, RecordSnapshot { queued_value: 0, queued_before: 0, producer: 0 }),
            FIRST => {
                assert_eq!(record.queued_value, 1);
                assert!(record.queued_before == 0 || record.queued_before == 2, "{record:?}");
            }
            SECOND => {
                assert_eq!(record.queued_value, 2);
                assert!(record.queued_before == 0 || record.queued_before == 1, "{record:?}");
            }
            other => panic!("a producer no one wrote: {other:#x}"),
        }
        if let Some(frontier) = slot.read_frontier(FIRST) {
            assert_eq!(frontier, words(&[11, 12]));
        }
        for writer in writers {
            writer.join().unwrap();
        }
        assert_eq!(slot.highest_promised(), 2);
        let last = slot.read_record();
        assert!(last.producer == FIRST || last.producer == SECOND);
        assert_eq!(last.queued_before, 3 - last.queued_value);
    });
}

/// Invariant: as [`producer_record_is_never_torn`], for one writer replacing an existing record
/// and one reader, over every interleaving: the reader sees the old record (value 1, FIRST,
/// frontier [11, 12]) or the new one (value 2, SECOND, previous value 1, frontier [21]) whole,
/// and a frontier read for FIRST is FIRST's or nothing.
#[test]
fn record_against_one_writer() {
    check("semaphore record (1 writer, 1 reader)", Exploration::Exhaustive, || {
        let slot = Arc::new(SemaphoreSlot::default());
        slot.write_record(1, FIRST, &words(&[11, 12]));
        let writer = {
            let slot = slot.clone();
            thread::spawn(move || slot.write_record(2, SECOND, &words(&[21])))
        };
        let record = slot.read_record();
        assert!(
            record == RecordSnapshot { queued_value: 1, queued_before: 0, producer: FIRST }
                || record == RecordSnapshot { queued_value: 2, queued_before: 1, producer: SECOND },
            "{record:?}"
        );
        if let Some(frontier) = slot.read_frontier(FIRST) {
            assert_eq!(frontier, words(&[11, 12]));
        }
        if let Some(frontier) = slot.read_frontier(SECOND) {
            assert_eq!(frontier, words(&[21]), "the stale word 12 after the end marker reads as 0");
        }
        writer.join().unwrap();
    });
}

/// Invariant: the timeline only rises, a signal reports a change exactly when it raised the
/// value, and the first failure wins. Two signallers raise the value to 3 and 5 while two threads
/// fail the slot with tags 1 and 2 and a reader samples the value twice: the samples never go
/// down, exactly one `fail` succeeds and its tag is the one that stays, the signal of 5 always
/// reports a change, and the final value is 5.
#[test]
fn value_rises_and_first_failure_wins() {
    check("semaphore value and failure", Exploration::Exhaustive, || {
        let slot = Arc::new(SemaphoreSlot::default());
        let signallers = [3, 5].map(|value| {
            let slot = slot.clone();
            thread::spawn(move || slot.signal(value))
        });
        let failer = {
            let slot = slot.clone();
            thread::spawn(move || slot.fail(1))
        };
        let second_failed = slot.fail(2);
        let early = slot.value();
        let late = slot.value();
        assert!(early <= late);
        let [three, five] = signallers.map(|signaller| signaller.join().unwrap());
        let first_failed = failer.join().unwrap();
        assert!(five, "nothing else sets 5, so raising to it changes the value");
        assert!(!three || slot.value() == 5);
        assert_eq!(slot.value(), 5);
        assert!(first_failed ^ second_failed, "exactly one failure wins");
        assert_eq!(slot.failure_tag(), if first_failed { 1 } else { 2 });
    });
}

/// Invariant: a signal publishes what the signaller wrote before it. A producer writes a plain
/// (non-atomic) result and then signals 1; a waiter that sees the value reach 1 reads the result
/// without a data race (loom reports any race on the cell) and sees it complete. The same holds
/// for a record: a reader that sees the producer in the record sees what the writer stored
/// before recording it.
#[test]
fn signal_and_record_publish_earlier_writes() {
    check("semaphore signal publishes", Exploration::Exhaustive, || {
        let slot = Arc::new(SemaphoreSlot::default());
        let result = Arc::new(UnsafeCell::new(0u64));
        let producer = {
            let (slot, result) = (slot.clone(), result.clone());
            thread::spawn(move || {
                // SAFETY: no one reads the cell before the signal below publishes it.
                result.with_mut(|result| unsafe { *result = 42 });
                slot.write_record(1, FIRST, &words(&[]));
                slot.signal(1);
            })
        };
        if slot.value() >= 1 || slot.read_record().producer == FIRST {
            // SAFETY: the acquire load that saw the signal (or the record) orders this read after
            // the producer's write; loom checks exactly that.
            let seen = result.with(|result| unsafe { *result });
            assert_eq!(seen, 42);
        }
        producer.join().unwrap();
    });
}

/// Invariant: the last handle's drop never hides what the handles did before it. A handle fails
/// the slot (tag 7), or signals 1, or queues a signal promising 1, and then drops (`orphan`),
/// while a waiter classifies a wait for 1: the waiter never finds the value unreachable, and
/// once the handle is gone it sees the failure or the value. With nothing done before the
/// drop, the wait is unreachable once the drop is seen.
#[test]
fn an_orphaned_slot_keeps_what_its_handles_did() {
    for last_act in ["fail", "signal", "promise", "nothing"] {
        check("semaphore orphaning", Exploration::Exhaustive, move || {
            let slot = Arc::new(SemaphoreSlot::default());
            let handle = {
                let slot = slot.clone();
                thread::spawn(move || {
                    match last_act {
                        "fail" => drop(slot.fail(7)),
                        "signal" => drop(slot.signal(1)),
                        "promise" => slot.promise(1),
                        _ => {}
                    }
                    slot.orphan();
                })
            };
            let verdict = slot.orphan_verdict(1);
            if last_act != "nothing" {
                assert!(!matches!(verdict, OrphanVerdict::Unreachable(_)), "{last_act}: {verdict:?}");
            }
            handle.join().unwrap();
            let after = slot.orphan_verdict(1);
            match last_act {
                "fail" => assert_eq!(after, OrphanVerdict::Failed(7)),
                "signal" | "promise" => assert_eq!(after, OrphanVerdict::Promised),
                _ => assert!(matches!(after, OrphanVerdict::Unreachable(_)), "{after:?}"),
            }
        });
    }
}
