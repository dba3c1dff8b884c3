//! Batched submission: operations enqueued on a `Batch` are published by one pass of the stages'
//! schedule, in queue order, with the same validation, waits, parking and failure behaviour as
//! the queue's own calls.

mod common;

use aqueduct_engine::{CommandBufferUsage, Dispatch, EngineConfig, EngineError, MemoryKind, WaitStrategy};
use common::*;

const ELEMENTS: u32 = 256;

/// A batch of dependent dispatches, each adding 1 to what the previous wrote: the barrier bit
/// keeps them in order even in relaxed mode (which runs barrier-free runs in reverse).
fn dependent_steps(strategy: WaitStrategy) {
    let engine = engine(strategy);
    let device = engine.device();
    let kernels = test_kernels(&engine);
    let queue = queue(device);
    let data = device.allocate(MemoryKind::HostVisible, u64::from(ELEMENTS) * 4).unwrap();
    let done = device.create_semaphore(0).unwrap();
    let bindings = [data.whole()];
    let steps = [data.whole(), data.whole()];
    const STEPS: u32 = 64;
    queue
        .batch(|batch| {
            let store = Dispatch::grid([ELEMENTS, 1, 1]).workgroup([64, 1, 1]).bindings(&bindings);
            batch.dispatch(&kernels.store_value, &store.constants(&[10, ELEMENTS])).submit()?;
            for _ in 0..STEPS {
                let add = Dispatch::grid([ELEMENTS, 1, 1]).workgroup([64, 1, 1]).bindings(&steps);
                batch.dispatch(&kernels.add_from, &add.constants(&[1, ELEMENTS])).submit()?;
            }
            assert_eq!(batch.enqueued(), STEPS as usize + 1, "nothing is published before the flush");
            #[allow(deprecated)]
            let old_name = batch.staged();
            assert_eq!(old_name, batch.enqueued(), "`staged`, the old name, still counts the enqueued rows");
            batch.barrier().signal(done.at(1)).submit()
        })
        .unwrap();
    let stats = queue.stats();
    assert_eq!((stats.submissions, stats.packets, stats.epochs_submitted), (66, 66, 66), "{strategy:?}: {stats:?}");
    done.wait(1, TIMEOUT).unwrap();
    let values = words(&data.to_vec().unwrap());
    for (index, value) in values.iter().enumerate() {
        assert_eq!(*value, 10 + index as u32 + STEPS, "{strategy:?}: element {index}");
    }
}

#[test]
fn a_batch_runs_in_order_barrier_value() {
    dependent_steps(WaitStrategy::BarrierValue);
}

#[test]
fn a_batch_runs_in_order_barrier_and() {
    dependent_steps(WaitStrategy::BarrierAnd);
}

#[test]
fn waits_on_the_batch_own_signals_cost_no_packet() {
    let engine = engine(WaitStrategy::Auto);
    let device = engine.device();
    let queue = queue(device);
    let chain = device.create_semaphore(0).unwrap();
    let scratch = device.allocate(MemoryKind::HostVisible, 4096).unwrap();
    queue
        .batch(|batch| {
            for value in 0..32 {
                batch
                    .fill(scratch.range(0, 64), &[value as u8])
                    .wait(chain.at(value))
                    .signal(chain.at(value + 1))
                    .submit()?;
            }
            Ok(())
        })
        .unwrap();
    let stats = queue.stats();
    assert_eq!((stats.packets, stats.device_waits, stats.deferred), (32, 0, 0), "{stats:?}");
    chain.wait(32, TIMEOUT).unwrap();
    assert_eq!(scratch.to_vec().unwrap()[..64], [31; 64]);
}

#[test]
fn a_cross_queue_wait_in_a_batch_is_a_device_barrier() {
    let engine = engine(WaitStrategy::Auto);
    let device = engine.device();
    let (producer, consumer) = (queue(device), queue(device));
    let handoff = device.create_semaphore(0).unwrap();
    let data = device.allocate(MemoryKind::HostVisible, 256).unwrap();
    stall_next(&producer);
    producer.fill(data.range(0, 256), &[7]).signal(handoff.at(1)).submit().unwrap();
    let copy_target = device.allocate(MemoryKind::HostVisible, 256).unwrap();
    consumer
        .batch(|batch| {
            batch.barrier().submit()?;
            batch.copy(data.range(0, 256), copy_target.range(0, 256)).wait(handoff.at(1)).submit()?;
            batch.barrier().signal(handoff.at(2)).submit()
        })
        .unwrap();
    assert_eq!(consumer.stats().device_waits, 1);
    release(&producer, || handoff.value() >= 1);
    handoff.wait(2, TIMEOUT).unwrap();
    assert_eq!(copy_target.to_vec().unwrap(), vec![7; 256], "the copy waited for the fill");
}

