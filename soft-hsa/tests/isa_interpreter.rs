//! The soft runtime in `isa` mode (`KernelExecution::Isa`): kernels nobody wrote a host build
//! for (`fixtures/isa_kernels.c`, built by clang-19 and checked in) run from their gfx1100
//! machine code through the interpreter, and from their gfx1030 machine code on a gfx1030 agent
//! (the interpreter's gfx10.3 path); a gfx90a agent's through its gfx9 path; a gfx1200 agent's
//! through its gfx12 path; a gfx1010 agent's kernels, whose ISA (gfx10.1) the interpreter does
//! not run, are refused.

mod common;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use aqueduct_hsa::PoolKindInfo;
use aqueduct_hsa::sys::{amd_event, hsa_amd_event_t, status};
use aqueduct_soft_hsa::{KernelExecution, SoftAgentConfig, SoftConfig};
use common::{Client, TEST_KERNELS_GFX90A, dispatch_header};

const ISA_KERNELS_GFX1100: &[u8] = include_bytes!("fixtures/isa_kernels_gfx1100.hsaco");
const ISA_KERNELS_GFX1030: &[u8] = include_bytes!("fixtures/isa_kernels_gfx1030.hsaco");
const TEST_KERNELS_GFX1200: &[u8] = include_bytes!("fixtures/test_kernels_gfx1200.hsaco");
const TEST_KERNELS_GFX12_GENERIC: &[u8] = include_bytes!("fixtures/test_kernels_gfx12-generic.hsaco");
const TEST_KERNELS_GFX1010: &[u8] = include_bytes!("fixtures/test_kernels_gfx1010.hsaco");

/// The client of the first GPU agent, gfx1100, which most tests use. The runtime also has a
/// gfx1030 agent (index 1), a gfx90a one (index 2), a gfx1200 one (index 3) and a gfx1010 one
/// (index 4): [`client_on`].
fn client() -> Client {
    Client::configured(SoftConfig {
        kernel_execution: KernelExecution::Isa,
        agents: vec![
            SoftAgentConfig::gfx1100(),
            SoftAgentConfig::with_isa("amdgcn-amd-amdhsa--gfx1030", 32),
            SoftAgentConfig::with_isa("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", 64),
            SoftAgentConfig::with_isa("amdgcn-amd-amdhsa--gfx1200", 32),
            SoftAgentConfig::with_isa("amdgcn-amd-amdhsa--gfx1010", 32),
        ],
        ..SoftConfig::default()
    })
}

/// A client of the same runtime on GPU agent `index`.
fn client_on(index: usize) -> Client {
    let Client { hsa, kernarg_pool, .. } = client();
    let agent = hsa.gpu_agents().expect("agents")[index].agent;
    let pools = hsa.pools(agent).expect("pools");
    let device_pool = pools.iter().find(|pool| pool.kind == PoolKindInfo::CoarseGrained).expect("device pool").pool;
    Client { hsa, agent, device_pool, kernarg_pool }
}

fn words(values: &[u64], small: &[u32]) -> Vec<u8> {
    let mut bytes: Vec<u8> = values.iter().flat_map(|value| value.to_le_bytes()).collect();
    bytes.extend(small.iter().flat_map(|value| value.to_le_bytes()));
    bytes
}

/// Runs one 1-D dispatch of `symbol` of the gfx1100 kernels; returns `None` once it completed,
/// or the queue's error status and detail once the queue failed.
fn run(client: &Client, symbol: &str, grid: u32, workgroup: u16, kernargs: &[u8]) -> Option<(u32, String)> {
    run_from(client, ISA_KERNELS_GFX1100, symbol, grid, workgroup, kernargs)
}

/// [`run`] for `symbol` of `code_object`.
fn run_from(
    client: &Client,
    code_object: &[u8],
    symbol: &str,
    grid: u32,
    workgroup: u16,
    kernargs: &[u8],
) -> Option<(u32, String)> {
    dispatch_on(client, &client.queue(64), code_object, symbol, grid, workgroup, kernargs)
}

