//! The stages' passes run directly on the queue state (the immediate path) versus
//! through a bevy `Schedule` on the single-threaded executor, one row per pass, and 512 rows per
//! schedule run (the batch path), on one soft queue in retire-only mode. Each submission is a
//! barrier that signals one semaphore; every variant enqueues it, admits it, patches, publishes
//! and reclaims what retired.
//!
//! Run: `cargo bench -p aqueduct-systems --bench stages`.

use std::sync::Arc;

use aqueduct_components::dependency::SignalOp;
use aqueduct_components::directory::{CrossQueueWait, EPOCH_BASE, QueueDirectory, QueueEndpoint};
use aqueduct_components::kernarg_ring::KernargRing;
use aqueduct_components::semaphore_table::SemaphoreTable;
use aqueduct_components::submission::Verdict;
use aqueduct_hsa::ring::AqlRing;
use aqueduct_hsa::{Hsa, PoolKindInfo};
use aqueduct_soft_hsa::{ExecutionMode, SoftConfig, set_queue_mode};
use aqueduct_systems::strategy::{BarrierValue, CrossQueueStrategy};
use aqueduct_systems::sync::SemaphoreSync;
use aqueduct_systems::{DeviceLink, QueueState, build_queue_state, reclaim, run_pass};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const BATCH: u64 = 512;

struct Bench {
    _hsa: Hsa,
    state: QueueState,
    semaphore: u32,
    value: u64,
}

fn setup() -> Bench {
    let hsa = aqueduct_soft_hsa::open(SoftConfig::default()).expect("soft runtime");
    let agent = hsa.gpu_agents().expect("agents")[0].agent;
    let kernarg_pool = hsa.host_pool(PoolKindInfo::Kernarg).expect("kernarg pool").pool;

    // SAFETY: no callback, so the null data pointer is never used; the queue lives for the process.
    let queue = unsafe { hsa.queue_create(agent, 4096, None, core::ptr::null_mut()) }.expect("queue");
    set_queue_mode(queue, ExecutionMode::RetireOnly).expect("retire-only");
    let endpoint = Arc::new(QueueEndpoint::new(
        0,
        hsa.signal_create(EPOCH_BASE).expect("signal").handle,
        hsa.signal_create(0).expect("signal").handle,
        Box::new([]),
    ));
    let directory = Arc::new(QueueDirectory::default());
    directory.reserve_index();
    directory.register(endpoint.clone());
    let semaphores = Arc::new(SemaphoreTable::new(16));
    let semaphore = semaphores.allocate(0).expect("semaphore");
    let link = DeviceLink { api: hsa.api(), semaphores, directory, host_writes: None };
    let base = hsa.allocate(kernarg_pool, 1 << 20).expect("kernarg ring") as u64;
    hsa.allow_access(&[agent], base as *const u8).expect("kernargs mapped");
    let kernargs = KernargRing::new(base, 1 << 20);
    // SAFETY: the queue is never destroyed while the ring is used.
    let ring = unsafe { AqlRing::new(queue, hsa.api()) };
    let (state, _) = build_queue_state(0, ring, kernargs, endpoint, link, 2048, CrossQueueWait::BarrierValue);
    Bench { _hsa: hsa, state, semaphore, value: 0 }
}

impl Bench {
    fn state(&mut self) -> &mut QueueState {
        &mut self.state
    }

    /// One run of the schedule, as the engine's batch flush runs it.
    fn run(&mut self) {
        self.state.run_schedule();
    }
}

/// Stages one barrier that signals the bench semaphore as a pending row.
fn stage(bench: &mut Bench) {
    bench.value += 1;
    let signal = SignalOp { semaphore: bench.semaphore, value: bench.value };
    let rows = &mut bench.state().rows;
    let row = rows.push();
    rows.writer(row).push_signal(signal);
}

/// Drains what retired; returns whether the pass left rows pending (it stopped for room).
fn drain(bench: &mut Bench) -> bool {
    let queue = bench.state();
    let retired = BarrierValue::device_retired(&queue.handles.endpoint);
    reclaim::drain::<BarrierValue>(&mut queue.reclaim(), retired, reclaim::DrainOrder::Causal);
    !queue.rows.is_empty()
}

/// One row, one pass called directly: the immediate path.
fn direct(bench: &mut Bench) {
    stage(bench);
    loop {
        run_pass::<BarrierValue>(bench.state());
        if !drain(bench) {
            return;
        }
    }
}

/// One row, one run of the schedule.
fn scheduled(bench: &mut Bench) {
    stage(bench);
    loop {
        bench.run();
        if !drain(bench) {
            return;
        }
    }
}

/// `BATCH` rows, then one run of the schedule: the batch path.
fn batched(bench: &mut Bench) {
    (0..BATCH).for_each(|_| stage(bench));
    loop {
        bench.run();
        if !drain(bench) {
            return;
        }
        assert!(bench.state().rows.pass.stop.is_some_and(|(_, verdict)| verdict == Verdict::Backpressure));
    }
}

fn stages(c: &mut Criterion) {
    let mut bench = setup();
    bench.run(); // build the schedule's executor once, outside the measurement
    let mut group = c.benchmark_group("ecs_stages");
    group.throughput(Throughput::Elements(BATCH));
    group.bench_function("direct", |b| b.iter(|| (0..BATCH).for_each(|_| direct(&mut bench))));
    group.bench_function("schedule_run", |b| b.iter(|| (0..BATCH).for_each(|_| scheduled(&mut bench))));
    group.bench_function("batch_schedule_run", |b| b.iter(|| batched(&mut bench)));
    group.finish();
    let queue = bench.state();
    assert!(queue.epochs.submitted >= BATCH, "the benchmark published its submissions");
}

criterion_group!(benches, stages);
criterion_main!(benches);
