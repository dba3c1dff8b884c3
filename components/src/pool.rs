//! A memory pool's allocations as plain data: the components of the entities in a pool's World
//! (one per allocation, recycled, never despawned on the hot path) and [`FreeRanges`], the
//! retired free memory of the pool's slabs, best fit and coalesced.
//!
//! Memory moves through three places: *live* (an alloca handed it out), *pending* (a dealloca
//! returned it in queue order; free at a point of that queue's memory timeline) and *free*
//! (that point passed, or was covered: anyone may take it). Only free memory is coalesced.
//!
//! **Contract.** A pool's World and its `FreeRanges` are used only under that pool's lock.

use std::collections::{BTreeMap, BTreeSet};

use bevy_ecs::prelude::*;

use crate::device_entities::ReleaseAfter;

/// Where an allocation lies: a slab of its pool and a byte range in it.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolRange {
    pub slab: u32,
    pub offset: u64,
    pub size: u64,
}

/// The queue whose alloca made the allocation.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OwningQueue(pub u16);

/// When an allocation's memory may be handed out again.
#[derive(Component, Clone, Debug, Default, PartialEq, Eq)]
pub enum FreeAt {
    /// The entity holds nothing (recycled).
    #[default]
    Vacant,
    /// Handed out; no dealloca yet.
    Live,
    /// Returned by a dealloca on `queue`, whose retirement raises the queue's memory timeline
    /// (the semaphore in `timeline`) to `value`. Later work on `queue` may reuse it at once;
    /// other queues once the value is reached, or behind a wait on it.
    Point { queue: u16, timeline: u32, value: u64 },
    /// Its handle dropped without a dealloca, or its dealloca failed: nothing says when the work
    /// that used it ends, so it waits, like a released buffer, until every queue has settled the
    /// rows enqueued then.
    AfterRows(ReleaseAfter),
}

/// The free memory of a pool's slabs: per slab, free ranges by offset (to coalesce with
/// neighbours), and all of them by size (best fit). Offsets and sizes are in the pool's
/// granules' units of bytes; the pool rounds before it asks.
#[derive(Debug, Default)]
pub struct FreeRanges {
    by_slab: Vec<BTreeMap<u64, u64>>,
    by_size: BTreeSet<(u64, u32, u64)>,
    bytes: u64,
}

impl FreeRanges {
    /// Makes `slab` known, wholly free, `size` bytes.
    pub fn add_slab(&mut self, slab: u32, size: u64) {
        let index = slab as usize;
        if self.by_slab.len() <= index {
            self.by_slab.resize_with(index + 1, BTreeMap::new);
        }
        debug_assert!(self.by_slab[index].is_empty(), "slab {slab} added twice");
        self.insert(slab, 0, size);
    }

    /// Takes the smallest free range of at least `size` bytes; returns `(slab, offset)`.
    pub fn take(&mut self, size: u64) -> Option<(u32, u64)> {
        let &(found, slab, offset) = self.by_size.range((size, 0, 0)..).next()?;
        self.remove(slab, offset, found);
        if found > size {
            self.insert(slab, offset + size, found - size);
        }
        Some((slab, offset))
    }

    /// Gives `[offset, offset + size)` of `slab` back, merged with free neighbours.
    pub fn give(&mut self, slab: u32, mut offset: u64, mut size: u64) {
        let ranges = &self.by_slab[slab as usize];
        let before = ranges.range(..offset).next_back().map(|(&at, &length)| (at, length));
        let after = ranges.get(&(offset + size)).copied();
        if let Some((at, length)) = before.filter(|&(at, length)| at + length == offset) {
            self.remove(slab, at, length);
            offset = at;
            size += length;
        }
        if let Some(length) = after {
            self.remove(slab, offset + size, length);
            size += length;
        }
        self.insert(slab, offset, size);
    }

    /// Whether `slab` is wholly free (`size` bytes from offset 0).
    pub fn slab_is_free(&self, slab: u32, size: u64) -> bool {
        self.by_slab.get(slab as usize).is_some_and(|ranges| ranges.len() == 1 && ranges.get(&0) == Some(&size))
    }

