//! Bad input to the soft runtime returns the status the HSA specification gives, and changes
//! nothing.

mod common;

use aqueduct_hsa::sys::*;
use common::*;

#[test]
fn null_and_stale_handles_are_rejected() {
    let client = Client::new();
    let api = client.hsa.api();
    let bogus_agent = hsa_agent_t { handle: 0xDEAD_BEEF };
    let mut value = 0u32;
    // SAFETY (block): every call below is given a valid out-pointer and a bad handle.
    unsafe {
        assert_eq!(
            (api.hsa_agent_get_info)(bogus_agent, agent_info::WAVEFRONT_SIZE, (&mut value as *mut u32).cast()),
            status::ERROR_INVALID_AGENT
        );
        assert_eq!(
            (api.hsa_agent_get_info)(
                hsa_agent_t { handle: 0 },
                agent_info::WAVEFRONT_SIZE,
                (&mut value as *mut u32).cast()
            ),
            status::ERROR_INVALID_AGENT
        );
        assert_eq!((api.hsa_signal_destroy)(hsa_signal_t { handle: 0 }), status::ERROR_INVALID_SIGNAL);
        assert_eq!((api.hsa_signal_destroy)(hsa_signal_t { handle: 0x1234_5678 }), status::ERROR_INVALID_SIGNAL);
        let signal = client.signal(7);
        assert_eq!((api.hsa_signal_destroy)(signal), status::SUCCESS);
        assert_eq!((api.hsa_signal_destroy)(signal), status::ERROR_INVALID_SIGNAL, "stale signal");
        assert_eq!((api.hsa_signal_load_scacquire)(signal), 0, "stale signals read as 0");
        assert_eq!((api.hsa_queue_destroy)(core::ptr::null_mut()), status::ERROR_INVALID_QUEUE);
        assert_eq!((api.hsa_queue_destroy)(0x4000 as *mut _), status::ERROR_INVALID_QUEUE);
        assert_eq!((api.hsa_amd_memory_pool_free)(0x4000 as *mut _), status::ERROR_INVALID_ARGUMENT);
        let mut pointer = core::ptr::null_mut();
        assert_eq!(
            (api.hsa_amd_memory_pool_allocate)(hsa_amd_memory_pool_t { handle: 1 }, 64, 0, &mut pointer),
            status::ERROR_INVALID_MEMORY_POOL
        );
        assert!(pointer.is_null(), "nothing was written on failure");
        assert_eq!(
            (api.hsa_executable_freeze)(hsa_executable_t { handle: 5 }, core::ptr::null()),
            status::ERROR_INVALID_EXECUTABLE
        );
        assert_eq!(
            (api.hsa_code_object_reader_destroy)(hsa_code_object_reader_t { handle: 5 }),
            status::ERROR_INVALID_CODE_OBJECT_READER
        );
        let mut kernel_object = 0u64;
        assert_eq!(
            (api.hsa_executable_symbol_get_info)(
                hsa_executable_symbol_t { handle: 9 },
                symbol_info::KERNEL_OBJECT,
                (&mut kernel_object as *mut u64).cast()
            ),
            status::ERROR_INVALID_EXECUTABLE_SYMBOL
        );
        let mut time = hsa_amd_profiling_dispatch_time_t::default();
        assert_eq!(
            (api.hsa_amd_profiling_get_dispatch_time)(client.agent, hsa_signal_t { handle: 3 }, &mut time),
            status::ERROR_INVALID_SIGNAL
        );
    }
}

