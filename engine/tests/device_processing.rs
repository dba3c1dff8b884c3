//! Command-buffer executions processed on the device: the device library's block processor
//! writes the packets on the queue's device target, so the queue itself publishes two packets
//! per execution whatever the program's size, and a conditional loop runs without a host round
//! trip. Each result is checked against the same program processed by the host.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};

use aqueduct_engine::{
    BindingTable, BlockLimits, BlockProcessing, Buffer, BufferRef, CommandBuffer, CommandBufferUsage, CompareOp,
    Device, Dispatch, Engine, EngineConfig, EngineError, Queue, Semaphore, WaitStrategy,
};
use common::*;

const N: u32 = 64;

struct Rig {
    _engine: Engine,
    device: Device,
    queue: Queue,
    kernels: TestKernels,
    done: Semaphore,
    value: AtomicU64,
    /// Buffers the recorded programs point at, kept until the rig (after the programs) drops.
    kept: std::sync::Mutex<Vec<Buffer>>,
}

impl Rig {
    fn with(config: EngineConfig) -> Self {
        let engine = engine_with(EngineConfig { wait_strategy: WaitStrategy::BarrierValue, ..config });
        let device = engine.device().clone();
        let queue = queue(&device);
        let kernels = test_kernels(&engine);
        let done = device.create_semaphore(0).unwrap();
        Self { _engine: engine, device, queue, kernels, done, value: AtomicU64::new(0), kept: Default::default() }
    }

    fn new() -> Self {
        Self::with(EngineConfig::default())
    }

    fn buffer(&self, words: u32) -> Buffer {
        host_buffer(&self.device, &vec![0u8; 4 * words as usize])
    }

    /// Executes `cb` with `table`, waits, and returns the queue's (packets, epochs) it took.
    fn execute(&self, cb: &CommandBuffer, table: &BindingTable) -> (u64, u64) {
        let (packets, epochs, _) = self.execute_counted(cb, table);
        (packets, epochs)
    }

    /// [`Self::execute`], and how often the execution parked for the host to resume it.
    fn execute_counted(&self, cb: &CommandBuffer, table: &BindingTable) -> (u64, u64, u64) {
        let before = self.queue.stats();
        let value = self.value.fetch_add(1, Ordering::Relaxed) + 1;
        self.queue.execute(cb, table).signal(self.done.at(value)).submit().expect("execute");
        self.done.wait(value, TIMEOUT).expect("execution completes");
        let after = self.queue.stats();
        (
            after.packets - before.packets,
            after.epochs_submitted - before.epochs_submitted,
            after.deferred - before.deferred,
        )
    }

    /// out[i] = input[i] + addend for i < count.
    fn add(&self, cb: &mut CommandBuffer, out: BufferRef, input: BufferRef, addend: u32, count: u32) {
        let bindings = [out, input];
        let constants = [addend, count];
        let dispatch = Dispatch::grid([count, 1, 1]).workgroup([16, 1, 1]).bindings(&bindings).constants(&constants);
        cb.dispatch(&self.kernels.add_from, &dispatch).expect("record add_from");
    }
}

fn read_words(buffer: &Buffer) -> Vec<u32> {
    buffer.to_vec().unwrap().chunks(4).map(|word| u32::from_le_bytes(word.try_into().unwrap())).collect()
}

/// `steps` chained increments of slot 0 (a template patched per execution, with a static
/// input), barriers between them.
fn chain(rig: &Rig, steps: u32, processing: BlockProcessing) -> CommandBuffer {
    let scratch = rig.buffer(N);
    let mut cb = rig.device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    cb.set_processing(processing);
    for step in 0..steps {
        // Even steps read slot 0 into the scratch buffer, odd ones add it back: 1 per pair.
        if step % 2 == 0 {
            rig.add(&mut cb, scratch.whole().into(), BufferRef::slot(0, 0, 4 * u64::from(N)), 0, N);
        } else {
            rig.add(&mut cb, BufferRef::slot(0, 0, 4 * u64::from(N)), scratch.whole().into(), 1, N);
        }
        cb.barrier().unwrap();
    }
    cb.finish().unwrap();
    rig.kept.lock().unwrap().push(scratch); // the program points at it
    cb
}

