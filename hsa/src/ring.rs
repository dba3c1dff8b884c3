//! Producer-side access to an AQL queue's ring: the operations the engine's hot path performs,
//! identical on ROCr and the soft runtime.
//!
//! Reserve slots with a compare-and-swap on `write_dispatch_id` (never past the read index plus
//! the ring size), write packet bodies, publish each header with one 32-bit release store, then
//! ring the doorbell once per batch with the last packet id: a store to the hardware doorbell
//! when the queue's doorbell signal is of DOORBELL kind, `hsa_signal_store_screlease` otherwise
//! (queues wrapped by tools such as rocprofiler hand out an ordinary USER signal, whose
//! `hardware_doorbell_ptr` union member is its value, not a pointer).
//!
//! **Contract.** The engine's admission is its ring's only producer and runs under the queue's lock:
//! it reserves from a cursor and commits with `commit_reserved`; `try_reserve` is the compare-and-swap
//! form for other producers. A header is published only after its body is written, and the doorbell
//! is rung after the headers; a reserved slot whose header is never published stalls the queue.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use aqueduct_abi::{AmdQueue, AmdSignal, AqlPacket, PacketHeader, SignalKind};

use crate::sys::{HsaApi, hsa_queue_t, hsa_signal_t};

/// A producer's view of one queue. Copyable; it does not own the queue.
#[derive(Clone, Copy, Debug)]
pub struct AqlRing {
    queue: *const AmdQueue,
    base: *mut AqlPacket,
    mask: u64,
    /// The hardware doorbell word, or null when the doorbell signal must be stored through HSA.
    doorbell: *const AtomicU64,
    doorbell_signal: hsa_signal_t,
    signal_store: unsafe extern "C" fn(hsa_signal_t, i64),
}

// SAFETY: all shared state behind the pointers is accessed atomically (indices, headers, doorbell)
// or is owned by the producer that reserved the slot (packet bodies).
unsafe impl Send for AqlRing {}
// SAFETY: as above.
unsafe impl Sync for AqlRing {}

impl AqlRing {
    /// # Safety
    /// `queue` must be a live queue created by the provider behind `api` (so it is an
    /// `amd_queue_t` whose doorbell signal is an `amd_signal_t`), and must outlive every use of
    /// the returned ring.
    pub unsafe fn new(queue: *mut hsa_queue_t, api: &HsaApi) -> Self {
        // SAFETY: per the contract, the queue and its doorbell signal are live.
        unsafe {
            let hsa = &*queue;
            let signal = hsa.doorbell_signal as *const AmdSignal;
            let doorbell = if (*signal).kind == SignalKind::DOORBELL {
                AtomicU64::from_ptr(AmdSignal::hardware_doorbell_ptr(signal)) as *const AtomicU64
            } else {
                core::ptr::null()
            };
            Self {
                queue: queue.cast(),
                base: hsa.base_address as *mut AqlPacket,
                mask: u64::from(hsa.size) - 1,
                doorbell,
                doorbell_signal: hsa_signal_t { handle: hsa.doorbell_signal },
                signal_store: api.hsa_signal_store_screlease,
            }
        }
    }

    /// Whether the doorbell is rung by a direct store (a DOORBELL-kind signal).
    pub fn hardware_doorbell(&self) -> bool {
        !self.doorbell.is_null()
    }

    pub fn capacity(&self) -> u64 {
        self.mask + 1
    }

    fn write_index(&self) -> &AtomicU64 {
        // SAFETY: the queue outlives the ring (constructor contract).
        unsafe { AmdQueue::write_dispatch_id_atomic(self.queue) }
    }

    pub fn read_index(&self) -> u64 {
        // SAFETY: as above.
        unsafe { AmdQueue::read_dispatch_id_atomic(self.queue) }.load(Ordering::Acquire)
    }

    pub fn write_index_now(&self) -> u64 {
        self.write_index().load(Ordering::Acquire)
    }

    /// Reserves `count` consecutive packet ids, or `None` if the ring lacks room (backpressure:
    /// a slot is never overwritten before the consumer released it).
    #[inline]
    pub fn try_reserve(&self, count: u64) -> Option<u64> {
        let write = self.write_index();
        let mut current = write.load(Ordering::Relaxed);
        loop {
            let in_flight = current.wrapping_sub(self.read_index());
            if in_flight.checked_add(count)? > self.capacity() {
                return None;
            }
            match write.compare_exchange_weak(current, current + count, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return Some(current),
                Err(actual) => current = actual,
            }
        }
    }

