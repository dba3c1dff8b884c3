//! The per-frame flush: each lane's queue is an entity of the app's World ([`LaneQueue`]), and
//! [`flush_frame`] publishes every lane's submitted work of the frame in one run of one system, in
//! parallel across lanes on Bevy's compute task pool where it has threads (one lane per task),
//! or lane by lane where it has none or [`AqueductPlugin::parallel_flush`] is off.
//! [`pace_frame`] then holds the frames-in-flight limit and sends what the flush refused.
//!
//! **Contract.** A lane's flush touches only its own entity's [`LaneQueue`] and the shared frame
//! timeline (read), so lanes need no lock of their own here: the queues' locks are taken by
//! `Queue::batch`, one queue each. The frame timeline is raised by the first lane after every
//! lane's batch is published, by an immediate barrier that waits on every other lane's point of
//! the frame. What a refused operation leaves behind is a [`SubmitRefused`] message, sent by
//! [`pace_frame`] in lane order; the lane's other work of the frame is published.
//!
//! [`AqueductPlugin::parallel_flush`]: crate::AqueductPlugin::parallel_flush
//! [`SubmitRefused`]: crate::SubmitRefused

use std::time::{Duration, Instant};

use aqueduct_engine::{EngineError, EngineResult, Pool, Queue, Semaphore, SemaphorePoint};
use bevy_ecs::prelude::*;
use bevy_tasks::ComputeTaskPool;

use crate::{
    AqueductFrame, BoxedOperation, FrameContext, FrameStalled, LaneId, LaneState, PendingReadback, SubmitRefused,
};

/// A lane's queue, as a component of the lane's entity: what its flush needs and nothing more.
/// The frame's work is moved in at the flush and its read-backs moved out after it.
#[derive(Component)]
pub(crate) struct LaneQueue {
    pub(crate) lane: LaneId,
    pub(crate) queue: Queue,
    /// Raised to `N` when the lane's work of frame `N` is done (a clone of the frame's).
    pub(crate) done: Semaphore,
    /// Host-visible memory read-backs are copied into.
    pub(crate) readback_pool: Pool,
    /// This frame's submitted operations, in the order systems submitted them; emptied by the
    /// lane's flush.
    pub(crate) operations: Vec<BoxedOperation>,
    /// This frame's read-backs of this lane, each with its place among all pending ones.
    pub(crate) readbacks: Vec<(usize, PendingReadback)>,
    /// Why operations were refused in this flush.
    pub(crate) refused: Vec<String>,
}

impl LaneQueue {
    /// A lane's queue entity, with no work yet.
    pub(crate) fn new(lane: LaneId, queue: Queue, done: Semaphore, readback_pool: Pool) -> Self {
        Self { lane, queue, done, readback_pool, operations: Vec::new(), readbacks: Vec::new(), refused: Vec::new() }
    }

    /// Publishes this lane's work of the frame as one batch (one doorbell), ending with a
    /// barrier that raises the lane's point of the frame. Read-backs get their snapshot first
    /// (an alloca is the queue's own call), then a copy into it inside the batch. Refusals go to
    /// `self.refused`; a queue that failed refuses the batch, which `begin_frame` reports.
    fn flush(&mut self, context: &FrameContext<'_>) {
        let Self { lane, queue, done, readback_pool, operations, readbacks, refused } = self;
        for (_, pending) in readbacks.iter_mut() {
            match queue.alloca(readback_pool, pending.length).submit() {
                Ok(snapshot) => pending.snapshot = Some(snapshot),
                Err(error) => refused.push(format!("read-back alloca: {error}")),
            }
        }
        let flushed = queue.batch(|batch| {
            for operation in operations.iter_mut() {
                if let Err(error) = operation.run(batch, context) {
                    refused.push(error.to_string());
                }
            }
            for (_, pending) in readbacks.iter_mut() {
                let Some(snapshot) = &pending.snapshot else { continue };
                let range = pending.source.range(pending.offset, pending.length);
                if let Err(error) = batch.copy(range, snapshot.range(0, pending.length)).submit() {
                    refused.push(format!("read-back copy: {error}"));
                    // A refused copy delivers nothing rather than stale bytes.
                    pending.snapshot = None;
                }
            }
            batch.barrier().signal(done.at(context.frame)).submit()?;
            Ok(())
        });
        if let Err(error) = flushed {
            tracing::debug!(%lane, %error, "aqueduct flush");
        }
        // Run, or refused with the batch of a failed queue: this frame's work either way.
        operations.clear();
    }
}

