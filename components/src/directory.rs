//! Each queue's lock-free endpoint: what another queue needs to wait on it from the device.
//!
//! Epochs count a queue's submissions from 1. The last packet of each submission retires its
//! epoch on the device in one of two ways, fixed per device by [`CrossQueueWait`] (each queue's
//! stages are compiled for it, in `aqueduct-systems`' `strategy`):
//! - **BarrierValue**: it decrements the queue's *epoch signal*, which starts at [`EPOCH_BASE`], so
//!   the retired epoch is `EPOCH_BASE - value`. A waiter publishes an AMD BARRIER_VALUE packet
//!   (`value < EPOCH_BASE - epoch + 1`).
//! - **BarrierAnd**: it decrements the *per-epoch signal* `epoch % capacity` from 1 to 0. A waiter
//!   publishes a BARRIER_AND on that signal. A slot is reused for a later epoch only after every
//!   consumer barrier that names it has retired (`slot_users`), so a late barrier never waits on
//!   the wrong epoch.
//!
//! This module holds the data; reading the signals (`device_retired`) is behaviour, in
//! `aqueduct-systems`' `strategy`.
//!
//! **Contract.** Endpoints are read without a lock. `submitted` and `enqueued_rows` are written by the
//! holder of the queue's lock when it publishes or stages; `drained` and `settled_rows` by whoever
//! drains the queue, under the same lock; the lifetime flags by the engine (handles, batches,
//! captures, teardown). Reserving an index takes the directory's `next` mutex; an endpoint is
//! never removed, so a queue index is never reused.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::MAX_QUEUES;
use crate::cache_line::CacheLine;

/// The epoch signal's initial value (as IREE's: far from both ends of the i64 range).
pub const EPOCH_BASE: i64 = i64::MAX / 2;

/// How a queue waits on another queue of the same device without the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CrossQueueWait {
    /// An AMD vendor BARRIER_VALUE packet on the producer's epoch signal (CDNA, the soft runtime).
    BarrierValue,
    /// A BARRIER_AND packet on the producer's per-epoch signal (every AQL agent).
    BarrierAnd,
}

/// The device-side retirement signals of one queue.
///
/// The counters are on lines of their own: `submitted` is written by the submitting thread on
/// every submission, `drained` by whichever thread drains, and other queues' admission reads
/// `drained`; sharing a line would make each write evict the other writer's line.
pub struct QueueEndpoint {
    pub index: u16,
    /// Index of the physical agent within the logical device.
    pub agent: usize,
    /// AQL packets its ring holds.
    pub ring_packets: u32,
    /// Bytes of its kernarg ring.
    pub kernarg_bytes: u64,
    /// `hsa_signal_t` handle of the epoch signal (BarrierValue strategy; also created for
    /// BarrierAnd, where it is unused by packets).
    pub epoch_signal: u64,
    /// A user signal the queue's completion thread also waits on; bumping it wakes the thread
    /// (shutdown, queue errors, parked work to retry).
    pub control_signal: u64,
    /// Per-epoch signals (BarrierAnd strategy only; empty otherwise).
    pub epoch_slots: Box<[u64]>,
    /// How many published consumer barriers name each per-epoch signal.
    pub slot_users: Box<[AtomicU32]>,
    /// 0 while healthy; otherwise 1 + the failure-log index of the queue's sticky error.
    pub failure: AtomicU32,
    /// Highest epoch submitted (published).
    pub submitted: CacheLine<AtomicU64>,
    /// Highest epoch drained (by the submitter or the completion thread).
    pub drained: CacheLine<AtomicU64>,
    /// Submission rows enqueued so far (each row's sequence is its count before it), written by
    /// the submitter: read when an object's last handle drops, to know which rows may still
    /// reference it.
    pub enqueued_rows: CacheLine<AtomicU64>,
    /// Every row below this sequence has settled (drained after its epoch retired, or failed or
    /// refused and released), written by whoever drains: nothing on this queue reads what they
    /// referenced any more.
    pub settled_rows: CacheLine<AtomicU64>,
    /// Bit `i` set: queue `i`'s drain stopped at an epoch that waited on this queue from the
    /// device, before this queue drained the producing epoch. Whoever next advances `drained`
    /// clears the mask and wakes those queues (`aqueduct-systems`' `reclaim`).
    pub drain_waiters: CacheLine<AtomicU64>,
    /// What the queue has done, for reports; written by the holder of the queue lock.
    pub counters: SubmissionCounters,
    /// The user's handles alive: after the last one's drop the queue is destroyed once its work
    /// has drained. Not a reference count: the completion thread, and threads that briefly
    /// reach the queue through the device, hold it too, and a teardown must not run on
    /// whichever of them lets go last.
    pub handles: AtomicUsize,
    /// Set once the queue is being torn down: its completion thread ends.
    pub shutdown: AtomicBool,
    /// The queue was cancelled: the last handle's drop destroys it at once, failing what is on
    /// the device.
    pub cancelled: AtomicBool,
    /// A number unique to the thread building a batch on this queue, or 0: an immediate call
    /// from that thread would wait for a lock it holds itself.
    pub batch_owner: AtomicU64,
    /// Whether a profile capture runs on this queue: read before the lock, to stamp a
    /// submission's entry time only then.
    pub capturing: AtomicBool,
    /// The queue's id in the replay capture (0: not captured).
    pub replay_id: AtomicU64,
    /// Whether the queue's device target (where executions processed on the device run) is
    /// made: set once, under the queue lock, so an execution checks it without the lock.
    pub has_device_target: AtomicBool,
}

