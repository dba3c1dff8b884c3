//! The deprecated region API of `hsa.h`: ROCr's regions are its memory pools (the same objects,
//! the same handles), so each region query answers from the pool, and `hsa_memory_allocate`
//! allocates from it.

// Each keeps the C function's contract of `hsa.h`, as every entry point does.
#![allow(clippy::missing_safety_doc)]

use core::ffi::c_void;

use super::memory::owner_bit;
use super::runtime::Tag;
use aqueduct_hsa::sys::*;

type RegionCallback = Option<unsafe extern "C" fn(hsa_region_t, *mut c_void) -> hsa_status_t>;

/// `hsa_agent_iterate_regions`: the agent's pools, in ROCr's order.
pub unsafe fn hsa_agent_iterate_regions(
    agent: hsa_agent_t,
    callback: RegionCallback,
    data: *mut c_void,
) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let Some((_, found)) = runtime.agent(agent.handle) else { return status::ERROR_INVALID_AGENT };
    let Some(callback) = callback else { return status::ERROR_INVALID_ARGUMENT };
    let handles: Vec<u64> = found.pools.iter().map(|&pool| runtime.handle(Tag::Pool, pool as u64)).collect();
    drop(runtime);
    for handle in handles {
        // SAFETY: the client's callback with the client's data.
        let result = unsafe { callback(hsa_region_t { handle }, data) };
        if result != status::SUCCESS {
            return result;
        }
    }
    status::SUCCESS
}

/// `hsa_region_get_info`: the pool's answers, where `hsa_region_info_t` numbers them the same
/// (SEGMENT, GLOBAL_FLAGS, SIZE, ALLOC_MAX_SIZE, RUNTIME_ALLOC_*; kernarg memory is a GLOBAL
/// region with the KERNARG flag, as the HSA specification finds it), and ROCr's region-only ones:
/// ALLOC_MAX_PRIVATE_WORKGROUP_SIZE is 0 outside the private segment, and the AMD attributes say
/// whether the host reaches the memory directly (system memory), its base (0: no fixed
/// aperture) and the agent's bus width and memory clock (`GpuAgent`'s, see `entry.rs`).
pub unsafe fn hsa_region_get_info(region: hsa_region_t, attribute: u32, value: *mut c_void) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    let Some((_, pool)) = runtime.pool(region.handle) else { return status::ERROR_INVALID_REGION };
    if value.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let gpu = runtime.gpu(pool.agent_index).is_some();
    // SAFETY (all arms): `value` points to storage of the attribute's documented type.
    unsafe {
        match attribute {
            0..=2 | 5..=7 => {
                let pool_handle = hsa_amd_memory_pool_t { handle: region.handle };
                drop(runtime);
                return super::entry::hsa_amd_memory_pool_get_info(pool_handle, attribute, value);
            }
            4 => value.cast::<usize>().write(pool.alloc_max_size() as usize),
            8 => value.cast::<u32>().write(0),
            0xA000 => value.cast::<bool>().write(pool.kind.is_system()),
            0xA001 => value.cast::<*mut c_void>().write(core::ptr::null_mut()),
            0xA002 => value.cast::<u32>().write(if gpu { super::entry::MEMORY_WIDTH_BITS } else { 0 }),
            0xA003 => value.cast::<u32>().write(if gpu { super::entry::MEMORY_MAX_CLOCK_MHZ } else { 0 }),
            _ => return status::ERROR_INVALID_ARGUMENT,
        }
    }
    status::SUCCESS
}

/// `hsa_memory_allocate`: allocates from the region's pool. ROCr allocates region memory
/// without the pool API's restriction (`AllocateNoFlags`, where `hsa_amd_memory_pool_allocate`
/// passes `AllocateRestrict`), so every agent may access it.
pub unsafe fn hsa_memory_allocate(region: hsa_region_t, size: usize, ptr: *mut *mut c_void) -> hsa_status_t {
    let Some(runtime) = super::runtime::get() else { return status::ERROR_NOT_INITIALIZED };
    if ptr.is_null() {
        return status::ERROR_INVALID_ARGUMENT;
    }
    let Some((index, pool)) = runtime.pool(region.handle) else { return status::ERROR_INVALID_REGION };
    match runtime.allocations.allocate(index, pool, size) {
        Ok(pointer) => {
            let everyone = (0..runtime.agents.len()).fold(0, |mask, agent| mask | owner_bit(agent));
            // The allocation was just made: granting cannot fail.
            let _ = runtime.allocations.allow(pointer as usize, everyone);
            // SAFETY: non-null output pointer.
            unsafe { ptr.write(pointer.cast()) };
            status::SUCCESS
        }
        Err(status) => status,
    }
}
