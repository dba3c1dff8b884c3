//! The four stages as bevy systems over the queue World's resources, in a chained schedule: the
//! batch path (`Queue::batch`, `flush`, the Bevy plugin's per-frame flush), and the other side of
//! the `stages` benchmark that compares a schedule run with the direct calls the immediate path
//! makes ([`crate::run_pass`]). Each system's parameters are the data its stage reads (`Res`) and
//! writes (`ResMut`); its body builds the stage's view from them and calls the same stage function
//! the immediate path calls.
//!
//! **Contract.** `QueueState::run_schedule` takes `&mut QueueState`, so its caller holds the queue's
//! lock. It moves the state's parts into the World's resources (each a swap with the empty part the
//! World holds between runs), runs the schedule, and swaps them back, on unwind too. The state's
//! `QueueHandles` are fixed, so the World keeps its own copy from the start.

use core::mem::swap;

use aqueduct_components::frontier::QueueFrontier;
use aqueduct_components::kernarg_ring::KernargRing;
use aqueduct_components::queue_state::EpochTable;
use aqueduct_components::submission::SubmissionRows;
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::SingleThreadedExecutor;

use crate::admission::Admission;
use crate::publication::Publication;
use crate::queue_state::BatchWorld;
use crate::queue_state::DrainOutcome;
use crate::reclaim::Reclaim;
use crate::strategy::CrossQueueStrategy;
use crate::{CaptureState, DeviceTarget, QueueHandles, QueueState};

/// `QueueState::known_read_index` in the World.
#[derive(Resource, Default)]
pub struct KnownReadIndex(pub u64);

/// `QueueState::failure` in the World: read by admission, written by reclaim.
#[derive(Resource, Default)]
pub struct QueueFailure(pub Option<u32>);

/// `QueueState::unsettled_from` in the World.
#[derive(Resource, Default)]
pub struct UnsettledFrom(pub Option<u64>);

/// `QueueState::drain` in the World: what the reclaim system drained.
#[derive(Resource, Default)]
pub struct LastDrain(pub Option<(u64, DrainOutcome)>);

/// `QueueState::device_target` in the World.
#[derive(Resource, Default)]
pub struct DeviceTargetSlot(pub Option<DeviceTarget>);

#[allow(clippy::too_many_arguments)] // one parameter per part admission names
pub fn admission_system<S: CrossQueueStrategy>(
    handles: Res<QueueHandles>,
    mut known_read_index: ResMut<KnownReadIndex>,
    mut rows: ResMut<SubmissionRows>,
    mut kernargs: ResMut<KernargRing>,
    mut epochs: ResMut<EpochTable>,
    mut frontier: ResMut<QueueFrontier>,
    capture: Res<CaptureState>,
    failure: Res<QueueFailure>,
    mut device_target: ResMut<DeviceTargetSlot>,
) {
    crate::admission::admit_pending::<S>(&mut Admission {
        handles: &handles,
        known_read_index: &mut known_read_index.0,
        rows: &mut rows,
        kernargs: &mut kernargs,
        epochs: &mut epochs,
        frontier: &mut frontier,
        capture: &capture,
        failure: failure.0,
        device_target: &mut device_target.0,
    });
}

pub fn kernarg_system(mut rows: ResMut<SubmissionRows>) {
    crate::kernarg::patch_admitted(&mut rows);
}

pub fn publication_system<S: CrossQueueStrategy>(
    handles: Res<QueueHandles>,
    mut rows: ResMut<SubmissionRows>,
    mut epochs: ResMut<EpochTable>,
    mut capture: ResMut<CaptureState>,
    device_target: Res<DeviceTargetSlot>,
) {
    crate::publication::publish_admitted::<S>(&mut Publication {
        handles: &handles,
        rows: &mut rows,
        epochs: &mut epochs,
        capture: &mut capture,
        device_target: &device_target.0,
    });
}

