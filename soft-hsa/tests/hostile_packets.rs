//! Packets and kernels written to misbehave, as a buggy program's would (issue 55): each ends as
//! ROCr ends it, with a queue error of ROCr's status, and the process goes on. Every case then
//! checks that nothing ran, that host memory the agent was not given is untouched, and that a
//! valid dispatch on a new queue completes. Kernels run from their machine code (a copy of the
//! fixture with no host build registered) unless a case says otherwise.

mod common;

use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use aqueduct_abi::{KernelDescriptor, KernelDispatchPacket, SignalKind};
use aqueduct_hsa::KernelSymbol;
use aqueduct_hsa::sys::{hsa_signal_t, status};
use aqueduct_soft_hsa as soft;
use common::*;

/// The most scratch a gfx11 wave32 work-item can have: `COMPUTE_TMPRING_SIZE.WAVESIZE`, 15 bits
/// of 256-byte granules per wave (LLVM's `GCNSubtarget::getMaxWaveScratchSize`), over 32 lanes.
const GFX11_WAVE32_SCRATCH_PER_LANE: u32 = 256 * ((1 << 15) - 1) / 32;
/// The agent's group memory (rocminfo's `GROUP` pool, 64 KB).
const GROUP_BYTES: u32 = 64 << 10;

/// The gfx1100 fixture with `store_value`'s descriptor changed by `change` (no host build).
fn patched_fixture(change: impl FnOnce(&mut KernelDescriptor)) -> &'static [u8] {
    patched_code_object(TEST_KERNELS_GFX1100, "store_value", change)
}

/// A copy of the fixture whose kernels run from machine code.
fn machine_code_fixture() -> &'static [u8] {
    patched_fixture(|_| {})
}

/// Runs one `store_value` dispatch of 64 work-items on a fresh queue with its packet changed by
/// `change`; returns the status the queue's error callback got (0 if the dispatch completed)
/// after checking that a refused dispatch wrote nothing and did not complete. Then destroys the
/// queue and checks that a valid dispatch on a new queue completes.
fn dispatch_once(
    client: &Client,
    store: &KernelSymbol,
    slot: &'static AtomicU32,
    change: impl FnOnce(&mut KernelDispatchPacket),
) -> u32 {
    let queue = client.queue_with_callback(16, (slot as *const AtomicU32).cast_mut().cast());
    let out = client.alloc_u32(64);
    let done = client.signal(1);
    let kernarg = client.kernargs(&kernargs_store_value(out.as_mut_ptr(), 1, 64));
    let mut packet = dispatch_packet(store, 64, 64, kernarg, done);
    change(&mut packet);
    let id = queue.reserve_spinning();
    queue.publish(id, &packet, dispatch_header(true), packet.setup);
    queue.ring(id);
    // A memory fault reaches no callback (ROCr raises it as a system event, `take_fault`), so
    // the queue's recorded error is watched too.
    let recorded = || soft::queue_error_detail(queue.raw).expect("queue");
    let deadline = Instant::now() + Duration::from_secs(30);
    while client.load(done) != 0
        && slot.load(Ordering::SeqCst) == 0
        && recorded().is_none()
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(1));
    }
    let code = match (slot.load(Ordering::SeqCst), recorded()) {
        (0, Some((recorded, _))) => {
            assert_eq!(recorded, status::ERROR_MEMORY_FAULT, "only a memory fault skips the callback");
            recorded
        }
        (code, _) => code,
    };
    if code == 0 {
        assert_eq!(client.load(done), 0, "the dispatch completed");
        assert_eq!(out[63], 64, "every work-item ran");
    } else {
        assert_eq!(client.load(done), 1, "a refused packet does not complete");
        assert!(out.iter().all(|&word| word == 0), "nothing ran");
        let (recorded, detail) = recorded().expect("error recorded");
        assert_eq!(recorded, code, "the callback and the record agree: {detail}");
    }
    // SAFETY: the queue is this function's and is not used after.
    unsafe { client.hsa.queue_destroy(queue.raw) }.expect("the queue is destroyed");
    a_new_queue_runs_a_dispatch(client);
    code
}

