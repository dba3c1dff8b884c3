//! IPC: another process attaches an allocation or a signal through a 256-bit handle
//! (`hsa_amd_ipc_memory_*`, `hsa_amd_ipc_signal_*`), and both processes then share the memory.
//!
//! ROCr shares device memory through KFD's DMA-buf handles. The soft agent's memory is the
//! host's, so the soft runtime shares it as Linux shares memory between processes: the exporter
//! moves the allocation onto a `memfd` (copying its contents, then mapping the file over the same
//! addresses, so its pointers stay valid), and the handle names that file by process id,
//! descriptor and inode; the importer opens it through `/proc/<pid>/fd/<fd>`, checks the inode,
//! and maps it. An IPC signal (`HSA_AMD_SIGNAL_IPC`) keeps its `amd_signal_t` on such a page
//! from creation, and both processes read and write the value there; a waiter in the other
//! process sees a change within its capped park (`signals.rs`).
//!
//! The handle (`hsa_amd_ipc_memory_t`, eight `u32`s): a magic word, the exporter's pid, the
//! descriptor, the size (two words), the inode (two words) and the kind (0 memory, 1 signal).
//! A handle whose file is gone, or whose descriptor now names another file, is INVALID_ARGUMENT.

// Each keeps the C function's contract of `hsa_ext_amd.h`, as every entry point does.
#![allow(clippy::missing_safety_doc)]

use core::ffi::c_void;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::sync::Mutex;

use aqueduct_abi::{AmdSignal, SignalKind};

use super::memory::{MappedRange, MappingKind, PoolKind, owner_bit};
use super::runtime::Runtime;
use super::shared_file::{SharedFile, back_with_shared_file, make_private, map_shared};
use aqueduct_hsa::sys::*;

/// "AQIP": a handle this runtime made.
const MAGIC: u32 = 0x5049_5141;
const KIND_MEMORY: u32 = 0;
const KIND_SIGNAL: u32 = 1;
/// An IPC signal's shared block: one page, its `amd_signal_t` first.
const SIGNAL_PAGE: usize = 4096;

fn encode(kind: u32, descriptor: i32, inode: u64, size: usize) -> hsa_amd_ipc_memory_t {
    let size = size as u64;
    hsa_amd_ipc_memory_t {
        handle: [
            MAGIC,
            std::process::id(),
            descriptor as u32,
            size as u32,
            (size >> 32) as u32,
            inode as u32,
            (inode >> 32) as u32,
            kind,
        ],
    }
}

/// Opens and maps the file a handle of `kind` names, at `at` exactly or anywhere; returns the
/// mapping and its size.
fn attach(handle: &hsa_amd_ipc_memory_t, kind: u32, at: Option<usize>) -> Result<(usize, usize), u32> {
    let [magic, pid, descriptor, size_low, size_high, inode_low, inode_high, found_kind] = handle.handle;
    if magic != MAGIC || found_kind != kind {
        return Err(status::ERROR_INVALID_ARGUMENT);
    }
    let size = (u64::from(size_high) << 32 | u64::from(size_low)) as usize;
    let inode = u64::from(inode_high) << 32 | u64::from(inode_low);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/proc/{pid}/fd/{descriptor}"))
        .map_err(|_| status::ERROR_INVALID_ARGUMENT)?;
    let metadata = file.metadata().map_err(|_| status::ERROR_INVALID_ARGUMENT)?;
    if metadata.ino() != inode || metadata.len() != size as u64 || size == 0 {
        return Err(status::ERROR_INVALID_ARGUMENT);
    }
    // The mapping outlives the descriptor, which closes here.
    if at.is_some() && size != SIGNAL_PAGE {
        return Err(status::ERROR_INVALID_ARGUMENT);
    }
    Ok((map_shared(file.as_raw_fd(), size, at)?, size))
}

fn unmap(base: usize, size: usize) {
    // SAFETY: a mapping this module made and no longer hands out.
    unsafe { libc::munmap(base as *mut c_void, size) };
}

/// `hsa_amd_ipc_memory_create`: `ptr` must start an allocation of this runtime and `len` be its
/// length (INVALID_ARGUMENT otherwise); the handle names its memory from now on.
pub unsafe fn hsa_amd_ipc_memory_create(
    ptr: *mut c_void,
    len: usize,
    handle: *mut hsa_amd_ipc_memory_t,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if ptr.is_null() || handle.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    match runtime.allocations.share(ptr as usize, len, back_with_shared_file) {
        Ok((descriptor, inode, size)) => {
            // SAFETY: non-null output pointer.
            unsafe { handle.write(encode(KIND_MEMORY, descriptor, inode, size)) };
            status::SUCCESS
        }
        Err(status) => status,
    }
}

