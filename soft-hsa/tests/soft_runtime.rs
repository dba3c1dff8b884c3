//! The soft HSA runtime, exercised only through the HSA table and ring memory.

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use aqueduct_hsa::sys::{enums, status};
use aqueduct_soft_hsa::{self as soft, ExecutionMode, Fault};
use common::*;

#[test]
fn dispatched_cpu_kernel_writes_the_right_data() {
    let client = Client::new();
    let kernel = client.kernel(TEST_KERNELS_GFX1100, "store_value.kd");
    assert!(kernel.kernarg_segment_size >= 16);
    let queue = client.queue(64);
    let out = client.alloc_u32(1000);
    let done = client.signal(1);
    let kernarg = client.kernargs(&kernargs_store_value(out.as_mut_ptr(), 100, 1000));
    let id = queue.reserve_spinning();
    queue.publish(id, &dispatch_packet(&kernel, 1000, 64, kernarg, done), dispatch_header(true), 1);
    queue.ring(id);
    assert_eq!(client.wait_eq(done, 0, 10_000), 0);
    assert!(out.iter().enumerate().all(|(i, value)| *value == 100 + i as u32));
    assert_eq!(queue.read_index(), id + 1);
}

/// Two dependent dispatches: the second reads what the first wrote.
fn run_dependent_pair(client: &Client, barrier: bool) -> Vec<u32> {
    let store = client.kernel(TEST_KERNELS_GFX1100, "store_value.kd");
    let add = client.kernel(TEST_KERNELS_GFX1100, "add_from.kd");
    let queue = client.queue(64);
    soft::set_queue_mode(queue.raw, ExecutionMode::Relaxed).expect("mode");
    let (first, second) = (client.alloc_u32(256), client.alloc_u32(256));
    let done = client.signal(2);
    let a = client.kernargs(&kernargs_store_value(first.as_mut_ptr(), 10, 256));
    let b = client.kernargs(&kernargs_add_from(second.as_mut_ptr(), first.as_ptr(), 1, 256));
    let id_a = queue.reserve_spinning();
    let id_b = queue.reserve_spinning();
    queue.publish(id_a, &dispatch_packet(&store, 256, 64, a, done), dispatch_header(false), 1);
    queue.publish(id_b, &dispatch_packet(&add, 256, 64, b, done), dispatch_header(barrier), 1);
    queue.ring(id_b);
    assert_eq!(client.wait_eq(done, 0, 10_000), 0);
    second.to_vec()
}

#[test]
fn barrier_bit_orders_packets_in_relaxed_mode() {
    let client = Client::new();
    let expected: Vec<u32> = (0..256).map(|i| 10 + i + 1).collect();
    assert_eq!(run_dependent_pair(&client, true), expected);
}

#[test]
fn missing_barrier_bit_is_observable_in_relaxed_mode() {
    let client = Client::new();
    let expected: Vec<u32> = (0..256).map(|i| 10 + i + 1).collect();
    let observed = run_dependent_pair(&client, false);
    assert_ne!(observed, expected, "without the barrier bit the consumer must be able to run first");
    assert!(observed.iter().all(|value| *value == 1), "the consumer ran before the producer wrote anything");
}

#[test]
fn barrier_and_across_two_queues() {
    let client = Client::new();
    let store = client.kernel(TEST_KERNELS_GFX1100, "store_value.kd");
    let (waiter, producer) = (client.queue(16), client.queue(16));
    let produced = client.signal(1);
    let gate_done = client.signal(1);
    let (packet, header) = barrier_and(&[produced], gate_done);
    let id = waiter.reserve_spinning();
    waiter.publish(id, &packet, header, 0);
    waiter.ring(id);
    assert_eq!(client.wait_eq(gate_done, 0, 50), 1, "the barrier must wait for the other queue");
    let out = client.alloc_u32(4);
    let kernarg = client.kernargs(&kernargs_store_value(out.as_mut_ptr(), 5, 4));
    let id = producer.reserve_spinning();
    producer.publish(id, &dispatch_packet(&store, 4, 4, kernarg, produced), dispatch_header(true), 1);
    producer.ring(id);
    assert_eq!(client.wait_eq(gate_done, 0, 10_000), 0);
    assert_eq!(out, &[5, 6, 7, 8]);
}

