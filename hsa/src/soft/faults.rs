//! Fault injection and per-queue test controls for the soft runtime.
//!
//! These are Rust functions beside the HSA table, not HSA entry points: reliability tests use them
//! to make a queue fail, stall or slow down at a chosen packet id.

use std::sync::atomic::Ordering;

use super::config::ExecutionMode;
use super::queue::{Fault, SoftQueue};
use super::runtime;
use crate::sys::{hsa_queue_t, hsa_status_t};

/// Why a control call was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlError {
    NotInitialized,
    UnknownQueue,
}

fn with_queue<T>(queue: *const hsa_queue_t, f: impl FnOnce(&SoftQueue) -> T) -> Result<T, ControlError> {
    let runtime = runtime::get().ok_or(ControlError::NotInitialized)?;
    let queue = runtime.queue(queue as usize).ok_or(ControlError::UnknownQueue)?;
    Ok(f(&queue))
}

/// Arms `fault` for the packet with id `packet_id` on `queue`.
pub fn inject_fault(queue: *const hsa_queue_t, packet_id: u64, fault: Fault) -> Result<(), ControlError> {
    with_queue(queue, |queue| {
        queue.faults.lock().unwrap_or_else(|poison| poison.into_inner()).insert(packet_id, fault);
        queue.has_faults.store(true, Ordering::Release);
    })
}

/// Lets every currently stalled packet on `queue` proceed.
pub fn release_stall(queue: *const hsa_queue_t) -> Result<(), ControlError> {
    with_queue(queue, |queue| {
        queue.stall_releases.fetch_add(1, Ordering::AcqRel);
    })
}

/// Switches `queue` between strict, relaxed and retire-only execution.
pub fn set_queue_mode(queue: *const hsa_queue_t, mode: ExecutionMode) -> Result<(), ControlError> {
    with_queue(queue, |queue| queue.set_mode(mode))
}

/// The status and human-readable detail of the queue's error, e.g. which kernel had no CPU
/// implementation. `None` while the queue is healthy.
pub fn queue_error_detail(queue: *const hsa_queue_t) -> Result<Option<(hsa_status_t, String)>, ControlError> {
    with_queue(queue, |queue| {
        queue
            .error
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .as_ref()
            .map(|error| (error.status, error.detail.clone()))
    })
}

/// Counts for leak checks: live queues and live pool allocations.
pub fn live_objects() -> Option<(usize, usize)> {
    let runtime = runtime::get()?;
    let queues = runtime.queues.lock().unwrap_or_else(|poison| poison.into_inner()).len();
    Some((queues, runtime.allocations.live_count()))
}
