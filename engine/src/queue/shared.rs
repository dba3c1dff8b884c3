//! What a queue's handles, its completion thread and its operations share ([`QueueShared`]):
//! the state behind the queue lock, the counters, and the queue's lifetime flags.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use aqueduct_components::directory::QueueEndpoint;
use aqueduct_components::queue_state::KernargRing;
use aqueduct_hsa::ring::AqlRing;
use aqueduct_hsa::sys::hsa_queue_t;
use aqueduct_systems::{DeviceLink, QueueStages, QueueState};
use bevy_ecs::entity::Entity;

use super::failure::ErrorSink;
use crate::device::DeviceShared;

/// The profile capture the queue is part of, if any (`capture.rs`): held in the state's
/// capture part, opaque to the stages.
#[inline]
pub(crate) fn capture_of(state: &QueueState) -> Option<Arc<crate::profile::QueueCapture>> {
    state.capture.sink.clone().and_then(|sink| sink.downcast().ok())
}

/// Counters for reports, on their own cache line: the submitting thread writes them on every
/// submission, and nothing else of the queue's shared state should share that line.
#[derive(Default)]
#[repr(align(64))]
pub(crate) struct QueueCounters {
    pub submissions: AtomicU64,
    pub packets: AtomicU64,
    pub deferred: AtomicU64,
    /// The most submissions parked at once.
    pub parked_high_water: AtomicU64,
    pub device_waits: AtomicU64,
}

impl QueueCounters {
    /// Adds `count` to `counter`. Only the holder of the queue lock writes the counters, so a
    /// load and a store add without a locked read-modify-write on the submission path.
    #[inline]
    pub fn add(counter: &AtomicU64, count: u64) {
        counter.store(counter.load(Ordering::Relaxed) + count, Ordering::Relaxed);
    }
}

pub(crate) struct QueueShared {
    pub index: u16,
    pub agent: usize,
    pub device: Arc<DeviceShared>,
    pub endpoint: Arc<QueueEndpoint>,
    /// The stages compiled for the device's wait strategy, chosen when the queue was built.
    pub stages: QueueStages,
    pub hsa_queue: *mut hsa_queue_t,
    pub state: Mutex<QueueState>,
    pub error_sink: Arc<ErrorSink>,
    /// Set once the queue is being torn down: its completion thread ends.
    pub shutdown: AtomicBool,
    /// [`Queue::cancel`](crate::Queue::cancel) ran: the last handle's drop destroys the queue at
    /// once, failing what is on the device.
    pub cancelled: AtomicBool,
    /// The thread building a batch on this queue (its [`thread_token`]), or 0: an immediate call
    /// from that thread would wait for a lock it holds itself.
    pub batch_owner: AtomicU64,
    pub counters: QueueCounters,
    /// Whether a profile capture runs on this queue: read before the lock, to stamp a
    /// submission's entry time only then.
    pub capturing: AtomicBool,
    /// The semaphore its deallocas signal (`alloca.rs`).
    pub memory_timeline: super::alloca::TimelineLock,
    /// Its host calls' thread and timelines, from the first host call (`host_calls.rs`).
    pub host_calls: super::host_calls::HostCallsLock,
    /// The host-visible buffer file transfers stream through, from the first that needs it.
    pub file_staging: Mutex<Option<crate::memory::Buffer>>,
    /// The host-visible buffer `Queue::read` and `write` stage through (`host_sync.rs`), made
    /// at the first and kept, up to `STAGING_BYTES`; held for the whole call, which waits for
    /// its copy, so one buffer serves every call on the queue.
    pub host_staging: Mutex<Option<crate::memory::Buffer>>,
    /// The priority it was made with (`QueueConfig`).
    pub priority: crate::config::QueuePriority,
    /// Its id in the replay capture (0: not captured).
    pub replay_id: crate::replay_capture::ReplayId,
    /// The user's [`Queue`](crate::Queue) handles alive: after the last one's drop the queue is
    /// destroyed once its work has drained (`lifecycle.rs`). Not the `Arc`'s count: the
    /// completion thread, and other threads that briefly upgrade a weak reference to the queue,
    /// hold it too, and a teardown must not run on whichever of them lets go last.
    pub handles: AtomicUsize,
    /// The completion thread, joined when the queue is destroyed.
    pub thread: Mutex<Option<JoinHandle<()>>>,
    /// The kernarg ring's memory, freed once the HSA queue is destroyed.
    pub kernarg_memory: u64,
    /// The queue's entity in the device World.
    pub entity: Entity,
}

// SAFETY: `hsa_queue` is only passed to provider calls (thread-safe by the HSA spec) and to
// AqlRing, whose shared accesses are atomic.
unsafe impl Send for QueueShared {}
// SAFETY: as above.
unsafe impl Sync for QueueShared {}

/// A number unique to the calling thread while it lives (the address of a thread-local).
pub(crate) fn thread_token() -> u64 {
    thread_local!(static TOKEN: u8 = const { 0 });
    TOKEN.with(|token| token as *const u8 as u64)
}

impl QueueShared {
    pub fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    /// The queue state if no one holds it.
    pub fn try_lock(&self) -> Option<MutexGuard<'_, QueueState>> {
        match self.state.try_lock() {
            Ok(guard) => Some(guard),
            Err(std::sync::TryLockError::Poisoned(poison)) => Some(poison.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// Builds the queue's state (rings, the epoch table and the submission-row table) and picks
    /// the stages compiled for the device's wait strategy.
    pub fn build_world(
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
            directory: device.directory.clone(),
            host_writes: device.agents[agent].host_writes.clone(),
        };
        let kernargs =
            KernargRing { base: kernarg_base, capacity: device.config.kernarg_ring_bytes, head: 0, reclaimed: 0 };
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
    pub fn submitted(&self) -> super::Submitted {
        super::Submitted {
            device: self.device.id,
            queue: self.index,
            rows: self.endpoint.staged_rows.load(Ordering::Relaxed),
        }
    }

    /// Epochs submitted and drained.
    pub fn epochs(&self) -> (u64, u64) {
        (self.endpoint.submitted.load(Ordering::Acquire), self.endpoint.drained.load(Ordering::Acquire))
    }
}