#[allow(clippy::too_many_arguments)] // one parameter per part reclaim names
pub fn reclaim_system<S: CrossQueueStrategy>(
    handles: Res<QueueHandles>,
    mut epochs: ResMut<EpochTable>,
    mut kernargs: ResMut<KernargRing>,
    mut frontier: ResMut<QueueFrontier>,
    mut failure: ResMut<QueueFailure>,
    mut unsettled_from: ResMut<UnsettledFrom>,
    mut device_target: ResMut<DeviceTargetSlot>,
    mut drain: ResMut<LastDrain>,
) {
    drain.0 = crate::reclaim::reclaim_retired_batch::<S>(&mut Reclaim {
        handles: &handles,
        epochs: &mut epochs,
        kernargs: &mut kernargs,
        frontier: &mut frontier,
        failure: &mut failure.0,
        unsettled_from: &mut unsettled_from.0,
        device_target: &mut device_target.0,
    });
}

/// admission → kernarg patching → AQL publication → epoch reclaim over the pending rows, on the
/// single-threaded executor (the stages share one queue's rows and epochs, so there is nothing to
/// run in parallel), with the systems compiled for wait strategy `S` ([`crate::QueueStages`] picks
/// the queue's). What the pass did is in the rows' `pass`, and what reclaim drained in
/// [`LastDrain`] (`QueueState::drain` once the run ends); the engine acts on the pass's stop
/// verdict. Reclaim here is the submitter's: it drains once a batch of epochs retired; the
/// completion thread drains the rest.
pub fn submission_schedule<S: CrossQueueStrategy>() -> Schedule {
    let mut schedule = Schedule::default();
    schedule.set_executor(SingleThreadedExecutor::new());
    schedule.add_systems((admission_system::<S>, kernarg_system, publication_system::<S>, reclaim_system::<S>).chain());
    schedule
}

impl BatchWorld {
    /// A World for `schedule` with the queue's `handles` and empty parts.
    pub(crate) fn new(handles: QueueHandles, schedule: Schedule) -> Self {
        let mut world = World::new();
        world.insert_resource(handles);
        world.insert_resource(SubmissionRows::with_capacity(1));
        world.insert_resource(KernargRing::EMPTY);
        world.insert_resource(EpochTable::new(1));
        world.insert_resource(QueueFrontier::default());
        world.insert_resource(CaptureState::default());
        world.init_resource::<KnownReadIndex>();
        world.init_resource::<QueueFailure>();
        world.init_resource::<UnsettledFrom>();
        world.init_resource::<LastDrain>();
        world.init_resource::<DeviceTargetSlot>();
        Self { world, schedule }
    }

    /// Swaps each part the systems name between `state` and the World: the state's parts go in
    /// before a run, and come back (the empty ones going out again) after it.
    fn exchange(&mut self, state: &mut QueueState) {
        let world = &mut self.world;
        swap(&mut *world.resource_mut::<SubmissionRows>(), &mut state.rows);
        swap(&mut *world.resource_mut::<KernargRing>(), &mut state.kernargs);
        swap(&mut *world.resource_mut::<EpochTable>(), &mut state.epochs);
        swap(&mut *world.resource_mut::<QueueFrontier>(), &mut state.frontier);
        swap(&mut *world.resource_mut::<CaptureState>(), &mut state.capture);
        swap(&mut world.resource_mut::<KnownReadIndex>().0, &mut state.known_read_index);
        swap(&mut world.resource_mut::<QueueFailure>().0, &mut state.failure);
        swap(&mut world.resource_mut::<UnsettledFrom>().0, &mut state.unsettled_from);
        swap(&mut world.resource_mut::<LastDrain>().0, &mut state.drain);
        swap(&mut world.resource_mut::<DeviceTargetSlot>().0, &mut state.device_target);
    }
}

impl QueueState {
    /// Runs the submission schedule (the four stages as systems) over this state's parts, moved
    /// into the queue World for the run and back after it.
    pub fn run_schedule(&mut self) {
        /// Swaps the parts back and puts the World back into the state, on return and on unwind.
        struct Return<'a> {
            state: &'a mut QueueState,
            batch: Option<Box<BatchWorld>>,
        }
        impl Drop for Return<'_> {
            fn drop(&mut self) {
                if let Some(mut batch) = self.batch.take() {
                    batch.exchange(self.state);
                    self.state.batch_world = Some(batch);
                }
            }
        }
        let Some(mut batch) = self.batch_world.take() else {
            unreachable!("a queue state holds its World except while its schedule runs, which holds the state's lock")
        };
        batch.exchange(self);
        let mut parts_out = Return { state: self, batch: Some(batch) };
        if let Some(BatchWorld { world, schedule }) = parts_out.batch.as_deref_mut() {
            schedule.run(world);
        }
    }
}
