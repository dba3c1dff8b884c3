//! The binding tables of a queue's device-processed executions: a byte ring of their own in the
//! device target's kernarg memory, held the way the queue's kernargs are (positions that grow
//! forever, reclaimed as epochs drain, no allocation).
//!
//! An execution whose bindings equal the newest table's reads that table: nothing is written.
//! Otherwise its table is written once into the ring, at admission, and becomes the newest.
//! Executions only ever take the newest table, so the tables the epochs in flight read grow with
//! the epoch, and the epoch at the front reads the oldest: when a device-processed epoch drains,
//! every table before its own is free ([`BindingTables::release_before`] with
//! [`BindingTables::start_of`]). A table reused forever holds nothing else back, since only
//! tables live in this ring.
//!
//! **Contract.** The ring belongs to the queue's `DeviceTarget`, inside the `QueueState`: admission
//! commits tables and reclaim releases them, both under the queue's lock. A failed queue releases all.

use aqueduct_components::kernarg_ring::{BindingTablePlan, KernargRing};

/// Tables start on a cache line, as kernarg segments do.
const TABLE_ALIGNMENT: u64 = 64;

/// The newest table, while it may be reused.
#[derive(Clone, Copy, Debug)]
struct Newest {
    position: u64,
    address: u64,
    slots: usize,
}

#[derive(Debug)]
pub struct BindingTables {
    pub ring: KernargRing,
    newest: Option<Newest>,
    /// By epoch slot (`epoch & (len - 1)`, a power of two): the position of the table that
    /// epoch reads.
    starts: Box<[u64]>,
}

impl BindingTables {
    /// A ring of `capacity` bytes at `base`, for `epoch_slots` epochs in flight (rounded up to a
    /// power of two).
    ///
    /// # Safety
    /// `base .. base + capacity` is host-readable and host-writable memory, used by nothing else,
    /// that outlives the tables.
    pub unsafe fn new(base: u64, capacity: u64, epoch_slots: usize) -> Self {
        Self {
            ring: KernargRing::new(base, capacity),
            newest: None,
            starts: vec![0; epoch_slots.max(1).next_power_of_two()].into_boxed_slice(),
        }
    }

    /// The largest table a ring of `ring_bytes` takes: half of it, so a table never waits for
    /// more than the ring can reclaim. (The engine checks an execution against it before enqueueing.)
    pub const fn largest_table_bytes(ring_bytes: u64) -> u64 {
        ring_bytes / 2
    }

    /// [`Self::largest_table_bytes`] of this ring.
    pub fn largest_bytes(&self) -> u64 {
        Self::largest_table_bytes(self.ring.capacity)
    }

    /// Where `bindings` would go, without reserving: `None` when the ring is full.
    #[inline]
    pub fn plan(&self, bindings: &[u64]) -> Option<BindingTablePlan> {
        if let Some(newest) = self.newest
            && newest.slots == bindings.len()
            && self.newest_holds(newest, bindings)
        {
            return Some(BindingTablePlan::Reuse { position: newest.position, address: newest.address });
        }
        let span = self.ring.plan(8 * bindings.len() as u64, TABLE_ALIGNMENT)?;
        Some(BindingTablePlan::Write(span))
    }

    /// Whether the newest table's slots are `bindings` (as many as it has).
    #[inline]
    fn newest_holds(&self, newest: Newest, bindings: &[u64]) -> bool {
        let table = newest.address as *const u64;
        // A loop, not a slice comparison: tables are a few slots, and `memcmp`'s call costs more
        // than the loop when they differ in the first.
        bindings.iter().enumerate().all(|(index, &binding)| {
            // SAFETY: the newest table's `slots` slots were written at its commit, inside the
            // ring's memory (`new`'s contract), and nothing releases the newest table but
            // `release_all`, which forgets it.
            unsafe { table.add(index).read() == binding }
        })
    }

    /// Reserves `plan` (from [`Self::plan`] with the same `bindings`, nothing reserved since)
    /// for `epoch`, writes the table when the plan is a new one, and returns its address.
    #[inline]
    pub fn commit(&mut self, plan: BindingTablePlan, bindings: &[u64], epoch: u64) -> u64 {
        let (position, address) = match plan {
            BindingTablePlan::Reuse { position, address } => (position, address),
            BindingTablePlan::Write(span) => {
                let (start, address) = (span.start, span.address);
                // SAFETY: the span was free in the ring when planned and nothing was
                // reserved since, so no epoch in flight reads it; the ring's memory is
                // host-writable (`new`'s contract) and `plan` sized the span to the slots.
                unsafe { core::ptr::copy_nonoverlapping(bindings.as_ptr(), address as *mut u64, bindings.len()) };
                self.ring.reserve(span);
                self.newest = Some(Newest { position: start, address, slots: bindings.len() });
                (start, address)
            }
        };
        let slot = (epoch & (self.starts.len() as u64 - 1)) as usize;
        self.starts[slot] = position;
        address
    }

