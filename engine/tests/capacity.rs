//! Ring capacity: wraparound of small AQL rings under sustained load, backpressure from tiny
//! packet, kernarg and epoch rings (submissions block until the device frees space, or time out),
//! and submissions that can never fit.

mod common;

use std::time::{Duration, Instant};

use aqueduct_engine::{Dispatch, EngineConfig, EngineError, MemoryKind, WaitStrategy};
use aqueduct_soft_hsa::Fault;
use common::*;

const COUNT: u32 = 64;

fn config(strategy: WaitStrategy, queue_packets: u32, epochs_in_flight: u32, kernarg_ring_bytes: u64) -> EngineConfig {
    EngineConfig {
        wait_strategy: strategy,
        queue_packets,
        epochs_in_flight,
        kernarg_ring_bytes,
        ..EngineConfig::default()
    }
}

#[test]
fn twenty_thousand_submissions_wrap_a_64_packet_ring() {
    let engine = engine_with(config(WaitStrategy::BarrierValue, 64, 32, 8192));
    let device = engine.device();
    let kernels = test_kernels(&engine);
    let queue = queue(device);
    let done = device.create_semaphore(0).unwrap();
    let data = device.allocate(MemoryKind::HostVisible, u64::from(COUNT) * 4).unwrap();
    let bindings = [data.whole()];
    queue
        .dispatch(&kernels.store_value, &Dispatch::grid([COUNT, 1, 1]).bindings(&bindings).constants(&[0, COUNT]))
        .submit()
        .unwrap();
    const STEPS: u64 = 20_000;
    let bindings = [data.whole(), data.whole()];
    for step in 1..=STEPS {
        // In place: out[i] = out[i] + 1, so every step must see the previous one's result.
        let signal = [done.at(step)];
        let signals: &[_] = if step % 7 == 0 || step == STEPS { &signal } else { &[] };
        queue
            .dispatch(&kernels.add_from, &Dispatch::grid([COUNT, 1, 1]).bindings(&bindings).constants(&[1, COUNT]))
            .signals(signals)
            .submit()
            .unwrap();
    }
    done.wait(STEPS, TIMEOUT).unwrap();
    for (index, value) in words(&data.to_vec().unwrap()).iter().enumerate() {
        assert_eq!(*value as u64, index as u64 + STEPS, "element {index}");
    }
    let stats = queue.stats();
    assert_eq!((stats.submissions, stats.packets, stats.device_waits), (STEPS + 1, STEPS + 1, 0));
    assert!(eventually(TIMEOUT, || queue.stats().epochs_drained == STEPS + 1), "{:?}", queue.stats());
}

#[test]
fn cross_queue_handoffs_through_16_packet_rings() {
    for strategy in [WaitStrategy::BarrierValue, WaitStrategy::BarrierAnd] {
        let engine = engine_with(config(strategy, 16, 8, 4096));
        let device = engine.device();
        let kernels = test_kernels(&engine);
        let queues = [queue(device), queue(device)];
        let chain = device.create_semaphore(0).unwrap();
        let data = device.allocate(MemoryKind::HostVisible, u64::from(COUNT) * 4).unwrap();
        let bindings = [data.whole()];
        queues[0]
            .dispatch(&kernels.store_value, &Dispatch::grid([COUNT, 1, 1]).bindings(&bindings).constants(&[5, COUNT]))
            .signal(chain.at(1))
            .submit()
            .unwrap();
        const HANDOFFS: u64 = 3_000;
        let bindings = [data.whole(), data.whole()];
        for handoff in 1..=HANDOFFS {
            queues[handoff as usize % 2]
                .dispatch(&kernels.add_from, &Dispatch::grid([COUNT, 1, 1]).bindings(&bindings).constants(&[1, COUNT]))
                .wait(chain.at(handoff))
                .signal(chain.at(handoff + 1))
                .submit()
                .unwrap();
        }
        chain.wait(HANDOFFS + 1, TIMEOUT).unwrap();
        for (index, value) in words(&data.to_vec().unwrap()).iter().enumerate() {
            assert_eq!(*value as u64, 5 + index as u64 + HANDOFFS, "{strategy:?}: element {index}");
        }
        // Each handoff either crossed on the device (a barrier) or found its producer retired.
        let stats: Vec<_> = queues.iter().map(|queue| queue.stats()).collect();
        let waits: u64 = stats.iter().map(|stats| stats.device_waits).sum();
        let packets: u64 = stats.iter().map(|stats| stats.packets).sum();
        assert!(waits <= HANDOFFS, "{strategy:?}: {stats:?}");
        assert_eq!(
            packets,
            HANDOFFS + 1 + waits,
            "{strategy:?}: one payload per submission plus one packet per barrier"
        );
    }
}

