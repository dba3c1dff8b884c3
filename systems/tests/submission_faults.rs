//! Forces every path on which the stages used to run something other than what was asked (a
//! barrier that passes in place of a dependency, a null pointer, kernel object 0): each now
//! fails the submission with a typed `SubmissionFault`, and its signals fail when its epoch
//! retires. These paths cannot be reached through the engine's checked API, so the test drives
//! the stages directly on a soft queue.

use std::sync::Arc;
use std::time::{Duration, Instant};

use aqueduct_abi::block_program::{
    BindingSource, BlockBuf, BlockProgramBuf, FillCommand, ReturnCommand, TerminatorKind, validate,
};
use aqueduct_abi::{BarrierAndPacket, BarrierValuePacket, PacketType};
use aqueduct_components::dependency::Producer;
use aqueduct_components::dependency::{DeviceWait, SignalOp};
use aqueduct_components::directory::{CrossQueueWait, EPOCH_BASE};
use aqueduct_components::program::{
    BlockFacts, BuiltinObject, Cursor, LegPlan, ProgramImage, ProgramImageRef, ProgramRun,
};
use aqueduct_components::submission::{Reservation, SubmissionFault, Verdict};
use aqueduct_hsa::Hsa;
use aqueduct_hsa::sys::hsa_queue_t;
use aqueduct_soft_hsa::Fault;
use aqueduct_systems::block_processor::PacketRoom;
use aqueduct_systems::strategy::{BarrierAnd, BarrierValue, CrossQueueStrategy};
use aqueduct_systems::sync::SemaphoreSync;
use aqueduct_systems::{QueueState, admission, block_processor, publication};

mod common;
use common::{rig, rig_with};

/// Admission as a pass runs it, over the pending rows (here `row` alone): its verdict for `row`.
fn admit(queue: &mut QueueState, row: u64) -> Verdict {
    admission::admit_pending::<BarrierValue>(&mut queue.admission());
    match queue.rows.pass.stop {
        Some((stopped, verdict)) if stopped == row => verdict,
        _ => {
            assert_eq!(queue.rows.pass.admitted(), row..row + 1, "the one row was admitted");
            Verdict::Admitted
        }
    }
}

/// Publication as a pass runs it, doorbell included, with the soft queue holding `first_packet`
/// (a stall), so the test reads the published packets before they run; `release` lets them run.
/// Returns the pass's fault.
fn publish_held(
    hsa: &Hsa,
    raw: *mut hsa_queue_t,
    queue: &mut QueueState,
    first_packet: u64,
) -> Option<SubmissionFault> {
    let controls = aqueduct_soft_hsa::SoftControls::of(hsa).expect("a soft runtime");
    controls.inject_fault(raw, first_packet, Fault::Stall).expect("the stall is armed");
    publication::publish_admitted::<BarrierValue>(&mut queue.publication());
    queue.rows.pass.fault
}

