//! A queue's own state: its kernarg ring and its epoch table.
//!
//! The resource that gathers them with the producer's AQL ring (`QueueState`) is in
//! `aqueduct-systems`, because that ring is an HSA handle (see ARCHITECTURE's decisions).
//!
//! Epochs are rows of a column table ([`EpochTable`]) sized once when the queue is created, one
//! row per epoch that can be in flight, reused round-robin: the hot path never allocates.
//! (Pending submissions, the other table of a queue, are in [`crate::submission`].)

use crate::capture::EpochCapture;
use crate::dependency::{DeviceWait, SignalOp};
use crate::submission::{Arena, Column, Span};

/// Byte ring in kernarg memory. Positions grow forever; `position % capacity` is the offset.
#[derive(Debug)]
pub struct KernargRing {
    pub base: u64,
    pub capacity: u64,
    /// Next free position; moved only by [`Self::reserve`].
    head: u64,
    /// The head's offset in the ring, kept beside it so planning needs no division (`capacity`
    /// when the head sits at the ring's end, which is offset 0 for the next span).
    head_offset: u64,
    /// Everything before this position is free again.
    pub reclaimed: u64,
}

/// A span [`KernargRing::plan`] found: positions `start .. end`, and the address of `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernargSpan {
    pub start: u64,
    pub end: u64,
    pub address: u64,
    end_offset: u64,
}

impl KernargRing {
    /// An empty ring of `capacity` bytes at `base`.
    pub fn new(base: u64, capacity: u64) -> Self {
        Self::starting_at(base, capacity, 0)
    }

    /// An empty ring whose next span goes at `position` (a test's way to start near the end).
    pub fn starting_at(base: u64, capacity: u64, position: u64) -> Self {
        Self { base, capacity, head: position, head_offset: position % capacity, reclaimed: position }
    }

    /// The next free position.
    #[inline]
    pub fn head(&self) -> u64 {
        self.head
    }

    /// Where `bytes` aligned to `alignment` would go, without reserving, skipping the ring's
    /// tail when the span would wrap. `None` when full.
    #[inline]
    pub fn plan(&self, bytes: u64, alignment: u64) -> Option<KernargSpan> {
        let offset = self.head_offset;
        if bytes == 0 {
            let address = self.base + if offset == self.capacity { 0 } else { offset };
            return Some(KernargSpan { start: self.head, end: self.head, address, end_offset: offset });
        }
        let alignment = alignment.max(16);
        // Align the ring offset, not the position: when the capacity is not a multiple of the
        // alignment an aligned position maps to a misaligned address once the ring has wrapped (a
        // 4100-byte ring gave segments at 12 mod 16).
        let aligned = offset.next_multiple_of(alignment);
        let (start, start_offset) = if aligned + bytes > self.capacity {
            (self.head + (self.capacity - offset), 0) // skip the tail to offset 0; reclaimed with this span
        } else {
            (self.head + (aligned - offset), aligned)
        };
        let end = start + bytes;
        (end - self.reclaimed <= self.capacity).then_some(KernargSpan {
            start,
            end,
            address: self.base + start_offset,
            end_offset: start_offset + bytes,
        })
    }

    /// Takes `span` (this ring's latest plan, nothing reserved since).
    #[inline]
    pub fn reserve(&mut self, span: KernargSpan) {
        self.head = span.end;
        self.head_offset = span.end_offset;
    }

    /// Everything reserved is free again.
    #[inline]
    pub fn release_all(&mut self) {
        self.reclaimed = self.head;
    }
}

/// Where admission places a device-processed execution's binding table (in the device target's
/// ring, `aqueduct_systems::binding_tables`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindingTablePlan {
    /// The newest table (at `address`) holds these bindings already.
    Reuse { position: u64, address: u64 },
    /// A new table in this span of the ring.
    Write(KernargSpan),
}

/// The epochs in flight as a column table: one [`Column`] per field, indexed by `epoch % capacity`
/// (the capacity is the most epochs in flight), and FIFO arenas for each epoch's signals and
/// device waits. Epochs are reserved and drained in order, so reclaim is one loop over the
/// range `drained + 1 ..= retired`.
#[derive(Debug)]
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
    use super::KernargRing;

    /// Reserves like admission does: plan, then move the head; checks the address against the
    /// position's offset.
    fn reserve(ring: &mut KernargRing, bytes: u64, alignment: u64) -> Option<u64> {
        let span = ring.plan(bytes, alignment)?;
        assert_eq!(span.address, ring.base + span.start % ring.capacity, "the address is the start's offset");
        ring.reserve(span);
        Some(span.address)
    }

    #[test]
    fn spans_stay_aligned_and_inside_rings_of_any_size() {
        for capacity in [4096u64, 4100, 4104, 5000, 8240] {
            let base = 0x10_0000;
            let mut ring = KernargRing::new(base, capacity);
            for round in 0..5000u64 {
                let (bytes, alignment) = (1 + round * 37 % 1500, if round % 3 == 0 { 64 } else { 16 });
                let address = reserve(&mut ring, bytes, alignment).expect("everything before was reclaimed");
                assert_eq!(address % alignment, 0, "capacity {capacity}, round {round}");
                assert!(
                    address + bytes <= base + capacity,
                    "capacity {capacity}, round {round}: span runs past the ring"
                );
                ring.release_all();
            }
        }
    }

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

    #[test]
    fn a_span_waits_for_reclaim() {
        let mut ring = KernargRing::new(0x1000, 4096);
        assert!(reserve(&mut ring, 3000, 16).is_some());
        assert_eq!(ring.plan(2000, 16), None, "the tail is too short and the start is not reclaimed");
        ring.release_all();
        assert_eq!(reserve(&mut ring, 2000, 16), Some(0x1000), "skips the tail to the ring's start");
    }
}