#[test]
fn barrier_value_honours_every_condition_and_the_mask() {
    let client = Client::new();
    let queue = client.queue(16);
    // (condition, compare value, mask, a value that does not satisfy, a value that does)
    let cases = [
        (enums::SIGNAL_CONDITION_EQ, 5, -1, 4, 5),
        (enums::SIGNAL_CONDITION_NE, 5, -1, 5, 6),
        (enums::SIGNAL_CONDITION_LT, 5, -1, 5, 4),
        (enums::SIGNAL_CONDITION_GTE, 5, -1, 4, 5),
        // Only the low byte is compared: 0x1_05 & 0xFF == 5.
        (enums::SIGNAL_CONDITION_EQ, 5, 0xFF, 0x1_04, 0x1_05),
    ];
    for (condition, value, mask, unsatisfied, satisfied) in cases {
        let watched = client.signal(unsatisfied);
        let done = client.signal(1);
        let (packet, header) = barrier_value(watched, condition, value, mask, done);
        let id = queue.reserve_spinning();
        queue.publish(id, &packet, header, barrier_value_setup());
        queue.ring(id);
        assert_eq!(
            client.wait_eq(done, 0, 30),
            1,
            "condition {condition} mask {mask:#x} must not pass at {unsatisfied}"
        );
        // SAFETY: table call on a live signal.
        unsafe { (client.hsa.api().hsa_signal_store_screlease)(watched, satisfied) };
        assert_eq!(client.wait_eq(done, 0, 10_000), 0, "condition {condition} mask {mask:#x} must pass at {satisfied}");
    }
}

#[test]
fn ring_wraps_around_over_many_thousands_of_packets() {
    let client = Client::new();
    let queue = client.queue(64);
    const PACKETS: i64 = 20_000;
    let done = client.signal(PACKETS);
    let mut last = 0;
    for _ in 0..PACKETS {
        let (packet, header) = barrier_and(&[], done);
        last = queue.reserve_spinning();
        queue.publish(last, &packet, header, 0);
        if last % 16 == 15 {
            queue.ring(last);
        }
    }
    queue.ring(last);
    assert_eq!(client.wait_eq(done, 0, 30_000), 0);
    assert_eq!(queue.read_index(), PACKETS as u64);
    assert_eq!(queue.write_index(), PACKETS as u64);
}

