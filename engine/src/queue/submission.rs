//! The submission driver: stage operations as submission rows of the queue World, run passes of
//! admission → kernarg patching → AQL publication over them (directly through the cached
//! `SystemState` for one row, or through the bevy schedule for a batch), and act on where a pass
//! stopped: park, drain for room, or fail.

use std::sync::atomic::Ordering;
use std::time::Instant;

use aqueduct_components::submission::{Payload, SignalOp, StagedSubmission, SubmissionRows, Verdict, WaitOp};
use aqueduct_systems::reclaim::DrainOrder;
use aqueduct_systems::sync::SemaphoreSync;
use aqueduct_systems::{QueueState, StageParams, ensure_free_row, row_params, settle, stage_params};
use bevy_ecs::prelude::*;

use super::core::{QueueCore, QueueCounters, QueueShared, thread_token};
use super::failure::unknown_failure;
use crate::error::{EngineError, EngineResult};
use crate::profile::QueueCapture;
use crate::semaphore::SemaphorePoint;

/// Where the pending rows ended up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Staged {
    Published,
    Parked,
}

/// Who runs a pass: an immediate submission, a batch's flush, or the completion thread retrying
/// parked rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PassMode {
    Immediate,
    Batch,
    Readmit,
}

impl QueueShared {
    /// Checks waits and signals before anything is staged: same device, signals increasing.
    pub(crate) fn check_points(&self, waits: &[SemaphorePoint], signals: &[SemaphorePoint]) -> EngineResult<()> {
        for point in waits.iter().chain(signals) {
            if point.semaphore.0.device.id != self.device.id {
                return Err(EngineError::ForeignObject { what: "semaphore" });
            }
        }
        for (index, point) in signals.iter().enumerate() {
            let mut current = self.device.semaphores.highest_promised(point.semaphore.0.slot);
            // Two signals of one semaphore in one submission must increase too.
            for earlier in &signals[..index] {
                if earlier.semaphore.0.slot == point.semaphore.0.slot {
                    current = current.max(earlier.value);
                }
            }
            if point.value <= current {
                return Err(EngineError::SemaphoreNotIncreasing { current, requested: point.value });
            }
        }
        Ok(())
    }

    /// Refuses a call from the thread building a batch on this queue: it holds the queue's lock,
    /// so the call would wait for itself.
    pub(crate) fn refuse_inside_batch(&self) -> EngineResult<()> {
        let owner = self.batch_owner.load(Ordering::Relaxed);
        if owner != 0 && owner == thread_token() {
            return Err(EngineError::InvalidArgument {
                what: "queue",
                reason: "this thread is building a batch on the queue; stage through the batch".into(),
            });
        }
        Ok(())
    }

    /// Stages one operation as a submission row behind the pending ones (a batch's row). With
    /// `promise`, the signals are recorded as promised at once: a later row of the same batch
    /// may not undercut them before they are admitted.
    pub fn stage(
        &self,
        core: &mut QueueCore,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
        promise: bool,
        stage: impl FnOnce(&mut StagedSubmission),
    ) -> EngineResult<()> {
        self.check_points(waits, signals)?;
        let entry_ns = self.capture_entry();
        // Through the cached row state: its resource and component ids are resolved once, not
        // looked up per call, and it fetches only what staging touches.
        let (mut queue, mut query) = row_params(&mut core.rows, &mut core.world);
        let (entity, row) = self.next_row(&mut queue.rows);
        let Ok((mut staged, _)) = query.get_mut(entity) else { unreachable!("submission rows keep their components") };
        self.fill_row(&mut staged, row, entry_ns, waits, signals, promise, stage);
        if queue.rows.free.is_empty() {
            ensure_free_row(&mut core.world);
        }
        Ok(())
    }

    /// Takes a free row and appends it to the pending rows; returns it with its sequence.
    fn next_row(&self, rows: &mut SubmissionRows) -> (Entity, u64) {
        // A free row is always left for the next staging: whoever takes the last one spawns
        // another once the parameters are released (`ensure_free_row`), off this path.
        let Some(entity) = rows.take_free() else { unreachable!("a free row is always left for the next staging") };
        // Nothing the row names (semaphore slots, buffer addresses, kernel objects, a program) is
        // kept alive by it: an object whose last handle drops waits in the device World until
        // this queue's settled rows pass the count published here. The caller holds a handle to
        // each of them until the staging returns, and a handle's drop orders this store before
        // the snapshot, so a relaxed store is enough.
        let row = rows.staged;
        rows.staged += 1;
        self.endpoint.staged_rows.store(rows.staged, Ordering::Relaxed);
        (entity, row)
    }

