//! Soft memory pools: device-local (coarse-grained), host fine-grained and kernarg.
//!
//! All three are host memory here. Pools keep HSA's contracts: a size limit, a 4 KiB granule and
//! alignment, and `hsa_amd_memory_pool_free` accepting only pointers the runtime handed out.

use std::alloc::Layout;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use hashbrown::HashMap;

use crate::sys::{pool_info, status};

pub(crate) const GRANULE: usize = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PoolKind {
    DeviceLocal,
    HostFineGrained,
    Kernarg,
}

pub(crate) struct Pool {
    pub kind: PoolKind,
    pub agent_index: usize,
    pub size: u64,
    pub used: AtomicU64,
}

impl Pool {
    pub fn new(kind: PoolKind, agent_index: usize, size: u64) -> Self {
        Self { kind, agent_index, size, used: AtomicU64::new(0) }
    }

    pub fn global_flags(&self) -> u32 {
        match self.kind {
            PoolKind::DeviceLocal => pool_info::GLOBAL_FLAG_COARSE_GRAINED,
            PoolKind::HostFineGrained => pool_info::GLOBAL_FLAG_FINE_GRAINED,
            PoolKind::Kernarg => pool_info::GLOBAL_FLAG_KERNARG_INIT | pool_info::GLOBAL_FLAG_FINE_GRAINED,
        }
    }

    pub fn accessible_by_all(&self) -> bool {
        self.kind != PoolKind::DeviceLocal
    }
}

struct Allocation {
    pool_index: usize,
    layout: Layout,
}

#[derive(Default)]
pub(crate) struct Allocations {
    live: Mutex<HashMap<usize, Allocation>>,
}

impl Allocations {
    /// Allocates zeroed memory from `pool`; the size is rounded up to the granule.
    pub fn allocate(&self, pool_index: usize, pool: &Pool, size: usize) -> Result<*mut u8, u32> {
        if size == 0 {
            return Err(status::ERROR_INVALID_ARGUMENT);
        }
        let rounded = size.checked_next_multiple_of(GRANULE).ok_or(status::ERROR_INVALID_ALLOCATION)?;
        let rounded_u64 = rounded as u64;
        // Reserve capacity first so concurrent allocations never overshoot the pool.
        let reserved = pool.used.fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
            used.checked_add(rounded_u64).filter(|total| *total <= pool.size)
        });
        if reserved.is_err() {
            return Err(status::ERROR_INVALID_ALLOCATION);
        }
        let layout = Layout::from_size_align(rounded, GRANULE).map_err(|_| status::ERROR_INVALID_ALLOCATION)?;
        // SAFETY: the layout has a non-zero size.
        let pointer = unsafe { std::alloc::alloc_zeroed(layout) };
        if pointer.is_null() {
            pool.used.fetch_sub(rounded_u64, Ordering::AcqRel);
            return Err(status::ERROR_OUT_OF_RESOURCES);
        }
        self.live.lock().unwrap_or_else(|poison| poison.into_inner()).insert(pointer as usize, Allocation { pool_index, layout });
        Ok(pointer)
    }

    /// Frees a pointer this runtime allocated; anything else is refused without effect.
    pub fn free(&self, pools: &[Pool], pointer: *mut u8) -> Result<(), u32> {
        let allocation = self
            .live
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .remove(&(pointer as usize))
            .ok_or(status::ERROR_INVALID_ARGUMENT)?;
        if let Some(pool) = pools.get(allocation.pool_index) {
            pool.used.fetch_sub(allocation.layout.size() as u64, Ordering::AcqRel);
        }
        // SAFETY: the pointer came from `alloc_zeroed` with exactly this layout and was removed
        // from the live map, so it is freed once.
        unsafe { std::alloc::dealloc(pointer, allocation.layout) };
        Ok(())
    }

    pub fn owns(&self, pointer: usize) -> bool {
        self.live.lock().unwrap_or_else(|poison| poison.into_inner()).contains_key(&pointer)
    }

    pub fn live_count(&self) -> usize {
        self.live.lock().unwrap_or_else(|poison| poison.into_inner()).len()
    }

    pub fn free_all(&self) {
        for (pointer, allocation) in self.live.lock().unwrap_or_else(|poison| poison.into_inner()).drain() {
            // SAFETY: as in `free`; the map is drained, so each pointer is freed once.
            unsafe { std::alloc::dealloc(pointer as *mut u8, allocation.layout) };
        }
    }
}
