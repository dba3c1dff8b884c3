//! The plugin's per-frame flush (`AqueductSystems::Flush` alone, not the frames-in-flight wait
//! after it) of eight lanes, each with 32 fills of 4 KiB submitted a frame:
//!
//! - `flush/parallel/8`: one run over the eight lanes' queue entities, a task per lane;
//! - `flush/one_by_one/8`: the same run with `parallel_flush(false)`;
//! - `flush/one_lane`: one lane with the same work, the limit a parallel flush approaches
//!   (a frame's flush cannot cost less than its largest lane's);
//! - `pool/par_iter_8x12us`, `pool/iter_8x12us`: the task pool alone, 8 entities of 12 µs.
//!
//! `flush_host/...`: the same three with the lanes' soft queues in retire-only mode: packets
//! retire without their kernels running, so the soft device's work does not take the host's cores
//! from the flush (a GPU's work takes none), as in the engine's submit benches. This is the host's
//! cost of the flush alone.
//!
//! Time is wall time per frame. One frame in flight unless `FLUSH_FRAMES_IN_FLIGHT` says
//! otherwise; `FLUSH_OPERATIONS` sets the fills a lane (default 32).
//! Run: `cargo bench -p aqueduct-bevy --bench flush`.

use std::time::{Duration, Instant};

use aqueduct_bevy::{AqueductDevice, AqueductFrame, AqueductPlugin, AqueductQueues, AqueductSystems};
use aqueduct_engine::{Buffer, MemoryKind, QueueConfig};
use aqueduct_soft_hsa::ExecutionMode;
use bevy_app::{App, PostUpdate, Update};
use bevy_ecs::prelude::*;
use criterion::{Criterion, criterion_group, criterion_main};
use lanes::{LANES, Lanes};

#[path = "../tests/common/lanes.rs"]
mod lanes;

/// Fills each lane submits a frame, unless `FLUSH_OPERATIONS` says otherwise.
fn operations() -> usize {
    std::env::var("FLUSH_OPERATIONS").ok().and_then(|value| value.parse().ok()).unwrap_or(32)
}

#[derive(Resource)]
struct Targets(Vec<Buffer<u32>>, usize);

/// When the flush began, and the flushes' time so far.
#[derive(Resource, Default)]
struct FlushClock {
    began: Option<Instant>,
    spent: Duration,
}

fn submit_work(mut frame: ResMut<AqueductFrame>, targets: Res<Targets>) {
    let value = frame.frame() as u32;
    for (lane, target) in targets.0.iter().enumerate() {
        for _ in 0..targets.1 {
            let target = target.clone();
            let submitted =
                frame.submit(LANES[lane], move |batch, _| batch.fill(target.whole(), &value.to_le_bytes()).submit());
            submitted.expect("a registered lane");
        }
    }
}

fn begin(mut clock: ResMut<FlushClock>) {
    clock.began = Some(Instant::now());
}

fn end(mut clock: ResMut<FlushClock>) {
    if let Some(began) = clock.began.take() {
        clock.spent += began.elapsed();
    }
}

/// An app of `lanes` lanes whose flush is timed; with `retire_only`, its queues retire packets
/// without running their kernels.
fn app(lanes: usize, parallel: bool, retire_only: bool) -> App {
    // One frame in flight: the soft device's work of the frame before (on the host's cores too)
    // is done before the flush begins, so the flush's time is the host's alone.
    let limit = std::env::var("FLUSH_FRAMES_IN_FLIGHT").ok().and_then(|value| value.parse().ok()).unwrap_or(1);
    let mut plugin = AqueductPlugin::new("soft")
        .expect("soft")
        .parallel_flush(parallel)
        .frames_in_flight(std::num::NonZeroU32::new(limit).expect("a limit of at least 1"));
    for lane in &LANES[..lanes] {
        plugin = plugin.lane(*lane, QueueConfig::new());
    }
    let mut app = App::new();
    app.add_plugins(plugin);
    let device = app.world().resource::<AqueductDevice>().device().expect("the soft device").clone();
    if retire_only {
        let queues = app.world().resource::<AqueductQueues>();
        for lane in &LANES[..lanes] {
            let queue = queues.get(*lane).expect("a registered lane");
            let controls = queue.soft_controls().expect("the soft runtime's controls");
            controls.set_queue_mode(queue.hsa_queue(), ExecutionMode::RetireOnly).expect("retire-only mode");
        }
    }
    let targets = (0..lanes).map(|_| device.allocate_typed::<u32>(MemoryKind::DeviceLocal, 1024).expect("a buffer"));
    app.insert_resource(Targets(targets.collect(), operations()))
        .init_resource::<FlushClock>()
        .add_systems(Update, submit_work.in_set(Lanes::L0))
        .add_systems(
            PostUpdate,
            (begin.before(AqueductSystems::Flush), end.after(AqueductSystems::Flush).before(AqueductSystems::Pace)),
        );
    app
}

fn flush(c: &mut Criterion) {
    for (group_name, retire_only) in [("flush", false), ("flush_host", true)] {
        let mut group = c.benchmark_group(group_name);
        for (name, lanes, parallel) in [("one_lane", 1, true), ("one_by_one/8", 8, false), ("parallel/8", 8, true)] {
            let mut app = app(lanes, parallel, retire_only);
            group.bench_function(name, |b| {
                b.iter_custom(|frames| {
                    app.world_mut().resource_mut::<FlushClock>().spent = Duration::ZERO;
                    for _ in 0..frames {
                        app.update();
                    }
                    app.world().resource::<FlushClock>().spent
                })
            });
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = flush
}
criterion_main!(benches, pool);

/// An entity of the task pool's own row: eight of them, each 12 µs of spinning, about one lane's
/// flush of 32 operations.
#[derive(Component)]
struct Spin;

fn spin_for(micros: u64) {
    let until = Instant::now() + Duration::from_micros(micros);
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// `pool/par_iter_8x12us` against `pool/iter_8x12us`: what Bevy's compute task pool gives eight
/// tasks of 12 µs with no engine in them (its wake-ups included), the most the flush can get.
fn pool_only(c: &mut Criterion) {
    let mut group = c.benchmark_group("pool");
    let mut world = World::new();
    bevy_tasks::ComputeTaskPool::get_or_init(bevy_tasks::TaskPool::default);
    for _ in 0..8 {
        world.spawn(Spin);
    }
    let mut query = world.query::<&Spin>();
    group.bench_function("par_iter_8x12us", |b| b.iter(|| query.par_iter(&world).for_each(|_| spin_for(12))));
    group.bench_function("iter_8x12us", |b| b.iter(|| query.iter(&world).for_each(|_| spin_for(12))));
    group.finish();
}
criterion_group!(pool, pool_only);
