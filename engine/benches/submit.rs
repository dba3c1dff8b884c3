//! Host cost of engine submissions, next to the physical-limit baseline measured in the same run.
//!
//! - `baseline/ring_write_release`: 64-byte packets written and release-published, nothing else.
//! - `edge/submit/512`: 512 cross-queue ping-pong handoffs (barrier ops, each waiting on the other
//!   queue's last signal through a device-side barrier), submit only; each submit is published
//!   before it returns. Completion is awaited outside the timed region.
//! - `edge+dispatch/submit/512`: the same with a tiny dispatch (2 bindings, 2 constants) per edge.
//! - `dispatch/submit`: direct dispatches without waits, one signal each.
//! - `scale/queues=N`: N threads each submitting dispatches to their own queue; time of the
//!   slowest thread's submission phases.
//!
//! Queues run in the soft runtime's retire-only mode, so kernels do not steal the host's cores.
//! Run: `cargo bench -p aqueduct-engine --bench submit`.

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use aqueduct_engine::{Dispatch, MemoryKind, Queue, WaitStrategy};
use aqueduct_soft_hsa::{ExecutionMode, set_queue_mode};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const BATCH: u64 = 512;

/// Wall time, or the submitting thread's CPU time (host cost without descheduling by the soft
/// runtime's threads, which share the machine's two cores).
#[derive(Clone, Copy)]
enum Clock {
    Wall,
    HostCpu,
}

impl Clock {
    fn name(self) -> &'static str {
        match self {
            Clock::Wall => "wall",
            Clock::HostCpu => "host_cpu",
        }
    }

    fn now(self) -> Duration {
        match self {
            Clock::Wall => EPOCH.with(|epoch| epoch.elapsed()),
            Clock::HostCpu => aqueduct_engine::thread_cpu_time(),
        }
    }
}

thread_local! {
    static EPOCH: Instant = Instant::now();
}

fn retire_only(queue: &Queue) {
    set_queue_mode(queue.hsa_queue(), ExecutionMode::RetireOnly).expect("retire-only mode");
}

fn baseline(c: &mut Criterion) {
    let mut group = c.benchmark_group("baseline");
    group.throughput(Throughput::Elements(BATCH));
    let mut ring = aqueduct_hsa::ring::BaselineRing::default();
    group.bench_function("ring_write_release", |b| b.iter(|| ring.write_release(BATCH)));
    group.finish();
}

fn edges(c: &mut Criterion) {
    let engine = common::engine(WaitStrategy::Auto);
    let device = engine.device();
    let kernels = common::test_kernels(&engine);
    let queues = [device.create_queue().unwrap(), device.create_queue().unwrap()];
    queues.iter().for_each(retire_only);
    let chain = device.create_semaphore(0).unwrap();
    let data = device.allocate(MemoryKind::DeviceLocal, 4096).unwrap();
    let mut value = 0u64;
    let mut group = c.benchmark_group("edge");
    group.throughput(Throughput::Elements(BATCH));
    for (with_dispatch, clock) in
        [(false, Clock::Wall), (false, Clock::HostCpu), (true, Clock::Wall), (true, Clock::HostCpu)]
    {
        let shape = if with_dispatch { "edge+dispatch/submit/512" } else { "edge/submit/512" };
        group.bench_function(format!("{shape}/{}", clock.name()), |b| {
            b.iter_custom(|iters| {
                let mut elapsed = Duration::ZERO;
                for _ in 0..iters {
                    let start = clock.now();
                    for handoff in 0..BATCH {
                        let queue = &queues[(handoff & 1) as usize];
                        let (wait, signal) = ([chain.at(value)], [chain.at(value + 1)]);
                        if with_dispatch {
                            let bindings = [data.range(0, 16), data.range(16, 16)];
                            let dispatch =
                                Dispatch::grid([1, 1, 1]).workgroup([1, 1, 1]).bindings(&bindings).constants(&[1, 1]);
                            queue
                                .dispatch(&kernels.add_from, &dispatch)
                                .waits(&wait)
                                .signals(&signal)
                                .submit()
                                .unwrap();
                        } else {
                            queue.barrier().waits(&wait).signals(&signal).submit().unwrap();
                        }
                        value += 1;
                    }
                    elapsed += clock.now() - start;
                    chain.wait(value, common::TIMEOUT).unwrap();
                }
                elapsed
            });
        });
    }
    group.finish();
}

