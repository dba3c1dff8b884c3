//! Command buffers given bad input: each mistake is a typed error, and nothing changes.

mod common;

use std::time::Duration;

use aqueduct_engine::{
    BindingTable, BufferRef, CommandBufferUsage, CompareOp, Dispatch, EngineError, MemoryKind, WaitStrategy,
};
use common::*;

fn setup() -> (aqueduct_engine::Engine, aqueduct_engine::Device, aqueduct_engine::Queue) {
    let engine = engine(WaitStrategy::BarrierValue);
    let device = engine.device().clone();
    let queue = queue(&device);
    (engine, device, queue)
}

#[test]
fn execute_before_finish_and_record_after_finish_are_state_errors() {
    let (_engine, device, queue) = setup();
    let out = host_buffer(&device, &[0u8; 16]);
    let mut cb = device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    cb.fill(&out, &[1]).unwrap();
    let error = queue.execute(&cb, &BindingTable::default()).submit().unwrap_err();
    assert!(matches!(error, EngineError::CommandBufferState { .. }), "{error}");
    assert_eq!(queue.stats().submissions, 0);
    cb.finish().unwrap();
    for error in [
        cb.fill(&out, &[2]).unwrap_err(),
        cb.barrier().unwrap_err(),
        cb.finish().unwrap_err(),
        cb.new_block().unwrap_err(),
    ] {
        assert!(matches!(error, EngineError::CommandBufferState { .. }), "{error}");
    }
    assert_eq!(cb.facts().unwrap().commands, 2, "one fill and the return, unchanged");
}

#[test]
fn a_short_or_mismatched_binding_table_is_refused_before_anything_runs() {
    let (_engine, device, queue) = setup();
    let small = host_buffer(&device, &[0u8; 8]);
    let big = host_buffer(&device, &[0u8; 64]);
    let mut cb = device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    cb.fill(BufferRef::slot(0, 0, 16), &[1]).unwrap();
    cb.fill(BufferRef::slot(2, 0, 4), &[1]).unwrap();
    cb.finish().unwrap();
    let cases = [
        BindingTable::default(),
        BindingTable::from_bindings(&[big.whole(), big.whole()]).unwrap(),
        BindingTable::from_bindings(&[small.whole(), big.whole(), big.whole()]).unwrap(),
    ];
    let mut with_gap = BindingTable::from_bindings(&[big.whole(), big.whole(), big.whole()]).unwrap();
    cb.check_binding_table(&with_gap).expect("complete table");
    with_gap.clear_slot(0);
    for table in cases.iter().chain([&with_gap]) {
        let error = queue.execute(&cb, table).submit().unwrap_err();
        assert!(matches!(error, EngineError::BindingTable { .. }), "{error}");
        assert!(cb.check_binding_table(table).is_err());
    }
    assert_eq!(queue.stats().submissions, 0, "nothing was submitted");
    assert_eq!(big.to_vec().unwrap(), vec![0; 64]);
}

#[test]
fn bindings_and_command_buffers_from_another_device_are_refused() {
    let (_engine, device, queue) = setup();
    let other_engine = engine(WaitStrategy::BarrierValue);
    let other = other_engine.device();
    let foreign = host_buffer(other, &[0u8; 16]);
    let mut cb = device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    assert!(matches!(cb.fill(&foreign, &[1]), Err(EngineError::ForeignObject { .. })));
    cb.fill(BufferRef::slot(0, 0, 16), &[1]).unwrap();
    cb.finish().unwrap();
    let table = BindingTable::from_bindings(&[foreign.whole()]).unwrap();
    assert!(matches!(queue.execute(&cb, &table).submit(), Err(EngineError::ForeignObject { .. })));

    let mut elsewhere = other.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    elsewhere.fill(&foreign, &[1]).unwrap();
    elsewhere.finish().unwrap();
    assert!(matches!(
        queue.execute(&elsewhere, &BindingTable::default()).submit(),
        Err(EngineError::ForeignObject { .. })
    ));
    assert_eq!(foreign.to_vec().unwrap(), vec![0; 16]);
}

