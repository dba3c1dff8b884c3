//! Work outlives its handles: dropping the last `Queue` handle lets what was submitted finish,
//! and the queue goes once it has drained or failed; a semaphore whose last handle drops fails
//! only the waits nothing can meet any more; `Queue::cancel` fails the work instead. Every drop
//! order of queue, semaphores, device and engine.

mod common;

use aqueduct_engine::{EngineError, Queue, Semaphore, WaitStrategy};
use common::*;

/// A queue's handle dropped while its first packet is stalled: `resume` releases the stall
/// through the soft runtime's controls, which outlive the handle.
struct Stalled {
    controls: aqueduct_soft_hsa::SoftControls,
    /// The HSA queue's address (a number, so the rig crosses threads; the controls only look
    /// the queue up by it).
    hsa_queue: usize,
}

impl Stalled {
    fn arm(queue: &Queue) -> Self {
        stall_next(queue);
        Self { controls: controls(queue), hsa_queue: queue.hsa_queue() as usize }
    }

    /// Releases the stall until `done` holds. The HSA queue is alive: its queue is destroyed
    /// only once the stalled work has drained, which cannot happen before this.
    fn resume(&self, mut done: impl FnMut() -> bool) {
        assert!(
            eventually(TIMEOUT, || {
                self.controls
                    .release_stall(self.hsa_queue as *mut aqueduct_hsa::sys::hsa_queue_t)
                    .expect("release stall");
                eventually(std::time::Duration::from_millis(20), &mut done)
            }),
            "the stalled queue never progressed"
        );
    }
}

fn failure_of(semaphore: &Semaphore, value: u64) -> String {
    match semaphore.wait(value, TIMEOUT) {
        Err(EngineError::SemaphoreFailed(record)) => record.message.clone(),
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn dropping_the_last_handle_lets_submitted_work_finish() {
    for strategy in [WaitStrategy::BarrierValue, WaitStrategy::BarrierAnd] {
        let rig = KernelRig::new(strategy);
        let device = rig.device();
        let queue = queue(device);
        let done = device.create_semaphore(0).unwrap();
        let outputs: Vec<_> = (0..20).map(|_| rig.buffer()).collect();
        let stalled = Stalled::arm(&queue);
        for (index, out) in outputs.iter().enumerate() {
            rig.store(&queue, out, 100 * index as u32, &[], &[done.at(index as u64 + 1)]);
        }
        drop(queue);
        assert_eq!(device.live_objects().0, 1, "{strategy:?}: the queue lives while its work does");
        stalled.resume(|| done.value() == 20);
        done.wait(20, TIMEOUT).unwrap();
        for (index, out) in outputs.iter().enumerate() {
            assert_eq!(words(&out.to_vec().unwrap())[..2], [100 * index as u32, 100 * index as u32 + 1]);
        }
        assert!(eventually(TIMEOUT, || device.live_objects().0 == 0), "{strategy:?}: the drained queue goes");
    }
}

#[test]
fn an_idle_queue_goes_with_its_last_handle() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let queue = queue(device);
    let done = device.create_semaphore(0).unwrap();
    let out = rig.buffer();
    rig.store(&queue, &out, 7, &[], &[done.at(1)]);
    done.wait(1, TIMEOUT).unwrap();
    let clone = queue.clone();
    drop(queue);
    assert_eq!(device.live_objects().0, 1, "a clone keeps the queue");
    drop(clone);
    assert_eq!(device.live_objects().0, 0, "nothing in flight: destroyed by the drop itself");
}

#[test]
fn work_parked_on_a_host_semaphore_runs_when_it_is_signalled_after_the_queue_dropped() {
    let rig = KernelRig::new(WaitStrategy::BarrierAnd);
    let device = rig.device();
    let queue = queue(device);
    let (gate, done) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
    let out = rig.buffer();
    rig.store(&queue, &out, 5, &[gate.at(1)], &[done.at(1)]);
    drop(queue);
    gate.signal(1).unwrap();
    done.wait(1, TIMEOUT).unwrap();
    assert_eq!(words(&out.to_vec().unwrap())[0], 5);
    assert!(eventually(TIMEOUT, || device.live_objects().0 == 0));
}

#[test]
fn work_parked_on_a_dropped_host_semaphore_fails_in_either_drop_order() {
    for queue_first in [true, false] {
        let rig = KernelRig::new(WaitStrategy::BarrierValue);
        let device = rig.device();
        let queue = queue(device);
        let (gate, done) = (device.create_semaphore(3).unwrap(), device.create_semaphore(0).unwrap());
        let (out, behind) = (rig.buffer(), rig.buffer());
        rig.store(&queue, &out, 5, &[gate.at(4)], &[done.at(1)]);
        // Independent work behind the failed submission still runs (only a queue error is
        // sticky), so it writes its own buffer, and the checks below wait for the queue to drain.
        rig.store(&queue, &behind, 6, &[], &[done.at(2)]);
        if queue_first {
            drop(queue);
            drop(gate);
        } else {
            drop(gate);
            drop(queue);
        }
        let message = failure_of(&done, 1);
        assert!(message.contains("was dropped at value 3: no handle is left to raise it to 4"), "{message}");
        assert!(eventually(TIMEOUT, || device.live_objects().0 == 0), "queue first: {queue_first}");
        assert!(words(&out.to_vec().unwrap()).iter().all(|&word| word == 0), "the failed store never ran");
        let behind = words(&behind.to_vec().unwrap());
        assert!(behind.iter().zip(6..).all(|(&word, expected)| word == expected), "the work behind it ran");
        assert_eq!(device.live_objects().1, 1, "only `done` is left");
    }
}

#[test]
fn a_dropped_semaphore_still_passes_waits_it_met_or_was_promised() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let (producer, consumer) = (queue(device), queue(device));
    let (host, shared, done) =
        (device.create_semaphore(0).unwrap(), device.create_semaphore(2).unwrap(), device.create_semaphore(0).unwrap());
    let (x, y) = (rig.buffer(), rig.buffer());
    // `shared` will reach 3 through the producer's parked work; the consumer waits for 2 (met)
    // and then 3 (promised). Both must pass after `shared`'s last handle drops.
    rig.store(&producer, &x, 1, &[host.at(1)], &[shared.at(3)]);
    rig.store(&consumer, &y, 2, &[shared.at(2), host.at(1)], &[done.at(1)]);
    rig.store(&consumer, &y, 3, &[shared.at(3)], &[done.at(2)]);
    drop(shared);
    host.signal(1).unwrap();
    done.wait(2, TIMEOUT).unwrap();
    assert_eq!(words(&y.to_vec().unwrap())[0], 3);
}

