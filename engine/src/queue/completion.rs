//! Each queue's completion thread: it sleeps on the queue's epoch signal (or the next per-epoch
//! signal) and its control signal, then drains retired epochs nobody drained, fails everything
//! after a queue error, and retries parked submissions.
//!
//! A busy queue's submitter drains for itself, a batch at a time, after its pass
//! (`drain_retired_batch`). The thread covers the rest: the last submissions of a burst (it
//! sleeps until everything in flight retired, so their waiters never depend on a later submit)
//! and a long queue nobody submits to (a longer batch at a time). Once the queue's last handle
//! has dropped, it also destroys the queue when its work has drained or failed.
//!
//! [`CompletionWorker`] is the thread's own type: it holds the queue's registry entry, which
//! keeps the queue reachable from the device while the thread runs, and reaches the queue's
//! [`PassDriver`] through it (not a handle: it is not counted in the endpoint's `handles`). The thread takes the queue
//! lock only with `try_lock`, so it never waits behind a submitter.

use std::sync::atomic::Ordering;
use std::sync::{Arc, MutexGuard};

use aqueduct_abi::SignalCondition;
use aqueduct_hsa::sys::{enums, hsa_signal_t};
use aqueduct_systems::queue_state::DrainOutcome;
use aqueduct_systems::reclaim::{DrainOrder, SUBMITTER_DRAIN_BATCH};

use super::capture_observer::CaptureObserver;
use super::pass_driver::PassDriver;
use aqueduct_systems::QueueState;

/// How long to step back when a submitter holds the queue.
const BUSY_RETRY: std::time::Duration = std::time::Duration::from_micros(20);

/// Retired epochs the thread lets accumulate before waking while more are in flight: longer
/// than the submitter's batch, so while a submitter is active it drains first.
const COMPLETION_BATCH: u64 = 4 * SUBMITTER_DRAIN_BATCH;

/// The completion thread of one queue (see the module header).
pub(crate) struct CompletionWorker {
    /// The queue's registry entry, and through it the driver: while the worker holds it, the
    /// device reaches the queue (a capture joining, another queue's held drain, the engine's
    /// drop).
    observer: Arc<CaptureObserver>,
    /// `EngineConfig::completion_fallback` in the provider's timestamp ticks (what
    /// `hsa_amd_signal_wait_any` takes).
    timeout: u64,
}

impl CompletionWorker {
    /// The worker of the queue `observer` is the registry entry of.
    pub(crate) fn new(observer: Arc<CaptureObserver>, timeout: u64) -> Self {
        Self { observer, timeout }
    }

    fn driver(&self) -> &PassDriver {
        self.observer.driver()
    }

    /// The thread's loop, until the queue shuts down or the thread tears an orphaned queue down.
    pub(crate) fn run(self) {
        let (queue, timeout) = (self.driver(), self.timeout);
        let api = queue.device.hsa.api();
        let control = hsa_signal_t { handle: queue.endpoint.control_signal };
        loop {
            // Read before looking at the state: a poke after this point changes the value and ends
            // the wait below, so no wake-up is lost.
            // SAFETY: the control signal lives as long as the device.
            let control_seen = unsafe { (api.hsa_signal_load_scacquire)(control) };
            // This pass's drain stopped at an epoch whose producer queue has not drained
            // (`DrainOrder`): that queue pokes the control signal when it has, so only the control
            // signal is waited on. Only this pass's: a hold that a submitter's drain has since
            // passed must not keep the thread off its retirement signal (it did, and hung).
            let mut held = false;
            if queue.endpoint.shutdown.load(Ordering::Acquire) {
                return;
            }
            let failed = queue.error_sink.status.load(Ordering::Acquire) != 0;
            let parked = queue.device.parked_queues.must_readmit(queue.index);
            let (_, drained) = queue.epochs();
            if failed || parked || (queue.stages.device_retired)(&queue.endpoint) > drained {
                // Never queue behind a submitter: a blocked lock here turns every submission's
                // unlock into a futex wake. A busy queue is retried shortly (its submitter also
                // drains a retired batch after each pass, and everything when it runs out of room).
                let Some(mut state) = queue.try_lock() else {
                    std::thread::sleep(BUSY_RETRY);
                    continue;
                };
                if failed {
                    queue.fail_queue(&mut state);
                } else {
                    let Some(drain_held) = self.complete(state, parked) else {
                        std::thread::sleep(BUSY_RETRY);
                        continue;
                    };
                    held = drain_held;
                }
            }
            // Outside the queue lock: freeing takes the device World's.
            queue.device.release_settled();
            // No user handle is left: once its work has drained or failed, the thread destroys the
            // queue and ends.
            if queue.endpoint.handles.load(Ordering::Acquire) == 0 && queue.orphan_settled() && queue.tear_down_orphan()
            {
                return;
            }
            let (submitted, drained) = queue.epochs();
            let mut signals = [control, control];
            let mut conditions = [SignalCondition::Ne as u32; 2];
            let mut values = [control_seen, control_seen];
            // Sleep until a batch of epochs retired, or everything in flight did: one wake-up per
            // batch instead of one per submission, with no delay for the last submission of a burst.
            // While a host thread is parked (it pokes every completion thread when it parks, after
            // which this read sees it), each epoch is drained as it retires: the host may be waiting
            // for one that later, longer work would otherwise hold back.
            let target = if queue.device.semaphores.waiters.parked.load(Ordering::SeqCst) > 0 {
                drained + 1
            } else {
                submitted.min(drained + COMPLETION_BATCH).max(drained + 1)
            };
            let retirement =
                if failed || held { None } else { (queue.stages.retirement_wait)(&queue.endpoint, target, submitted) };
            let count = match retirement {
                Some(wait) => {
                    signals[1] = hsa_signal_t { handle: wait.signal };
                    conditions[1] = wait.condition as u32;
                    values[1] = wait.value;
                    2
                }
                // The control signal only: a publication after idle, or the drain of a queue this
                // one's drain is held on, pokes it.
                None => 1,
            };
            let mut satisfied = 0;
            // SAFETY: the arrays hold `count` live signals, conditions and values; the out-pointer
            // is valid.
            unsafe {
                (api.hsa_amd_signal_wait_any)(
                    count,
                    signals.as_mut_ptr(),
                    conditions.as_mut_ptr(),
                    values.as_mut_ptr(),
                    timeout,
                    enums::WAIT_STATE_BLOCKED,
                    &mut satisfied,
                )
            };
        }
    }

