//! Cross-queue frontiers: which epochs of other queues a queue's work is known to follow.
//!
//! Every packet carries the barrier bit, so a queue's epoch is a prefix clock: "queue X reached
//! epoch e" means every submission of X up to e retired, and with them the device barriers those
//! submissions waited on. That makes reaching transitive: if B's epoch 7 waited on A's epoch 3,
//! then anything that waited on B's epoch 7 follows A's epoch 3 as well.
//!
//! - [`Frontier`] is the bounded, sparse form a semaphore's producer record carries (what the
//!   producing submission's queue was known to follow when it was admitted) and what admission
//!   collects from the producers it emits barriers for.
//! - [`QueueFrontier`] is a queue's own frontier: a dense per-queue array admission tests waits
//!   against, plus the transitive entries still *pending* on the epoch whose barriers brought them.
//!
//! ## Why transitive entries are pending until reclaim
//!
//! A queue that fails force-retires its epochs on the device so that other queues' barriers on
//! it pass (`reclaim::fail_in_flight`). Its own semaphores are failed first, so a waiter on the
//! failed queue learns of it; but "B reached 7" then no longer means that B's barrier on A's epoch
//! 3 passed. A queue that took A:3 from B's record may run before A's epoch 3 with nothing of A's
//! failed. So an entry learnt through a producer's record is used at once, but only *on the
//! condition* that the epoch whose barriers brought it succeeds: a wait it covers is kept with
//! that epoch as its `via`, and fails if that epoch fails (checked in order at reclaim, on the
//! same queue, so never late). Once that epoch is drained without failure, its barriers are
//! known to have passed for real and the entries become unconditional ([`QueueFrontier::settle`]).
//! Only unconditional entries are published in producer records, so every record only holds
//! entries that were really reached, and the one-hop failure check stays sufficient.
//!
//! What that costs: a record carries its queue's own barriers and confirmed entries, not
//! entries still pending, so while work is in flight transitivity reaches one hop through a
//! record (C learns A from B's record, D does not learn A from C's record until C's epoch is
//! drained). A submission that waits on several producers combines their records at once: a
//! barrier whose producer another barrier's producer already followed is dropped, with no
//! condition, since the submission's own failure check covers both semaphores.
//!
//! **Contract.** A `QueueFrontier` lives in its queue's state, under the queue's lock. A `Frontier`
//! travels in a semaphore's producer record, written and read under the record's seqlock
//! (`semaphore_slot`).

use crate::MAX_QUEUES;
use crate::dependency::{DeviceWait, Producer};

/// Entries one [`Frontier`] holds (the producer record's budget: one cache line of words).
pub const FRONTIER_ENTRIES: usize = 8;

// A producer record carries a frontier in the semaphore slot's words.
const _: () = assert!(FRONTIER_ENTRIES == crate::semaphore_slot::RECORD_FRONTIER_WORDS);

/// Transitive contributions a queue keeps pending at once (one per in-flight epoch that emitted
/// barriers on producers with a frontier); the oldest is dropped when more arrive.
pub const PENDING_EPOCHS: usize = 8;

/// Largest epoch a frontier entry can hold (the same 48 bits as a packed producer).
pub const MAX_FRONTIER_EPOCH: u64 = (1 << 48) - 1;

/// A bounded set of `(queue, epoch)` entries, at most one per queue: "every epoch up to `epoch`
/// of `queue` is reached".
///
/// Entries are packed words, `(queue + 1) << 48 | epoch`, in the order their queues were added; a
/// 0 word ends the list. **Overflow rule:** when a new queue's entry does not fit, the oldest
/// entry (the first added) is dropped. A missing entry only means that a later wait on that queue
/// is not known to be covered and gets a barrier it might have done without: dropping loses
/// elision, never ordering. An epoch beyond [`MAX_FRONTIER_EPOCH`] is never recorded, for the
/// same reason.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Frontier {
    words: [u64; FRONTIER_ENTRIES],
}

