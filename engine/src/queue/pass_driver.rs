//! The pass driver: the queue's one owner of its parts, and what runs the stages over its
//! state. It enqueues operations as rows of the queue's column table, runs passes of admission →
//! kernarg patching → AQL publication → reclaim over them (directly for an immediate call,
//! through the bevy schedule for a batch), and acts on where a pass stopped: park, drain for
//! room, or fail.
//!
//! **Who holds it.** Every [`Queue`](super::Queue) handle and the device's registry entry
//! ([`CaptureObserver`](super::capture_observer::CaptureObserver)) hold an `Arc` of it, and the
//! completion thread ([`CompletionWorker`](super::completion::CompletionWorker)) holds the
//! registry entry; the handles are counted in the endpoint's `handles`, the entry is not. It is dropped, with its host
//! services, once the last of them is.
//!
//! **Locks.** `state` is the queue lock: every method that takes `&mut QueueState` is called
//! with it held, and none takes another queue's lock while holding it except through
//! `try_lock` (a held drain's help, `completion.rs`). A host service's lock is taken before it,
//! never after ([`HostServices`]).
//!
//! The driver's other concerns are `impl PassDriver` blocks in their own files: `deferral.rs`
//! (parking), `failure.rs` (failing rows and epochs), `drain.rs` (draining retired epochs),
//! `device_target.rs` (the second HSA queue) and `teardown.rs` (destroying the queue).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use aqueduct_components::directory::QueueEndpoint;
use aqueduct_components::kernarg_ring::KernargRing;
use aqueduct_hsa::ring::AqlRing;
use aqueduct_hsa::sys::hsa_queue_t;
use aqueduct_systems::{DeviceLink, QueueStages};
use bevy_ecs::entity::Entity;

use aqueduct_components::dependency::{SignalOp, WaitOp};
use aqueduct_components::submission::{Payload, RowWriter, Verdict};
use aqueduct_systems::reclaim::DrainOrder;
use aqueduct_systems::sync::SemaphoreSync;
use aqueduct_systems::{QueueState, settle};

use super::QueueStats;
use super::capture::{self, capture_of};
use super::error_sink::ErrorSink;
use super::error_sink::unknown_failure;
use super::host_services::HostServices;
use super::thread_token;
use crate::device::DeviceShared;
use crate::error::{EngineError, EngineResult};
use crate::profile::QueueCapture;
use crate::semaphore::SemaphorePoint;
use aqueduct_components::directory::SubmissionCounters;

/// Who runs a pass: an immediate submission, a batch's flush, or the completion thread retrying
/// parked rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PassMode {
    Immediate,
    Batch,
    Readmit,
}

/// A queue's parts, and the driver of its passes (see the module header).
pub(crate) struct PassDriver {
    pub(crate) index: u16,
    pub(crate) agent: usize,
    pub(crate) device: Arc<DeviceShared>,
    pub(crate) endpoint: Arc<QueueEndpoint>,
    /// The stages compiled for the device's wait strategy, chosen when the queue was built.
    pub(crate) stages: QueueStages,
    pub(crate) hsa_queue: *mut hsa_queue_t,
    /// The queue lock, over the state the stages run on.
    state: Mutex<QueueState>,
    pub(crate) error_sink: Arc<ErrorSink>,
    pub(crate) services: HostServices,
    /// The priority it was made with (`QueueConfig`).
    pub(crate) priority: crate::config::QueuePriority,
    /// The kernarg ring's memory, freed once the HSA queue is destroyed.
    pub(crate) kernarg_memory: u64,
    /// The queue's entity in the device World.
    pub(crate) entity: Entity,
}

// SAFETY: `hsa_queue` is only passed to provider calls (thread-safe by the HSA spec) and to
// AqlRing, whose shared accesses are atomic; every other part is Send and Sync.
unsafe impl Send for PassDriver {}
// SAFETY: as above.
unsafe impl Sync for PassDriver {}

