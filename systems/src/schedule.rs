//! The four stages as bevy systems in a chained schedule, each one loop over a range of the
//! queue's column table: the batch path (`Queue::batch`, `flush`, the Bevy plugin's per-frame
//! flush), and the other side of the `stages` benchmark that compares a schedule run with the
//! direct calls the immediate path makes ([`crate::run_pass`]).
//!
//! **Contract.** `QueueState::run_schedule` takes `&mut QueueState`, so its caller holds the queue's
//! lock; the state is lent to the systems as `LentState` for that run only and taken back by a guard,
//! on unwind too.

use core::ptr::NonNull;

use bevy_ecs::prelude::*;
use bevy_ecs::schedule::SingleThreadedExecutor;

use crate::QueueState;
use crate::strategy::CrossQueueStrategy;

/// The queue state the running schedule works on, lent by [`QueueState::run_schedule`] for the
/// run and `None` otherwise. A pointer, not the state itself: the state owns the World (it is
/// the one thing the queue lock guards), so it cannot also move into it, and lending by pointer
/// moves and allocates nothing.
#[derive(Resource, Default)]
pub struct LentState(Option<NonNull<QueueState>>);

// SAFETY: the pointer is set only by `run_schedule`, which holds the state's `&mut` (so the
// queue lock) for the whole run and clears it before returning or unwinding; the systems that
// read it run on the calling thread (single-threaded executor), inside that run.
unsafe impl Send for LentState {}
// SAFETY: as above; `ResMut` gives one system at a time access.
unsafe impl Sync for LentState {}

/// Runs `stage` on the lent state (always present while the schedule runs).
#[inline]
fn on_lent(lent: ResMut<LentState>, stage: impl FnOnce(&mut QueueState)) {
    if let Some(mut queue) = lent.0 {
        // SAFETY: see `LentState`: the pointer is live and exclusively lent while the schedule
        // runs, and `ResMut` makes this system its only user.
        stage(unsafe { queue.as_mut() });
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

/// A queue World for `schedule`, with the resource its systems are lent the state through.
pub(crate) fn queue_world(schedule: Schedule) -> (World, Schedule) {
    let mut world = World::new();
    world.init_resource::<LentState>();
    (world, schedule)
}

impl QueueState {
    /// Runs the submission schedule (the four stages as systems) over this state, lent to the
    /// queue World for the run.
    pub fn run_schedule(&mut self) {
        /// Clears the loan and puts the World back into the state, on return and on unwind.
        struct Loan {
            state: NonNull<QueueState>,
            batch_schedule: Option<Box<(World, Schedule)>>,
        }
        impl Drop for Loan {
            fn drop(&mut self) {
                if let Some(mut batch_schedule) = self.batch_schedule.take() {
                    batch_schedule.0.resource_mut::<LentState>().0 = None;
                    // SAFETY: the state outlives the loan (`run_schedule` holds its `&mut`), and
                    // no system is running any more, so this is its only user.
                    unsafe { self.state.as_mut().batch_schedule = Some(batch_schedule) };
                }
            }
        }
        let Some(batch_schedule) = self.batch_schedule.take() else {
            unreachable!("a queue state holds its World except while its schedule runs, which holds the state's lock")
        };
        let mut loan = Loan { state: NonNull::from(&mut *self), batch_schedule: Some(batch_schedule) };
        if let Some((world, schedule)) = loan.batch_schedule.as_deref_mut() {
            world.resource_mut::<LentState>().0 = Some(loan.state);
            schedule.run(world);
        }
    }
}
