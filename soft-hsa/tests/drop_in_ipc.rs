//! Two processes share an allocation and a signal through IPC handles (`soft/ipc.rs`): the
//! parent exports, a child process (this test binary again) attaches, reads what the parent
//! wrote, writes back and signals; the parent sees both.

mod common;

use core::ffi::c_void;
use std::time::Duration;

use aqueduct_hsa::sys::{amd_event, hsa_amd_ipc_memory_t, hsa_signal_t, status};
use aqueduct_soft_hsa::exports as hsa;
use common::*;

const CHILD: &str = "AQUEDUCT_IPC_CHILD";
const LEN: usize = 10_000;

/// The tests of this file take turns. A destroyed signal's handle is its slot's address, which
/// the next signal created may reuse (as ROCr's handles are its `amd_signal_t` addresses): one
/// test's store through a destroyed handle would otherwise land in the other test's new signal.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn words(handle: &hsa_amd_ipc_memory_t) -> String {
    handle.handle.iter().map(|word| format!("{word:08x}")).collect()
}

fn parse(text: &str) -> hsa_amd_ipc_memory_t {
    let mut handle = hsa_amd_ipc_memory_t::default();
    for (index, word) in handle.handle.iter_mut().enumerate() {
        *word = u32::from_str_radix(&text[index * 8..index * 8 + 8], 16).expect("hex");
    }
    handle
}

#[test]
fn two_processes_share_a_buffer_and_a_signal() {
    if let Ok(handles) = std::env::var(CHILD) {
        return child(&handles);
    }
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|poison| poison.into_inner());
    let client = Client::new();
    let buffer = client.hsa.allocate(client.device_pool, LEN).expect("allocation");
    // SAFETY (every call): a live allocation of LEN bytes, handles and signals to fill.
    unsafe {
        for index in 0..LEN {
            buffer.add(index).write(index as u8);
        }
        let mut memory = hsa_amd_ipc_memory_t::default();
        assert_eq!(hsa::hsa_amd_ipc_memory_create(buffer.cast(), LEN, &mut memory), status::SUCCESS);
        assert!((0..LEN).all(|index| buffer.add(index).read() == index as u8), "sharing keeps the contents");
        assert_eq!(
            hsa::hsa_amd_ipc_memory_create(buffer.cast(), LEN + 5000, &mut memory),
            status::ERROR_INVALID_ARGUMENT,
            "not its length"
        );
        assert_eq!(
            hsa::hsa_amd_ipc_memory_create(buffer.add(64).cast(), LEN, &mut memory),
            status::ERROR_INVALID_ARGUMENT,
            "not its start"
        );

        let mut signal = hsa_signal_t::default();
        assert_eq!(
            hsa::hsa_amd_signal_create(1, 0, core::ptr::null(), amd_event::SIGNAL_IPC, &mut signal),
            status::SUCCESS
        );
        let mut signal_handle = hsa_amd_ipc_memory_t::default();
        assert_eq!(hsa::hsa_amd_ipc_signal_create(signal, &mut signal_handle), status::SUCCESS);
        let plain = client.signal(1);
        assert_eq!(
            hsa::hsa_amd_ipc_signal_create(plain, &mut signal_handle.clone()),
            status::ERROR_INVALID_ARGUMENT,
            "not IPC enabled"
        );

        let output = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args(["--exact", "two_processes_share_a_buffer_and_a_signal", "--nocapture", "--test-threads", "1"])
            .env(CHILD, format!("{}{}", words(&memory), words(&signal_handle)))
            .output()
            .expect("the child runs");
        assert!(
            output.status.success(),
            "child failed:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(client.wait_eq(signal, 0, 30_000), 0, "the child's store reached this process");
        assert!((0..LEN).all(|index| buffer.add(index).read() == !(index as u8)), "the child's writes are here");
        assert_eq!(hsa::hsa_signal_destroy(signal), status::SUCCESS);
        assert_eq!(client.hsa.free(buffer), Ok(()));

        let mut bogus = memory;
        bogus.handle[0] ^= 1;
        let mut mapped = core::ptr::null_mut::<c_void>();
        assert_eq!(
            hsa::hsa_amd_ipc_memory_attach(&bogus, LEN, 0, core::ptr::null(), &mut mapped),
            status::ERROR_INVALID_ARGUMENT
        );
        assert_eq!(
            hsa::hsa_amd_ipc_memory_attach(&memory, LEN, 0, core::ptr::null(), &mut mapped),
            status::ERROR_INVALID_ARGUMENT,
            "freed: its file is gone"
        );
        assert_eq!(hsa::hsa_amd_ipc_memory_detach(buffer.cast()), status::ERROR_INVALID_ARGUMENT, "never attached");
    }
}

