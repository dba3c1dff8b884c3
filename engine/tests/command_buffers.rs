//! Command buffers on the soft runtime in relaxed mode: every command kind, every kernarg
//! strategy, many binding slots, concurrent execution, programs larger than the ring, branches,
//! and a missing barrier that relaxed mode exposes.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};

use aqueduct_engine::{
    BindingTable, BlockLimits, BlockProcessing, Buffer, BufferRef, CommandBuffer, CommandBufferUsage, CompareOp,
    Device, Dispatch, Engine, EngineConfig, MemoryKind, Queue, Semaphore, WaitStrategy,
};
use common::*;

const N: u32 = 64;

struct Rig {
    engine: Engine,
    device: Device,
    queue: Queue,
    kernels: TestKernels,
    done: Semaphore,
    value: AtomicU64,
}

impl Rig {
    fn new() -> Self {
        Self::with(EngineConfig::default())
    }

    fn with(config: EngineConfig) -> Self {
        let engine = engine_with(EngineConfig { wait_strategy: WaitStrategy::BarrierValue, ..config });
        let device = engine.device().clone();
        let queue = queue(&device);
        let kernels = test_kernels(&engine);
        let done = device.create_semaphore(0).unwrap();
        Self { engine, device, queue, kernels, done, value: AtomicU64::new(0) }
    }

    fn buffer(&self, words: u32) -> Buffer {
        host_buffer(&self.device, &vec![0u8; 4 * words as usize])
    }

    /// Executes `cb` with `table` and waits for it.
    fn execute(&self, cb: &CommandBuffer, table: &BindingTable) {
        let value = self.value.fetch_add(1, Ordering::Relaxed) + 1;
        self.queue.execute(cb, table).signal(self.done.at(value)).submit().expect("execute");
        self.done.wait(value, TIMEOUT).expect("execution completes");
    }

    fn store(&self, cb: &mut CommandBuffer, out: BufferRef, value: u32, count: u32) {
        let constants = [value, count];
        let dispatch = Dispatch::grid([count, 1, 1])
            .workgroup([16, 1, 1])
            .bindings(std::slice::from_ref(&out))
            .constants(&constants);
        cb.dispatch(&self.kernels.store_value, &dispatch).expect("record store_value");
    }

    fn add(&self, cb: &mut CommandBuffer, out: BufferRef, input: BufferRef, addend: u32, count: u32) {
        let bindings = [out, input];
        let constants = [addend, count];
        let dispatch = Dispatch::grid([count, 1, 1]).workgroup([16, 1, 1]).bindings(&bindings).constants(&constants);
        cb.dispatch(&self.kernels.add_from, &dispatch).expect("record add_from");
    }
}

fn read_words(buffer: &Buffer) -> Vec<u32> {
    words(&buffer.to_vec().unwrap())
}

#[test]
fn static_and_dynamic_dispatches_execute_with_prepublished_and_patched_kernargs() {
    let rig = Rig::new();
    let a = rig.buffer(N);
    let mut cb = rig.device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    rig.store(&mut cb, a.whole().into(), 100, N);
    cb.barrier().unwrap();
    rig.add(&mut cb, BufferRef::slot(0, 0, 4 * u64::from(N)), a.whole().into(), 5, N);
    cb.finish().unwrap();
    let facts = cb.facts().unwrap().clone();
    assert_eq!((facts.dispatches, facts.prepublished, facts.patched_template), (2, 1, 1), "{facts:?}");
    assert_eq!(facts.binding_slots, 1);

    // Reusable: the same program against different outputs.
    for round in 0..3 {
        let out = rig.buffer(N);
        rig.execute(&cb, &BindingTable::from_bindings(&[out.whole()]).unwrap());
        let expected: Vec<u32> = (0..N).map(|i| 100 + i + 5).collect();
        assert_eq!(read_words(&out), expected, "round {round}");
    }
    assert_eq!(read_words(&a), (0..N).map(|i| 100 + i).collect::<Vec<_>>());
}