/// What [`PassDriver::new`] takes besides the state it builds.
pub(crate) struct DriverParts {
    pub index: u16,
    pub agent: usize,
    pub endpoint: Arc<QueueEndpoint>,
    pub hsa_queue: *mut hsa_queue_t,
    pub ring: AqlRing,
    pub error_sink: Arc<ErrorSink>,
    pub priority: crate::config::QueuePriority,
    pub kernarg_memory: u64,
    pub entity: Entity,
}

impl PassDriver {
    /// Builds the queue's state (rings, the epoch table and the submission-row table) and picks
    /// the stages compiled for the device's wait strategy. Owns `parts` afterwards; makes no
    /// provider call, so it cannot fail.
    pub(crate) fn new(device: &Arc<DeviceShared>, parts: DriverParts) -> Self {
        let DriverParts { index, agent, endpoint, hsa_queue, ring, error_sink, priority, kernarg_memory, entity } =
            parts;
        let link = DeviceLink {
            api: device.hsa.api(),
            semaphores: device.semaphores.clone(),
            directory: device.queues.directory.clone(),
            host_writes: device.agents[agent].host_writes.clone(),
        };
        let kernargs = KernargRing::new(kernarg_memory, device.config.kernarg_ring_bytes);
        let (state, stages) = aqueduct_systems::build_queue_state(
            index,
            ring,
            kernargs,
            endpoint.clone(),
            link,
            device.config.epochs_in_flight as usize,
            device.strategy,
        );
        Self {
            index,
            agent,
            device: device.clone(),
            endpoint,
            stages,
            hsa_queue,
            state: Mutex::new(state),
            error_sink,
            services: HostServices::default(),
            priority,
            kernarg_memory,
            entity,
        }
    }