impl core::fmt::Debug for Frontier {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Frontier {
    pub const EMPTY: Self = Self { words: [0; FRONTIER_ENTRIES] };
    const EPOCH_BITS: u32 = 48;

    #[inline]
    fn key(queue: u16) -> u64 {
        (u64::from(queue) + 1) << Self::EPOCH_BITS
    }

    #[inline]
    fn unpack(word: u64) -> (u16, u64) {
        (((word >> Self::EPOCH_BITS) - 1) as u16, word & MAX_FRONTIER_EPOCH)
    }

    /// Rebuilds a frontier from its packed words (as a producer record stores them). Words after
    /// the first 0 are ignored.
    pub fn from_words(words: [u64; FRONTIER_ENTRIES]) -> Self {
        let mut frontier = Self { words };
        if let Some(end) = words.iter().position(|word| *word == 0) {
            frontier.words[end..].fill(0);
        }
        frontier
    }

    /// Words already zero from the first 0 on (as a record reader collects them).
    #[inline]
    pub fn from_dense_words(words: [u64; FRONTIER_ENTRIES]) -> Self {
        Self { words }
    }

    /// The packed words, for storing in a producer record.
    pub fn words(&self) -> &[u64; FRONTIER_ENTRIES] {
        &self.words
    }

    pub fn len(&self) -> usize {
        self.words.iter().position(|word| *word == 0).unwrap_or(FRONTIER_ENTRIES)
    }

    pub fn is_empty(&self) -> bool {
        self.words[0] == 0
    }

    /// `(queue, epoch)` entries, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        self.words.iter().take_while(|word| **word != 0).map(|word| Self::unpack(*word))
    }

    /// The highest epoch of `queue` this frontier holds; 0 when it holds none.
    #[inline]
    pub fn get(&self, queue: u16) -> u64 {
        let key = Self::key(queue);
        for word in self.words {
            if word == 0 {
                break;
            }
            if word & !MAX_FRONTIER_EPOCH == key {
                return word & MAX_FRONTIER_EPOCH;
            }
        }
        0
    }

    /// Whether `producer`'s epoch is reached according to this frontier.
    #[inline]
    pub fn covers(&self, producer: Producer) -> bool {
        producer.epoch <= self.get(producer.queue)
    }

    /// Raises `queue`'s entry to `epoch` (never lowers it). Returns `false` when something was
    /// dropped by the overflow rule (the new entry, if its epoch cannot be recorded; otherwise the
    /// oldest entry).
    #[inline]
    pub fn insert(&mut self, queue: u16, epoch: u64) -> bool {
        if epoch == 0 {
            return true;
        }
        if epoch > MAX_FRONTIER_EPOCH {
            return false;
        }
        let key = Self::key(queue);
        for word in &mut self.words {
            if *word == 0 {
                *word = key | epoch;
                return true;
            }
            if *word & !MAX_FRONTIER_EPOCH == key {
                *word = (*word).max(key | epoch);
                return true;
            }
        }
        self.words.copy_within(1.., 0);
        self.words[FRONTIER_ENTRIES - 1] = key | epoch;
        false
    }

    /// Merges every entry of `other` (keeping the highest epoch of each queue). Returns `false`
    /// when the overflow rule dropped something.
    pub fn merge(&mut self, other: &Frontier) -> bool {
        let mut kept = true;
        for (queue, epoch) in other.iter() {
            kept &= self.insert(queue, epoch);
        }
        kept
    }
}

/// How a queue's frontier covers a producer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cover {
    /// Not known to be reached: the wait needs a barrier.
    No,
    /// Reached unconditionally (this queue's own barriers, or entries confirmed at reclaim).
    Known,
    /// Reached if this queue's epoch `via` succeeds (its barriers brought the entry).
    Pending { via: u64 },
}

/// One epoch's transitive contribution, pending until that epoch is drained.
#[derive(Clone, Copy, Debug, Default)]
struct PendingEntry {
    epoch: u64,
    frontier: Frontier,
}

