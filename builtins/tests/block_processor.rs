//! The device library's block processor, from its C source on the soft runtime: one dispatch on
//! the client's queue enqueues a device program's packets on a second (target) queue through
//! that queue's write index and doorbell, evaluates a conditional branch once the block that
//! wrote its value has completed, continues itself behind the barrier, and completes the done
//! signal with its last packet. Failures land in the status record, naming block and command.

mod common;

use aqueduct_abi::device_program::{
    BlockEnd, DeviceProgramBuilder, PROCESSOR_STATE_RESERVED_BYTES, ProcessorFailure, ProcessorStatus,
};
use aqueduct_abi::{BarrierAndPacket, FenceScope, KernelDispatchPacket, PacketHeader, PacketType};
use aqueduct_builtins::{BlockProcessorArgs, Builtin, DispatchPlan, FillArgs, Kernargs};
use aqueduct_hsa::sys::{enums, hsa_signal_t};
use common::Client;

const KERNARG_CAPACITY: u64 = 4096;

/// A fill_x4 dispatch of `count` u32s of `value`: its packet body (header word included) and
/// kernarg template (target 0: patched, or `target` when given).
fn fill(client: &Client, target: u64, count: u64, value: u32, barrier: bool) -> ([u8; 64], Vec<u8>) {
    let kernel = client.kernel(Builtin::FillX4);
    let mut packet: KernelDispatchPacket = kernel.dispatch_1d(count as u32, 64, 0, hsa_signal_t { handle: 0 });
    packet.header = PacketHeader::new(PacketType::KernelDispatch, barrier, FenceScope::System, FenceScope::System);
    let pattern = u64::from(value) | u64::from(value) << 32;
    let args = FillArgs { target, element_count: count, pattern };
    (bytemuck::cast(packet), bytemuck::bytes_of(&args).to_vec())
}

fn barrier_body() -> [u8; 64] {
    let header = PacketHeader::new(PacketType::BarrierAnd, true, FenceScope::System, FenceScope::System);
    bytemuck::cast(BarrierAndPacket { header, ..Default::default() })
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks(4).map(|word| u32::from_le_bytes(word.try_into().unwrap())).collect()
}

struct Target {
    queue: *mut aqueduct_hsa::sys::hsa_queue_t,
    state: u64,
}

fn target(client: &Client, packets: u32) -> Target {
    // SAFETY: no callback, so the null data pointer is never used.
    let queue = unsafe { client.hsa.queue_create(client.agent, packets, None, core::ptr::null_mut()) }.expect("queue");
    let state = client.alloc((PROCESSOR_STATE_RESERVED_BYTES + KERNARG_CAPACITY) as usize).as_ptr() as u64;
    Target { queue, state }
}

/// Runs `image` from block 0 on `target` with `bindings`; returns the status record once the
/// done signal completed.
fn process(client: &Client, target: &Target, image: &[u8], bindings: &[u64]) -> ProcessorStatus {
    let program = client.alloc(image.len());
    program.copy_from_slice(image);
    let table = client.alloc(bindings.len().max(1) * 8);
    table[..bindings.len() * 8].copy_from_slice(bytemuck::cast_slice(bindings));
    let status = client.alloc(16);
    let done = client.hsa.signal_create(1).expect("signal");
    let args = BlockProcessorArgs {
        program: program.as_ptr() as u64,
        bindings: table.as_ptr() as u64,
        queue: target.queue as u64,
        state: target.state,
        status: status.as_ptr() as u64,
        done_signal: done.handle,
        kernarg_capacity: KERNARG_CAPACITY,
        timing: 0,
        block: 0,
        evaluate: 0,
        blocks_left: 1000,
        binding_count: bindings.len() as u32,
        step: 0,
        reserved: 0,
    };
    let plan = DispatchPlan {
        kernel: Builtin::BlockProcessor,
        kernargs: Kernargs::BlockProcessor(args),
        grid_size: 1,
        workgroup_size: 1,
    };
    client.run(&[plan]);
    // SAFETY: table call on a live signal; the timeout is in ns on the soft runtime.
    let value =
        unsafe { (client.hsa.api().hsa_signal_wait_scacquire)(done, enums::SIGNAL_CONDITION_EQ, 0, 30_000_000_000, 0) };
    let error = aqueduct_soft_hsa::queue_error_detail(target.queue).ok().flatten();
    assert_eq!(value, 0, "the execution completed its done signal; target queue error: {error:?}");
    *bytemuck::from_bytes(status)
}