#[test]
fn a_512_dispatch_program_takes_two_packets_on_the_device_and_matches_the_host() {
    let rig = Rig::new();
    let mut results = Vec::new();
    for processing in [BlockProcessing::Host, BlockProcessing::Device] {
        let cb = chain(&rig, 512, processing);
        assert_eq!(cb.device_ineligible(), None, "template dispatches and barriers are the device's");
        let out = rig.buffer(N);
        let table = BindingTable::from_bindings(&[out.whole()]).unwrap();
        let (packets, epochs) = rig.execute(&cb, &table);
        let (again, _) = rig.execute(&cb, &table);
        results.push(read_words(&out));
        match processing {
            BlockProcessing::Device => {
                assert_eq!((packets, again, epochs), (2, 2, 1), "the processor's dispatch and its done barrier")
            }
            _ => assert!(packets >= 512, "the host wrote every packet: {packets}"),
        }
    }
    assert_eq!(results[0], vec![512; N as usize], "two executions of 256 increments");
    assert_eq!(results[0], results[1], "the device and the host agree");
}

/// The device program is built at the first execution that may run on the device, not at
/// finish: a program executed on the host first, then switched to the device, still runs there
/// (built then), and agrees with the host.
#[test]
fn a_program_finished_for_the_host_runs_on_the_device_when_switched_after_finish() {
    let rig = Rig::new();
    let mut cb = chain(&rig, 64, BlockProcessing::Host);
    let out = rig.buffer(N);
    let table = BindingTable::from_bindings(&[out.whole()]).unwrap();
    let (packets, _) = rig.execute(&cb, &table);
    assert!(packets >= 64, "the host wrote every packet: {packets}");
    let host = read_words(&out);
    assert_eq!(host, vec![32; N as usize], "one execution of 32 increments");
    cb.set_processing(BlockProcessing::Device);
    assert_eq!(cb.device_ineligible(), None, "built on demand: template dispatches and barriers are the device's");
    let (packets, epochs) = rig.execute(&cb, &table);
    assert_eq!((packets, epochs), (2, 1), "the processor's dispatch and its done barrier");
    assert_eq!(read_words(&out), vec![64; N as usize], "the device's execution adds what the host's did");
}

/// A loop of `iterations` on the device's or the host's side: the counter is raised by one per
/// pass, and the branch reads it.
fn looped(rig: &Rig, iterations: u32, processing: BlockProcessing) -> (Vec<u32>, u64, u64) {
    let counter = rig.buffer(1);
    let mut cb = rig.device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    cb.set_processing(processing);
    let (body, exit) = (cb.new_block().unwrap(), cb.new_block().unwrap());
    cb.branch(body).unwrap();
    cb.begin(body).unwrap();
    rig.add(&mut cb, counter.whole().into(), counter.whole().into(), 1, 1);
    cb.branch_if(&counter, CompareOp::Lt, u64::from(iterations), body, exit).unwrap();
    cb.begin(exit).unwrap();
    cb.finish().unwrap();
    let (_, epochs, parked) = rig.execute_counted(&cb, &BindingTable::default());
    (read_words(&counter), epochs, parked)
}

#[test]
fn a_conditional_loop_of_100_iterations_needs_no_host_round_trip() {
    let rig = Rig::new();
    let (host, host_epochs, host_parked) = looped(&rig, 100, BlockProcessing::Host);
    let (device, device_epochs, device_parked) = looped(&rig, 100, BlockProcessing::Device);
    assert_eq!(host, vec![100]);
    assert_eq!(device, host, "the device's loop matches the host's");
    // On the host each branch ends a segment: the host waits for the queue to drain, reads the
    // counter and admits the next segment (one epoch, one host round trip, per iteration; the
    // execution parked for it at least once). On the device it is one epoch, never parked.
    assert!(host_epochs >= 100 && host_parked >= 1, "{host_epochs} epochs, parked {host_parked} times");
    assert_eq!((device_epochs, device_parked), (1, 0));
    // The model picks the device for a program with a conditional branch.
    let (auto, auto_epochs, _) = looped(&rig, 100, BlockProcessing::Auto);
    assert_eq!((auto, auto_epochs), (vec![100], 1));
}

#[test]
fn a_program_larger_than_the_device_targets_ring_runs_in_steps() {
    let rig = Rig::with(EngineConfig { queue_packets: 64, ..EngineConfig::default() });
    let limits = BlockLimits { packets: 16, ..BlockLimits::default() };
    let counter = rig.buffer(4);
    let mut cb = rig.device.create_command_buffer_on(0, CommandBufferUsage::Reusable, limits).unwrap();
    cb.set_processing(BlockProcessing::Device);
    for _ in 0..300 {
        rig.add(&mut cb, counter.whole().into(), counter.whole().into(), 1, 4);
        cb.barrier().unwrap();
    }
    cb.finish().unwrap();
    let (packets, _) = rig.execute(&cb, &BindingTable::default());
    assert_eq!(packets, 2);
    assert_eq!(read_words(&counter), [300; 4]);
}