/// A valid dispatch on a new queue completes within 10 s.
fn a_new_queue_runs_a_dispatch(client: &Client) {
    let store = client.kernel(TEST_KERNELS_GFX1100, "store_value.kd");
    let queue = client.queue(16);
    let out = client.alloc_u32(32);
    let done = client.signal(1);
    let kernarg = client.kernargs(&kernargs_store_value(out.as_mut_ptr(), 3, 32));
    let id = queue.reserve_spinning();
    queue.publish(id, &dispatch_packet(&store, 32, 32, kernarg, done), dispatch_header(true), 1);
    queue.ring(id);
    assert_eq!(client.wait_eq(done, 0, 10_000), 0, "a dispatch on a new queue completes");
    assert_eq!(out[31], 34);
    // SAFETY: the queue is this function's and is not used after.
    unsafe { client.hsa.queue_destroy(queue.raw) }.expect("the queue is destroyed");
}

#[test]
fn a_private_segment_past_what_a_wave_can_address_is_out_of_resources_on_either_path() {
    let client = Client::new();
    // Host build (registered for the fixture) and machine code.
    let host_build = client.kernel(TEST_KERNELS_GFX1100, "store_value.kd");
    let machine_code = client.kernel(machine_code_fixture(), "store_value.kd");
    static STATUSES: [AtomicU32; 8] = [const { AtomicU32::new(0) }; 8];
    let mut statuses = STATUSES.iter();
    for store in [&host_build, &machine_code] {
        // 1 GiB and 4 GiB − 1 per lane (the sizes that aborted the process), one past the
        // limit, and the limit itself, which runs.
        for (private, expected) in [
            (1 << 30, status::ERROR_OUT_OF_RESOURCES),
            (u32::MAX, status::ERROR_OUT_OF_RESOURCES),
            (GFX11_WAVE32_SCRATCH_PER_LANE + 1, status::ERROR_OUT_OF_RESOURCES),
            (GFX11_WAVE32_SCRATCH_PER_LANE, 0),
        ] {
            let slot = statuses.next().expect("a slot per case");
            let code = dispatch_once(&client, store, slot, |packet| packet.private_segment_size = private);
            assert_eq!(code, expected, "private segment of {private} bytes per lane");
        }
    }
}

#[test]
fn a_descriptor_that_claims_scratch_past_the_limit_is_out_of_resources() {
    let client = Client::new();
    static STATUSES: [AtomicU32; 2] = [const { AtomicU32::new(0) }; 2];
    for (slot, (private, expected)) in STATUSES
        .iter()
        .zip([(GFX11_WAVE32_SCRATCH_PER_LANE + 1, status::ERROR_OUT_OF_RESOURCES), (GFX11_WAVE32_SCRATCH_PER_LANE, 0)])
    {
        let fixture = patched_fixture(|descriptor| descriptor.private_segment_fixed_size = private);
        let store = client.kernel(fixture, "store_value.kd");
        // The packet asks for none: the descriptor's claim is what counts.
        let code = dispatch_once(&client, &store, slot, |packet| packet.private_segment_size = 0);
        assert_eq!(code, expected, "descriptor's private segment of {private} bytes");
    }
}

#[test]
fn a_descriptor_that_claims_more_lds_than_the_agent_has_is_an_invalid_allocation() {
    let client = Client::new();
    static STATUSES: [AtomicU32; 3] = [const { AtomicU32::new(0) }; 3];
    for (slot, (group, expected)) in STATUSES.iter().zip([
        (u32::MAX, status::ERROR_INVALID_ALLOCATION),
        (GROUP_BYTES + 1, status::ERROR_INVALID_ALLOCATION),
        (GROUP_BYTES, 0),
    ]) {
        let fixture = patched_fixture(|descriptor| descriptor.group_segment_fixed_size = group);
        let store = client.kernel(fixture, "store_value.kd");
        let code = dispatch_once(&client, &store, slot, |packet| packet.group_segment_size = 0);
        assert_eq!(code, expected, "descriptor's group segment of {group} bytes");
    }
}

