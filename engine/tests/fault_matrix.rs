//! The fault matrix. Three faults are injected into one submission:
//! - a kernel fault on its packet;
//! - a stall that the host gives up on (it fails the submission's semaphore);
//! - a stall whose queue is then cancelled.
//!
//! The faulting submission is each operation kind in turn: a dispatch, a fill, a copy, an update,
//! a barrier, or a command-buffer execution (the fault lands in one of its blocks). It is placed:
//! - directly under a host waiter;
//! - as the producer of a cross-queue wait;
//! - as the consumer of one, with a dependent of its own on a third queue.
//!
//! Every case runs on both wait strategies. Cross-queue cases run twice: once where the wait is
//! resolved on the device (the producer is published first), once where it parks (the consumer
//! is submitted first).
//!
//! Each case checks three things:
//! - every dependent, host or queue, fails with the faulting submission's own record;
//! - no wait reaches the hang timeout;
//! - every queue, semaphore and buffer is gone once the handles drop.
//!
//! The time from the fault to the error a host waiter sees is measured, never asserted. Its
//! percentiles are printed for docs/RELIABILITY.md
//! (`cargo test --release -p aqueduct-engine --test fault_matrix -- --nocapture`).

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use aqueduct_engine::{
    BindingTable, Buffer, CommandBuffer, CommandBufferUsage, Dispatch, EngineError, FailureRecord, Queue, Semaphore,
    SemaphorePoint, Submitted, WaitStrategy,
};
use aqueduct_soft_hsa::Fault;
use common::*;

