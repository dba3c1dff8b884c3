//! The drop-in's agent, ISA, cache, wavefront and region queries (`soft/agent_details.rs`,
//! `soft/regions.rs`), each through its guarded export, with ROCr 5.2.3's answers.

mod common;

use core::ffi::c_void;

use aqueduct_hsa::sys::{
    agent_info, hsa_agent_t, hsa_cache_t, hsa_isa_t, hsa_region_t, hsa_status_t, hsa_wavefront_t, status,
};
use aqueduct_soft_hsa::exports as hsa;
use common::*;

unsafe extern "C" fn collect_cache(cache: hsa_cache_t, data: *mut c_void) -> hsa_status_t {
    // SAFETY: the test passes a Vec<hsa_cache_t>.
    unsafe { (*data.cast::<Vec<hsa_cache_t>>()).push(cache) };
    status::SUCCESS
}

unsafe extern "C" fn collect_region(region: hsa_region_t, data: *mut c_void) -> hsa_status_t {
    // SAFETY: the test passes a Vec<hsa_region_t>.
    unsafe { (*data.cast::<Vec<hsa_region_t>>()).push(region) };
    status::SUCCESS
}

unsafe extern "C" fn collect_wavefront(wavefront: hsa_wavefront_t, data: *mut c_void) -> hsa_status_t {
    // SAFETY: the test passes a Vec<hsa_wavefront_t>.
    unsafe { (*data.cast::<Vec<hsa_wavefront_t>>()).push(wavefront) };
    status::SUCCESS
}

unsafe extern "C" fn stop_at_first(_: hsa_cache_t, _: *mut c_void) -> hsa_status_t {
    status::INFO_BREAK
}

#[test]
fn caches_match_the_agents_cache_sizes() {
    let client = Client::new();
    let mut caches: Vec<hsa_cache_t> = Vec::new();
    let mut sizes = [0u32; 4];
    // SAFETY (every call): live agents, callbacks over the vectors above, values to fill.
    unsafe {
        assert_eq!(
            hsa::hsa_agent_get_info(client.agent, agent_info::CACHE_SIZE, sizes.as_mut_ptr().cast()),
            status::SUCCESS
        );
        assert_eq!(
            hsa::hsa_agent_iterate_caches(client.agent, Some(collect_cache), (&raw mut caches).cast()),
            status::SUCCESS
        );
        assert_eq!(caches.len(), sizes.iter().filter(|&&size| size != 0).count());
        for (level, cache) in caches.iter().enumerate() {
            let (mut length, mut found_level, mut size) = (0u32, 0u8, 0u32);
            assert_eq!(hsa::hsa_cache_get_info(*cache, 0, (&raw mut length).cast()), status::SUCCESS);
            let mut name = vec![0u8; length as usize];
            assert_eq!(hsa::hsa_cache_get_info(*cache, 1, name.as_mut_ptr().cast()), status::SUCCESS);
            assert_eq!(String::from_utf8(name).unwrap(), format!("L{}", level + 1));
            assert_eq!(hsa::hsa_cache_get_info(*cache, 2, (&raw mut found_level).cast()), status::SUCCESS);
            assert_eq!(usize::from(found_level), level + 1);
            assert_eq!(hsa::hsa_cache_get_info(*cache, 3, (&raw mut size).cast()), status::SUCCESS);
            assert_eq!(size, sizes[level]);
            assert_eq!(hsa::hsa_cache_get_info(*cache, 4, (&raw mut size).cast()), status::ERROR_INVALID_ARGUMENT);
        }
        assert_eq!(
            hsa::hsa_agent_iterate_caches(client.agent, Some(stop_at_first), core::ptr::null_mut()),
            status::INFO_BREAK
        );
        assert_eq!(
            hsa::hsa_agent_iterate_caches(client.agent, None, core::ptr::null_mut()),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            hsa::hsa_agent_iterate_caches(hsa_agent_t { handle: 7 }, Some(collect_cache), core::ptr::null_mut()),
            status::ERROR_INVALID_AGENT
        );
        let mut size = 0u32;
        assert_eq!(
            hsa::hsa_cache_get_info(hsa_cache_t { handle: 3 }, 3, (&raw mut size).cast()),
            status::ERROR_INVALID_CACHE
        );
    }
}

