//! ROCr's access rules as the soft runtime enforces them: pool memory is mapped for its owner
//! only until `hsa_amd_agents_allow_access`; a packet that makes an agent touch memory it may
//! not access raises HSA_AMD_GPU_MEMORY_FAULT_EVENT to the system event handlers, never the queue
//! callback; with no handler that returns success, the process aborts.

mod common;

use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::Duration;

use aqueduct_hsa::PoolKindInfo;
use aqueduct_hsa::sys::{agent_pool_info, amd_event, hsa_amd_event_t, status};
use aqueduct_soft_hsa as soft;
use common::*;

/// Every event the handler saw: (agent, address, reason).
static EVENTS: Mutex<Vec<(u64, u64, u32)>> = Mutex::new(Vec::new());

/// Whether the system event handler has seen `event`, waiting up to 5 s: the processor records
/// the queue's error before it calls the handlers, so a test that saw the error may look first.
fn saw_event(event: (u64, u64, u32)) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !EVENTS.lock().unwrap().contains(&event) {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

unsafe extern "C" fn record_event(event: *const hsa_amd_event_t, _data: *mut core::ffi::c_void) -> u32 {
    // SAFETY: the runtime passes a valid event for the duration of the call.
    let event = unsafe { &*event };
    assert_eq!(event.event_type, amd_event::GPU_MEMORY_FAULT_EVENT);
    let fault = event.memory_fault;
    EVENTS.lock().unwrap().push((fault.agent.handle, fault.virtual_address, fault.fault_reason_mask));
    status::SUCCESS
}

#[test]
fn pools_answer_access_as_rocr_does() {
    let client = Client::new();
    let cpu = client.hsa.cpu_agents().expect("cpu agents")[0].agent;
    let gpu = client.agent;
    let kernarg = client.hsa.host_pool(PoolKindInfo::Kernarg).expect("kernarg pool");
    let gpu_pools = client.hsa.pools(gpu).expect("gpu pools");
    let device = gpu_pools.iter().find(|pool| pool.kind == PoolKindInfo::CoarseGrained).expect("device pool");
    let group = gpu_pools.iter().find(|pool| pool.kind == PoolKindInfo::Group).expect("group pool");
    let reach = |agent, pool| client.hsa.pool_reach(agent, pool).expect("reach");
    // (agent, pool) -> access, from ROCr's `MemoryRegion::GetAccessInfo`.
    assert_eq!(reach(cpu, kernarg.pool).access, agent_pool_info::ACCESS_ALLOWED_BY_DEFAULT);
    assert_eq!(reach(gpu, kernarg.pool).access, agent_pool_info::ACCESS_DISALLOWED_BY_DEFAULT);
    assert_eq!(reach(gpu, device.pool).access, agent_pool_info::ACCESS_ALLOWED_BY_DEFAULT);
    assert_eq!(reach(cpu, device.pool).access, agent_pool_info::ACCESS_DISALLOWED_BY_DEFAULT);
    assert_eq!(reach(cpu, group.pool).access, agent_pool_info::ACCESS_NEVER_ALLOWED);
    assert!(!group.alloc_allowed && client.hsa.allocate(group.pool, 64).is_err(), "GROUP is never allocated from");
    // One PCIe hop from the GPU to host memory, none to its own.
    let host_link = reach(gpu, kernarg.pool);
    assert_eq!((host_link.hops, host_link.link.map(|link| link.link_type)), (1, Some(agent_pool_info::LINK_TYPE_PCIE)));
    assert_eq!((reach(gpu, device.pool).hops, reach(gpu, device.pool).link), (0, None));
}

#[test]
fn kernargs_the_gpu_was_not_granted_raise_a_memory_fault_event_not_a_queue_error() {
    let client = Client::new();
    // SAFETY: the handler keeps no state but a static, valid for the process.
    unsafe { client.hsa.register_system_event_handler(Some(record_event), core::ptr::null_mut()) }.expect("handler");
    let store = client.kernel(TEST_KERNELS_GFX1100, "store_value.kd");
    let out = client.alloc_u32(4);
    let bytes = kernargs_store_value(out.as_mut_ptr(), 7, 4);
    // Kernarg memory from the CPU agent's pool, never granted to the GPU.
    let ungranted = client.hsa.allocate(client.kernarg_pool, 64).expect("kernarg memory");
    // SAFETY: the fresh allocation holds 64 bytes.
    unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), ungranted, bytes.len()) };
    let queue = client.queue(64);
    let done = client.signal(1);
    LAST_QUEUE_ERROR.store(0, Ordering::SeqCst);
    let id = queue.reserve_spinning();
    queue.publish(id, &dispatch_packet(&store, 4, 4, ungranted as u64, done), dispatch_header(true), 1);
    queue.ring(id);
    let detail = loop {
        if let Some((_, detail)) = soft::queue_error_detail(queue.raw).expect("queue") {
            break detail;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    assert!(detail.contains("not mapped for this agent"), "{detail}");
    let seen = saw_event((client.agent.handle, ungranted as u64, amd_event::FAULT_PAGE_NOT_PRESENT));
    assert!(seen, "the handler saw the fault on this agent at the kernarg address");
    assert_eq!(LAST_QUEUE_ERROR.load(Ordering::SeqCst), 0, "ROCr does not call the queue callback for a memory fault");
    assert_eq!(out, &[0, 0, 0, 0], "the kernel never ran");

    // Granted, the same memory works.
    client.hsa.allow_access(&[client.agent], ungranted).expect("grant");
    let queue = client.queue(64);
    let done = client.signal(1);
    let id = queue.reserve_spinning();
    queue.publish(id, &dispatch_packet(&store, 4, 4, ungranted as u64, done), dispatch_header(true), 1);
    queue.ring(id);
    assert_eq!(client.wait_eq(done, 0, 10_000), 0);
    assert_eq!(out, &[7, 8, 9, 10]);
}

#[test]
fn a_host_build_given_a_pointer_outside_every_allocation_faults_as_a_gpu_does() {
    let client = Client::new();
    // SAFETY: the handler keeps no state but a static, valid for the process.
    unsafe { client.hsa.register_system_event_handler(Some(record_event), core::ptr::null_mut()) }.expect("handler");
    // `store_value`'s host build (registered by the client) writes through its `out` argument,
    // which the metadata names a global buffer. This memory is the process's, in no allocation.
    let mut outside = vec![0u32; 4].into_boxed_slice();
    let store = client.kernel(TEST_KERNELS_GFX1100, "store_value.kd");
    let kernarg = client.kernargs(&kernargs_store_value(outside.as_mut_ptr(), 7, 4));
    let queue = client.queue(64);
    let done = client.signal(1);
    LAST_QUEUE_ERROR.store(0, Ordering::SeqCst);
    let id = queue.reserve_spinning();
    queue.publish(id, &dispatch_packet(&store, 4, 4, kernarg, done), dispatch_header(true), 1);
    queue.ring(id);
    let detail = loop {
        if let Some((_, detail)) = soft::queue_error_detail(queue.raw).expect("queue") {
            break detail;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    assert!(detail.contains("pointer argument") && detail.contains("not mapped"), "{detail}");
    let address = outside.as_ptr() as u64;
    let seen = saw_event((client.agent.handle, address, amd_event::FAULT_PAGE_NOT_PRESENT));
    assert!(seen, "the handler saw the fault on this agent at the pointer's address");
    assert_eq!(LAST_QUEUE_ERROR.load(Ordering::SeqCst), 0, "ROCr does not call the queue callback for a memory fault");
    assert_eq!(&*outside, &[0, 0, 0, 0], "the host build never ran");
}

/// Runs test `name` alone in a child process with `variable` set, for what other tests running
/// concurrently in this process would disturb (process-wide counts, an abort).
fn run_child(name: &str, variable: &str) -> std::process::Output {
    std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", name, "--nocapture", "--test-threads", "1"])
        .env(variable, "1")
        .output()
        .expect("child runs")
}

#[test]
fn only_interrupt_signals_take_kfd_events() {
    const CHILD: &str = "AQUEDUCT_EVENTS_CHILD";
    if std::env::var_os(CHILD).is_none() {
        let output = run_child("only_interrupt_signals_take_kfd_events", CHILD);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success() && stdout.contains("1 passed"), "{stdout}");
        return;
    }
    let client = Client::new();
    let (before, overflowed) = soft::interrupt_events();
    let interrupt = client.hsa.signal_create(0).expect("signal");
    assert_eq!(soft::interrupt_events().0, before + 1, "an interrupt signal holds a KFD event");
    let gpu_only = client.hsa.signal_create_gpu_only(0).expect("signal");
    assert_eq!(soft::interrupt_events().0, before + 1, "a GPU-only signal holds none");
    client.hsa.signal_destroy(interrupt).expect("destroy");
    assert_eq!(soft::interrupt_events().0, before, "destroying gives the event back");
    // Past KFD's limit, signals are still created, without an event, and the overflow is counted.
    let room = soft::EVENT_LIMIT - before;
    let signals: Vec<_> =
        (0..room + 3).map(|_| client.hsa.signal_create(0).expect("created past the limit too")).collect();
    assert_eq!(soft::interrupt_events(), (soft::EVENT_LIMIT, overflowed + 3));
    for signal in signals.into_iter().chain([gpu_only]) {
        client.hsa.signal_destroy(signal).expect("destroy");
    }
    assert_eq!(soft::interrupt_events().0, before);
}

/// Run in a child process: with no handler, ROCr prints the fault and aborts.
#[test]
fn an_unhandled_memory_fault_aborts_the_process() {
    const CHILD: &str = "AQUEDUCT_MEMORY_FAULT_CHILD";
    if std::env::var_os(CHILD).is_some() {
        let client = Client::new();
        let queue = client.queue(64);
        let done = client.signal(1);
        let id = queue.reserve_spinning();
        soft::inject_fault(queue.raw, id, soft::Fault::MemoryFault { address: 0xdead_0000 }).expect("armed");
        let (packet, header) = barrier_and(&[], done);
        queue.publish(id, &packet, header, 0);
        queue.ring(id);
        std::thread::sleep(Duration::from_secs(5));
        return; // not reached: the runtime aborts
    }
    let output = run_child("an_unhandled_memory_fault_aborts_the_process", CHILD);
    let stderr = String::from_utf8_lossy(&output.stderr);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(output.status.signal(), Some(6), "SIGABRT; stderr: {stderr}");
    assert!(stderr.contains("Memory access fault by GPU agent") && stderr.contains("0xdead0000"), "{stderr}");
}
