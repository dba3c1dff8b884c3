//! `Queue::wait_idle`, `Queue::read` and `Queue::write`: host waits on a queue, and reads and
//! writes of device-local memory in queue order.

mod common;

use std::time::Duration;

use aqueduct_engine::{EngineError, MemoryKind, WaitStrategy};
use common::*;

#[test]
fn device_local_memory_round_trips_through_read_and_write() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let queue = queue(device);
    let local = device.allocate_typed::<f32>(MemoryKind::DeviceLocal, 1000).unwrap();
    assert!(local.to_vec().is_err(), "the host cannot read device-local memory directly");
    let data: Vec<f32> = (0..1000).map(|index| index as f32 * 0.5).collect();
    queue.write(&local, &data, TIMEOUT).unwrap();
    assert_eq!(queue.read(&local, TIMEOUT).unwrap(), data);
    // A shorter write leaves the rest; a longer one is refused and changes nothing.
    queue.write(&local, &[7.0; 10], TIMEOUT).unwrap();
    let read = queue.read(&local, TIMEOUT).unwrap();
    assert_eq!((&read[..10], &read[10..]), (&[7.0; 10][..], &data[10..]));
    let refused = queue.write(&local, &vec![1.0; 1001], TIMEOUT);
    assert!(matches!(refused, Err(EngineError::InvalidArgument { what: "queue write", .. })), "{refused:?}");
    assert_eq!(queue.read(&local, TIMEOUT).unwrap(), read);
}

#[test]
fn a_read_comes_after_the_queues_earlier_work() {
    let rig = KernelRig::new(WaitStrategy::BarrierAnd);
    let device = rig.device();
    let queue = queue(device);
    let out = rig.buffer();
    stall_next(&queue);
    rig.store(&queue, &out, 40, &[], &[]);
    std::thread::scope(|scope| {
        let reader = scope.spawn(|| queue.read(&out, TIMEOUT).unwrap());
        release(&queue, || reader.is_finished());
        let words = words(&reader.join().unwrap());
        assert_eq!(words[..3], [40, 41, 42], "the read saw the stalled store");
    });
}

#[test]
fn wait_idle_waits_for_earlier_work_and_times_out_naming_nothing() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let queue = queue(device);
    queue.wait_idle(Duration::ZERO).unwrap(); // nothing submitted
    let out = rig.buffer();
    stall_next(&queue);
    rig.store(&queue, &out, 3, &[], &[]); // no semaphore to wait on
    let timed_out = queue.wait_idle(Duration::from_millis(20));
    assert!(matches!(timed_out, Err(EngineError::Timeout { ref unmet, .. }) if unmet.is_empty()), "{timed_out:?}");
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| queue.wait_idle(TIMEOUT));
        release(&queue, || waiter.is_finished());
        waiter.join().unwrap().unwrap();
    });
    assert_eq!(words(&out.to_vec().unwrap())[0], 3);
}

#[test]
fn wait_idle_reports_a_failed_queue() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let queue = queue(device);
    let out = rig.buffer();
    fault_next(&queue, aqueduct_soft_hsa::Fault::KernelFault { status: 0x1016 });
    rig.store(&queue, &out, 3, &[], &[]);
    let failed = queue.wait_idle(TIMEOUT);
    assert!(matches!(failed, Err(EngineError::QueueFailed(_))), "{failed:?}");
}

#[test]
fn a_submission_token_is_waited_on_and_ordered() {
    let rig = KernelRig::new(WaitStrategy::BarrierAnd);
    let device = rig.device();
    let (queue, other) = (queue(device), queue(device));
    let (first_out, second_out) = (rig.buffer(), rig.buffer());
    stall_next(&queue);
    let first = queue.fill(first_out.whole(), &1u32.to_le_bytes()).submit().unwrap();
    let second = queue.fill(second_out.whole(), &2u32.to_le_bytes()).submit().unwrap();
    assert!(second > first, "a later submission's token is greater");
    assert!(!queue.is_finished(first), "stalled");
    let timed_out = queue.wait_for(first, Duration::from_millis(10));
    assert!(matches!(timed_out, Err(EngineError::Timeout { .. })), "{timed_out:?}");
    let foreign = other.barrier().submit().unwrap();
    assert!(matches!(queue.wait_for(foreign, TIMEOUT), Err(EngineError::ForeignObject { .. })));
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| queue.wait_for(second, TIMEOUT));
        release(&queue, || waiter.is_finished());
        waiter.join().unwrap().unwrap();
    });
    assert!(queue.is_finished(first) && queue.is_finished(second));
    assert_eq!(words(&second_out.to_vec().unwrap())[0], 2, "the token's work finished");
}

#[test]
fn reads_and_writes_reuse_the_queues_bounce_buffer_and_large_ones_stream_through_their_own() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let queue = queue(device);
    let small = device.allocate_typed::<u32>(MemoryKind::DeviceLocal, 256).unwrap();
    queue.write(&small, &[9; 256], TIMEOUT).unwrap();
    let allocations = device.live_objects().2;
    for round in 0..4u32 {
        queue.write(&small, &[round; 256], TIMEOUT).unwrap();
        assert_eq!(queue.read(&small, TIMEOUT).unwrap(), vec![round; 256]);
    }
    assert_eq!(device.live_objects().2, allocations, "the kept bounce buffer served every call");
    // Past the kept buffer's size: a buffer for the call, freed after it.
    let elements = (aqueduct_engine::tuning::BOUNCE_BUFFER_BYTES / 4 + 1024) as usize;
    let large = device.allocate_typed::<u32>(MemoryKind::DeviceLocal, elements as u64).unwrap();
    let data: Vec<u32> = (0..elements as u32).collect();
    queue.write(&large, &data, TIMEOUT).unwrap();
    assert_eq!(queue.read(&large, TIMEOUT).unwrap(), data);
    assert!(eventually(TIMEOUT, || device.live_objects().2 == allocations + 1), "only `large` was added");
}
