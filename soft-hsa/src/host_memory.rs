//! The drop-in's entry points for where memory lives and who reaches it: locking client memory
//! for the agents (`hsa_amd_memory_lock`, `_lock_to_pool`, `_unlock`), the coherency type, and
//! what the soft runtime has no hardware for (migration, graphics interop, SVM), each with the
//! statuses `hsa_ext_amd.h` gives and ROCr returns.
//!
//! A locked range gets an agent address distinct from its host address, as on a discrete GPU
//! (see `memory::MappedRange`): agents reach the host memory only through it (the interpreter, copies
//! and fills translate it), and `hsa_amd_pointer_info` reports both (LOCKED). Nothing is pinned:
//! the soft agent's memory is the host's.
//!
//! The alias is safe against the client's other threads because the agent range is reserved
//! address space (`PROT_NONE`, `memory::Reservation`) for as long as a lock names it: no
//! mapping, allocation or thread stack can land there, a host dereference of an agent address
//! faults rather than reaching another object, and every translation looks the range up under the
//! mapping table's lock, so an unlock racing an access either precedes it (the access faults as
//! unmapped) or follows it. The host memory itself is the client's, which must keep it alive while
//! it is locked, as on a GPU.

// Each keeps the C function's contract of `hsa_ext_amd.h`, as every entry point does.
#![allow(clippy::missing_safety_doc)]
#![allow(clippy::too_many_arguments)]

use core::ffi::c_void;

use super::memory::{MappingKind, PoolKind, owner_bit};
use super::runtime::Runtime;
use aqueduct_hsa::sys::*;

/// The agents of a lock: every agent for (null, 0); the listed ones otherwise, each live. A null
/// list with a count, or a list with count 0, is INVALID_ARGUMENT.
fn lock_agents(runtime: &Runtime, agents: *const hsa_agent_t, num_agent: u32) -> Result<u64, hsa_status_t> {
    match (agents.is_null(), num_agent) {
        (true, 0) => Ok((0..runtime.agents.len()).fold(0, |mask, index| mask | owner_bit(index))),
        (true, _) | (false, 0) => Err(status::ERROR_INVALID_ARGUMENT),
        (false, count) => {
            // SAFETY: the API passes `num_agent` agents at `agents`.
            let agents = unsafe { core::slice::from_raw_parts(agents, count as usize) };
            agents.iter().try_fold(owner_bit(0), |mask, agent| {
                let (index, _) = runtime.agent(agent.handle).ok_or(status::ERROR_INVALID_AGENT)?;
                Ok(mask | owner_bit(index))
            })
        }
    }
}

/// Locks `[host_ptr, host_ptr + size)` to CPU pool `pool_index` for `agents`; writes the agent
/// address.
unsafe fn lock(
    runtime: &Runtime,
    host_ptr: *mut c_void,
    size: usize,
    agents: *const hsa_agent_t,
    num_agent: u32,
    pool_index: usize,
    agent_ptr: *mut *mut c_void,
) -> hsa_status_t {
    if host_ptr.is_null() || size == 0 || agent_ptr.is_null() || (host_ptr as usize).checked_add(size).is_none() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let agents = match lock_agents(runtime, agents, num_agent) {
        Ok(agents) => agents,
        Err(status) => return status,
    };
    match runtime.allocations.lock(host_ptr as usize, size, pool_index, agents) {
        Ok(agent_address) => {
            // SAFETY: non-null output pointer.
            unsafe { agent_ptr.write(agent_address as *mut c_void) };
            status::SUCCESS
        }
        Err(status) => status,
    }
}

/// `hsa_amd_memory_lock`: locks to the CPU agent's fine-grained system pool.
pub unsafe fn hsa_amd_memory_lock(
    host_ptr: *mut c_void,
    size: usize,
    agents: *mut hsa_agent_t,
    num_agent: i32,
    agent_ptr: *mut *mut c_void,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let Ok(num_agent) = u32::try_from(num_agent) else { return status::ERROR_INVALID_ARGUMENT };
    let system = runtime.pools.iter().position(|pool| pool.kind == PoolKind::SystemFine).unwrap_or(0);
    // SAFETY: forwarded.
    unsafe { lock(&runtime, host_ptr, size, agents, num_agent, system, agent_ptr) }
}