#[test]
fn rows_behind_an_unresolvable_wait_park_in_order_and_run_when_it_resolves() {
    let engine = engine(WaitStrategy::Auto);
    let device = engine.device();
    let queue = queue(device);
    let gate = device.create_semaphore(0).unwrap();
    let done = device.create_semaphore(0).unwrap();
    let scratch = device.allocate(MemoryKind::HostVisible, 256).unwrap();
    queue
        .batch(|batch| {
            batch.fill(scratch.range(0, 64), &[1]).submit()?;
            // Wait-before-signal: nothing queued will raise the gate, so this row parks, and
            // every row behind it waits with it.
            batch.fill(scratch.range(0, 64), &[2]).wait(gate.at(1)).submit()?;
            batch.fill(scratch.range(0, 64), &[3]).signal(done.at(1)).submit()
        })
        .unwrap();
    let stats = queue.stats();
    assert_eq!((stats.packets, stats.deferred), (1, 2), "{stats:?}");
    // Immediate work queues behind the parked rows.
    queue.fill(scratch.range(64, 64), &[4]).signal(done.at(2)).submit().unwrap();
    assert_eq!(queue.stats().deferred, 3);
    assert!(done.wait(1, std::time::Duration::from_millis(50)).is_err(), "parked work must not run");
    gate.signal(1).unwrap();
    done.wait(2, TIMEOUT).unwrap();
    let bytes = scratch.to_vec().unwrap();
    assert_eq!((bytes[0], bytes[64]), (3, 4), "the rows ran in order");
}

#[test]
fn bad_input_in_a_batch_enqueues_nothing_and_earlier_rows_still_run() {
    let engine = engine(WaitStrategy::Auto);
    let device = engine.device();
    let queue = queue(device);
    let done = device.create_semaphore(0).unwrap();
    let scratch = device.allocate(MemoryKind::HostVisible, 256).unwrap();
    let result = queue.batch(|batch| {
        batch.fill(scratch.range(0, 64), &[9]).signal(done.at(1)).submit()?;
        let refused = batch.fill(scratch.range(0, 64), &[1, 2, 3]).submit();
        assert!(matches!(refused, Err(EngineError::Plan(_))), "{refused:?}");
        assert_eq!(batch.enqueued(), 1, "a refused call enqueues nothing");
        // A signal that does not exceed what the batch already promised is refused too.
        let stale = batch.barrier().signal(done.at(1)).submit();
        assert!(matches!(stale, Err(EngineError::SemaphoreNotIncreasing { current: 1, requested: 1 })), "{stale:?}");
        batch.fill(scratch.range(0, 300), &[1]).submit()
    });
    assert!(matches!(result, Err(EngineError::OutOfBounds { .. })), "{result:?}");
    done.wait(1, TIMEOUT).unwrap();
    assert_eq!(scratch.to_vec().unwrap()[..64], [9; 64]);
    assert_eq!(queue.stats().submissions, 1);
}

#[test]
fn the_queue_own_calls_inside_its_batch_are_refused_not_deadlocked() {
    let engine = engine(WaitStrategy::Auto);
    let device = engine.device();
    let queue = queue(device);
    let other = self::queue(device);
    queue
        .batch(|batch| {
            let inside = queue.barrier().submit();
            assert!(matches!(inside, Err(EngineError::InvalidArgument { what: "queue", .. })), "{inside:?}");
            assert!(matches!(queue.begin_batch(), Err(EngineError::InvalidArgument { what: "queue", .. })));
            other.barrier().submit().expect("another queue is free");
            batch.barrier().submit()
        })
        .unwrap();
    queue.barrier().submit().expect("the batch released the queue");
}

#[test]
fn a_batch_larger_than_the_ring_publishes_in_passes() {
    let engine = engine_with(EngineConfig {
        queue_packets: 8,
        epochs_in_flight: 8,
        wait_strategy: WaitStrategy::BarrierAnd,
        ..EngineConfig::default()
    });
    let device = engine.device();
    let queue = queue(device);
    let chain = device.create_semaphore(0).unwrap();
    let scratch = device.allocate(MemoryKind::HostVisible, 256).unwrap();
    let mut batch = queue.begin_batch().unwrap();
    for value in 0..100u64 {
        batch.fill(scratch.range(0, 64), &[value as u8]).signal(chain.at(value + 1)).submit().unwrap();
    }
    batch.flush().unwrap();
    assert_eq!(batch.enqueued(), 0);
    drop(batch);
    chain.wait(100, TIMEOUT).unwrap();
    assert_eq!(scratch.to_vec().unwrap()[..64], [99; 64]);
    assert_eq!(queue.stats().packets, 100);
}

