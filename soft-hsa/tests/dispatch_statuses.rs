//! A dispatch the command processor refuses faults its queue with the status ROCr gives that
//! error (`AqlQueue::DynamicScratchHandler`, `amd_aql_queue.cpp`; docs/rocr-facts.md section 16),
//! checked in ROCr's order: dimensions, group memory, code, workgroup size.

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use aqueduct_hsa::sys::status;
use aqueduct_soft_hsa as soft;
use common::*;

/// Publishes one dispatch of `store_value`, changed by `change` and with setup `setup`, on a
/// fresh queue; returns the status its error callback received and that the packet did not
/// complete.
fn refused(
    status_slot: &'static AtomicU32,
    setup: u16,
    change: impl FnOnce(&mut aqueduct_abi::KernelDispatchPacket),
) -> u32 {
    let client = Client::new();
    let store = client.kernel(TEST_KERNELS_GFX1100, "store_value.kd");
    let queue = client.queue_with_callback(16, (status_slot as *const AtomicU32).cast_mut().cast());
    let out = client.alloc_u32(64);
    let done = client.signal(1);
    let kernarg = client.kernargs(&kernargs_store_value(out.as_mut_ptr(), 1, 64));
    let mut packet = dispatch_packet(&store, 64, 64, kernarg, done);
    change(&mut packet);
    let id = queue.reserve_spinning();
    queue.publish(id, &packet, dispatch_header(true), setup);
    queue.ring(id);
    await_status(status_slot);
    assert_eq!(client.load(done), 1, "a refused packet does not complete");
    assert_eq!(out, &[0; 64], "nothing ran");
    let (code, _) = soft::queue_error_detail(queue.raw).expect("queue").expect("error recorded");
    assert_eq!(code, status_slot.load(Ordering::SeqCst), "the callback and the record agree");
    code
}

/// The status the queue's error callback stored in `status_slot`, waiting up to 10 s for it (0
/// if none came).
fn await_status(status_slot: &AtomicU32) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    while status_slot.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    status_slot.load(Ordering::SeqCst)
}

#[test]
fn four_dimensions_are_incompatible_arguments() {
    static STATUS: AtomicU32 = AtomicU32::new(0);
    assert_eq!(refused(&STATUS, 4, |_| {}), status::ERROR_INCOMPATIBLE_ARGUMENTS);
}

#[test]
fn a_group_segment_past_the_agents_group_memory_is_an_invalid_allocation() {
    static STATUS: AtomicU32 = AtomicU32::new(0);
    assert_eq!(refused(&STATUS, 1, |packet| packet.group_segment_size = u32::MAX), status::ERROR_INVALID_ALLOCATION);
}

#[test]
fn a_null_kernel_object_is_an_invalid_code_object() {
    static STATUS: AtomicU32 = AtomicU32::new(0);
    assert_eq!(refused(&STATUS, 1, |packet| packet.kernel_object = 0), status::ERROR_INVALID_CODE_OBJECT);
}

#[test]
fn a_kernel_object_that_names_no_kernel_is_an_invalid_code_object() {
    static STATUS: AtomicU32 = AtomicU32::new(0);
    assert_eq!(refused(&STATUS, 1, |packet| packet.kernel_object = 0x1000), status::ERROR_INVALID_CODE_OBJECT);
}

#[test]
fn a_workgroup_past_the_agents_maximum_is_an_invalid_argument() {
    static STATUS: AtomicU32 = AtomicU32::new(0);
    assert_eq!(refused(&STATUS, 1, |packet| packet.workgroup_size_x = u16::MAX), status::ERROR_INVALID_ARGUMENT);
}

#[test]
fn the_checks_come_in_rocrs_order() {
    // Bad in every way: the dimensions are reported first.
    static STATUS: AtomicU32 = AtomicU32::new(0);
    let code = refused(&STATUS, 4, |packet| {
        packet.group_segment_size = u32::MAX;
        packet.kernel_object = 0;
        packet.workgroup_size_x = u16::MAX;
    });
    assert_eq!(code, status::ERROR_INCOMPATIBLE_ARGUMENTS);
    // Then group memory before the code and the workgroup.
    static SECOND: AtomicU32 = AtomicU32::new(0);
    let code = refused(&SECOND, 1, |packet| {
        packet.group_segment_size = u32::MAX;
        packet.kernel_object = 0;
        packet.workgroup_size_x = u16::MAX;
    });
    assert_eq!(code, status::ERROR_INVALID_ALLOCATION);
    // Then the code before the workgroup.
    static THIRD: AtomicU32 = AtomicU32::new(0);
    let code = refused(&THIRD, 1, |packet| {
        packet.kernel_object = 0;
        packet.workgroup_size_x = u16::MAX;
    });
    assert_eq!(code, status::ERROR_INVALID_CODE_OBJECT);
}

/// A processor caches the last kernel it looked up (`Executables::lease`); the cache must not
/// outlive the executable. The same queue runs a kernel, its executable is destroyed, and the
/// same kernel object dispatched again is refused as naming no kernel.
#[test]
fn a_kernel_of_a_destroyed_executable_is_refused_on_the_queue_that_just_ran_it() {
    static STATUS: AtomicU32 = AtomicU32::new(0);
    let client = Client::new();
    let executable = aqueduct_hsa::Executable::load(&client.hsa, client.agent, TEST_KERNELS_GFX1100).expect("loads");
    let store = client.hsa.kernel_symbol(executable.handle(), client.agent, "store_value.kd").expect("symbol");
    let queue = client.queue_with_callback(16, (&STATUS as *const AtomicU32).cast_mut().cast());
    let out = client.alloc_u32(8);
    let kernarg = client.kernargs(&kernargs_store_value(out.as_mut_ptr(), 5, 8));
    for round in 0..2 {
        let done = client.signal(1);
        let id = queue.reserve_spinning();
        queue.publish(id, &dispatch_packet(&store, 8, 8, kernarg, done), dispatch_header(true), 1);
        queue.ring(id);
        assert_eq!(client.wait_eq(done, 0, 10_000), 0, "round {round} ran");
    }
    assert_eq!(out, &[5, 6, 7, 8, 9, 10, 11, 12]);
    drop(executable);
    let done = client.signal(1);
    let id = queue.reserve_spinning();
    queue.publish(id, &dispatch_packet(&store, 8, 8, kernarg, done), dispatch_header(true), 1);
    queue.ring(id);
    assert_eq!(await_status(&STATUS), status::ERROR_INVALID_CODE_OBJECT);
    assert_eq!(client.load(done), 1, "the refused packet does not complete");
}