#[test]
fn a_four_packet_ring_blocks_submissions_until_the_device_frees_space() {
    for strategy in [WaitStrategy::BarrierValue, WaitStrategy::BarrierAnd] {
        let engine = engine_with(config(strategy, 4, 2, 4096));
        let device = engine.device();
        let kernels = test_kernels(&engine);
        let queue = queue(device);
        let done = device.create_semaphore(0).unwrap();
        let data = device.allocate(MemoryKind::HostVisible, u64::from(COUNT) * 4).unwrap();
        let bindings = [data.whole()];
        // The first packet takes 150 ms; with room for two epochs the third submission must wait.
        fault_next(&queue, Fault::Slow(Duration::from_millis(150)));
        let start = Instant::now();
        queue
            .dispatch(&kernels.store_value, &Dispatch::grid([COUNT, 1, 1]).bindings(&bindings).constants(&[1, COUNT]))
            .submit()
            .unwrap();
        let bindings = [data.whole(), data.whole()];
        const STEPS: u64 = 200;
        for step in 1..=STEPS {
            queue
                .dispatch(&kernels.add_from, &Dispatch::grid([COUNT, 1, 1]).bindings(&bindings).constants(&[1, COUNT]))
                .signal(done.at(step))
                .submit()
                .unwrap();
        }
        let submitting = start.elapsed();
        assert!(submitting >= Duration::from_millis(100), "{strategy:?}: submissions did not block ({submitting:?})");
        done.wait(STEPS, TIMEOUT).unwrap();
        for (index, value) in words(&data.to_vec().unwrap()).iter().enumerate() {
            assert_eq!(*value as u64, 1 + index as u64 + STEPS, "{strategy:?}: element {index}");
        }
        assert_eq!(queue.stats().submissions, STEPS + 1);
    }
}

#[test]
fn copied_updates_cycle_through_a_small_kernarg_ring() {
    // 4 KiB of kernarg ring holds at most two 1500-byte enqueued updates at a time.
    let engine = engine_with(config(WaitStrategy::BarrierValue, 256, 64, 4096));
    let device = engine.device();
    let queue = queue(device);
    let done = device.create_semaphore(0).unwrap();
    const UPDATES: usize = 300;
    const LENGTH: usize = 1500;
    let target = device.allocate(MemoryKind::HostVisible, (UPDATES * LENGTH) as u64).unwrap();
    let mut rng = Xorshift::new(11);
    let mut expected = Vec::with_capacity(UPDATES * LENGTH);
    fault_next(&queue, Fault::Slow(Duration::from_millis(50)));
    for index in 0..UPDATES {
        let data = rng.bytes(LENGTH);
        queue.update(&target, (index * LENGTH) as u64, &data).signal(done.at(index as u64 + 1)).submit().unwrap();
        expected.extend_from_slice(&data);
    }
    done.wait(UPDATES as u64, TIMEOUT).unwrap();
    assert!(target.to_vec().unwrap() == expected, "enqueued update bytes were overwritten before the device read them");
}