/// An epoch that failed at reclaim while later epochs in flight may have relied on its pending
/// entries; remembered until every epoch submitted before it failed has been drained.
#[derive(Clone, Copy, Debug)]
struct FailedEpoch {
    epoch: u64,
    horizon: u64,
    failure: u32,
}

/// A queue's frontier: what its published work is known to follow on other queues.
#[derive(Clone, Debug, bevy_ecs::prelude::Resource)]
pub struct QueueFrontier {
    /// Per queue, the highest epoch this queue's published work follows unconditionally: its own
    /// device barriers, plus transitive entries confirmed at reclaim.
    known: [u64; MAX_QUEUES],
    /// `known` as a bounded list: what a producer record of this queue carries.
    published: Frontier,
    /// Transitive entries by the epoch that brought them: a ring, oldest at `pending_head`.
    pending: [PendingEntry; PENDING_EPOCHS],
    pending_head: usize,
    pending_len: usize,
    /// Per queue, at least the highest epoch any pending entry holds (a bound kept until the
    /// ring empties), so most waits are refused without scanning the ring.
    pending_high: [u64; MAX_QUEUES],
    /// The queues `pending_high` has a nonzero bound for.
    pending_queues: u64,
    /// Failed epochs that later in-flight epochs may name as `via` (off the steady-state path:
    /// it only grows when an epoch fails).
    failed: Vec<FailedEpoch>,
}

impl Default for QueueFrontier {
    fn default() -> Self {
        Self {
            known: [0; MAX_QUEUES],
            published: Frontier::EMPTY,
            pending: [PendingEntry::default(); PENDING_EPOCHS],
            pending_head: 0,
            pending_len: 0,
            pending_high: [0; MAX_QUEUES],
            pending_queues: 0,
            failed: Vec::new(),
        }
    }
}

impl QueueFrontier {
    /// The highest epoch of `queue` this queue follows unconditionally.
    #[inline]
    pub fn known(&self, queue: u16) -> u64 {
        self.known.get(usize::from(queue)).copied().unwrap_or(0)
    }

    /// What the producer record of a signal published now carries: the unconditional entries.
    #[inline]
    pub fn published(&self) -> &Frontier {
        &self.published
    }

    fn pending_entry(&self, offset: usize) -> &PendingEntry {
        &self.pending[(self.pending_head + offset) % PENDING_EPOCHS]
    }

    /// Whether this queue's published work already follows `producer`, and on what condition.
    #[inline]
    pub fn cover(&self, producer: Producer) -> Cover {
        let queue = usize::from(producer.queue);
        if self.known.get(queue).is_some_and(|known| *known >= producer.epoch) {
            return Cover::Known;
        }
        if self.pending_high.get(queue).is_none_or(|high| *high < producer.epoch) {
            return Cover::No;
        }
        (0..self.pending_len)
            .map(|offset| self.pending_entry(offset))
            .find(|entry| entry.frontier.covers(producer))
            .map_or(Cover::No, |entry| Cover::Pending { via: entry.epoch })
    }

    /// Merges into `into` the entries of a producer's record `reached` that tell this queue
    /// (index `own`) something it does not know unconditionally yet.
    #[inline]
    pub fn collect(&self, own: u16, reached: &Frontier, into: &mut Frontier) {
        for (queue, epoch) in reached.iter() {
            if queue != own && usize::from(queue) < MAX_QUEUES && self.known(queue) < epoch {
                into.insert(queue, epoch);
            }
        }
    }

    #[inline]
    fn raise_known(&mut self, queue: u16, epoch: u64) {
        let Some(seen) = self.known.get_mut(usize::from(queue)) else { return };
        if *seen < epoch {
            *seen = epoch;
            self.published.insert(queue, epoch);
        }
    }

