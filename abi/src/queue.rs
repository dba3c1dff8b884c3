//! `hsa_queue_t` and AMD's `amd_queue_t`, which embeds it at offset 0.
//!
//! The write and read dispatch ids are the producer and consumer indices of the packet ring. The
//! producer reserves slots by compare-and-swap on `write_dispatch_id`; the command processor
//! advances `read_dispatch_id` as packets retire. Both are accessed atomically through
//! [`AmdQueue::write_dispatch_id_atomic`] and [`AmdQueue::read_dispatch_id_atomic`].

use core::sync::atomic::{AtomicU32, AtomicU64};

use bytemuck::{Pod, Zeroable};

use crate::{assert_layout, assert_offset};

/// `hsa_queue_type_t`.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueType {
    Multi = 0,
    Single = 1,
    Cooperative = 2,
}

/// `hsa_queue_feature_t` bits.
pub mod queue_feature {
    pub const KERNEL_DISPATCH: u32 = 1;
    pub const AGENT_DISPATCH: u32 = 2;
}

/// `hsa_queue_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable, Default)]
pub struct HsaQueue {
    pub type_: u32,
    pub features: u32,
    pub base_address: u64,
    pub doorbell_signal: u64,
    pub size: u32,
    pub reserved1: u32,
    pub id: u64,
}
assert_layout!(HsaQueue, size = 40, align = 8);
assert_offset!(HsaQueue, features, 4);
assert_offset!(HsaQueue, base_address, 8);
assert_offset!(HsaQueue, doorbell_signal, 16);
assert_offset!(HsaQueue, size, 24);
assert_offset!(HsaQueue, id, 32);

/// `amd_queue_properties32_t` bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueProperties;
impl QueueProperties {
    pub const ENABLE_TRAP_HANDLER: u32 = 1 << 0;
    pub const IS_PTR64: u32 = 1 << 1;
    pub const ENABLE_TRAP_HANDLER_DEBUG_SGPRS: u32 = 1 << 2;
    pub const ENABLE_PROFILING: u32 = 1 << 3;
    pub const USE_SCRATCH_ONCE: u32 = 1 << 4;
}

/// `amd_queue_t` (256 bytes, 64-byte aligned).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct AmdQueue {
    pub hsa_queue: HsaQueue,
    pub reserved1: [u32; 4],
    pub write_dispatch_id: u64,
    pub group_segment_aperture_base_hi: u32,
    pub private_segment_aperture_base_hi: u32,
    pub max_cu_id: u32,
    pub max_wave_id: u32,
    pub max_legacy_doorbell_dispatch_id_plus_1: u64,
    pub legacy_doorbell_lock: u32,
    pub reserved2: [u32; 9],
    pub read_dispatch_id: u64,
    pub read_dispatch_id_field_base_byte_offset: u32,
    pub compute_tmpring_size: u32,
    pub scratch_resource_descriptor: [u32; 4],
    pub scratch_backing_memory_location: u64,
    pub scratch_backing_memory_byte_size: u64,
    pub scratch_wave64_lane_byte_size: u32,
    pub queue_properties: u32,
    pub reserved3: [u32; 2],
    pub queue_inactive_signal: u64,
    pub reserved4: [u32; 14],
}
assert_layout!(AmdQueue, size = 256, align = 64);
assert_offset!(AmdQueue, hsa_queue, 0);
assert_offset!(AmdQueue, reserved1, 40);
assert_offset!(AmdQueue, write_dispatch_id, 56);
assert_offset!(AmdQueue, group_segment_aperture_base_hi, 64);
assert_offset!(AmdQueue, private_segment_aperture_base_hi, 68);
assert_offset!(AmdQueue, max_cu_id, 72);
assert_offset!(AmdQueue, max_wave_id, 76);
assert_offset!(AmdQueue, max_legacy_doorbell_dispatch_id_plus_1, 80);
assert_offset!(AmdQueue, legacy_doorbell_lock, 88);
assert_offset!(AmdQueue, reserved2, 92);
assert_offset!(AmdQueue, read_dispatch_id, 128);
assert_offset!(AmdQueue, read_dispatch_id_field_base_byte_offset, 136);
assert_offset!(AmdQueue, compute_tmpring_size, 140);
assert_offset!(AmdQueue, scratch_resource_descriptor, 144);
assert_offset!(AmdQueue, scratch_backing_memory_location, 160);
assert_offset!(AmdQueue, scratch_backing_memory_byte_size, 168);
assert_offset!(AmdQueue, scratch_wave64_lane_byte_size, 176);
assert_offset!(AmdQueue, queue_properties, 180);
assert_offset!(AmdQueue, reserved3, 184);
assert_offset!(AmdQueue, queue_inactive_signal, 192);
assert_offset!(AmdQueue, reserved4, 200);
// As in ROCr's `amd_hsa_queue.h` (64-byte aligned): the producer's index is on line 0 and the
// packet processor's, with the queue properties it reads per packet, on line 2, so reserving
// slots and retiring packets never write the same line.
const _: () = assert!(
    core::mem::offset_of!(AmdQueue, write_dispatch_id) / 64 != core::mem::offset_of!(AmdQueue, read_dispatch_id) / 64
);

impl AmdQueue {
    /// The producer index, viewed atomically.
    ///
    /// # Safety
    /// `queue` must point to a live `amd_queue_t` that stays valid for `'a`.
    pub unsafe fn write_dispatch_id_atomic<'a>(queue: *const AmdQueue) -> &'a AtomicU64 {
        // SAFETY: the field is 8-byte aligned (asserted above) and AtomicU64 has u64's layout;
        // the caller guarantees the queue outlives 'a. Every concurrent access goes through
        // atomics, so no plain access races with it.
        unsafe { AtomicU64::from_ptr(core::ptr::addr_of!((*queue).write_dispatch_id).cast_mut()) }
    }

    /// The consumer index, viewed atomically.
    ///
    /// # Safety
    /// `queue` must point to a live `amd_queue_t` that stays valid for `'a`.
    pub unsafe fn read_dispatch_id_atomic<'a>(queue: *const AmdQueue) -> &'a AtomicU64 {
        // SAFETY: as for `write_dispatch_id_atomic`.
        unsafe { AtomicU64::from_ptr(core::ptr::addr_of!((*queue).read_dispatch_id).cast_mut()) }
    }

    /// The properties word, viewed atomically (profiling is toggled while the queue runs).
    ///
    /// # Safety
    /// `queue` must point to a live `amd_queue_t` that stays valid for `'a`.
    pub unsafe fn queue_properties_atomic<'a>(queue: *const AmdQueue) -> &'a AtomicU32 {
        // SAFETY: 4-byte aligned u32 field of a live queue, accessed only atomically.
        unsafe { AtomicU32::from_ptr(core::ptr::addr_of!((*queue).queue_properties).cast_mut()) }
    }
}
