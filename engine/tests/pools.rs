//! Pools and queue-ordered allocation: reuse on the same queue at once, on another queue only
//! behind the dealloca (proved with guard patterns under relaxed mode and a stalled producer),
//! exhaustion and waiting, trimming and stats, handles dropped early, bad input, and a 4-thread
//! stress where no two allocations ever overlap.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aqueduct_engine::{
    BindingTable, EngineError, Exhaustion, MemoryKind, Pool, PoolConfig, PoolStats, TrimPolicy, WaitStrategy,
};
use common::{COUNT, KernelRig, TIMEOUT, controls, eventually, queue, release, words};

const STRATEGIES: [WaitStrategy; 2] = [WaitStrategy::BarrierValue, WaitStrategy::BarrierAnd];
const BYTES: u64 = COUNT as u64 * 4;

/// A pool of exactly one `BYTES` block: every alloca after the first must reuse memory.
fn one_block_pool(rig: &KernelRig) -> Pool {
    rig.device().create_pool(PoolConfig::new(MemoryKind::HostVisible).slab_size(BYTES).max_size(BYTES)).unwrap()
}

fn ramp(buffer: &aqueduct_engine::Buffer) -> Vec<u32> {
    words(&buffer.to_vec().unwrap())
}

fn assert_ramp(buffer: &aqueduct_engine::Buffer, start: u32, what: &str) {
    let expected: Vec<u32> = (0..COUNT).map(|i| start + i).collect();
    assert_eq!(ramp(buffer), expected, "{what}");
}

#[test]
fn another_queue_reuses_memory_only_after_the_dealloca_retires() {
    for strategy in STRATEGIES {
        let rig = KernelRig::new(strategy);
        let device = rig.device();
        let pool = one_block_pool(&rig);
        let (a, b) = (queue(device), queue(device));
        let (ready, done, copied, stored) = (
            device.create_semaphore(0).unwrap(),
            device.create_semaphore(0).unwrap(),
            device.create_semaphore(0).unwrap(),
            device.create_semaphore(0).unwrap(),
        );
        let seen = rig.buffer();
        // A's second packet (the copy out of x) stalls: x is still being read.
        controls(&a).inject_fault(a.hsa_queue(), 1, aqueduct_soft_hsa::Fault::Stall).unwrap();
        let x = a.alloca(&pool, BYTES).submit().unwrap();
        let x_address = x.device_address();
        rig.store(&a, &x, 100, &[], &[stored.at(1)]);
        rig.add(&a, &seen, &x, 0, &[], &[copied.at(1)]);
        a.dealloca(&x).submit().unwrap();
        assert!(matches!(x.to_vec(), Err(EngineError::BufferDeallocated)));
        // B gets the same memory, behind a device-side wait on A's dealloca.
        let waits_before = b.stats().device_waits;
        let y = b.alloca(&pool, BYTES).signal(ready.at(1)).submit().unwrap();
        assert_eq!(y.device_address(), x_address, "{strategy:?}: the only block is reused");
        assert_eq!(b.stats().device_waits, waits_before + 1, "{strategy:?}: the alloca waits on the device");
        rig.store(&b, &y, 900, &[ready.at(1)], &[done.at(1)]);
        stored.wait(1, TIMEOUT).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        // The guard pattern is intact while A's copy has not run.
        assert_eq!(done.value(), 0, "{strategy:?}: B's store ran before A's dealloca");
        assert_ramp(&y, 100, "the memory still holds A's data");
        release(&a, || copied.value() == 1);
        done.wait(1, TIMEOUT).unwrap();
        assert_ramp(&seen, 100, "A's copy read A's data, not B's");
        assert_ramp(&y, 900, "B's store");
        b.dealloca(&y).submit().unwrap();
    }
}