/// The device pool an import counts as: the first listed GPU's, else the first GPU's.
fn import_pool(runtime: &Runtime, agents: &[usize]) -> usize {
    let gpu = agents
        .iter()
        .copied()
        .find(|&index| runtime.gpu(index).is_some())
        .or_else(|| (0..runtime.agents.len()).find(|&index| runtime.gpu(index).is_some()));
    let owner = gpu.unwrap_or(0);
    runtime.agents[owner]
        .pools
        .iter()
        .copied()
        .find(|&pool| runtime.pools[pool].kind == PoolKind::DeviceCoarse)
        .unwrap_or(runtime.agents[owner].pools[0])
}

/// `hsa_amd_ipc_memory_attach`: maps another process's shared allocation for the listed agents
/// (every agent when none is listed) and the host. `len` must be the shared length.
pub unsafe fn hsa_amd_ipc_memory_attach(
    handle: *const hsa_amd_ipc_memory_t,
    len: usize,
    num_agents: u32,
    mapping_agents: *const hsa_agent_t,
    mapped_ptr: *mut *mut c_void,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if handle.is_null() || mapped_ptr.is_null() || (num_agents > 0 && mapping_agents.is_null()) {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let agents: Vec<usize> = if num_agents == 0 {
        (0..runtime.agents.len()).collect()
    } else {
        // SAFETY: the API passes `num_agents` agents.
        let listed = unsafe { core::slice::from_raw_parts(mapping_agents, num_agents as usize) };
        match listed.iter().map(|agent| runtime.agent(agent.handle).map(|(index, _)| index)).collect::<Option<Vec<_>>>()
        {
            Some(indices) => indices,
            None => return status::ERROR_INVALID_AGENT,
        }
    };
    // SAFETY: non-null pointer to the caller's handle.
    let handle = unsafe { handle.read() };
    let (base, size) = match attach(&handle, KIND_MEMORY, None) {
        Ok(mapping) => mapping,
        Err(status) => return status,
    };
    if len == 0 || len.next_multiple_of(super::memory::GRANULE) != size {
        unmap(base, size);
        return status::ERROR_INVALID_ARGUMENT;
    }
    let mask = agents.iter().fold(owner_bit(0), |mask, &index| mask | owner_bit(index));
    let pool_index = import_pool(&runtime, &agents);
    let kind = MappingKind::Imported;
    runtime.allocations.map(MappedRange { host_base: base, agent_base: base, size, pool_index, agents: mask, kind });
    // SAFETY: non-null output pointer.
    unsafe { mapped_ptr.write(base as *mut c_void) };
    status::SUCCESS
}

/// `hsa_amd_ipc_memory_detach`: unmaps one attachment; a pointer no attachment starts is
/// INVALID_ARGUMENT.
pub unsafe fn hsa_amd_ipc_memory_detach(mapped_ptr: *mut c_void) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if mapped_ptr.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    match runtime.allocations.unmap(mapped_ptr as usize, MappingKind::Imported) {
        Ok(range) => {
            unmap(range.host_base, range.size);
            status::SUCCESS
        }
        Err(status) => status,
    }
}

/// The shared blocks of IPC signals in this process: signal handle → (its page, the file when
/// this process exported it).
static SIGNAL_PAGES: Mutex<Vec<(u64, usize, Option<SharedFile>)>> = Mutex::new(Vec::new());

/// Pages of destroyed IPC signals, private again and kept mapped: a stale user of the signal's
/// handle may still reach its value there (`signals.rs`), so they are reused, never unmapped.
static SPARE_PAGES: Mutex<Vec<usize>> = Mutex::new(Vec::new());

fn spare_page() -> Option<usize> {
    SPARE_PAGES.lock().unwrap_or_else(|poison| poison.into_inner()).pop()
}

/// Takes a signal's page out of use: unmapped when it was never a signal's (`reused` is false),
/// else made private and kept for the next IPC signal.
fn release_page(page: usize, reused: bool) {
    if reused {
        make_private(page, SIGNAL_PAGE);
        SPARE_PAGES.lock().unwrap_or_else(|poison| poison.into_inner()).push(page);
    } else {
        unmap(page, SIGNAL_PAGE);
    }
}

/// Maps a signal's page: over a spare page when there is one, else anywhere. Returns the page and
/// whether it was a spare.
fn map_signal_page(map: impl FnOnce(Option<usize>) -> Result<usize, u32>) -> Result<(usize, bool), u32> {
    match spare_page() {
        Some(spare) => match map(Some(spare)) {
            Ok(page) => Ok((page, true)),
            Err(status) => {
                release_page(spare, true);
                Err(status)
            }
        },
        None => Ok((map(None)?, false)),
    }
}

