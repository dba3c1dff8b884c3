//! A queue World's own state: its kernarg and epoch rings and its epoch rows.
//!
//! The resource that gathers them with the producer's AQL ring (`QueueState`) is in
//! `aqueduct-systems`, because that ring is an HSA handle (see ARCHITECTURE's decisions).
//!
//! Epoch rows are entities spawned once when the queue is created, one per epoch that can be in
//! flight, and recycled round-robin: the hot path never spawns or despawns. (Submission rows, the
//! other kind of entity in a queue World, are in [`crate::submission`].)

use bevy_ecs::prelude::*;

use crate::submission::{DeviceWait, SignalOp};

/// Byte ring in kernarg memory. Positions grow forever; `position % capacity` is the offset.
#[derive(Debug)]
pub struct KernargRing {
    pub base: u64,
    pub capacity: u64,
    /// Next free position.
    pub head: u64,
    /// Everything before this position is free again.
    pub reclaimed: u64,
}

impl KernargRing {
    /// Where `bytes` aligned to `alignment` would go, without reserving: `(start position, end
    /// position)`, skipping the ring's tail when the span would wrap. `None` when full.
    #[inline]
    pub fn plan(&self, bytes: u64, alignment: u64) -> Option<(u64, u64)> {
        if bytes == 0 {
            return Some((self.head, self.head));
        }
        let alignment = alignment.max(16);
        // Align the ring offset, not the position: the address is `base + position % capacity`,
        // and when the capacity is not a multiple of the alignment an aligned position maps to a
        // misaligned address once the ring has wrapped (a 4100-byte ring gave segments at 12 mod 16).
        let offset = self.head % self.capacity;
        let aligned = offset.next_multiple_of(alignment);
        let start = if aligned + bytes > self.capacity {
            self.head + (self.capacity - offset) // skip the tail to offset 0; reclaimed with this span
        } else {
            self.head + (aligned - offset)
        };
        let end = start + bytes;
        (end - self.reclaimed <= self.capacity).then_some((start, end))
    }

    #[inline]
    pub fn address(&self, position: u64) -> u64 {
        self.base + position % self.capacity
    }
}

/// Epoch bookkeeping: the row entities and the counters.
#[derive(Debug)]
pub struct EpochRing {
    pub rows: Box<[Entity]>,
    /// Epochs are numbered from 1; the last one handed out.
    pub submitted: u64,
    /// Every epoch up to here has been drained.
    pub drained: u64,
}

impl EpochRing {
    #[inline]
    pub fn row(&self, epoch: u64) -> Entity {
        self.rows[(epoch % self.rows.len() as u64) as usize]
    }

    #[inline]
    pub fn has_room(&self) -> bool {
        self.submitted - self.drained < self.rows.len() as u64
    }
}

/// One epoch's bookkeeping row.
#[derive(Component, Debug, Default)]
pub struct EpochRow {
    pub epoch: u64,
    /// The sequence of the submission row the epoch belongs to: while the epoch is in flight,
    /// that row has not settled.
    pub row: u64,
    /// Kernarg-ring position after this epoch's kernargs.
    pub kernarg_end: u64,
    /// Publication could not write what was asked (failure-log index): the epoch's packets are
    /// barriers that pass, and its signals fail when it retires.
    pub failure: Option<u32>,
}

/// Semaphores to signal when the epoch retires.
#[derive(Component, Default)]
pub struct EpochSignals(pub Vec<SignalOp>);

/// The device-side waits the epoch's barriers performed (failure propagation, slot release).
#[derive(Component, Default)]
pub struct EpochDeviceWaits(pub Vec<DeviceWait>);

#[cfg(test)]
mod tests {
    use super::KernargRing;

    /// Reserves like admission does: plan, then move the head.
    fn reserve(ring: &mut KernargRing, bytes: u64, alignment: u64) -> Option<u64> {
        let (start, end) = ring.plan(bytes, alignment)?;
        ring.head = end;
        Some(ring.address(start))
    }

    #[test]
    fn spans_stay_aligned_and_inside_rings_of_any_size() {
        for capacity in [4096u64, 4100, 4104, 5000, 8240] {
            let base = 0x10_0000;
            let mut ring = KernargRing { base, capacity, head: 0, reclaimed: 0 };
            for round in 0..5000u64 {
                let (bytes, alignment) = (1 + round * 37 % 1500, if round % 3 == 0 { 64 } else { 16 });
                let address = reserve(&mut ring, bytes, alignment).expect("everything before was reclaimed");
                assert_eq!(address % alignment, 0, "capacity {capacity}, round {round}");
                assert!(
                    address + bytes <= base + capacity,
                    "capacity {capacity}, round {round}: span runs past the ring"
                );
                ring.reclaimed = ring.head;
            }
        }
    }

    #[test]
    fn a_span_waits_for_reclaim() {
        let mut ring = KernargRing { base: 0x1000, capacity: 4096, head: 0, reclaimed: 0 };
        assert!(reserve(&mut ring, 3000, 16).is_some());
        assert_eq!(ring.plan(2000, 16), None, "the tail is too short and the start is not reclaimed");
        ring.reclaimed = ring.head;
        assert_eq!(reserve(&mut ring, 2000, 16), Some(0x1000), "skips the tail to the ring's start");
    }
}
