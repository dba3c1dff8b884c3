//! A queue's stages compiled for its wait strategy ([`QueueStages`]): the entry points the engine
//! calls through, chosen once when the queue is built. Above every stage module: it names them
//! all, and none names it.
//!
//! **Contract.** `run_pass`, `drain` and `fail_in_flight` take `&mut QueueState`: call them with the
//! queue's lock held. `device_retired` and `retirement_wait` read only the endpoint, so the
//! completion thread calls them without the lock.

use aqueduct_components::directory::{CrossQueueWait, QueueEndpoint};
use bevy_ecs::schedule::Schedule;

use crate::QueueState;
use crate::queue_state::DrainOutcome;
use crate::reclaim::DrainOrder;
use crate::strategy::{BarrierAnd, BarrierValue, CrossQueueStrategy, RetirementWait};

/// A queue's stages compiled for its strategy: chosen once, when the queue is built, and called
/// through these pointers (one indirect call per entry, no strategy branch inside).
#[derive(Clone, Copy)]
pub struct QueueStages {
    /// One pass of the four stages over the pending rows (the immediate path).
    pub run_pass: fn(&mut QueueState),
    /// The same stages as bevy systems, for a batch's flush.
    pub schedule: fn() -> Schedule,
    /// Drains every epoch up to the given retired epoch, in the given order.
    pub drain: fn(&mut QueueState, u64, DrainOrder) -> DrainOutcome,
    /// Fails every epoch in flight with the given failure.
    pub fail_in_flight: fn(&mut QueueState, u32) -> DrainOutcome,
    pub device_retired: fn(&QueueEndpoint) -> u64,
    pub retirement_wait: fn(&QueueEndpoint, u64, u64) -> Option<RetirementWait>,
}

impl QueueStages {
    /// The stages of `strategy`: the only match on it, once per queue.
    pub fn for_strategy(strategy: CrossQueueWait) -> Self {
        match strategy {
            CrossQueueWait::BarrierValue => Self::of::<BarrierValue>(),
            CrossQueueWait::BarrierAnd => Self::of::<BarrierAnd>(),
        }
    }

    fn of<S: CrossQueueStrategy>() -> Self {
        Self {
            run_pass: crate::run_pass::<S>,
            schedule: crate::schedule::submission_schedule::<S>,
            drain: |queue, retired, order| crate::reclaim::drain::<S>(&mut queue.reclaim(), retired, order),
            fail_in_flight: |queue, failure| crate::reclaim::fail_in_flight::<S>(&mut queue.reclaim(), failure),
            device_retired: S::device_retired,
            retirement_wait: S::retirement_wait,
        }
    }
}
