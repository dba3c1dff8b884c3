//! The device's one registry of its queues, by index: what the engine reaches a queue by from
//! outside its handle (a capture joining the live queues, a held drain draining a producer, the
//! engine's drop finishing orphans) and the thread that drains it.
//!
//! The directory (`aqueduct_components::directory`) holds the other view of a queue, its
//! endpoint, which the stages read lock-free; its index is the one here.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::thread::JoinHandle;

use crate::profile::DeviceQueue;

/// One queue's entry: set once, when the queue is made (an index is never reused).
#[derive(Default)]
struct QueueEntry {
    queue: OnceLock<Weak<dyn DeviceQueue>>,
    /// Joined when the queue is destroyed; looked at by the engine's drop for a queue whose last
    /// handle dropped.
    completion_thread: Mutex<Option<JoinHandle<()>>>,
}

pub(crate) struct QueueRegistry {
    entries: Box<[QueueEntry]>,
}

impl QueueRegistry {
    /// A registry for `capacity` queue indices.
    pub fn new(capacity: usize) -> Self {
        Self { entries: (0..capacity).map(|_| QueueEntry::default()).collect() }
    }

    /// Registers queue `index` and its completion thread. The index is the directory's, reserved
    /// once per device, so its entry is empty.
    pub fn register(&self, index: u16, queue: &Arc<dyn DeviceQueue>, completion_thread: JoinHandle<()>) {
        let entry = &self.entries[usize::from(index)];
        *entry.completion_thread.lock().unwrap_or_else(|poison| poison.into_inner()) = Some(completion_thread);
        let _ = entry.queue.set(Arc::downgrade(queue));
    }

    /// Queue `index`, if it is alive.
    pub fn get(&self, index: u16) -> Option<Arc<dyn DeviceQueue>> {
        self.entries.get(usize::from(index))?.queue.get()?.upgrade()
    }

    /// The queues that are alive.
    pub fn live(&self) -> Vec<Arc<dyn DeviceQueue>> {
        self.entries.iter().filter_map(|entry| entry.queue.get()?.upgrade()).collect()
    }

    /// Queue `index`'s completion thread, taken by whoever destroys the queue.
    pub fn completion_thread(&self, index: u16) -> MutexGuard<'_, Option<JoinHandle<()>>> {
        self.entries[usize::from(index)].completion_thread.lock().unwrap_or_else(|poison| poison.into_inner())
    }
}
