//! Fault injection and per-queue test controls for the soft runtime.
//!
//! These are Rust functions beside the HSA table, not HSA entry points: reliability tests use them
//! to make a queue fail, stall or slow down at a chosen packet id.

use std::sync::atomic::Ordering;

use super::config::ExecutionMode;
use super::queue::{Fault, SoftQueue};
use super::runtime;
use aqueduct_hsa::sys::{hsa_queue_t, hsa_status_t};

/// Why a control call was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlError {
    NotInitialized,
    UnknownQueue,
    /// A drop-in refused the call with this status (for example a configuration it cannot read).
    Refused(hsa_status_t),
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

/// A fault as the drop-in's `aqueduct_soft_inject_fault` takes it: a kind and one argument.
pub mod fault_code {
    /// A kernel fault; the argument is the status.
    pub const KERNEL_FAULT: u32 = 0;
    /// A stall until released; no argument.
    pub const STALL: u32 = 1;
    /// A slow packet; the argument is nanoseconds.
    pub const SLOW: u32 = 2;
    /// A GPU memory fault; the argument is the address.
    pub const MEMORY_FAULT: u32 = 3;
}

impl Fault {
    /// The fault's `(kind, argument)` in the drop-in's C encoding ([`fault_code`]).
    pub fn encode(self) -> (u32, u64) {
        match self {
            Fault::KernelFault { status } => (fault_code::KERNEL_FAULT, u64::from(status)),
            Fault::Stall => (fault_code::STALL, 0),
            Fault::Slow(duration) => (fault_code::SLOW, duration.as_nanos().min(u128::from(u64::MAX)) as u64),
            Fault::MemoryFault { address } => (fault_code::MEMORY_FAULT, address),
        }
    }

    /// The fault a `(kind, argument)` pair encodes, if the kind is known.
    pub fn decode(kind: u32, argument: u64) -> Option<Fault> {
        Some(match kind {
            fault_code::KERNEL_FAULT => Fault::KernelFault { status: u32::try_from(argument).ok()? },
            fault_code::STALL => Fault::Stall,
            fault_code::SLOW => Fault::Slow(std::time::Duration::from_nanos(argument)),
            fault_code::MEMORY_FAULT => Fault::MemoryFault { address: argument },
            _ => return None,
        })
    }
}

impl ExecutionMode {
    /// The mode's number in the drop-in's C encoding (0 strict, 1 relaxed, 2 retire-only,
    /// 3 concurrent), which is also its discriminant.
    pub fn code(self) -> u32 {
        self as u32
    }

    pub fn from_code(code: u32) -> Option<ExecutionMode> {
        [ExecutionMode::Strict, ExecutionMode::Relaxed, ExecutionMode::RetireOnly, ExecutionMode::Concurrent]
            .get(code as usize)
            .copied()
    }
}
