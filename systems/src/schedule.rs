//! The stages' passes as bevy systems in a chained schedule: the batch path (`Queue::batch`,
//! `flush`), and the other side of the `stages` benchmark that compares a schedule run with the
//! direct calls the immediate path makes.

use bevy_ecs::prelude::*;
use bevy_ecs::schedule::SingleThreadedExecutor;

use crate::strategy::CrossQueueStrategy;
use crate::{EpochRows, QueueState, SubmissionRowQuery};

pub fn admission_system<S: CrossQueueStrategy>(mut queue: ResMut<QueueState>, mut query: SubmissionRowQuery) {
    crate::admission::admit_pending::<S>(&mut queue, &mut query);
}

pub fn kernarg_system(queue: Res<QueueState>, query: SubmissionRowQuery) {
    crate::kernarg::patch_admitted(&queue.rows, &query);
}

pub fn publication_system<S: CrossQueueStrategy>(
    mut queue: ResMut<QueueState>,
    mut query: SubmissionRowQuery,
    mut epoch_rows: EpochRows,
) {
    crate::publication::publish_admitted::<S>(&mut queue, &mut query, &mut epoch_rows);
}

/// admission → kernarg patching → AQL publication over the pending rows, on the single-threaded
/// executor (the stages share one queue's state, so there is nothing to run in parallel), with
/// the systems compiled for wait strategy `S` ([`crate::QueueStages`] picks the queue's). What
/// the pass did is in `QueueState::rows`' `pass`; the engine acts on its stop verdict. Reclaim is not
/// in the schedule: after a pass, the submitting thread drains a retired batch of epochs (and
/// everything retired when a pass stops for room), and the completion thread drains the rest.
pub fn submission_schedule<S: CrossQueueStrategy>() -> Schedule {
    let mut schedule = Schedule::default();
    schedule.set_executor(SingleThreadedExecutor::new());
    schedule.add_systems((admission_system::<S>, kernarg_system, publication_system::<S>).chain());
    schedule
}