    /// Fills the row [`Self::next_row`] took: its sequence, waits and signals, then the payload
    /// and kernarg recipe from `stage`.
    #[allow(clippy::too_many_arguments)]
    fn fill_row(
        &self,
        staged: &mut StagedSubmission,
        row: u64,
        entry_ns: u64,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
        promise: bool,
        stage: impl FnOnce(&mut StagedSubmission),
    ) {
        staged.row = row;
        staged.submit_entry_ns = entry_ns;
        staged.waits.extend(waits.iter().map(|point| WaitOp { semaphore: point.semaphore.0.slot, value: point.value }));
        for point in signals {
            staged.signals.push(SignalOp { semaphore: point.semaphore.0.slot, value: point.value });
            if promise {
                self.device.semaphores.record_parked_signal(point.semaphore.0.slot, point.value);
            }
        }
        stage(staged);
    }

    /// Submits one operation now: stages it and runs the stages, so it is published (or parked
    /// behind earlier work) when this returns. Inputs are validated by the caller; from here on,
    /// the only failures are the queue's or a dependency's.
    ///
    /// The common case (nothing pending before it, and the pass publishes it) fetches the
    /// stages' parameters once and runs one pass; anything else goes to [`Self::run_pending`].
    pub fn submit(
        &self,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
        stage: impl FnOnce(&mut StagedSubmission),
    ) -> EngineResult<()> {
        self.refuse_inside_batch()?;
        #[cfg(feature = "tracy")]
        let _span = tracing::trace_span!("submit", queue = self.index).entered();
        self.check_points(waits, signals)?;
        let entry_ns = self.capture_entry();
        let mut guard = self.lock();
        let core = &mut *guard;
        let mut params = stage_params(&mut core.params, &mut core.world);
        let alone = params.0.rows.pending.is_empty() && !params.0.rows.parked;
        let submitted_before = params.0.epochs.submitted;
        let (entity, row) = self.next_row(&mut params.0.rows);
        let mut first_fault = None;
        {
            let (queue, query, epoch_rows) = &mut params;
            let Ok((mut staged, mut plan)) = query.get_mut(entity) else {
                unreachable!("submission rows keep their components")
            };
            self.fill_row(&mut staged, row, entry_ns, waits, signals, false, stage);
            if alone {
                // The one pending row, run on the columns just filled (no second lookup).
                (self.stages.run_row)(queue, entity, &mut staged, &mut plan, epoch_rows);
            }
        }
        if alone {
            let pass = &params.0.rows.pass;
            self.account_pass(pass.packets, pass.device_waits);
            first_fault = pass.fault.map(EngineError::SubmissionFault);
            if let Some(capture) = &core.capture {
                Self::note_pass(capture, &params.0, &mut params.2, submitted_before);
            }
            self.drain_retired_batch(core.capture.as_deref(), &mut params);
            // Published whole: not stopped, and no program segment left to run.
            if params.0.rows.pending.is_empty() {
                QueueCounters::add(&self.counters.submissions, 1);
                return first_fault.map_or(Ok(()), Err);
            }
        }
        if params.0.rows.free.is_empty() {
            ensure_free_row(&mut core.world);
        }
        let result = self.run_pending(core, PassMode::Immediate);
        let result = match first_fault {
            Some(fault) => Err(fault),
            None => result,
        };
        if !matches!(result, Err(EngineError::SubmissionTooLarge { .. } | EngineError::Backpressure { .. })) {
            // Refused for ring space, a submission never entered the queue and is not counted.
            QueueCounters::add(&self.counters.submissions, 1);
        }
        result.map(|_| ())
    }