#[test]
fn a_static_binding_keeps_its_buffer_alive() {
    let (_engine, device, queue) = setup();
    let (_, _, allocations_before) = device.live_objects();
    let source = host_buffer(&device, &[5, 6, 7, 8]);
    let out = host_buffer(&device, &[0u8; 4]);
    let mut cb = device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    cb.copy(&source, BufferRef::slot(0, 0, 4)).unwrap();
    cb.finish().unwrap();
    drop(source);
    assert_eq!(device.live_objects().2, allocations_before + 2, "the command buffer holds the dropped source");
    let done = device.create_semaphore(0).unwrap();
    queue.execute(&cb, &BindingTable::from_bindings(&[out.whole()]).unwrap()).signal(done.at(1)).submit().unwrap();
    done.wait(1, TIMEOUT).unwrap();
    assert_eq!(out.to_vec().unwrap(), [5, 6, 7, 8]);
    drop(cb);
    assert!(
        eventually(Duration::from_secs(5), || device.live_objects().2 == allocations_before + 1),
        "released with the command buffer"
    );
}

#[test]
fn recording_mistakes_are_typed_errors_that_record_nothing() {
    let (_engine, device, _queue) = setup();
    let kernels = test_kernels(&_engine);
    let host = host_buffer(&device, &[0u8; 64]);
    let local = device.allocate(MemoryKind::DeviceLocal, 64).unwrap();
    let mut cb = device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    let label = cb.new_block().unwrap();

    assert!(matches!(cb.fill(&host, &[1, 2, 3]), Err(EngineError::Plan(_))), "3-byte pattern");
    assert!(
        matches!(cb.copy(host.range(0, 8), host.range(4, 8)), Err(EngineError::Plan(_))),
        "overlapping static copy"
    );
    assert!(
        matches!(cb.copy(host.range(0, 8), host.range(8, 4)), Err(EngineError::InvalidArgument { .. })),
        "length mismatch"
    );
    assert!(matches!(cb.update(host.range(0, 4), &[1, 2]), Err(EngineError::InvalidArgument { .. })));
    assert!(matches!(cb.fill(host.range(60, 8), &[1]), Err(EngineError::OutOfBounds { .. })));
    assert!(matches!(cb.profile_marker(host.range(0, 4), 0), Err(EngineError::InvalidArgument { .. })));
    assert!(
        matches!(
            cb.branch_if(&local, CompareOp::Eq, 0, label, label),
            Err(EngineError::InvalidArgument { .. } | EngineError::NotHostAccessible { .. })
        ),
        "a 64-byte device-local condition"
    );
    assert!(matches!(
        cb.branch_if(local.range(0, 4), CompareOp::Eq, 0, label, label),
        Err(EngineError::NotHostAccessible { .. })
    ));
    let bindings = [BufferRef::from(&host)];
    let wrong = Dispatch::grid([1, 1, 1]).bindings(&bindings).constants(&[1]);
    assert!(matches!(cb.dispatch(&kernels.store_value, &wrong), Err(EngineError::KernargMismatch { .. })));
    let zero_grid = Dispatch::grid([0, 1, 1]).bindings(&bindings).constants(&[1, 1]);
    assert!(matches!(cb.dispatch(&kernels.store_value, &zero_grid), Err(EngineError::InvalidGrid { .. })));
    assert!(
        matches!(cb.begin(aqueduct_engine::BlockLabel::ENTRY), Err(EngineError::CommandBufferState { .. })),
        "the entry block is begun already"
    );
    // A bad second binding leaves no trace of the good first one (no slot need, no retention).
    let half_bad = [BufferRef::slot(3, 0, 64), BufferRef::from(host.range(32, 64))];
    let add = Dispatch::grid([1, 1, 1]).bindings(&half_bad).constants(&[1, 1]);
    assert!(matches!(cb.dispatch(&kernels.add_from, &add), Err(EngineError::OutOfBounds { .. })));
    assert!(
        matches!(
            cb.dispatch_indirect(
                &kernels.store_value,
                &Dispatch::grid([1, 1, 1]).bindings(&bindings).constants(&[1, 1]),
                BufferRef::slot(0, 0, 8)
            ),
            Err(EngineError::InvalidArgument { .. })
        ),
        "8-byte counts"
    );

    // The unbegun label makes finish fail, and recording can go on afterwards.
    let error = cb.finish().unwrap_err();
    assert!(error.to_string().contains("never begun"), "{error}");
    cb.begin(label).unwrap();
    cb.finish().unwrap();
    assert_eq!(cb.facts().unwrap().commands, 2, "only the two returns: none of the refused commands was recorded");
    assert_eq!(cb.facts().unwrap().binding_slots, 0, "no refused command left a slot need");
    cb.check_binding_table(&BindingTable::default()).expect("an empty table is enough");
    let limits = aqueduct_engine::BlockLimits { packets: 1, ..Default::default() };
    assert!(matches!(
        device.create_command_buffer_on(0, CommandBufferUsage::Reusable, limits),
        Err(EngineError::InvalidArgument { .. })
    ));
}