/// `hsa_amd_memory_lock_to_pool`: the pool must be a CPU agent's global pool
/// (INVALID_MEMORY_POOL otherwise), and `flags` 0.
pub unsafe fn hsa_amd_memory_lock_to_pool(
    host_ptr: *mut c_void,
    size: usize,
    agents: *mut hsa_agent_t,
    num_agent: i32,
    pool: hsa_amd_memory_pool_t,
    flags: u32,
    agent_ptr: *mut *mut c_void,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let Ok(num_agent) = u32::try_from(num_agent) else { return status::ERROR_INVALID_ARGUMENT };
    if flags != 0 {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let pool_index = match runtime.pool(pool.handle) {
        Some((index, pool)) if pool.kind.is_system() => index,
        _ => return status::ERROR_INVALID_MEMORY_POOL,
    };
    // SAFETY: forwarded.
    unsafe { lock(&runtime, host_ptr, size, agents, num_agent, pool_index, agent_ptr) }
}

/// `hsa_amd_memory_unlock`: removes the newest lock of `host_ptr` (the host address, as ROCr's
/// `Runtime::PtrUnlock` takes it).
pub unsafe fn hsa_amd_memory_unlock(host_ptr: *mut c_void) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    match runtime.allocations.unmap(host_ptr as usize, MappingKind::Locked) {
        Ok(_) => status::SUCCESS,
        Err(status) => status,
    }
}

/// `hsa_amd_coherency_type_t`: COHERENT 0, NONCOHERENT 1.
const COHERENCY_NONCOHERENT: u32 = 1;

/// `hsa_amd_coherency_get_type`: a GPU agent's type; the soft agent's memory is the host's, so
/// COHERENT, which ROCr's `GpuAgent` starts with too. A CPU agent is INVALID_AGENT.
pub unsafe fn hsa_amd_coherency_get_type(agent: hsa_agent_t, kind: *mut u32) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let Some((_, found)) = runtime.agent(agent.handle) else { return status::ERROR_INVALID_AGENT };
    if found.gpu().is_none() {
        return status::ERROR_INVALID_AGENT;
    }
    if kind.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let current = found.coherency.load(core::sync::atomic::Ordering::Acquire);
    // SAFETY: non-null output pointer.
    unsafe { kind.write(current) };
    status::SUCCESS
}

/// `hsa_amd_coherency_set_type`: records COHERENT or NONCOHERENT for a GPU agent (anything else
/// INVALID_ARGUMENT). ROCr reprograms the aperture only on APUs (`current_coherency_type`); on a
/// discrete GPU it records the type, as here, where host and agent memory are one.
pub unsafe fn hsa_amd_coherency_set_type(agent: hsa_agent_t, kind: u32) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let Some((_, found)) = runtime.agent(agent.handle) else { return status::ERROR_INVALID_AGENT };
    if found.gpu().is_none() {
        return status::ERROR_INVALID_AGENT;
    }
    if kind > COHERENCY_NONCOHERENT {
        return status::ERROR_INVALID_ARGUMENT;
    }
    found.coherency.store(kind, core::sync::atomic::Ordering::Release);
    status::SUCCESS
}

/// `hsa_amd_memory_pool_can_migrate`: ROCr checks the pointer and both pools, then answers false
/// with HSA_STATUS_ERROR_OUT_OF_RESOURCES: migration is not implemented in ROCr 5.2.3
/// (`MemoryRegion::CanMigrate`, "TODO: not implemented yet"), so neither is it here.
pub unsafe fn hsa_amd_memory_pool_can_migrate(
    src_memory_pool: hsa_amd_memory_pool_t,
    dst_memory_pool: hsa_amd_memory_pool_t,
    result: *mut bool,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if result.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    if runtime.pool(src_memory_pool.handle).is_none() || runtime.pool(dst_memory_pool.handle).is_none() {
        return status::ERROR_INVALID_MEMORY_POOL;
    }
    // SAFETY: non-null output pointer.
    unsafe { result.write(false) };
    status::ERROR_OUT_OF_RESOURCES
}