#[test]
fn a_grid_past_the_agents_grid_limit_is_refused_not_skipped() {
    let client = Client::new();
    let store = client.kernel(machine_code_fixture(), "store_value.kd");
    static STATUSES: [AtomicU32; 3] = [const { AtomicU32::new(0) }; 3];
    // About 2^64 work-items, 2^32 exactly (one past GRID_MAX_SIZE), and (2^32 − 1)^3.
    let grids = [[u32::MAX, u32::MAX, 1], [1 << 16, 1 << 16, 1], [u32::MAX; 3]];
    for (slot, grid) in STATUSES.iter().zip(grids) {
        let code = dispatch_once(&client, &store, slot, |packet| {
            packet.setup = 3;
            [packet.grid_size_x, packet.grid_size_y, packet.grid_size_z] = grid;
        });
        assert_eq!(code, status::ERROR_INCOMPATIBLE_ARGUMENTS, "grid {grid:?}");
    }
}

/// A host global the agent was never given, which a forged completion signal points at.
static CANARY: AtomicI64 = AtomicI64::new(0x5EED_CAFE);

/// One `store_value` work-item writing `value` at `address` (inside a signal's `amd_signal_t`)
/// on `queue`, with `completion` as its completion signal; the packet has the barrier bit, so
/// the queue runs such packets in order.
fn store_word(
    client: &Client,
    queue: &Queue,
    store: &KernelSymbol,
    address: u64,
    value: u32,
    completion: hsa_signal_t,
) {
    let kernarg = client.kernargs(&kernargs_store_value(address as *mut u32, value, 1));
    let id = queue.reserve_spinning();
    queue.publish(id, &dispatch_packet(store, 1, 1, kernarg, completion), dispatch_header(true), 1);
    queue.ring(id);
}

#[test]
fn a_kernel_that_rewrites_its_completion_signal_cannot_make_the_runtime_write_host_memory() {
    let client = Client::new();
    let store = client.kernel(machine_code_fixture(), "store_value.kd");
    let queue = client.queue(16);
    let forged = client.signal(1);
    let amd = forged.handle;
    let canary = CANARY.as_ptr() as u64;
    // The signal's kind becomes DOORBELL (−1) and its value the canary's address, word by word,
    // as a kernel can write any signal's memory; the last of the four packets completes on it.
    let none = hsa_signal_t { handle: 0 };
    let kind = SignalKind::DOORBELL as u64;
    store_word(&client, &queue, &store, amd, kind as u32, none);
    store_word(&client, &queue, &store, amd + 4, (kind >> 32) as u32, none);
    store_word(&client, &queue, &store, amd + 8, canary as u32, none);
    store_word(&client, &queue, &store, amd + 12, (canary >> 32) as u32, forged);
    // The processor decrements the signal's value, which the kernel made the canary's address.
    let expected = canary as i64 - 1;
    let deadline = Instant::now() + Duration::from_secs(10);
    while client.load(forged) != expected && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(client.load(forged), expected, "the completion decremented the signal's own value");
    assert_eq!(CANARY.load(Ordering::SeqCst), 0x5EED_CAFE, "host memory the agent was not given is untouched");
    // SAFETY: the queue is this test's and is not used after.
    unsafe { client.hsa.queue_destroy(queue.raw) }.expect("the queue is destroyed");
    // The slot, destroyed and created again, is a USER signal whatever the kernel wrote.
    client.hsa.signal_destroy(forged).expect("destroyed");
    a_new_queue_runs_a_dispatch(&client);
}