    /// What follows a pass that published `packets`: the counters, and a wake-up for parked work
    /// elsewhere.
    fn account_pass(&self, packets: u64, device_waits: u64) {
        if packets == 0 {
            return;
        }
        QueueCounters::add(&self.counters.packets, packets);
        if device_waits > 0 {
            QueueCounters::add(&self.counters.device_waits, device_waits);
        }
        // Only brings parked work forward (a wait may now be a device barrier); work that waits
        // for a value is woken, fenced, when the value arrives.
        if self.device.parked_queues.any_hint() {
            self.device.wake_deferred(Some(self.index));
        }
    }

    /// After a pass, while this thread still holds the queue lock: drains what the device
    /// retired once a batch of epochs has, so the completion thread of a busy queue finds
    /// nothing to do (it covers idle queues, and retired epochs nobody drained).
    fn drain_retired_batch(&self, capture: Option<&QueueCapture>, params: &mut StageParams) {
        let drained_before = params.0.epochs.drained;
        if let Some(outcome) = (self.stages.drain_retired_batch)(&mut params.0, &mut params.2) {
            if let Some(capture) = capture {
                self.harvest(capture, &mut params.0, &mut params.2, drained_before, true);
            }
            settle::publish_settled(&params.0, &params.1, &params.2);
            self.after_drain(outcome);
        }
    }

    /// Publishes every pending row (a batch's flush), or parks them behind parked work.
    pub fn flush(&self, core: &mut QueueCore) -> EngineResult<()> {
        self.run_pending(core, PassMode::Batch).map(|_| ())
    }

