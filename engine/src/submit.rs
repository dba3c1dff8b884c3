//! A queue's shared state and the submission driver: stage the operation in the queue World,
//! then run admission → kernarg patching → AQL publication directly through one cached
//! `SystemState`; park it when a wait cannot be resolved yet.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use aqueduct_components::Retained;
use aqueduct_components::directory::{CrossQueueWait, EPOCH_BASE, QueueEndpoint};
use aqueduct_components::program::Cursor;
use aqueduct_components::queue_state::{DeferredSubmission, DeviceLink, KernargRing, QueueRings};
use aqueduct_components::semaphore_table::FailureRecord;
use aqueduct_components::submission::{Payload, SignalOp, StagedSubmission, Verdict, WaitOp};
use aqueduct_hsa::HsaApi;
use aqueduct_hsa::ring::AqlRing;
use aqueduct_hsa::sys::{hsa_queue_t, hsa_status_t};
use aqueduct_systems::{SubmitParams, admission, kernarg, publication, reclaim, stage_params};
use bevy_ecs::prelude::*;

use crate::device::DeviceShared;
use crate::error::{EngineError, EngineResult};
use crate::semaphore::SemaphorePoint;

/// Where the provider's queue-error callback and the memory-fault handler report. Kept alive
/// until the HSA queue is destroyed, because the callback holds a raw pointer to it.
pub(crate) struct ErrorSink {
    pub status: AtomicU32,
    pub control: u64,
    pub api: &'static HsaApi,
    /// What the provider said beyond the status (a memory fault's address), if anything.
    pub description: std::sync::Mutex<Option<String>>,
}

/// The provider's asynchronous queue-error callback.
pub(crate) unsafe extern "C" fn queue_error_callback(
    status: hsa_status_t,
    _queue: *mut hsa_queue_t,
    data: *mut core::ffi::c_void,
) {
    // SAFETY: `data` is the ErrorSink registered with this queue, alive until hsa_queue_destroy
    // returns, and the provider calls back only before that.
    let sink = unsafe { &*data.cast::<ErrorSink>() };
    sink.fail(status, None);
}

/// Where a staged submission ended up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Staged {
    Published,
    Parked,
}

/// The queue World and the cached parameter state its stages run through.
pub(crate) struct QueueCore {
    pub world: World,
    pub params: SubmitParams,
}

/// Counters for reports.
#[derive(Default)]
pub(crate) struct QueueCounters {
    pub submissions: AtomicU64,
    pub packets: AtomicU64,
    pub deferred: AtomicU64,
    pub device_waits: AtomicU64,
}

pub(crate) struct QueueShared {
    pub index: u16,
    pub agent: usize,
    pub device: Arc<DeviceShared>,
    pub endpoint: Arc<QueueEndpoint>,
    pub hsa_queue: *mut hsa_queue_t,
    pub core: Mutex<QueueCore>,
    pub error_sink: Arc<ErrorSink>,
    pub shutdown: AtomicBool,
    pub counters: QueueCounters,
}

// SAFETY: `hsa_queue` is only passed to provider calls (thread-safe by the HSA spec) and to
// AqlRing, whose shared accesses are atomic.
unsafe impl Send for QueueShared {}
// SAFETY: as above.
unsafe impl Sync for QueueShared {}