/// Kernargs of `spin_until(flag, done)` and `spin_adding(flag, counter)`: two pointers.
fn two_pointers(first: *const u32, second: *const u32) -> Vec<u8> {
    [first as u64, second as u64].iter().flat_map(|pointer| pointer.to_le_bytes()).collect()
}

/// Starts `kernel` (`spin_until` or `spin_adding`) over `workgroups` workgroups of 64
/// work-items (two wave32 waves each) on a new queue; it spins until `flag` is set. Returns the
/// queue, the dispatch's completion signal and its second argument's buffer.
fn start_spinning(
    client: &Client,
    kernel: &str,
    workgroups: u32,
    flag: &'static mut [u32],
    slot: &'static AtomicU32,
) -> (Queue, hsa_signal_t, &'static mut [u32]) {
    let spin = client.kernel(HOSTILE_KERNELS, &format!("{kernel}.kd"));
    let queue = client.queue_with_callback(16, (slot as *const AtomicU32).cast_mut().cast());
    let second = client.alloc_u32(64 * workgroups as usize);
    let done = client.signal(1);
    let kernarg = client.kernargs(&two_pointers(flag.as_ptr(), second.as_ptr()));
    let id = queue.reserve_spinning();
    queue.publish(id, &dispatch_packet(&spin, 64 * workgroups, 64, kernarg, done), dispatch_header(true), 1);
    queue.ring(id);
    // Long enough that every workgroup the runtime starts at once is running.
    std::thread::sleep(Duration::from_millis(50));
    (queue, done, second)
}

/// A valid dispatch on another new queue, timed: how long it took, or a panic past 30 s.
fn timed_dispatch_elsewhere(client: &Client) -> Duration {
    let started = Instant::now();
    a_new_queue_runs_a_dispatch(client);
    started.elapsed()
}

/// A dispatch of 256 workgroups of `store_value`'s machine code on a new queue, timed: what the
/// pool's threads share when another queue spins.
fn timed_wide_dispatch(client: &Client, store: &KernelSymbol) -> Duration {
    let queue = client.queue(16);
    let out = client.alloc_u32(64);
    let done = client.signal(1);
    let kernarg = client.kernargs(&kernargs_store_value(out.as_mut_ptr(), 9, 64));
    let started = Instant::now();
    let id = queue.reserve_spinning();
    queue.publish(id, &dispatch_packet(store, 64 * 256, 64, kernarg, done), dispatch_header(true), 1);
    queue.ring(id);
    assert_eq!(client.wait_eq(done, 0, 30_000), 0, "a wide dispatch on a new queue completes");
    let took = started.elapsed();
    // Without implicit kernargs the kernel reads a workgroup size of 0, so every workgroup
    // stores the first 64 words.
    assert_eq!(out[63], 72);
    // SAFETY: the queue is this function's and is not used after.
    unsafe { client.hsa.queue_destroy(queue.raw) }.expect("the queue is destroyed");
    took
}

