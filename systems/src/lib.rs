//! aqueduct-systems: the four stages every submission passes through, as small functions over the
//! data in `aqueduct-components`.
//!
//! 1. [`admission`]: capacity checks that change nothing, wait resolution with frontier elision,
//!    then the reservation (AQL slots by compare-and-swap, kernarg space, an epoch row).
//! 2. [`kernarg`]: binding pointers, constants, implicit arguments and staged bytes written into
//!    the reserved kernarg space.
//! 3. [`publication`]: packet bodies, then each header with one 32-bit release store, then one
//!    doorbell store; the epoch row takes the submission's signals and its row's sequence.
//!    For a command-buffer execution, the [`block_processor`] writes the segment's packets
//!    and kernargs.
//! 4. [`reclaim`]: retired epochs signal their semaphores (coalesced) and free kernarg space; a
//!    failed queue fails everything in flight. [`settle`] then publishes how far the queue's rows
//!    have settled, which is when objects released by their handles may be freed.
//!
//! [`sync`] holds the behaviour over the components' lock-free tables (the semaphore seqlock,
//! host parking, signal reads), and [`queue_state`] the queue World's hot resource, which holds
//! the HSA ring handle.
//!
//! Each stage has a per-row function and a pass over the queue's pending submission rows
//! (`admit_pending`, `patch_admitted`, `publish_admitted`). One pass admits, patches and
//! publishes every row that can go, with one doorbell store. [`schedule`] runs the passes as
//! bevy systems (the batch path: `Queue::batch`, `flush`); the immediate path calls the same
//! passes directly through one cached `SystemState` ([`StageState`]), because the executor's
//! fixed cost is several times a whole one-row pass (`cargo bench -p aqueduct-systems`).

pub mod admission;
pub mod block_processor;
pub mod kernarg;
pub mod publication;
pub mod queue_state;
pub mod reclaim;
pub mod schedule;
pub mod settle;
pub mod strategy;
pub mod sync;

use aqueduct_components::capture::EpochCapture;
use aqueduct_components::queue_state::{EpochDeviceWaits, EpochRow, EpochSignals};
use aqueduct_components::submission::{AdmissionPlan, StagedSubmission, SubmissionFault, SubmissionRows, Verdict};
use bevy_ecs::prelude::*;
use bevy_ecs::system::SystemState;
pub use queue_state::{CaptureState, DeviceLink, QueueState};
use strategy::CrossQueueStrategy;
pub use strategy::QueueStages;

/// The epoch-row columns publication and reclaim touch.
pub type EpochRows<'w, 's> = Query<
    'w,
    's,
    (&'static mut EpochRow, &'static mut EpochSignals, &'static mut EpochDeviceWaits, &'static mut EpochCapture),
>;

/// The submission-row columns: what is staged and what admission planned for it.
pub type SubmissionRowQuery<'w, 's> = Query<'w, 's, (&'static mut StagedSubmission, &'static mut AdmissionPlan)>;