#[test]
fn a_full_ring_is_never_overwritten() {
    let client = Client::new();
    let store = client.kernel(TEST_KERNELS_GFX1100, "store_value.kd");
    let queue = client.queue(4);
    let first = queue.write_index();
    soft::inject_fault(queue.raw, first, Fault::Stall).expect("armed");
    let out = client.alloc_u32(6);
    let done = client.signal(6);
    let mut submit = |marker: u32, id: u64| {
        let kernarg = client.kernargs(&kernargs_store_value(unsafe_offset(out, marker), 1000 * (marker + 1), 1));
        queue.publish(id, &dispatch_packet(&store, 1, 1, kernarg, done), dispatch_header(true), 1);
        queue.ring(id);
    };
    // The stalled packet is fetched (its slot freed, as on hardware) before it stalls; wait for
    // that so the ring's occupancy below does not depend on thread timing.
    submit(0, queue.try_reserve().expect("room in the ring"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while queue.read_index() == first && Instant::now() < deadline {
        std::thread::yield_now();
    }
    assert_eq!(queue.read_index(), first + 1, "the processor fetched the stalled packet");
    for marker in 1..5u32 {
        submit(marker, queue.try_reserve().expect("room in the ring"));
    }
    assert_eq!(queue.try_reserve(), None, "a ring with 4 unconsumed packets refuses another reservation");
    assert_eq!(client.wait_eq(done, 1, 30), 6, "nothing retires while the first packet stalls");
    soft::release_stall(queue.raw).expect("released");
    submit(5, queue.reserve_spinning());
    assert_eq!(client.wait_eq(done, 0, 10_000), 0);
    assert_eq!(out, &[1000, 2000, 3000, 4000, 5000, 6000], "each packet ran exactly once with its own body");
}

fn unsafe_offset(buffer: &mut [u32], index: u32) -> *mut u32 {
    buffer[index as usize..].as_mut_ptr()
}

#[test]
fn signal_waits_time_out() {
    let client = Client::new();
    let signal = client.signal(1);
    let start = Instant::now();
    assert_eq!(client.wait_eq(signal, 0, 25), 1);
    assert!(start.elapsed() >= Duration::from_millis(25));
    let mut signals = [signal, client.signal(3)];
    let mut conditions = [enums::SIGNAL_CONDITION_EQ; 2];
    let mut values = [0i64, 0];
    let mut satisfying = -1i64;
    // SAFETY: arrays of two entries each, as the count says.
    let index = unsafe {
        (client.hsa.api().hsa_amd_signal_wait_any)(
            2,
            signals.as_mut_ptr(),
            conditions.as_mut_ptr(),
            values.as_mut_ptr(),
            20_000_000,
            0,
            &mut satisfying,
        )
    };
    assert_eq!(index, u32::MAX, "wait-any times out");
    // SAFETY: as above; signal 1 now satisfies its condition.
    unsafe { (client.hsa.api().hsa_signal_store_screlease)(signals[1], 0) };
    let index = unsafe {
        (client.hsa.api().hsa_amd_signal_wait_any)(
            2,
            signals.as_mut_ptr(),
            conditions.as_mut_ptr(),
            values.as_mut_ptr(),
            1_000_000_000,
            0,
            &mut satisfying,
        )
    };
    assert_eq!((index, satisfying), (1, 0));
}

#[test]
fn an_injected_fault_reaches_the_error_callback() {
    static STATUS: AtomicU32 = AtomicU32::new(0);
    let client = Client::new();
    let store = client.kernel(TEST_KERNELS_GFX1100, "store_value.kd");
    let queue = client.queue_with_callback(16, (&STATUS as *const AtomicU32).cast_mut().cast());
    let out = client.alloc_u32(1);
    let done = client.signal(1);
    let id = queue.reserve_spinning();
    soft::inject_fault(queue.raw, id, Fault::KernelFault { status: status::ERROR_MEMORY_APERTURE_VIOLATION })
        .expect("armed");
    let kernarg = client.kernargs(&kernargs_store_value(out.as_mut_ptr(), 1, 1));
    queue.publish(id, &dispatch_packet(&store, 1, 1, kernarg, done), dispatch_header(true), 1);
    queue.ring(id);
    let deadline = Instant::now() + Duration::from_secs(10);
    while STATUS.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(STATUS.load(Ordering::SeqCst), status::ERROR_MEMORY_APERTURE_VIOLATION);
    assert_eq!(client.load(done), 1, "a faulted packet does not complete");
    assert_eq!(out, &[0], "the faulted kernel did not run");
    let (code, detail) = soft::queue_error_detail(queue.raw).expect("queue").expect("error recorded");
    assert_eq!(code, status::ERROR_MEMORY_APERTURE_VIOLATION);
    assert!(detail.contains("injected"), "{detail}");
}

#[test]
fn retire_only_mode_retires_without_running_kernels() {
    let client = Client::new();
    let kernel = client.kernel(TEST_KERNELS_GFX1100, "no_cpu_twin.kd");
    let queue = client.queue(16);
    soft::set_queue_mode(queue.raw, ExecutionMode::RetireOnly).expect("mode");
    let done = client.signal(3);
    // The command processor still reads kernargs from mapped memory, whether or not kernels run.
    let kernarg = client.kernargs(&[0; 64]);
    for _ in 0..3 {
        let id = queue.reserve_spinning();
        queue.publish(id, &dispatch_packet(&kernel, 64, 64, kernarg, done), dispatch_header(true), 1);
        queue.ring(id);
    }
    assert_eq!(client.wait_eq(done, 0, 10_000), 0);
    assert_eq!(soft::queue_error_detail(queue.raw).expect("queue"), None);
}

#[test]
fn profiling_writes_start_and_end_timestamps() {
    let client = Client::new();
    let store = client.kernel(TEST_KERNELS_GFX1100, "store_value.kd");
    let queue = client.queue(16);
    // SAFETY: table call on a live queue.
    assert_eq!(unsafe { (client.hsa.api().hsa_amd_profiling_set_profiler_enabled)(queue.raw, 1) }, status::SUCCESS);
    let out = client.alloc_u32(1);
    let done = client.signal(1);
    let id = queue.reserve_spinning();
    soft::inject_fault(queue.raw, id, Fault::Slow(Duration::from_millis(5))).expect("armed");
    let kernarg = client.kernargs(&kernargs_store_value(out.as_mut_ptr(), 9, 1));
    queue.publish(id, &dispatch_packet(&store, 1, 1, kernarg, done), dispatch_header(true), 1);
    queue.ring(id);
    assert_eq!(client.wait_eq(done, 0, 10_000), 0);
    let mut time = aqueduct_hsa::sys::hsa_amd_profiling_dispatch_time_t::default();
    // SAFETY: valid out-pointer.
    let result = unsafe { (client.hsa.api().hsa_amd_profiling_get_dispatch_time)(client.agent, done, &mut time) };
    assert_eq!(result, status::SUCCESS);
    assert!(time.start > 0 && time.end >= time.start + 5_000_000, "{time:?} must span the 5 ms slow packet");
}

#[test]
fn destroying_a_queue_with_packets_in_flight_neither_hangs_nor_leaks() {
    let client = Client::new();
    let store = client.kernel(TEST_KERNELS_GFX1100, "store_value.kd");
    let queue = client.queue(16);
    let first = queue.write_index();
    soft::inject_fault(queue.raw, first, Fault::Stall).expect("armed");
    let out = client.alloc_u32(8);
    let done = client.signal(8);
    for index in 0..8u32 {
        let kernarg = client.kernargs(&kernargs_store_value(unsafe_offset(out, index), 1, 1));
        let id = queue.reserve_spinning();
        queue.publish(id, &dispatch_packet(&store, 1, 1, kernarg, done), dispatch_header(true), 1);
        queue.ring(id);
    }
    let blocked_gate = client.signal(1);
    let (packet, header) = barrier_and(&[blocked_gate], done);
    let gated = client.queue(16);
    let id = gated.reserve_spinning();
    gated.publish(id, &packet, header, 0);
    gated.ring(id);
    // SAFETY: nothing uses the queues afterwards.
    unsafe {
        client.hsa.queue_destroy(queue.raw).expect("destroy with a stalled packet");
        client.hsa.queue_destroy(gated.raw).expect("destroy with a waiting barrier");
        // Neither queue is live any more. (Not a count of live queues: the other tests of this
        // binary create queues concurrently, which made a before/after count flaky.)
        assert_eq!((client.hsa.api().hsa_queue_destroy)(queue.raw), status::ERROR_INVALID_QUEUE, "stale queue");
        assert_eq!((client.hsa.api().hsa_queue_destroy)(gated.raw), status::ERROR_INVALID_QUEUE, "stale gated queue");
    }
    assert_eq!(client.load(done), 8, "abandoned packets never completed");
}

#[test]
fn loading_code_for_another_target_is_refused() {
    let client = Client::new();
    let error = client.hsa.load_executable(client.agent, TEST_KERNELS_GFX90A).expect_err("gfx90a code on gfx1100");
    assert_eq!(error.status, status::ERROR_INCOMPATIBLE_ARGUMENTS);
    let error = client.hsa.load_executable(client.agent, b"definitely not an ELF").expect_err("garbage");
    assert_eq!(error.status, status::ERROR_INVALID_CODE_OBJECT);
}