#[test]
fn a_spinning_kernel_leaves_other_queues_running_and_stops_at_its_queues_destruction() {
    let client = Client::new();
    let store = client.kernel(machine_code_fixture(), "store_value.kd");
    // Each twice, so that the times alone leave out the first run's compile and loads.
    timed_dispatch_elsewhere(&client);
    timed_wide_dispatch(&client, &store);
    let alone = timed_dispatch_elsewhere(&client);
    let wide_alone = timed_wide_dispatch(&client, &store);
    static STATUSES: [AtomicU32; 6] = [const { AtomicU32::new(0) }; 6];
    let mut statuses = STATUSES.iter();
    for kernel in ["spin_until", "spin_adding"] {
        for workgroups in [1, 8, 64] {
            let flag = client.alloc_u32(1);
            let slot = statuses.next().expect("a slot per case");
            let (queue, done, second) = start_spinning(&client, kernel, workgroups, flag, slot);
            // Another queue's dispatch completes while this one spins.
            let beside = timed_dispatch_elsewhere(&client);
            let wide_beside = timed_wide_dispatch(&client, &store);
            // Destruction stops the spinning waves and returns.
            let started = Instant::now();
            // SAFETY: the queue is this test's and is not used after.
            unsafe { client.hsa.queue_destroy(queue.raw) }.expect("the spinning queue is destroyed");
            let destroyed = started.elapsed();
            eprintln!(
                "{kernel} × {workgroups}: another queue's dispatch {beside:?} (alone {alone:?}), 256 workgroups \
                 {wide_beside:?} (alone {wide_alone:?}), destroy {destroyed:?}"
            );
            assert!(destroyed < Duration::from_secs(10), "{kernel} × {workgroups}: destroy took {destroyed:?}");
            assert_eq!(client.load(done), 1, "an abandoned dispatch does not complete");
            assert_eq!(slot.load(Ordering::SeqCst), 0, "teardown is not an error the client hears of");
            if kernel == "spin_until" {
                assert!(second.iter().all(|&word| word == 0), "no work-item got past the spin");
            } else {
                assert!(second[0] > 0, "the spin ran its atomics");
            }
        }
    }
    a_new_queue_runs_a_dispatch(&client);
}

#[test]
fn a_spinning_kernel_released_by_the_host_completes() {
    // The control for the test above: the same spin ends when its flag is set, so the queue's
    // destruction, not the kernel, is what stopped it there.
    let client = Client::new();
    static STATUS: AtomicU32 = AtomicU32::new(0);
    let flag = client.alloc_u32(1);
    let flag_word = flag.as_mut_ptr();
    let (queue, done, marks) = start_spinning(&client, "spin_until", 8, flag, &STATUS);
    // SAFETY: the flag is a live allocation the kernel polls with volatile loads.
    unsafe { AtomicU32::from_ptr(flag_word) }.store(1, Ordering::SeqCst);
    assert_eq!(client.wait_eq(done, 0, 30_000), 0, "the released dispatch completes");
    let marked: Vec<usize> = marks.iter().enumerate().filter(|&(_, &word)| word != 1).map(|(index, _)| index).collect();
    assert!(
        marked.is_empty(),
        "every work-item got past the spin: {} did not, {:?}",
        marked.len(),
        &marked[..marked.len().min(40)]
    );
    assert_eq!(STATUS.load(Ordering::SeqCst), 0);
    // SAFETY: the queue is this test's and is not used after.
    unsafe { client.hsa.queue_destroy(queue.raw) }.expect("the queue is destroyed");
}

