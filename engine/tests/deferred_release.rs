//! Deferred release: submissions keep nothing alive, so an object whose last handle drops while
//! parked, pending or in-flight work names it waits in the device World until that work settles.
//! Each test drops a handle under parked work, then checks that nothing took its place (values,
//! failures and memory are not cross-wired) and that it is freed once the work settles.

mod common;

use std::time::Duration;

use aqueduct_engine::{
    BindingTable, BlockLimits, BufferRef, CommandBufferUsage, Dispatch, EngineConfig, EngineError, MemoryKind,
    WaitStrategy,
};
use common::*;

const STRATEGIES: [WaitStrategy; 2] = [WaitStrategy::BarrierValue, WaitStrategy::BarrierAnd];
const SETTLE: Duration = Duration::from_secs(5);

#[test]
fn a_dropped_signal_semaphore_is_not_reused_until_its_signal_settles() {
    for strategy in STRATEGIES {
        let engine = engine(strategy);
        let device = engine.device();
        let queue = queue(device);
        let gate = device.create_semaphore(0).unwrap();
        let done = device.create_semaphore(0).unwrap();
        let (_, before, _) = device.live_objects();
        let signalled = device.create_semaphore(0).unwrap();
        queue.barrier().wait(gate.at(1)).signal(signalled.at(7)).signal(done.at(1)).submit().unwrap();
        drop(signalled);
        assert_eq!(device.live_objects().1, before + 1, "{strategy:?}: the parked signal holds the semaphore");
        // The table hands out the most recently released slot first: had the dropped
        // semaphore's slot been released, these would include it, and the parked signal would
        // raise a newcomer to 7.
        let newcomers: Vec<_> = (0..4).map(|_| device.create_semaphore(0).unwrap()).collect();
        gate.signal(1).unwrap();
        done.wait(1, TIMEOUT).unwrap();
        for newcomer in &newcomers {
            assert_eq!(
                newcomer.query().unwrap(),
                0,
                "{strategy:?}: a newcomer took the signal of the dropped semaphore"
            );
        }
        assert!(
            eventually(SETTLE, || device.live_objects().1 == before + newcomers.len()),
            "{strategy:?}: freed once the signal settled"
        );
    }
}

#[test]
fn a_deferred_semaphore_keeps_its_slot_at_the_table_limit() {
    let engine = engine_with(EngineConfig { semaphore_capacity: 4, ..EngineConfig::default() });
    let device = engine.device();
    let queue = queue(device);
    let gate = device.create_semaphore(0).unwrap();
    let done = device.create_semaphore(0).unwrap();
    let signalled = device.create_semaphore(0).unwrap();
    queue.barrier().wait(gate.at(1)).signal(signalled.at(1)).signal(done.at(1)).submit().unwrap();
    drop(signalled);
    let fourth = device.create_semaphore(0).unwrap();
    assert!(
        matches!(device.create_semaphore(0), Err(EngineError::LimitReached { .. })),
        "the dropped semaphore's slot is still the parked barrier's"
    );
    gate.signal(1).unwrap();
    done.wait(1, TIMEOUT).unwrap();
    assert!(eventually(SETTLE, || device.live_objects().1 == 3), "freed once the barrier settled");
    let fifth = device.create_semaphore(0).unwrap();
    assert_eq!((fourth.value(), fifth.value()), (0, 0));
}

#[test]
fn a_dropped_wait_semaphore_is_neither_satisfied_nor_failed_by_its_successors() {
    for strategy in STRATEGIES {
        let engine = engine(strategy);
        let device = engine.device();
        let (producer, consumer) = (queue(device), queue(device));
        let gate = device.create_semaphore(0).unwrap();
        let done = device.create_semaphore(0).unwrap();
        let (_, before, _) = device.live_objects();
        let handoff = device.create_semaphore(0).unwrap();
        producer.barrier().wait(gate.at(1)).signal(handoff.at(1)).submit().unwrap();
        consumer.barrier().wait(handoff.at(1)).signal(done.at(1)).submit().unwrap();
        drop(handoff);
        // Had the handoff's slot been reused, one of these would satisfy or fail the consumer.
        let raised = device.create_semaphore(0).unwrap();
        let failed = device.create_semaphore(0).unwrap();
        raised.signal(5).unwrap();
        failed.fail("not the handoff");
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(done.value(), 0, "{strategy:?}: the consumer ran before its producer");
        assert!(done.failure().is_none(), "{strategy:?}: the consumer failed with another semaphore");
        assert_eq!(device.live_objects().1, before + 3, "{strategy:?}: the handoff is still held");
        gate.signal(1).unwrap();
        done.wait(1, TIMEOUT).unwrap();
        assert_eq!((raised.value(), failed.value()), (5, 0), "{strategy:?}");
        assert!(eventually(SETTLE, || device.live_objects().1 == before + 2), "{strategy:?}: freed once settled");
    }
}

#[test]
fn a_buffer_dropped_under_a_parked_fill_keeps_its_memory_until_it_settles() {
    let engine = engine(WaitStrategy::BarrierValue);
    let device = engine.device();
    let queue = queue(device);
    let gate = device.create_semaphore(0).unwrap();
    let done = device.create_semaphore(0).unwrap();
    let (_, _, before) = device.live_objects();
    let target = device.allocate(MemoryKind::HostVisible, 4096).unwrap();
    let address = target.device_address();
    queue.fill(target.whole(), &[0x5A]).wait(gate.at(1)).signal(done.at(1)).submit().unwrap();
    drop(target);
    assert_eq!(device.live_objects().2, before + 1, "the parked fill holds the memory");
    let fresh = host_buffer(device, &[0xC3; 4096]);
    assert_ne!(fresh.device_address(), address, "the parked fill's memory was handed out again");
    gate.signal(1).unwrap();
    done.wait(1, TIMEOUT).unwrap();
    assert!(eventually(SETTLE, || device.live_objects().2 == before + 1), "freed once the fill settled");
    assert_eq!(fresh.to_vec().unwrap(), vec![0xC3; 4096], "the fill landed in the new buffer");
}

