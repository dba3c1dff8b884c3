//! Command buffers under criterion, on the same programs `aqueduct bench` runs (shared from
//! `aqueduct_cli::bench::command_buffers`), next to the physical-limit baseline:
//!
//! - `cb/record/512`: recording and finishing a 512-dispatch chain (per command);
//! - `cb/static/512`: executing the prebuilt chain (`execute`, host cost, per dispatch);
//! - `cb/dynamic_extra/512`: recording + finishing + executing a one-shot chain, minus the prebuilt
//!   execution of the same repetition (per dispatch);
//! - `clip/c1d16`: the CLIP-shaped program, one queue keeping 16 items in flight (per item).
//!
//! Run: `cargo bench --bench command_buffers`. Times are wall time per element; the `aqueduct
//! bench` report adds host CPU time.

use std::time::Duration;

use aqueduct::{Engine, EngineConfig};
use aqueduct_cli::bench::Sample;
use aqueduct_cli::bench::command_buffers::{self, CommandBufferRig};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const LENGTH: u64 = 512;

fn total(samples: impl Iterator<Item = Sample>) -> Duration {
    samples.map(|sample| sample.wall).sum()
}

fn command_buffers(c: &mut Criterion) {
    let engine = Engine::with_config(EngineConfig {
        device: "soft".parse().unwrap(),
        queue_packets: 16384,
        kernarg_ring_bytes: 4 << 20,
        ..EngineConfig::default()
    })
    .expect("soft engine");
    aqueduct_cli::bench::kernels::bench_code_object(engine.device()).expect("bench kernels");
    let rig = CommandBufferRig::new(engine.device().clone()).expect("command-buffer rig");

    let mut group = c.benchmark_group("baseline");
    group.throughput(Throughput::Elements(LENGTH));
    let mut ring = aqueduct::hsa::ring::BaselineRing::default();
    group.bench_function("ring_write_release", |b| b.iter(|| ring.write_release(LENGTH)));
    group.finish();

    let mut group = c.benchmark_group("cb");
    group.throughput(Throughput::Elements(LENGTH));
    group.bench_function("record/512", |b| {
        b.iter_custom(|iterations| {
            total((0..iterations).map(|_| command_buffers::record(&rig, LENGTH).expect("record")))
        })
    });
    group.bench_function("static/512", |b| {
        b.iter_custom(|iterations| {
            total((0..iterations).map(|_| command_buffers::execute_static(&rig, LENGTH).expect("execute")))
        })
    });
    group.bench_function("dynamic_extra/512", |b| {
        b.iter_custom(|iterations| {
            total((0..iterations).map(|_| command_buffers::dynamic_extra(&rig, LENGTH).expect("dynamic")))
        })
    });
    group.finish();

    let mut group = c.benchmark_group("clip");
    const ITEMS: u64 = 32;
    group.throughput(Throughput::Elements(ITEMS));
    group.sample_size(10);
    group.bench_function("c1d16", |b| {
        b.iter_custom(|iterations| {
            total((0..iterations).map(|_| command_buffers::clip(&rig, 1, ITEMS, false).expect("clip")))
        })
    });
    group.finish();
}

criterion_group!(benches, command_buffers);
criterion_main!(benches);
