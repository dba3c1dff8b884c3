//! Every window from 1 to 8 against every failure rate from 1 to 10 (issue 29): a host keeps at
//! most `window` steps of a lane in flight by waiting on step `s - window`'s own semaphore before
//! it submits step `s`, while one step in `rate` waits on a semaphore that fails (from the host,
//! or through a kernel fault on a victim queue). Each step also has a device-side waiter on a
//! second queue, and each doomed step a host waiter parked before its failure.
//!
//! Nothing may stall: every wait is bounded, and a cell that overruns fails naming its window and
//! rate. Every failure must reach every waiter (the window's wait, the parked host waiter, the
//! device-side waiter) with the original record, and every healthy step must complete.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use aqueduct_components::semaphore_table::FailureRecord;
use aqueduct_engine::{EngineError, Semaphore, WaitStrategy};
use aqueduct_soft_hsa::Fault;
use common::*;

/// Steps per cell: enough for runs of doomed steps longer than every window.
const STEPS: u64 = 24;
/// No single wait in a cell may take longer (a stall).
const BOUND: Duration = Duration::from_secs(20);
const KERNEL_FAULT_STATUS: u32 = 0x1016;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Doom {
    None,
    Host,
    KernelFault,
}

fn host_message(window: u64, rate: u64, step: u64) -> String {
    format!("matrix: window {window} rate {rate} step {step}")
}

/// Whether `result` is what a waiter on a step doomed `doom` must see.
fn check(result: &Result<(), EngineError>, doom: Doom, message: &str) -> Result<(), String> {
    let matches = |record: &Arc<FailureRecord>| match doom {
        Doom::Host => record.message == message,
        Doom::KernelFault => record.status == Some(KERNEL_FAULT_STATUS),
        Doom::None => false,
    };
    match (doom, result) {
        (Doom::None, Ok(())) => Ok(()),
        (Doom::Host | Doom::KernelFault, Err(EngineError::SemaphoreFailed(record))) if matches(record) => Ok(()),
        (doom, other) => Err(format!("doom {doom:?}: {other:?}")),
    }
}

fn cell(strategy: WaitStrategy, window: u64, rate: u64) -> Result<(), String> {
    let rig = KernelRig::new(strategy);
    let device = rig.device();
    let (lane, watcher) = (queue(device), queue(device));
    let data = rig.buffer();
    let new = || device.create_semaphore(0).map_err(|error| error.to_string());
    let steps: Vec<Semaphore> = (0..=STEPS).map(|_| new()).collect::<Result<_, _>>()?;
    let watched: Vec<Semaphore> = (0..=STEPS).map(|_| new()).collect::<Result<_, _>>()?;
    let mut dooms = vec![Doom::None; STEPS as usize + 1];
    let mut victims = Vec::new();
    let mut host_waiters = Vec::new();
    let submitted = |result: Result<aqueduct_engine::Submitted, EngineError>, doomed: bool, what: &str| match result {
        Ok(_) => Ok(()),
        // A doomed step's wait may have failed already: refused, its signals failed.
        Err(EngineError::DependencyFailed(_)) if doomed => Ok(()),
        Err(error) => Err(format!("{what}: {error}")),
    };
    for step in 1..=STEPS {
        let message = host_message(window, rate, step);
        if step > window {
            let behind = step - window;
            let result = steps[behind as usize].wait(1, BOUND);
            check(&result, dooms[behind as usize], &host_message(window, rate, behind))
                .map_err(|error| format!("step {step}'s window wait on step {behind}: {error}"))?;
        }
        let doom = match (step % rate == 0 && step < STEPS, (step / rate) % 2) {
            (false, _) => Doom::None,
            (true, 0) => Doom::Host,
            (true, _) => Doom::KernelFault,
        };
        dooms[step as usize] = doom;
        let own = steps[step as usize].at(1);
        match doom {
            Doom::None => {
                let result = lane.fill(data.range(step * 4, 4), &(step as u32).to_le_bytes()).signal(own).submit();
                submitted(result, false, "a healthy step")?;
            }
            Doom::Host | Doom::KernelFault => {
                let cause = new()?;
                if doom == Doom::KernelFault {
                    let victim = queue(device);
                    fault_next(&victim, Fault::KernelFault { status: KERNEL_FAULT_STATUS });
                    victim.barrier().signal(cause.at(1)).submit().map_err(|error| format!("victim: {error}"))?;
                    victims.push(victim);
                }
                submitted(lane.barrier().wait(cause.at(1)).signal(own).submit(), true, "a doomed step")?;
                let waiting = steps[step as usize].clone();
                host_waiters.push((step, std::thread::spawn(move || waiting.wait(1, BOUND))));
                if doom == Doom::Host {
                    cause.fail(message);
                }
            }
        }
        let result = watcher.barrier().wait(own).signal(watched[step as usize].at(1)).submit();
        submitted(result, doom != Doom::None, "the watcher")?;
    }
    for step in 1..=STEPS {
        let (doom, message) = (dooms[step as usize], host_message(window, rate, step));
        check(&steps[step as usize].wait(1, BOUND), doom, &message).map_err(|error| format!("step {step}: {error}"))?;
        check(&watched[step as usize].wait(1, BOUND), doom, &message)
            .map_err(|error| format!("step {step}'s device-side waiter: {error}"))?;
    }
    for (step, waiter) in host_waiters {
        let result = waiter.join().map_err(|_| format!("step {step}'s host waiter panicked"))?;
        check(&result, dooms[step as usize], &host_message(window, rate, step))
            .map_err(|error| format!("step {step}'s parked host waiter: {error}"))?;
    }
    let values = words(&data.to_vec().map_err(|error| error.to_string())?);
    for step in 1..=STEPS {
        let expected = if dooms[step as usize] == Doom::None { step as u32 } else { 0 };
        if values[step as usize] != expected {
            return Err(format!("step {step}: word {} (doom {:?})", values[step as usize], dooms[step as usize]));
        }
    }
    Ok(())
}

#[test]
fn every_window_against_every_failure_rate_finishes_and_every_failure_reaches_every_waiter() {
    let mut failures = Vec::new();
    let start = Instant::now();
    for window in 1..=8 {
        for rate in 1..=10 {
            // Both strategies over the matrix, alternating by cell.
            let strategy = [WaitStrategy::BarrierValue, WaitStrategy::BarrierAnd][((window + rate) % 2) as usize];
            if let Err(error) = cell(strategy, window, rate) {
                failures.push(format!("window {window}, rate {rate}, {strategy:?}: {error}"));
            }
        }
    }
    assert!(failures.is_empty(), "{} of 80 cells failed:\n{}", failures.len(), failures.join("\n"));
    eprintln!("80 cells in {:.1} s", start.elapsed().as_secs_f64());
}
