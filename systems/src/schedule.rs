//! The four stages as bevy systems in a chained schedule, each one loop over a range of the
//! queue's column table: the batch path (`Queue::batch`, `flush`, the Bevy plugin's per-frame
//! flush), and the other side of the `stages` benchmark that compares a schedule run with the
//! direct calls the immediate path makes ([`crate::run_pass`]).

use bevy_ecs::prelude::*;
use bevy_ecs::schedule::SingleThreadedExecutor;

use crate::QueueState;
use crate::strategy::CrossQueueStrategy;

/// The queue state, lent to the queue World while a batch's schedule runs and empty otherwise:
/// between runs the state lives outside the World, where staging and the immediate path reach it
/// without a lookup. Lent by swapping it into this resource and back ([`run_over`]), which
/// allocates nothing; inserting and removing a resource would (bevy's resources are entities,
/// and each removal queues a removal event).
#[derive(Resource, Default)]
pub struct LentState(pub Option<QueueState>);

/// Runs `stage` on the lent state (always present while the schedule runs).
#[inline]
fn on_lent(mut lent: ResMut<LentState>, stage: impl FnOnce(&mut QueueState)) {
    if let Some(queue) = lent.0.as_mut() {
        stage(queue);
    }
}

pub fn admission_system<S: CrossQueueStrategy>(lent: ResMut<LentState>) {
    on_lent(lent, crate::admission::admit_pending::<S>);
}

pub fn kernarg_system(lent: ResMut<LentState>) {
    on_lent(lent, crate::kernarg::patch_admitted);
}

pub fn publication_system<S: CrossQueueStrategy>(lent: ResMut<LentState>) {
    on_lent(lent, crate::publication::publish_admitted::<S>);
}

pub fn reclaim_system<S: CrossQueueStrategy>(lent: ResMut<LentState>) {
    on_lent(lent, crate::reclaim::reclaim_retired_batch::<S>);
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

/// Runs `schedule` over `state`, lent to `world` for the run ([`LentState`]) and handed back.
pub fn run_over(schedule: &mut Schedule, world: &mut World, state: &mut Option<QueueState>) {
    let mut lent = world.get_resource_or_init::<LentState>();
    core::mem::swap(&mut lent.0, state);
    schedule.run(world);
    if let Some(mut lent) = world.get_resource_mut::<LentState>() {
        core::mem::swap(&mut lent.0, state);
    }
}
