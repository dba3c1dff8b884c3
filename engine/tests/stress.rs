//! Four threads submit to four queues with random (seeded) cross-queue dependencies: 20,000
//! submissions per run. Step `v` of queue `u` leaves `log[u][v] == v`, computed (when it waits)
//! from the entry of the step it waited for: reading `log[w][v']` and adding `v - v'` gives `v`
//! only if step `v'` of queue `w` really finished first. Every entry and every semaphore is
//! checked at the end.
//!
//! Each step signals its queue's timeline and a semaphore of its own. Waits on the per-step
//! semaphores always have an exact producer, so they resolve on the device (barriers, frontier,
//! retirement) and nothing parks; waits on old timeline values have lost their producer record
//! and park until the value arrives, which drives the deferral path as hard.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};

use aqueduct_engine::{
    Buffer, Dispatch, Engine, EngineConfig, Queue, Semaphore, SemaphorePoint, WaitStrategy, wait_all,
};
use common::*;

const QUEUES: usize = 4;
const SUBMISSIONS: usize = 20_000;
const STEPS: u64 = (SUBMISSIONS / QUEUES) as u64;

struct Chain {
    queue: Queue,
    timeline: Semaphore,
    /// `steps[v - 1]` is signalled to 1 by step `v` alone.
    steps: Vec<Semaphore>,
    log: Buffer,
    /// The last step whose submission returned.
    submitted: AtomicU64,
}

fn entry(log: &Buffer, step: u64) -> aqueduct_engine::Binding<'_> {
    log.range(step * 4, 4)
}

/// Which semaphores the random waits name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Waits {
    /// Per-step semaphores only: every wait has an exact producer.
    Device,
    /// Mostly the producers' timelines at random (often old) values.
    Timelines,
}

fn stress(strategy: WaitStrategy, waits_on: Waits, seed: u64) {
    stress_with(EngineConfig { wait_strategy: strategy, ..EngineConfig::default() }, waits_on, seed);
}

