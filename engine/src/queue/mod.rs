//! Queues: the public API, and the queue's own files, one per concern (the stages themselves
//! are systems in `aqueduct-systems`):
//!
//! - `mod.rs` (here): [`Queue`];
//! - `builder.rs`: the operations' entry points, as submission builders (`Submission`), for a
//!   queue and a batch alike;
//! - `alloca.rs`: queue-ordered allocation from pools, and the queue's memory timeline;
//! - `host_calls.rs`: host functions run in queue order, and how they map to AQL;
//! - `files.rs`: file reads and writes in queue order, on host calls and a staging buffer;
//! - `host_sync.rs`: what a host thread waits for: the queue going idle, reads and writes;
//! - `launch.rs`: typed launches, their arguments checked against the kernel's metadata;
//! - `lifecycle.rs`: creation and destruction;
//! - `shared.rs`: what the queue's handles, its completion thread and its operations share (the
//!   lock over the queue state, counters, lifetime flags);
//! - `operations.rs`: each operation's validation and the payload it stages, for both ways in;
//! - `execute.rs`: command-buffer executions; `device_target.rs`: the second HSA queue those
//!   processed on the device run on;
//! - `batch.rs`: staging many operations and flushing them with one doorbell;
//! - `submission.rs`: the driver that runs the stages over staged rows;
//! - `deferral.rs`: parking rows that cannot go yet, and readmitting them;
//! - `failure.rs`: the queue-error callback, sticky failure, failing rows and epochs;
//! - `memory_faults.rs`: GPU memory faults, routed to the faulting agent's queues;
//! - `completion.rs`: the completion thread and draining retired epochs (helping the queue a
//!   drain is held on);
//! - `capture.rs`: the queue's part of a profile capture;
//! - `replay_records.rs`: what each operation records in a replay capture.
//!
//! Each operation validates its input completely before anything is staged, then hands the
//! submission driver a closure that fills in the payload.

mod alloca;
mod batch;
pub(crate) mod builder;
mod capture;
mod completion;
mod deferral;
mod device_target;
mod execute;
mod failure;
mod files;
mod host_calls;
mod host_sync;
pub(crate) mod launch;
mod lifecycle;
mod memory_faults;
mod operations;
mod replay_records;
mod shared;
mod submission;

use std::sync::Arc;
use std::sync::atomic::Ordering;

pub use batch::Batch;
pub use builder::{Submission, SubmitOutput, Submitted};
pub use files::STAGING_BYTES;
pub use host_calls::HostCallResult;
pub(crate) use memory_faults::route_memory_faults;
pub(crate) use operations::Submitter;
pub(crate) use shared::QueueShared;

/// A queue on one agent of the device. Operations run in submission order; each waits for its
/// wait semaphores and, when done, raises its signal semaphores. Cloning shares the queue.
///
/// **Work outlives its handles.** Dropping the last handle does not cancel anything: what was
/// submitted runs to completion (or fails, as it would have), its semaphores are raised, and the
/// queue is destroyed once that work has drained, by its completion thread. Work parked on a
/// semaphore that nothing can raise any more (its last handle dropped, and no submission
/// promised the value) fails instead, and then the queue goes. [`Queue::cancel`] fails the work
/// instead of waiting for it.
pub struct Queue(pub(crate) Arc<QueueShared>);

/// A dispatch whose kernarg bytes the caller builds (kernels outside the HAL layout). A buffer
/// the kernargs point into may be dropped once the dispatch is submitted: it is freed only after
/// every submission staged before its last handle dropped has settled.
#[derive(Clone, Copy, Debug)]
pub struct RawDispatch<'a> {
    /// The grid, in work-items.
    pub grid: [u32; 3],
    /// The workgroup size; `None` for the kernel's required size or one wavefront.
    pub workgroup: Option<[u16; 3]>,
    /// The kernarg bytes.
    pub kernargs: &'a [u8],
}

impl Queue {
    fn shared(&self) -> &QueueShared {
        &self.0
    }

    /// The queue's index on its device.
    pub fn index(&self) -> u16 {
        self.shared().index
    }

    /// The agent (within the device) the queue runs on.
    pub fn agent(&self) -> usize {
        self.shared().agent
    }

    /// The device the queue belongs to.
    pub fn device(&self) -> crate::Device {
        crate::Device(self.shared().device.clone())
    }

    /// The priority it was made with ([`crate::QueueConfig`]).
    pub fn priority(&self) -> crate::QueuePriority {
        self.shared().priority
    }

    /// The CUs the queue's work may use, as the provider holds the mask (`hsa_amd_queue_cu_get_mask`):
    /// one bit per CU of its agent, 32 per word.
    pub fn cu_mask(&self) -> crate::EngineResult<Vec<u32>> {
        let shared = self.shared();
        let compute_units = shared.device.agent(shared.agent)?.info.compute_units;
        let mut mask = vec![0; compute_units.div_ceil(32).max(1) as usize];
        // SAFETY: the HSA queue lives as long as this handle.
        unsafe { shared.device.hsa.queue_cu_mask(shared.hsa_queue, &mut mask)? };
        Ok(mask)
    }

    /// Submissions, AQL packets, parked submissions and device-side wait barriers so far.
    pub fn stats(&self) -> QueueStats {
        Self::stats_of(self.shared())
    }

    pub(crate) fn stats_of(shared: &QueueShared) -> QueueStats {
        let counters = &shared.counters;
        let (submitted, drained) = shared.epochs();
        QueueStats {
            submissions: counters.submissions.load(Ordering::Relaxed),
            packets: counters.packets.load(Ordering::Relaxed),
            deferred: counters.deferred.load(Ordering::Relaxed),
            parked_high_water: counters.parked_high_water.load(Ordering::Relaxed),
            device_waits: counters.device_waits.load(Ordering::Relaxed),
            epochs_submitted: submitted,
            epochs_drained: drained,
        }
    }

    /// The soft runtime's test controls (fault injection, stalls, queue modes) for this queue's
    /// provider, when it is the soft runtime, embedded or loaded as its drop-in.
    pub fn soft_controls(&self) -> Option<aqueduct_hsa::SoftControls> {
        self.shared().device.hsa.soft_controls()
    }

    /// The raw HSA queue, for provider-specific control (fault injection on the soft runtime).
    pub fn hsa_queue(&self) -> *mut aqueduct_hsa::sys::hsa_queue_t {
        self.shared().hsa_queue
    }
}

/// What a queue has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Operations submitted (immediate or batched).
    pub submissions: u64,
    /// AQL packets published.
    pub packets: u64,
    /// Submissions that parked before they could be admitted.
    pub deferred: u64,
    /// The most submissions parked at once.
    pub parked_high_water: u64,
    /// Device-side wait barriers published.
    pub device_waits: u64,
    /// Epochs published (one per submission, or per segment of a command-buffer execution).
    pub epochs_submitted: u64,
    /// Epochs *drained*: the device *retired* them (their last packet completed) and the host has
    /// since signalled their semaphores and *reclaimed* their ring space.
    pub epochs_drained: u64,
}
