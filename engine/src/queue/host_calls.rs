//! Host calls: a host function run in the queue's order, and file reads and writes built on them.
//!
//! How one maps to AQL (each call `n` of a queue):
//! 1. **a barrier**: a row with no waits that raises the queue's internal *ready* timeline. It
//!    retires when every earlier packet of the queue has (every packet carries the barrier bit),
//!    and the drain that follows raises *ready* (the completion path). Skipped when the queue has
//!    already reached the call: nothing pending or in flight, or nothing enqueued since the last
//!    call's gate row and that call returned;
//! 2. **the host**: the queue's host-call thread, which runs calls one at a time in order, waits
//!    for the barrier's *ready* value and then for the call's own waits (on the host: the
//!    function runs there), runs the function, then raises the *gate* timeline to `n` and the
//!    call's signals from the host, or fails them with its error;
//! 3. **a gate for later packets**: a second row, enqueued right after the first, waits for *gate*
//!    `n`. No producer will publish that value, so the row parks, and every later row of the
//!    queue parks behind it, in queue order, until the gate opens. Nothing else waits: other
//!    queues, and this queue's earlier work, run on.
//!
//! The signals are promised when the call is enqueued, so no later submission may undercut them,
//! and the host raises them (as `Semaphore::signal` would) once the function returns. *gate*
//! never fails (an `Err` still opens it); *ready* fails only with the queue.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, MutexGuard};
use std::time::Duration;

use aqueduct_components::semaphore_table::{FailureRecord, WaitSource};
use aqueduct_systems::sync::{HostParking, SemaphoreSync};
use aqueduct_vocabulary::OperationKind;

use super::host_services::{HostCalls, HostServices, HostWait, Job, Work};
use super::pass_driver::PassDriver;
use crate::error::{EngineError, EngineResult};
use crate::semaphore::{Semaphore, SemaphorePoint, wait_all};

/// How long the host-call thread waits at a time before it looks whether its queue is gone.
const WAIT_SLICE: Duration = Duration::from_millis(50);
/// How long the host-call thread polls for the next call before it parks.
const SPIN_FOR_JOB: Duration = Duration::from_micros(50);

impl HostCalls {
    fn start(queue: &PassDriver) -> EngineResult<Self> {
        let ready = Semaphore::create(&queue.device, 0)?;
        let gate = Semaphore::create(&queue.device, 0)?;
        let (jobs, receiver) = channel();
        let closed = Arc::new(AtomicBool::new(false));
        let thread = {
            let (ready, gate, closed) = (ready.clone(), gate.clone(), closed.clone());
            std::thread::Builder::new()
                .name(format!("aqueduct-host-calls-{}", queue.index))
                .spawn(move || run(receiver, ready, gate, closed))
                .map_err(|error| EngineError::InvalidArgument {
                    what: "host call",
                    reason: format!("the host-call thread could not start: {error}"),
                })?
        };
        Ok(Self {
            ready,
            gate,
            calls: 0,
            readied: 0,
            rows_after_gate: 0,
            jobs: Some(jobs),
            closed,
            thread: Some(thread),
        })
    }
}