#[test]
fn a_command_buffer_dropped_under_its_parked_execution_runs_whole_then_is_freed() {
    // Executions name the program's image by address; the image must outlive every segment,
    // and a ring of 8 packets makes this one run as several segments, resumed after reclaim.
    let engine = engine_with(EngineConfig { queue_packets: 8, ..EngineConfig::default() });
    let device = engine.device();
    let queue = queue(device);
    let kernels = test_kernels(&engine);
    let gate = device.create_semaphore(0).unwrap();
    let done = device.create_semaphore(0).unwrap();
    const COUNT: u32 = 16;
    let out = host_buffer(device, &[0; 4 * COUNT as usize]);
    let limits = BlockLimits { packets: 4, ..BlockLimits::default() };
    let mut cb = device.create_command_buffer_on(0, CommandBufferUsage::Reusable, limits).unwrap();
    // The host's segments are what this test parks between.
    cb.set_processing(aqueduct_engine::BlockProcessing::Host);
    for step in 0..24 {
        let bindings = [BufferRef::from(&out), BufferRef::from(&out)];
        let constants = [step, COUNT];
        let dispatch = Dispatch::grid([COUNT, 1, 1]).workgroup([16, 1, 1]).bindings(&bindings).constants(&constants);
        cb.dispatch(&kernels.add_from, &dispatch).unwrap();
        cb.barrier().unwrap();
    }
    cb.finish().unwrap();
    let before = queue.stats();
    queue.execute(&cb, &BindingTable::default()).wait(gate.at(1)).signal(done.at(1)).submit().unwrap();
    drop(cb);
    assert_eq!(device.live_programs().1, 1, "the parked execution still names the program");
    gate.signal(1).unwrap();
    done.wait(1, TIMEOUT).unwrap();
    assert!(queue.stats().epochs_submitted - before.epochs_submitted > 1, "the program ran in several segments");
    assert_eq!(words(&out.to_vec().unwrap()), vec![(0..24).sum::<u32>(); COUNT as usize]);
    assert!(eventually(SETTLE, || device.live_programs().1 == 0), "freed once the execution settled");
}

#[test]
fn dropping_everything_frees_everything() {
    for strategy in STRATEGIES {
        let engine = engine(strategy);
        let device = engine.device();
        let queue = queue(device);
        let kernels = test_kernels(&engine);
        let gate = device.create_semaphore(0).unwrap();
        let done = device.create_semaphore(0).unwrap();
        let out = device.allocate(MemoryKind::HostVisible, 256).unwrap();
        let slot = device.allocate(MemoryKind::HostVisible, 256).unwrap();
        let mut cb = device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
        let bindings = [BufferRef::from(&out)];
        cb.dispatch(&kernels.store_value, &Dispatch::grid([16, 1, 1]).bindings(&bindings).constants(&[1, 16])).unwrap();
        cb.finish().unwrap();
        assert!(cb.facts().unwrap().prepublished > 0, "the program has a published image to give back");
        assert_eq!(device.live_objects(), (1, 2, 2));
        assert_eq!(device.live_programs(), (1, 1));
        // Parked on the gate, whose handle goes with everything else: nothing can raise it any
        // more, so the parked work fails, settles, and everything it named goes.
        let table = BindingTable::from_bindings(&[slot.whole()]).unwrap();
        queue.execute(&cb, &table).wait(gate.at(1)).signal(done.at(1)).submit().unwrap();
        queue.fill(slot.whole(), &[1]).wait(gate.at(1)).signal(done.at(2)).submit().unwrap();
        drop((cb, table, kernels, out, slot, gate));
        let Err(EngineError::SemaphoreFailed(record)) = done.wait(1, TIMEOUT) else { panic!("the parked work fails") };
        assert!(record.message.contains("was dropped at value 0"), "{}", record.message);
        assert!(eventually(SETTLE, || device.live_programs() == (0, 0)), "{strategy:?}");
        assert!(eventually(SETTLE, || device.live_objects() == (1, 1, 0)), "{strategy:?}");
        // The queue has nothing left to do: its last handle's drop destroys it at once.
        drop(queue);
        assert_eq!(device.live_objects(), (0, 1, 0), "{strategy:?}");
        drop(done);
        assert_eq!(device.live_objects(), (0, 0, 0), "{strategy:?}");
    }
}

#[test]
fn the_device_frees_what_in_flight_work_named_when_it_drops() {
    // Everything dropped while work is parked, then the device itself: the device's drop frees
    // whatever the queue's teardown settled (nothing may hang or leak its way to a panic).
    let engine = engine(WaitStrategy::BarrierAnd);
    let device = engine.device().clone();
    let queue = queue(&device);
    let gate = device.create_semaphore(0).unwrap();
    let target = device.allocate(MemoryKind::HostVisible, 64).unwrap();
    queue.fill(target.whole(), &[1]).wait(gate.at(1)).submit().unwrap();
    drop((target, gate, queue, engine));
    // The gate's drop fails the parked fill (nothing can raise the gate); the queue, left
    // without handles, then settles and goes.
    assert!(eventually(SETTLE, || device.live_objects() == (0, 0, 0)), "{:?}", device.live_objects());
}