#[test]
fn backpressure_times_out_and_the_refused_submission_changes_nothing() {
    let engine = engine_with(EngineConfig {
        submit_timeout: Duration::from_millis(100),
        ..config(WaitStrategy::BarrierValue, 4, 64, 4096)
    });
    let device = engine.device();
    let queue = queue(device);
    let (done, refused) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
    let buffer = device.allocate(MemoryKind::HostVisible, 64).unwrap();
    stall_next(&queue);
    // The stalled packet was fetched (its slot is free again); four more fill the ring.
    let mut accepted = 0;
    let error = loop {
        match queue
            .fill(buffer.range(0, 4), &(accepted as u32 + 1).to_le_bytes())
            .signal(done.at(accepted + 1))
            .submit()
        {
            Ok(_) => accepted += 1,
            Err(error) => break error,
        }
        assert!(accepted <= 5, "a 4-packet ring with one fetched packet holds at most five submissions");
    };
    assert!(matches!(error, EngineError::Backpressure { .. }), "{error:?}");
    assert_eq!(accepted, 5);
    let before = queue.stats();
    let start = Instant::now();
    let refused_error = queue.fill(buffer.range(8, 4), &[9, 9, 9, 9]).signal(refused.at(1)).submit().unwrap_err();
    assert!(matches!(refused_error, EngineError::Backpressure { .. }), "{refused_error:?}");
    assert!(start.elapsed() >= Duration::from_millis(100), "waited for the submit timeout");
    assert_eq!(queue.stats(), before, "a refused submission is not counted");
    release(&queue, || done.value() >= 1);
    done.wait(accepted, TIMEOUT).unwrap();
    // Nothing of the refused submissions reached the device or their semaphores.
    let bytes = buffer.to_vec().unwrap();
    assert_eq!(&bytes[0..4], &5u32.to_le_bytes());
    assert_eq!(&bytes[8..12], &[0; 4]);
    assert_eq!((refused.value(), refused.failure().is_none()), (0, true));
    refused.signal(1).expect("nothing else promised to signal it");
    // The queue works on.
    queue.fill(buffer.range(8, 4), &[7]).signal(done.at(accepted + 1)).submit().unwrap();
    done.wait(accepted + 1, TIMEOUT).unwrap();
    assert_eq!(&buffer.to_vec().unwrap()[8..12], &[7; 4]);
    assert_eq!(queue.stats().submissions, accepted + 1);
}

#[test]
fn an_update_larger_than_half_the_kernarg_ring_is_too_large_and_changes_nothing() {
    let engine = engine_with(config(WaitStrategy::BarrierValue, 64, 16, 4096));
    let device = engine.device();
    let queue = queue(device);
    let done = device.create_semaphore(0).unwrap();
    let target = host_buffer(device, &[0xAB; 8192]);
    let before = queue.stats();
    let live_before = device.live_objects();
    {
        let retained = device.allocate(MemoryKind::HostVisible, 4096).unwrap();
        let signal = device.create_semaphore(0).unwrap();
        let error = queue.update(&retained, 0, &[1; 4000]).wait(done.at(0)).signal(signal.at(1)).submit().unwrap_err();
        assert!(matches!(error, EngineError::SubmissionTooLarge { .. }), "{error:?}");
        assert_eq!((signal.value(), signal.failure().is_none()), (0, true));
        signal.signal(1).expect("the refused submission promised nothing");
    }
    assert_eq!(device.live_objects(), live_before, "the refused submission holds nothing");
    let error = queue.update(&target, 100, &[1; 2100]).signal(done.at(1)).submit().unwrap_err();
    assert!(matches!(error, EngineError::SubmissionTooLarge { .. }), "{error:?}");
    assert_eq!(queue.stats(), before, "nothing was counted or published");
    assert_eq!((done.value(), done.failure().is_none()), (0, true));
    assert!(target.to_vec().unwrap().iter().all(|&byte| byte == 0xAB));
    // A enqueued update that fits still goes through.
    queue.update(&target, 100, &[1; 2000]).signal(done.at(1)).submit().unwrap();
    done.wait(1, TIMEOUT).unwrap();
    let bytes = target.to_vec().unwrap();
    assert!(
        bytes[100..2100].iter().all(|&byte| byte == 1)
            && bytes[..100].iter().chain(&bytes[2100..]).all(|&byte| byte == 0xAB)
    );
}

/// Four producer queues each with a stalled, in-flight submission, and a consumer queue whose
/// four-packet ring cannot hold four BARRIER_VALUE packets plus the payload.
struct FourProducers {
    _engine: aqueduct_engine::Engine,
    device: aqueduct_engine::Device,
    producers: Vec<aqueduct_engine::Queue>,
    produced: Vec<aqueduct_engine::Semaphore>,
}