fn stress_with(config: EngineConfig, waits_on: Waits, seed: u64) {
    let strategy = config.wait_strategy;
    let engine: Engine = engine_with(config);
    let device = engine.device();
    let kernels = test_kernels(&engine);
    let chains: Vec<Chain> = (0..QUEUES)
        .map(|_| Chain {
            queue: queue(device),
            timeline: device.create_semaphore(0).unwrap(),
            steps: (0..STEPS).map(|_| device.create_semaphore(0).unwrap()).collect(),
            log: host_buffer(device, &vec![0; (STEPS as usize + 1) * 4]),
            submitted: AtomicU64::new(0),
        })
        .collect();
    let kinds = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..QUEUES)
            .map(|me| {
                let (chains, kernels) = (&chains, &kernels);
                scope.spawn(move || {
                    let mut rng = Xorshift::new(seed * 1000 + me as u64);
                    let chain = &chains[me];
                    // How many steps waited on other queues, read the previous step, or stored fresh.
                    let mut kinds = [0u64; 3];
                    for step in 1..=STEPS {
                        // Up to two waits on other queues at values they already submitted (the
                        // oldest ones may no longer have a producer record: those park), and
                        // sometimes a wait on this queue's own earlier step.
                        let mut waits: Vec<(usize, u64)> = Vec::new();
                        for _ in 0..rng.below(3) {
                            let other = (me + 1 + rng.below(QUEUES as u64 - 1) as usize) % QUEUES;
                            let latest = chains[other].submitted.load(Ordering::Acquire).min(step);
                            if latest == 0 {
                                continue;
                            }
                            let value = if rng.below(2) == 0 { latest } else { 1 + rng.below(latest) };
                            waits.push((other, value));
                        }
                        if step > 1 && rng.below(8) == 0 {
                            waits.push((me, 1 + rng.below(step - 1)));
                        }
                        let points: Vec<SemaphorePoint> = waits
                            .iter()
                            .map(|&(chain, value)| match waits_on {
                                Waits::Timelines if rng.below(4) != 0 => chains[chain].timeline.at(value),
                                _ => chains[chain].steps[value as usize - 1].at(1),
                            })
                            .collect();
                        let signal = [chain.timeline.at(step), chain.steps[step as usize - 1].at(1)];
                        let out = entry(&chain.log, step);
                        let result = match waits.first() {
                            Some(&(other, value)) if other != me => {
                                kinds[0] += 1;
                                let bindings = [out, entry(&chains[other].log, value)];
                                let addend = (step - value) as u32;
                                chain
                                    .queue
                                    .dispatch(
                                        &kernels.add_from,
                                        &Dispatch::grid([1, 1, 1])
                                            .workgroup([1, 1, 1])
                                            .bindings(&bindings)
                                            .constants(&[addend, 1]),
                                    )
                                    .waits(&points)
                                    .signals(&signal)
                                    .submit()
                            }
                            _ if step > 1 && rng.below(2) == 0 => {
                                kinds[1] += 1;
                                let bindings = [out, entry(&chain.log, step - 1)];
                                chain
                                    .queue
                                    .dispatch(
                                        &kernels.add_from,
                                        &Dispatch::grid([1, 1, 1]).bindings(&bindings).constants(&[1, 1]),
                                    )
                                    .waits(&points)
                                    .signals(&signal)
                                    .submit()
                            }
                            _ => {
                                kinds[2] += 1;
                                let value = step as u32;
                                match rng.below(3) {
                                    0 => chain
                                        .queue
                                        .dispatch(
                                            &kernels.store_value,
                                            &Dispatch::grid([1, 1, 1]).bindings(&[out]).constants(&[value, 1]),
                                        )
                                        .waits(&points)
                                        .signals(&signal)
                                        .submit(),
                                    1 => chain
                                        .queue
                                        .fill(out, &value.to_le_bytes())
                                        .waits(&points)
                                        .signals(&signal)
                                        .submit(),
                                    _ => chain
                                        .queue
                                        .update(&chain.log, step * 4, &value.to_le_bytes())
                                        .waits(&points)
                                        .signals(&signal)
                                        .submit(),
                                }
                            }
                        };
                        result.unwrap_or_else(|error| panic!("queue {me} step {step}: {error}"));
                        chain.submitted.store(step, Ordering::Release);
                    }
                    kinds
                })
            })
            .collect();
        workers.into_iter().map(|worker| worker.join().unwrap()).collect::<Vec<_>>()
    });
    let finals: Vec<SemaphorePoint> = chains.iter().map(|chain| chain.timeline.at(STEPS)).collect();
    wait_all(&finals, TIMEOUT).unwrap_or_else(|error| {
        let values: Vec<u64> = chains.iter().map(|chain| chain.timeline.value()).collect();
        let stats: Vec<_> = chains.iter().map(|chain| chain.queue.stats()).collect();
        panic!("{strategy:?} {waits_on:?}: {error}; timelines {values:?}; {stats:?}")
    });
    for (index, chain) in chains.iter().enumerate() {
        assert_eq!(chain.timeline.value(), STEPS);
        assert!(chain.steps.iter().all(|semaphore| semaphore.query().unwrap() == 1));
        let log = words(&chain.log.to_vec().unwrap());
        assert_eq!(log[0], 0);
        for (step, value) in log.iter().enumerate().skip(1) {
            assert_eq!(*value as usize, step, "{strategy:?}: queue {index}, step {step}");
        }
    }
    let stats: Vec<_> = chains.iter().map(|chain| chain.queue.stats()).collect();
    assert_eq!(stats.iter().map(|stats| stats.submissions).sum::<u64>(), SUBMISSIONS as u64);
    let cross: u64 = kinds.iter().map(|kinds| kinds[0]).sum();
    assert!(cross > SUBMISSIONS as u64 / 4, "{strategy:?}: only {cross} cross-queue steps");
    let device_waits: u64 = stats.iter().map(|stats| stats.device_waits).sum();
    let deferred: u64 = stats.iter().map(|stats| stats.deferred).sum();
    match waits_on {
        // Nothing parks when every wait names a published producer; a good share of the
        // cross-queue waits needs a barrier (the rest find the producer retired or covered).
        Waits::Device => {
            assert_eq!(deferred, 0, "{strategy:?}: {stats:?}");
            assert!(
                device_waits > cross / 20,
                "{strategy:?}: only {device_waits} barriers for {cross} cross-queue steps"
            );
        }
        Waits::Timelines => assert!(deferred > 0, "{strategy:?}: {stats:?}"),
    }
    assert!(eventually(TIMEOUT, || chains
        .iter()
        .all(|chain| chain.queue.stats().epochs_drained == chain.queue.stats().epochs_submitted)));
    for (chain, stats) in chains.iter().zip(&stats) {
        // Every submission was published exactly once: one payload plus its barrier packets.
        let barrier_packets = stats.packets - stats.epochs_submitted;
        assert_eq!(stats.epochs_submitted, STEPS, "{strategy:?}: {stats:?}");
        assert!(barrier_packets <= stats.device_waits, "{strategy:?}: {stats:?}");
        assert_eq!(chain.queue.stats().submissions, STEPS);
    }
    println!("{strategy:?} {waits_on:?}: step kinds {kinds:?}; {stats:?}");
}

