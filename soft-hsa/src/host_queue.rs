//! `hsa_soft_queue_create`: a queue whose packet processor is the client itself (HSA "soft
//! queues", ROCr's `HostQueue`). The runtime provides the ring (from the region), the
//! `amd_queue_t` with its indices, and the client's doorbell signal; no processor reads it.
//! `hsa_queue_destroy` frees it, and every queue-index operation works on it.

// Each keeps the C function's contract of `hsa.h`, as every entry point does.
#![allow(clippy::missing_safety_doc)]

use aqueduct_abi::{PacketHeader, QueueProperties};

use super::memory::owner_bit;
use super::queue_slots::{self, HostQueue};
use aqueduct_hsa::sys::*;

/// `hsa_soft_queue_create`: `size` packets (a power of two), MULTI or SINGLE, features not 0,
/// a live doorbell signal and an allocatable region (`hsa.cpp`'s checks, each INVALID_ARGUMENT,
/// INVALID_REGION or INVALID_SIGNAL); the ring's headers start INVALID.
pub unsafe fn hsa_soft_queue_create(
    region: hsa_region_t,
    size: u32,
    queue_type: u32,
    features: u32,
    doorbell_signal: hsa_signal_t,
    queue: *mut *mut hsa_queue_t,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if queue.is_null() || !size.is_power_of_two() || queue_type > enums::QUEUE_TYPE_SINGLE || features == 0 {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let Some((pool_index, pool)) = runtime.pool(region.handle) else { return status::ERROR_INVALID_REGION };
    if super::signals::slot(doorbell_signal.handle).is_none() {
        return status::ERROR_INVALID_SIGNAL;
    }
    let Some(ring_bytes) = (size as usize).checked_mul(64) else { return status::ERROR_INVALID_ARGUMENT };
    let ring = match runtime.allocations.allocate(pool_index, pool, ring_bytes) {
        Ok(ring) => ring,
        Err(status) => return status,
    };
    let everyone = (0..runtime.agents.len()).fold(0, |mask, agent| mask | owner_bit(agent));
    // Just allocated: granting cannot fail.
    let _ = runtime.allocations.allow(ring as usize, everyone);
    for index in 0..size as usize {
        // SAFETY: each packet slot lies in the ring allocation, 64-byte aligned.
        unsafe { ring.add(index * 64).cast::<u16>().write(PacketHeader::INVALID.0) };
    }
    let Some(slot) = queue_slots::take() else {
        let _ = runtime.allocations.free(&runtime.pools, ring);
        return status::ERROR_OUT_OF_RESOURCES;
    };
    // SAFETY: the slot was just taken and is not live, so nothing else reads or writes it.
    let amd = unsafe { &mut *slot.amd_ptr() };
    amd.hsa_queue.type_ = queue_type;
    amd.hsa_queue.features = features;
    amd.hsa_queue.base_address = ring as u64;
    amd.hsa_queue.doorbell_signal = doorbell_signal.handle;
    amd.hsa_queue.size = size;
    amd.hsa_queue.id = super::queue::next_queue_id();
    amd.queue_properties = QueueProperties::IS_PTR64;
    queue_slots::publish(slot);
    let address = slot.amd_ptr() as usize;
    runtime.host_queues.lock().unwrap_or_else(|poison| poison.into_inner()).insert(address, HostQueue::new(slot, ring));
    // SAFETY: non-null output pointer; the `hsa_queue_t` is the slot's first field.
    unsafe { queue.write(address as *mut hsa_queue_t) };
    status::SUCCESS
}
