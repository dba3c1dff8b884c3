//! The semaphore slot protocol over [`SemaphoreTable`]'s atomics.
//!
//! - **Lifecycle**: [`SemaphoreSync::allocate`] takes a slot (free list first) and resets it;
//!   [`SemaphoreSync::release`] gives it back once nothing references it.
//! - **Value and failure**: the timeline only rises ([`SemaphoreSync::signal`]); a failure is
//!   recorded once in the table's log and the first one to reach a slot wins
//!   ([`SemaphoreSync::fail`]).
//! - **Producer record**: a seqlock. A writer (admission, for each semaphore a submission
//!   signals) takes it with a compare-and-swap on `sequence` (odd while writing), stores the
//!   record, and releases it with `sequence + 2`; a reader retries until it reads the same even
//!   `sequence` before and after. So a reader sees one producer's (value, previous value, queue,
//!   epoch, frontier), never a mix.
//! - **Promises**: `promised` bounds every value accepted for the future, parked or queued, so a
//!   new signal must exceed it.
//!
//! **Contract.** Values, failures, promises and producer records are atomics: any thread calls these
//! with or without a queue's lock. `allocate` and `release` take the table's free-list mutex, and
//! `record_failure` and `failure_record` its failure-log mutex; both are leaves. A slot is released
//! only by the device's deferred release, once no enqueued row can name it.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use aqueduct_components::dependency::Producer;
use aqueduct_components::frontier::Frontier;
use aqueduct_components::semaphore_slot::{ORPHANED_UNRECORDED, OrphanVerdict};
use aqueduct_components::semaphore_table::{FailureRecord, SemaphoreTable, TableFull, WaitSource};

/// The semaphore slot protocol (see the module documentation).
pub trait SemaphoreSync {
    /// Takes a slot and sets its value; its record, promise and failure start empty.
    fn allocate(&self, initial: u64) -> Result<u32, TableFull>;

    /// Returns a slot to the free list. The caller guarantees nothing references it any more.
    fn release(&self, index: u32);

    fn value(&self, index: u32) -> u64;

    /// The failure-log index, if the semaphore failed.
    fn failure(&self, index: u32) -> Option<u32>;

    fn failure_record(&self, failure: u32) -> Option<Arc<FailureRecord>>;

    /// Records a failure once; every semaphore it reaches shares the index.
    fn record_failure(&self, record: FailureRecord) -> u32;

    /// Marks the semaphore failed (the first failure wins). Returns whether this call failed it.
    fn fail(&self, index: u32, failure: u32) -> bool;

    /// Raises the timeline to `value` (never lowers it). Returns whether the value changed.
    /// Wake host waiters (`HostParking::notify`) after a batch of signals.
    fn signal(&self, index: u32, value: u64) -> bool;

    /// The highest value the semaphore holds or has been queued (published or parked) to reach;
    /// a new signal must exceed it.
    fn highest_promised(&self, index: u32) -> u64;

    /// Records that a parked submission will raise the semaphore to `value` once admitted.
    fn record_parked_signal(&self, index: u32, value: u64);

    /// Classifies a wait for `value`. On a semaphore whose last handle dropped, a wait past
    /// every promised value can never be met: it fails, with a record made by the first such
    /// wait, not the semaphore (waits it already met, or will meet, still pass).
    fn wait_source(&self, index: u32, value: u64) -> WaitSource;

    /// The semaphore's last handle dropped: from now on nothing new can promise it a value.
    fn orphan(&self, index: u32);

    /// The frontier recorded with `producer`, if the record still names it (a later signal may
    /// have replaced it: then nothing is known, which only costs elision).
    fn queued_frontier(&self, index: u32, producer: Producer) -> Option<Frontier>;

    /// Records that `producer` will raise the semaphore to `value`, with no frontier.
    fn record_queued_signal(&self, index: u32, value: u64, producer: Producer) {
        self.record_queued_signal_with_frontier(index, value, producer, &Frontier::EMPTY);
    }