    /// Forgets a wholly free slab (trimmed).
    pub fn remove_slab(&mut self, slab: u32, size: u64) {
        debug_assert!(self.slab_is_free(slab, size));
        self.remove(slab, 0, size);
    }

    /// Free bytes in all slabs.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The largest free range.
    pub fn largest(&self) -> u64 {
        self.by_size.last().map_or(0, |&(size, _, _)| size)
    }

    /// Free ranges, for statistics and tests: `(slab, offset, size)` in slab and offset order.
    pub fn ranges(&self) -> impl Iterator<Item = (u32, u64, u64)> + '_ {
        self.by_slab
            .iter()
            .enumerate()
            .flat_map(|(slab, ranges)| ranges.iter().map(move |(&offset, &size)| (slab as u32, offset, size)))
    }

    fn insert(&mut self, slab: u32, offset: u64, size: u64) {
        self.by_slab[slab as usize].insert(offset, size);
        self.by_size.insert((size, slab, offset));
        self.bytes += size;
    }

    fn remove(&mut self, slab: u32, offset: u64, size: u64) {
        self.by_slab[slab as usize].remove(&offset);
        self.by_size.remove(&(size, slab, offset));
        self.bytes -= size;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_fit_splits_and_give_coalesces_both_sides() {
        let mut free = FreeRanges::default();
        free.add_slab(0, 1024);
        free.add_slab(1, 256);
        // Best fit: the 256-byte slab, not the 1024-byte one.
        assert_eq!(free.take(256), Some((1, 0)));
        assert_eq!(free.take(100), Some((0, 0)));
        assert_eq!(free.take(100), Some((0, 100)));
        assert_eq!(free.take(100), Some((0, 200)));
        assert_eq!(free.bytes(), 1024 - 300);
        free.give(0, 0, 100);
        free.give(0, 200, 100);
        assert_eq!(
            free.ranges().filter(|r| r.0 == 0).count(),
            2,
            "not adjacent yet: {:?}",
            free.ranges().collect::<Vec<_>>()
        );
        free.give(0, 100, 100);
        assert!(free.slab_is_free(0, 1024), "{:?}", free.ranges().collect::<Vec<_>>());
        assert_eq!(free.largest(), 1024);
        assert_eq!(free.take(2048), None);
        free.remove_slab(0, 1024);
        assert_eq!(free.bytes(), 0);
        free.give(1, 0, 256);
        assert!(free.slab_is_free(1, 256));
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Whatever the order of takes and gives: taken ranges never overlap each other or free
        /// memory, the byte count adds up, and no two free ranges of a slab touch (coalesced).
        #[test]
        fn takes_and_gives_keep_ranges_disjoint_and_coalesced(steps in proptest::collection::vec((any::<bool>(), 1u64..64, any::<prop::sample::Index>()), 1..200)) {
            let slabs = [(0u32, 256u64), (1, 64)];
            let mut free = FreeRanges::default();
            for (slab, size) in slabs {
                free.add_slab(slab, size);
            }
            let mut taken: Vec<(u32, u64, u64)> = Vec::new();
            for (take, size, pick) in steps {
                if take || taken.is_empty() {
                    if let Some((slab, offset)) = free.take(size) {
                        taken.push((slab, offset, size));
                    } else {
                        prop_assert!(free.largest() < size);
                    }
                } else {
                    let (slab, offset, size) = taken.swap_remove(pick.index(taken.len()));
                    free.give(slab, offset, size);
                }
                let mut all: Vec<_> = taken.iter().copied().chain(free.ranges()).collect();
                all.sort();
                for pair in all.windows(2) {
                    prop_assert!(pair[0].0 != pair[1].0 || pair[0].1 + pair[0].2 <= pair[1].1, "overlap {:?}", pair);
                }
                let free_ranges: Vec<_> = free.ranges().collect();
                for pair in free_ranges.windows(2) {
                    prop_assert!(pair[0].0 != pair[1].0 || pair[0].1 + pair[0].2 < pair[1].1, "not coalesced {:?}", pair);
                }
                let live: u64 = taken.iter().map(|range| range.2).sum();
                prop_assert_eq!(live + free.bytes(), 256 + 64);
            }
        }
    }
}
