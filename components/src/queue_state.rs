//! A queue's own state: its epoch table (its kernarg ring is a [`crate::kernarg_ring::KernargRing`]).
//!
//! The resource that gathers them with the producer's AQL ring (`QueueState`) is in
//! `aqueduct-systems`, because that ring is an HSA handle (docs/DECISIONS.md says why).
//!
//! Epochs are rows of a column table ([`EpochTable`]) sized once when the queue is created, one
//! row per epoch that can be in flight, reused round-robin: the hot path never allocates.
//! (Pending submissions, the other table of a queue, are in [`crate::submission`].)
//!
//! **Contract.** The epoch table lives in the queue's `QueueState`, under the queue's lock. An epoch's
//! row (its signals, device waits, capture) is owned by the epoch from publication until it is
//! drained or failed (`release_through`).

use crate::capture::EpochCapture;
use crate::dependency::{DeviceWait, SignalOp};
use crate::submission::{Arena, Column, Span};

/// The epochs in flight as a column table: one [`Column`] per field, indexed by `epoch % capacity`
/// (the capacity is the most epochs in flight), and FIFO arenas for each epoch's signals and
/// device waits. Epochs are reserved and drained in order, so reclaim is one loop over the
/// range `drained + 1 ..= retired`.
#[derive(Debug, bevy_ecs::prelude::Resource)]
pub struct EpochTable {
    /// The most epochs in flight.
    capacity: u64,
    /// The columns' length (a power of two, at least `capacity`) less one.
    mask: u64,
    /// Epochs are numbered from 1; the last one handed out.
    pub submitted: u64,
    /// Every epoch up to here has been drained.
    pub drained: u64,
    /// The sequence of the submission row each epoch belongs to: while the epoch is in flight,
    /// that row has not settled.
    pub row: Column<u64>,
    /// Kernarg-ring position after each epoch's kernargs.
    pub kernarg_end: Column<u64>,
    /// Publication could not write what was asked (failure-log index): the epoch's packets are
    /// barriers that pass, and its signals fail when it retires.
    pub failure: Column<Option<u32>>,
    /// Semaphores to signal when the epoch retires (into `signal_arena`).
    pub signals: Column<Span>,
    /// The device-side waits the epoch's barriers performed, for failure propagation and slot
    /// release (into `wait_arena`); written by admission when it reserves the epoch.
    pub device_waits: Column<Span>,
    /// What a profile capture keeps of each epoch.
    pub capture: Column<EpochCapture>,
    /// An execution processed on the device: the address of its status record, read when the
    /// epoch retires (a failure there fails the epoch's signals); 0 for every other epoch.
    pub device_status: Column<u64>,
    pub signal_arena: Arena<SignalOp>,
    pub wait_arena: Arena<DeviceWait>,
}

impl EpochTable {
    /// A table for `capacity` epochs in flight.
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        let rows = capacity.next_power_of_two();
        Self {
            capacity: capacity as u64,
            mask: rows as u64 - 1,
            submitted: 0,
            drained: 0,
            row: Column::with_capacity(rows),
            kernarg_end: Column::with_capacity(rows),
            failure: Column::with_capacity(rows),
            signals: Column::with_capacity(rows),
            device_waits: Column::with_capacity(rows),
            capture: Column::with_capacity(rows),
            device_status: Column::with_capacity(rows),
            signal_arena: Arena::with_capacity(capacity * 2),
            wait_arena: Arena::with_capacity(capacity * 2),
        }
    }

    /// The column index of `epoch` (a mask, not a division: the columns' length is a power of
    /// two).
    #[inline]
    pub fn slot(&self, epoch: u64) -> usize {
        (epoch & self.mask) as usize
    }

    #[inline]
    pub fn has_room(&self) -> bool {
        self.submitted - self.drained < self.capacity
    }

    /// Gives back the arena spans of every epoch up to `epoch` (drained or failed).
    #[inline]
    pub fn release_through(&mut self, epoch: u64) {
        let slot = self.slot(epoch);
        self.signal_arena.release_before(self.signals[slot].end());
        self.wait_arena.release_before(self.device_waits[slot].end());
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn an_epoch_table_holds_its_capacity_in_flight_not_its_rounded_length() {
        use super::EpochTable;
        let mut epochs = EpochTable::new(3);
        let mut slots = std::collections::HashSet::new();
        while epochs.has_room() {
            epochs.submitted += 1;
            assert!(slots.insert(epochs.slot(epochs.submitted)), "epochs in flight share no slot");
        }
        assert_eq!(epochs.submitted, 3, "three in flight, though the columns hold four");
        epochs.drained = 1;
        assert!(epochs.has_room(), "a drained epoch makes room");
    }
}
