//! The remaining table entry points, used the standard HSA way: queue indices through the API,
//! the doorbell rung with `hsa_signal_store_screlease`, pool access queries and grants.

mod common;

use aqueduct_hsa::sys::*;
use common::*;

#[test]
fn queue_index_functions_and_an_api_rung_doorbell() {
    let client = Client::new();
    let api = client.hsa.api();
    let queue = client.queue(8);
    let done = client.signal(2);
    // SAFETY (block): table calls on a live queue; ids are reserved through the API itself.
    unsafe {
        assert_eq!((api.hsa_queue_load_write_index_relaxed)(queue.raw), 0);
        let first = (api.hsa_queue_add_write_index_relaxed)(queue.raw, 1);
        assert_eq!(first, 0);
        assert_eq!(
            (api.hsa_queue_cas_write_index_scacq_screl)(queue.raw, 5, 9),
            1,
            "a failed CAS reports the current index"
        );
        assert_eq!(
            (api.hsa_queue_cas_write_index_scacq_screl)(queue.raw, 1, 2),
            1,
            "a successful CAS reports the expected index"
        );
        assert_eq!((api.hsa_queue_load_write_index_relaxed)(queue.raw), 2);
        for id in [first, first + 1] {
            let (packet, header) = barrier_and(&[], done);
            queue.publish(id, &packet, header, 0);
        }
        // The standard HSA way to ring: a signal store on the queue's doorbell signal.
        (api.hsa_signal_store_screlease)(hsa_signal_t { handle: (*queue.raw).doorbell_signal }, 1);
    }
    assert_eq!(client.wait_eq(done, 0, 10_000), 0);
    // SAFETY: table call on a live queue.
    assert_eq!(unsafe { (api.hsa_queue_load_read_index_scacquire)(queue.raw) }, 2);
    // SAFETY: a pointer that is not a queue is refused, not dereferenced.
    assert_eq!(unsafe { (api.hsa_queue_load_read_index_scacquire)(0x1000 as *const _) }, 0);
}

#[test]
fn pool_access_queries_and_grants() {
    let client = Client::new();
    let api = client.hsa.api();
    let mut access = u32::MAX;
    // SAFETY (block): valid out-pointers and handles, except where a bad one is the point.
    unsafe {
        assert_eq!(
            (api.hsa_amd_agent_memory_pool_get_info)(
                client.agent,
                client.device_pool,
                0,
                (&mut access as *mut u32).cast()
            ),
            status::SUCCESS
        );
        assert_eq!(access, 1, "an agent's own device pool is allowed by default");
        assert_eq!(
            (api.hsa_amd_agent_memory_pool_get_info)(
                hsa_agent_t { handle: 3 },
                client.device_pool,
                0,
                (&mut access as *mut u32).cast()
            ),
            status::ERROR_INVALID_AGENT
        );
        assert_eq!(
            (api.hsa_amd_agent_memory_pool_get_info)(
                client.agent,
                client.device_pool,
                99,
                (&mut access as *mut u32).cast()
            ),
            status::ERROR_INVALID_ARGUMENT
        );
        let memory = client.hsa.allocate(client.device_pool, 4096).expect("allocation");
        let agents = [client.agent];
        assert_eq!(
            (api.hsa_amd_agents_allow_access)(1, agents.as_ptr(), core::ptr::null(), memory.cast()),
            status::SUCCESS
        );
        let stranger = [0u8; 16];
        assert_eq!(
            (api.hsa_amd_agents_allow_access)(1, agents.as_ptr(), core::ptr::null(), stranger.as_ptr().cast()),
            status::ERROR_INVALID_ARGUMENT,
            "not runtime memory"
        );
        let bogus = [hsa_agent_t { handle: 77 }];
        assert_eq!(
            (api.hsa_amd_agents_allow_access)(1, bogus.as_ptr(), core::ptr::null(), memory.cast()),
            status::ERROR_INVALID_AGENT
        );
        assert_eq!(
            (api.hsa_amd_agents_allow_access)(0, agents.as_ptr(), core::ptr::null(), memory.cast()),
            status::ERROR_INVALID_ARGUMENT
        );
        client.hsa.free(memory).expect("free");
    }
}

#[test]
fn system_and_agent_facts() {
    let client = Client::new();
    assert_eq!(client.hsa.timestamp_frequency().expect("frequency"), 1_000_000_000);
    let info = client.hsa.agent_info(client.agent).expect("agent info");
    assert_eq!(info.isa_names, ["amdgcn-amd-amdhsa--gfx1100"]);
    assert_eq!(info.wavefront_size, 32);
    assert!(info.uuid.starts_with("GPU-") && info.uuid.len() == 20, "{}", info.uuid);
    let mut before = 0u64;
    let mut after = 0u64;
    // SAFETY: TIMESTAMP is a u64 attribute.
    unsafe {
        assert_eq!(
            (client.hsa.api().hsa_system_get_info)(system_info::TIMESTAMP, (&mut before as *mut u64).cast()),
            status::SUCCESS
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert_eq!(
            (client.hsa.api().hsa_system_get_info)(system_info::TIMESTAMP, (&mut after as *mut u64).cast()),
            status::SUCCESS
        );
    }
    assert!(after >= before + 2_000_000, "timestamps advance in ns ticks: {before} → {after}");
}