#[test]
fn device_handles_may_go_first_and_the_engine_drop_waits_for_the_work() {
    let KernelRig { engine, kernels } = KernelRig::new(WaitStrategy::BarrierAnd);
    let device = engine.device().clone();
    let queue = queue(&device);
    let done = device.create_semaphore(0).unwrap();
    let out = device.allocate(aqueduct_engine::MemoryKind::HostVisible, 256 * 4).unwrap();
    let stalled = Stalled::arm(&queue);
    let bindings = [out.whole()];
    let dispatch = aqueduct_engine::Dispatch::grid([256, 1, 1]).bindings(&bindings).constants(&[9, 256]);
    queue.dispatch(&kernels.store_value, &dispatch).signal(done.at(1)).submit().unwrap();
    drop((kernels, device, queue));
    std::thread::scope(|scope| {
        // The engine's drop blocks until the orphaned queue's work is done; the stall is
        // released from another thread meanwhile.
        scope.spawn(|| stalled.resume(|| done.value() == 1));
        drop(engine);
        assert_eq!(done.value(), 1, "the engine's drop returned only after the work finished");
    });
    assert_eq!(words(&out.to_vec().unwrap())[255], 9 + 255);
}

#[test]
fn the_engine_drop_cancels_work_that_outlasts_its_timeout() {
    let config = aqueduct_engine::EngineConfig {
        submit_timeout: std::time::Duration::from_millis(100),
        ..aqueduct_engine::EngineConfig::default()
    };
    let engine = engine_with(config);
    let kernels = test_kernels(&engine);
    let device = engine.device().clone();
    let queue = queue(&device);
    let done = device.create_semaphore(0).unwrap();
    let out = device.allocate(aqueduct_engine::MemoryKind::HostVisible, 256 * 4).unwrap();
    stall_next(&queue); // never released
    let bindings = [out.whole()];
    let dispatch = aqueduct_engine::Dispatch::grid([256, 1, 1]).bindings(&bindings).constants(&[9, 256]);
    queue.dispatch(&kernels.store_value, &dispatch).signal(done.at(1)).submit().unwrap();
    drop((kernels, queue, engine));
    assert_eq!(failure_of(&done, 1), "queue 0 was cancelled");
    assert_eq!(device.live_objects().0, 0);
}

#[test]
fn cancelling_the_last_handle_fails_the_work_at_once() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let queue = queue(device);
    let (gate, done) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
    let out = rig.buffer();
    stall_next(&queue);
    rig.store(&queue, &out, 1, &[], &[done.at(1)]); // on the device, stalled
    rig.store(&queue, &out, 2, &[gate.at(1)], &[done.at(2)]); // parked
    queue.cancel();
    assert_eq!(device.live_objects().0, 0, "destroyed by the cancel");
    assert_eq!(failure_of(&done, 1), "queue 0 was cancelled");
    gate.signal(1).unwrap(); // the gate is still usable
}

#[test]
fn cancelling_with_other_handles_refuses_new_work_and_lets_device_work_finish() {
    let rig = KernelRig::new(WaitStrategy::BarrierAnd);
    let device = rig.device();
    let queue = queue(device);
    let other = queue.clone();
    let (gate, ran, parked) =
        (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
    let out = rig.buffer();
    let stalled = Stalled::arm(&queue);
    rig.store(&queue, &out, 4, &[], &[ran.at(1)]); // on the device, stalled
    rig.store(&queue, &out, 8, &[gate.at(1)], &[parked.at(1)]); // parked
    queue.cancel();
    assert_eq!(failure_of(&parked, 1), "queue 0 was cancelled", "work not yet on the device fails");
    let refused = other.fill(out.whole(), &[0]).submit();
    let Err(EngineError::QueueFailed(record)) = refused else { panic!("refused after cancel: {refused:?}") };
    assert_eq!(record.message, "queue 0 was cancelled");
    stalled.resume(|| ran.value() == 1);
    ran.wait(1, TIMEOUT).unwrap();
    assert_eq!(words(&out.to_vec().unwrap())[0], 4, "work on the device finished");
    drop(other);
    assert!(eventually(TIMEOUT, || device.live_objects().0 == 0));
}
