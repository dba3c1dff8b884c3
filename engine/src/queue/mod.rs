//! Queues: the public API, and the queue's own files, one per concern (the stages themselves
//! are systems in `aqueduct-systems`).
//!
//! **The queue's four types**, each defined in its own file:
//! - [`Queue`] (here): the user's handle, one counted `Arc` of the pass driver, and the public
//!   API (its operations in `ops.rs`, `launch.rs` and `batch.rs`; host waits in `host_sync.rs`;
//!   creation and cancelling in `lifecycle.rs`);
//! - `PassDriver` (`pass_driver.rs`): owns the queue's parts and runs the stages over its state;
//!   its other concerns are `impl PassDriver` blocks in `deferral.rs` (parking and readmission),
//!   `failure.rs` (sticky failure, failing rows and epochs), `drain.rs`
//!   (draining retired epochs), `device_target.rs` (the second HSA queue device-processed
//!   executions run on) and `teardown.rs` (destroying the queue);
//! - `CompletionWorker` (`completion.rs`): the completion thread, which drains what nobody
//!   drained, fails a failed queue's work, readmits parked rows and destroys an orphaned queue;
//! - `HostServices` (`host_services.rs`): what the host-side operations keep between calls, with
//!   the operations in `alloca.rs` (queue-ordered memory), `host_calls.rs`, `files.rs` and
//!   `host_sync.rs` (the bounce buffer of reads and writes);
//! - `CaptureObserver` (`capture_observer.rs`): the queue's entry in the device's registry,
//!   through which a profile capture joins and leaves the queue; the records of passes and
//!   drains are made by `capture.rs` (`note_pass`, `harvest`), which the driver calls.
//!
//! The files depend on each other without a cycle (`tests/module_cycles.rs`): the driver uses
//! `capture.rs`, `error_sink.rs` and `host_services.rs`, none of which names it; the operations'
//! files, the completion worker and the capture observer use the driver.
//!
//! Around them: `error_sink.rs` (where the provider's queue-error callback and the memory-fault
//! handler report), `builder.rs` (the submission builders, `Submission`, for a queue and a batch
//! alike), `operations.rs` (each operation's validation and the payload it stages, over a
//! `Submitter`), `execute.rs` (command-buffer executions), `memory_faults.rs` (GPU memory faults,
//! routed to the faulting agent's queues) and `replay_records.rs` (what each operation records in
//! a replay capture).
//!
//! The queue's data is three more types: the endpoint
//! (`aqueduct_components::directory::QueueEndpoint`), which other queues read and which holds the
//! lock-free counters and lifetime flags; the state behind the queue lock
//! (`aqueduct_systems::QueueState`), which the stages run over; and the host services above.
//!
//! Each operation validates its input completely before anything is enqueued, then hands the pass
//! driver a closure that fills in the payload.

mod alloca;
mod batch;
pub(crate) mod builder;
mod capture;
mod capture_observer;
mod completion;
mod deferral;
mod device_target;
mod drain;
mod error_sink;
mod execute;
mod failure;
mod files;
mod host_calls;
mod host_services;
mod host_sync;
pub(crate) mod launch;
mod lifecycle;
mod memory_faults;
mod operations;
pub(crate) mod ops;
mod pass_driver;
mod replay_records;
mod teardown;

use std::sync::Arc;

use pass_driver::PassDriver;

pub use batch::Batch;
pub use builder::{Submission, SubmitOutput, Submitted};
pub use files::BOUNCE_BUFFER_BYTES;
pub use host_services::HostCallResult;
pub(crate) use memory_faults::route_memory_faults;
pub(crate) use operations::Submitter;

/// A queue on one agent of the device. Operations run in submission order; each waits for its
/// wait semaphores and, when done, raises its signal semaphores. Cloning shares the queue.
///
/// **Work outlives its handles.** Dropping the last handle does not cancel anything: what was
/// submitted runs to completion (or fails, as it would have), its semaphores are raised, and the
/// queue is destroyed once that work has drained, by its completion thread. Work parked on a
/// semaphore that nothing can raise any more (its last handle dropped, and no submission
/// promised the value) fails instead, and then the queue goes. [`Queue::cancel`] fails the work
/// instead of waiting for it.
///
/// The handle is one counted reference to the queue's pass driver, which holds every part of the
/// queue. The completion thread holds its own reference, and the device reaches the queue through
/// its registry; neither is counted as a handle.
pub struct Queue {
    pub(crate) driver: Arc<PassDriver>,
}