/// Publishes every lane's submitted work of the frame (see the module's contract), then raises the
/// frame timeline on the first lane behind every lane's point. Without a device it does nothing.
pub(crate) fn flush_frame(mut frame: ResMut<AqueductFrame>, mut lanes: Query<&mut LaneQueue>) {
    let frame = &mut *frame;
    let Ok(timeline) = &frame.timeline else { return };
    let number = frame.frame;
    hand_out(number, &mut frame.lanes, &mut frame.readbacks, &mut lanes);
    let context = FrameContext { frame: number, timeline };
    if frame.parallel && ComputeTaskPool::try_get().is_some_and(|pool| pool.thread_num() > 1) {
        lanes.par_iter_mut().for_each(|mut lane| lane.flush(&context));
    } else {
        lanes.iter_mut().for_each(|mut lane| lane.flush(&context));
    }
    if let Some((first, others)) = frame.lanes.split_first()
        && let Ok(lane) = lanes.get(first.entity)
    {
        // Separate from the lanes' own points, so that another lane's failure fails the timeline
        // but not the first lane.
        let waits: Vec<SemaphorePoint<'_>> = others.iter().map(|other| other.done.at(number)).collect();
        if let Err(error) = lane.queue.barrier().waits(&waits).signal(timeline.at(number)).submit() {
            tracing::debug!(lane = %lane.lane, %error, "aqueduct frame timeline");
        }
    }
    take_back(&frame.lanes, &mut frame.readbacks, &mut frame.refused, &mut lanes);
}

/// Moves each lane's submitted operations, and this frame's read-backs (with their places among
/// the pending ones), into its entity; earlier frames' read-backs stay in `readbacks`.
fn hand_out(
    number: u64,
    lanes: &mut [LaneState],
    readbacks: &mut Vec<PendingReadback>,
    queues: &mut Query<&mut LaneQueue>,
) {
    for state in lanes.iter_mut() {
        if let Ok(mut queue) = queues.get_mut(state.entity) {
            // A swap, so the frame gets the lane's emptied vector back and neither copies nor
            // allocates.
            if queue.operations.is_empty() {
                std::mem::swap(&mut queue.operations, &mut state.operations);
            } else {
                queue.operations.append(&mut state.operations);
            }
        }
    }
    for (place, pending) in std::mem::take(readbacks).into_iter().enumerate() {
        let entity = lanes.get(pending.lane).map(|state| state.entity);
        match entity.and_then(|entity| queues.get_mut(entity).ok()) {
            Some(mut queue) if pending.frame == number => queue.readbacks.push((place, pending)),
            _ => readbacks.push(pending),
        }
    }
}

/// Moves the flushed read-backs back behind the earlier frames' ones, in the order they were
/// asked for, and each lane's refusals into `refused`, in lane order.
fn take_back(
    lanes: &[LaneState],
    readbacks: &mut Vec<PendingReadback>,
    refused: &mut Vec<(LaneId, String)>,
    queues: &mut Query<&mut LaneQueue>,
) {
    let mut flushed = Vec::new();
    for state in lanes {
        if let Ok(mut queue) = queues.get_mut(state.entity) {
            flushed.append(&mut queue.readbacks);
            refused.extend(queue.refused.drain(..).map(|error| (state.lane, error)));
        }
    }
    flushed.sort_unstable_by_key(|(place, _)| *place);
    readbacks.extend(flushed.into_iter().map(|(_, pending)| pending));
}

/// Waits until no more than the limit of frames is in flight, sends what the flush refused, and
/// counts the frame. Without a device it only sends and counts.
pub(crate) fn pace_frame(
    mut frame: ResMut<AqueductFrame>,
    mut refused: MessageWriter<SubmitRefused>,
    mut stalled: MessageWriter<FrameStalled>,
) {
    let frame = &mut *frame;
    let number = frame.frame;
    if let Ok(timeline) = &frame.timeline {
        // Frame `number + 1` is recorded next: with this one, at most `limit` frames in flight.
        let waited_for = (number + 1).saturating_sub(u64::from(frame.frames_in_flight.get()));
        if let Err(error) = wait_for_frame(timeline, &frame.lanes, waited_for, frame.frame_timeout) {
            tracing::error!(frame = number, waited_for, %error, "aqueduct frame stalled");
            stalled.write(FrameStalled { frame: number, waited_for, error: error.to_string() });
        }
    }
    for (lane, error) in frame.refused.drain(..) {
        tracing::warn!(%lane, %error, "aqueduct operation refused");
        refused.write(SubmitRefused { lane, error });
    }
    frame.frame += 1;
}

/// Waits until every lane finished frame `target`: on the timeline, or, once a lane failed
/// (which fails the timeline), on each lane still running. One `timeout` for the whole wait.
fn wait_for_frame(timeline: &Semaphore, lanes: &[LaneState], target: u64, timeout: Duration) -> EngineResult<()> {
    let deadline = Instant::now() + timeout;
    match timeline.wait(target, timeout) {
        Err(EngineError::SemaphoreFailed(_)) => {}
        waited => return waited,
    }
    for lane in lanes.iter().filter(|lane| lane.done.failure().is_none()) {
        match lane.done.wait(target, deadline.saturating_duration_since(Instant::now())) {
            // Failed meanwhile: `QueueFailed` reports it, and its frames will not finish.
            Ok(()) | Err(EngineError::SemaphoreFailed(_)) => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}