#[test]
fn another_queue_grows_the_pool_before_it_waits_on_memory_in_flight() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let pool =
        device.create_pool(PoolConfig::new(MemoryKind::HostVisible).slab_size(BYTES).max_size(2 * BYTES)).unwrap();
    let (a, b) = (queue(device), queue(device));
    let (ready, stored) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
    // A's memory goes back while A is stalled: in flight for as long as the test wants.
    controls(&a).inject_fault(a.hsa_queue(), 0, aqueduct_soft_hsa::Fault::Stall).unwrap();
    let x = a.alloca(&pool, BYTES).submit().unwrap();
    rig.store(&a, &x, 1, &[], &[stored.at(1)]);
    a.dealloca(&x).submit().unwrap();
    // With room to grow, B takes a new block: no wait on A, which would tie B to A's stall.
    let waits = b.stats().device_waits;
    let y = b.alloca(&pool, BYTES).signal(ready.at(1)).submit().unwrap();
    assert_ne!(y.device_address(), x.device_address());
    assert_eq!(b.stats().device_waits, waits);
    ready.wait(1, TIMEOUT).unwrap();
    // At the max size, A's in-flight memory is next, behind a device wait.
    let z = b.alloca(&pool, BYTES).signal(ready.at(2)).submit().unwrap();
    assert_eq!(z.device_address(), x.device_address());
    assert_eq!(b.stats().device_waits, waits + 1);
    assert_eq!(ready.value(), 1, "the second alloca waits for A's dealloca");
    release(&a, || stored.value() == 1);
    ready.wait(2, TIMEOUT).unwrap();
}

#[test]
fn the_same_queue_reuses_memory_at_once_and_submits_nothing_for_it() {
    for strategy in STRATEGIES {
        let rig = KernelRig::new(strategy);
        let device = rig.device();
        let pool = one_block_pool(&rig);
        let a = queue(device);
        let done = device.create_semaphore(0).unwrap();
        let seen = rig.buffer();
        let x = a.alloca(&pool, BYTES).submit().unwrap();
        rig.store(&a, &x, 5, &[], &[]);
        rig.add(&a, &seen, &x, 0, &[], &[]);
        a.dealloca(&x).submit().unwrap();
        // What this queue submitted; not what it drained, which the completion thread advances
        // at any moment.
        let submitted = |stats: aqueduct_engine::QueueStats| (stats.submissions, stats.packets, stats.epochs_submitted);
        let before = submitted(a.stats());
        let y = a.alloca(&pool, BYTES).submit().unwrap();
        assert_eq!(y.device_address(), x.device_address());
        assert_eq!(submitted(a.stats()), before, "{strategy:?}: an alloca with nothing to order submits nothing");
        rig.store(&a, &y, 70, &[], &[done.at(1)]);
        done.wait(1, TIMEOUT).unwrap();
        assert_ramp(&seen, 5, "the copy ran before the reuse");
        assert_ramp(&y, 70, "the reuse");
        let stats = pool.stats();
        assert_eq!((stats.bytes_in_use, stats.live_allocations, stats.bytes_reserved), (BYTES, 1, BYTES));
    }
}

