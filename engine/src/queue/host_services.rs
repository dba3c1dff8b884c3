//! The host services: what a queue's host-side operations (queue-ordered memory, host calls,
//! file transfers, host reads and writes) keep between calls. Each part has a lock of its own,
//! which a call holds while it waits for the queue, so none of them can be the queue lock; the
//! order is always a service's lock, then the queue lock. Off the submission path: made empty
//! with the queue, each part filled at its first use, and dropped with the queue's
//! [`PassDriver`](super::pass_driver::PassDriver).
//!
//! The operations themselves are `HostServices` methods in their own files (`alloca.rs`,
//! `host_calls.rs`, `files.rs`), each submitting through the pass driver it is given; the host
//! staging buffer that `Queue::read` and `write` (`host_sync.rs`) go through is lent here.

use std::sync::Mutex;

use aqueduct_components::device_entities::MemoryKind;

use super::pass_driver::PassDriver;
use super::{alloca, host_calls};
use crate::error::EngineResult;
use crate::memory::Buffer;

/// A queue's host-side services.
#[derive(Default)]
pub(crate) struct HostServices {
    /// The semaphore its deallocas signal (`alloca.rs`).
    pub memory_timeline: alloca::TimelineLock,
    /// Its host calls' thread and timelines, from the first host call (`host_calls.rs`).
    pub host_calls: host_calls::HostCallsLock,
    /// The host-visible buffer file transfers stream through, from the first that needs it.
    pub file_staging: Mutex<Option<Buffer>>,
    /// The host-visible buffer `Queue::read` and `write` stage through (`host_sync.rs`), made at
    /// the first and kept, up to `STAGING_BYTES`; held for the whole call, which waits for its
    /// copy, so one buffer serves every call on the queue.
    pub host_staging: Mutex<Option<Buffer>>,
}

impl HostServices {
    /// Runs `transfer` with a host-visible staging buffer of at least `bytes`: the queue's own
    /// (made or grown to fit, up to `STAGING_BYTES`), held for the whole transfer, or one made
    /// for the call when the transfer is larger or another thread holds the queue's.
    pub(super) fn with_staging(
        &self,
        queue: &PassDriver,
        bytes: u64,
        transfer: impl FnOnce(&Buffer) -> EngineResult<()>,
    ) -> EngineResult<()> {
        let allocate = |size| Buffer::allocate_captured(&queue.device, MemoryKind::HostVisible, size, 0);
        if bytes > super::STAGING_BYTES {
            return transfer(&allocate(bytes)?);
        }
        // Never waits for another thread's transfer, which may wait out its own timeout.
        let mut kept = match self.host_staging.try_lock() {
            Ok(kept) => kept,
            Err(std::sync::TryLockError::Poisoned(poison)) => poison.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return transfer(&allocate(bytes)?),
        };
        let staging = match kept.take() {
            Some(staging) if staging.size() >= bytes => staging,
            // Grown by doubling, so a run of growing transfers makes few buffers.
            _ => allocate(bytes.next_power_of_two().min(super::STAGING_BYTES))?,
        };
        let result = transfer(&staging);
        // A failed transfer (a timeout) may leave its copy in flight on the buffer: it is let go,
        // and freed once that copy has settled, rather than reused under it.
        if result.is_ok() {
            *kept = Some(staging);
        }
        result
    }
}
