//! Dispatch events of command-buffer executions on the soft runtime: one record per executed
//! dispatch (builtins included) naming its command buffer and the command's recording index,
//! device times against fault-injected slow packets, and what a capture without dispatch
//! timing, or with too few timing signals, records.

mod common;

use std::time::Duration;

use aqueduct_engine::{
    BindingTable, BlockLimits, BlockProcessing, Buffer, BufferRef, CommandBuffer, CommandBufferUsage, Dispatch,
    EngineConfig, ProfileConfig, ProfileModes, Queue, WaitStrategy,
};
use aqueduct_profile::{CommandRef, DispatchEvent, OperationKind, Record};
use aqueduct_soft_hsa::Fault;
use common::profile::{dispatches, output, queue_events, read};
use common::{COUNT, KernelRig, TIMEOUT, queue};

const SLOW: Duration = Duration::from_millis(30);

/// Injects `fault` on the packet `offset` packets after the next one the queue publishes.
fn fault_at(queue: &Queue, offset: u64, fault: Fault) {
    common::controls(queue)
        .inject_fault(queue.hsa_queue(), queue.stats().packets + offset, fault)
        .expect("inject fault");
}

/// The buffers the program writes: x, y, z, w, v.
struct Buffers([Buffer; 5]);

/// Records, with a barrier between commands (no command of its own), in this order:
///
/// | index | block  | command                                   | execution            |
/// |-------|--------|-------------------------------------------|----------------------|
/// | 0     | entry  | store_value(x, 5): static                 | baked                |
/// | 1     | entry  | add_from(y, x via slot 0, 1)              | patched template     |
/// | 2     | entry  | fill(z, 7)                                | builtin              |
/// | 3     | entry  | branch to `second`                        | (no packet)          |
/// | 4     | second | store_value(w via slot 1, 9)              | patched template     |
/// | 5     | second | accumulate(w, x, 1), slots 1 and 0        | interpreted (scatter)|
/// | 6     | second | branch to `first`                         | (no packet)          |
/// | 7     | first  | add_from(v, w, 2): static                 | baked, last packet   |
/// | 8     | first  | return                                    | (no packet)          |
///
/// `first` is labelled before `second` but recorded after it, so the image lays it out first:
/// the recording indexes are not the layout's.
fn record(rig: &KernelRig, limits: BlockLimits) -> (CommandBuffer, Buffers, BindingTable) {
    record_for(rig, limits, BlockProcessing::Host)
}

/// [`record`], processed where `processing` says. The host's tests above count its packets and
/// slow packets by their place in its queue, so they ask for the host.
fn record_for(
    rig: &KernelRig,
    limits: BlockLimits,
    processing: BlockProcessing,
) -> (CommandBuffer, Buffers, BindingTable) {
    let device = rig.device();
    let buffers = Buffers([rig.buffer(), rig.buffer(), rig.buffer(), rig.buffer(), rig.buffer()]);
    let [x, y, z, w, v] = &buffers.0;
    let bytes = u64::from(COUNT) * 4;
    let mut program = device.create_command_buffer_on(0, CommandBufferUsage::Reusable, limits).unwrap();
    program.set_processing(processing);
    assert_eq!(program.id(), None, "no id before finish");
    let grid = Dispatch::grid([COUNT, 1, 1]).workgroup([64, 1, 1]);
    let first = program.new_block().unwrap();
    let second = program.new_block().unwrap();

    let x_ref: BufferRef = x.whole().into();
    program
        .dispatch(&rig.kernels.store_value, &grid.bindings(std::slice::from_ref(&x_ref)).constants(&[5, COUNT]))
        .unwrap();
    program.barrier().unwrap();
    let add: [BufferRef; 2] = [y.whole().into(), BufferRef::slot(0, 0, bytes)];
    program.dispatch(&rig.kernels.add_from, &grid.bindings(&add).constants(&[1, COUNT])).unwrap();
    program.barrier().unwrap();
    program.fill(z, &[7]).unwrap();
    program.barrier().unwrap();
    program.branch(second).unwrap();

    program.begin(second).unwrap();
    let w_ref = BufferRef::slot(1, 0, bytes);
    program
        .dispatch(&rig.kernels.store_value, &grid.bindings(std::slice::from_ref(&w_ref)).constants(&[9, COUNT]))
        .unwrap();
    program.barrier().unwrap();
    let accumulate = [w_ref, BufferRef::slot(0, 0, bytes)];
    let serial = Dispatch::grid([1, 1, 1]).workgroup([1, 1, 1]).bindings(&accumulate).constants(&[1, COUNT]);
    program.dispatch(&rig.kernels.accumulate, &serial).unwrap();
    program.branch(first).unwrap();

    program.begin(first).unwrap();
    let add: [BufferRef; 2] = [v.whole().into(), w.whole().into()];
    program.dispatch(&rig.kernels.add_from, &grid.bindings(&add).constants(&[2, COUNT])).unwrap();
    program.ret().unwrap();
    program.finish().unwrap();

    let mut table = BindingTable::with_capacity(2);
    table.set(0, x.whole()).unwrap();
    table.set(1, w.whole()).unwrap();
    (program, buffers, table)
}