#[test]
fn an_exhausted_pool_fails_or_waits_for_a_dealloca() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let a = queue(device);
    let pool = one_block_pool(&rig);
    let x = a.alloca(&pool, BYTES).submit().unwrap();
    let before = pool.stats();
    match a.alloca(&pool, 1).submit() {
        Err(EngineError::PoolExhausted { requested, in_use, reserved, max_size }) => {
            assert_eq!((requested, in_use, reserved, max_size), (256, BYTES, BYTES, BYTES))
        }
        other => panic!("expected PoolExhausted, got {other:?}"),
    }
    assert_eq!(pool.stats(), before, "a refused alloca changes nothing");

    // A waiting pool takes the memory once another thread's dealloca returns it.
    let waiting = device
        .create_pool(
            PoolConfig::new(MemoryKind::HostVisible)
                .slab_size(BYTES)
                .max_size(BYTES)
                .exhaustion(Exhaustion::Wait(TIMEOUT)),
        )
        .unwrap();
    let held = a.alloca(&waiting, BYTES).submit().unwrap();
    let b = queue(device);
    let returner = {
        let (a, held) = (a.clone(), held.clone());
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            a.dealloca(&held).submit().unwrap();
        })
    };
    let ready = device.create_semaphore(0).unwrap();
    let again = b.alloca(&waiting, BYTES).signal(ready.at(1)).submit().unwrap();
    returner.join().unwrap();
    assert_eq!(again.device_address(), held.device_address());
    ready.wait(1, TIMEOUT).unwrap();

    // With nothing in flight to wait for, the wait ends in the typed error.
    let short = device
        .create_pool(
            PoolConfig::new(MemoryKind::HostVisible)
                .slab_size(BYTES)
                .max_size(BYTES)
                .exhaustion(Exhaustion::Wait(Duration::from_millis(20))),
        )
        .unwrap();
    let _taken = a.alloca(&short, BYTES).submit().unwrap();
    assert!(matches!(a.alloca(&short, BYTES).submit(), Err(EngineError::PoolExhausted { .. })));
    a.dealloca(&x).submit().unwrap();
}

#[test]
fn fragments_returned_in_flight_coalesce_for_a_waiting_alloca() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let (a, b) = (queue(device), queue(device));
    let pool = device
        .create_pool(
            PoolConfig::new(MemoryKind::HostVisible)
                .slab_size(2 * BYTES)
                .max_size(2 * BYTES)
                .exhaustion(Exhaustion::Wait(TIMEOUT)),
        )
        .unwrap();
    let (left, right) = (a.alloca(&pool, BYTES).submit().unwrap(), a.alloca(&pool, BYTES).submit().unwrap());
    // Both halves go back in flight on two queues, each behind a stalled packet.
    for queue in [&a, &b] {
        controls(queue).inject_fault(queue.hsa_queue(), 0, aqueduct_soft_hsa::Fault::Stall).unwrap();
        queue.barrier().submit().unwrap();
    }
    a.dealloca(&left).submit().unwrap();
    b.dealloca(&right).submit().unwrap();
    let stats = pool.stats();
    assert_eq!((stats.bytes_pending, stats.bytes_free), (2 * BYTES, 0));
    let releaser = {
        let (a, b, pool) = (a.clone(), b.clone(), pool.clone());
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            for queue in [&a, &b] {
                release(queue, || pool.stats().bytes_pending < 2 * BYTES || pool.stats().live_allocations > 0);
            }
        })
    };
    // Neither half alone holds 2 × BYTES: the alloca waits for both to retire and coalesce.
    let whole = a.alloca(&pool, 2 * BYTES).submit().unwrap();
    releaser.join().unwrap();
    assert_eq!(whole.device_address(), left.device_address().min(right.device_address()));
    assert_eq!(pool.stats().fragmentation, 0.0);
}

