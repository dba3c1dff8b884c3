//! The four stages as bevy systems in a chained schedule, each one loop over a range of the
//! queue's column table: the batch path (`Queue::batch`, `flush`, the Bevy plugin's per-frame
//! flush), and the other side of the `stages` benchmark that compares a schedule run with the
//! direct calls the immediate path makes ([`crate::run_pass`]).

use bevy_ecs::prelude::*;
use bevy_ecs::schedule::SingleThreadedExecutor;

use crate::QueueState;
use crate::strategy::CrossQueueStrategy;

pub fn admission_system<S: CrossQueueStrategy>(mut queue: ResMut<QueueState>) {
    crate::admission::admit_pending::<S>(&mut queue);
}

pub fn kernarg_system(mut queue: ResMut<QueueState>) {
    crate::kernarg::patch_admitted(&mut queue);
}

pub fn publication_system<S: CrossQueueStrategy>(mut queue: ResMut<QueueState>) {
    crate::publication::publish_admitted::<S>(&mut queue);
}

pub fn reclaim_system<S: CrossQueueStrategy>(mut queue: ResMut<QueueState>) {
    crate::reclaim::reclaim_retired_batch::<S>(&mut queue);
}

/// admission → kernarg patching → AQL publication → epoch reclaim over the pending rows, on the
/// single-threaded executor (the stages share one queue's state, so there is nothing to run in
/// parallel), with the systems compiled for wait strategy `S` ([`crate::QueueStages`] picks the
/// queue's). What the pass did is in `QueueState::rows`' `pass`, and what reclaim drained in
/// `QueueState::drain`; the engine acts on the pass's stop verdict. Reclaim here is the
/// submitter's: it drains once a batch of epochs retired; the completion thread drains the rest.
pub fn submission_schedule<S: CrossQueueStrategy>() -> Schedule {
    let mut schedule = Schedule::default();
    schedule.set_executor(SingleThreadedExecutor::new());
    schedule.add_systems((admission_system::<S>, kernarg_system, publication_system::<S>, reclaim_system::<S>).chain());
    schedule
}

/// Runs `schedule` over `state`: moved into `world` as the resource its systems take, and back
/// out after the run. Between runs the state lives outside the World, where the immediate path
/// and staging reach it without a lookup.
pub fn run_over(schedule: &mut Schedule, world: &mut World, state: QueueState) -> QueueState {
    world.insert_resource(state);
    schedule.run(world);
    match world.remove_resource::<QueueState>() {
        Some(state) => state,
        None => unreachable!("no system removes the queue state"),
    }
}