/// The recording indexes of the dispatches an execution writes, in execution order.
const EXECUTED: [u32; 6] = [0, 1, 2, 4, 5, 7];
/// An execution's packets: a timed lead barrier, the dispatches, the trailing barrier.
const PACKETS: u32 = 8;
/// Per execution, the packet slowed (counted from the lead barrier) and its command: the
/// first slows the interpreted accumulate, the second the patched add_from.
const SLOWED: [(u64, u32); 2] = [(5, 5), (2, 1)];

fn check_results(buffers: &Buffers) {
    let [x, y, z, w, v] = &buffers.0;
    let expect = |buffer: &Buffer, base: u32, step: u32| {
        let words = common::words(&buffer.to_vec().unwrap());
        assert_eq!(words, (0..COUNT).map(|i| base + step * i).collect::<Vec<_>>());
    };
    expect(x, 5, 1);
    expect(y, 6, 1);
    assert!(z.to_vec().unwrap().iter().all(|&byte| byte == 7));
    // store_value then accumulate: (9 + i) + (5 + i).
    expect(w, 14, 2);
    expect(v, 16, 2);
}

#[test]
fn every_executed_dispatch_is_an_event_naming_its_command() {
    let split = BlockLimits { packets: 2, ..BlockLimits::default() };
    for limits in [BlockLimits::default(), split] {
        let rig = KernelRig::new(WaitStrategy::Auto);
        let device = rig.device();
        let path = output(&format!("events-{}", limits.packets));
        let modes = ProfileModes::DISPATCH_EVENTS | ProfileModes::QUEUE_EVENTS;
        device.begin_profile(ProfileConfig::new(&path).modes(modes)).unwrap();
        let queue = queue(device);
        let (program, buffers, table) = record(&rig, limits);
        let id = program.id().expect("finished");
        let other = record(&rig, limits).0;
        assert_ne!(other.id(), Some(id), "ids are unique");
        let facts = program.facts().unwrap();
        let strategies = (facts.prepublished, facts.patched_template, facts.pointer_scatter, facts.transfers);
        assert_eq!(strategies, (2, 2, 1, 1), "every kind of block step: {facts:?}");
        if limits.packets == 2 {
            assert!(program.facts().unwrap().blocks > 3, "the entry block split: {:?}", program.facts());
        }

        let done = device.create_semaphore(0).unwrap();
        for (value, (packet, _)) in (1..).zip(SLOWED) {
            fault_at(&queue, packet, Fault::Slow(SLOW));
            queue.execute(&program, &table).signal(done.at(value)).submit().unwrap();
            done.wait(value, TIMEOUT).unwrap();
        }
        check_results(&buffers);
        let report = device.end_profile().unwrap();
        assert_eq!((report.dropped, report.untimed), (0, 0));
        let records = read(&path);
        let q = u32::from(queue.index());

        let executions = queue_events(&records, q);
        assert_eq!(executions.len(), 2);
        let events = dispatches(&records, q);
        assert_eq!(events.len(), 2 * EXECUTED.len(), "one event per executed dispatch per execution: {events:#?}");
        for (execution, (_, slow_command)) in executions.iter().zip(SLOWED) {
            assert_eq!(execution.operation, OperationKind::Execute);
            assert_eq!(execution.packets, PACKETS, "dispatch timing adds no packet");
            let mut mine: Vec<&DispatchEvent> =
                events.iter().copied().filter(|event| event.epoch == execution.epoch).collect();
            mine.sort_by_key(|event| event.begin_ns);
            let commands: Vec<Option<CommandRef>> = mine.iter().map(|event| event.command).collect();
            let expected: Vec<Option<CommandRef>> =
                EXECUTED.iter().map(|&command_index| Some(CommandRef { command_buffer: id, command_index })).collect();
            assert_eq!(commands, expected, "ordered by begin, in recording order");
            let kernels: Vec<&str> = mine.iter().map(|event| event.kernel.as_str()).collect();
            assert_eq!(kernels[..2], ["store_value", "add_from"]);
            assert!(kernels[2].starts_with("fill_"), "the fill is a device-library dispatch: {kernels:?}");
            assert_eq!(kernels[3..], ["store_value", "accumulate", "add_from"]);
            for pair in mine.windows(2) {
                assert!(pair[0].end_ns <= pair[1].begin_ns, "barriers order the dispatches: {pair:#?}");
            }
            for event in &mine {
                assert!(event.begin_ns <= event.end_ns, "{event:?}");
                let Some(CommandRef { command_index, .. }) = event.command else { unreachable!() };
                let launch = (event.grid, event.workgroup);
                match command_index {
                    2 => {}
                    5 => assert_eq!(launch, ([1, 1, 1], [1, 1, 1]), "{event:?}"),
                    _ => assert_eq!(launch, ([COUNT, 1, 1], [64, 1, 1]), "{event:?}"),
                }
                if command_index == slow_command {
                    assert!(event.end_ns - event.begin_ns >= SLOW.as_nanos() as u64, "slowed: {event:?}");
                }
            }
        }
    }
}