#[test]
fn a_loop_that_never_exits_fails_its_execution_naming_the_block() {
    let rig = Rig::with(EngineConfig { execution_block_limit: 40, ..EngineConfig::default() });
    let flag = rig.buffer(1);
    let mut cb = rig.device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    cb.set_processing(BlockProcessing::Device);
    let body = cb.new_block().unwrap();
    let exit = cb.new_block().unwrap();
    cb.branch(body).unwrap();
    cb.begin(body).unwrap();
    rig.add(&mut cb, flag.whole().into(), flag.whole().into(), 0, 1);
    cb.branch_if(&flag, CompareOp::Eq, 0, body, exit).unwrap();
    cb.begin(exit).unwrap();
    cb.finish().unwrap();
    let value = rig.value.fetch_add(1, Ordering::Relaxed) + 1;
    rig.queue.execute(&cb, &BindingTable::default()).signal(rig.done.at(value)).submit().expect("execute");
    let error = rig.done.wait(value, TIMEOUT).expect_err("the execution fails");
    let message = error.to_string();
    assert!(message.contains("block processor") && message.contains("block budget"), "{message}");
    // The queue goes on (with a semaphore of its own: the failure stays with `done`).
    let out = rig.buffer(N);
    let table = BindingTable::from_bindings(&[out.whole()]).unwrap();
    let next = rig.device.create_semaphore(0).unwrap();
    rig.queue.execute(&chain(&rig, 2, BlockProcessing::Device), &table).signal(next.at(1)).submit().unwrap();
    next.wait(1, TIMEOUT).expect("the next execution completes");
    assert_eq!(read_words(&out), vec![1; N as usize]);
}

#[test]
fn indirect_dispatches_transfers_and_scatter_run_on_the_device_as_on_the_host() {
    let rig = Rig::new();
    let mut results = Vec::new();
    for processing in [BlockProcessing::Host, BlockProcessing::Device] {
        let (out, filled, copied) = (rig.buffer(N), rig.buffer(N), rig.buffer(N));
        let counts = host_buffer(&rig.device, bytemuck::cast_slice(&[2u32, 1, 1]));
        let mut cb = rig.device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
        cb.set_processing(processing);
        // An indirect dispatch whose counts come from slot 1, a fill of slot 0, a copy from it,
        // and an all-dynamic (pointer-scatter) dispatch.
        let bindings = [BufferRef::from(&out)];
        let constants = [10, N];
        let dispatch = Dispatch::grid([1, 1, 1]).workgroup([16, 1, 1]).bindings(&bindings).constants(&constants);
        cb.dispatch_indirect(&rig.kernels.store_value, &dispatch, BufferRef::slot(1, 0, 12)).unwrap();
        cb.barrier().unwrap();
        cb.fill(BufferRef::slot(0, 4, 4 * u64::from(N) - 8), &7u32.to_le_bytes()).unwrap();
        cb.barrier().unwrap();
        cb.copy(BufferRef::slot(0, 0, 4 * u64::from(N)), &copied).unwrap();
        cb.barrier().unwrap();
        rig.add(&mut cb, BufferRef::slot(2, 0, 4 * u64::from(N)), BufferRef::slot(0, 0, 4 * u64::from(N)), 1, N);
        cb.finish().unwrap();
        assert_eq!(cb.device_ineligible(), None, "every command has a device form");
        let scattered = rig.buffer(N);
        let table = BindingTable::from_bindings(&[filled.whole(), counts.whole(), scattered.whole()]).unwrap();
        let (packets, _) = rig.execute(&cb, &table);
        if processing == BlockProcessing::Device {
            assert_eq!(packets, 2);
        }
        results.push([out, filled, copied, scattered].map(|buffer| read_words(&buffer)));
    }
    let expected_out: Vec<u32> = (0..N).map(|i| if i < 32 { 10 + i } else { 0 }).collect();
    assert_eq!(results[0][0], expected_out, "two workgroups of 16 from the counts buffer");
    assert_eq!(results[0][1][1], 7);
    assert_eq!(results[0], results[1], "the device wrote what the host wrote");
}

#[test]
fn forcing_the_device_on_a_block_too_large_for_its_target_is_refused_and_enqueues_nothing() {
    let rig = Rig::with(EngineConfig { queue_packets: 64, ..EngineConfig::default() });
    let out = rig.buffer(N);
    let limits = BlockLimits { packets: 128, ..BlockLimits::default() };
    let mut cb = rig.device.create_command_buffer_on(0, CommandBufferUsage::OneShot, limits).unwrap();
    cb.set_processing(BlockProcessing::Device);
    for _ in 0..100 {
        cb.fill(&out, &1u32.to_le_bytes()).unwrap();
    }
    cb.finish().unwrap();
    let before = rig.queue.stats();
    for _ in 0..2 {
        // Refused before anything ran: the one-shot buffer is refused the same way again.
        let error = rig.queue.execute(&cb, &BindingTable::default()).submit().expect_err("refused");
        assert!(
            matches!(&error, EngineError::SubmissionTooLarge { reason } if reason.contains("device target")),
            "{error}"
        );
    }
    assert_eq!(rig.queue.stats(), before, "nothing was enqueued");
}