/// A packet change: what it is, the change, and the status it should end in (0: it runs).
type PacketCase = (&'static str, fn(&mut KernelDispatchPacket), u32);

#[test]
fn each_packet_limit_holds_at_its_value_and_fails_one_past_it() {
    let client = Client::new();
    let store = client.kernel(machine_code_fixture(), "store_value.kd");
    static STATUSES: [AtomicU32; 6] = [const { AtomicU32::new(0) }; 6];
    let cases: [PacketCase; 6] = [
        ("group segment 64 KiB", |packet| packet.group_segment_size = GROUP_BYTES, 0),
        (
            "group segment 64 KiB + 1",
            |packet| packet.group_segment_size = GROUP_BYTES + 1,
            status::ERROR_INVALID_ALLOCATION,
        ),
        ("workgroup 1,024 × 1", |packet| packet.workgroup_size_x = 1024, 0),
        ("workgroup 1,025 × 1", |packet| packet.workgroup_size_x = 1025, status::ERROR_INVALID_ARGUMENT),
        (
            "workgroup 64 × 16 × 1",
            |packet| {
                packet.setup = 2;
                [packet.workgroup_size_x, packet.workgroup_size_y] = [64, 16];
                packet.grid_size_y = 16;
            },
            0,
        ),
        (
            "workgroup 64 × 17 × 1 (1,088 in all)",
            |packet| {
                packet.setup = 2;
                [packet.workgroup_size_x, packet.workgroup_size_y] = [64, 17];
                packet.grid_size_y = 17;
            },
            status::ERROR_INVALID_ARGUMENT,
        ),
    ];
    for (slot, (what, change, expected)) in STATUSES.iter().zip(cases) {
        assert_eq!(dispatch_once(&client, &store, slot, change), expected, "{what}");
    }
}

#[test]
fn forged_packet_fields_are_refused_before_anything_runs() {
    let client = Client::new();
    // SAFETY: the handler keeps no state.
    unsafe { client.hsa.register_system_event_handler(Some(take_fault), core::ptr::null_mut()) }.expect("handler");
    let store = client.kernel(machine_code_fixture(), "store_value.kd");
    static STATUSES: [AtomicU32; 4] = [const { AtomicU32::new(0) }; 4];
    let cases: [PacketCase; 4] = [
        (
            "a completion signal that is no signal",
            |packet| packet.completion_signal = 0xDEAD_0000,
            status::ERROR_INVALID_SIGNAL,
        ),
        ("a kernel object inside no descriptor", |packet| packet.kernel_object += 8, status::ERROR_INVALID_CODE_OBJECT),
        (
            "a kernarg segment far from any mapping",
            |packet| packet.kernarg_address = 0xDEAD_0000_0000,
            status::ERROR_MEMORY_FAULT,
        ),
        ("a null kernarg segment", |packet| packet.kernarg_address = 0, status::ERROR_MEMORY_FAULT),
    ];
    for (slot, (what, change, expected)) in STATUSES.iter().zip(cases) {
        assert_eq!(dispatch_once(&client, &store, slot, change), expected, "{what}");
    }
}

#[test]
fn wild_and_null_pointers_fault_through_every_memory_instruction_class() {
    let client = Client::new();
    // SAFETY: the handler keeps no state.
    unsafe { client.hsa.register_system_event_handler(Some(take_fault), core::ptr::null_mut()) }.expect("handler");
    let touch = client.kernel(HOSTILE_KERNELS, "touch.kd");
    let out = client.alloc_u32(1);
    for (class, name) in MEMORY_CLASSES.iter().enumerate() {
        for (what, pointer) in [("a wild", 0xDEAD_0000_0000), ("a null", 0)] {
            let kernarg = touch_kernargs(&client, pointer, class, out);
            touch_faults(&client, &touch, kernarg, &format!("{what} pointer through a {name}"));
        }
    }
    assert_eq!(CANARY.load(Ordering::SeqCst), 0x5EED_CAFE);
    a_new_queue_runs_a_dispatch(&client);
}

/// Dispatches `kernel` of the hostile fixture over `items` work-items in workgroups of
/// `workgroup`, with `kernargs`, on a new queue; waits for it to complete (30 s) and returns how
/// long it took.
fn run_hostile(client: &Client, kernel: &str, items: u32, workgroup: u16, kernargs: &[u8]) -> Duration {
    let symbol = client.kernel(HOSTILE_KERNELS, &format!("{kernel}.kd"));
    static STATUS: AtomicU32 = AtomicU32::new(0);
    let queue = client.queue_with_callback(16, (&STATUS as *const AtomicU32).cast_mut().cast());
    let done = client.signal(1);
    let kernarg = client.kernargs(kernargs);
    let started = Instant::now();
    let id = queue.reserve_spinning();
    queue.publish(id, &dispatch_packet(&symbol, items, workgroup, kernarg, done), dispatch_header(true), 1);
    queue.ring(id);
    assert_eq!(
        client.wait_eq(done, 0, 30_000),
        0,
        "{kernel} completes (queue status {:#x})",
        STATUS.load(Ordering::SeqCst)
    );
    let took = started.elapsed();
    // SAFETY: the queue is this function's and is not used after.
    unsafe { client.hsa.queue_destroy(queue.raw) }.expect("the queue is destroyed");
    took
}

/// Kernel arguments: a pointer, then 32-bit words.
fn pointer_and_words(pointer: *const u32, words: &[u32]) -> Vec<u8> {
    let mut bytes = (pointer as u64).to_le_bytes().to_vec();
    bytes.extend(words.iter().flat_map(|word| word.to_le_bytes()));
    bytes.resize(bytes.len().next_multiple_of(8), 0);
    bytes
}

#[test]
fn workgroups_that_wait_for_every_other_all_arrive_beyond_the_pools_threads() {
    // A grid-wide barrier over more workgroups than the pool has threads (2 to 16 here): each
    // spins until all have arrived, which only saving workgroups between their rounds lets the
    // others begin. Before, it held the threads until the watchdog.
    let client = Client::new();
    for workgroups in [2u32, 64] {
        let arrived = client.alloc_u32(1);
        let done = client.alloc_u32(64 * workgroups as usize);
        let mut kernargs = pointer_and_words(arrived.as_ptr(), &[workgroups, 0]);
        kernargs.extend((done.as_ptr() as u64).to_le_bytes());
        run_hostile(&client, "wait_for_all", 64 * workgroups, 64, &kernargs);
        assert_eq!(arrived[0], workgroups, "every workgroup arrived once");
        assert!(done.iter().all(|&word| word == 1), "{workgroups} workgroups: every work-item got past the barrier");
    }
}

#[test]
fn waves_that_pass_different_numbers_of_barriers_and_divergent_ones_all_end() {
    // Four waves a workgroup: wave w passes w × 5 barriers, half of them from its odd lanes only.
    // A barrier releases once every wave that has not ended is at one, as on the hardware.
    let client = Client::new();
    let out = client.alloc_u32(128 * 8);
    run_hostile(&client, "uneven_barriers", 128 * 8, 128, &pointer_and_words(out.as_ptr(), &[5]));
    let expected: Vec<u32> = (0..128 * 8).map(|item| item % 128 / 32 * 5).collect();
    assert_eq!(&out[..], &expected[..]);
}

/// What `busy_work` stores for work-item `id` after `iterations` steps.
fn busy_work_result(id: u32, iterations: u32) -> u32 {
    (0..iterations).fold(id, |x, _| x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223))
}