#[test]
fn without_dispatch_events_an_execution_is_timed_as_a_whole() {
    let rig = KernelRig::new(WaitStrategy::Auto);
    let device = rig.device();
    let path = output("device-only");
    let modes = ProfileModes::DEVICE_QUEUE_EVENTS | ProfileModes::QUEUE_EVENTS;
    device.begin_profile(ProfileConfig::new(&path).modes(modes)).unwrap();
    let queue = queue(device);
    let (program, buffers, table) = record(&rig, BlockLimits::default());
    let done = device.create_semaphore(0).unwrap();
    queue.execute(&program, &table).signal(done.at(1)).submit().unwrap();
    done.wait(1, TIMEOUT).unwrap();
    check_results(&buffers);
    let report = device.end_profile().unwrap();
    assert_eq!(report.untimed, 0);
    let records = read(&path);
    let q = u32::from(queue.index());
    assert!(dispatches(&records, q).is_empty(), "no dispatch events without the mode");
    let executions = queue_events(&records, q);
    assert_eq!(executions.len(), 1);
    assert_eq!(executions[0].packets, PACKETS);
    assert!(records.iter().any(|record| matches!(record, Record::DeviceQueueEvent(event) if event.queue == q)));

    // Capture off: the same program runs again, with none of the timed barriers.
    let packets = queue.stats().packets;
    queue.execute(&program, &table).signal(done.at(2)).submit().unwrap();
    done.wait(2, TIMEOUT).unwrap();
    check_results(&buffers);
    assert_eq!(queue.stats().packets - packets, u64::from(PACKETS) - 2);
}

#[test]
fn dispatches_that_find_no_timing_signal_run_untimed_and_are_counted() {
    // One epoch in flight: two timing signals, which the segment's lead barrier and end take.
    let config = EngineConfig { epochs_in_flight: 1, ..EngineConfig::default() };
    let engine = common::engine_with(config);
    let rig = KernelRig { kernels: common::test_kernels(&engine), engine };
    let device = rig.device();
    let path = output("untimed");
    device.begin_profile(ProfileConfig::new(&path).modes(ProfileModes::DISPATCH_EVENTS)).unwrap();
    let queue = queue(device);
    let (program, buffers, table) = record(&rig, BlockLimits::default());
    let done = device.create_semaphore(0).unwrap();
    queue.execute(&program, &table).signal(done.at(1)).submit().unwrap();
    done.wait(1, TIMEOUT).unwrap();
    check_results(&buffers);
    let report = device.end_profile().unwrap();
    let records = read(&path);
    let events = dispatches(&records, u32::from(queue.index()));
    // The last dispatch shares the segment's completion; the other five went untimed.
    assert_eq!(report.untimed, EXECUTED.len() as u64 - 1, "{events:#?}");
    let commands: Vec<_> = events.iter().map(|event| event.command.map(|command| command.command_index)).collect();
    assert_eq!(commands, [Some(7)]);
}

#[test]
fn a_device_processed_execution_records_every_dispatch_the_processor_wrote() {
    let rig = KernelRig::new(WaitStrategy::Auto);
    let device = rig.device();
    let path = output("device-events");
    let modes = ProfileModes::DISPATCH_EVENTS | ProfileModes::QUEUE_EVENTS;
    device.begin_profile(ProfileConfig::new(&path).modes(modes)).unwrap();
    let queue = queue(device);
    let (program, buffers, table) = record_for(&rig, BlockLimits::default(), BlockProcessing::Device);
    let id = program.id().expect("finished");
    let done = device.create_semaphore(0).unwrap();
    queue.execute(&program, &table).signal(done.at(1)).submit().unwrap();
    done.wait(1, TIMEOUT).unwrap();
    check_results(&buffers);
    let report = device.end_profile().unwrap();
    assert_eq!((report.dropped, report.untimed), (0, 0));
    let records = read(&path);
    let q = u32::from(queue.index());
    let executions = queue_events(&records, q);
    assert_eq!(executions.len(), 1);
    assert_eq!(executions[0].operation, OperationKind::Execute);
    // On the queue: the timed lead barrier, the processor's dispatch, its done barrier, the
    // trailing barrier. The dispatches themselves ran on the device target.
    assert_eq!(executions[0].packets, 4);
    let mut events = dispatches(&records, q);
    events.sort_by_key(|event| event.begin_ns);
    let commands: Vec<Option<CommandRef>> = events.iter().map(|event| event.command).collect();
    let expected: Vec<Option<CommandRef>> =
        EXECUTED.iter().map(|&command_index| Some(CommandRef { command_buffer: id, command_index })).collect();
    assert_eq!(commands, expected, "one event per dispatch the processor wrote, in order (barriers between them)");
    for event in &events {
        assert!(event.begin_ns > 0 && event.begin_ns <= event.end_ns, "{event:?}");
        assert_eq!(event.epoch, executions[0].epoch);
    }
}