/// Releases the stall [`publish_held`] armed, again until epoch `epoch` retires: a release before
/// the processor reaches the held packet lets nothing through.
fn release(hsa: &Hsa, raw: *mut hsa_queue_t, queue: &QueueState, epoch: u64) {
    let controls = aqueduct_soft_hsa::SoftControls::of(hsa).expect("a soft runtime");
    let deadline = Instant::now() + Duration::from_secs(5);
    while BarrierValue::device_retired(&queue.handles.endpoint) < epoch {
        controls.release_stall(raw).expect("the stall is released");
        assert!(Instant::now() < deadline, "the held epoch never retired");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A one-block program: fill 64 bytes at binding slot 2 with a u32 pattern, then return.
fn fill_program(builtins: Box<[BuiltinObject]>) -> Arc<ProgramImage> {
    let mut block = BlockBuf::new(TerminatorKind::Return);
    let target = block.push_source(BindingSource::dynamic(2, 0));
    block.push_command(FillCommand::new(target, 64, 7, 4));
    block.push_command(ReturnCommand::new());
    let mut program = BlockProgramBuf::new();
    program.push_block(block);
    let bytes = program.to_bytes();
    let view = validate(&bytes).expect("the program validates");
    let blocks = view
        .blocks()
        .map(|block| BlockFacts {
            offset: block.offset(),
            header: *block.header(),
            rodata_address: 0,
            first_command: 0,
        })
        .collect::<Vec<_>>();
    Arc::new(ProgramImage::interpreted(bytes.into_boxed_slice(), &blocks, builtins.into()))
}

/// Stages and admits the fill program with a binding table too short for its slot 2 (the
/// engine's table check would refuse it), so its payload faults when it is written. Returns the
/// row and its reservation.
fn admit_unresolvable_program(
    queue: &mut QueueState,
    image: &ProgramImage,
    signalled: u32,
    slot_0: u64,
) -> (u64, Reservation) {
    let row = queue.rows.push();
    let mut writer = queue.rows.writer(row);
    writer.push_signal(SignalOp { semaphore: signalled, value: 1 });
    let run = writer.program();
    // SAFETY: each caller keeps `image` alive for as long as it uses the row.
    run.image = Some(unsafe { ProgramImageRef::new(image) });
    run.block_limit = 16;
    run.bindings.push(slot_0);
    assert_eq!(admit(queue, row), Verdict::Admitted);
    (row, queue.rows.columns.reservation[queue.rows.slot(row)])
}

#[test]
fn a_payload_fault_keeps_the_wait_barriers_admission_promised() {
    let mut rig = rig();
    let signalled = rig.semaphores.allocate(0).expect("semaphore");
    let producer_signal = rig.hsa.signal_create(0).expect("signal").handle;
    {
        let queue = &mut rig.state;
        let image = fill_program(Box::new([]));
        let (row, mut plan) = admit_unresolvable_program(queue, &image, signalled, rig.kernarg_base);
        // A barrier as admission names one (its producer queue's epoch signal), with its packet
        // reserved: admission has already advanced the frontier on the promise that it runs.
        let extra = queue.handles.ring.try_reserve(1).expect("a free slot");
        assert_eq!(extra, plan.first_packet + plan.packets);
        // As admission reserves a barrier: its packet first, counted among the wait packets.
        plan.packets += 1;
        plan.wait_packets += 1;
        let slot = queue.rows.slot(row);
        queue.rows.columns.reservation[slot] = plan;
        let producer = Producer { queue: 1, epoch: 1 };
        let epoch_slot = queue.epochs.slot(plan.epoch);
        queue.epochs.device_waits[epoch_slot] = queue.epochs.wait_arena.extend(&[DeviceWait {
            producer,
            semaphore: signalled,
            value: 0,
            barrier: true,
            via: 0,
            signal: producer_signal,
            slot_named: false,
        }]);
        let fault = publish_held(&rig.hsa, rig.queue, queue, plan.first_packet);
        assert_eq!(fault, Some(SubmissionFault::UnresolvedSource { block: 0, source: 0 }));
        // SAFETY: the slot belongs to this queue's ring and its packet is published; the queue
        // holds it until the release below.
        let wait =
            unsafe { core::ptr::read(queue.handles.ring.slot_address(plan.first_packet) as *const BarrierValuePacket) };
        assert_eq!(wait.header.header.packet_type(), Some(PacketType::VendorSpecific), "the wait is still a barrier");
        assert_eq!((wait.signal, wait.value), (producer_signal, EPOCH_BASE), "on the named signal and epoch");
        // SAFETY: as above.
        let last = unsafe {
            core::ptr::read(
                queue.handles.ring.slot_address(plan.first_packet + plan.packets - 1) as *const BarrierAndPacket
            )
        };
        assert_eq!(last.header.packet_type(), Some(PacketType::BarrierAnd), "the payload became barriers that pass");
        assert_eq!(last.dep_signal, [0; 5]);
        release(&rig.hsa, rig.queue, queue, plan.epoch);
    }
    let message = rig.drained_failure(signalled).expect("the execution's signal fails");
    assert!(message.contains("binding source 0"), "{message}");
}

#[test]
fn a_barrier_whose_producer_queue_cannot_be_found_is_never_named_as_waiting_on_nothing() {
    let mut rig = rig_with(CrossQueueWait::BarrierAnd);
    let queue = &mut rig.state;
    let missing = Producer { queue: 9, epoch: 1 };
    let mut waits =
        [DeviceWait { producer: missing, semaphore: 0, value: 1, barrier: true, via: 0, signal: 0, slot_named: false }];
    assert_eq!(
        BarrierAnd::reserve_epoch(&queue.handles.endpoint, &queue.handles.link, 1, &mut waits),
        Err(SubmissionFault::UnknownProducerQueue { queue: 9 })
    );
    assert!(!waits[0].slot_named, "nothing was claimed on a queue that does not exist");
}

#[test]
fn a_wait_fault_runs_nothing_of_the_payload_and_fails_the_submission() {
    let mut rig = rig();
    let signalled = rig.semaphores.allocate(0).expect("semaphore");
    {
        let queue = &mut rig.state;
        let image = fill_program(Box::new([]));
        let (row, plan) = admit_unresolvable_program(queue, &image, signalled, rig.kernarg_base);
        // As `reserve_epoch` reports a barrier it could not name.
        let slot = queue.rows.slot(row);
        queue.rows.columns.reservation[slot].wait_fault = Some(SubmissionFault::UnknownProducerQueue { queue: 9 });
        let fault = publish_held(&rig.hsa, rig.queue, queue, plan.first_packet);
        assert_eq!(
            fault,
            Some(SubmissionFault::UnknownProducerQueue { queue: 9 }),
            "the wait's fault, not the payload's"
        );
        // SAFETY: the slot belongs to this queue's ring and its packet is published; the queue
        // holds it until the release below.
        let last = unsafe {
            core::ptr::read(
                queue.handles.ring.slot_address(plan.first_packet + plan.packets - 1) as *const BarrierAndPacket
            )
        };
        assert_eq!(last.header.packet_type(), Some(PacketType::BarrierAnd), "the payload became barriers that pass");
        release(&rig.hsa, rig.queue, queue, plan.epoch);
    }
    let message = rig.drained_failure(signalled).expect("the submission's signal fails");
    assert!(message.contains("not in the queue directory"), "{message}");
}

#[test]
fn a_program_source_without_a_binding_fails_the_execution_instead_of_writing_null() {
    let mut rig = rig();
    let signalled = rig.semaphores.allocate(0).expect("semaphore");
    {
        let queue = &mut rig.state;
        let image = fill_program(Box::new([]));
        let (_, plan) = admit_unresolvable_program(queue, &image, signalled, rig.kernarg_base);
        let fault = publish_held(&rig.hsa, rig.queue, queue, plan.first_packet);
        release(&rig.hsa, rig.queue, queue, plan.epoch);
        assert_eq!(fault, Some(SubmissionFault::UnresolvedSource { block: 0, source: 0 }));
        assert!(queue.rows.is_empty(), "nothing more of the program runs: its row left the pending ones");
    }
    let message = rig.drained_failure(signalled).expect("the execution's signal fails");
    assert!(message.contains("binding source 0"), "{message}");
}

/// The builtin the device library would pick for the test program's fill at `target`.
fn fill_kernel(target: u64) -> u8 {
    aqueduct_builtins::plan_fill(target, 64, 7, 4).expect("plannable").kernel as u8
}

#[test]
fn the_block_processor_names_each_fault() {
    let mut rig = rig();
    let queue = &mut rig.state;
    let row = queue.rows.push();
    let slot = queue.rows.slot(row);
    let library =
        [BuiltinObject { kernel_object: 0x1000, ..Default::default() }; aqueduct_builtins::Builtin::ALL.len()];
    let cases: [(Box<[BuiltinObject]>, u64, SubmissionFault); 2] = [
        // No kernel for the fill: never kernel object 0 in a packet.
        (Box::new([]), rig.kernarg_base, SubmissionFault::MissingBuiltin { builtin: fill_kernel(rig.kernarg_base) }),
        // A range that wraps the address space cannot be planned: never a barrier in its place.
        (Box::new(library), u64::MAX - 31, SubmissionFault::TransferNotPlanned { block: 0, command: 0 }),
    ];
    // Kept until the end: the row names the last one after the loop.
    let mut images = Vec::new();
    for (builtins, base, expected) in cases {
        let mut writer = queue.rows.writer(row);
        let run = writer.program();
        images.push(fill_program(builtins));
        // SAFETY: `images` holds every image until the test ends; an `Arc`'s target never moves.
        run.image = images.last().map(|image| unsafe { ProgramImageRef::new(image) });
        run.block_limit = 16;
        run.bindings.extend([0, 0, base]);
        let mut segment = LegPlan::default();
        let verdict = block_processor::plan_leg(
            &queue.kernargs,
            None,
            true,
            run,
            PacketRoom { now: 8, at_best: 8 },
            0,
            &mut segment,
        );
        assert_eq!(verdict, Verdict::Admitted);
        let first = queue.handles.ring.try_reserve(block_processor::leg_packets(&segment)).expect("free slots");
        // SAFETY: the packets were reserved above and the kernarg span is the rig's own ring
        // memory, larger than one block's worst case; no header is published.
        let written = unsafe {
            let run = &mut queue.rows.columns.program[slot];
            block_processor::write_leg(&queue.handles.ring, first, rig.kernarg_base, 0, run, &segment, None)
        };
        assert_eq!(written, Err(expected));
    }
    // Cursors the engine never hands to admission.
    let kernargs = &queue.kernargs;
    let plan = |run: &ProgramRun| {
        let room = PacketRoom { now: 8, at_best: 8 };
        block_processor::plan_leg(kernargs, None, true, run, room, 0, &mut LegPlan::default())
    };
    let run = &mut queue.rows.columns.program[slot];
    run.cursor = Cursor::Done;
    assert_eq!(plan(run), Verdict::Fault(SubmissionFault::ProgramFinished));
    run.cursor = Cursor::Block(5);
    assert_eq!(plan(run), Verdict::Fault(SubmissionFault::MissingBlock { block: 5 }));
    run.image = None;
    assert_eq!(plan(run), Verdict::Fault(SubmissionFault::NoProgramImage));
    let submitted = queue.epochs.submitted;
    assert_eq!(admit(queue, row), Verdict::Fault(SubmissionFault::NoProgramImage), "admission passes the fault on");
    assert_eq!(queue.epochs.submitted, submitted, "reserving nothing");
}