    /// After this queue (index `own`) admitted `epoch`, whose barriers publication always writes
    /// (a publication fault replaces only the payload): the producers its
    /// barriers waited on are reached unconditionally; `incoming` (the merged frontiers of those
    /// producers' records, see [`Self::collect`]) is reached if `epoch` succeeds, so it stays
    /// pending until then.
    ///
    /// Why the merge is sound: every packet carries the barrier bit, so `epoch` retires only
    /// after its barriers passed, i.e. after each producer's queue reached the producer's epoch;
    /// that queue reached it only after its own earlier barriers passed, which is what the
    /// producer's record lists. So whatever follows `epoch` on this queue follows all of it.
    #[inline]
    pub fn admitted_epoch(
        &mut self,
        own: u16,
        epoch: u64,
        barriers: impl Iterator<Item = Producer>,
        incoming: &Frontier,
    ) {
        for producer in barriers {
            self.raise_known(producer.queue, producer.epoch);
        }
        if !incoming.is_empty() {
            self.add_pending(own, epoch, incoming);
        }
    }

    fn add_pending(&mut self, own: u16, epoch: u64, incoming: &Frontier) {
        let mut fresh = Frontier::EMPTY;
        for (queue, reached) in incoming.iter() {
            if queue != own && usize::from(queue) < MAX_QUEUES && self.known(queue) < reached {
                fresh.insert(queue, reached);
                let high = &mut self.pending_high[usize::from(queue)];
                *high = (*high).max(reached);
                self.pending_queues |= 1u64 << queue;
            }
        }
        if fresh.is_empty() {
            return;
        }
        if self.pending_len == PENDING_EPOCHS {
            // Overflow: the oldest contribution is dropped, losing only its elision. Waits it
            // already covered still name its epoch as `via`, and `settle` still fails them if
            // that epoch fails.
            self.pending_head = (self.pending_head + 1) % PENDING_EPOCHS;
            self.pending_len -= 1;
        }
        let tail = (self.pending_head + self.pending_len) % PENDING_EPOCHS;
        self.pending[tail] = PendingEntry { epoch, frontier: fresh };
        self.pending_len += 1;
    }

    /// The failure a wait kept with a `via` epoch inherits, if that epoch failed.
    #[inline]
    pub fn via_failure(&self, waits: &[DeviceWait]) -> Option<u32> {
        if self.failed.is_empty() {
            return None;
        }
        waits
            .iter()
            .filter(|wait| wait.via != 0)
            .find_map(|wait| self.failed.iter().find(|failed| failed.epoch == wait.via).map(|failed| failed.failure))
    }

    /// Reclaim reached `epoch` with `failure` (`None`: it succeeded). `submitted` is the queue's
    /// latest epoch now: every epoch that can name `epoch` as `via` is at most that.
    ///
    /// Success makes the epoch's pending entries unconditional; failure drops them and remembers
    /// the failure for the epochs after it that relied on them.
    #[inline]
    pub fn settle(&mut self, epoch: u64, failure: Option<u32>, submitted: u64) {
        if self.pending_len == 0 && failure.is_none() && self.failed.is_empty() {
            return;
        }
        self.settle_slow(epoch, failure, submitted);
    }

    fn settle_slow(&mut self, epoch: u64, failure: Option<u32>, submitted: u64) {
        if !self.failed.is_empty() {
            // Every epoch up to `epoch` has checked its waits now.
            self.failed.retain(|failed| failed.horizon > epoch);
        }
        if let Some(failure) = failure
            && submitted > epoch
        {
            self.failed.push(FailedEpoch { epoch, horizon: submitted, failure });
        }
        while self.pending_len > 0 && self.pending[self.pending_head].epoch <= epoch {
            let entry = self.pending[self.pending_head];
            self.pending_head = (self.pending_head + 1) % PENDING_EPOCHS;
            self.pending_len -= 1;
            if entry.epoch == epoch && failure.is_none() {
                for (queue, reached) in entry.frontier.iter() {
                    self.raise_known(queue, reached);
                }
            }
        }
        if self.pending_len == 0 && self.pending_queues != 0 {
            self.reset_pending_bounds();
        }
    }