/// A dispatch whose kernarg bytes the caller builds (kernels outside the HAL layout). A buffer
/// the kernargs point into may be dropped once the dispatch is submitted: it is freed only after
/// every submission enqueued before its last handle dropped has settled.
#[derive(Clone, Copy, Debug)]
pub struct RawDispatch<'a> {
    /// The grid, in work-items.
    pub grid: [u32; 3],
    /// The workgroup size; `None` for the kernel's required size or one wavefront.
    pub workgroup: Option<[u16; 3]>,
    /// The kernarg bytes.
    pub kernargs: &'a [u8],
}

/// A number unique to the calling thread while it lives (the address of a thread-local).
pub(crate) fn thread_token() -> u64 {
    thread_local!(static TOKEN: u8 = const { 0 });
    TOKEN.with(|token| token as *const u8 as u64)
}

impl Queue {
    /// The queue's index on its device.
    pub fn index(&self) -> u16 {
        self.driver.index
    }

    /// The agent (within the device) the queue runs on.
    pub fn agent(&self) -> usize {
        self.driver.agent
    }

    /// The device the queue belongs to.
    pub fn device(&self) -> crate::Device {
        crate::Device(self.driver.device.clone())
    }

    /// The priority it was made with ([`crate::QueueConfig`]).
    pub fn priority(&self) -> crate::QueuePriority {
        self.driver.priority
    }

    /// The CUs the queue's work may use, as the provider holds the mask (`hsa_amd_queue_cu_get_mask`):
    /// one bit per CU of its agent, 32 per word.
    pub fn cu_mask(&self) -> crate::EngineResult<Vec<u32>> {
        let compute_units = self.driver.device.agent(self.driver.agent)?.info.compute_units;
        let mut mask = vec![0; compute_units.div_ceil(32).max(1) as usize];
        // SAFETY: the HSA queue lives as long as this handle.
        unsafe { self.driver.device.hsa.queue_cu_mask(self.driver.hsa_queue, &mut mask)? };
        Ok(mask)
    }

    /// Submissions, AQL packets, parked submissions and device-side wait barriers so far.
    pub fn stats(&self) -> QueueStats {
        self.driver.stats()
    }

    /// Test hook: the soft runtime's controls (fault injection, stalls, queue modes) for this
    /// queue's provider, when it is the soft runtime, embedded or loaded as its drop-in.
    #[cfg(feature = "test-hooks")]
    pub fn soft_controls(&self) -> Option<aqueduct_soft_hsa::SoftControls> {
        aqueduct_soft_hsa::SoftControls::of(&self.driver.device.hsa)
    }

    /// Test hook: the HSA queue, which the soft runtime's controls name. Users reach it through
    /// [`raw::hsa_queue`](crate::raw::hsa_queue).
    #[cfg(feature = "test-hooks")]
    pub fn hsa_queue(&self) -> *mut aqueduct_hsa::sys::hsa_queue_t {
        self.driver.hsa_queue
    }

    /// The HSA queue and the provider under it ([`crate::raw`]).
    pub(crate) fn raw_parts(&self) -> (*mut aqueduct_hsa::sys::hsa_queue_t, &aqueduct_hsa::Hsa) {
        (self.driver.hsa_queue, &self.driver.device.hsa)
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
    /// Batch flushes that had work to publish (an explicit flush, or a batch's drop); under the
    /// `tracy` feature each is a frame of Tracy's `aqueduct flush` frame set.
    pub flushes: u64,
    /// Epochs published (one per submission, or per leg of a command-buffer execution).
    pub epochs_submitted: u64,
    /// Epochs *drained*: the device *retired* them (their last packet completed) and the host has
    /// since signalled their semaphores and *reclaimed* their ring space.
    pub epochs_drained: u64,
}