fn child(handles: &str) {
    let client = Client::new();
    let (memory, signal_handle) = (parse(&handles[..64]), parse(&handles[64..]));
    let mut mapped = core::ptr::null_mut::<c_void>();
    let mut signal = hsa_signal_t::default();
    // SAFETY (every call): handles from the parent; the mapping holds LEN bytes while attached.
    unsafe {
        assert_eq!(
            hsa::hsa_amd_ipc_memory_attach(&memory, LEN + 5000, 0, core::ptr::null(), &mut mapped),
            status::ERROR_INVALID_ARGUMENT,
            "not its length"
        );
        assert_eq!(hsa::hsa_amd_ipc_memory_attach(&memory, LEN, 0, core::ptr::null(), &mut mapped), status::SUCCESS);
        let bytes = mapped.cast::<u8>();
        assert!((0..LEN).all(|index| bytes.add(index).read() == index as u8), "the parent's bytes");
        let mut info: aqueduct_hsa::sys::hsa_amd_pointer_info_t = core::mem::zeroed();
        info.size = size_of_val(&info) as u32;
        let status = hsa::hsa_amd_pointer_info(mapped, &mut info, None, core::ptr::null_mut(), core::ptr::null_mut());
        assert_eq!((status, info.type_), (status::SUCCESS, 4), "HSA_EXT_POINTER_TYPE_IPC");
        for index in 0..LEN {
            bytes.add(index).write(!(index as u8));
        }
        assert_eq!(hsa::hsa_amd_ipc_signal_attach(&signal_handle, &mut signal), status::SUCCESS);
        assert_eq!(client.load(signal), 1, "the parent's value");
        assert_eq!(hsa::hsa_amd_ipc_memory_detach(mapped), status::SUCCESS);
        assert_eq!(hsa::hsa_amd_ipc_memory_detach(mapped), status::ERROR_INVALID_ARGUMENT, "detached");
        hsa::hsa_signal_store_screlease(signal, 0);
    }
    std::thread::sleep(Duration::from_millis(10));
}

/// A destroyed IPC signal's page stays mapped and serves the next IPC signal (`ipc.rs`,
/// `SPARE_PAGES`): a store through the destroyed handle is ignored, and the signals made after it
/// share their values through their own files, whichever page they landed on.
#[test]
fn a_destroyed_ipc_signal_s_page_serves_the_next_one() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|poison| poison.into_inner());
    let _client = Client::new();
    // SAFETY (every call): handles and out-pointers the calls fill; stale handles are looked up.
    unsafe {
        let ipc_signal = |initial| {
            let mut signal = hsa_signal_t::default();
            let created = hsa::hsa_amd_signal_create(initial, 0, core::ptr::null(), amd_event::SIGNAL_IPC, &mut signal);
            assert_eq!(created, status::SUCCESS);
            signal
        };
        let first = ipc_signal(5);
        assert_eq!(hsa::hsa_signal_destroy(first), status::SUCCESS);
        hsa::hsa_signal_store_relaxed(first, 3);
        assert_eq!(hsa::hsa_signal_load_relaxed(first), 0, "a destroyed signal reads as 0");
        let second = ipc_signal(9);
        assert_eq!(hsa::hsa_signal_load_relaxed(second), 9, "its own initial value, not the page's last");
        let mut handle = hsa_amd_ipc_memory_t::default();
        assert_eq!(hsa::hsa_amd_ipc_signal_create(second, &mut handle), status::SUCCESS);
        let mut attached = hsa_signal_t::default();
        assert_eq!(hsa::hsa_amd_ipc_signal_attach(&handle, &mut attached), status::SUCCESS);
        assert_eq!(hsa::hsa_signal_load_relaxed(attached), 9);
        hsa::hsa_signal_store_relaxed(attached, 4);
        assert_eq!(hsa::hsa_signal_load_relaxed(second), 4, "one value through the shared file");
        assert_eq!(hsa::hsa_signal_destroy(attached), status::SUCCESS);
        assert_eq!(hsa::hsa_signal_destroy(second), status::SUCCESS);
        let third = ipc_signal(7);
        assert_eq!(hsa::hsa_signal_load_relaxed(third), 7);
        assert_eq!(hsa::hsa_signal_destroy(third), status::SUCCESS);
    }
}
