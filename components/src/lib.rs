//! aqueduct-components: the plain data the submission pipeline works on.
//!
//! Plain data, with two exceptions: the seqlock of a semaphore's producer record
//! (`semaphore_slot.rs`) and host parking (`host_waiters.rs`) keep their protocols beside their
//! fields, in files that depend only on std and an atomics shim, so `loom-models/` checks that
//! very code. Everything else done over the data (slot allocation, the failure log, signal reads)
//! is in `aqueduct-systems`' `sync` module. This crate does not depend on `aqueduct-hsa`.
//!
//! - [`dependency`]: the plain values dependencies are made of (a queue position, a wait, a
//!   signal, a wait resolved for the device), named by everything below.
//! - [`semaphore_table`]: the device-wide dense array of semaphore atomics (timeline value, failure,
//!   last queued producer) that any queue reads without a lock.
//! - [`frontier`]: cross-queue frontiers (which epochs of other queues a queue's work follows),
//!   bounded in producer records, dense in a queue's own state.
//! - [`directory`]: each queue's lock-free endpoint (epoch signal, per-epoch signals, retired epoch,
//!   sticky failure), so another queue can turn a wait into a device-side barrier.
//! - [`submission`]: the pending submissions as rows of a column table (the stages' input and
//!   admission's verdict and reservation), with the arenas their waits, signals and kernarg bytes
//!   live in.
//! - [`program`]: a command buffer's validated program image and one execution's cursor through it.
//! - [`kernarg_ring`]: a byte ring in kernarg memory (a queue's kernarg segments, a device
//!   target's binding tables), and where admission places a binding table.
//! - [`queue_state`]: a queue's epoch table.
//! - [`capture`]: what a queue captures for the profiler: the modes its stages act on, and an
//!   epoch's facts kept in its epoch row until it is drained.
//! - [`cache_line`]: a value padded to its own cache line (per-queue counters written by
//!   different threads).
//! - [`device_entities`]: the device World's entities: queues, semaphores, provider allocations,
//!   memory pools, executables, command buffers, and when a released one may be freed.
//! - [`pool`]: a memory pool's allocation components (the entities of its own World) and its free
//!   ranges.
//! - [`drain_order`]: the wake-up protocol between a queue whose drain waits for a producer
//!   queue's drain and that producer (loom-checked).
//! - [`host_writes`]: an agent's HDP publication record (host writes into host-visible device
//!   memory, and the flushes that covered them).

pub mod cache_line;
pub mod capture;
pub mod dependency;
pub mod device_entities;
pub mod directory;
pub mod drain_order;
pub mod endpoint_scan;
pub mod frontier;
pub mod host_waiters;
pub mod host_writes;
pub mod kernarg_ring;
pub mod parked_queues;
pub mod pool;
pub mod program;
pub mod queue_state;
pub mod semaphore_slot;
pub mod semaphore_table;
pub mod submission;

/// Most queues a device can have; the frontier and producer records index by queue.
pub const MAX_QUEUES: usize = 64;