    fn reset_pending_bounds(&mut self) {
        let mut queues = self.pending_queues;
        while queues != 0 {
            self.pending_high[queues.trailing_zeros() as usize] = 0;
            queues &= queues - 1;
        }
        self.pending_queues = 0;
    }

    /// The queue failed: everything in flight fails with it, so nothing conditional is left.
    pub fn clear_pending(&mut self) {
        self.pending_len = 0;
        self.reset_pending_bounds();
        self.failed.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn producer(queue: u16, epoch: u64) -> Producer {
        Producer { queue, epoch }
    }

    fn covered_wait(semaphore: u32, via: u64) -> DeviceWait {
        DeviceWait { producer: producer(1, 1), semaphore, value: 1, barrier: false, via, signal: 0, slot_named: false }
    }

    #[test]
    fn entries_only_rise_and_cover_every_earlier_epoch() {
        let mut frontier = Frontier::EMPTY;
        assert!(frontier.is_empty() && !frontier.covers(producer(3, 1)));
        assert!(frontier.insert(3, 7));
        assert!(frontier.insert(3, 5), "a lower epoch changes nothing");
        assert!(frontier.insert(4, 0), "epoch 0 is always reached");
        assert_eq!((frontier.get(3), frontier.get(4), frontier.len()), (7, 0, 1));
        assert!(frontier.covers(producer(3, 7)) && frontier.covers(producer(3, 1)));
        assert!(!frontier.covers(producer(3, 8)) && !frontier.covers(producer(2, 1)));
        assert!(!frontier.insert(5, MAX_FRONTIER_EPOCH + 1), "an epoch past 48 bits is not recorded");
        assert_eq!(frontier.get(5), 0);
        assert!(frontier.insert(5, MAX_FRONTIER_EPOCH));
        assert!(frontier.covers(producer(5, MAX_FRONTIER_EPOCH)));
    }

    #[test]
    fn merge_keeps_the_highest_epoch_of_each_queue() {
        let mut left = Frontier::EMPTY;
        left.insert(0, 4);
        left.insert(1, 9);
        let mut right = Frontier::EMPTY;
        right.insert(1, 6);
        right.insert(2, 3);
        right.insert(0, 8);
        assert!(left.merge(&right));
        assert_eq!(left.iter().collect::<Vec<_>>(), [(0, 8), (1, 9), (2, 3)], "in the order queues were added");
        assert_eq!(Frontier::from_words(*left.words()), left, "round-trips through the record's words");
    }

    #[test]
    fn overflow_drops_the_oldest_entry_and_never_claims_more() {
        let mut frontier = Frontier::EMPTY;
        for queue in 0..FRONTIER_ENTRIES as u16 {
            assert!(frontier.insert(queue, 10 + u64::from(queue)));
        }
        assert!(frontier.insert(1, 50), "raising a present queue always fits");
        assert!(!frontier.insert(40, 2), "a ninth queue drops one entry");
        assert_eq!(frontier.len(), FRONTIER_ENTRIES);
        assert_eq!(frontier.get(0), 0, "the first added entry is gone");
        assert!(!frontier.covers(producer(0, 10)), "a dropped entry covers nothing: a barrier, not a skipped wait");
        assert_eq!((frontier.get(1), frontier.get(40), frontier.get(7)), (50, 2, 17));
        // Merging a full frontier into another never invents coverage either.
        let mut other = Frontier::EMPTY;
        other.insert(60, 1);
        assert!(!other.merge(&frontier));
        for (queue, epoch) in other.iter() {
            assert!(epoch <= frontier.get(queue).max(u64::from(queue == 60)), "({queue}, {epoch})");
        }
        // Words after the end marker are not entries.
        let mut words = [0; FRONTIER_ENTRIES];
        words[1] = Frontier::key(3) | 3;
        assert!(Frontier::from_words(words).is_empty());
    }

    #[test]
    fn barriers_are_known_at_once_and_their_producers_frontiers_pend_on_the_epoch() {
        let mut queue = QueueFrontier::default();
        let mut incoming = Frontier::EMPTY;
        incoming.insert(0, 3); // A's epoch 3, through B's record
        incoming.insert(2, 5); // this queue itself: ignored
        incoming.insert(1, 1); // older than B's own barrier below: nothing new
        queue.admitted_epoch(2, 10, [producer(1, 7)].into_iter(), &incoming);
        assert_eq!(queue.cover(producer(1, 7)), Cover::Known);
        assert_eq!(queue.cover(producer(1, 8)), Cover::No);
        assert_eq!(queue.cover(producer(0, 3)), Cover::Pending { via: 10 });
        assert_eq!(queue.cover(producer(0, 4)), Cover::No);
        assert_eq!(queue.published().get(0), 0, "a pending entry is not published");
        assert_eq!(queue.published().get(1), 7);
        assert_eq!(queue.published().get(2), 0, "a queue never lists itself");

        // Epoch 10 succeeds: A:3 becomes unconditional and goes into the records.
        queue.settle(10, None, 12);
        assert_eq!(queue.cover(producer(0, 3)), Cover::Known);
        assert_eq!(queue.published().get(0), 3);
        assert_eq!(queue.via_failure(&[covered_wait(1, 10)]), None);
    }

    #[test]
    fn a_failed_epoch_drops_what_it_brought_and_fails_the_epochs_that_relied_on_it() {
        let mut queue = QueueFrontier::default();
        let mut incoming = Frontier::EMPTY;
        incoming.insert(0, 3);
        queue.admitted_epoch(2, 4, [producer(1, 7)].into_iter(), &incoming);
        assert_eq!(queue.cover(producer(0, 2)), Cover::Pending { via: 4 });
        // Epochs 5 and 6 were admitted with covered waits through epoch 4; then 4 fails.
        queue.settle(4, Some(9), 6);
        assert_eq!(queue.cover(producer(0, 2)), Cover::No, "what epoch 4 brought is gone");
        assert_eq!(
            queue.cover(producer(1, 7)),
            Cover::Known,
            "its own barriers' producers stay: their semaphores fail"
        );
        assert_eq!(queue.published().get(0), 0);
        let relying = [covered_wait(1, 0), covered_wait(2, 4)];
        assert_eq!(queue.via_failure(&relying), Some(9));
        assert_eq!(queue.via_failure(&[covered_wait(2, 3)]), None);
        queue.settle(5, Some(9), 6);
        queue.settle(6, Some(9), 6);
        assert!(queue.failed.is_empty(), "forgotten once every epoch that could name it drained");
    }

    #[test]
    fn pending_overflow_drops_the_oldest_contribution_only() {
        let mut queue = QueueFrontier::default();
        for epoch in 1..=PENDING_EPOCHS as u64 + 1 {
            let mut incoming = Frontier::EMPTY;
            incoming.insert(epoch as u16, epoch);
            queue.admitted_epoch(63, epoch, core::iter::empty(), &incoming);
        }
        assert_eq!(queue.cover(producer(1, 1)), Cover::No, "the oldest was dropped");
        assert_eq!(queue.cover(producer(2, 2)), Cover::Pending { via: 2 });
        let last = PENDING_EPOCHS as u64 + 1;
        assert_eq!(queue.cover(producer(last as u16, last)), Cover::Pending { via: last });
        // Settling a dropped epoch confirms nothing; the others still settle in order.
        queue.settle(1, None, last);
        assert_eq!(queue.cover(producer(1, 1)), Cover::No);
        queue.settle(2, None, last);
        assert_eq!(queue.cover(producer(2, 2)), Cover::Known);
        queue.clear_pending();
        assert_eq!(queue.cover(producer(3, 3)), Cover::No);
    }
}
