//! A byte ring in kernarg memory: a queue's kernarg segments, and a device target's binding
//! tables (`aqueduct_systems::binding_tables`), both held the same way: positions that grow
//! forever, spans planned without reserving, then reserved, and freed by moving `reclaimed`.
//!
//! **Contract.** Each ring belongs to one queue's state and is used under that queue's lock: planning
//! changes nothing, `reserve` takes the span, and moving `reclaimed` (reclaim) frees it.

/// Byte ring in kernarg memory. Positions grow forever; `position % capacity` is the offset.
#[derive(Debug, bevy_ecs::prelude::Resource)]
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

    /// A ring of no bytes, at no address: it plans no span but an empty one. The queue World
    /// holds one between batch runs, in the place the queue's ring takes during a run.
    pub const EMPTY: Self = Self { base: 0, capacity: 0, head: 0, head_offset: 0, reclaimed: 0 };

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
    fn a_span_waits_for_reclaim() {
        let mut ring = KernargRing::new(0x1000, 4096);
        assert!(reserve(&mut ring, 3000, 16).is_some());
        assert_eq!(ring.plan(2000, 16), None, "the tail is too short and the start is not reclaimed");
        ring.release_all();
        assert_eq!(reserve(&mut ring, 2000, 16), Some(0x1000), "skips the tail to the ring's start");
    }
}