impl Drop for HostCalls {
    fn drop(&mut self) {
        // The queue is destroyed: its rows failed, so *ready* failed and no call waits on it.
        self.closed.store(true, Ordering::Release);
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The host-call thread: runs each call once its queue reached it and its waits are met.
fn run(jobs: Receiver<Job>, ready: Semaphore, gate: Semaphore, closed: Arc<AtomicBool>) {
    while let Some(job) = next_job(&jobs) {
        let reached = match job.ready {
            Some(value) => wait(&closed, &[ready.at(value)]),
            None => Ok(()),
        };
        let outcome =
            reached.and_then(|()| job.waits.iter().try_for_each(|point| wait_for(&closed, point))).and_then(|()| {
                // A panic is the function's error, not the thread's end.
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(job.work)) {
                    Ok(Ok(())) => Ok(()),
                    Ok(Err(error)) => Err(record(format!("host call failed: {error}"))),
                    Err(_) => Err(record("host call panicked".into())),
                }
            });
        // The gate first: the queue's later work may start while the signals are raised.
        gate.raise(job.call);
        for (semaphore, value) in &job.signals {
            match &outcome {
                Ok(()) => semaphore.raise(*value),
                Err(failure) => {
                    semaphore.fail_with(FailureRecord { status: failure.status, message: failure.message.clone() })
                }
            }
        }
    }
}

/// The next job: spins briefly first, since calls often come in bursts and a parked thread
/// costs a wake-up per call; then blocks until one comes or the queue is gone.
fn next_job(jobs: &Receiver<Job>) -> Option<Job> {
    let spin_until = std::time::Instant::now() + SPIN_FOR_JOB;
    while std::time::Instant::now() < spin_until {
        match jobs.try_recv() {
            Ok(job) => return Some(job),
            Err(std::sync::mpsc::TryRecvError::Empty) => std::hint::spin_loop(),
            Err(std::sync::mpsc::TryRecvError::Disconnected) => return None,
        }
    }
    jobs.recv().ok()
}

fn record(message: String) -> Arc<FailureRecord> {
    Arc::new(FailureRecord { status: None, message })
}

/// Waits for `points` in slices, giving up when the queue is gone.
fn wait(closed: &AtomicBool, points: &[SemaphorePoint]) -> Result<(), Arc<FailureRecord>> {
    loop {
        match wait_all(points, WAIT_SLICE) {
            Ok(()) => return Ok(()),
            Err(EngineError::SemaphoreFailed(failure)) => return Err(failure),
            Err(EngineError::Timeout { .. }) if !closed.load(Ordering::Acquire) => continue,
            Err(error) => return Err(record(format!("host call abandoned: {error}"))),
        }
    }
}

/// Waits for one of a call's waits in slices. While a handle to its semaphore lives, it waits
/// on the semaphore (holding it only for the slice); once none does, the slot says whether
/// the value can still come: a wait past every promise fails, as a queue's parked wait would.
fn wait_for(closed: &AtomicBool, point: &HostWait) -> Result<(), Arc<FailureRecord>> {
    loop {
        match point.semaphore.upgrade() {
            // One slice at a time, letting go of the handle in between.
            Some(inner) => match wait_all(&[Semaphore(inner).at(point.value)], WAIT_SLICE) {
                Ok(()) => return Ok(()),
                Err(EngineError::SemaphoreFailed(failure)) => return Err(failure),
                Err(EngineError::Timeout { .. }) if !closed.load(Ordering::Acquire) => {}
                Err(error) => return Err(record(format!("host call abandoned: {error}"))),
            },
            None => match point.table.wait_source(point.slot, point.value) {
                WaitSource::Satisfied => return Ok(()),
                WaitSource::Failed(failure) => {
                    return Err(point
                        .table
                        .failure_record(failure)
                        .unwrap_or_else(|| record("unknown failure".into())));
                }
                WaitSource::Queued(_) | WaitSource::Unknown if !closed.load(Ordering::Acquire) => {
                    point.table.park_until(std::time::Instant::now() + WAIT_SLICE, || {
                        point.table.value(point.slot) >= point.value || point.table.failure(point.slot).is_some()
                    });
                }
                WaitSource::Queued(_) | WaitSource::Unknown => {
                    return Err(record("host call abandoned: its queue was destroyed".into()));
                }
            },
        }
    }
}

/// Whether every row enqueued on `queue` has run and drained (takes the queue lock).
fn is_idle(queue: &PassDriver) -> bool {
    let (submitted, drained) = queue.epochs();
    submitted == drained && queue.idle(&queue.lock())
}

impl HostServices {
    fn host_calls(&self) -> MutexGuard<'_, Option<HostCalls>> {
        self.host_calls.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    /// Stops the host-call thread (the queue is destroyed and its rows failed).
    pub(crate) fn stop_host_calls(&self) {
        let calls = self.host_calls().take();
        drop(calls);
    }

    pub(crate) fn submit_host_call(
        &self,
        queue: &PassDriver,
        kind: OperationKind,
        work: Work,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) -> EngineResult<()> {
        queue.check_points(waits, signals)?;
        // Before `is_idle`, which takes the queue's lock a batch on this thread holds.
        queue.refuse_inside_batch()?;
        let mut guard = self.host_calls();
        let calls = match &mut *guard {
            Some(calls) => calls,
            none => none.insert(HostCalls::start(queue)?),
        };
        let call = calls.calls + 1;
        // 1. The barrier: the queue reached the call. Not needed when it already has: nothing
        // is pending or in flight, or nothing was enqueued since the last call's gate and that
        // call returned (a row enqueued by another thread meanwhile is concurrent with the call,
        // not before it).
        let after_last_call = calls.calls > 0
            && queue.endpoint.enqueued_rows.load(Ordering::Acquire) == calls.rows_after_gate
            && calls.gate.value() >= calls.calls;
        let ready = if after_last_call || is_idle(queue) {
            None
        } else {
            let value = calls.readied + 1;
            queue.submit(&[], &[calls.ready.at(value)], |row| row.set_operation(kind))?;
            calls.readied = value;
            Some(value)
        };
        calls.calls = call;
        let table = &queue.device.semaphores;
        for point in signals {
            table.record_parked_signal(point.semaphore.0.slot, point.value);
        }
        let waits = waits
            .iter()
            .map(|point| HostWait {
                semaphore: Arc::downgrade(&point.semaphore.0),
                table: queue.device.semaphores.clone(),
                slot: point.semaphore.0.slot,
                value: point.value,
            })
            .collect();
        let signals = signals.iter().map(|point| (point.semaphore.clone(), point.value)).collect();
        let job = Job { call, ready, work, waits, signals };
        let sent = calls.jobs.as_ref().is_some_and(|jobs| jobs.send(job).is_ok());
        if !sent {
            return Err(EngineError::InvalidArgument {
                what: "host call",
                reason: "the host-call thread is gone".into(),
            });
        }
        // 3. The gate: later work on the queue waits for the function to return.
        let mut gate_row = None;
        let result = queue.submit(&[calls.gate.at(call)], &[], |row| {
            row.set_operation(kind);
            gate_row = Some(row.row());
        });
        calls.rows_after_gate = gate_row.map_or(u64::MAX, |row| row + 1);
        result
    }
}