#[test]
fn unsupported_attributes_are_rejected() {
    let client = Client::new();
    let api = client.hsa.api();
    let mut buffer = [0u8; 64];
    // SAFETY (block): a 64-byte buffer is large enough for any attribute.
    unsafe {
        assert_eq!(
            (api.hsa_agent_get_info)(client.agent, 0x7777, buffer.as_mut_ptr().cast()),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!((api.hsa_system_get_info)(0x7777, buffer.as_mut_ptr().cast()), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(
            (api.hsa_amd_memory_pool_get_info)(client.device_pool, 0x7777, buffer.as_mut_ptr().cast()),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            (api.hsa_agent_get_info)(client.agent, agent_info::NAME, core::ptr::null_mut()),
            status::ERROR_INVALID_ARGUMENT
        );
    }
    assert_eq!(buffer, [0u8; 64], "a refused query writes nothing");
}

#[test]
fn bad_queue_sizes_are_rejected() {
    let client = Client::new();
    let max = client.hsa.agent_u32(client.agent, agent_info::QUEUE_MAX_SIZE).expect("max");
    let min = client.hsa.agent_u32(client.agent, agent_info::QUEUE_MIN_SIZE).expect("min");
    for size in [0, 3, 100, min / 2, max * 2, u32::MAX] {
        // SAFETY: no callback, so the null data pointer is never used.
        let error =
            unsafe { client.hsa.queue_create(client.agent, size, None, core::ptr::null_mut()) }.expect_err("bad size");
        assert_eq!(error.status, status::ERROR_INVALID_ARGUMENT, "size {size}");
        assert!(error.message.contains("INVALID_ARGUMENT"), "the status string is carried: {}", error.message);
    }
    let mut queue = core::ptr::null_mut();
    // SAFETY: valid out-pointer; the queue type is the only bad argument.
    let result = unsafe {
        (client.hsa.api().hsa_queue_create)(
            client.agent,
            64,
            7,
            None,
            core::ptr::null_mut(),
            u32::MAX,
            u32::MAX,
            &mut queue,
        )
    };
    assert_eq!(result, status::ERROR_INVALID_QUEUE_CREATION);
    assert!(queue.is_null());
}

#[test]
fn bad_allocations_are_rejected_without_consuming_the_pool() {
    let client = Client::new();
    let pools = client.hsa.pools(client.agent).expect("pools");
    let device = pools.iter().find(|pool| pool.pool == client.device_pool).expect("device pool");
    let error = client.hsa.allocate(client.device_pool, 0).expect_err("zero bytes");
    assert_eq!(error.status, status::ERROR_INVALID_ARGUMENT);
    let error = client.hsa.allocate(client.device_pool, device.size + 1).expect_err("larger than the pool");
    assert_eq!(error.status, status::ERROR_INVALID_ALLOCATION);
    let pointer = client.hsa.allocate(client.device_pool, 4096).expect("a sane allocation still works");
    // SAFETY: freed once, not used afterwards.
    unsafe { client.hsa.free(pointer).expect("free") };
    // SAFETY: double free is refused, not undefined.
    let error = unsafe { client.hsa.free(pointer) }.expect_err("double free");
    assert_eq!(error.status, status::ERROR_INVALID_ARGUMENT);
}

#[test]
fn not_initialized_calls_fail_cleanly() {
    // A reference taken and dropped here does not affect other tests, which hold their own.
    let client = Client::new();
    let mut text = core::ptr::null();
    // SAFETY: hsa_status_string works without init; unknown codes are refused.
    assert_eq!(unsafe { (client.hsa.api().hsa_status_string)(0x7777, &mut text) }, status::ERROR_INVALID_ARGUMENT);
    assert!(text.is_null());
}

#[test]
fn queue_priorities_and_cu_masks_follow_the_header_contract() {
    // `hsa_ext_amd.h`: a priority outside LOW..=HIGH is INVALID_ARGUMENT; a mask count that is
    // not a multiple of 32, or non-zero with a null mask, is INVALID_ARGUMENT on set; on get, so is
    // a count of 0 or a null mask; 0 bits on set restores every CU. ROCr's
    // `AqlQueue::SetCUMasking` trims bits past the agent's CU count.
    let client = Client::new();
    let api = client.hsa.api();
    let queue = client.queue(64);
    let compute_units = client.hsa.agent_u32(client.agent, agent_info::AMD_COMPUTE_UNIT_COUNT).expect("CUs");
    assert!(compute_units < 32, "the default soft agent has fewer CUs than one mask word");
    let every = (1u32 << compute_units) - 1;
    let mut read = [0u32; 2];
    // SAFETY (block): `queue.raw` is live; every pointer is valid for the count it is given.
    unsafe {
        assert_eq!((api.hsa_amd_queue_set_priority)(queue.raw, enums::QUEUE_PRIORITY_HIGH), status::SUCCESS);
        assert_eq!((api.hsa_amd_queue_set_priority)(queue.raw, 3), status::ERROR_INVALID_ARGUMENT);
        assert_eq!((api.hsa_amd_queue_set_priority)(0x4000 as *mut _, 0), status::ERROR_INVALID_QUEUE);
        assert_eq!((api.hsa_amd_queue_cu_get_mask)(queue.raw, 64, read.as_mut_ptr()), status::SUCCESS);
        assert_eq!(read, [every, 0], "a new queue has every CU");
        let mask = [0b101u32, u32::MAX];
        assert_eq!((api.hsa_amd_queue_cu_set_mask)(queue.raw, 16, mask.as_ptr()), status::ERROR_INVALID_ARGUMENT);
        assert_eq!((api.hsa_amd_queue_cu_set_mask)(queue.raw, 32, core::ptr::null()), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(
            (api.hsa_amd_queue_cu_set_mask)(0x4000 as *const _, 0, core::ptr::null()),
            status::ERROR_INVALID_QUEUE
        );
        assert_eq!((api.hsa_amd_queue_cu_set_mask)(queue.raw, 64, mask.as_ptr()), status::SUCCESS);
        assert_eq!((api.hsa_amd_queue_cu_get_mask)(queue.raw, 64, read.as_mut_ptr()), status::SUCCESS);
        assert_eq!(read, [0b101, 0], "bits past the agent's CUs are trimmed");
        assert_eq!((api.hsa_amd_queue_cu_get_mask)(queue.raw, 0, read.as_mut_ptr()), status::ERROR_INVALID_ARGUMENT);
        assert_eq!((api.hsa_amd_queue_cu_get_mask)(queue.raw, 33, read.as_mut_ptr()), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(
            (api.hsa_amd_queue_cu_get_mask)(queue.raw, 32, core::ptr::null_mut()),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!((api.hsa_amd_queue_cu_set_mask)(queue.raw, 0, core::ptr::null()), status::SUCCESS);
        assert_eq!((api.hsa_amd_queue_cu_get_mask)(queue.raw, 32, read.as_mut_ptr()), status::SUCCESS);
        assert_eq!(read[0], every, "0 bits restores every CU");
    }
}

/// A handle used while another thread destroys it may meet its slot reused (the CI failure of
/// `tests/c/hostile.c`: a stale add through a user signal whose slot had become a destroyed
/// queue's doorbell wrote through a freed pointer). A slot keeps its kind for life, so a user
/// signal's slot is never a doorbell's; and a stale store through a destroyed queue's doorbell
/// signal changes nothing.
#[test]
fn a_destroyed_signal_s_slot_never_becomes_a_doorbell_and_a_stale_doorbell_store_is_ignored() {
    let client = Client::new();
    let api = client.hsa.api();
    let destroyed: Vec<u64> = (0..64)
        .map(|value| {
            let signal = client.signal(value);
            // SAFETY: a signal this test created.
            assert_eq!(unsafe { (api.hsa_signal_destroy)(signal) }, status::SUCCESS);
            signal.handle
        })
        .collect();
    for _ in 0..8 {
        let queue = client.queue(64);
        // SAFETY: the queue is live until the destroy below.
        let doorbell = hsa_signal_t { handle: unsafe { (*queue.raw).doorbell_signal } };
        assert!(!destroyed.contains(&doorbell.handle), "a destroyed user signal's slot became a doorbell");
        // ROCr's `DoorbellSignal` loads and waits return 0 (core/inc/signal.h), live or not.
        // SAFETY: a live doorbell signal of the queue above.
        assert_eq!(unsafe { (api.hsa_signal_load_relaxed)(doorbell) }, 0, "a live doorbell reads as 0");
        // SAFETY: as above; a bounded wait, so a wrong model fails rather than hangs.
        let waited = unsafe { (api.hsa_signal_wait_scacquire)(doorbell, 0, 1, 1_000_000, 0) };
        assert_eq!(waited, 0, "a wait on a doorbell returns 0 at once");
        // SAFETY: the queue was created above and is destroyed once.
        assert_eq!(unsafe { (api.hsa_queue_destroy)(queue.raw) }, status::SUCCESS);
        // SAFETY: table calls on a handle the runtime validates; it names no live signal now.
        unsafe { (api.hsa_signal_store_screlease)(doorbell, 5) };
        // SAFETY: as above.
        assert_eq!(unsafe { (api.hsa_signal_load_scacquire)(doorbell) }, 0, "a stale doorbell reads as 0");
    }
}
