//! `_amdgpu_r_debug`: the loader's list of loaded code objects for debuggers, as ROCr keeps it
//! (the one data symbol ROCr 5.2.3 exports, `ROCR_1`, 40 bytes: glibc's `struct r_debug`).
//!
//! ROCr's loader follows the dynamic linker's protocol (`<link.h>`): before it changes the list
//! it sets `r_state` to RT_ADD or RT_DELETE and calls the function at `r_brk`, where a debugger
//! (rocgdb) keeps a breakpoint; after, RT_CONSISTENT and the call again. Each entry is a
//! `struct link_map` whose `l_addr` is the load delta, `l_name` the code object's URI
//! (`hsa_ven_amd_loader.h`) and `l_ld` its loaded dynamic section.

use core::ffi::c_char;
use std::ffi::CString;
use std::sync::Mutex;

/// `struct link_map`.
#[repr(C)]
struct LinkMap {
    l_addr: u64,
    l_name: *const c_char,
    l_ld: u64,
    l_next: *mut LinkMap,
    l_prev: *mut LinkMap,
}

/// `struct r_debug`.
#[repr(C)]
pub struct RDebug {
    r_version: i32,
    r_map: *mut LinkMap,
    r_brk: extern "C" fn(),
    r_state: i32,
    r_ldbase: u64,
}

/// `r_state`: RT_CONSISTENT 0, RT_ADD 1, RT_DELETE 2.
const RT_CONSISTENT: i32 = 0;
const RT_ADD: i32 = 1;
const RT_DELETE: i32 = 2;

/// Where a debugger breaks to read the list; it does nothing else.
#[inline(never)]
extern "C" fn loader_debug_state() {
    std::hint::black_box(());
}

/// The list's head, exported by the drop-in under ROCr's name.
// SAFETY (no_mangle): the name is ROCr's exported data symbol and nothing else defines it.
#[unsafe(no_mangle)]
pub static mut _amdgpu_r_debug: RDebug = RDebug {
    r_version: 1,
    r_map: core::ptr::null_mut(),
    r_brk: loader_debug_state,
    r_state: RT_CONSISTENT,
    r_ldbase: 0,
};

/// Each listed code object: its loaded id, its node (leaked while listed) and its name.
struct Entry {
    loaded: u64,
    node: *mut LinkMap,
    _name: CString,
}

// SAFETY: the nodes are only touched under `ENTRIES`' lock.
unsafe impl Send for Entry {}

static ENTRIES: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// Sets `r_state`, announces it, and relinks the list from `entries`.
fn publish(state: i32, entries: &[Entry], change: impl FnOnce()) {
    let head = &raw mut _amdgpu_r_debug;
    // SAFETY: the head is written only here, under `ENTRIES`' lock; debuggers read it while the
    // process is stopped at `r_brk`.
    unsafe { (*head).r_state = state };
    loader_debug_state();
    change();
    // SAFETY: as above; each node is a live leaked box listed in `entries`.
    unsafe {
        let mut previous: *mut LinkMap = core::ptr::null_mut();
        for entry in entries {
            (*entry.node).l_prev = previous;
            (*entry.node).l_next = core::ptr::null_mut();
            if !previous.is_null() {
                (*previous).l_next = entry.node;
            }
            previous = entry.node;
        }
        (*head).r_map = entries.first().map_or(core::ptr::null_mut(), |entry| entry.node);
        (*head).r_state = RT_CONSISTENT;
    }
    loader_debug_state();
}

/// Lists a code object that just loaded: `id` names it for [`unloaded`], `uri` is its
/// `l_name`, `load_delta` what its ELF addresses are shifted by, and `dynamic` the loaded
/// address of its dynamic section (0 without one).
pub(crate) fn loaded(id: u64, uri: &str, load_delta: u64, dynamic: u64) {
    let name = CString::new(uri).unwrap_or_default();
    let node = Box::into_raw(Box::new(LinkMap {
        l_addr: load_delta,
        l_name: name.as_ptr(),
        l_ld: dynamic,
        l_next: core::ptr::null_mut(),
        l_prev: core::ptr::null_mut(),
    }));
    let mut entries = ENTRIES.lock().unwrap_or_else(|poison| poison.into_inner());
    entries.push(Entry { loaded: id, node, _name: name });
    publish(RT_ADD, &entries, || {});
}

/// Unlists code objects whose executable went.
pub(crate) fn unloaded(ids: &[u64]) {
    if ids.is_empty() {
        return;
    }
    let mut entries = ENTRIES.lock().unwrap_or_else(|poison| poison.into_inner());
    let (gone, kept): (Vec<Entry>, Vec<Entry>) = entries.drain(..).partition(|entry| ids.contains(&entry.loaded));
    *entries = kept;
    publish(RT_DELETE, &entries, || {});
    for entry in gone {
        // SAFETY: the node was leaked by `loaded` and is no longer reachable from the list.
        drop(unsafe { Box::from_raw(entry.node) });
    }
}

/// The URIs listed now, head first (for tests).
pub fn listed() -> Vec<String> {
    let _entries = ENTRIES.lock().unwrap_or_else(|poison| poison.into_inner());
    let mut names = Vec::new();
    // SAFETY: read under the lock that every writer holds.
    unsafe {
        let mut node = _amdgpu_r_debug.r_map;
        while !node.is_null() {
            names.push(core::ffi::CStr::from_ptr((*node).l_name).to_string_lossy().into_owned());
            node = (*node).l_next;
        }
    }
    names
}