/// A wide dispatch of `busy_work` (256 workgroups of 64), checked and timed.
fn timed_busy_work(client: &Client, iterations: u32) -> Duration {
    let out = client.alloc_u32(64 * 256);
    let took = run_hostile(client, "busy_work", 64 * 256, 64, &pointer_and_words(out.as_ptr(), &[iterations]));
    for id in [0, 1, 4095, 64 * 256 - 1] {
        assert_eq!(out[id as usize], busy_work_result(id, iterations), "work-item {id}");
    }
    took
}

/// The measurement behind docs/BENCHMARKS.md's "a dispatch beside a kernel that never ends":
/// a `busy_work` dispatch of 256 workgroups on a new queue, alone and while 64 workgroups of
/// `spin_until` spin on another, five times each (medians printed). Not a test of time: run it
/// with `cargo test --release -p aqueduct-soft-hsa --test hostile_packets -- --ignored --nocapture`
/// (`BUSY_ITERATIONS` sets the work per work-item, 200,000 by default).
#[test]
#[ignore = "a measurement: run by hand, on a machine with cores to share"]
fn measure_a_wide_dispatch_beside_a_kernel_that_never_ends() {
    let client = Client::new();
    let iterations = std::env::var("BUSY_ITERATIONS").ok().and_then(|text| text.parse().ok()).unwrap_or(200_000);
    timed_busy_work(&client, iterations);
    let median = |mut times: Vec<Duration>| {
        times.sort();
        times[times.len() / 2]
    };
    let alone = median((0..5).map(|_| timed_busy_work(&client, iterations)).collect());
    static STATUS: AtomicU32 = AtomicU32::new(0);
    let flag = client.alloc_u32(1);
    let (queue, _, _) = start_spinning(&client, "spin_until", 64, flag, &STATUS);
    let beside = median((0..5).map(|_| timed_busy_work(&client, iterations)).collect());
    // SAFETY: the queue is this test's and is not used after.
    unsafe { client.hsa.queue_destroy(queue.raw) }.expect("the spinning queue is destroyed");
    println!(
        "busy_work × 256 workgroups, {iterations} steps, {} threads: alone {alone:?}, beside 64 spinning workgroups \
         {beside:?}: {:.2}x",
        rayon::current_num_threads(),
        beside.as_secs_f64() / alone.as_secs_f64()
    );
}

