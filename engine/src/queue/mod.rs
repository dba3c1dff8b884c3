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
//! A queue is three types: [`Queue`] (here), the handle, which holds the queue's parts; the
//! endpoint (`aqueduct_components::directory::QueueEndpoint`), which other queues read and
//! which holds the lock-free counters and lifetime flags; and the state behind the queue's lock
//! (`aqueduct_systems::QueueState`), which the stages run over.
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
pub(crate) mod ops;
mod replay_records;
mod submission;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};

use aqueduct_components::directory::QueueEndpoint;
use aqueduct_components::kernarg_ring::KernargRing;
use aqueduct_hsa::ring::AqlRing;
use aqueduct_hsa::sys::hsa_queue_t;
use aqueduct_systems::{DeviceLink, QueueStages, QueueState};
use bevy_ecs::entity::Entity;

use crate::device::DeviceShared;
use failure::ErrorSink;

pub use batch::Batch;
pub use builder::{Submission, SubmitOutput, Submitted};
pub use files::STAGING_BYTES;
pub use host_calls::HostCallResult;
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
/// The handle holds the queue's parts: what never changes, by value, and each shared part in its
/// own `Arc` (the endpoint with the counters and lifetime flags, the state behind the queue lock,
/// and the host-side services, each with its own lock). The completion thread holds an uncounted
/// copy (`counted: false`), which the device reaches through its queue table.
pub struct Queue {
    pub(crate) index: u16,
    pub(crate) agent: usize,
    pub(crate) device: Arc<DeviceShared>,
    pub(crate) endpoint: Arc<QueueEndpoint>,
    /// The stages compiled for the device's wait strategy, chosen when the queue was built.
    pub(crate) stages: QueueStages,
    pub(crate) hsa_queue: *mut hsa_queue_t,
    pub(crate) state: Arc<Mutex<QueueState>>,
    pub(crate) error_sink: Arc<ErrorSink>,
    /// The host-side services, each behind a lock of its own (a call holds it while it waits
    /// for the queue, so it cannot be the queue lock).
    pub(crate) services: Arc<HostServices>,
    /// The priority it was made with (`QueueConfig`).
    pub(crate) priority: crate::config::QueuePriority,
    /// The kernarg ring's memory, freed once the HSA queue is destroyed.
    pub(crate) kernarg_memory: u64,
    /// The queue's entity in the device World.
    pub(crate) entity: Entity,
    /// Whether this is one of the user's handles, counted in the endpoint's `handles`.
    counted: bool,
}

/// A queue's host-side services: what its host-side operations (queue-ordered memory, host
/// calls, file transfers, host reads and writes) keep between calls. Off the submission path;
/// made empty with the queue, each filled at its first use.
#[derive(Default)]
pub(crate) struct HostServices {
    /// The semaphore its deallocas signal (`alloca.rs`).
    pub memory_timeline: alloca::TimelineLock,
    /// Its host calls' thread and timelines, from the first host call (`host_calls.rs`).
    pub host_calls: host_calls::HostCallsLock,
    /// The host-visible buffer file transfers stream through, from the first that needs it.
    pub file_staging: Mutex<Option<crate::memory::Buffer>>,
    /// The host-visible buffer `Queue::read` and `write` stage through (`host_sync.rs`), made at
    /// the first and kept, up to `STAGING_BYTES`; held for the whole call, which waits for its
    /// copy, so one buffer serves every call on the queue.
    pub host_staging: Mutex<Option<crate::memory::Buffer>>,
}

// SAFETY: `hsa_queue` is only passed to provider calls (thread-safe by the HSA spec) and to
// AqlRing, whose shared accesses are atomic; every other part is Send and Sync.
unsafe impl Send for Queue {}
// SAFETY: as above.
unsafe impl Sync for Queue {}

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

/// A number unique to the calling thread while it lives (the address of a thread-local).
pub(crate) fn thread_token() -> u64 {
    thread_local!(static TOKEN: u8 = const { 0 });
    TOKEN.with(|token| token as *const u8 as u64)
}

impl Queue {
    /// The queue's index on its device.
    pub fn index(&self) -> u16 {
        self.index
    }

    /// The agent (within the device) the queue runs on.
    pub fn agent(&self) -> usize {
        self.agent
    }

    /// The device the queue belongs to.
    pub fn device(&self) -> crate::Device {
        crate::Device(self.device.clone())
    }