    /// The completion thread's drain, then its readmission of parked work. The drain is in causal
    /// order, and where that stops at an epoch that waited on another queue's epoch that queue
    /// has not drained, this thread drains that queue too if its lock is free, then goes on here.
    /// Two queues handing off to each other then drain in one thread: waiting for the other
    /// queue's completion thread instead costs a wake-up per epoch, which made a cross-queue
    /// chain drain (and so complete, for the host) at one epoch per wake-up (`edge/e2e/2048`,
    /// BENCHMARKS). This queue's lock is let go while the other queue drains, so a submitter to
    /// this queue does not wait out the help; and it helps only while a drain is awaited
    /// ([`Self::drain_awaited`]). Otherwise, or where it cannot help, the last drain registers
    /// ([`DrainOrder::Causal`]), so the other queue's drain wakes this thread. The wake-ups for
    /// queues held on what was drained go out once, at the end. `None` if a submitter took the
    /// lock meanwhile (the thread comes back shortly, as when it finds the lock taken); otherwise
    /// whether the drain is held, registered on its producer.
    fn complete<'q>(&'q self, mut state: MutexGuard<'q, QueueState>, parked: bool) -> Option<bool> {
        let mut total = DrainOutcome::default();
        let mut round = 0;
        let held = loop {
            if !self.drain_awaited() {
                total.add(self.driver().drain_unannounced(&mut state, DrainOrder::Causal));
                break total.held_on.is_some();
            }
            let outcome = self.driver().drain_unannounced(&mut state, DrainOrder::CausalProbe);
            total.add(outcome);
            let Some(producer) = outcome.held_on else { break false };
            drop(state);
            let helped = round < HELP_ROUNDS && self.help_drain(producer, &mut total);
            round += 1;
            let Some(again) = self.driver().try_lock() else {
                self.after_held_drains(total);
                return None;
            };
            state = again;
            if !helped {
                total.add(self.driver().drain_unannounced(&mut state, DrainOrder::Causal));
                break total.held_on.is_some();
            }
        };
        if parked {
            self.driver().readmit(&mut state);
        }
        drop(state);
        self.after_held_drains(total);
        Some(held)
    }

    /// Whether a drain's latency is waited on: a host thread is parked on a semaphore (it
    /// may wait for what the drain publishes), or some queue has parked work. Read on every
    /// round of help: a helping thread that went on after the waiter left would contend with
    /// the queues' submitters for their locks.
    fn drain_awaited(&self) -> bool {
        self.driver().device.semaphores.waiters.parked.load(Ordering::SeqCst) > 0
            || self.driver().device.parked_queues.any_hint()
    }

    /// Drains what retired on queue `producer`, on which this queue's drain is held, into
    /// `total`: whether it drained anything (not if its lock is taken or it is going away).
    fn help_drain(&self, producer: u16, total: &mut DrainOutcome) -> bool {
        if producer == self.driver().index {
            return false;
        }
        let Some(helped) = self.driver().device.queues.get(producer).and_then(|queue| queue.drain_for_waiter()) else {
            return false;
        };
        total.add(DrainOutcome { held_on: None, ..helped });
        helped.epochs > 0
    }

    /// [`PassDriver::after_drain`] for the drains of a helping episode: this queue drained as far as
    /// it could, so it needs no wake-up of its own.
    fn after_held_drains(&self, total: DrainOutcome) {
        self.driver().after_drain(DrainOutcome { wake: total.wake & !(1 << self.driver().index), ..total });
    }
}

/// Rounds of help in one [`CompletionWorker::complete`]: each drains the queue it is held on at least
/// one epoch further, so this bounds one call; what is left is drained on the thread's next
/// pass, which does not sleep while retired epochs remain.
const HELP_ROUNDS: usize = 256;