impl FourProducers {
    fn new() -> Self {
        let engine = engine_with(config(WaitStrategy::BarrierValue, 4, 16, 4096));
        let device = engine.device().clone();
        let producers: Vec<_> = (0..4).map(|_| queue(&device)).collect();
        let produced: Vec<_> = (0..4).map(|_| device.create_semaphore(0).unwrap()).collect();
        for (queue, semaphore) in producers.iter().zip(&produced) {
            stall_next(queue);
            queue.barrier().signal(semaphore.at(1)).submit().unwrap();
        }
        Self { _engine: engine, device, producers, produced }
    }

    fn release(&self) {
        for (queue, semaphore) in self.producers.iter().zip(&self.produced) {
            release(queue, || semaphore.value() == 1);
        }
    }
}

#[test]
fn waits_needing_more_barriers_than_the_ring_holds_are_too_large() {
    let rig = FourProducers::new();
    let consumer = queue(&rig.device);
    let signal = rig.device.create_semaphore(0).unwrap();
    let buffer = host_buffer(&rig.device, &[3; 16]);
    let waits: Vec<_> = rig.produced.iter().map(|semaphore| semaphore.at(1)).collect();
    let before = consumer.stats();
    let error = consumer.fill(buffer.whole(), &[4]).waits(&waits).signal(signal.at(1)).submit().unwrap_err();
    assert!(matches!(error, EngineError::SubmissionTooLarge { .. }), "{error:?}");
    assert_eq!(consumer.stats(), before);
    assert_eq!((signal.value(), signal.failure().is_none()), (0, true));
    // Three producers fit (three barriers and the payload).
    consumer.fill(buffer.whole(), &[4]).waits(&waits[..3]).signal(signal.at(1)).submit().unwrap();
    assert_eq!(consumer.stats().device_waits, 3);
    rig.release();
    signal.wait(1, TIMEOUT).unwrap();
    assert_eq!(buffer.to_vec().unwrap(), [4; 16]);
}

#[test]
fn a_parked_submission_that_turns_out_too_large_fails_its_semaphores() {
    // Parked on a host semaphore, its other waits resolve into more barriers than the ring holds
    // only when it is admitted again: there is no caller left to return the error to.
    let rig = FourProducers::new();
    let consumer = queue(&rig.device);
    let (gate, signal, later) = (
        rig.device.create_semaphore(0).unwrap(),
        rig.device.create_semaphore(0).unwrap(),
        rig.device.create_semaphore(0).unwrap(),
    );
    let buffer = host_buffer(&rig.device, &[3; 16]);
    let mut waits: Vec<_> = rig.produced.iter().map(|semaphore| semaphore.at(1)).collect();
    waits.push(gate.at(1));
    consumer.fill(buffer.whole(), &[4]).waits(&waits).signal(signal.at(1)).submit().unwrap();
    consumer.fill(buffer.range(0, 4), &[5]).signal(later.at(1)).submit().unwrap();
    assert_eq!(consumer.stats().deferred, 2);
    gate.signal(1).unwrap();
    match signal.wait(1, TIMEOUT) {
        Err(EngineError::SemaphoreFailed(record)) => {
            assert!(record.message.contains("ring space"), "{}", record.message)
        }
        other => panic!("expected the parked submission's semaphore to fail, got {other:?}"),
    }
    // The submission behind it still runs, and the refused one never touched the buffer.
    later.wait(1, TIMEOUT).unwrap();
    assert_eq!(buffer.to_vec().unwrap(), [5, 5, 5, 5, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3]);
    rig.release();
}

#[test]
fn an_unbounded_submit_timeout_waits_as_long_as_it_takes() {
    let engine =
        engine_with(EngineConfig { submit_timeout: Duration::MAX, ..config(WaitStrategy::BarrierValue, 4, 2, 4096) });
    let device = engine.device();
    let queue = queue(device);
    let done = device.create_semaphore(0).unwrap();
    let buffer = device.allocate(MemoryKind::HostVisible, 64).unwrap();
    fault_next(&queue, Fault::Slow(Duration::from_millis(50)));
    for step in 1..=20u64 {
        queue.fill(buffer.range(0, 4), &(step as u32).to_le_bytes()).signal(done.at(step)).submit().unwrap();
    }
    done.wait(20, TIMEOUT).unwrap();
    assert_eq!(words(&buffer.to_vec().unwrap())[0], 20);
}