    /// Runs passes of the stages over the pending rows until they are all published, or the
    /// front one must wait (parked). Rows that fail are failed and removed, and the passes go on
    /// with the rows behind them; the first error is returned.
    pub(super) fn run_pending(&self, core: &mut QueueCore, mode: PassMode) -> EngineResult<Staged> {
        let mut deadline = None;
        let mut first_error = None;
        let rows = &core.world.resource::<QueueState>().rows;
        if rows.pending.is_empty() && mode != PassMode::Readmit {
            return Ok(Staged::Published);
        }
        if mode != PassMode::Readmit && rows.parked {
            // Queue order: new rows wait behind parked ones.
            self.park(core);
            return Ok(Staged::Parked);
        }
        loop {
            let mut params = stage_params(&mut core.params, &mut core.world);
            if params.0.rows.pending.is_empty() {
                break;
            }
            let submitted_before = params.0.epochs.submitted;
            if mode == PassMode::Batch {
                core.schedule.run(&mut core.world);
                params = stage_params(&mut core.params, &mut core.world);
            } else {
                (self.stages.run_pass)(&mut params);
            }
            let pass = &params.0.rows.pass;
            let (packets, device_waits, fault, stop) = (pass.packets, pass.device_waits, pass.fault, pass.stop);
            self.account_pass(packets, device_waits);
            if let Some(capture) = &core.capture {
                Self::note_pass(capture, &params.0, &mut params.2, submitted_before);
            }
            self.drain_retired_batch(core.capture.as_deref(), &mut params);
            if let Some(fault) = fault {
                // A fault took a submission's epoch (its signals fail when it retires).
                first_error.get_or_insert(EngineError::SubmissionFault(fault));
            }
            let Some((row, verdict)) = stop else { continue };
            match verdict {
                Verdict::Defer => {
                    if mode != PassMode::Readmit {
                        self.park(core);
                    }
                    return first_error.map_or(Ok(Staged::Parked), Err);
                }
                Verdict::Backpressure => {
                    // Reclaim here rather than waiting for the completion thread: this thread
                    // holds the queue lock, so it drains retired epochs itself.
                    if self.drain_retired(core, DrainOrder::Causal).epochs > 0 {
                        continue;
                    }
                    if self.error_sink.status.load(Ordering::Acquire) != 0 {
                        self.fail_queue(core); // fails every pending row too
                        if let Some(failure) = core.world.resource::<QueueState>().failure {
                            let record = self.device.semaphores.failure_record(failure).unwrap_or_else(unknown_failure);
                            first_error.get_or_insert(EngineError::QueueFailed(record));
                        }
                        continue;
                    }
                    if mode == PassMode::Readmit {
                        return first_error.map_or(Ok(Staged::Parked), Err); // retried after reclaim
                    }
                    if core.world.get::<StagedSubmission>(row).is_some_and(|staged| staged.payload == Payload::Program)
                    {
                        // A program waits for room (or for its branch's drain) parked, not
                        // spinning: the completion thread resumes it after reclaim.
                        self.park(core);
                        return first_error.map_or(Ok(Staged::Parked), Err);
                    }
                    // Not `now + timeout`: that panics for Duration::MAX, a natural "never give up".
                    let timeout = self.device.config.submit_timeout;
                    let deadline =
                        *deadline.get_or_insert_with(|| crate::semaphore::deadline_after(Instant::now(), timeout));
                    if Instant::now() >= deadline {
                        let error = EngineError::Backpressure { waited: timeout };
                        if mode == PassMode::Immediate {
                            self.release_row(core, row); // refused: it never entered the queue
                        } else {
                            // A batch's rows were promised when staged: fail them so no waiter hangs.
                            let failure = self.record_failure(&error);
                            while let Some(&row) = core.world.resource::<QueueState>().rows.pending.front() {
                                self.fail_row(core, row, failure);
                            }
                        }
                        return Err(first_error.unwrap_or(error));
                    }
                    std::thread::yield_now();
                }
                Verdict::TooLarge | Verdict::ReplayLimit => {
                    let replayed =
                        core.world.get::<StagedSubmission>(row).map_or(0, |staged| staged.program.blocks_replayed);
                    let error = if verdict == Verdict::ReplayLimit {
                        EngineError::LimitReached {
                            what: "blocks replayed by one command-buffer execution",
                            limit: self.device.config.replay_block_limit as usize,
                        }
                    } else {
                        EngineError::SubmissionTooLarge {
                            reason: format!(
                                "{} packet ring, {}-byte kernarg ring",
                                self.device.config.queue_packets, self.device.config.kernarg_ring_bytes
                            ),
                        }
                    };
                    if mode == PassMode::Immediate && replayed == 0 {
                        self.release_row(core, row); // refused: nothing counted on it yet
                    } else {
                        // A parked or batched submission's waits can resolve into more barrier
                        // packets than the ring holds only now, and a program can meet a block
                        // too large only after earlier segments ran: either way work already
                        // counted on will not finish, so its semaphores fail with the error (as a
                        // failed dependency would) and waiters hear of it instead of hanging.
                        let failure = self.record_failure(&error);
                        self.fail_row(core, row, failure);
                    }
                    first_error.get_or_insert(error);
                }
                Verdict::Fault(fault) => {
                    let error = EngineError::SubmissionFault(fault);
                    let failure = self.record_failure(&error);
                    self.fail_row(core, row, failure);
                    first_error.get_or_insert(error);
                }
                Verdict::DependencyFailed(failure) | Verdict::QueueFailed(failure) => {
                    self.fail_row(core, row, failure);
                    let record = self.device.semaphores.failure_record(failure).unwrap_or_else(unknown_failure);
                    first_error.get_or_insert(if matches!(verdict, Verdict::QueueFailed(_)) {
                        EngineError::QueueFailed(record)
                    } else {
                        EngineError::DependencyFailed(record)
                    });
                }
                Verdict::Pending | Verdict::Admitted => unreachable!("a pass stops only on a decided, refused row"),
            }
        }
        if mode == PassMode::Readmit {
            core.world.resource_mut::<QueueState>().rows.parked = false;
            self.device.parked_queues.unpark(self.index);
        }
        first_error.map_or(Ok(Staged::Published), Err)
    }

    /// Clears a pending row that will not run and recycles it; the row settles with it.
    pub(super) fn release_row(&self, core: &mut QueueCore, row: Entity) {
        self.recycle_row(core, row);
        self.publish_settled(core);
    }

    /// [`Self::release_row`] without publishing the settled mark (for a caller that releases
    /// many rows and publishes once).
    pub(super) fn recycle_row(&self, core: &mut QueueCore, row: Entity) {
        if let Some(mut staged) = core.world.get_mut::<StagedSubmission>(row) {
            staged.clear();
        }
        let rows = &mut core.world.resource_mut::<QueueState>().into_inner().rows;
        if let Some(position) = rows.pending.iter().position(|&pending| pending == row) {
            rows.pending.remove(position);
        }
        rows.free.push(row);
    }
}