    /// Commits the packet ids `start..end`, which a producer that owns the ring alone handed out
    /// from its own cursor (starting at [`Self::write_index_now`], room checked against a read
    /// index): one write-index update for a whole range, instead of one compare-and-swap per
    /// reservation. The engine's queue, under its lock, is its ring's only producer (the HSA queue is never
    /// handed out), so nothing else moves the index between the load and this store.
    #[inline]
    pub fn commit_reserved(&self, start: u64, end: u64) {
        if end != start {
            debug_assert_eq!(self.write_index_now(), start, "another producer moved the write index");
            self.write_index().store(end, Ordering::Release);
        }
    }

    /// Writes a packet's body (bytes 4..64) into the slot of `id`; the header stays unpublished.
    ///
    /// # Safety
    /// `id` must have been reserved by this producer and not yet published.
    #[inline]
    pub unsafe fn write_body<T: bytemuck::Pod>(&self, id: u64, packet: &T) {
        const { assert!(size_of::<T>() == 64) };
        let slot = self.slot(id);
        // SAFETY: the slot is reserved by the caller, so no one else writes it, and the consumer
        // does not read past the header until it is published.
        unsafe {
            let source = (packet as *const T).cast::<u8>().add(4);
            core::ptr::copy_nonoverlapping(source, slot.cast::<u8>().add(4), 60);
        }
    }

    /// Publishes `header | setup << 16` with one 32-bit release store.
    ///
    /// # Safety
    /// The body of `id` must be fully written.
    #[inline]
    pub unsafe fn publish(&self, id: u64, header: PacketHeader, setup: u16) {
        // SAFETY: the slot's first four bytes are an aligned u32 inside the live ring.
        unsafe { AtomicU32::from_ptr(self.slot(id).cast()) }.store(header.with_setup(setup), Ordering::Release);
    }

    /// Body then header, for one packet.
    ///
    /// # Safety
    /// As for [`Self::write_body`].
    #[inline]
    pub unsafe fn write_and_publish<T: bytemuck::Pod>(&self, id: u64, packet: &T, header: PacketHeader, setup: u16) {
        // SAFETY: forwarded.
        unsafe {
            self.write_body(id, packet);
            self.publish(id, header, setup);
        }
    }

    /// Tells the command processor that packets up to `last_id` are published.
    #[inline]
    pub fn ring_doorbell(&self, last_id: u64) {
        if self.doorbell.is_null() {
            // SAFETY: the doorbell signal lives as long as the queue; the store is HSA's own.
            unsafe { (self.signal_store)(self.doorbell_signal, last_id as i64) };
        } else {
            // SAFETY: the doorbell word lives as long as the queue.
            unsafe { &*self.doorbell }.store(last_id, Ordering::Release);
        }
    }

    /// The address of packet `id`'s slot, for a device-side writer (an indirect dispatch's grid
    /// patch stores that packet's header).
    #[inline]
    pub fn slot_address(&self, id: u64) -> u64 {
        self.slot(id) as u64
    }

    fn slot(&self, id: u64) -> *mut AqlPacket {
        // SAFETY: masked into the ring.
        unsafe { self.base.add((id & self.mask) as usize) }
    }
}

/// The physical-limit baseline every benchmark is quoted against: 64-byte packets written into a
/// ring in host memory, each header published with one release store, nothing else in the way.
/// Shared by the criterion benches and `aqueduct bench` so both measure the same loop.
pub struct BaselineRing {
    slots: Vec<aqueduct_abi::AqlPacket>,
    next: usize,
}

impl Default for BaselineRing {
    fn default() -> Self {
        Self { slots: vec![aqueduct_abi::AqlPacket::default(); 4096], next: 0 }
    }
}

impl BaselineRing {
    /// Writes and publishes `count` barrier packets.
    #[inline(never)]
    pub fn write_release(&mut self, count: u64) {
        use aqueduct_abi::{BarrierAndPacket, FenceScope, PacketType};
        let header =
            PacketHeader::new(PacketType::BarrierAnd, true, FenceScope::System, FenceScope::System).with_setup(0);
        let mask = self.slots.len() - 1;
        for _ in 0..count {
            let slot = &mut self.slots[self.next & mask];
            let body =
                core::hint::black_box(BarrierAndPacket { completion_signal: self.next as u64, ..Default::default() });
            // SAFETY: `slot` is a live 64-byte packet; the body skips the first 4 bytes, which are
            // then published with one release store, exactly as a producer does.
            unsafe {
                core::ptr::copy_nonoverlapping(
                    (&body as *const BarrierAndPacket).cast::<u8>().add(4),
                    (slot as *mut AqlPacket).cast::<u8>().add(4),
                    60,
                );
                AtomicU32::from_ptr((slot as *mut AqlPacket).cast()).store(header, Ordering::Release);
            }
            self.next += 1;
        }
    }
}