#[test]
fn the_execute_builder_overrides_the_command_buffers_choice() {
    let rig = Rig::new();
    let cb = chain(&rig, 8, BlockProcessing::Host);
    let out = rig.buffer(N);
    let table = BindingTable::from_bindings(&[out.whole()]).unwrap();
    let before = rig.queue.stats();
    let value = rig.value.fetch_add(1, Ordering::Relaxed) + 1;
    rig.queue
        .execute(&cb, &table)
        .processing(BlockProcessing::Device)
        .signal(rig.done.at(value))
        .submit()
        .expect("execute on the device");
    rig.done.wait(value, TIMEOUT).unwrap();
    assert_eq!(rig.queue.stats().packets - before.packets, 2, "processed on the device");
    assert_eq!(read_words(&out), vec![4; N as usize]);
    // And back: the command buffer's own choice again.
    let (packets, _) = rig.execute(&cb, &table);
    assert_eq!((packets, read_words(&out)), (8, vec![8; N as usize]));
}

/// Executions in flight back to back, their tables changing in runs of equal ones: each run's
/// table is written once into the device target's binding-table ring, which wraps many times
/// under a small kernarg ring, and every execution reads its own table (each output counts the
/// executions that named it).
#[test]
fn executions_in_flight_each_read_their_own_binding_table_as_the_table_ring_wraps() {
    let rig = Rig::with(EngineConfig { kernarg_ring_bytes: 16 << 10, ..EngineConfig::default() });
    let cb = chain(&rig, 8, BlockProcessing::Device);
    let outs: Vec<Buffer> = (0..3).map(|_| rig.buffer(N)).collect();
    let tables: Vec<BindingTable> =
        outs.iter().map(|out| BindingTable::from_bindings(&[out.whole()]).unwrap()).collect();
    let (mut counts, mut pick, mut seed, mut changes) = ([0u32; 3], 0usize, 7u32, 0);
    let before = rig.queue.stats();
    let mut last = 0;
    for _ in 0..600 {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        // Half the executions keep the table before them; the rest take another.
        if (seed >> 16) & 1 == 1 {
            pick = (pick + 1 + ((seed >> 17) & 1) as usize) % 3;
            changes += 1;
        }
        counts[pick] += 1;
        last = rig.value.fetch_add(1, Ordering::Relaxed) + 1;
        rig.queue.execute(&cb, &tables[pick]).signal(rig.done.at(last)).submit().expect("execute");
    }
    rig.done.wait(last, TIMEOUT).expect("every execution completes");
    assert!(changes > 200, "the ring of 64 tables wrapped: {changes} tables written");
    assert_eq!(rig.queue.stats().packets - before.packets, 2 * 600, "each processed on the device");
    for (out, count) in outs.iter().zip(counts) {
        assert_eq!(read_words(out), vec![4 * count; N as usize], "4 increments per execution naming it");
    }
}

/// A binding table larger than half the device target's table ring: forced onto the device it
/// is refused by name before anything is enqueued, and the same execution still runs on the host.
#[test]
fn a_binding_table_too_large_for_the_targets_ring_is_refused_on_the_device_and_runs_on_the_host() {
    // A 4 KiB kernarg ring: a 1 KiB table ring, tables up to 512 bytes (64 slots).
    let rig = Rig::with(EngineConfig { kernarg_ring_bytes: 4096, ..EngineConfig::default() });
    let (input, out) = (rig.buffer(N), rig.buffer(N));
    let mut cb = rig.device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    cb.set_processing(BlockProcessing::Device);
    rig.add(&mut cb, BufferRef::slot(100, 0, 4 * u64::from(N)), input.whole().into(), 3, N);
    cb.finish().unwrap();
    let mut table = BindingTable::with_capacity(101);
    table.set(100, out.whole()).unwrap();
    let before = rig.queue.stats();
    let error = rig.queue.execute(&cb, &table).submit().expect_err("refused");
    assert!(
        matches!(&error, EngineError::SubmissionTooLarge { reason } if reason.contains("808-byte binding table")),
        "{error}"
    );
    assert_eq!(rig.queue.stats(), before, "nothing was enqueued");
    cb.set_processing(BlockProcessing::Host);
    rig.execute(&cb, &table);
    assert_eq!(read_words(&out), vec![3; N as usize], "processed by the host");
}