    /// Takes the queue lock. A poisoned lock is taken anyway: every stage leaves the state
    /// consistent between rows, which is where a panic can stop it.
    pub(crate) fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    /// The queue lock if no one holds it; never waits.
    pub(crate) fn try_lock(&self) -> Option<MutexGuard<'_, QueueState>> {
        match self.state.try_lock() {
            Ok(guard) => Some(guard),
            Err(std::sync::TryLockError::Poisoned(poison)) => Some(poison.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// Epochs submitted and drained.
    pub(crate) fn epochs(&self) -> (u64, u64) {
        (self.endpoint.submitted.load(Ordering::Acquire), self.endpoint.drained.load(Ordering::Acquire))
    }

    /// Submissions, AQL packets, parked submissions and device-side wait barriers so far.
    pub(crate) fn stats(&self) -> QueueStats {
        let counters = &self.endpoint.counters;
        let (submitted, drained) = self.epochs();
        QueueStats {
            submissions: counters.submissions.load(Ordering::Relaxed),
            packets: counters.packets.load(Ordering::Relaxed),
            deferred: counters.deferred.load(Ordering::Relaxed),
            parked_high_water: counters.parked_high_water.load(Ordering::Relaxed),
            device_waits: counters.device_waits.load(Ordering::Relaxed),
            flushes: counters.flushes.load(Ordering::Relaxed),
            epochs_submitted: submitted,
            epochs_drained: drained,
        }
    }

    /// Its id in the replay capture (0: not captured).
    pub(crate) fn replay_id(&self) -> u64 {
        self.endpoint.replay_id.load(Ordering::Relaxed)
    }

    /// Checks waits and signals before anything is enqueued: same device, signals increasing.
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
        let owner = self.endpoint.batch_owner.load(Ordering::Relaxed);
        if owner != 0 && owner == thread_token() {
            return Err(EngineError::InvalidArgument {
                what: "queue",
                reason: "this thread is building a batch on the queue; enqueue through the batch".into(),
            });
        }
        Ok(())
    }

    /// Stages one operation as a submission row behind the pending ones (a batch's row). With
    /// `promise`, the signals are recorded as promised at once: a later row of the same batch
    /// may not undercut them before they are admitted.
    ///
    /// Never inlined, as `submit`: `scripts/stage-instructions.sh` counts a batch's operations by
    /// its calls.
    #[inline(never)]
    pub(crate) fn enqueue(
        &self,
        state: &mut QueueState,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
        promise: bool,
        fill: impl FnOnce(&mut RowWriter),
    ) -> EngineResult<()> {
        self.check_points(waits, signals)?;
        let entry_ns = capture::entry_stamp(&self.endpoint);
        let queue = &mut *state;
        self.enqueue_row(queue, entry_ns, waits, signals, promise, fill);
        Ok(())
    }

    /// Appends a row to the column table and fills it: its sequence (published to the endpoint),
    /// waits and signals, then the payload and kernargs from `stage`.
    fn enqueue_row(
        &self,
        queue: &mut QueueState,
        entry_ns: u64,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
        promise: bool,
        fill: impl FnOnce(&mut RowWriter),
    ) {
        let rows = &mut queue.rows;
        let row = rows.push();
        // Nothing the row names (semaphore slots, buffer addresses, kernel objects, a program) is
        // kept alive by it: an object whose last handle drops waits in the device World until
        // this queue's settled rows pass the count published here. The caller holds a handle to
        // each of them until the enqueueing returns, and a handle's drop orders this store before
        // the snapshot, so a relaxed store is enough.
        self.endpoint.enqueued_rows.store(rows.enqueued, Ordering::Relaxed);
        let mut writer = rows.writer(row);
        writer.set_entry_ns(entry_ns);
        for point in waits {
            writer.push_wait(WaitOp { semaphore: point.semaphore.0.slot, value: point.value });
        }
        for point in signals {
            writer.push_signal(SignalOp { semaphore: point.semaphore.0.slot, value: point.value });
            if promise {
                self.device.semaphores.record_parked_signal(point.semaphore.0.slot, point.value);
            }
        }
        fill(&mut writer);
    }

    /// Submits one operation now: enqueues it and runs the stages, so it is published (or parked
    /// behind earlier work) when this returns. Inputs are validated by the caller; from here on,
    /// the only failures are the queue's or a dependency's.
    ///
    /// The common case (nothing pending before it, and the pass publishes it) runs one pass of
    /// the stages on the one-row range; anything else goes to [`Self::run_pending`].
    ///
    /// Never inlined: `scripts/stage-instructions.sh` counts each submission from this frame
    /// (with 4 codegen units the optimizer folded it into each operation's function).
    #[inline(never)]
    pub(crate) fn submit(
        &self,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
        fill: impl FnOnce(&mut RowWriter),
    ) -> EngineResult<()> {
        self.refuse_inside_batch()?;
        #[cfg(feature = "tracy")]
        let _span = tracing::trace_span!("submit", queue = self.index).entered();
        self.check_points(waits, signals)?;
        let entry_ns = capture::entry_stamp(&self.endpoint);
        let mut guard = self.lock();
        let state = &mut *guard;
        let capture = capture_of(state);
        let queue = &mut *state;
        let alone = queue.rows.is_empty() && !queue.rows.parked;
        self.enqueue_row(queue, entry_ns, waits, signals, false, fill);
        let mut first_fault = None;
        if alone {
            let submitted_before = queue.epochs.submitted;
            (self.stages.run_pass)(queue);
            self.follow_pass(capture.as_deref(), queue, submitted_before);
            first_fault = queue.rows.pass.fault.map(EngineError::SubmissionFault);
            // Published whole: not stopped, and no program leg left to run.
            if queue.rows.is_empty() {
                SubmissionCounters::add(&self.endpoint.counters.submissions, 1);
                return first_fault.map_or(Ok(()), Err);
            }
            // A wait the device cannot resolve yet: park now. Another pass under this hold of
            // the lock would find the same verdict (what `run_pending` does with it too).
            if matches!(queue.rows.pass.stop, Some((_, Verdict::Defer))) {
                self.park(state);
                SubmissionCounters::add(&self.endpoint.counters.submissions, 1);
                return first_fault.map_or(Ok(()), Err);
            }
        }
        let result = self.run_pending(state, PassMode::Immediate);
        let result = match first_fault {
            Some(fault) => Err(fault),
            None => result,
        };
        if !matches!(result, Err(EngineError::SubmissionTooLarge { .. } | EngineError::Backpressure { .. })) {
            // Refused for ring space, a submission never entered the queue and is not counted.
            SubmissionCounters::add(&self.endpoint.counters.submissions, 1);
        }
        result
    }

    /// What follows a pass (the epochs after `submitted_before` are the ones it published), while
    /// this thread still holds the queue lock: the counters, a wake-up for parked work elsewhere,
    /// the capture's stamps, and what the pass's reclaim stage drained (a batch of retired
    /// epochs, so the completion thread of a busy queue finds nothing to do): the profile's
    /// records, the settled mark, wake-ups.
    // Inlined: out of line, the call costs the immediate path about 20 instructions a submission.
    #[inline(always)]
    fn follow_pass(&self, capture: Option<&QueueCapture>, queue: &mut QueueState, submitted_before: u64) {
        let pass = &queue.rows.pass;
        if pass.packets > 0 {
            SubmissionCounters::add(&self.endpoint.counters.packets, pass.packets);
            if pass.device_waits > 0 {
                SubmissionCounters::add(&self.endpoint.counters.device_waits, pass.device_waits);
            }
            // Only brings parked work forward (a wait may now be a device barrier); work that
            // waits for a value is woken, fenced, when the value arrives.
            if self.device.parked_queues.any_hint() {
                self.device.wake_deferred(Some(self.index));
            }
        }
        if let Some(capture) = capture {
            capture::note_pass(capture, queue, submitted_before);
        }
        if let Some((drained_before, outcome)) = queue.drain.take() {
            if let Some(capture) = capture {
                capture::harvest(&self.device, self.agent, capture, queue, drained_before, true);
            }
            settle::publish_settled(queue);
            self.after_drain(outcome);
        }
    }

    /// Publishes every pending row (a batch's flush), or parks them behind parked work.
    pub(crate) fn flush(&self, state: &mut QueueState) -> EngineResult<()> {
        if state.rows.is_empty() {
            return Ok(());
        }
        let result = self.run_pending(state, PassMode::Batch);
        // DESIGN §8's frame mark on each flush: a named (secondary) frame set, so it never splits
        // the program's own frames (`Device::frame_mark`).
        SubmissionCounters::add(&self.endpoint.counters.flushes, 1);
        #[cfg(feature = "tracy")]
        if let Some(client) = tracy_client::Client::running() {
            client.secondary_frame_mark(tracy_client::frame_name!("aqueduct flush"));
        }
        result
    }

    /// Runs passes of the stages over the pending rows until they are all published, or the
    /// front one must wait (parked). Rows that fail are failed and removed, and the passes go on
    /// with the rows behind them; the first error is returned.
    pub(super) fn run_pending(&self, state: &mut QueueState, mode: PassMode) -> EngineResult<()> {
        let mut deadline = None;
        let mut first_error = None;
        let rows = &state.rows;
        if rows.is_empty() && mode != PassMode::Readmit {
            return Ok(());
        }
        if mode != PassMode::Readmit && rows.parked {
            // Queue order: new rows wait behind parked ones.
            self.park(state);
            return Ok(());
        }
        loop {
            let queue = &mut *state;
            if queue.rows.is_empty() {
                break;
            }
            let submitted_before = queue.epochs.submitted;
            if mode == PassMode::Batch {
                state.run_schedule();
            } else {
                (self.stages.run_pass)(queue);
            }
            let capture = capture_of(state);
            let queue = &mut *state;
            self.follow_pass(capture.as_deref(), queue, submitted_before);
            let (fault, stop) = (queue.rows.pass.fault, queue.rows.pass.stop);
            if let Some(fault) = fault {
                // A fault took a submission's epoch (its signals fail when it retires).
                first_error.get_or_insert(EngineError::SubmissionFault(fault));
            }
            let Some((row, verdict)) = stop else { continue };
            match verdict {
                Verdict::Defer => {
                    if mode != PassMode::Readmit {
                        self.park(state);
                    }
                    return first_error.map_or(Ok(()), Err);
                }
                Verdict::Backpressure => {
                    // Reclaim here rather than waiting for the completion thread: this thread
                    // holds the queue lock, so it drains retired epochs itself.
                    if self.drain_retired(state, DrainOrder::Causal).epochs > 0 {
                        continue;
                    }
                    if self.error_sink.status.load(Ordering::Acquire) != 0 {
                        self.fail_queue(state); // fails every pending row too
                        if let Some(failure) = state.failure {
                            let record = self.device.semaphores.failure_record(failure).unwrap_or_else(unknown_failure);
                            first_error.get_or_insert(EngineError::QueueFailed(record));
                        }
                        continue;
                    }
                    if mode == PassMode::Readmit {
                        return first_error.map_or(Ok(()), Err); // retried after reclaim
                    }
                    let rows = &state.rows;
                    if rows.columns.payload[rows.slot(row)] == Payload::Execute {
                        // A program waits for room (or for its branch's drain) parked, not
                        // spinning: the completion thread resumes it after reclaim.
                        self.park(state);
                        return first_error.map_or(Ok(()), Err);
                    }
                    // Not `now + timeout`: that panics for Duration::MAX, a natural "never give up".
                    let timeout = self.device.config.submit_timeout;
                    let deadline =
                        *deadline.get_or_insert_with(|| crate::clock::deadline_after(Instant::now(), timeout));
                    if Instant::now() >= deadline {
                        let error = EngineError::Backpressure { waited: timeout };
                        if mode == PassMode::Immediate {
                            self.release_row(state, row); // refused: it never entered the queue
                        } else {
                            // A batch's rows were promised when enqueued: fail them so no waiter hangs.
                            let failure = self.record_failure(&error);
                            while !state.rows.is_empty() {
                                let row = state.rows.front;
                                self.fail_row(state, row, failure);
                            }
                        }
                        return Err(first_error.unwrap_or(error));
                    }
                    std::thread::yield_now();
                }
                Verdict::TooLarge | Verdict::BlockLimit => {
                    let rows = &state.rows;
                    let processed = rows.columns.program[rows.slot(row)].blocks_run;
                    let error = if verdict == Verdict::BlockLimit {
                        EngineError::LimitReached {
                            what: "blocks processed by one command-buffer execution",
                            limit: self.device.config.execution_block_limit as usize,
                        }
                    } else {
                        EngineError::SubmissionTooLarge {
                            reason: format!(
                                "{} packet ring, {}-byte kernarg ring",
                                self.device.config.queue_packets, self.device.config.kernarg_ring_bytes
                            ),
                        }
                    };
                    if mode == PassMode::Immediate && processed == 0 {
                        self.release_row(state, row); // refused: nothing counted on it yet
                    } else {
                        // A parked or batched submission's waits can resolve into more barrier
                        // packets than the ring holds only now, and a program can meet a block
                        // too large only after earlier legs ran: either way work already
                        // counted on will not finish, so its semaphores fail with the error (as a
                        // failed dependency would) and waiters hear of it instead of hanging.
                        let failure = self.record_failure(&error);
                        self.fail_row(state, row, failure);
                    }
                    first_error.get_or_insert(error);
                }
                Verdict::Fault(fault) => {
                    let error = EngineError::SubmissionFault(fault);
                    let failure = self.record_failure(&error);
                    self.fail_row(state, row, failure);
                    first_error.get_or_insert(error);
                }
                Verdict::DependencyFailed(failure) | Verdict::QueueFailed(failure) => {
                    self.fail_row(state, row, failure);
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
            state.rows.parked = false;
            self.device.parked_queues.unpark(self.index);
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Removes the front row, `row`, which will not run; the row settles with it.
    pub(super) fn release_row(&self, state: &mut QueueState, row: u64) {
        self.recycle_row(state, row);
        settle::publish_settled(state);
    }

    /// [`Self::release_row`] without publishing the settled mark (for a caller that releases
    /// many rows and publishes once).
    pub(super) fn recycle_row(&self, state: &mut QueueState, row: u64) {
        let rows = &mut state.rows;
        // A pass stops at the first row it cannot admit, after publishing every row before it,
        // so a refused or failed row is always the front one.
        debug_assert_eq!(rows.front, row, "only the front row leaves unpublished");
        if !rows.is_empty() {
            rows.pop_front();
            rows.release_spans();
        }
    }
}