#[test]
fn a_block_larger_than_the_ring_is_refused_and_the_queue_goes_on() {
    let engine = engine_with(aqueduct_engine::EngineConfig {
        queue_packets: 64,
        wait_strategy: WaitStrategy::BarrierValue,
        ..Default::default()
    });
    let device = engine.device().clone();
    let queue = queue(&device);
    let out = host_buffer(&device, &[0u8; 4]);
    let mut cb = device.create_command_buffer(CommandBufferUsage::OneShot).unwrap();
    for _ in 0..100 {
        cb.fill(&out, &[1]).unwrap();
    }
    cb.finish().unwrap();
    assert_eq!(cb.facts().unwrap().blocks, 1, "100 packets fit the default block limit, not the 64-packet ring");
    let error = queue.execute(&cb, &BindingTable::default()).submit().unwrap_err();
    assert!(matches!(error, EngineError::SubmissionTooLarge { .. }), "{error}");
    assert_eq!(queue.stats().submissions, 0);
    // Refused before it ran, the one-shot buffer may still be executed (here: again refused).
    assert!(matches!(
        queue.execute(&cb, &BindingTable::default()).submit(),
        Err(EngineError::SubmissionTooLarge { .. })
    ));
    let done = device.create_semaphore(0).unwrap();
    queue.fill(out.whole(), &[2]).signal(done.at(1)).submit().unwrap();
    done.wait(1, TIMEOUT).unwrap();
    assert_eq!(out.to_vec().unwrap(), [2; 4]);
}

#[test]
fn block_structure_mistakes_are_refused() {
    let (_engine, device, queue) = setup();
    let out = host_buffer(&device, &[0u8; 4]);
    let mut cb = device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    let spin = cb.new_block().unwrap();
    cb.branch(spin).unwrap();
    assert!(
        matches!(cb.fill(&out, &[1]), Err(EngineError::CommandBufferState { .. })),
        "recording after the block's branch"
    );
    cb.begin(spin).unwrap();
    assert!(matches!(cb.begin(spin), Err(EngineError::CommandBufferState { .. })));
    cb.branch(spin).unwrap();
    let error = cb.finish().unwrap_err();
    assert!(error.to_string().contains("loops through unconditional branches"), "{error}");
    assert!(!cb.is_finished());

    // A condition in a device-local slot is refused at execute.
    let mut cb = device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    let next = cb.new_block().unwrap();
    cb.branch_if(BufferRef::slot(0, 0, 4), CompareOp::Ne, 0, next, next).unwrap();
    cb.begin(next).unwrap();
    cb.finish().unwrap();
    let local = device.allocate(MemoryKind::DeviceLocal, 4).unwrap();
    let error = queue.execute(&cb, &BindingTable::from_bindings(&[local.whole()]).unwrap()).submit().unwrap_err();
    assert!(matches!(error, EngineError::BindingTable { .. }), "{error}");
}

#[test]
fn dynamic_copies_that_overlap_are_refused_at_execute() {
    let (_engine, device, queue) = setup();
    let buffer = host_buffer(&device, &[0u8; 64]);
    let mut cb = device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    cb.copy(BufferRef::slot(0, 0, 32), BufferRef::slot(1, 0, 32)).unwrap();
    cb.finish().unwrap();
    let overlapping = BindingTable::from_bindings(&[buffer.range(0, 48), buffer.range(16, 48)]).unwrap();
    assert!(matches!(queue.execute(&cb, &overlapping).submit(), Err(EngineError::Plan(_))));
    let disjoint = BindingTable::from_bindings(&[buffer.range(0, 32), buffer.range(32, 32)]).unwrap();
    let done = device.create_semaphore(0).unwrap();
    queue.execute(&cb, &disjoint).signal(done.at(1)).submit().unwrap();
    done.wait(1, TIMEOUT).unwrap();
}