fn dispatches(c: &mut Criterion) {
    let engine = common::engine(WaitStrategy::Auto);
    let device = engine.device();
    let kernels = common::test_kernels(&engine);
    let queue = device.create_queue().unwrap();
    retire_only(&queue);
    let done = device.create_semaphore(0).unwrap();
    let data = device.allocate(MemoryKind::DeviceLocal, 4096).unwrap();
    let bindings = [data.range(0, 1024), data.range(1024, 1024)];
    let dispatch = Dispatch::grid([256, 1, 1]).workgroup([64, 1, 1]).bindings(&bindings).constants(&[1, 256]);
    let mut value = 0u64;
    let mut group = c.benchmark_group("dispatch");
    group.throughput(Throughput::Elements(BATCH));
    for clock in [Clock::Wall, Clock::HostCpu] {
        group.bench_function(format!("dispatch/submit/{}", clock.name()), |b| {
            b.iter_custom(|iters| {
                let mut elapsed = Duration::ZERO;
                for _ in 0..iters {
                    let start = clock.now();
                    for _ in 0..BATCH {
                        value += 1;
                        queue.dispatch(&kernels.add_from, &dispatch).signal(done.at(value)).submit().unwrap();
                    }
                    elapsed += clock.now() - start;
                    done.wait(value, common::TIMEOUT).unwrap();
                }
                elapsed
            });
        });
    }
    group.finish();
}

fn scaling(c: &mut Criterion) {
    let engine = common::engine(WaitStrategy::Auto);
    let device = engine.device();
    let kernels = common::test_kernels(&engine);
    let queues: Vec<Queue> = (0..2).map(|_| device.create_queue().unwrap()).collect();
    queues.iter().for_each(retire_only);
    let semaphores: Vec<_> = (0..2).map(|_| device.create_semaphore(0).unwrap()).collect();
    let data = device.allocate(MemoryKind::DeviceLocal, 4096).unwrap();
    let mut group = c.benchmark_group("scale");
    for count in [1usize, 2] {
        group.throughput(Throughput::Elements(BATCH * count as u64));
        group.bench_function(format!("queues={count}"), |b| {
            b.iter_custom(|iters| {
                std::thread::scope(|scope| {
                    let workers: Vec<_> = (0..count)
                        .map(|index| {
                            let (queue, semaphore, kernel, data) =
                                (&queues[index], &semaphores[index], &kernels.add_from, &data);
                            scope.spawn(move || {
                                let bindings = [data.range(0, 1024), data.range(1024, 1024)];
                                let dispatch = Dispatch::grid([256, 1, 1])
                                    .workgroup([64, 1, 1])
                                    .bindings(&bindings)
                                    .constants(&[1, 256]);
                                let mut elapsed = Duration::ZERO;
                                let mut value = semaphore.value();
                                for _ in 0..iters {
                                    let start = Instant::now();
                                    for _ in 0..BATCH {
                                        value += 1;
                                        queue.dispatch(kernel, &dispatch).signal(semaphore.at(value)).submit().unwrap();
                                    }
                                    elapsed += start.elapsed();
                                    semaphore.wait(value, common::TIMEOUT).unwrap();
                                }
                                elapsed
                            })
                        })
                        .collect();
                    workers.into_iter().map(|worker| worker.join().unwrap()).max().unwrap_or_default()
                })
            });
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    targets = baseline, edges, dispatches, scaling
}
criterion_main!(benches);
