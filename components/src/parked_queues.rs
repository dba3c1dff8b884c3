//! Which queues have parked submissions, and the protocol between a queue that parks and whoever
//! advances a semaphore its parked work may wait for.
//!
//! A parking queue sets its bit (SeqCst) and pokes its completion thread. That thread, seeing the
//! bit, fences and re-reads the semaphores its parked rows wait on. A waker, after advancing
//! semaphores, fences, reads the bits and pokes each queue whose bit is set. The SeqCst bit write
//! and the two SeqCst fences order each side's write before its read: either the completion
//! thread's re-read sees the advance, or the waker sees the bit. Without them both may read the
//! old value (the store-buffer shape the loom models found in host parking and soft signals), and
//! the parked work would wait for some later poke.
//!
//! [`ParkedQueues::any_hint`] is the unfenced check for wake-ups that only bring work forward
//! (a publication that gives a parked wait its producer): missing one delays the work until its
//! semaphore advances, whose wake is fenced.
//!
//! This file depends on nothing but std (or loom under `--cfg loom`), so `loom-models/` includes
//! it by path and model-checks this very code.

#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering, fence};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, Ordering, fence};

/// Bit `i` set: queue `i` has parked submissions to admit when a semaphore advances.
#[derive(Default)]
pub struct ParkedQueues {
    mask: AtomicU64,
}

impl ParkedQueues {
    /// Queue `index` parked work; the caller then pokes its completion thread.
    #[inline]
    pub fn park(&self, index: u16) {
        self.mask.fetch_or(1 << index, Ordering::SeqCst);
    }

    /// Queue `index` has nothing parked any more.
    #[inline]
    pub fn unpark(&self, index: u16) {
        self.mask.fetch_and(!(1 << index), Ordering::AcqRel);
    }

    /// The completion thread's check: whether queue `index` has parked work. When it has, the
    /// fence orders this read before the semaphore reads of the readmission that follows (pairs
    /// with the fence in [`Self::to_wake`]).
    #[inline]
    pub fn must_readmit(&self, index: u16) -> bool {
        let parked = self.mask.load(Ordering::SeqCst) & (1 << index) != 0;
        if parked {
            fence(Ordering::SeqCst);
        }
        parked
    }

    /// After advancing semaphores: the queues with parked work, other than `except`, to poke.
    #[inline]
    pub fn to_wake(&self, except: Option<u16>) -> u64 {
        // Pairs with the fence in `must_readmit`: the advance before it is seen by a readmission
        // after that one, or this read sees the bit.
        fence(Ordering::SeqCst);
        let mask = self.mask.load(Ordering::SeqCst);
        except.map_or(mask, |except| mask & !(1 << except))
    }

    /// Whether any queue may have parked work, unfenced: only for wake-ups that bring work
    /// forward, never for one that work waits on.
    #[inline]
    pub fn any_hint(&self) -> bool {
        self.mask.load(Ordering::Relaxed) != 0
    }
}
