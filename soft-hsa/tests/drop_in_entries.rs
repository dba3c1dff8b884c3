//! The drop-in's entry points beyond the engine's table (`soft/drop_in.rs`), each through its
//! guarded export, with ROCr's statuses (`hsa.cpp` of rocm-5.2.3).

mod common;

use core::ffi::c_void;

use aqueduct_hsa::sys::{
    hsa_agent_t, hsa_code_object_reader_t, hsa_executable_symbol_t, hsa_signal_t, hsa_signal_value_t, status,
};
use aqueduct_soft_hsa::exports as hsa;
use common::*;

#[test]
fn hsa_memory_free_copy_assign_register_and_deregister() {
    let client = Client::new();
    let a = client.hsa.allocate(client.device_pool, 64).expect("allocation");
    let b = client.hsa.allocate(client.device_pool, 64).expect("allocation");
    // SAFETY (every call): live allocations of 64 bytes; the rest are checked arguments.
    unsafe {
        core::ptr::write_bytes(a, 0x5A, 64);
        assert_eq!(hsa::hsa_memory_copy(b.cast(), a.cast::<c_void>(), 64), status::SUCCESS);
        assert_eq!(core::slice::from_raw_parts(b, 64), &[0x5A; 64]);
        assert_eq!(hsa::hsa_memory_copy(b.cast(), core::ptr::null(), 64), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(hsa::hsa_memory_copy(core::ptr::null_mut(), a.cast::<c_void>(), 0), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(hsa::hsa_memory_copy(b.cast(), a.cast::<c_void>(), 0), status::SUCCESS);

        assert_eq!(hsa::hsa_memory_assign_agent(a.cast(), client.agent, 3), status::SUCCESS);
        assert_eq!(hsa::hsa_memory_assign_agent(a.cast(), client.agent, 0), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(
            hsa::hsa_memory_assign_agent(core::ptr::null_mut(), client.agent, 1),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(hsa::hsa_memory_assign_agent(a.cast(), hsa_agent_t { handle: 7 }, 1), status::ERROR_INVALID_AGENT);

        assert_eq!(hsa::hsa_memory_register(a.cast(), 64), status::SUCCESS);
        assert_eq!(hsa::hsa_memory_register(a.cast(), 0), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(hsa::hsa_memory_register(core::ptr::null_mut(), 0), status::SUCCESS);
        assert_eq!(hsa::hsa_memory_deregister(a.cast(), 64), status::SUCCESS);

        assert_eq!(hsa::hsa_memory_free(a.cast()), status::SUCCESS);
        assert_ne!(hsa::hsa_memory_free(a.cast()), status::SUCCESS, "a second free is refused");
        assert_eq!(hsa::hsa_memory_free(core::ptr::null_mut()), status::SUCCESS, "freeing null is success");
        assert_eq!(hsa::hsa_memory_free(b.cast()), status::SUCCESS);
    }
}

#[test]
fn the_signal_value_pointer_is_where_the_value_lives() {
    let client = Client::new();
    let signal = client.signal(3);
    let mut value: *mut hsa_signal_value_t = core::ptr::null_mut();
    // SAFETY: a live signal and a pointer to fill.
    unsafe {
        assert_eq!(hsa::hsa_amd_signal_value_pointer(signal, &mut value), status::SUCCESS);
        assert_eq!(value.read_volatile(), 3);
        hsa::hsa_signal_store_screlease(signal, 11);
        assert_eq!(value.read_volatile(), 11);
        assert_eq!(hsa::hsa_amd_signal_value_pointer(signal, core::ptr::null_mut()), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(
            hsa::hsa_amd_signal_value_pointer(hsa_signal_t { handle: 0x10 }, &mut value),
            status::ERROR_INVALID_SIGNAL
        );
    }
}

#[test]
fn the_deprecated_symbol_lookup_and_a_reader_from_a_file() {
    let client = Client::new();
    let executable = client.hsa.load_executable(client.agent, TEST_KERNELS_GFX1100).expect("loads");
    let (mut by_name, mut deprecated) = (hsa_executable_symbol_t::default(), hsa_executable_symbol_t::default());
    // SAFETY: a live executable, C strings, pointers to fill.
    unsafe {
        assert_eq!(
            hsa::hsa_executable_get_symbol_by_name(executable, c"store_value.kd".as_ptr(), &client.agent, &mut by_name),
            status::SUCCESS
        );
        let status = hsa::hsa_executable_get_symbol(
            executable,
            c"".as_ptr(),
            c"store_value.kd".as_ptr(),
            client.agent,
            0,
            &mut deprecated,
        );
        assert_eq!(status, status::SUCCESS);
        let kernel_object = |symbol| {
            let mut object = 0u64;
            let status = hsa::hsa_executable_symbol_get_info(
                symbol,
                aqueduct_hsa::sys::symbol_info::KERNEL_OBJECT,
                (&mut object as *mut u64).cast(),
            );
            assert_eq!(status, status::SUCCESS);
            object
        };
        assert_eq!(kernel_object(deprecated), kernel_object(by_name), "the same kernel");
    }

    use std::io::Write;
    use std::os::fd::AsRawFd;
    let path = std::env::temp_dir().join(format!("aqueduct-reader-{}.hsaco", std::process::id()));
    std::fs::File::create(&path).unwrap().write_all(TEST_KERNELS_GFX1100).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let empty_path = path.with_extension("empty");
    std::fs::File::create(&empty_path).unwrap();
    let empty = std::fs::File::open(&empty_path).unwrap();
    let mut reader = hsa_code_object_reader_t::default();
    // SAFETY: open descriptors (or -1), a reader to fill.
    unsafe {
        assert_eq!(hsa::hsa_code_object_reader_create_from_file(file.as_raw_fd(), &mut reader), status::SUCCESS);
        assert_ne!(reader.handle, 0);
        assert_eq!(hsa::hsa_code_object_reader_destroy(reader), status::SUCCESS);
        assert_eq!(hsa::hsa_code_object_reader_create_from_file(-1, &mut reader), status::ERROR_INVALID_FILE);
        assert_eq!(
            hsa::hsa_code_object_reader_create_from_file(empty.as_raw_fd(), &mut reader),
            status::ERROR_INVALID_FILE
        );
    }
    drop((file, empty));
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_file(empty_path);
}

#[test]
fn memory_fill_and_an_async_copy_behind_its_dependencies() {
    let client = Client::new();
    let a = client.hsa.allocate(client.device_pool, 256).expect("allocation");
    let b = client.hsa.allocate(client.device_pool, 256).expect("allocation");
    // SAFETY (every call): live allocations of 256 bytes, live signals.
    unsafe {
        assert_eq!(hsa::hsa_amd_memory_fill(a.cast(), 0xAABB_CCDD, 64), status::SUCCESS);
        let words = core::slice::from_raw_parts(a.cast::<u32>(), 64);
        assert!(words.iter().all(|&word| word == 0xAABB_CCDD));
        assert_eq!(hsa::hsa_amd_memory_fill(a.add(1).cast(), 0, 1), status::ERROR_INVALID_ARGUMENT, "misaligned");
        assert_eq!(hsa::hsa_amd_memory_fill(core::ptr::null_mut(), 0, 1), status::ERROR_INVALID_ARGUMENT);
        assert_eq!(hsa::hsa_amd_memory_fill(a.cast(), 0, 0), status::SUCCESS);

        let gate = client.signal(1);
        let done = client.signal(1);
        let status = hsa::hsa_amd_memory_async_copy(
            b.cast(),
            client.agent,
            a.cast::<c_void>(),
            client.agent,
            256,
            1,
            &gate,
            done,
        );
        assert_eq!(status, status::SUCCESS);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(client.load(done), 1, "the copy waits for its dependency");
        assert_eq!(core::slice::from_raw_parts(b, 4), &[0, 0, 0, 0]);
        hsa::hsa_signal_store_screlease(gate, 0);
        let value = hsa::hsa_signal_wait_scacquire(
            done,
            aqueduct_hsa::sys::enums::SIGNAL_CONDITION_EQ,
            0,
            u64::MAX,
            aqueduct_hsa::sys::enums::WAIT_STATE_BLOCKED,
        );
        assert_eq!(value, 0, "the completion signal is decremented once the copy is done");
        assert_eq!(core::slice::from_raw_parts(b.cast::<u32>(), 64), words);

        let stale = hsa_signal_t { handle: 0x10 };
        assert_eq!(
            hsa::hsa_amd_memory_async_copy(
                b.cast(),
                client.agent,
                a.cast::<c_void>(),
                client.agent,
                4,
                0,
                core::ptr::null(),
                stale
            ),
            status::ERROR_INVALID_SIGNAL
        );
        assert_eq!(
            hsa::hsa_amd_memory_async_copy(
                b.cast(),
                client.agent,
                a.cast::<c_void>(),
                client.agent,
                4,
                1,
                core::ptr::null(),
                done
            ),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            hsa::hsa_amd_memory_async_copy(
                b.cast(),
                hsa_agent_t { handle: 7 },
                a.cast::<c_void>(),
                client.agent,
                4,
                0,
                core::ptr::null(),
                done
            ),
            status::ERROR_INVALID_AGENT
        );
    }
}

#[test]
fn an_inactivated_queue_processes_nothing_more_and_is_still_destroyed() {
    let client = Client::new();
    let store = client.kernel(TEST_KERNELS_GFX1100, "store_value.kd");
    let queue = client.queue_with_callback(16, core::ptr::null_mut());
    // SAFETY: a live queue, then a pointer that names none.
    unsafe {
        assert_eq!(hsa::hsa_queue_inactivate(queue.raw), status::SUCCESS);
        assert_eq!(hsa::hsa_queue_inactivate(0x40 as *mut _), status::ERROR_INVALID_QUEUE);
    }
    let out = client.alloc_u32(1);
    let done = client.signal(1);
    let kernarg = client.kernargs(&kernargs_store_value(out.as_mut_ptr(), 7, 1));
    let id = queue.reserve_spinning();
    queue.publish(id, &dispatch_packet(&store, 1, 1, kernarg, done), dispatch_header(true), 1);
    queue.ring(id);
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!((client.load(done), out[0]), (1, 0), "nothing ran");
    // SAFETY: a live queue, destroyed once.
    assert_eq!(unsafe { hsa::hsa_queue_destroy(queue.raw) }, status::SUCCESS);
}

#[test]
fn a_signal_group_waits_for_any_member() {
    use aqueduct_hsa::sys::{enums, hsa_signal_group_t};
    let client = Client::new();
    let (first, second) = (client.signal(1), client.signal(1));
    let members = [first, second];
    let mut group = hsa_signal_group_t::default();
    // SAFETY (every call): live signals and agents, pointers to fill.
    unsafe {
        assert_eq!(hsa::hsa_signal_group_create(2, members.as_ptr(), 1, &client.agent, &mut group), status::SUCCESS);
        let setter = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(10));
            hsa::hsa_signal_store_screlease(second, 0);
        });
        let conditions = [enums::SIGNAL_CONDITION_EQ; 2];
        let values = [0i64; 2];
        let (mut met, mut value) = (hsa_signal_t::default(), -1);
        for wait in [hsa::hsa_signal_group_wait_any_scacquire, hsa::hsa_signal_group_wait_any_relaxed] {
            let status =
                wait(group, conditions.as_ptr(), values.as_ptr(), enums::WAIT_STATE_BLOCKED, &mut met, &mut value);
            assert_eq!(status, status::SUCCESS);
            assert_eq!((met, value), (second, 0), "the member that met its condition");
        }
        setter.join().unwrap();
        assert_eq!(hsa::hsa_signal_group_destroy(group), status::SUCCESS);
        assert_eq!(hsa::hsa_signal_group_destroy(group), status::ERROR_INVALID_SIGNAL_GROUP);
        let mut met_again = hsa_signal_t::default();
        let waited = hsa::hsa_signal_group_wait_any_scacquire(
            group,
            conditions.as_ptr(),
            values.as_ptr(),
            enums::WAIT_STATE_BLOCKED,
            &mut met_again,
            &mut value,
        );
        assert_eq!(waited, status::ERROR_INVALID_SIGNAL_GROUP);
        assert_eq!(
            hsa::hsa_signal_group_create(0, members.as_ptr(), 0, core::ptr::null(), &mut group),
            status::ERROR_INVALID_ARGUMENT
        );
        let dead = [hsa_signal_t { handle: 0x10 }];
        assert_eq!(
            hsa::hsa_signal_group_create(1, dead.as_ptr(), 0, core::ptr::null(), &mut group),
            status::ERROR_INVALID_SIGNAL
        );
    }
}

static FREED: std::sync::Mutex<Vec<(usize, usize)>> = std::sync::Mutex::new(Vec::new());

unsafe extern "C" fn note_free(ptr: *mut c_void, data: *mut c_void) {
    FREED.lock().unwrap().push((ptr as usize, data as usize));
}

unsafe extern "C" fn other_callback(_: *mut c_void, _: *mut c_void) {}

#[test]
fn deallocation_callbacks_run_when_their_allocation_is_freed() {
    let client = Client::new();
    let kept = client.hsa.allocate(client.device_pool, 64).expect("allocation");
    let dropped = client.hsa.allocate(client.device_pool, 64).expect("allocation");
    // SAFETY (every call): live allocations, a callback that only records its arguments.
    unsafe {
        assert_eq!(
            hsa::hsa_amd_register_deallocation_callback(kept.cast(), Some(note_free), 7 as *mut _),
            status::SUCCESS
        );
        assert_eq!(
            hsa::hsa_amd_register_deallocation_callback(dropped.cast(), Some(note_free), 8 as *mut _),
            status::SUCCESS
        );
        assert_eq!(hsa::hsa_amd_deregister_deallocation_callback(dropped.cast(), Some(note_free)), status::SUCCESS);
        assert_eq!(
            hsa::hsa_amd_deregister_deallocation_callback(dropped.cast(), Some(other_callback)),
            status::ERROR_INVALID_ARGUMENT,
            "never registered"
        );
        // A pointer inside an allocation is accepted (ROCr's RegisterReleaseNotifier), and the
        // callback gets that pointer; deregistering needs that same pointer.
        assert_eq!(
            hsa::hsa_amd_register_deallocation_callback(kept.add(8).cast(), Some(note_free), 9 as *mut _),
            status::SUCCESS,
            "inside an allocation"
        );
        assert_eq!(
            hsa::hsa_amd_deregister_deallocation_callback(kept.add(16).cast(), Some(note_free)),
            status::ERROR_INVALID_ARGUMENT,
            "registered at another pointer"
        );
        let outside = [0u8; 16];
        assert_eq!(
            hsa::hsa_amd_register_deallocation_callback(
                outside.as_ptr().cast_mut().cast(),
                Some(note_free),
                core::ptr::null_mut()
            ),
            status::ERROR_INVALID_ALLOCATION,
            "in no allocation"
        );
        assert_eq!(
            hsa::hsa_amd_register_deallocation_callback(kept.cast(), None, core::ptr::null_mut()),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(hsa::hsa_amd_memory_pool_free(dropped.cast()), status::SUCCESS);
        assert_eq!(hsa::hsa_amd_memory_pool_free(kept.cast()), status::SUCCESS);
    }
    let freed = FREED.lock().unwrap();
    assert_eq!(
        freed.as_slice(),
        &[(kept as usize, 7), (kept as usize + 8, 9)],
        "the registrations left ran once each, in order, with their own pointers"
    );
}

unsafe extern "C" fn client_alloc(bytes: usize) -> *mut c_void {
    // SAFETY: malloc of a size; the test frees it.
    unsafe { libc::malloc(bytes) }
}

/// What the test's blank structure holds where the runtime must not write.
const UNTOUCHED: usize = 0xDEAD_0000;

#[test]
fn pointer_info_names_the_allocation_an_address_lies_in() {
    use aqueduct_hsa::sys::hsa_amd_pointer_info_t;
    let client = Client::new();
    let memory = client.hsa.allocate(client.device_pool, 100).expect("allocation");
    let blank = || hsa_amd_pointer_info_t {
        size: size_of::<hsa_amd_pointer_info_t>() as u32,
        type_: 99,
        agent_base_address: UNTOUCHED as *mut c_void,
        host_base_address: UNTOUCHED as *mut c_void,
        size_in_bytes: 1,
        user_data: UNTOUCHED as *mut c_void,
        agent_owner: hsa_agent_t { handle: 1 },
        global_flags: 99,
    };
    // SAFETY (every call): pointers to fill, a live allocation, the client's allocator.
    unsafe {
        assert_eq!(hsa::hsa_amd_pointer_info_set_userdata(memory.cast(), 42 as *mut c_void), status::SUCCESS);
        let mut info = blank();
        let (mut count, mut agents) = (0u32, core::ptr::null_mut::<hsa_agent_t>());
        let status =
            hsa::hsa_amd_pointer_info(memory.add(40).cast(), &mut info, Some(client_alloc), &mut count, &mut agents);
        assert_eq!(status, status::SUCCESS);
        assert_eq!((info.type_, info.agent_base_address), (1, memory.cast()), "an HSA allocation, from its base");
        assert!(info.size_in_bytes >= 100);
        assert_eq!((info.user_data as usize, info.agent_owner), (42, client.agent));
        assert_eq!(count, 1, "the owner alone may access it");
        assert_eq!(*agents, client.agent);
        libc::free(agents.cast());

        let outside = 0u64;
        let mut info = blank();
        let status = hsa::hsa_amd_pointer_info(
            (&outside as *const u64).cast(),
            &mut info,
            None,
            core::ptr::null_mut(),
            core::ptr::null_mut(),
        );
        assert_eq!((status, info.type_), (status::SUCCESS, 0), "memory the runtime did not make is UNKNOWN");

        let mut short = blank();
        short.size = 8;
        assert_eq!(
            hsa::hsa_amd_pointer_info(memory.cast(), &mut short, None, core::ptr::null_mut(), core::ptr::null_mut()),
            status::SUCCESS
        );
        assert_eq!(
            (short.type_, short.agent_base_address as usize),
            (1, UNTOUCHED),
            "only the first 8 bytes are written"
        );

        assert_eq!(
            hsa::hsa_amd_pointer_info(core::ptr::null(), &mut info, None, core::ptr::null_mut(), core::ptr::null_mut()),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            hsa::hsa_amd_pointer_info_set_userdata(memory.add(8).cast(), core::ptr::null_mut()),
            status::ERROR_INVALID_ARGUMENT
        );
    }
}