    /// Records that `producer` will raise the semaphore to `value`, and what its queue had reached
    /// before it (`frontier`).
    fn record_queued_signal_with_frontier(&self, index: u32, value: u64, producer: Producer, frontier: &Frontier);
}

/// The failure a wait for `value` on orphaned slot `index` gets: the slot's record, made by
/// the first such wait (a loser of the race to make it uses the winner's).
#[cold]
fn orphaned_failure(table: &SemaphoreTable, index: u32, tag: u32, value: u64) -> u32 {
    if tag != ORPHANED_UNRECORDED {
        return tag - 1;
    }
    let slot = table.slot(index);
    let failure = table.record_failure(FailureRecord {
        status: None,
        message: format!(
            "semaphore {index} was dropped at value {}: no handle is left to raise it to {value}",
            slot.value()
        ),
    });
    match slot.orphaned.compare_exchange(ORPHANED_UNRECORDED, failure + 1, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => failure,
        Err(recorded) => recorded - 1,
    }
}

impl SemaphoreSync for SemaphoreTable {
    fn allocate(&self, initial: u64) -> Result<u32, TableFull> {
        let index = {
            let mut free = self.free.lock().unwrap_or_else(|poison| poison.into_inner());
            match free.pop() {
                Some(index) => index,
                None => {
                    let index = self.next_unused.load(Ordering::Relaxed);
                    if index as usize >= self.capacity() {
                        return Err(TableFull { capacity: self.capacity() });
                    }
                    self.next_unused.store(index + 1, Ordering::Relaxed);
                    index
                }
            }
        };
        // No one else holds the slot, so its record needs no seqlock.
        self.slot(index).reset(initial);
        Ok(index)
    }

    fn release(&self, index: u32) {
        self.free.lock().unwrap_or_else(|poison| poison.into_inner()).push(index);
    }

    #[inline]
    fn value(&self, index: u32) -> u64 {
        self.slot(index).value()
    }

    #[inline]
    fn failure(&self, index: u32) -> Option<u32> {
        match self.slot(index).failure_tag() {
            0 => None,
            tagged => Some(tagged - 1),
        }
    }

    fn failure_record(&self, failure: u32) -> Option<Arc<FailureRecord>> {
        self.failures.lock().unwrap_or_else(|poison| poison.into_inner()).get(failure as usize).cloned()
    }

    fn record_failure(&self, record: FailureRecord) -> u32 {
        let mut failures = self.failures.lock().unwrap_or_else(|poison| poison.into_inner());
        failures.push(Arc::new(record));
        (failures.len() - 1) as u32
    }

    #[inline]
    fn fail(&self, index: u32, failure: u32) -> bool {
        self.slot(index).fail(failure + 1)
    }

    #[inline]
    fn signal(&self, index: u32, value: u64) -> bool {
        self.slot(index).signal(value)
    }

    #[inline]
    fn highest_promised(&self, index: u32) -> u64 {
        self.slot(index).highest_promised()
    }

    #[inline]
    fn record_parked_signal(&self, index: u32, value: u64) {
        self.slot(index).promise(value);
    }

    #[inline]
    fn wait_source(&self, index: u32, value: u64) -> WaitSource {
        let slot = self.slot(index);
        if let Some(failure) = self.failure(index) {
            return WaitSource::Failed(failure);
        }
        if slot.value() >= value {
            return WaitSource::Satisfied;
        }
        let record = slot.read_record();
        match Producer::unpack(record.producer) {
            Some(producer) if record.queued_value >= value && record.queued_before < value => {
                WaitSource::Queued(producer)
            }
            _ => match slot.orphan_verdict(value) {
                OrphanVerdict::Live | OrphanVerdict::Promised => WaitSource::Unknown,
                OrphanVerdict::Failed(tag) => WaitSource::Failed(tag - 1),
                OrphanVerdict::Unreachable(tag) => WaitSource::Failed(orphaned_failure(self, index, tag, value)),
            },
        }
    }

    fn orphan(&self, index: u32) {
        self.slot(index).orphan();
    }