/// [`run_from`] on `queue`, which may have run dispatches before (and must not have failed).
fn dispatch_on(
    client: &Client,
    queue: &common::Queue,
    code_object: &[u8],
    symbol: &str,
    grid: u32,
    workgroup: u16,
    kernargs: &[u8],
) -> Option<(u32, String)> {
    let kernel = client.kernel(code_object, symbol);
    let done = client.signal(1);
    let kernarg = client.kernargs(kernargs);
    let id = queue.reserve_spinning();
    queue.publish(id, &common::dispatch_packet(&kernel, grid, workgroup, kernarg, done), dispatch_header(true), 1);
    queue.ring(id);
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if client.load(done) == 0 {
            return None;
        }
        if let Some(error) = aqueduct_soft_hsa::queue_error_detail(queue.raw).expect("queue") {
            return Some(error);
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    panic!("{symbol}: neither completed nor failed in 30 s");
}

/// The Rust reference of `reverse_through_lds` for one work-item's input.
fn fold(value: u32, rounds: u32) -> u32 {
    let mut folded = value;
    for round in 0..rounds {
        if (value.wrapping_add(round)) & 1 == 1 {
            folded = folded.wrapping_add(value.wrapping_mul(round));
        } else {
            folded ^= round << 3;
        }
    }
    folded
}

#[test]
fn a_kernel_with_a_loop_a_branch_lds_and_a_barrier_runs_without_a_host_build() {
    reverse_through_lds(&client(), ISA_KERNELS_GFX1100);
}

#[test]
fn a_gfx1030_agent_runs_its_kernels_through_the_gfx10_3_path() {
    let client = client_on(1);
    reverse_through_lds(&client, ISA_KERNELS_GFX1030);
    // Its instruction with no interpreter support still fails naming it, as gfx10 code.
    let (out, a) = (client.alloc_u32(32), client.alloc_u32(32));
    let kernargs = words(&[out.as_mut_ptr() as u64, a.as_ptr() as u64], &[]);
    let (status, detail) =
        run_from(&client, ISA_KERNELS_GFX1030, "debugger_halt.kd", 32, 32, &kernargs).expect("the dispatch fails");
    assert_eq!(status, status::ERROR_ILLEGAL_INSTRUCTION, "{detail}");
    assert!(detail.contains("`s_sethalt`"), "{detail}");
}

#[test]
fn a_gfx90a_agent_runs_its_kernels_through_the_gfx9_path() {
    let client = client_on(2);
    let out = client.alloc_u32(4);
    let kernargs = common::kernargs_store_value(out.as_mut_ptr(), 7, 4);
    let failure = run_from(&client, TEST_KERNELS_GFX90A, "store_value.kd", 4, 4, &kernargs);
    assert_eq!(failure, None);
    // `store_value` writes value + i (`fixtures/test_kernels.c`).
    assert_eq!(&out[..], [7, 8, 9, 10]);
}

#[test]
fn a_gfx1200_agent_runs_its_kernels_through_the_gfx12_path() {
    let client = client_on(3);
    let out = client.alloc_u32(4);
    let kernargs = common::kernargs_store_value(out.as_mut_ptr(), 7, 4);
    let failure = run_from(&client, TEST_KERNELS_GFX1200, "store_value.kd", 4, 4, &kernargs);
    assert_eq!(failure, None);
    // `store_value` writes value + i (`fixtures/test_kernels.c`).
    assert_eq!(&out[..], [7, 8, 9, 10]);
}

/// gfx12-generic code (code object v6) loads on the gfx1200 agent (the loader's selection: gfx1200's
/// generic family) and runs through the same gfx12 path.
#[test]
fn a_gfx1200_agent_runs_gfx12_generic_code() {
    let client = client_on(3);
    let out = client.alloc_u32(4);
    let kernargs = common::kernargs_store_value(out.as_mut_ptr(), 40, 4);
    let failure = run_from(&client, TEST_KERNELS_GFX12_GENERIC, "store_value.kd", 4, 4, &kernargs);
    assert_eq!(failure, None);
    assert_eq!(&out[..], [40, 41, 42, 43]);
}

#[test]
fn an_agent_whose_isa_the_interpreter_does_not_run_is_refused() {
    let client = client_on(4);
    let out = client.alloc_u32(4);
    let kernargs = common::kernargs_store_value(out.as_mut_ptr(), 7, 4);
    let (status, detail) =
        run_from(&client, TEST_KERNELS_GFX1010, "store_value.kd", 4, 4, &kernargs).expect("the dispatch fails");
    assert_eq!(status, status::ERROR_INVALID_ISA, "{detail}");
    assert!(detail.contains("gfx1010"), "{detail}");
    assert!(out.iter().all(|&word| word == 0), "nothing ran");
}

/// `reverse_through_lds` of `code_object` on `client`'s agent, checked against [`fold`].
fn reverse_through_lds(client: &Client, code_object: &[u8]) {
    // 200 items: three full workgroups of 64 and a partial one of 8, whose missing work-items
    // contribute 0 to the tile.
    let count = 200u32;
    let rounds = 7;
    let input = client.alloc_u32(count as usize);
    for (index, value) in input.iter_mut().enumerate() {
        *value = (index as u32).wrapping_mul(2_654_435_761) >> 7;
    }
    let out = client.alloc_u32(count as usize + 16);
    out.fill(0xDEAD_BEEF);
    let kernargs = words(&[out.as_mut_ptr() as u64, input.as_ptr() as u64], &[count, rounds]);
    assert_eq!(run_from(client, code_object, "reverse_through_lds.kd", count, 64, &kernargs), None);
    for (i, &got) in out[..count as usize].iter().enumerate() {
        let (group, local) = (i / 64, i % 64);
        let mirrored = group * 64 + 63 - local;
        let expected = if mirrored < count as usize { fold(input[mirrored], rounds) } else { fold(0, rounds) };
        assert_eq!(got, expected, "item {i}");
    }
    assert!(out[count as usize..].iter().all(|&word| word == 0xDEAD_BEEF), "nothing past the grid is written");
}

#[test]
fn global_atomics_from_every_lane_hand_out_distinct_tickets() {
    let client = client();
    let count = 1000u32;
    let counter = client.alloc_u32(1);
    let tickets = client.alloc_u32(count as usize);
    // The explicit arguments, then the hidden ones the kernel reads (code object v5:
    // hidden_block_count_{x,y,z} at 24, hidden_group_size_{x,y,z} at 36), as a HIP runtime
    // would fill them.
    let mut kernargs = words(&[counter.as_mut_ptr() as u64, tickets.as_mut_ptr() as u64], &[count, 0]);
    kernargs.extend([count.div_ceil(128), 1, 1].iter().flat_map(|value: &u32| value.to_le_bytes()));
    kernargs.extend([128u16, 1, 1].iter().flat_map(|value| value.to_le_bytes()));
    kernargs.resize(280, 0);
    assert_eq!(run(&client, "atomic_tickets.kd", count, 128, &kernargs), None);
    assert_eq!(counter[0], count);
    let mut seen = tickets.to_vec();
    seen.sort_unstable();
    assert_eq!(seen, (0..count).collect::<Vec<_>>(), "each ticket once");
}

static EVENTS: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

/// Whether the system event handler has seen `event`, waiting up to 5 s: the processor records
/// the queue's error before it calls the handlers, so a test that saw the error may look first.
fn saw_event(event: (u64, u64)) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !EVENTS.lock().unwrap().contains(&event) {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    true
}

unsafe extern "C" fn record_event(event: *const hsa_amd_event_t, _data: *mut core::ffi::c_void) -> u32 {
    // SAFETY: the runtime passes a valid event for the duration of the call.
    let event = unsafe { &*event };
    assert_eq!(event.event_type, amd_event::GPU_MEMORY_FAULT_EVENT);
    EVENTS.lock().unwrap().push((event.memory_fault.agent.handle, event.memory_fault.virtual_address));
    status::SUCCESS
}

#[test]
fn a_store_outside_every_allocation_is_a_memory_fault_event_naming_the_kernel() {
    let client = client();
    // The fault goes to a system event handler, as on ROCr (without one, ROCr aborts).
    // SAFETY: the handler keeps no state but a static, valid for the process.
    unsafe { client.hsa.register_system_event_handler(Some(record_event), core::ptr::null_mut()) }.expect("handler");
    let out = client.alloc_u32(4);
    // 1 GiB past a 16-byte allocation: nothing is mapped there.
    let index = 1u32 << 28;
    let kernargs = words(&[out.as_mut_ptr() as u64], &[index, 5]);
    let (_, detail) = run(&client, "store_at.kd", 32, 32, &kernargs).expect("the store faults");
    assert!(detail.contains("`store_at.kd`") && detail.contains("memory fault at pc"), "{detail}");
    let address = out.as_ptr() as u64 + u64::from(index) * 4;
    assert!(saw_event((client.agent.handle, address)), "the handler saw {address:#x}");
    // In range, the same kernel stores.
    let kernargs = words(&[out.as_mut_ptr() as u64], &[3, 5]);
    assert_eq!(run(&client, "store_at.kd", 32, 32, &kernargs), None);
    assert_eq!(out[3], 5);
}

/// A thread remembers the ranges it found granted across dispatches (`isa_exec::GRANTED`), so
/// a free must end that: the queue's thread that ran the first store runs the second.
#[test]
fn an_allocation_freed_between_two_dispatches_of_one_queue_faults_the_second() {
    let client = client();
    // SAFETY: the handler keeps no state but a static, valid for the process.
    unsafe { client.hsa.register_system_event_handler(Some(record_event), core::ptr::null_mut()) }.expect("handler");
    let queue = client.queue(64);
    // 1 MiB: the host maps it alone and unmaps it at the free, so the second dispatch's
    // kernarg allocation cannot land at its address.
    let out = client.alloc_u32(1 << 18);
    let address = out.as_mut_ptr() as u64;
    assert_eq!(
        dispatch_on(&client, &queue, ISA_KERNELS_GFX1100, "store_at.kd", 32, 32, &words(&[address], &[3, 5])),
        None
    );
    assert_eq!(out[3], 5);
    // SAFETY: no dispatch runs (the last completed) and `out` is not touched again.
    unsafe { client.hsa.free(address as *mut u8) }.expect("free");
    let kernargs = words(&[address], &[7, 6]);
    let (_, detail) =
        dispatch_on(&client, &queue, ISA_KERNELS_GFX1100, "store_at.kd", 32, 32, &kernargs).expect("faults");
    assert!(detail.contains("memory fault at pc"), "{detail}");
    assert!(saw_event((client.agent.handle, address + 28)), "the handler saw the freed address");
}

#[test]
fn locked_host_memory_is_reached_through_its_agent_address_as_on_a_discrete_gpu() {
    use aqueduct_soft_hsa::exports as hsa;
    let client = client();
    // SAFETY: the handler keeps no state but a static, valid for the process.
    unsafe { client.hsa.register_system_event_handler(Some(record_event), core::ptr::null_mut()) }.expect("handler");
    // Plain host memory, 4 bytes into its allocation so the page offset is not 0.
    let mut host = [0u32; 9];
    let host_ptr = host[1..].as_mut_ptr();
    let mut agent_ptr = core::ptr::null_mut::<core::ffi::c_void>();
    let mut agents = [client.agent];
    // SAFETY: `host` outlives its lock; an agent list of one and a pointer to fill.
    let locked = unsafe { hsa::hsa_amd_memory_lock(host_ptr.cast(), 32, agents.as_mut_ptr(), 1, &mut agent_ptr) };
    assert_eq!(locked, status::SUCCESS);
    let agent = agent_ptr as u64;
    assert_ne!(agent, host_ptr as u64, "an agent address of its own, as the thunk gives on a discrete GPU");
    assert_eq!(agent % 4096, host_ptr as u64 % 4096, "the page offset kept");

    // A store through the agent address lands in the host memory. The same queue stores again
    // after the unlock below: its thread remembers the range, and the unlock must end that.
    let queue = client.queue(64);
    let store = |kernargs: &[u8]| dispatch_on(&client, &queue, ISA_KERNELS_GFX1100, "store_at.kd", 32, 32, kernargs);
    assert_eq!(store(&words(&[agent], &[3, 5])), None);
    assert_eq!(host[1 + 3], 5);
    // Atomics too: every lane takes a ticket from a counter in the locked memory.
    let count = 256u32;
    let tickets = client.alloc_u32(count as usize);
    let mut kernargs = words(&[agent, tickets.as_mut_ptr() as u64], &[count, 0]);
    kernargs.extend([count.div_ceil(128), 1, 1].iter().flat_map(|value: &u32| value.to_le_bytes()));
    kernargs.extend([128u16, 1, 1].iter().flat_map(|value| value.to_le_bytes()));
    kernargs.resize(280, 0);
    assert_eq!(run(&client, "atomic_tickets.kd", count, 128, &kernargs), None);
    assert_eq!(host[1], count, "the counter, in host memory");
    let mut seen = tickets.to_vec();
    seen.sort_unstable();
    assert_eq!(seen, (0..count).collect::<Vec<_>>());

    // The host address is not the agent's: a store through it faults, as on a discrete GPU.
    let (_, detail) = run(&client, "store_at.kd", 32, 32, &words(&[host_ptr as u64], &[2, 9])).expect("faults");
    assert!(detail.contains("memory fault at pc"), "{detail}");
    assert!(saw_event((client.agent.handle, host_ptr as u64 + 8)), "the handler saw the host address");
    assert_eq!(host[1 + 2], 0);

    // SAFETY: the pointer locked above.
    assert_eq!(unsafe { hsa::hsa_amd_memory_unlock(host_ptr.cast()) }, status::SUCCESS);
    let (_, detail) = store(&words(&[agent], &[3, 6])).expect("unlocked: faults");
    assert!(detail.contains("memory fault at pc"), "{detail}");
    assert_eq!(host[1 + 3], 5, "unlocked memory is out of the agent's reach");
}

#[test]
fn packed_half_math_runs_from_machine_code() {
    let client = client();
    let (out, a, b) = (client.alloc_u32(32), client.alloc_u32(32), client.alloc_u32(32));
    let half = |value: f32| half::f16::from_f32(value).to_bits() as u32;
    for lane in 0..32 {
        a[lane] = half(lane as f32 * 0.5) | half(-(lane as f32)) << 16;
        b[lane] = half(0.25) | half(lane as f32 * 3.0) << 16;
    }
    out.fill(0xDEAD_BEEF);
    let kernargs = words(&[out.as_mut_ptr() as u64, a.as_ptr() as u64, b.as_ptr() as u64], &[]);
    assert_eq!(run(&client, "packed_half_add.kd", 32, 32, &kernargs), None);
    for (lane, &got) in out.iter().enumerate() {
        // Every value here is exact in f16, so the sum is too.
        let expected = half(lane as f32 * 0.5 + 0.25) | half(lane as f32 * 2.0) << 16;
        assert_eq!(got, expected, "lane {lane}");
    }
}

#[test]
fn an_instruction_the_interpreter_does_not_execute_fails_the_queue_naming_it() {
    let client = client();
    let (out, a) = (client.alloc_u32(32), client.alloc_u32(32));
    out.fill(0xDEAD_BEEF);
    let kernargs = words(&[out.as_mut_ptr() as u64, a.as_ptr() as u64], &[]);
    let (status, detail) = run(&client, "debugger_halt.kd", 32, 32, &kernargs).expect("the dispatch fails");
    assert_eq!(status, status::ERROR_ILLEGAL_INSTRUCTION, "{detail}");
    for part in ["`debugger_halt.kd`", "`s_sethalt`", "not supported by the interpreter"] {
        assert!(detail.contains(part), "`{part}` missing from: {detail}");
    }
    assert!(out.iter().all(|&word| word == 0xDEAD_BEEF), "nothing was stored");
}