#[test]
fn isa_queries_answer_as_rocr_5_2_3() {
    let client = Client::new();
    let mut isa = hsa_isa_t::default();
    // SAFETY (every call): live agents, C strings, values to fill.
    unsafe {
        assert_eq!(hsa::hsa_agent_get_info(client.agent, agent_info::ISA, (&raw mut isa).cast()), status::SUCCESS);
        let mut length = 0u32;
        assert_eq!(hsa::hsa_isa_get_info_alt(isa, 0, (&raw mut length).cast()), status::SUCCESS);
        let mut name = vec![0u8; length as usize];
        assert_eq!(hsa::hsa_isa_get_info_alt(isa, 1, name.as_mut_ptr().cast()), status::SUCCESS);
        let mut found = hsa_isa_t::default();
        assert_eq!(hsa::hsa_isa_from_name(name.as_ptr().cast(), &mut found), status::SUCCESS);
        assert_eq!(found, isa);
        assert_eq!(
            hsa::hsa_isa_from_name(c"amdgcn-amd-amdhsa--gfx9999".as_ptr(), &mut found),
            status::ERROR_INVALID_ISA_NAME
        );
        assert_eq!(hsa::hsa_isa_from_name(core::ptr::null(), &mut found), status::ERROR_INVALID_ARGUMENT);

        let mut compatible = false;
        assert_eq!(hsa::hsa_isa_compatible(isa, isa, &mut compatible), status::SUCCESS);
        assert!(compatible);
        assert_eq!(hsa::hsa_isa_compatible(isa, hsa_isa_t { handle: 5 }, &mut compatible), status::ERROR_INVALID_ISA);

        let mut value = 0u32;
        assert_eq!(hsa::hsa_isa_get_info(isa, 2, 0, (&raw mut value).cast()), status::SUCCESS);
        assert_eq!(value, 1, "one call convention");
        assert_eq!(hsa::hsa_isa_get_info(isa, 3, 0, (&raw mut value).cast()), status::SUCCESS);
        assert_eq!(value, 64, "ROCr 5.2.3's wavefront size for every ISA");
        assert_eq!(hsa::hsa_isa_get_info(isa, 13, 0, (&raw mut value).cast()), status::SUCCESS);
        assert_eq!(value, 1024, "the rest as hsa_isa_get_info_alt");
        assert_eq!(hsa::hsa_isa_get_info(isa, 13, 1, (&raw mut value).cast()), status::ERROR_INVALID_INDEX);

        let mut mask = 9u16;
        assert_eq!(hsa::hsa_isa_get_exception_policies(isa, 0, &mut mask), status::SUCCESS);
        assert_eq!(mask, 0);
        assert_eq!(
            hsa::hsa_isa_get_exception_policies(isa, 2, &mut mask),
            status::ERROR_INVALID_ARGUMENT,
            "no profile 2"
        );
        mask = 9;
        assert_eq!(hsa::hsa_agent_get_exception_policies(client.agent, 1, &mut mask), status::SUCCESS);
        assert_eq!(mask, 0);
        assert_eq!(
            hsa::hsa_agent_get_exception_policies(hsa_agent_t { handle: 7 }, 1, &mut mask),
            status::ERROR_INVALID_AGENT
        );

        let mut method = 0u32;
        assert_eq!(hsa::hsa_isa_get_round_method(isa, 2, 1, &mut method), status::SUCCESS);
        assert_eq!(method, 1, "HSA_ROUND_METHOD_SINGLE");
        assert_eq!(
            hsa::hsa_isa_get_round_method(isa, 3, 1, &mut method),
            status::ERROR_INVALID_ARGUMENT,
            "no fp type 3"
        );
        assert_eq!(
            hsa::hsa_isa_get_round_method(isa, 2, 3, &mut method),
            status::ERROR_INVALID_ARGUMENT,
            "no flush mode 3"
        );

        let mut wavefronts: Vec<hsa_wavefront_t> = Vec::new();
        assert_eq!(
            hsa::hsa_isa_iterate_wavefronts(isa, Some(collect_wavefront), (&raw mut wavefronts).cast()),
            status::SUCCESS
        );
        assert_eq!(wavefronts.len(), 1);
        assert_eq!(hsa::hsa_wavefront_get_info(wavefronts[0], 0, (&raw mut value).cast()), status::SUCCESS);
        assert_eq!(value, 64);
        assert_eq!(
            hsa::hsa_wavefront_get_info(wavefronts[0], 1, (&raw mut value).cast()),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            hsa::hsa_wavefront_get_info(hsa_wavefront_t { handle: 1 }, 0, (&raw mut value).cast()),
            status::ERROR_INVALID_WAVEFRONT
        );
    }
}