/// HSA_STATUS_ERROR_EXCEPTION, the status an injected kernel fault fails its queue with.
const FAULT_STATUS: u32 = 0x1016;
const WORDS: u32 = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FaultKind {
    KernelFault,
    /// The submission stalls; the host gives up and fails the semaphore it would signal.
    StallCancelled,
    /// The submission stalls and its queue is cancelled.
    StallQueueCancelled,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Operation {
    Dispatch,
    Fill,
    Copy,
    Update,
    Barrier,
    CommandBuffer,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Position {
    /// The faulting submission, under a host waiter.
    Direct,
    /// It produces what another queue's submission waits on.
    Producer,
    /// It waits on another queue's healthy submission, and a third queue waits on it.
    Consumer,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resolution {
    /// The producer is published before its consumer: the wait can be a device barrier.
    Device,
    /// The consumer is submitted first: its wait parks until the producer exists.
    Parked,
}

#[derive(Clone, Copy, Debug)]
struct Case {
    strategy: WaitStrategy,
    fault: FaultKind,
    operation: Operation,
    position: Position,
    resolution: Resolution,
}

/// What one case's operations write to and run.
struct Materials {
    kernels: TestKernels,
    source: Buffer,
    target: Buffer,
    command_buffer: CommandBuffer,
}

impl Materials {
    fn new(engine: &aqueduct_engine::Engine) -> Self {
        let device = engine.device();
        let kernels = test_kernels(engine);
        let source = host_buffer(device, &[7; 4 * WORDS as usize]);
        let target = host_buffer(device, &[0; 4 * WORDS as usize]);
        // An execution of several packets: a fill, a barrier, then a dispatch.
        let mut command_buffer = device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
        command_buffer.fill(&target, &[1, 2, 3, 4]).unwrap();
        command_buffer.barrier().unwrap();
        let bindings = [target.whole().into()];
        let constants = [5, WORDS];
        let dispatch = Dispatch::grid([WORDS, 1, 1]).workgroup([16, 1, 1]).bindings(&bindings).constants(&constants);
        command_buffer.dispatch(&kernels.store_value, &dispatch).unwrap();
        command_buffer.finish().unwrap();
        Self { kernels, source, target, command_buffer }
    }

    /// Submits `operation` on `queue`.
    fn submit(
        &self,
        queue: &Queue,
        operation: Operation,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) -> Result<Submitted, EngineError> {
        let target = self.target.whole();
        match operation {
            Operation::Dispatch => {
                let (bindings, constants) = ([target], [9, WORDS]);
                let dispatch =
                    Dispatch::grid([WORDS, 1, 1]).workgroup([16, 1, 1]).bindings(&bindings).constants(&constants);
                queue.dispatch(&self.kernels.store_value, &dispatch).waits(waits).signals(signals).submit()
            }
            Operation::Fill => queue.fill(target, &[0xAB; 4]).waits(waits).signals(signals).submit(),
            Operation::Copy => queue.copy(self.source.whole(), target).waits(waits).signals(signals).submit(),
            Operation::Update => queue.update(&self.target, 0, &[1, 2, 3, 4]).waits(waits).signals(signals).submit(),
            Operation::Barrier => queue.barrier().waits(waits).signals(signals).submit(),
            Operation::CommandBuffer => {
                queue.execute(&self.command_buffer, &BindingTable::default()).waits(waits).signals(signals).submit()
            }
        }
    }
}

/// A host thread waiting on `point`: it returns the failure it saw and when it saw it.
fn waiter(semaphore: Semaphore, value: u64) -> std::thread::JoinHandle<(Result<(), EngineError>, Instant)> {
    std::thread::spawn(move || {
        let result = semaphore.wait(value, TIMEOUT);
        (result, Instant::now())
    })
}

/// Takes the result of submitting something that depends on the faulting submission. A kernel
/// fault needs no host step, so it may already have failed the queue, or the semaphore the
/// dependent waits on, when the dependent is submitted: the engine then refuses the dependent
/// with that failure and fails its signals, which the checks after it still look for.
fn dependent_submitted(result: Result<Submitted, EngineError>, case: &Case) {
    match result {
        Ok(_) => {}
        Err(EngineError::DependencyFailed(_) | EngineError::QueueFailed(_)) if case.fault == FaultKind::KernelFault => {
        }
        Err(error) => panic!("{case:?}: a dependent of the fault was refused: {error}"),
    }
}

fn failure_of(result: Result<(), EngineError>, what: &str, case: &Case) -> Arc<FailureRecord> {
    match result {
        Err(EngineError::SemaphoreFailed(record)) => record,
        other => panic!("{case:?}: {what}: expected the fault's failure, got {other:?}"),
    }
}

/// Runs one case; returns the time from the fault to the error a host waiter saw, and whether
/// that error had to wait for a stalled producer to be released.
fn run(case: Case) -> (Duration, bool) {
    let engine = engine(case.strategy);
    let device = engine.device().clone();
    let materials = Materials::new(&engine);
    let faulty = queue(&device);
    let other = queue(&device);
    let third = queue(&device);
    let semaphore = || device.create_semaphore(0).unwrap();
    // `upstream`: the healthy producer a consumer waits on; `faulted`: what the faulting
    // submission signals; `dependent`: what waits on it signals; `downstream`: a third queue's
    // submission after `dependent` (Consumer position only).
    let (upstream, faulted, dependent, downstream) = (semaphore(), semaphore(), semaphore(), semaphore());

    let arm = |fault: Fault| fault_next(&faulty, fault);
    let fault = match case.fault {
        FaultKind::KernelFault => Fault::KernelFault { status: FAULT_STATUS },
        FaultKind::StallCancelled | FaultKind::StallQueueCancelled => Fault::Stall,
    };
    // The faulting submission and what depends on it, in the order the resolution asks for.
    let submit_faulty = |waits: &[SemaphorePoint]| {
        arm(fault);
        materials.submit(&faulty, case.operation, waits, &[faulted.at(1)]).unwrap();
    };
    let mut trigger: Instant;
    let host_waiter;
    match case.position {
        Position::Direct => {
            host_waiter = waiter(faulted.clone(), 1);
            trigger = Instant::now();
            submit_faulty(&[]);
            // Queue order: a submission behind it on the same queue.
            dependent_submitted(materials.submit(&faulty, Operation::Barrier, &[], &[dependent.at(1)]), &case);
        }
        Position::Producer => {
            host_waiter = waiter(dependent.clone(), 1);
            let consume = || {
                let consumed = materials.submit(&other, case.operation, &[faulted.at(1)], &[dependent.at(1)]);
                dependent_submitted(consumed, &case);
            };
            if case.resolution == Resolution::Parked {
                consume();
                trigger = Instant::now();
                submit_faulty(&[]);
            } else {
                trigger = Instant::now();
                submit_faulty(&[]);
                consume();
            }
        }
        Position::Consumer => {
            host_waiter = waiter(downstream.clone(), 1);
            let produce = || materials.submit(&other, Operation::Dispatch, &[], &[upstream.at(1)]).unwrap();
            if case.resolution == Resolution::Parked {
                submit_faulty(&[upstream.at(1)]);
                trigger = Instant::now();
                produce();
            } else {
                produce();
                trigger = Instant::now();
                submit_faulty(&[upstream.at(1)]);
            }
            dependent_submitted(materials.submit(&third, case.operation, &[faulted.at(1)], &[dependent.at(1)]), &case);
            dependent_submitted(third.barrier().wait(dependent.at(1)).signal(downstream.at(1)).submit(), &case);
        }
    }

    // The stalls end the host's way.
    let mut faulty = Some(faulty);
    let released = std::cell::Cell::new(false);
    match case.fault {
        FaultKind::KernelFault => {}
        FaultKind::StallCancelled => {
            // Wait until the stall holds the submission, then give up on it.
            std::thread::sleep(Duration::from_millis(2));
            trigger = Instant::now();
            faulted.fail("the host gave up on a stalled submission");
            // A dependent already published behind a barrier on the stalled epoch cannot be
            // recalled: it fails when that epoch retires (docs/design/engine.md, *Errors*). The stall
            // then ends, and the time is counted from there.
            if !eventually(Duration::from_millis(20), || host_waiter.is_finished()) {
                released.set(true);
                trigger = Instant::now();
                let queue = faulty.as_ref().expect("the stalled queue");
                release(queue, || host_waiter.is_finished());
            }
        }
        FaultKind::StallQueueCancelled => {
            std::thread::sleep(Duration::from_millis(2));
            trigger = Instant::now();
            faulty.take().expect("the faulty queue").cancel();
        }
    }

    let (result, seen) = host_waiter.join().unwrap();
    let record = failure_of(faulted.wait(1, TIMEOUT), "the faulting submission's semaphore", &case);
    let latency = seen.saturating_duration_since(trigger);
    let seen_record = failure_of(result, "the host waiter", &case);
    assert_eq!(*seen_record, *record, "{case:?}: the waiter saw another record");
    match case.fault {
        FaultKind::KernelFault => {
            assert_eq!(record.status, Some(FAULT_STATUS), "{case:?}: {}", record.message);
            assert!(record.message.contains("injected kernel fault"), "{case:?}: {}", record.message);
        }
        FaultKind::StallCancelled => assert_eq!(record.message, "the host gave up on a stalled submission"),
        FaultKind::StallQueueCancelled => {
            assert!(record.message.ends_with("was cancelled"), "{case:?}: {}", record.message)
        }
    }
    // Every dependent carries the same record.
    match case.position {
        Position::Direct => {
            // A kernel fault and a cancelled queue fail the queue, so the submission behind the
            // faulting one fails too; a host-cancelled semaphore leaves the queue healthy.
            if case.fault == FaultKind::StallCancelled {
                if let Some(queue) = &faulty {
                    release(queue, || dependent.value() == 1);
                }
            } else {
                let behind = failure_of(dependent.wait(1, TIMEOUT), "the submission behind it", &case);
                assert!(behind.status == record.status, "{case:?}: {behind:?} after {record:?}");
            }
        }
        Position::Producer => {
            let record_seen = failure_of(dependent.wait(1, TIMEOUT), "the consumer", &case);
            assert_eq!(*record_seen, *record, "{case:?}");
        }
        Position::Consumer => {
            let seen = failure_of(dependent.wait(1, TIMEOUT), "the third queue's consumer", &case);
            assert_eq!(*seen, *record, "{case:?}");
            upstream.wait(1, TIMEOUT).expect("the healthy producer completed");
        }
    }
    if case.fault == FaultKind::StallCancelled
        && let Some(queue) = &faulty
    {
        // Let the stalled submission go so the queue drains before it drops.
        release(queue, || queue.stats().epochs_drained == queue.stats().epochs_submitted);
    }

    drop((faulty, other, third, materials));
    drop((upstream, faulted, dependent, downstream));
    assert!(
        eventually(TIMEOUT, || device.live_objects() == (0, 0, 0)),
        "{case:?}: left behind {:?}",
        device.live_objects()
    );
    (latency, released.get())
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * fraction).round() as usize]
}

#[test]
fn every_fault_at_every_position_fails_its_dependents_with_its_record() {
    // (fault, latency, whether the error waited for a release)
    let mut latencies: Vec<(FaultKind, Duration, bool)> = Vec::new();
    for strategy in [WaitStrategy::BarrierValue, WaitStrategy::BarrierAnd] {
        for fault in [FaultKind::KernelFault, FaultKind::StallCancelled, FaultKind::StallQueueCancelled] {
            for operation in [
                Operation::Dispatch,
                Operation::Fill,
                Operation::Copy,
                Operation::Update,
                Operation::Barrier,
                Operation::CommandBuffer,
            ] {
                for position in [Position::Direct, Position::Producer, Position::Consumer] {
                    let resolutions: &[Resolution] = match position {
                        Position::Direct => &[Resolution::Device],
                        _ => &[Resolution::Device, Resolution::Parked],
                    };
                    for &resolution in resolutions {
                        let (latency, released) = run(Case { strategy, fault, operation, position, resolution });
                        latencies.push((fault, latency, released));
                    }
                }
            }
        }
    }
    assert_eq!(latencies.len(), 2 * 3 * 6 * 5);
    for fault in [FaultKind::KernelFault, FaultKind::StallCancelled, FaultKind::StallQueueCancelled] {
        for released in [false, true] {
            let mut sorted: Vec<Duration> = latencies
                .iter()
                .filter(|(kind, _, waited)| *kind == fault && *waited == released)
                .map(|(_, latency, _)| *latency)
                .collect();
            if sorted.is_empty() {
                continue;
            }
            sorted.sort();
            println!(
                "fault matrix {fault:?}{}: {} cases; fault to the waiter's error p50 {:?}, p99 {:?}, max {:?}",
                if released { " (device-side dependents, timed from the stall's release)" } else { "" },
                sorted.len(),
                percentile(&sorted, 0.5),
                percentile(&sorted, 0.99),
                sorted[sorted.len() - 1]
            );
        }
    }
}
