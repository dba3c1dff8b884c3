//! The host services: what a queue's host-side operations (queue-ordered memory, host calls,
//! file transfers, host reads and writes) keep between calls. Each part has a lock of its own,
//! which a call holds while it waits for the queue, so none of them can be the queue lock; the
//! order is always a service's lock, then the queue lock. Off the submission path: made empty
//! with the queue, each part filled at its first use, and dropped with the queue's
//! [`PassDriver`](super::pass_driver::PassDriver).
//!
//! The operations themselves are `HostServices` methods in their own files (`alloca.rs`,
//! `host_calls.rs`, `files.rs`, `host_sync.rs`); each submits through the pass driver it is given.

use std::sync::Mutex;

use super::{alloca, host_calls};
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