#[test]
fn device_side_waits_barrier_value() {
    stress(WaitStrategy::BarrierValue, Waits::Device, 1);
}

#[test]
fn device_side_waits_barrier_and() {
    stress(WaitStrategy::BarrierAnd, Waits::Device, 2);
}

#[test]
fn parked_timeline_waits_barrier_value() {
    stress(WaitStrategy::BarrierValue, Waits::Timelines, 3);
}

#[test]
fn parked_timeline_waits_barrier_and() {
    stress(WaitStrategy::BarrierAnd, Waits::Timelines, 4);
}

/// Small rings on every axis: submitters block on packets, kernarg space and epoch rows (and,
/// with BARRIER_AND, on per-epoch signals other queues' barriers still name) while they race.
fn small_rings(strategy: WaitStrategy) -> EngineConfig {
    EngineConfig {
        wait_strategy: strategy,
        queue_packets: 16,
        epochs_in_flight: 8,
        kernarg_ring_bytes: 4096,
        ..EngineConfig::default()
    }
}

#[test]
fn device_side_waits_through_small_rings_barrier_value() {
    stress_with(small_rings(WaitStrategy::BarrierValue), Waits::Device, 5);
}

#[test]
fn device_side_waits_through_small_rings_barrier_and() {
    stress_with(small_rings(WaitStrategy::BarrierAnd), Waits::Device, 6);
}

#[test]
fn parked_timeline_waits_through_small_rings_barrier_and() {
    stress_with(small_rings(WaitStrategy::BarrierAnd), Waits::Timelines, 7);
}

/// Four threads share two queues: each thread's chain hops between the queues at random, each
/// step waiting on the thread's own previous step (same queue or a device-side barrier).
#[test]
fn four_threads_share_two_queues() {
    const THREADS: usize = 4;
    const CHAIN: u64 = 2_500;
    for (seed, strategy) in [(8, WaitStrategy::BarrierValue), (9, WaitStrategy::BarrierAnd)] {
        let engine = engine(strategy);
        let device = engine.device();
        let kernels = test_kernels(&engine);
        let queues = [queue(device), queue(device)];
        let timelines: Vec<_> = (0..THREADS).map(|_| device.create_semaphore(0).unwrap()).collect();
        let logs: Vec<_> = (0..THREADS).map(|_| host_buffer(device, &vec![0; (CHAIN as usize + 1) * 4])).collect();
        std::thread::scope(|scope| {
            for thread in 0..THREADS {
                let (queues, kernels, timeline, log) = (&queues, &kernels, &timelines[thread], &logs[thread]);
                scope.spawn(move || {
                    let mut rng = Xorshift::new(seed * 100 + thread as u64);
                    for step in 1..=CHAIN {
                        let queue = &queues[rng.below(2) as usize];
                        let signal = [timeline.at(step)];
                        let result = if step == 1 {
                            queue
                                .dispatch(
                                    &kernels.store_value,
                                    &Dispatch::grid([1, 1, 1]).bindings(&[entry(log, 1)]).constants(&[1, 1]),
                                )
                                .signals(&signal)
                                .submit()
                        } else {
                            let bindings = [entry(log, step), entry(log, step - 1)];
                            queue
                                .dispatch(
                                    &kernels.add_from,
                                    &Dispatch::grid([1, 1, 1]).bindings(&bindings).constants(&[1, 1]),
                                )
                                .wait(timeline.at(step - 1))
                                .signals(&signal)
                                .submit()
                        };
                        result.unwrap_or_else(|error| panic!("thread {thread} step {step}: {error}"));
                    }
                });
            }
        });
        let finals: Vec<_> = timelines.iter().map(|timeline| timeline.at(CHAIN)).collect();
        wait_all(&finals, TIMEOUT).unwrap();
        for (thread, log) in logs.iter().enumerate() {
            for (step, value) in words(&log.to_vec().unwrap()).iter().enumerate() {
                assert_eq!(*value as usize, step, "{strategy:?}: thread {thread}, step {step}");
            }
        }
        let stats = [queues[0].stats(), queues[1].stats()];
        assert_eq!(stats[0].submissions + stats[1].submissions, THREADS as u64 * CHAIN, "{strategy:?}");
        assert_eq!(stats[0].deferred + stats[1].deferred, 0, "{strategy:?}: every wait had a published producer");
        assert!(stats[0].device_waits + stats[1].device_waits > 0, "{strategy:?}: {stats:?}");
    }
}
