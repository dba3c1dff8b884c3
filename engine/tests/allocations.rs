//! A steady stream of submissions performs zero heap allocations on the submitting thread.
//!
//! A counting global allocator tallies allocations made by threads that opted in; the test
//! warms the queues up (vectors reach their steady capacity, epoch rows are recycled), then
//! counts across thousands of dispatches, fills, copies, updates, barriers and cross-queue edges.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use aqueduct_engine::{Dispatch, MemoryKind, WaitStrategy};
use common::*;

struct CountingAllocator;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: forwards to the system allocator; the counter has no effect on the memory handed out.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.try_with(Cell::get).unwrap_or(false) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(pointer, layout) }
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.try_with(Cell::get).unwrap_or(false) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(pointer, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn counted<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    COUNTING.with(|counting| counting.set(true));
    let result = f();
    COUNTING.with(|counting| counting.set(false));
    (result, ALLOCATIONS.load(Ordering::Relaxed) - before)
}

fn steady_state_submissions_allocate_nothing(strategy: WaitStrategy) {
    let engine = engine(strategy);
    let device = engine.device();
    let kernels = test_kernels(&engine);
    let (first, second) = (queue(device), queue(device));
    let chain = device.create_semaphore(0).unwrap();
    let data = device.allocate(MemoryKind::HostVisible, 4096).unwrap();
    let scratch = device.allocate(MemoryKind::HostVisible, 4096).unwrap();
    let payload = [5u8; 64];
    let mut value = 0u64;
    // One round: a dispatch, a fill, a copy, an inline update and a barrier, alternating queues
    // so each submission waits on the other queue (a device-side barrier).
    let round = |value: &mut u64| {
        let bindings = [data.range(0, 1024), data.range(0, 1024)];
        for (index, queue) in [&first, &second, &first, &second, &first].into_iter().enumerate() {
            let (wait, signal) = ([chain.at(*value)], [chain.at(*value + 1)]);
            match index {
                0 => queue
                    .dispatch(
                        &kernels.add_from,
                        &Dispatch::grid([256, 1, 1]).workgroup([64, 1, 1]).bindings(&bindings).constants(&[1, 256]),
                    )
                    .waits(&wait)
                    .signals(&signal)
                    .submit(),
                1 => queue.fill(scratch.range(0, 256), &[1, 2, 3, 4]).waits(&wait).signals(&signal).submit(),
                2 => queue.copy(scratch.range(0, 256), scratch.range(1024, 256)).waits(&wait).signals(&signal).submit(),
                3 => queue.update(&scratch, 2048, &payload).waits(&wait).signals(&signal).submit(),
                _ => queue.barrier().waits(&wait).signals(&signal).submit(),
            }
            .unwrap();
            *value += 1;
        }
    };
    for _ in 0..400 {
        round(&mut value);
    }
    chain.wait(value, TIMEOUT).unwrap();
    let ((), allocations) = counted(|| {
        for _ in 0..1000 {
            round(&mut value);
        }
    });
    chain.wait(value, TIMEOUT).unwrap();
    assert_eq!(allocations, 0, "{allocations} heap allocations across 5000 steady-state submissions");
    // The work really ran: 1400 add_from steps of +1 on the first 256 elements.
    let values = words(&data.to_vec().unwrap());
    assert!(values[..256].iter().all(|value| *value == values[0]) && values[0] >= 1400, "{:?}", &values[..4]);
}

#[test]
fn steady_state_submissions_allocate_nothing_barrier_value() {
    steady_state_submissions_allocate_nothing(WaitStrategy::BarrierValue);
}

#[test]
fn steady_state_submissions_allocate_nothing_barrier_and() {
    steady_state_submissions_allocate_nothing(WaitStrategy::BarrierAnd);
}

/// Batches of 64 operations, alternating queues, each batch waiting on the other queue's last
/// one (a device barrier) and chaining its own rows through same-queue waits.
fn steady_state_batches_allocate_nothing(strategy: WaitStrategy) {
    let engine = engine(strategy);
    let device = engine.device();
    let (first, second) = (queue(device), queue(device));
    let chain = device.create_semaphore(0).unwrap();
    let scratch = device.allocate(MemoryKind::HostVisible, 4096).unwrap();
    let payload = [5u8; 64];
    let mut value = 0u64;
    let round = |value: &mut u64| {
        for queue in [&first, &second] {
            queue
                .batch(|batch| {
                    for index in 0..64 {
                        let (wait, signal) = ([chain.at(*value)], [chain.at(*value + 1)]);
                        match index % 3 {
                            0 => {
                                batch.fill(scratch.range(0, 256), &[1, 2, 3, 4]).waits(&wait).signals(&signal).submit()
                            }
                            1 => batch.update(&scratch, 2048, &payload).waits(&wait).signals(&signal).submit(),
                            _ => batch.barrier().waits(&wait).signals(&signal).submit(),
                        }?;
                        *value += 1;
                    }
                    Ok(())
                })
                .unwrap();
        }
    };
    for _ in 0..40 {
        round(&mut value);
    }
    chain.wait(value, TIMEOUT).unwrap();
    let ((), allocations) = counted(|| {
        for _ in 0..40 {
            round(&mut value);
        }
    });
    chain.wait(value, TIMEOUT).unwrap();
    assert_eq!(allocations, 0, "{allocations} heap allocations across 5120 batched submissions");
    assert_eq!(first.stats().deferred + second.stats().deferred, 0, "every wait had a published producer");
}

#[test]
fn steady_state_batches_allocate_nothing_barrier_value() {
    steady_state_batches_allocate_nothing(WaitStrategy::BarrierValue);
}

#[test]
fn steady_state_batches_allocate_nothing_barrier_and() {
    steady_state_batches_allocate_nothing(WaitStrategy::BarrierAnd);
}
