//! The device's one registry of its queues, by index: each queue's endpoint (in the directory,
//! which the stages read lock-free and which reserves the index), what the engine reaches the
//! queue by from outside its handle (a capture joining the live queues, a held drain draining a
//! producer, the engine's drop finishing orphans), and the thread that drains it.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::thread::JoinHandle;

use aqueduct_components::directory::QueueDirectory;

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
    /// The queues' endpoints, by index: shared with the stages (`DeviceLink::directory`), in
    /// `aqueduct-components` because they read it below the engine's types.
    pub directory: Arc<QueueDirectory>,
    entries: Box<[QueueEntry]>,
}

impl QueueRegistry {
    /// A registry for every queue index the directory can reserve.
    pub fn new() -> Self {
        Self {
            directory: Arc::new(QueueDirectory::default()),
            entries: (0..aqueduct_components::MAX_QUEUES).map(|_| QueueEntry::default()).collect(),
        }
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