#[test]
fn all_dynamic_bindings_scatter_pointers() {
    let rig = Rig::new();
    let mut cb = rig.device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    let bindings = [BufferRef::slot(0, 0, 4 * u64::from(N)), BufferRef::slot(1, 0, 4 * u64::from(N))];
    let constants = [3, N];
    cb.dispatch(
        &rig.kernels.accumulate,
        &Dispatch::grid([1, 1, 1]).workgroup([1, 1, 1]).bindings(&bindings).constants(&constants),
    )
    .unwrap();
    cb.finish().unwrap();
    assert_eq!(cb.facts().unwrap().pointer_scatter, 1, "{:?}", cb.facts());
    let out = host_buffer(&rig.device, bytemuck::cast_slice(&vec![1u32; N as usize]));
    let input = host_buffer(&rig.device, bytemuck::cast_slice(&(0..N).collect::<Vec<u32>>()));
    rig.execute(&cb, &BindingTable::from_bindings(&[out.whole(), input.whole()]).unwrap());
    assert_eq!(read_words(&out), (0..N).map(|i| 1 + 3 * i).collect::<Vec<_>>());
}

#[test]
fn one_shot_buffers_copy_templates_and_run_once() {
    let rig = Rig::new();
    let out = rig.buffer(N);
    let mut cb = rig.device.create_command_buffer(CommandBufferUsage::OneShot).unwrap();
    rig.store(&mut cb, out.whole().into(), 7, N);
    cb.finish().unwrap();
    let facts = cb.facts().unwrap();
    assert_eq!((facts.prepublished, facts.patched_template), (0, 1), "one-shot buffers publish no kernargs");
    rig.execute(&cb, &BindingTable::default());
    assert_eq!(read_words(&out), (0..N).map(|i| 7 + i).collect::<Vec<_>>());
    let again = rig.queue.execute(&cb, &BindingTable::default()).submit();
    assert!(matches!(again, Err(aqueduct_engine::EngineError::CommandBufferState { .. })), "{again:?}");
}

