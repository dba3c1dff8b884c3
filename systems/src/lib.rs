//! aqueduct-systems: the four stages every submission passes through, as small functions over the
//! data in `aqueduct-components`.
//!
//! 1. [`admission`]: capacity checks that change nothing, wait resolution with frontier elision,
//!    then the reservation (AQL slots from the range's cursor, committed with one write-index
//!    store per range; kernarg space; an epoch's row).
//! 2. [`kernarg`]: the kernarg segment enqueueing serialised (binding pointers, constants, implicit
//!    arguments), copied into the reserved kernarg space, and an update's update bytes after it.
//! 3. [`publication`]: packet bodies, then each header with one 32-bit release store, then one
//!    doorbell store; the epoch's row takes the submission's signals and its row's sequence.
//!    For a command-buffer execution, the [`block_processor`] writes the leg's packets
//!    and kernargs.
//! 4. [`reclaim`]: retired epochs signal their semaphores (coalesced) and free kernarg space; a
//!    failed queue fails everything in flight. [`settle`] then publishes how far the queue's rows
//!    have settled, which is when objects released by their handles may be freed.
//!
//! [`sync`] holds the behaviour over the components' lock-free tables (the semaphore seqlock,
//! host parking, signal reads), and [`queue_state`] the queue's state behind its lock, which
//! holds the HSA ring handle and the queue World a batch's schedule runs in.
//!
//! The pending submissions are rows of a column table in the queue state
//! (`aqueduct_components::submission::SubmissionRows`), and each stage is one loop over a range
//! of them (`admit_pending`, `patch_admitted`, `publish_admitted`, `reclaim_retired_batch`): one
//! pass admits, patches and publishes every row that can go, with one doorbell store, and the
//! submitter then drains a retired batch of epochs. [`schedule`] runs the four as bevy systems
//! (the batch path: `Queue::batch`, `flush`); the immediate path calls the same functions
//! directly ([`run_pass`]) on its one-row range, because the executor's fixed cost is several
//! times a whole one-row pass (`cargo bench -p aqueduct-systems`).

pub mod admission;
pub mod binding_tables;
pub mod block_processor;
pub mod kernarg;
pub mod publication;
pub mod queue_state;
pub mod reclaim;
pub mod schedule;
pub mod settle;
pub mod stages;
pub mod strategy;
pub mod sync;

pub use queue_state::{CaptureState, DeviceLink, DeviceTarget, QueueHandles, QueueState};
pub use stages::QueueStages;
use strategy::CrossQueueStrategy;

/// One pass of admission → kernarg patching → AQL publication over the pending rows, then the
/// submitter's reclaim, for wait strategy `S` ([`QueueStages`] holds the queue's copy): the
/// immediate path calls it directly; [`schedule::submission_schedule`] runs the same four stage
/// functions as systems. Each stage is one loop over a range of rows.
pub fn run_pass<S: CrossQueueStrategy>(queue: &mut QueueState) {
    admission::admit_pending::<S>(&mut queue.admission());
    kernarg::patch_admitted(&mut queue.rows);
    publication::publish_admitted::<S>(&mut queue.publication());
    queue.drain = reclaim::reclaim_retired_batch::<S>(&mut queue.reclaim());
}

/// A span per stage when the `trace` feature is on; nothing otherwise.
#[macro_export]
macro_rules! stage_span {
    ($name:literal) => {
        #[cfg(feature = "trace")]
        let _span = tracing::trace_span!($name).entered();
    };
}

/// Submission rows the column table holds before it first grows: enough for immediate
/// submissions and some parked ones. A batch that stages more doubles it once; it keeps the
/// room from then on.
const INITIAL_SUBMISSION_ROWS: usize = 16;

/// Builds a queue's state (its rings, the epoch table for `epochs` epochs in flight, the
/// submission-row table) and the stages compiled for `strategy`.
pub fn build_queue_state(
    index: u16,
    ring: aqueduct_hsa::ring::AqlRing,
    kernargs: aqueduct_components::kernarg_ring::KernargRing,
    endpoint: std::sync::Arc<aqueduct_components::directory::QueueEndpoint>,
    link: DeviceLink,
    epochs: usize,
    strategy: aqueduct_components::directory::CrossQueueWait,
) -> (QueueState, QueueStages) {
    use aqueduct_components::queue_state::EpochTable;
    use aqueduct_components::submission::SubmissionRows;
    let stages = QueueStages::for_strategy(strategy);
    let handles = QueueHandles { index, ring, epoch_signal: endpoint.epoch_signal, endpoint, link };
    let state = QueueState {
        batch_world: Some(Box::new(queue_state::BatchWorld::new(handles.clone(), (stages.schedule)()))),
        handles,
        known_read_index: 0,
        kernargs,
        epochs: EpochTable::new(epochs),
        frontier: aqueduct_components::frontier::QueueFrontier::default(),
        failure: None,
        rows: SubmissionRows::with_capacity(INITIAL_SUBMISSION_ROWS),
        capture: CaptureState::default(),
        unsettled_from: None,
        drain: None,
        device_target: None,
    };
    (state, stages)
}