    /// The position of the table `epoch` reads (while it is in flight).
    #[inline]
    pub fn start_of(&self, epoch: u64) -> u64 {
        self.starts[(epoch & (self.starts.len() as u64 - 1)) as usize]
    }

    /// Every table before `position` is read by no epoch in flight.
    #[inline]
    pub fn release_before(&mut self, position: u64) {
        self.ring.reclaimed = self.ring.reclaimed.max(position);
    }

    /// No epoch in flight reads any table (the queue failed and force-retired them all).
    pub fn release_all(&mut self) {
        self.ring.release_all();
        self.newest = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tables over `bytes` of real memory (kept alive by the returned vector).
    fn tables(bytes: usize, epoch_slots: usize) -> (Vec<u64>, BindingTables) {
        let memory = vec![0u64; bytes / 8];
        // SAFETY: the vector is the ring's memory, returned with it and used by nothing else.
        let tables = unsafe { BindingTables::new(memory.as_ptr() as u64, bytes as u64, epoch_slots) };
        (memory, tables)
    }

    /// A plan to write a new table: its positions.
    fn written(plan: BindingTablePlan) -> Option<(u64, u64)> {
        match plan {
            BindingTablePlan::Write(span) => Some((span.start, span.end)),
            BindingTablePlan::Reuse { .. } => None,
        }
    }

    #[test]
    fn a_binding_table_is_written_once_and_reused_while_its_bindings_stay() {
        let (memory, mut tables) = tables(1024, 4);
        let base = memory.as_ptr() as u64;
        let first = tables.plan(&[1, 2, 3]).expect("room");
        assert_eq!(written(first), Some((0, 24)));
        assert_eq!(tables.commit(first, &[1, 2, 3], 1), base, "written at the ring's start");
        assert_eq!(&memory[..3], &[1, 2, 3]);
        // The same bindings, epoch after epoch: the same table, nothing reserved.
        for epoch in 2..100 {
            let plan = tables.plan(&[1, 2, 3]).expect("reused");
            assert_eq!(plan, BindingTablePlan::Reuse { position: 0, address: base });
            assert_eq!(tables.commit(plan, &[1, 2, 3], epoch), base);
        }
        assert_eq!(tables.ring.head(), 24, "reuse reserves nothing");
        assert_eq!(tables.start_of(99), 0);
        // One slot differs, or one more slot: a new table, on the next line.
        assert_eq!(tables.plan(&[1, 2, 3, 0]).and_then(written), Some((64, 96)));
        let second = tables.plan(&[1, 2, 4]).expect("room");
        assert_eq!(written(second), Some((64, 88)));
        assert_eq!(tables.commit(second, &[1, 2, 4], 100), base + 64);
        assert_eq!(&memory[8..11], &[1, 2, 4]);
        assert_eq!(&memory[..3], &[1, 2, 3], "the older table is left as it was");
        assert_eq!(tables.plan(&[1, 2, 3]).and_then(written), Some((128, 152)), "only the newest is reused");
        assert_eq!(tables.plan(&[1, 2, 4]), Some(BindingTablePlan::Reuse { position: 64, address: base + 64 }));
    }

    #[test]
    fn binding_tables_wrap_once_the_epochs_that_read_them_drain() {
        let (memory, mut tables) = tables(256, 4);
        let base = memory.as_ptr() as u64;
        // Four 64-byte tables fill the ring; epochs 1..=4 read one each.
        for epoch in 1..=4u64 {
            let bindings = [epoch; 8];
            let plan = tables.plan(&bindings).expect("room");
            assert_eq!(tables.commit(plan, &bindings, epoch), base + 64 * (epoch - 1));
        }
        assert_eq!(tables.plan(&[9; 8]), None, "full until an epoch drains");
        assert!(
            matches!(tables.plan(&[4; 8]), Some(BindingTablePlan::Reuse { .. })),
            "the newest is still reused when the ring is full"
        );
        // Epoch 2 drains: the tables before its own (epoch 1's) are free.
        tables.release_before(tables.start_of(2));
        let plan = tables.plan(&[9; 8]).expect("epoch 1's table is free");
        assert_eq!(tables.commit(plan, &[9; 8], 5), base, "the ring wrapped onto it");
        assert_eq!(&memory[..8], &[9; 8]);
        assert_eq!(&memory[8..16], &[2; 8], "epoch 2's table, still read, is untouched");
        assert_eq!(tables.plan(&[10; 8]), None, "epoch 2's table is still read");
        tables.release_all();
        assert!(
            tables.plan(&[9; 8]).and_then(written).is_some(),
            "a failed queue's tables are all free, and none is reused after"
        );
    }
}