    /// The priority it was made with ([`crate::QueueConfig`]).
    pub fn priority(&self) -> crate::QueuePriority {
        self.priority
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    /// The queue state if no one holds it.
    pub(crate) fn try_lock(&self) -> Option<MutexGuard<'_, QueueState>> {
        match self.state.try_lock() {
            Ok(guard) => Some(guard),
            Err(std::sync::TryLockError::Poisoned(poison)) => Some(poison.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// A copy of the parts that is not one of the user's handles (the completion thread's).
    pub(crate) fn uncounted(&self) -> Self {
        Queue {
            index: self.index,
            agent: self.agent,
            device: self.device.clone(),
            endpoint: self.endpoint.clone(),
            stages: self.stages,
            hsa_queue: self.hsa_queue,
            state: self.state.clone(),
            error_sink: self.error_sink.clone(),
            services: self.services.clone(),
            priority: self.priority,
            kernarg_memory: self.kernarg_memory,
            entity: self.entity,
            counted: false,
        }
    }

    /// Builds the queue's state (rings, the epoch table and the submission-row table) and picks
    /// the stages compiled for the device's wait strategy.
    pub(crate) fn build_state(
        device: &Arc<DeviceShared>,
        index: u16,
        ring: AqlRing,
        kernarg_base: u64,
        endpoint: Arc<QueueEndpoint>,
        agent: usize,
    ) -> (QueueState, QueueStages) {
        let link = DeviceLink {
            api: device.hsa.api(),
            semaphores: device.semaphores.clone(),
            directory: device.queues.directory.clone(),
            host_writes: device.agents[agent].host_writes.clone(),
        };
        let kernargs = KernargRing::new(kernarg_base, device.config.kernarg_ring_bytes);
        aqueduct_systems::build_queue_state(
            index,
            ring,
            kernargs,
            endpoint,
            link,
            device.config.epochs_in_flight as usize,
            device.strategy,
        )
    }

    /// The token of what was submitted so far (`submit()`'s return).
    #[inline]
    pub(crate) fn submitted(&self) -> Submitted {
        Submitted { device: self.device.id, queue: self.index, rows: self.endpoint.staged_rows.load(Ordering::Relaxed) }
    }

    /// Epochs submitted and drained.
    pub(crate) fn epochs(&self) -> (u64, u64) {
        (self.endpoint.submitted.load(Ordering::Acquire), self.endpoint.drained.load(Ordering::Acquire))
    }

    /// Its id in the replay capture (0: not captured).
    pub(crate) fn replay_id(&self) -> u64 {
        self.endpoint.replay_id.load(Ordering::Relaxed)
    }

    /// The CUs the queue's work may use, as the provider holds the mask (`hsa_amd_queue_cu_get_mask`):
    /// one bit per CU of its agent, 32 per word.
    pub fn cu_mask(&self) -> crate::EngineResult<Vec<u32>> {
        let compute_units = self.device.agent(self.agent)?.info.compute_units;
        let mut mask = vec![0; compute_units.div_ceil(32).max(1) as usize];
        // SAFETY: the HSA queue lives as long as this handle.
        unsafe { self.device.hsa.queue_cu_mask(self.hsa_queue, &mut mask)? };
        Ok(mask)
    }

    /// Submissions, AQL packets, parked submissions and device-side wait barriers so far.
    pub fn stats(&self) -> QueueStats {
        let counters = &self.endpoint.counters;
        let (submitted, drained) = self.epochs();
        QueueStats {
            submissions: counters.submissions.load(Ordering::Relaxed),
            packets: counters.packets.load(Ordering::Relaxed),
            deferred: counters.deferred.load(Ordering::Relaxed),
            parked_high_water: counters.parked_high_water.load(Ordering::Relaxed),
            device_waits: counters.device_waits.load(Ordering::Relaxed),
            flushes: counters.flushes.load(Ordering::Relaxed),
            epochs_submitted: submitted,
            epochs_drained: drained,
        }
    }

    /// Test hook: the soft runtime's controls (fault injection, stalls, queue modes) for this
    /// queue's provider, when it is the soft runtime, embedded or loaded as its drop-in.
    #[cfg(feature = "test-hooks")]
    pub fn soft_controls(&self) -> Option<aqueduct_soft_hsa::SoftControls> {
        aqueduct_soft_hsa::SoftControls::of(&self.device.hsa)
    }

    /// Test hook: the HSA queue, which the soft runtime's controls name. Users reach it through
    /// [`raw::hsa_queue`](crate::raw::hsa_queue).
    #[cfg(feature = "test-hooks")]
    pub fn hsa_queue(&self) -> *mut aqueduct_hsa::sys::hsa_queue_t {
        self.hsa_queue
    }

    /// The HSA queue and the provider under it ([`crate::raw`]).
    pub(crate) fn raw_parts(&self) -> (*mut aqueduct_hsa::sys::hsa_queue_t, &aqueduct_hsa::Hsa) {
        (self.hsa_queue, &self.device.hsa)
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
    /// Epochs published (one per submission, or per segment of a command-buffer execution).
    pub epochs_submitted: u64,
    /// Epochs *drained*: the device *retired* them (their last packet completed) and the host has
    /// since signalled their semaphores and *reclaimed* their ring space.
    pub epochs_drained: u64,
}