#[test]
fn trimming_gives_free_blocks_back_down_to_the_reserve() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let a = queue(device);
    let (_, _, allocations_before) = device.live_objects();
    let pool = device.create_pool(PoolConfig::new(MemoryKind::HostVisible).slab_size(BYTES).reserve(BYTES)).unwrap();
    assert_eq!(pool.stats().bytes_reserved, BYTES, "the reserve is allocated up front");
    let buffers: Vec<_> = (0..4).map(|_| a.alloca(&pool, BYTES).submit().unwrap()).collect();
    let stats = pool.stats();
    assert_eq!((stats.slabs, stats.bytes_in_use, stats.high_water), (4, 4 * BYTES, 4 * BYTES));
    let done = device.create_semaphore(0).unwrap();
    for (index, buffer) in buffers.iter().enumerate() {
        let signal = [done.at(index as u64 + 1)];
        a.dealloca(buffer).signals(&signal).submit().unwrap();
    }
    done.wait(4, TIMEOUT).unwrap();
    assert!(eventually(TIMEOUT, || pool.stats().bytes_pending == 0));
    assert_eq!(pool.trim(), 3 * BYTES, "everything above the reserve");
    let stats = pool.stats();
    assert_eq!((stats.slabs, stats.bytes_reserved, stats.bytes_free, stats.high_water), (1, BYTES, BYTES, 4 * BYTES));
    // The deallocated handles still hold the pool; with them gone its blocks are freed.
    drop((pool, buffers));
    assert!(eventually(TIMEOUT, || device.live_objects().2 == allocations_before), "the pool's blocks are freed");

    // KeepReserve trims as memory comes back.
    let eager = device
        .create_pool(PoolConfig::new(MemoryKind::HostVisible).slab_size(BYTES).trim(TrimPolicy::KeepReserve))
        .unwrap();
    let x = a.alloca(&eager, BYTES).submit().unwrap();
    a.dealloca(&x).signal(done.at(5)).submit().unwrap();
    done.wait(5, TIMEOUT).unwrap();
    assert!(eventually(TIMEOUT, || eager.stats().slabs == 0));
}

#[test]
fn handles_dropped_early_keep_their_memory_until_the_rows_settle() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let a = queue(device);
    let (_, _, allocations_before) = device.live_objects();
    let pool = one_block_pool(&rig);
    let done = device.create_semaphore(0).unwrap();
    // Dropped without a dealloca while a stalled store still writes it: held, not reused.
    controls(&a).inject_fault(a.hsa_queue(), 0, aqueduct_soft_hsa::Fault::Stall).unwrap();
    let x = a.alloca(&pool, BYTES).submit().unwrap();
    rig.store(&a, &x, 1, &[], &[done.at(1)]);
    drop(x);
    let stats = pool.stats();
    assert_eq!((stats.bytes_in_use, stats.bytes_held, stats.live_allocations), (0, BYTES, 0));
    assert!(matches!(a.alloca(&pool, BYTES).submit(), Err(EngineError::PoolExhausted { .. })));
    release(&a, || done.value() == 1);
    assert!(eventually(TIMEOUT, || pool.stats().bytes_free == BYTES));
    // The pool's handle dropped while an allocation lives: the buffer keeps it working.
    let y = a.alloca(&pool, BYTES).submit().unwrap();
    drop(pool);
    rig.store(&a, &y, 40, &[], &[done.at(2)]);
    done.wait(2, TIMEOUT).unwrap();
    assert_ramp(&y, 40, "an allocation of a dropped pool");
    a.dealloca(&y).signal(done.at(3)).submit().unwrap();
    done.wait(3, TIMEOUT).unwrap();
    drop(y);
    assert!(eventually(TIMEOUT, || device.live_objects().2 == allocations_before), "the block is freed");
}

#[test]
fn a_dealloca_refused_by_a_failed_wait_holds_its_memory_until_the_rows_settle() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let a = queue(device);
    let pool = one_block_pool(&rig);
    let (failed, done) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
    failed.fail("the producer gave up");
    let x = a.alloca(&pool, BYTES).submit().unwrap();
    // Enqueued, then failed at admission: the buffer is gone, its memory dated by nothing.
    assert!(matches!(a.dealloca(&x).wait(failed.at(1)).submit(), Err(EngineError::DependencyFailed(_))));
    assert!(matches!(x.to_vec(), Err(EngineError::BufferDeallocated)));
    assert!(matches!(a.dealloca(&x).submit(), Err(EngineError::BufferDeallocated)));
    // Its row settled when it failed, so the hold ends at once; the queue's timeline failed with
    // it, and the next dealloca takes a fresh one.
    assert!(eventually(TIMEOUT, || pool.stats().bytes_free == BYTES), "{:?}", pool.stats());
    let y = a.alloca(&pool, BYTES).submit().unwrap();
    a.dealloca(&y).signal(done.at(1)).submit().unwrap();
    done.wait(1, TIMEOUT).unwrap();
    assert!(eventually(TIMEOUT, || pool.stats().bytes_free == BYTES), "{:?}", pool.stats());
}