#[test]
fn regions_are_the_pools_and_their_memory_is_every_agents() {
    let client = Client::new();
    let mut regions: Vec<hsa_region_t> = Vec::new();
    // SAFETY (every call): live agents, the callback over `regions`, values to fill.
    unsafe {
        assert_eq!(
            hsa::hsa_agent_iterate_regions(client.agent, Some(collect_region), (&raw mut regions).cast()),
            status::SUCCESS
        );
        assert_eq!(regions.len(), 3, "the GPU's pools");
        assert_eq!(regions[0].handle, client.device_pool.handle, "a region is its pool");
        let (mut flags, mut size, mut allowed, mut host) = (0u32, 0usize, false, true);
        assert_eq!(hsa::hsa_region_get_info(regions[0], 1, (&raw mut flags).cast()), status::SUCCESS);
        assert_eq!(flags, 4, "HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED");
        assert_eq!(hsa::hsa_region_get_info(regions[0], 2, (&raw mut size).cast()), status::SUCCESS);
        assert!(size > 0);
        assert_eq!(hsa::hsa_region_get_info(regions[0], 5, (&raw mut allowed).cast()), status::SUCCESS);
        assert!(allowed);
        assert_eq!(hsa::hsa_region_get_info(regions[0], 0xA000, (&raw mut host).cast()), status::SUCCESS);
        assert!(!host, "device memory is not host memory to ROCr");
        assert_eq!(hsa::hsa_region_get_info(regions[0], 99, (&raw mut size).cast()), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(
            hsa::hsa_region_get_info(hsa_region_t { handle: 9 }, 2, (&raw mut size).cast()),
            status::ERROR_INVALID_REGION
        );

        let mut pointer = core::ptr::null_mut::<c_void>();
        assert_eq!(hsa::hsa_memory_allocate(regions[0], 256, &mut pointer), status::SUCCESS);
        assert!(!pointer.is_null());
        let mut count = 0u32;
        let mut info: aqueduct_hsa::sys::hsa_amd_pointer_info_t = core::mem::zeroed();
        info.size = size_of_val(&info) as u32;
        let mut listed = core::ptr::null_mut::<hsa_agent_t>();
        let status = hsa::hsa_amd_pointer_info(pointer, &mut info, Some(malloc_for_test), &mut count, &mut listed);
        assert_eq!(status, status::SUCCESS);
        assert_eq!(count, 2, "region memory is every agent's (ROCr allocates it unrestricted)");
        libc::free(listed.cast());
        let status =
            hsa::hsa_amd_pointer_info(pointer, &mut info, Some(malloc_for_test), &mut count, core::ptr::null_mut());
        assert_eq!(status, status::SUCCESS, "no array pointer: no list, nothing allocated");
        assert_eq!(hsa::hsa_memory_free(pointer), status::SUCCESS);
        assert_eq!(hsa::hsa_memory_allocate(regions[0], 0, &mut pointer), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(hsa::hsa_memory_allocate(regions[2], 64, &mut pointer), status::ERROR_INVALID_ALLOCATION, "GROUP");
        assert_eq!(hsa::hsa_memory_allocate(regions[0], 64, core::ptr::null_mut()), status::ERROR_INVALID_ARGUMENT);
    }
}

unsafe extern "C" fn malloc_for_test(size: usize) -> *mut c_void {
    // SAFETY: malloc of a size; the test frees it.
    unsafe { libc::malloc(size) }
}

#[test]
fn a_soft_queue_is_a_ring_and_indices_the_client_processes() {
    let client = Client::new();
    let doorbell = client.signal(0);
    let region = hsa_region_t { handle: client.kernarg_pool.handle };
    let mut queue = core::ptr::null_mut::<aqueduct_hsa::sys::hsa_queue_t>();
    // SAFETY (every call): live handles and a queue pointer to fill; the queue is read only while
    // it lives.
    unsafe {
        assert_eq!(hsa::hsa_soft_queue_create(region, 64, 0, 1, doorbell, &mut queue), status::SUCCESS);
        assert!(!queue.is_null());
        let hsa_queue = &*queue;
        assert_eq!((hsa_queue.size, hsa_queue.doorbell_signal, hsa_queue.features), (64, doorbell.handle, 1));
        let ring = core::slice::from_raw_parts(hsa_queue.base_address as *const u16, 64 * 32);
        assert!((0..64).all(|packet| ring[packet * 32] == 1), "every header INVALID");
        assert_eq!(hsa::hsa_queue_add_write_index_relaxed(queue, 3), 0);
        assert_eq!(hsa::hsa_queue_load_write_index_scacquire(queue), 3);
        hsa::hsa_queue_store_read_index_screlease(queue, 2);
        assert_eq!(hsa::hsa_queue_load_read_index_scacquire(queue), 2, "the client moves the read index");
        assert_eq!(hsa::hsa_queue_destroy(queue), status::SUCCESS);
        assert_eq!(hsa::hsa_queue_destroy(queue), status::ERROR_INVALID_QUEUE);
        assert_eq!(hsa::hsa_queue_load_write_index_scacquire(queue), 0, "gone");

        assert_eq!(hsa::hsa_soft_queue_create(region, 48, 0, 1, doorbell, &mut queue), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(hsa::hsa_soft_queue_create(region, 64, 0, 0, doorbell, &mut queue), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(hsa::hsa_soft_queue_create(region, 64, 2, 1, doorbell, &mut queue), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(
            hsa::hsa_soft_queue_create(hsa_region_t { handle: 9 }, 64, 0, 1, doorbell, &mut queue),
            status::ERROR_INVALID_REGION
        );
        let dead = aqueduct_hsa::sys::hsa_signal_t { handle: 0x10 };
        assert_eq!(hsa::hsa_soft_queue_create(region, 64, 0, 1, dead, &mut queue), status::ERROR_INVALID_SIGNAL);
        assert_eq!(
            hsa::hsa_soft_queue_create(region, 64, 0, 1, doorbell, core::ptr::null_mut()),
            status::ERROR_INVALID_ARGUMENT
        );
    }
}