/// A new IPC signal (`HSA_AMD_SIGNAL_IPC`): its `amd_signal_t` on a shared page from the start.
pub(crate) fn create_signal(initial: hsa_signal_value_t, interrupt: bool) -> Result<hsa_signal_t, u32> {
    let shared = SharedFile::create(SIGNAL_PAGE)?;
    let (page, reused) = map_signal_page(|at| map_shared(shared.descriptor(), SIGNAL_PAGE, at))?;
    let amd = page as *mut AmdSignal;
    // SAFETY: a fresh zeroed page, mapped here, large and aligned enough for an `amd_signal_t`.
    unsafe {
        (*amd).kind = SignalKind::USER;
        AmdSignal::value_atomic(amd).store(initial, core::sync::atomic::Ordering::Release);
    }
    let Some(slot) = super::signals::create(SignalKind::USER, initial, interrupt) else {
        release_page(page, reused);
        return Err(status::ERROR_OUT_OF_RESOURCES);
    };
    slot.use_remote_value(amd);
    SIGNAL_PAGES.lock().unwrap_or_else(|poison| poison.into_inner()).push((slot.handle(), page, Some(shared)));
    Ok(hsa_signal_t { handle: slot.handle() })
}

/// Releases an IPC signal's page once its signal is destroyed; it stays mapped (see
/// [`SPARE_PAGES`]).
pub(crate) fn forget_signal(handle: u64) {
    let mut pages = SIGNAL_PAGES.lock().unwrap_or_else(|poison| poison.into_inner());
    if let Some(position) = pages.iter().position(|(signal, _, _)| *signal == handle) {
        let (_, page, _) = pages.remove(position);
        release_page(page, true);
    }
}

/// `hsa_amd_ipc_signal_create`: the handle of an IPC signal's shared block; a signal created
/// without `HSA_AMD_SIGNAL_IPC` is INVALID_ARGUMENT ("Signal must be IPC enabled",
/// `IPCSignal::CreateHandle`).
pub unsafe fn hsa_amd_ipc_signal_create(signal: hsa_signal_t, handle: *mut hsa_amd_ipc_memory_t) -> hsa_status_t {
    if super::runtime::get().is_none() {
        return status::ERROR_NOT_INITIALIZED;
    }
    if handle.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    if super::signals::slot(signal.handle).is_none() {
        return status::ERROR_INVALID_SIGNAL;
    }
    let pages = SIGNAL_PAGES.lock().unwrap_or_else(|poison| poison.into_inner());
    let exported = pages.iter().find(|(found, _, file)| *found == signal.handle && file.is_some());
    match exported {
        Some((_, _, Some(file))) => {
            // SAFETY: non-null output pointer.
            unsafe { handle.write(encode(KIND_SIGNAL, file.descriptor(), file.inode, SIGNAL_PAGE)) };
            status::SUCCESS
        }
        _ => status::ERROR_INVALID_ARGUMENT,
    }
}

/// `hsa_amd_ipc_signal_attach`: a signal of this process whose value is the exporter's.
pub unsafe fn hsa_amd_ipc_signal_attach(
    handle: *const hsa_amd_ipc_memory_t,
    signal: *mut hsa_signal_t,
) -> hsa_status_t {
    if super::runtime::get().is_none() {
        return status::ERROR_NOT_INITIALIZED;
    }
    if handle.is_null() || signal.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: non-null pointer to the caller's handle.
    let handle = unsafe { handle.read() };
    let (page, reused) = match map_signal_page(|at| attach(&handle, KIND_SIGNAL, at).map(|(page, _)| page)) {
        Ok(mapping) => mapping,
        Err(status) => return status,
    };
    let amd = page as *mut AmdSignal;
    // SAFETY: the exporter's block, mapped here; `kind` is written once at its creation.
    if unsafe { (*amd).kind } != SignalKind::USER {
        release_page(page, reused);
        return status::ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: as above; the value is only accessed atomically.
    let current = unsafe { AmdSignal::value_atomic(amd) }.load(core::sync::atomic::Ordering::Acquire);
    let Some(slot) = super::signals::create(SignalKind::USER, current, true) else {
        release_page(page, reused);
        return status::ERROR_OUT_OF_RESOURCES;
    };
    slot.use_remote_value(amd);
    SIGNAL_PAGES.lock().unwrap_or_else(|poison| poison.into_inner()).push((slot.handle(), page, None));
    // SAFETY: non-null output pointer.
    unsafe { signal.write(hsa_signal_t { handle: slot.handle() }) };
    status::SUCCESS
}
