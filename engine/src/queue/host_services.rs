//! The host services: what a queue's host-side operations (queue-ordered memory, host calls,
//! file transfers, host reads and writes) keep between calls. Each part has a lock of its own,
//! which a call holds while it waits for the queue, so none of them can be the queue lock; the
//! order is always a service's lock, then the queue lock. Off the submission path: made empty
//! with the queue, each part filled at its first use, and dropped with the queue's
//! [`PassDriver`](super::pass_driver::PassDriver).
//!
//! The state of each part is defined here (the memory timeline, the host-call thread and what it
//! is sent); the operations are `HostServices` methods in their own files (`alloca.rs`,
//! `host_calls.rs`, `files.rs`), each submitting through the pass driver it is given, and the
//! host bounce buffer that `Queue::read` and `write` (`host_sync.rs`) go through is lent here.

use std::sync::Mutex;

use aqueduct_components::device_entities::MemoryKind;

use std::error::Error;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;

use aqueduct_components::semaphore_table::SemaphoreTable;

use crate::device::DeviceShared;
use crate::error::EngineResult;
use crate::memory::Buffer;
use crate::semaphore::{Semaphore, SemaphoreInner};

/// A queue's host-side services.
#[derive(Default)]
pub(crate) struct HostServices {
    /// The semaphore its deallocas signal (`alloca.rs`).
    pub memory_timeline: TimelineLock,
    /// Its host calls' thread and timelines, from the first host call (`host_calls.rs`).
    pub host_calls: HostCallsLock,
    /// The host-visible buffer file transfers stream through, from the first that needs it.
    pub file_bounce_buffer: Mutex<Option<Buffer>>,
    /// The host-visible buffer `Queue::read` and `write` stage through (`host_sync.rs`), made at
    /// the first and kept, up to `BOUNCE_BUFFER_BYTES`; held for the whole call, which waits for its
    /// copy, so one buffer serves every call on the queue.
    pub host_bounce_buffer: Mutex<Option<Buffer>>,
}

/// The queue's memory timeline: its semaphore (made at the first dealloca, replaced if it fails)
/// and the value its last dealloca signals.
#[derive(Default)]
pub(crate) struct MemoryTimeline {
    pub(super) semaphore: Option<Semaphore>,
    pub(super) value: u64,
}

/// The memory timeline's lock: held across a dealloca's bounce, so values are signalled in the
/// order they are taken. Taken before the queue's lock, and the pool's lock inside it.
pub(crate) type TimelineLock = Mutex<MemoryTimeline>;

/// What a host call's function returns: `Err` fails the call's signals with its message.
pub type HostCallResult = Result<(), Box<dyn Error + Send + Sync>>;

pub(super) type Work = Box<dyn FnOnce() -> HostCallResult + Send>;

pub(super) struct Job {
    pub(super) call: u64,
    /// The *ready* value the barrier raises, or none when the queue was idle at the call.
    pub(super) ready: Option<u64>,
    pub(super) work: Work,
    /// Held weakly: a wait must not keep its semaphore from being orphaned (`host_calls::wait_for`).
    pub(super) waits: Vec<HostWait>,
    pub(super) signals: Vec<(Semaphore, u64)>,
}

/// A host call's wait: its semaphore, weakly, and the slot it names, which stays allocated
/// while the call's gate row is unsettled.
pub(super) struct HostWait {
    pub(super) semaphore: Weak<SemaphoreInner>,
    pub(super) table: Arc<SemaphoreTable>,
    pub(super) slot: u32,
    pub(super) value: u64,
}

/// A queue's host-call state, made at its first host call.
pub(crate) struct HostCalls {
    pub(super) ready: Semaphore,
    pub(super) gate: Semaphore,
    pub(super) calls: u64,
    /// Barriers that raised *ready* so far.
    pub(super) readied: u64,
    /// The queue's bounced-row count just after the last call's gate row.
    pub(super) rows_after_gate: u64,
    pub(super) jobs: Option<Sender<Job>>,
    pub(super) closed: Arc<AtomicBool>,
    pub(super) thread: Option<JoinHandle<()>>,
}

/// The queue's host calls (`None` until the first). Taken before the queue's lock.
pub(crate) type HostCallsLock = Mutex<Option<HostCalls>>;

impl HostServices {
    /// Runs `transfer` with a host-visible bounce buffer of at least `bytes`: the queue's own
    /// (made or grown to fit, up to `BOUNCE_BUFFER_BYTES`), held for the whole transfer, or one made
    /// for the call when the transfer is larger or another thread holds the queue's.
    pub(super) fn with_bounce_buffer(
        &self,
        device: &Arc<DeviceShared>,
        bytes: u64,
        transfer: impl FnOnce(&Buffer) -> EngineResult<()>,
    ) -> EngineResult<()> {
        let allocate = |size| Buffer::allocate_captured(device, MemoryKind::HostVisible, size, 0);
        if bytes > super::BOUNCE_BUFFER_BYTES {
            return transfer(&allocate(bytes)?);
        }
        // Never waits for another thread's transfer, which may wait out its own timeout.
        let mut kept = match self.host_bounce_buffer.try_lock() {
            Ok(kept) => kept,
            Err(std::sync::TryLockError::Poisoned(poison)) => poison.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return transfer(&allocate(bytes)?),
        };
        let bounce = match kept.take() {
            Some(bounce) if bounce.size() >= bytes => bounce,
            // Grown by doubling, so a run of growing transfers makes few buffers.
            _ => allocate(bytes.next_power_of_two().min(super::BOUNCE_BUFFER_BYTES))?,
        };
        let result = transfer(&bounce);
        // A failed transfer (a timeout) may leave its copy in flight on the buffer: it is let go,
        // and freed once that copy has settled, rather than reused under it.
        if result.is_ok() {
            *kept = Some(bounce);
        }
        result
    }
}