#[test]
fn a_dealloca_that_fails_on_the_device_holds_its_memory_while_the_failed_queue_lives() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let (a, b) = (queue(device), queue(device));
    let pool = one_block_pool(&rig);
    let (produced, returned) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
    let scratch = rig.buffer();
    // B stalls, then faults on the store A's dealloca waits for (a device barrier by then).
    controls(&b).inject_fault(b.hsa_queue(), 0, aqueduct_soft_hsa::Fault::Stall).unwrap();
    controls(&b).inject_fault(b.hsa_queue(), 1, aqueduct_soft_hsa::Fault::KernelFault { status: 0x1016 }).unwrap();
    b.barrier().submit().unwrap();
    rig.store(&b, &scratch, 1, &[], &[produced.at(1)]);
    let x = a.alloca(&pool, BYTES).submit().unwrap();
    a.dealloca(&x).wait(produced.at(1)).signal(returned.at(1)).submit().unwrap();
    release(&b, || produced.query().is_err());
    assert!(matches!(returned.wait(1, TIMEOUT), Err(EngineError::SemaphoreFailed(_))));
    // Nothing dates the memory: held while the failed queue may still run what it had.
    let stats = pool.stats();
    assert_eq!((stats.bytes_held, stats.bytes_pending, stats.bytes_free), (BYTES, 0, 0), "{stats:?}");
    assert!(matches!(a.alloca(&pool, BYTES).submit(), Err(EngineError::PoolExhausted { .. })));
    drop(b);
    assert!(eventually(TIMEOUT, || pool.stats().bytes_free == BYTES), "{:?}", pool.stats());
    let y = a.alloca(&pool, BYTES).submit().unwrap();
    let again = device.create_semaphore(0).unwrap();
    a.dealloca(&y).signal(again.at(1)).submit().unwrap();
    again.wait(1, TIMEOUT).unwrap();
}

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let a = queue(device);
    let pool =
        device.create_pool(PoolConfig::new(MemoryKind::HostVisible).slab_size(BYTES).max_size(4 * BYTES)).unwrap();
    let kept = a.alloca(&pool, 100).submit().unwrap();
    let signal = device.create_semaphore(5).unwrap();
    let (stats, queue_stats) = (pool.stats(), a.stats());
    let unchanged = |what: &str| {
        assert_eq!(pool.stats(), stats, "{what}: pool");
        assert_eq!(a.stats(), queue_stats, "{what}: queue");
    };
    let invalid = |result: Result<aqueduct_engine::Buffer, EngineError>| {
        matches!(result, Err(EngineError::InvalidArgument { .. }))
    };
    assert!(invalid(a.alloca(&pool, 0).submit()));
    unchanged("size 0");
    assert!(invalid(a.alloca(&pool, 4 * BYTES + 1).submit()));
    assert!(invalid(a.alloca(&pool, u64::MAX).submit()));
    unchanged("beyond the max size");
    assert!(matches!(
        a.alloca(&pool, 64).signal(signal.at(5)).submit(),
        Err(EngineError::SemaphoreNotIncreasing { .. })
    ));
    unchanged("a signal that does not increase");
    let other = common::engine(WaitStrategy::BarrierValue);
    let foreign = other.device().create_pool(PoolConfig::new(MemoryKind::HostVisible)).unwrap();
    assert!(matches!(a.alloca(&foreign, 64).submit(), Err(EngineError::ForeignObject { .. })));
    unchanged("a pool of another device");
    for config in [
        PoolConfig::new(MemoryKind::HostVisible).granule(3),
        PoolConfig::new(MemoryKind::HostVisible).granule(8),
        PoolConfig::new(MemoryKind::HostVisible).slab_size(1000),
        PoolConfig::new(MemoryKind::HostVisible).slab_size(BYTES).reserve(2 * BYTES).max_size(BYTES),
        PoolConfig::new(MemoryKind::HostVisible).max_size(BYTES),
        PoolConfig::new(MemoryKind::HostVisible).agent(7),
    ] {
        assert!(device.create_pool(config).is_err(), "{config:?}");
    }

    // Dealloca: a buffer not from a pool, a bad signal (the buffer stays live), twice.
    let plain = rig.buffer();
    assert!(matches!(a.dealloca(&plain).submit(), Err(EngineError::InvalidArgument { .. })));
    assert!(matches!(a.dealloca(&kept).signal(signal.at(1)).submit(), Err(EngineError::SemaphoreNotIncreasing { .. })));
    unchanged("refused deallocas");
    a.fill(kept.whole(), &[1]).submit().unwrap();
    let table = BindingTable::from_bindings(&[kept.whole()]).unwrap();
    let done = device.create_semaphore(0).unwrap();
    a.dealloca(&kept).signal(done.at(1)).submit().unwrap();
    assert!(matches!(a.dealloca(&kept).submit(), Err(EngineError::BufferDeallocated)), "twice");
    // Every use after the dealloca is refused.
    assert!(matches!(a.fill(kept.whole(), &[2]).submit(), Err(EngineError::BufferDeallocated)));
    assert!(matches!(a.copy(kept.range(0, 4), plain.range(0, 4)).submit(), Err(EngineError::BufferDeallocated)));
    assert!(matches!(kept.write(0, &[1]), Err(EngineError::BufferDeallocated)));
    assert!(matches!(BindingTable::from_bindings(&[kept.whole()]), Err(EngineError::BufferDeallocated)));
    let recorder = device.create_command_buffer(aqueduct_engine::CommandBufferUsage::Reusable).unwrap();
    let mut recording = recorder;
    recording.fill(aqueduct_engine::BufferRef::Slot { slot: 0, offset: 0, length: 4 }, &[3]).unwrap();
    recording.finish().unwrap();
    // A table built before the dealloca is checked again at each execution.
    assert!(matches!(a.execute(&recording, &table).submit(), Err(EngineError::BufferDeallocated)));
    // A recording cannot bind an alloca's buffer statically.
    let live = a.alloca(&pool, 64).submit().unwrap();
    let mut static_recording = device.create_command_buffer(aqueduct_engine::CommandBufferUsage::Reusable).unwrap();
    assert!(matches!(
        static_recording.fill(aqueduct_engine::BufferRef::from(&live), &[3]),
        Err(EngineError::InvalidArgument { .. })
    ));
    done.wait(1, TIMEOUT).unwrap();
}