impl QueueShared {
    pub fn lock(&self) -> MutexGuard<'_, QueueCore> {
        self.core.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    /// The queue World if no one holds it.
    pub fn try_lock(&self) -> Option<MutexGuard<'_, QueueCore>> {
        match self.core.try_lock() {
            Ok(guard) => Some(guard),
            Err(std::sync::TryLockError::Poisoned(poison)) => Some(poison.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// Builds the queue World: rings, the epoch rows (spawned once, recycled forever), the
    /// staging resources.
    pub fn build_world(
        device: &Arc<DeviceShared>,
        index: u16,
        ring: AqlRing,
        kernarg_base: u64,
        endpoint: Arc<QueueEndpoint>,
    ) -> QueueCore {
        let link = DeviceLink {
            api: device.hsa.api(),
            semaphores: device.semaphores.clone(),
            directory: device.directory.clone(),
        };
        let kernargs =
            KernargRing { base: kernarg_base, capacity: device.config.kernarg_ring_bytes, head: 0, reclaimed: 0 };
        let (world, params) = aqueduct_systems::build_queue_world(
            index,
            ring,
            kernargs,
            endpoint,
            link,
            device.config.epochs_in_flight as usize,
        );
        QueueCore { world, params }
    }

    /// Checks waits and signals before anything is staged: same device, signals increasing.
    fn check_points(&self, waits: &[SemaphorePoint], signals: &[SemaphorePoint]) -> EngineResult<()> {
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

    /// Submits one operation. `stage` fills the payload and kernarg recipe after the waits,
    /// signals and retained semaphores are staged. Inputs are validated by the caller; from
    /// here on, the only failures are the queue's or a dependency's.
    pub fn submit(
        &self,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
        stage: impl FnOnce(&mut StagedSubmission),
    ) -> EngineResult<()> {
        self.check_points(waits, signals)?;
        #[cfg(feature = "tracy")]
        let _span = tracing::trace_span!("submit", queue = self.index).entered();
        let mut guard = self.lock();
        let core = &mut *guard;
        {
            let (_, mut staged, _, _) = stage_params(&mut core.params, &mut core.world);
            staged.clear();
            staged
                .waits
                .extend(waits.iter().map(|point| WaitOp { semaphore: point.semaphore.0.slot, value: point.value }));
            // Waited-on semaphores are retained too, not only signalled ones: a parked wait (and a
            // device wait's failure check at reclaim) refers to the semaphore by slot, and a slot
            // released by a dropped handle is reused by the next semaphore created, which would
            // then satisfy or fail the wait in its place.
            staged.retained.extend(waits.iter().map(|point| point.semaphore.0.clone() as Retained));
            for point in signals {
                staged.signals.push(SignalOp { semaphore: point.semaphore.0.slot, value: point.value });
                staged.retained.push(point.semaphore.0.clone() as Retained);
            }
            stage(&mut staged);
        }
        let result = self.run_staged(core, false);
        if matches!(result, Err(EngineError::SubmissionTooLarge { .. } | EngineError::Backpressure { .. })) {
            // Refused for ring space, the submission never entered the queue: it is not counted,
            // and what it retained (buffers, semaphores, the executable) is let go now rather than
            // at the queue's next submission.
            core.world.resource_mut::<StagedSubmission>().clear();
        } else {
            self.counters.submissions.fetch_add(1, Ordering::Relaxed);
        }
        result.map(|_| ())
    }

    /// Runs the stages on what is staged. `readmitting` is set when the staged submission is the
    /// head of the parked list (so it must not park behind itself).
    fn run_staged(&self, core: &mut QueueCore, readmitting: bool) -> EngineResult<Staged> {
        // Not `now + timeout`: that panics for Duration::MAX, a natural "never give up".
        let deadline = crate::semaphore::deadline_after(Instant::now(), self.device.config.submit_timeout);
        loop {
            let (mut rings, mut staged, mut plan, mut rows) = stage_params(&mut core.params, &mut core.world);
            if !readmitting && !rings.deferred.is_empty() {
                self.park(core);
                return Ok(Staged::Parked);
            }
            admission::admit(&mut rings, &staged, &mut plan);
            match plan.verdict {
                Verdict::Admitted => {
                    kernarg::patch_kernargs(&staged, &plan);
                    let published = publication::publish(&mut rings, &mut staged, &mut plan, &mut rows);
                    self.counters.packets.fetch_add(plan.packets, Ordering::Relaxed);
                    let barriers = plan.device_waits.iter().filter(|wait| wait.barrier).count() as u64;
                    if barriers > 0 {
                        self.counters.device_waits.fetch_add(barriers, Ordering::Relaxed);
                    }
                    let was_idle = plan.epoch == rings.epochs.reclaimed + 1;
                    let strategy = rings.strategy;
                    // BarrierAnd completion threads sleep on the control signal while idle.
                    if strategy == CrossQueueWait::BarrierAnd && was_idle {
                        self.device.poke(self.endpoint.control_signal);
                    }
                    if self.device.deferred_queues.load(Ordering::Relaxed) != 0 {
                        self.device.wake_deferred(Some(self.index));
                    }
                    // A fault took the submission's epoch (its signals fail when it retires).
                    published.map_err(EngineError::SubmissionFault)?;
                    if staged.payload == Payload::Program && staged.program.cursor != Cursor::Done {
                        continue; // the next segment, if there is room for it now
                    }
                    return Ok(Staged::Published);
                }
                Verdict::Defer => {
                    if readmitting {
                        return Ok(Staged::Parked);
                    }
                    self.park(core);
                    return Ok(Staged::Parked);
                }
                Verdict::Backpressure => {
                    // Reclaim here rather than waiting for the completion thread: this thread
                    // holds the queue lock, so it drains retired epochs itself.
                    let retired = rings.endpoint.device_retired();
                    if retired > rings.epochs.reclaimed {
                        let outcome = reclaim::drain(&mut rings, &mut rows, retired);
                        self.after_drain(outcome);
                        continue;
                    }
                    if self.error_sink.status.load(Ordering::Acquire) != 0 {
                        self.fail_queue(core);
                        continue;
                    }
                    if readmitting {
                        return Ok(Staged::Parked); // the completion thread retries after reclaim
                    }
                    if staged.payload == Payload::Program {
                        // A program waits for room (or for its branch's drain) parked, not
                        // spinning: the completion thread resumes it after reclaim.
                        self.park(core);
                        return Ok(Staged::Parked);
                    }
                    if Instant::now() >= deadline {
                        return Err(EngineError::Backpressure { waited: self.device.config.submit_timeout });
                    }
                    std::thread::yield_now();
                }
                Verdict::TooLarge | Verdict::ReplayLimit => {
                    let error = if plan.verdict == Verdict::ReplayLimit {
                        EngineError::LimitReached {
                            what: "blocks replayed by one command-buffer execution",
                            limit: staged.program.block_limit as usize,
                        }
                    } else {
                        EngineError::SubmissionTooLarge {
                            reason: format!(
                                "{} packet ring, {}-byte kernarg ring",
                                self.device.config.queue_packets, self.device.config.kernarg_ring_bytes
                            ),
                        }
                    };
                    if readmitting || staged.program.blocks_replayed > 0 {
                        // A parked submission's waits can resolve into more barrier packets than
                        // the ring holds only now, and a program can meet a block too large only
                        // after earlier segments ran: either way work already counted on will
                        // not finish, so its semaphores fail with the error (as a failed
                        // dependency would) and waiters hear of it instead of hanging.
                        let failure = self
                            .device
                            .semaphores
                            .record_failure(FailureRecord { status: None, message: error.to_string() });
                        self.fail_staged(&mut staged, failure);
                    }
                    return Err(error);
                }
                Verdict::Fault(fault) => {
                    let error = EngineError::SubmissionFault(fault);
                    let failure = self
                        .device
                        .semaphores
                        .record_failure(FailureRecord { status: None, message: error.to_string() });
                    self.fail_staged(&mut staged, failure);
                    return Err(error);
                }
                Verdict::DependencyFailed(failure) | Verdict::QueueFailed(failure) => {
                    let queue_failed = matches!(plan.verdict, Verdict::QueueFailed(_));
                    self.fail_staged(&mut staged, failure);
                    let record = self.device.semaphores.failure_record(failure).unwrap_or_else(unknown_failure);
                    return Err(if queue_failed {
                        EngineError::QueueFailed(record)
                    } else {
                        EngineError::DependencyFailed(record)
                    });
                }
                Verdict::Pending => unreachable!("admission always decides"),
            }
        }
    }

    /// A staged submission that will never run: its signal semaphores fail with `failure` and
    /// what it retained is let go. Parked work on other queues may wait on those semaphores, so
    /// it is woken now (otherwise each hop of a chain of parked queues waits out a completion
    /// thread's 100 ms sleep).
    fn fail_staged(&self, staged: &mut StagedSubmission, failure: u32) {
        let table = &self.device.semaphores;
        for signal in staged.signals.drain(..) {
            table.fail(signal.semaphore, failure);
        }
        staged.retained.clear();
        table.notify();
        if self.device.deferred_queues.load(Ordering::Relaxed) != 0 {
            self.device.wake_deferred(Some(self.index));
        }
    }

    /// Moves the staged submission into a parked entity, behind any already parked.
    fn park(&self, core: &mut QueueCore) {
        let staged = core.world.resource_mut::<StagedSubmission>().into_inner();
        // Its signals are promises already: a host or queue signal must not go below them while
        // it waits (publication records them as queued signals only on admission).
        for signal in &staged.signals {
            self.device.semaphores.record_parked_signal(signal.semaphore, signal.value);
        }
        let parked = Box::new(core::mem::take(staged));
        let entity = core.world.spawn(DeferredSubmission(parked)).id();
        core.world.resource_mut::<QueueRings>().deferred.push_back(entity);
        self.device.deferred_queues.fetch_or(1 << self.index, Ordering::AcqRel);
        self.counters.deferred.fetch_add(1, Ordering::Relaxed);
        // The completion thread retries parked work when semaphores move; poke it in case the
        // wait is already resolvable by the time it looks.
        self.device.poke(self.endpoint.control_signal);
    }

    /// Tries to admit parked submissions in order; stops at the first that still cannot go.
    pub fn readmit(&self, core: &mut QueueCore) {
        while let Some(&entity) = core.world.resource::<QueueRings>().deferred.front() {
            let Some(mut parked) = core.world.get_mut::<DeferredSubmission>(entity) else { break };
            let mut staged_box = core::mem::take(&mut parked.0);
            core::mem::swap(&mut *staged_box, &mut *core.world.resource_mut::<StagedSubmission>());
            let still_parked = matches!(self.run_staged(core, true), Ok(Staged::Parked));
            if still_parked {
                core::mem::swap(&mut *staged_box, &mut *core.world.resource_mut::<StagedSubmission>());
                if let Some(mut parked) = core.world.get_mut::<DeferredSubmission>(entity) {
                    parked.0 = staged_box;
                }
                break;
            }
            core.world.resource_mut::<QueueRings>().deferred.pop_front();
            core.world.despawn(entity);
        }
        if core.world.resource::<QueueRings>().deferred.is_empty() {
            self.device.deferred_queues.fetch_and(!(1 << self.index), Ordering::AcqRel);
        }
    }

    /// Drains epochs the device retired.
    pub fn drain_retired(&self, core: &mut QueueCore) {
        #[cfg(feature = "tracy")]
        let _span = tracing::trace_span!("completion_drain", queue = self.index).entered();
        let (mut rings, _, _, mut rows) = stage_params(&mut core.params, &mut core.world);
        let retired = rings.endpoint.device_retired();
        if retired > rings.epochs.reclaimed {
            let outcome = reclaim::drain(&mut rings, &mut rows, retired);
            self.after_drain(outcome);
        }
    }

    fn after_drain(&self, outcome: reclaim::DrainOutcome) {
        if outcome.signals + outcome.failures > 0 && self.device.deferred_queues.load(Ordering::Relaxed) != 0 {
            self.device.wake_deferred(None);
        }
    }

    /// The queue's sticky error, recorded once.
    fn queue_failure(&self, core: &mut QueueCore, status: Option<u32>, message: String) -> u32 {
        if let Some(failure) = core.world.resource::<QueueRings>().failure {
            return failure;
        }
        self.device.semaphores.record_failure(FailureRecord { status, message })
    }

    /// The provider reported a queue error: drain what retired cleanly, then fail the rest.
    pub fn fail_queue(&self, core: &mut QueueCore) {
        if core.world.resource::<QueueRings>().failure.is_some() {
            return;
        }
        self.drain_retired(core);
        let status = self.error_sink.status.load(Ordering::Acquire);
        let described = self.error_sink.description.lock().unwrap_or_else(|poison| poison.into_inner()).clone();
        let detail = if self.device.hsa.kind() == aqueduct_hsa::ProviderKind::Soft {
            aqueduct_hsa::soft::queue_error_detail(self.hsa_queue).ok().flatten().map(|(_, detail)| detail)
        } else {
            None
        };
        let detail = match (described, detail) {
            (Some(described), Some(detail)) => Some(format!("{described}: {detail}")),
            (described, detail) => described.or(detail),
        };
        let message = format!(
            "queue {} error {status:#x} ({}){}",
            self.index,
            self.device.hsa.status_string(status),
            detail.map(|detail| format!(": {detail}")).unwrap_or_default()
        );
        let failure = self.queue_failure(core, Some(status), message);
        self.fail_everything(core, failure);
    }

    /// Fails every in-flight and parked submission with `failure` and makes it sticky.
    pub fn fail_everything(&self, core: &mut QueueCore, failure: u32) {
        {
            let (mut rings, _, _, mut rows) = stage_params(&mut core.params, &mut core.world);
            reclaim::fail_in_flight(&mut rings, &mut rows, failure);
        }
        let parked: Vec<Entity> = core.world.resource_mut::<QueueRings>().deferred.drain(..).collect();
        for entity in parked {
            if let Some(parked) = core.world.get::<DeferredSubmission>(entity) {
                for signal in &parked.0.signals {
                    self.device.semaphores.fail(signal.semaphore, failure);
                }
            }
            core.world.despawn(entity);
        }
        self.device.deferred_queues.fetch_and(!(1 << self.index), Ordering::AcqRel);
        self.device.semaphores.notify();
        self.device.wake_deferred(None);
    }

    /// Shutdown after the HSA queue is destroyed: drain what retired, fail the rest.
    pub fn abandon(&self, core: &mut QueueCore) {
        self.drain_retired(core);
        let rings = core.world.resource::<QueueRings>();
        if rings.failure.is_none() && (rings.epochs.submitted > rings.epochs.reclaimed || !rings.deferred.is_empty()) {
            let message = format!("queue {} was destroyed with work in flight", self.index);
            let failure = self.queue_failure(core, None, message);
            self.fail_everything(core, failure);
        }
    }

    /// Epochs submitted and drained.
    pub fn epochs(&self) -> (u64, u64) {
        (self.endpoint.submitted.load(Ordering::Acquire), self.endpoint.reclaimed.load(Ordering::Acquire))
    }

    /// The value the completion thread compares the epoch signal against.
    pub fn drained_epoch_value(reclaimed: u64) -> i64 {
        EPOCH_BASE - reclaimed as i64
    }
}

fn unknown_failure() -> Arc<FailureRecord> {
    Arc::new(FailureRecord { status: None, message: "unknown failure".into() })
}