/// `hsa_amd_memory_migrate`: a null pointer or non-zero flags are INVALID_ARGUMENT, an unknown
/// pool INVALID_MEMORY_POOL; otherwise OUT_OF_RESOURCES, as ROCr 5.2.3 (`MemoryRegion::Migrate`,
/// not implemented).
pub unsafe fn hsa_amd_memory_migrate(
    ptr: *const c_void,
    memory_pool: hsa_amd_memory_pool_t,
    flags: u32,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if ptr.is_null() || flags != 0 {
        return status::ERROR_INVALID_ARGUMENT;
    }
    if runtime.pool(memory_pool.handle).is_none() {
        return status::ERROR_INVALID_MEMORY_POOL;
    }
    status::ERROR_OUT_OF_RESOURCES
}

/// `hsa_amd_interop_map_buffer`: maps a graphics driver's buffer (a DRM handle) for the agents.
/// ROCr checks the pointers, the flags (0), the count (not 0) and every agent, then asks KFD to
/// register the handle (`Runtime::InteropMap`), which refuses a handle it does not know with
/// INVALID_ARGUMENT. The soft runtime has no graphics driver, so every handle is unknown.
pub unsafe fn hsa_amd_interop_map_buffer(
    num_agents: u32,
    agents: *mut hsa_agent_t,
    _interop_handle: core::ffi::c_int,
    flags: u32,
    size: *mut usize,
    ptr: *mut *mut c_void,
    _metadata_size: *mut usize,
    _metadata: *mut *const c_void,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if agents.is_null() || size.is_null() || ptr.is_null() || flags != 0 || num_agents == 0 {
        return status::ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: the API passes `num_agents` agents.
    let agents = unsafe { core::slice::from_raw_parts(agents, num_agents as usize) };
    if agents.iter().any(|agent| runtime.agent(agent.handle).is_none()) {
        return status::ERROR_INVALID_AGENT;
    }
    status::ERROR_INVALID_ARGUMENT
}

/// `hsa_amd_interop_unmap_buffer`: success whatever the pointer (`hsa_ext_amd.cpp` unmaps what it
/// mapped and ignores the rest); nothing is ever mapped here.
pub unsafe fn hsa_amd_interop_unmap_buffer(_ptr: *mut c_void) -> hsa_status_t {
    if super::runtime::get().is_none() {
        return status::ERROR_NOT_INITIALIZED;
    }
    status::SUCCESS
}

/// What every SVM entry point answers: ROCr hands each to KFD's SVM ioctls and reports their
/// failure as HSA_STATUS_ERROR (`Runtime::SetSvmAttrib`, `GetSvmAttrib`, `SvmPrefetch`:
/// "hsaKmtSVM... failed"). The soft runtime has no SVM ranges
/// (`HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED` is false), so each fails that way.
fn no_svm() -> hsa_status_t {
    if super::runtime::get().is_none() { status::ERROR_NOT_INITIALIZED } else { status::ERROR }
}

/// `hsa_amd_svm_attributes_set`: see `no_svm`.
pub unsafe fn hsa_amd_svm_attributes_set(
    _ptr: *mut c_void,
    _size: usize,
    _attribute_list: *mut c_void,
    _attribute_count: usize,
) -> hsa_status_t {
    no_svm()
}

/// `hsa_amd_svm_attributes_get`: see `no_svm`.
pub unsafe fn hsa_amd_svm_attributes_get(
    _ptr: *mut c_void,
    _size: usize,
    _attribute_list: *mut c_void,
    _attribute_count: usize,
) -> hsa_status_t {
    no_svm()
}

/// `hsa_amd_svm_prefetch_async`: see `no_svm`.
pub unsafe fn hsa_amd_svm_prefetch_async(
    _ptr: *mut c_void,
    _size: usize,
    _agent: hsa_agent_t,
    _num_dep_signals: u32,
    _dep_signals: *const hsa_signal_t,
    _completion_signal: hsa_signal_t,
) -> hsa_status_t {
    no_svm()
}