#[test]
fn the_block_processor_enqueues_blocks_branches_on_the_device_and_completes_the_done_signal() {
    let client = Client::new();
    let (a, b, c, flag) = (client.alloc(64 * 4), client.alloc(64 * 4), client.alloc(64 * 4), client.alloc(4));
    for buffer in [&mut *a, &mut *b, &mut *c] {
        buffer.fill(0xEE);
    }
    let mut builder = DeviceProgramBuilder::new();
    // Block 0: a fill with a static target, one with the target patched from slot 0, a barrier.
    builder.begin_block(0);
    let (body, template) = fill(&client, a.as_ptr() as u64, 64, 0x11, true);
    builder.push_template(body, &template, &[], 0);
    let (body, template) = fill(&client, 0, 64, 0x22, false);
    builder.push_template(body, &template, &[(0, 0, 0)], 1);
    builder.push_baked(barrier_body(), 2);
    builder.end_block(BlockEnd::Next(1));
    // Block 1: writes the flag, then branches on it (read once the block has completed).
    builder.begin_block(3);
    let (body, template) = fill(&client, flag.as_ptr() as u64, 1, 7, true);
    builder.push_template(body, &template, &[], 3);
    builder.end_block(BlockEnd::CondBranch {
        width: 4,
        compare: 0, // Eq
        slot: None,
        value: flag.as_ptr() as u64,
        operand: 7,
        taken: 2,
        not_taken: 1,
    });
    // Block 2: one more fill, then return.
    builder.begin_block(4);
    let (body, template) = fill(&client, c.as_ptr() as u64, 64, 0x33, true);
    builder.push_template(body, &template, &[], 4);
    builder.end_block(BlockEnd::Return);
    let image = builder.finish();

    let target = target(&client, 64);
    let status = process(&client, &target, &image, &[b.as_ptr() as u64]);
    assert_eq!(status, ProcessorStatus::default(), "no failure");
    assert_eq!(words(a), vec![0x11; 64]);
    assert_eq!(words(b), vec![0x22; 64]);
    assert_eq!(words(flag), vec![7]);
    assert_eq!(words(c), vec![0x33; 64], "the branch was taken on the device");
}

#[test]
fn a_program_larger_than_the_target_ring_runs_in_steps() {
    let client = Client::new();
    // The smallest ring the agent allows (ROCr's minimum, 0x1000 packets, unless configured).
    let packets = client.hsa.gpu_agents().expect("agents")[0].queue_min_packets;
    let blocks = packets * 2 + 7;
    // A block of one fill each, twice the ring and more: several steps, each continued behind a
    // barrier, never overwriting a slot.
    let out = client.alloc(blocks as usize * 4);
    let mut builder = DeviceProgramBuilder::new();
    for block in 0..blocks {
        builder.begin_block(block);
        let (body, template) = fill(&client, out.as_ptr() as u64 + u64::from(block) * 4, 1, block + 1, false);
        builder.push_template(body, &template, &[], block);
        builder.end_block(if block == blocks - 1 { BlockEnd::Return } else { BlockEnd::Next(block + 1) });
    }
    let image = builder.finish();
    let target = target(&client, packets);
    assert_eq!(process(&client, &target, &image, &[]), ProcessorStatus::default());
    assert_eq!(words(out), (1..=blocks).collect::<Vec<u32>>());
}

#[test]
fn failures_name_the_block_and_command_and_still_complete_the_execution() {
    let client = Client::new();
    let out = client.alloc(64 * 4);
    // A patch from slot 3 with a one-slot table.
    let mut builder = DeviceProgramBuilder::new();
    builder.begin_block(0);
    builder.end_block(BlockEnd::Next(1));
    builder.begin_block(5);
    let (body, template) = fill(&client, 0, 64, 1, true);
    builder.push_template(body, &template, &[(0, 3, 0)], 6);
    builder.end_block(BlockEnd::Return);
    let image = builder.finish();
    let target = target(&client, 64);
    let status = process(&client, &target, &image, &[out.as_ptr() as u64]);
    assert_eq!(
        status,
        ProcessorStatus { code: ProcessorFailure::UnresolvedBinding as u32, block: 1, command: 6, detail: 3 }
    );
    assert!(out.iter().all(|byte| *byte == 0), "nothing of the failed step ran");

    // A loop that never exits runs out its block budget.
    let mut builder = DeviceProgramBuilder::new();
    builder.begin_block(0);
    builder.end_block(BlockEnd::Next(0));
    let status = process(&client, &target, &builder.finish(), &[]);
    assert_eq!((status.code, status.block), (ProcessorFailure::BlockLimit as u32, 0));

    // A branch to a block past the program.
    let mut builder = DeviceProgramBuilder::new();
    builder.begin_block(0);
    builder.end_block(BlockEnd::Next(9));
    let status = process(&client, &target, &builder.finish(), &[]);
    assert_eq!((status.code, status.block), (ProcessorFailure::MissingBlock as u32, 9));
}
