//! The semaphore table's hot operations, one slot lookup each: the validation check
//! (`highest_promised`), admission's wait resolution (`wait_source`) and producer record
//! (`record_queued_signal_with_frontier`), and reclaim's `signal`. 64 semaphores spread over a
//! table of the default capacity, so the lookups cross what used to be separate chunks.
//!
//! Run: `cargo bench -p aqueduct-systems --bench semaphores` (`SEMAPHORE_CAPACITY=N` sizes the
//! table; the default is the engine's, 65,536).

use aqueduct_components::dependency::Producer;
use aqueduct_components::frontier::Frontier;
use aqueduct_components::semaphore_table::{SemaphoreTable, WaitSource};
use aqueduct_systems::sync::SemaphoreSync;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const SEMAPHORES: usize = 64;

fn table() -> (SemaphoreTable, Vec<u32>) {
    let capacity = std::env::var("SEMAPHORE_CAPACITY").ok().and_then(|text| text.parse().ok()).unwrap_or(1 << 16);
    let table = SemaphoreTable::new(capacity);
    let all: Vec<u32> = (0..4096).map(|_| table.allocate(0).expect("room")).collect();
    // Every 65th: spread over the first 4096 slots without a power-of-two stride, whose
    // addresses would all fall in one L1 set.
    let used: Vec<u32> = all.iter().copied().step_by(65).collect();
    assert_eq!(used.len(), SEMAPHORES);
    (table, used)
}

fn semaphores(c: &mut Criterion) {
    let (table, used) = table();
    let mut frontier = Frontier::EMPTY;
    frontier.insert(3, 11);
    frontier.insert(5, 12);
    let producer = Producer { queue: 1, epoch: 1 };
    for &slot in &used {
        table.record_queued_signal_with_frontier(slot, 1, producer, &frontier);
    }
    let mut group = c.benchmark_group("semaphores");
    group.throughput(Throughput::Elements(SEMAPHORES as u64));
    group.bench_function("highest_promised", |b| {
        b.iter(|| used.iter().map(|&slot| table.highest_promised(core::hint::black_box(slot))).sum::<u64>())
    });
    group.bench_function("wait_source", |b| {
        b.iter(|| {
            used.iter()
                .filter(|&&slot| matches!(table.wait_source(core::hint::black_box(slot), 1), WaitSource::Queued(_)))
                .count()
        })
    });
    let mut value = 1;
    group.bench_function("record_queued_signal_with_frontier", |b| {
        b.iter(|| {
            value += 1;
            for &slot in &used {
                table.record_queued_signal_with_frontier(core::hint::black_box(slot), value, producer, &frontier);
            }
        })
    });
    let mut value = 1;
    group.bench_function("signal", |b| {
        b.iter(|| {
            value += 1;
            used.iter().filter(|&&slot| table.signal(core::hint::black_box(slot), value)).count()
        })
    });
    group.finish();
}

criterion_group!(benches, semaphores);
criterion_main!(benches);