    #[inline]
    fn queued_frontier(&self, index: u32, producer: Producer) -> Option<Frontier> {
        // Zero from the first 0 on, as a frontier's words are.
        self.slot(index).read_frontier(producer.pack()).map(Frontier::from_dense_words)
    }

    #[inline]
    fn record_queued_signal_with_frontier(&self, index: u32, value: u64, producer: Producer, frontier: &Frontier) {
        self.slot(index).write_record(value, producer.pack(), frontier.words());
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    #[test]
    fn producer_record_is_exact_only_for_the_values_it_covers() {
        let table = SemaphoreTable::new(4);
        let slot = table.allocate(0).unwrap();
        assert_eq!(table.wait_source(slot, 0), WaitSource::Satisfied);
        assert_eq!(table.wait_source(slot, 1), WaitSource::Unknown);
        let first = Producer { queue: 1, epoch: 7 };
        table.record_queued_signal(slot, 2, first);
        assert_eq!(table.wait_source(slot, 1), WaitSource::Queued(first));
        assert_eq!(table.wait_source(slot, 2), WaitSource::Queued(first));
        assert_eq!(table.wait_source(slot, 3), WaitSource::Unknown);
        let second = Producer { queue: 0, epoch: 9 };
        table.record_queued_signal(slot, 5, second);
        // Value 2 now belongs to an older producer the record no longer names.
        assert_eq!(table.wait_source(slot, 2), WaitSource::Unknown);
        assert_eq!(table.wait_source(slot, 4), WaitSource::Queued(second));
        assert!(table.signal(slot, 2));
        assert!(!table.signal(slot, 1), "a timeline never goes down");
        assert_eq!(table.value(slot), 2);
        assert_eq!(table.wait_source(slot, 2), WaitSource::Satisfied);
        assert_eq!(table.highest_promised(slot), 5);
    }

    #[test]
    fn the_record_carries_its_producers_frontier() {
        let table = SemaphoreTable::new(1);
        let slot = table.allocate(0).unwrap();
        let first = Producer { queue: 1, epoch: 7 };
        let mut reached = Frontier::EMPTY;
        reached.insert(0, 3);
        reached.insert(2, 9);
        table.record_queued_signal_with_frontier(slot, 1, first, &reached);
        assert_eq!(table.queued_frontier(slot, first), Some(reached));
        // A shorter frontier replaces a longer one entirely.
        let second = Producer { queue: 2, epoch: 10 };
        let mut shorter = Frontier::EMPTY;
        shorter.insert(1, 7);
        table.record_queued_signal_with_frontier(slot, 2, second, &shorter);
        assert_eq!(table.queued_frontier(slot, second), Some(shorter));
        assert_eq!(table.queued_frontier(slot, first), None, "a replaced record tells nothing about its producer");
        table.record_queued_signal(slot, 3, first);
        assert_eq!(table.queued_frontier(slot, first), Some(Frontier::EMPTY));
        table.release(slot);
        let reused = table.allocate(0).unwrap();
        assert_eq!(table.queued_frontier(reused, first), None, "a reused slot has no record");
    }

    #[test]
    fn readers_see_a_frontier_matching_the_producer_under_concurrent_records() {
        // The writer alternates two producers, each with its own frontier; a reader asking for
        // one producer's frontier must get exactly that one or nothing, never the other's.
        let producers = [Producer { queue: 1, epoch: 5 }, Producer { queue: 3, epoch: 9 }];
        let frontiers = producers.map(|producer| {
            let mut frontier = Frontier::EMPTY;
            for queue in 0..producer.epoch as u16 - 1 {
                frontier.insert(queue + 10, producer.epoch);
            }
            frontier
        });
        let table = Arc::new(SemaphoreTable::new(1));
        let slot = table.allocate(0).unwrap();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (table, stop) = (table.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut value = 1;
                while !stop.load(Ordering::Relaxed) {
                    let which = (value % 2) as usize;
                    table.record_queued_signal_with_frontier(slot, value, producers[which], &frontiers[which]);
                    value += 1;
                }
            })
        };
        let mut seen = [0u32; 2];
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        for round in 0.. {
            let which = round % 2;
            if let Some(frontier) = table.queued_frontier(slot, producers[which]) {
                assert_eq!(frontier, frontiers[which], "{:?}", producers[which]);
                seen[which] += 1;
            }
            if seen.iter().all(|count| *count >= 1000) || Instant::now() > deadline {
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        writer.join().unwrap();
        assert!(seen.iter().all(|count| *count > 0), "both producers were read: {seen:?}");
    }

    #[test]
    fn parked_signals_are_promises_without_a_producer() {
        let table = SemaphoreTable::new(1);
        let slot = table.allocate(2).unwrap();
        table.record_parked_signal(slot, 6);
        assert_eq!(table.highest_promised(slot), 6);
        // No producer is known for the parked value, so waits on it still defer.
        assert_eq!(table.wait_source(slot, 3), WaitSource::Unknown);
        table.release(slot);
        let reused = table.allocate(1).unwrap();
        assert_eq!(reused, slot);
        assert_eq!(table.highest_promised(reused), 1, "a reused slot forgets old promises");
    }

    #[test]
    fn a_lower_signal_published_late_keeps_the_higher_promise() {
        let table = SemaphoreTable::new(1);
        let slot = table.allocate(0).unwrap();
        table.record_queued_signal(slot, 5, Producer { queue: 0, epoch: 1 });
        table.record_queued_signal(slot, 3, Producer { queue: 1, epoch: 1 });
        assert_eq!(table.highest_promised(slot), 5);
        table.signal(slot, 3);
        assert_eq!(table.highest_promised(slot), 5);
    }

    #[test]
    fn an_orphaned_semaphore_fails_only_waits_past_every_promise() {
        let table = SemaphoreTable::new(1);
        let slot = table.allocate(2).unwrap();
        table.record_queued_signal(slot, 4, Producer { queue: 0, epoch: 1 });
        table.record_parked_signal(slot, 6);
        table.orphan(slot);
        // Met, queued and promised values still pass or wait; the semaphore itself is healthy.
        assert_eq!(table.wait_source(slot, 2), WaitSource::Satisfied);
        assert_eq!(table.wait_source(slot, 4), WaitSource::Queued(Producer { queue: 0, epoch: 1 }));
        assert_eq!(table.wait_source(slot, 6), WaitSource::Unknown);
        let WaitSource::Failed(failure) = table.wait_source(slot, 7) else { panic!("a wait past every promise fails") };
        assert!(table.failure_record(failure).unwrap().message.contains("dropped at value 2"));
        assert_eq!(table.wait_source(slot, 9), WaitSource::Failed(failure), "later waits share the record");
        assert_eq!(table.failure(slot), None);
        table.release(slot);
        let reused = table.allocate(0).unwrap();
        assert_eq!(table.wait_source(reused, 1), WaitSource::Unknown, "a reused slot is not orphaned");
    }

    #[test]
    fn failure_is_sticky_and_first_wins() {
        let table = SemaphoreTable::new(1);
        let slot = table.allocate(0).unwrap();
        let first = table.record_failure(FailureRecord { status: Some(0x1016), message: "fault".into() });
        let second = table.record_failure(FailureRecord { status: None, message: "later".into() });
        assert!(table.fail(slot, first));
        assert!(!table.fail(slot, second));
        assert_eq!(table.wait_source(slot, 1), WaitSource::Failed(first));
        assert_eq!(table.failure_record(first).unwrap().message, "fault");
    }

    #[test]
    fn a_full_table_refuses_and_released_slots_are_reused() {
        let table = SemaphoreTable::new(8);
        assert_eq!(table.capacity(), 8);
        let slots: Vec<u32> = (0..table.capacity()).map(|_| table.allocate(0).unwrap()).collect();
        assert_eq!(table.allocate(0), Err(TableFull { capacity: table.capacity() }));
        table.release(slots[3]);
        assert_eq!(table.allocate(9), Ok(slots[3]));
        assert_eq!(table.value(slots[3]), 9);
    }
}