#[test]
fn command_buffers_execute_from_a_batch() {
    let engine = engine(WaitStrategy::Auto);
    let device = engine.device();
    let queue = queue(device);
    let target = device.allocate(MemoryKind::HostVisible, 256).unwrap();
    let mut command_buffer = device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    command_buffer.fill(target.range(0, 128), &[5]).unwrap();
    command_buffer.finish().unwrap();
    let table = aqueduct_engine::BindingTable::default();
    let done = device.create_semaphore(0).unwrap();
    queue
        .batch(|batch| {
            batch.fill(target.range(0, 256), &[1]).submit()?;
            batch.execute(&command_buffer, &table).submit()?;
            batch.execute(&command_buffer, &table).signal(done.at(1)).submit()
        })
        .unwrap();
    done.wait(1, TIMEOUT).unwrap();
    let bytes = target.to_vec().unwrap();
    assert_eq!((bytes[0], bytes[127], bytes[128]), (5, 5, 1));
}

#[test]
fn a_row_too_large_for_the_rings_fails_its_signals_and_the_rows_behind_it_still_run() {
    // A 4 KiB kernarg ring holds at most 2 KiB per submission; a 3 KiB enqueued update does not fit.
    let engine = engine_with(EngineConfig { kernarg_ring_bytes: 4096, ..EngineConfig::default() });
    let device = engine.device();
    let queue = queue(device);
    let (large, after) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
    let scratch = device.allocate(MemoryKind::HostVisible, 4096).unwrap();
    let result = queue.batch(|batch| {
        batch.update(&scratch, 0, &[1; 3072]).signal(large.at(1)).submit()?;
        batch.fill(scratch.range(0, 64), &[2]).signal(after.at(1)).submit()
    });
    assert!(matches!(result, Err(EngineError::SubmissionTooLarge { .. })), "{result:?}");
    // Enqueued, its signal was promised, so it fails rather than leaving waiters to time out.
    assert!(matches!(large.wait(1, TIMEOUT), Err(EngineError::SemaphoreFailed(_))));
    after.wait(1, TIMEOUT).unwrap();
    assert_eq!(scratch.to_vec().unwrap()[..64], [2; 64]);
}

#[test]
fn a_batch_that_runs_out_of_room_for_its_timeout_fails_every_row_left() {
    let engine = engine_with(EngineConfig {
        queue_packets: 4,
        submit_timeout: std::time::Duration::from_millis(50),
        ..EngineConfig::default()
    });
    let device = engine.device();
    let queue = queue(device);
    let chain = device.create_semaphore(0).unwrap();
    let scratch = device.allocate(MemoryKind::HostVisible, 256).unwrap();
    stall_next(&queue);
    let result = queue.batch(|batch| {
        for value in 0..8u64 {
            batch.fill(scratch.range(0, 64), &[value as u8]).signal(chain.at(value + 1)).submit()?;
        }
        Ok(())
    });
    assert!(matches!(result, Err(EngineError::Backpressure { .. })), "{result:?}");
    // The rows that fit were published (4, or 5 once the processor fetched the stalled packet
    // and freed its slot); the rest failed their signals.
    let published = queue.stats().packets;
    assert!((4..8).contains(&published), "{published} rows published");
    assert!(matches!(chain.wait(8, TIMEOUT), Err(EngineError::SemaphoreFailed(_))));
    release(&queue, || chain.value() >= published);
}

/// A flush that publishes is counted (and, under the `tracy` feature, marks a frame of Tracy's
/// `aqueduct flush` set, DESIGN §8): an explicit flush and the batch's end each once, an empty
/// flush and an immediate submission not at all.
#[test]
fn flushes_that_publish_are_counted() {
    let engine = engine(WaitStrategy::Auto);
    let device = engine.device();
    let queue = queue(device);
    let done = device.create_semaphore(0).unwrap();
    queue.barrier().signal(done.at(1)).submit().unwrap();
    assert_eq!(queue.stats().flushes, 0, "an immediate submission is no flush");
    queue
        .batch(|batch| {
            batch.flush()?;
            batch.barrier().signal(done.at(2)).submit()?;
            batch.flush()?;
            batch.flush()?;
            batch.barrier().signal(done.at(3)).submit()
        })
        .unwrap();
    done.wait(3, TIMEOUT).unwrap();
    let stats = queue.stats();
    assert_eq!(
        (stats.flushes, stats.submissions),
        (2, 3),
        "one explicit flush with work, then the batch's end: {stats:?}"
    );
}
