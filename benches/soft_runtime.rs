//! Soft runtime throughput and latency, next to the physical-limit baseline.
//!
//! - `baseline/ring_write_release`: write 64-byte packets into a ring and release-store their
//!   headers, with nothing else in the way. Every other number is quoted as a ratio to this.
//! - `soft/retire_only_packets`: packets per second through one soft queue in retire-only mode
//!   (submission, processing, completion signal), 1024 packets per batch.
//! - `soft/round_trip`: one packet submitted, processed and its completion signal waited on.
//!
//! Run: `cargo bench --bench soft_runtime`.

#[path = "../soft-hsa/tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use aqueduct_abi::{FenceScope, PacketHeader, PacketType};
use aqueduct_soft_hsa::{self as soft, ExecutionMode};
use common::*;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const BATCH: u64 = 1024;

fn baseline(c: &mut Criterion) {
    let mut group = c.benchmark_group("baseline");
    group.throughput(Throughput::Elements(BATCH));
    let mut ring = aqueduct_hsa::ring::BaselineRing::default();
    group.bench_function("ring_write_release", |b| b.iter(|| ring.write_release(BATCH)));
    group.finish();
}

fn soft_runtime(c: &mut Criterion) {
    let client = Client::new();
    let queue = client.queue(4096);
    soft::set_queue_mode(queue.raw, ExecutionMode::RetireOnly).expect("mode");
    let done = client.signal(0);
    let header = PacketHeader::new(PacketType::BarrierAnd, true, FenceScope::System, FenceScope::System);

    let mut group = c.benchmark_group("soft");
    group.throughput(Throughput::Elements(BATCH));
    group.bench_function("retire_only_packets", |b| {
        b.iter_custom(|iterations| {
            let start = Instant::now();
            for _ in 0..iterations {
                // SAFETY: table call on a live signal.
                unsafe { (client.hsa.api().hsa_signal_store_relaxed)(done, BATCH as i64) };
                let mut last = 0;
                for index in 0..BATCH {
                    let (packet, _) = barrier_and(&[], done);
                    last = queue.reserve_spinning();
                    queue.publish(last, &packet, header, 0);
                    if index % 64 == 63 {
                        queue.ring(last);
                    }
                }
                queue.ring(last);
                assert_eq!(client.wait_eq(done, 0, 10_000), 0);
            }
            start.elapsed()
        });
    });
    group.throughput(Throughput::Elements(1));
    group.bench_function("round_trip", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                // SAFETY: table call on a live signal.
                unsafe { (client.hsa.api().hsa_signal_store_relaxed)(done, 1) };
                let start = Instant::now();
                let (packet, _) = barrier_and(&[], done);
                let id = queue.reserve_spinning();
                queue.publish(id, &packet, header, 0);
                queue.ring(id);
                assert_eq!(client.wait_eq(done, 0, 10_000), 0);
                total += start.elapsed();
            }
            total
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = baseline, soft_runtime
}
criterion_main!(benches);