#[test]
fn fill_copy_update_and_profile_marker_execute_with_static_and_dynamic_targets() {
    let rig = Rig::new();
    let filled = rig.buffer(16);
    let copied = rig.buffer(16);
    let updated = rig.buffer(4);
    let stamps = host_buffer(&rig.device, &[0u8; 16]);
    let mut cb = rig.device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    cb.fill(&filled, &0xABCD_u16.to_le_bytes()).unwrap();
    cb.profile_marker(stamps.range(0, 8), 1).unwrap();
    cb.barrier().unwrap();
    cb.copy(&filled, BufferRef::slot(0, 0, 64)).unwrap();
    cb.update(BufferRef::slot(1, 4, 8), &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
    cb.barrier().unwrap();
    cb.profile_marker(BufferRef::slot(2, 8, 8), 2).unwrap();
    cb.finish().unwrap();
    assert_eq!(cb.facts().unwrap().transfers, 5);
    let table = BindingTable::from_bindings(&[copied.whole(), updated.whole(), stamps.whole()]).unwrap();
    rig.execute(&cb, &table);

    let pattern: Vec<u8> = (0..64).map(|i| if i % 2 == 0 { 0xCD } else { 0xAB }).collect();
    assert_eq!(filled.to_vec().unwrap(), pattern, "fill with a 2-byte pattern");
    assert_eq!(copied.to_vec().unwrap(), pattern, "copy into a dynamic slot, after the barrier");
    assert_eq!(updated.to_vec().unwrap(), [0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0], "update at a slot offset");
    let stamp = |offset: usize| u64::from_le_bytes(stamps.to_vec().unwrap()[offset..offset + 8].try_into().unwrap());
    let (first, second) = (stamp(0), stamp(8));
    assert!(first > 0 && second >= first, "timestamps {first} then {second}");
}

#[test]
fn indirect_dispatch_reads_its_grid_from_a_buffer_at_execution() {
    let rig = Rig::new();
    let out = rig.buffer(N);
    let counts = host_buffer(&rig.device, &[0u8; 12]);
    let mut cb = rig.device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    let bindings = [BufferRef::from(&out)];
    let constants = [1000, N];
    let dispatch = Dispatch::grid([1, 1, 1]).workgroup([16, 1, 1]).bindings(&bindings).constants(&constants);
    cb.dispatch_indirect(&rig.kernels.store_value, &dispatch, BufferRef::slot(0, 0, 12)).unwrap();
    cb.finish().unwrap();
    assert_eq!(cb.facts().unwrap().indirect, 1);
    let table = BindingTable::from_bindings(&[counts.whole()]).unwrap();
    // Two workgroups of 16 work-items, then all four: the grid changes without re-recording.
    for groups in [2u32, 4] {
        out.write(0, &vec![0u8; 4 * N as usize]).unwrap();
        counts.write(0, bytemuck::cast_slice(&[groups, 1, 1])).unwrap();
        rig.execute(&cb, &table);
        let written = 16 * groups;
        let expected: Vec<u32> = (0..N).map(|i| if i < written { 1000 + i } else { 0 }).collect();
        assert_eq!(read_words(&out), expected, "{groups} workgroups");
    }
}

#[test]
fn a_table_with_many_slots_resolves_every_slot() {
    let rig = Rig::new();
    const SLOTS: u32 = 300;
    let mut cb = rig.device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    for slot in 0..SLOTS {
        cb.fill(BufferRef::slot(slot, 4, 8), &slot.to_le_bytes()).unwrap();
    }
    cb.finish().unwrap();
    assert_eq!(cb.facts().unwrap().binding_slots, SLOTS);
    let buffers: Vec<Buffer> = (0..SLOTS).map(|_| rig.buffer(4)).collect();
    let bindings: Vec<_> = buffers.iter().map(Buffer::whole).collect();
    rig.execute(&cb, &BindingTable::from_bindings(&bindings).unwrap());
    for (slot, buffer) in buffers.iter().enumerate() {
        assert_eq!(read_words(buffer), [0, slot as u32, slot as u32, 0], "slot {slot}");
    }
}

#[test]
fn one_command_buffer_runs_concurrently_on_two_queues_with_different_tables() {
    let rig = Rig::new();
    let second = queue(&rig.device);
    let mut cb = rig.device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    // out = in + 1, then out = out + 10 (in place), on slots 0 (out) and 1 (in).
    let (out, input) = (BufferRef::slot(0, 0, 4 * u64::from(N)), BufferRef::slot(1, 0, 4 * u64::from(N)));
    rig.add(&mut cb, out, input, 1, N);
    cb.barrier().unwrap();
    rig.add(&mut cb, out, out, 10, N);
    cb.finish().unwrap();

    let run = |queue: &Queue, seed: u32| {
        let done = rig.device.create_semaphore(0).unwrap();
        for round in 1..=40u32 {
            let input_words: Vec<u32> = (0..N).map(|i| seed * 1000 + round * 7 + i).collect();
            let input = host_buffer(&rig.device, bytemuck::cast_slice(&input_words));
            let out = rig.buffer(N);
            let table = BindingTable::from_bindings(&[out.whole(), input.whole()]).unwrap();
            queue.execute(&cb, &table).signal(done.at(u64::from(round))).submit().unwrap();
            done.wait(u64::from(round), TIMEOUT).unwrap();
            let expected: Vec<u32> = input_words.iter().map(|v| v + 11).collect();
            assert_eq!(read_words(&out), expected, "queue seed {seed}, round {round}");
        }
    };
    std::thread::scope(|scope| {
        scope.spawn(|| run(&rig.queue, 1));
        scope.spawn(|| run(&second, 2));
    });
}

#[test]
fn blocks_fill_one_epoch_without_a_trailing_packet() {
    let rig = Rig::new();
    let out = rig.buffer(N);
    let limits = BlockLimits { packets: 4, ..BlockLimits::default() };
    let mut cb = rig.device.create_command_buffer_on(0, CommandBufferUsage::Reusable, limits).unwrap();
    // The host's segments and their packets are what this test counts.
    cb.set_processing(BlockProcessing::Host);
    for step in 0..20 {
        rig.add(&mut cb, out.whole().into(), out.whole().into(), step, N);
        cb.barrier().unwrap();
    }
    cb.finish().unwrap();
    assert_eq!(cb.facts().unwrap().blocks, 5, "20 one-packet dispatches in blocks of 4 packets");
    let before = rig.queue.stats();
    rig.execute(&cb, &BindingTable::default());
    let after = rig.queue.stats();
    assert_eq!(after.packets - before.packets, 20, "one packet per dispatch, none trailing");
    assert_eq!(after.epochs_submitted - before.epochs_submitted, 1, "five blocks, one epoch");
    assert_eq!(read_words(&out), vec![(0..20).sum::<u32>(); N as usize]);
}

#[test]
fn a_dropped_programs_blocks_serve_the_next_program_without_leaking_rows() {
    // A program's blocks are entities of a block World the device recycles: the next program
    // refills the same entities, so anything left of the previous rows would run here.
    let rig = Rig::new();
    let limits = BlockLimits { packets: 2, ..BlockLimits::default() };
    let first_out = rig.buffer(N);
    let mut first = rig.device.create_command_buffer_on(0, CommandBufferUsage::Reusable, limits).unwrap();
    for step in 0..6 {
        rig.add(&mut first, BufferRef::slot(0, 0, 4 * u64::from(N)), first_out.whole().into(), step, N);
        first.barrier().unwrap();
    }
    first.finish().unwrap();
    assert_eq!(first.facts().unwrap().blocks, 3, "six patched dispatches in blocks of two packets");
    let first_table = rig.buffer(N);
    rig.execute(&first, &BindingTable::from_bindings(&[first_table.whole()]).unwrap());
    assert_eq!(read_words(&first_table), vec![5; N as usize], "the last dispatch wrote input + 5");
    drop(first);

    let out = rig.buffer(N);
    let mut second = rig.device.create_command_buffer_on(0, CommandBufferUsage::Reusable, limits).unwrap();
    rig.store(&mut second, BufferRef::slot(0, 0, 4 * u64::from(N)), 40, N);
    second.finish().unwrap();
    assert_eq!(second.facts().unwrap().blocks, 1);
    assert_eq!(second.facts().unwrap().commands, 2, "one dispatch and the return: no row of the dropped program");
    rig.execute(&second, &BindingTable::from_bindings(&[out.whole()]).unwrap());
    assert_eq!(read_words(&out), (0..N).map(|i| 40 + i).collect::<Vec<_>>());
    assert_eq!(read_words(&first_table), vec![5; N as usize], "the dropped program's table is untouched");
}

#[test]
fn a_program_larger_than_the_ring_parks_and_resumes() {
    let rig = Rig::with(EngineConfig { queue_packets: 64, ..EngineConfig::default() });
    let counter = rig.buffer(4);
    let limits = BlockLimits { packets: 16, ..BlockLimits::default() };
    let mut cb = rig.device.create_command_buffer_on(0, CommandBufferUsage::Reusable, limits).unwrap();
    // The host's segments are what this test watches (the device's steps: tests/device_processing.rs).
    cb.set_processing(BlockProcessing::Host);
    const STEPS: u32 = 500;
    for _ in 0..STEPS {
        rig.add(&mut cb, counter.whole().into(), counter.whole().into(), 1, 4);
        cb.barrier().unwrap();
    }
    cb.finish().unwrap();
    assert!(cb.facts().unwrap().worst_packets > 64);
    let before = rig.queue.stats();
    rig.execute(&cb, &BindingTable::default());
    // Work submitted after it runs after it, in queue order.
    let value = rig.value.fetch_add(1, Ordering::Relaxed) + 1;
    rig.queue.fill(counter.range(12, 4), &9u32.to_le_bytes()).signal(rig.done.at(value)).submit().unwrap();
    rig.done.wait(value, TIMEOUT).unwrap();
    let after = rig.queue.stats();
    assert_eq!(read_words(&counter), [STEPS, STEPS, STEPS, 9]);
    assert!(after.epochs_submitted - before.epochs_submitted >= 500 / 64, "several segments: {before:?} → {after:?}");
    assert!(after.deferred > before.deferred, "the program parked for room");
}

#[test]
fn unconditional_branches_skip_blocks() {
    let rig = Rig::new();
    let (first, skipped, last) = (rig.buffer(1), rig.buffer(1), rig.buffer(1));
    let mut cb = rig.device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    let middle = cb.new_block().unwrap();
    let end = cb.new_block().unwrap();
    cb.fill(&first, &1u32.to_le_bytes()).unwrap();
    cb.branch(end).unwrap();
    cb.begin(middle).unwrap();
    cb.fill(&skipped, &2u32.to_le_bytes()).unwrap();
    cb.begin(end).unwrap();
    cb.fill(&last, &3u32.to_le_bytes()).unwrap();
    cb.finish().unwrap();
    rig.execute(&cb, &BindingTable::default());
    assert_eq!((read_words(&first)[0], read_words(&skipped)[0], read_words(&last)[0]), (1, 0, 3));
}

#[test]
fn conditional_branches_choose_by_a_value_in_a_buffer() {
    let rig = Rig::new();
    let flag = rig.buffer(1);
    let out = rig.buffer(1);
    let mut cb = rig.device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    let (zero, nonzero) = (cb.new_block().unwrap(), cb.new_block().unwrap());
    cb.branch_if(BufferRef::slot(0, 0, 4), CompareOp::Eq, 0, zero, nonzero).unwrap();
    cb.begin(zero).unwrap();
    cb.fill(&out, &10u32.to_le_bytes()).unwrap();
    cb.ret().unwrap();
    cb.begin(nonzero).unwrap();
    cb.fill(&out, &20u32.to_le_bytes()).unwrap();
    cb.finish().unwrap();
    let table = BindingTable::from_bindings(&[flag.whole()]).unwrap();
    for (value, expected) in [(0u32, 10u32), (1, 20), (0, 10)] {
        flag.write(0, &value.to_le_bytes()).unwrap();
        rig.execute(&cb, &table);
        assert_eq!(read_words(&out)[0], expected, "flag {value}");
    }
}

#[test]
fn a_conditional_loop_reads_what_its_own_commands_wrote() {
    let rig = Rig::new();
    let counter = rig.buffer(1);
    let done = rig.buffer(1);
    let mut cb = rig.device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    let (body, exit) = (cb.new_block().unwrap(), cb.new_block().unwrap());
    cb.branch(body).unwrap();
    cb.begin(body).unwrap();
    rig.add(&mut cb, counter.whole().into(), counter.whole().into(), 1, 1);
    cb.branch_if(&counter, CompareOp::Lt, 5, body, exit).unwrap();
    cb.begin(exit).unwrap();
    cb.fill(&done, &7u32.to_le_bytes()).unwrap();
    cb.finish().unwrap();
    rig.execute(&cb, &BindingTable::default());
    assert_eq!(
        (read_words(&counter)[0], read_words(&done)[0]),
        (5, 7),
        "the loop ran until the device-written counter reached 5"
    );
}

#[test]
fn relaxed_mode_catches_a_missing_barrier() {
    let rig = Rig::new();
    let run = |with_barrier: bool| {
        let (a, b, other) = (rig.buffer(N), rig.buffer(N), rig.buffer(1));
        let mut cb = rig.device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
        rig.store(&mut cb, a.whole().into(), 100, N);
        if with_barrier {
            cb.barrier().unwrap();
        }
        rig.add(&mut cb, b.whole().into(), a.whole().into(), 1, N);
        // Something after the consumer, so the consumer is not the segment's last packet (which
        // always carries the barrier bit).
        cb.fill(&other, &1u32.to_le_bytes()).unwrap();
        cb.finish().unwrap();
        rig.execute(&cb, &BindingTable::default());
        read_words(&b) == (0..N).map(|i| 101 + i).collect::<Vec<_>>()
    };
    assert!(run(true), "with the barrier the consumer sees the producer's writes");
    assert!(!run(false), "without it, relaxed mode runs the consumer first");
}

#[test]
fn a_loop_that_never_exits_fails_its_execution_at_the_block_limit() {
    let rig = Rig::with(EngineConfig { execution_block_limit: 40, ..EngineConfig::default() });
    let flag = rig.buffer(1);
    let mut cb = rig.device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    let body = cb.new_block().unwrap();
    let exit = cb.new_block().unwrap();
    cb.branch(body).unwrap();
    cb.begin(body).unwrap();
    cb.fill(&flag, &0u32.to_le_bytes()).unwrap();
    cb.branch_if(&flag, CompareOp::Eq, 0, body, exit).unwrap();
    cb.begin(exit).unwrap();
    cb.finish().unwrap();
    let signal = rig.device.create_semaphore(0).unwrap();
    let _ = rig.queue.execute(&cb, &BindingTable::default()).signal(signal.at(1)).submit();
    let error = signal.wait(1, TIMEOUT).expect_err("the execution fails");
    // The host counts "blocks processed"; the device processor, its "block budget".
    let message = error.to_string();
    assert!(message.contains("blocks processed") || message.contains("block budget"), "{message}");
    // The queue goes on.
    let value = rig.value.fetch_add(1, Ordering::Relaxed) + 1;
    rig.queue.fill(flag.whole(), &3u32.to_le_bytes()).signal(rig.done.at(value)).submit().unwrap();
    rig.done.wait(value, TIMEOUT).unwrap();
    assert_eq!(read_words(&flag)[0], 3);
    drop(rig.engine);
}

#[test]
fn device_local_memory_works_for_dispatches_and_transfers() {
    let rig = Rig::new();
    let scratch = rig.device.allocate(MemoryKind::DeviceLocal, 4 * u64::from(N)).unwrap();
    let out = rig.buffer(N);
    let mut cb = rig.device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    rig.store(&mut cb, scratch.whole().into(), 3, N);
    cb.barrier().unwrap();
    cb.copy(&scratch, BufferRef::slot(0, 0, 4 * u64::from(N))).unwrap();
    cb.finish().unwrap();
    rig.execute(&cb, &BindingTable::from_bindings(&[out.whole()]).unwrap());
    assert_eq!(read_words(&out), (0..N).map(|i| 3 + i).collect::<Vec<_>>());
}