/// A queue's counters for reports, on their own cache line: the submitting thread writes them on
/// every submission, and nothing else of the endpoint should share that line.
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct SubmissionCounters {
    /// Operations submitted (immediate or batched).
    pub submissions: AtomicU64,
    /// AQL packets published.
    pub packets: AtomicU64,
    /// Submissions that parked before they could be admitted.
    pub deferred: AtomicU64,
    /// The most submissions parked at once.
    pub parked_high_water: AtomicU64,
    /// Device-side wait barriers published.
    pub device_waits: AtomicU64,
    /// Batch flushes that had work to publish (each a Tracy frame, under the engine's `tracy`
    /// feature).
    pub flushes: AtomicU64,
}

impl SubmissionCounters {
    /// Adds `count` to `counter`. Only the holder of the queue lock writes the counters, so a
    /// load and a store add without a locked read-modify-write on the submission path.
    #[inline]
    pub fn add(counter: &AtomicU64, count: u64) {
        counter.store(counter.load(Ordering::Relaxed) + count, Ordering::Relaxed);
    }
}

impl QueueEndpoint {
    /// A fresh endpoint: nothing submitted, drained or failed; `epoch_slots` only under
    /// BarrierAnd.
    pub fn new(index: u16, epoch_signal: u64, control_signal: u64, epoch_slots: Box<[u64]>) -> Self {
        Self {
            index,
            agent: 0,
            ring_packets: 0,
            kernarg_bytes: 0,
            epoch_signal,
            control_signal,
            slot_users: epoch_slots.iter().map(|_| AtomicU32::new(0)).collect(),
            epoch_slots,
            failure: AtomicU32::new(0),
            submitted: CacheLine::default(),
            drained: CacheLine::default(),
            enqueued_rows: CacheLine::default(),
            settled_rows: CacheLine::default(),
            drain_waiters: CacheLine::default(),
            counters: SubmissionCounters::default(),
            handles: AtomicUsize::new(0),
            shutdown: AtomicBool::new(false),
            cancelled: AtomicBool::new(false),
            batch_owner: AtomicU64::new(0),
            capturing: AtomicBool::new(false),
            replay_id: AtomicU64::new(0),
            has_device_target: AtomicBool::new(false),
        }
    }

    /// The same endpoint, recording the agent its queue runs on and the sizes of its rings.
    pub fn with_rings(self, agent: usize, ring_packets: u32, kernarg_bytes: u64) -> Self {
        Self { agent, ring_packets, kernarg_bytes, ..self }
    }

    /// The per-epoch signal for `epoch` (BarrierAnd).
    #[inline]
    pub fn slot_signal(&self, epoch: u64) -> u64 {
        self.epoch_slots[(epoch % self.epoch_slots.len() as u64) as usize]
    }

    #[inline]
    pub fn slot_index(&self, epoch: u64) -> usize {
        (epoch % self.epoch_slots.len() as u64) as usize
    }
}

/// Every queue endpoint of a device, indexed by queue; registration is the only write.
pub struct QueueDirectory {
    endpoints: [OnceLock<std::sync::Arc<QueueEndpoint>>; MAX_QUEUES],
    next: std::sync::Mutex<u16>,
}

impl Default for QueueDirectory {
    fn default() -> Self {
        Self { endpoints: [const { OnceLock::new() }; MAX_QUEUES], next: std::sync::Mutex::new(0) }
    }
}

impl QueueDirectory {
    /// Reserves the next queue index, or `None` when the device has [`MAX_QUEUES`] queues.
    pub fn reserve_index(&self) -> Option<u16> {
        let mut next = self.next.lock().unwrap_or_else(|poison| poison.into_inner());
        if usize::from(*next) >= MAX_QUEUES {
            return None;
        }
        *next += 1;
        Some(*next - 1)
    }

    pub fn register(&self, endpoint: std::sync::Arc<QueueEndpoint>) {
        let _ = self.endpoints[usize::from(endpoint.index)].set(endpoint);
    }

    #[inline]
    pub fn get(&self, index: u16) -> Option<&QueueEndpoint> {
        self.endpoints.get(usize::from(index))?.get().map(|endpoint| &**endpoint)
    }
}