/// Dispatches `kernel` of `code_object` over 64 work-items on a new queue; returns the status its
/// queue's error callback got (within 30 s), after checking that the dispatch did not complete,
/// that a host global beside it is untouched and that a valid dispatch on a new queue completes.
fn failing_dispatch(client: &Client, code_object: &[u8], kernel: &str, slot: &'static AtomicU32) -> (u32, String) {
    static CANARY: AtomicU32 = AtomicU32::new(0x5EED_CAFE);
    let symbol = client.kernel(code_object, &format!("{kernel}.kd"));
    let queue = client.queue_with_callback(16, (slot as *const AtomicU32).cast_mut().cast());
    let out = client.alloc_u32(64);
    let done = client.signal(1);
    let kernarg = client.kernargs(&pointer_and_words(out.as_ptr(), &[]));
    let id = queue.reserve_spinning();
    queue.publish(id, &dispatch_packet(&symbol, 64, 64, kernarg, done), dispatch_header(true), 1);
    queue.ring(id);
    let deadline = Instant::now() + Duration::from_secs(30);
    while slot.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let code = slot.load(Ordering::SeqCst);
    let (recorded, detail) = soft::queue_error_detail(queue.raw).expect("queue").expect("an error is recorded");
    assert_eq!(recorded, code, "the callback and the record agree: {detail}");
    assert_eq!(client.load(done), 1, "a failed dispatch does not complete");
    assert_eq!(CANARY.load(Ordering::SeqCst), 0x5EED_CAFE, "the host global is untouched");
    // SAFETY: the queue is this function's and is not used after.
    unsafe { client.hsa.queue_destroy(queue.raw) }.expect("the queue is destroyed");
    a_new_queue_runs_a_dispatch(client);
    (code, detail)
}

#[test]
fn a_trap_and_an_invalid_encoding_end_as_queue_errors_naming_the_kernel_and_the_pc() {
    let client = Client::new();
    static STATUSES: [AtomicU32; 2] = [const { AtomicU32::new(0) }; 2];
    // `s_trap 2`: ROCr's trap handler ends the queue with an exception.
    let (code, detail) = failing_dispatch(&client, HOSTILE_KERNELS, "trap", &STATUSES[0]);
    assert_eq!(code, status::ERROR_EXCEPTION, "{detail}");
    assert!(detail.contains("`trap.kd`") && detail.contains("pc 0x"), "{detail}");
    // The same kernel with its `s_trap 2` (0xBF900002, the fixture's only one) replaced by a word
    // no gfx1100 instruction has (0xBFFF0000: LLVM 19's disassembler calls it an invalid
    // instruction encoding): an illegal instruction.
    let mut bytes = HOSTILE_KERNELS.to_vec();
    let at = bytes.windows(4).position(|word| word == 0xBF90_0002u32.to_le_bytes()).expect("the s_trap");
    bytes[at..at + 4].copy_from_slice(&0xBFFF_0000u32.to_le_bytes());
    let corrupt: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    let (code, detail) = failing_dispatch(&client, corrupt, "trap", &STATUSES[1]);
    assert_eq!(code, status::ERROR_ILLEGAL_INSTRUCTION, "{detail}");
    assert!(detail.contains("`trap.kd`"), "{detail}");
}