/// Everything a pass of the stages borrows from the queue World.
pub type StageParamSet =
    (ResMut<'static, QueueState>, SubmissionRowQuery<'static, 'static>, EpochRows<'static, 'static>);

/// [`StageParamSet`] as fetched: the borrows a pass works through.
pub type StageParams<'w, 's> = (ResMut<'w, QueueState>, SubmissionRowQuery<'w, 's>, EpochRows<'w, 's>);

/// The cached state that fetches [`StageParamSet`].
pub type StageState = SystemState<StageParamSet>;

/// What staging a row borrows: the queue state (which holds the rows) and the row columns, without
/// the epoch rows a pass needs (a batch stages every operation through this lighter fetch).
pub type RowParamSet = (ResMut<'static, QueueState>, SubmissionRowQuery<'static, 'static>);

/// [`RowParamSet`] as fetched.
pub type RowParams<'w, 's> = (ResMut<'w, QueueState>, SubmissionRowQuery<'w, 's>);

/// The cached state that fetches [`RowParamSet`].
pub type RowState = SystemState<RowParamSet>;

/// Fetches what staging a row borrows; cannot fail, as [`stage_params`].
pub fn row_params<'a>(state: &'a mut RowState, world: &'a mut World) -> RowParams<'a, 'a> {
    match state.get_mut(world) {
        Ok(params) => params,
        Err(error) => unreachable!("the queue World lost its submission rows: {error}"),
    }
}

/// Fetches the stages' parameters. The queue World is built with every resource they name and
/// never loses one, so validation cannot fail.
pub fn stage_params<'a>(state: &'a mut StageState, world: &'a mut World) -> StageParams<'a, 'a> {
    match state.get_mut(world) {
        Ok(params) => params,
        Err(error) => unreachable!("the queue World lost a stage resource: {error}"),
    }
}

/// One pass of admission → kernarg patching → AQL publication over the pending rows, called
/// directly (the immediate path), for wait strategy `S` ([`QueueStages`] holds the queue's copy).
/// [`schedule::submission_schedule`] runs the same passes.
///
/// A pass over one pending row (every immediate submission that queues behind nothing) runs the
/// same per-row stage functions on one row lookup instead of one per stage.
pub fn run_pass<S: CrossQueueStrategy>(params: &mut StageParams<'_, '_>) {
    let (queue, query, epoch_rows) = params;
    if queue.rows.pending.len() == 1 {
        let entity = queue.rows.pending[0];
        let Ok((mut staged, mut plan)) = query.get_mut(entity) else {
            queue.rows.pass.clear();
            queue.rows.pass.stop = Some((entity, Verdict::Fault(SubmissionFault::MissingRow)));
            return;
        };
        run_row::<S>(queue, entity, &mut staged, &mut plan, epoch_rows);
        return;
    }
    admission::admit_pending::<S>(queue, query);
    if !queue.rows.pass.admitted.is_empty() {
        kernarg::patch_admitted(&queue.rows, query);
        publication::publish_admitted::<S>(queue, query, epoch_rows);
    }
}

/// A pass over the one pending row, `entity`, whose columns the caller already holds: the
/// immediate path stages a row that queues behind nothing and runs it without looking it up again.
/// [`run_pass`] runs the same for a single pending row.
pub fn run_row<S: CrossQueueStrategy>(
    queue: &mut QueueState,
    entity: Entity,
    staged: &mut StagedSubmission,
    plan: &mut AdmissionPlan,
    epoch_rows: &mut EpochRows<'_, '_>,
) {
    queue.rows.pass.clear();
    // Whether a program continues past this segment matters only to rows behind it.
    admission::admit_row::<S>(queue, entity, staged, plan);
    if plan.verdict == Verdict::Admitted {
        kernarg::patch_kernargs(staged, plan);
        let last = publication::publish_row::<S>(queue, entity, staged, plan, epoch_rows);
        queue.ring.ring_doorbell(last);
    }
}

/// A span per stage when the `trace` feature is on; nothing otherwise.
#[macro_export]
macro_rules! stage_span {
    ($name:literal) => {
        #[cfg(feature = "trace")]
        let _span = tracing::trace_span!($name).entered();
    };
}

/// Per-epoch-row capacity reserved at queue creation (signals, device waits),
/// so even a row's first use allocates nothing for a typical submission.
const ROW_SIGNALS: usize = 2;
const ROW_WAITS: usize = 2;

/// Submission rows spawned with the queue: enough for immediate submissions and a parked one.
/// A batch that stages more spawns the rest once; they are recycled from then on.
const INITIAL_SUBMISSION_ROWS: usize = 4;

/// Builds a queue World: its rings, `epochs` recycled epoch rows, the first submission rows, the
/// cached parameter state the stages run through, and the stages compiled for `strategy`.
pub fn build_queue_world(
    index: u16,
    ring: aqueduct_hsa::ring::AqlRing,
    kernargs: aqueduct_components::queue_state::KernargRing,
    endpoint: std::sync::Arc<aqueduct_components::directory::QueueEndpoint>,
    link: DeviceLink,
    epochs: usize,
    strategy: aqueduct_components::directory::CrossQueueWait,
) -> (World, StageState, QueueStages) {
    use aqueduct_components::queue_state::EpochRing;
    let mut world = World::new();
    let rows: Box<[Entity]> = (0..epochs)
        .map(|_| {
            world
                .spawn((
                    EpochRow::default(),
                    EpochSignals(Vec::with_capacity(ROW_SIGNALS)),
                    EpochDeviceWaits(Vec::with_capacity(ROW_WAITS)),
                    EpochCapture::default(),
                ))
                .id()
        })
        .collect();
    let mut submission_rows = SubmissionRows::default();
    for _ in 0..INITIAL_SUBMISSION_ROWS {
        submission_rows.free.push(spawn_submission_row(&mut world));
    }
    world.insert_resource(QueueState {
        index,
        ring,
        known_read_index: 0,
        kernargs,
        epochs: EpochRing { rows, submitted: 0, drained: 0 },
        epoch_signal: endpoint.epoch_signal,
        endpoint,
        frontier: aqueduct_components::frontier::QueueFrontier::default(),
        link,
        failure: None,
        rows: submission_rows,
        capture: CaptureState::default(),
        unsettled_from: None,
    });
    let params = StageState::new(&mut world);
    (world, params, QueueStages::for_strategy(strategy))
}

/// Makes sure a free submission row exists, spawning one only when none is free (a batch or
/// parked work outgrew the pool). Staging takes a free row without looking the rows up again, so
/// the engine calls this after a staging that took the last one: one is always free when the
/// next staging starts.
pub fn ensure_free_row(world: &mut World) {
    if world.resource::<QueueState>().rows.free.is_empty() {
        let row = spawn_submission_row(world);
        world.resource_mut::<QueueState>().rows.free.push(row);
    }
}

/// A free submission row appended to the pending rows.
pub fn take_row(world: &mut World) -> Entity {
    ensure_free_row(world);
    match world.resource_mut::<QueueState>().rows.take_free() {
        Some(entity) => entity,
        None => unreachable!("ensure_free_row left a free row"),
    }
}

/// A new submission row, with capacity for a typical submission.
pub fn spawn_submission_row(world: &mut World) -> Entity {
    let staged = StagedSubmission {
        waits: Vec::with_capacity(ROW_WAITS),
        signals: Vec::with_capacity(ROW_SIGNALS),
        ..Default::default()
    };
    world.spawn((staged, AdmissionPlan::default())).id()
}