/// 4 threads, each on its own queue, alloca and dealloca random sizes with random lifetimes from
/// one small pool, so they keep taking each other's memory while it is still in flight. Each
/// allocation is filled with its own pattern once the alloca signals, then copied out before its
/// dealloca: a copy that saw anything else means two allocations overlapped on the device. The
/// host side checks that the pool never hands out a range that is live.
#[test]
fn four_threads_alloca_and_dealloca_with_no_overlap() {
    const THREADS: usize = 4;
    const ROUNDS: usize = 250;
    const MAX_WORDS: u64 = 1024;
    for strategy in STRATEGIES {
        let rig = KernelRig::new(strategy);
        let device = rig.device().clone();
        let pool = device
            .create_pool(
                PoolConfig::new(MemoryKind::HostVisible)
                    .slab_size(16 * 1024)
                    .max_size(128 * 1024)
                    .exhaustion(Exhaustion::Wait(TIMEOUT)),
            )
            .unwrap();
        let live: Arc<Mutex<BTreeMap<u64, (u64, usize)>>> = Default::default();
        let threads: Vec<_> = (0..THREADS)
            .map(|thread| {
                let (device, pool, live) = (device.clone(), pool.clone(), live.clone());
                std::thread::spawn(move || {
                    let queue = queue(&device);
                    let mut random = common::Xorshift::new(0x9e37 + thread as u64);
                    let semaphore = device.create_semaphore(0).unwrap();
                    let mut value = 0;
                    let out = device.allocate(MemoryKind::HostVisible, ROUNDS as u64 * MAX_WORDS * 4).unwrap();
                    let mut held: Vec<(aqueduct_engine::Buffer, u64, u32)> = Vec::new();
                    let mut expected = Vec::new();
                    for round in 0..ROUNDS {
                        let words = 1 + random.below(MAX_WORDS);
                        value += 1;
                        let buffer = queue.alloca(&pool, words * 4).signal(semaphore.at(value)).submit().unwrap();
                        let address = buffer.device_address();
                        {
                            let mut live = live.lock().unwrap();
                            if let Some((&start, &(size, owner))) = live.range(..address + words * 4).next_back() {
                                assert!(
                                    start + size <= address,
                                    "thread {thread}: {address:#x} overlaps {start:#x}+{size} of thread {owner}"
                                );
                            }
                            live.insert(address, (words * 4, thread));
                        }
                        let pattern = ((thread as u32) << 24) | round as u32;
                        let ready = value;
                        value += 1;
                        queue
                            .fill(buffer.whole(), &pattern.to_le_bytes())
                            .wait(semaphore.at(ready))
                            .signal(semaphore.at(value))
                            .submit()
                            .unwrap();
                        held.push((buffer, words, pattern));
                        // Random lifetimes: return a random held allocation most rounds.
                        while held.len() > 3 || (!held.is_empty() && random.below(3) == 0) {
                            let (buffer, words, pattern) = held.swap_remove(random.below(held.len() as u64) as usize);
                            let slot = expected.len() as u64 * MAX_WORDS * 4;
                            queue.copy(buffer.whole(), out.range(slot, words * 4)).submit().unwrap();
                            expected.push((words, pattern));
                            live.lock().unwrap().remove(&buffer.device_address());
                            queue.dealloca(&buffer).submit().unwrap();
                        }
                    }
                    for (buffer, words, pattern) in held.drain(..) {
                        let slot = expected.len() as u64 * MAX_WORDS * 4;
                        queue.copy(buffer.whole(), out.range(slot, words * 4)).submit().unwrap();
                        expected.push((words, pattern));
                        live.lock().unwrap().remove(&buffer.device_address());
                        queue.dealloca(&buffer).submit().unwrap();
                    }
                    value += 1;
                    queue.barrier().signal(semaphore.at(value)).submit().unwrap();
                    semaphore.wait(value, TIMEOUT).unwrap();
                    let bytes = out.to_vec().unwrap();
                    for (index, (words, pattern)) in expected.iter().enumerate() {
                        let start = index * MAX_WORDS as usize * 4;
                        let seen = common::words(&bytes[start..start + *words as usize * 4]);
                        assert!(
                            seen.iter().all(|word| word == pattern),
                            "thread {thread}: allocation {index} was overwritten: {:x?}",
                            &seen[..4.min(seen.len())]
                        );
                    }
                    expected.len()
                })
            })
            .collect();
        let checked: usize = threads.into_iter().map(|thread| thread.join().unwrap()).sum();
        assert_eq!(checked, THREADS * ROUNDS);
        assert!(eventually(TIMEOUT, || {
            let stats: PoolStats = pool.stats();
            stats.bytes_in_use == 0 && stats.bytes_pending == 0 && stats.bytes_held == 0
        }));
        let stats = pool.stats();
        assert_eq!(stats.bytes_free, stats.bytes_reserved, "{strategy:?}: {stats:?}");
        assert_eq!(stats.fragmentation, 0.0, "{strategy:?}: every block is whole again: {stats:?}");
        assert!(stats.allocation_entities < THREADS * ROUNDS / 4, "{strategy:?}: entities are recycled: {stats:?}");
    }
}
