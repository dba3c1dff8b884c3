//! Soft memory pools and allocations, laid out and guarded as ROCr lays out and guards them.
//!
//! Every fact here follows ROCr's `MemoryRegion` (`core/runtime/amd_memory_region.cpp`, ROCm
//! 5.x–6.x) and the published dump in `soft-hsa/tests/fixtures/rocminfo-gfx1100.txt`:
//! - the CPU agent owns the system pools: FINE GRAINED, KERNARG + FINE GRAINED and COARSE
//!   GRAINED, 4 KiB granule, recommended granule and alignment, accessible by all;
//! - each GPU agent owns COARSE GRAINED and EXTENDED FINE GRAINED device memory (4 KiB granule
//!   and alignment, 2 MiB recommended granule, not accessible by all) and a 64 KiB GROUP pool
//!   that cannot be allocated from;
//! - `hsa_amd_memory_pool_allocate` allocates with ROCr's `AllocateRestrict`: system memory is
//!   mapped to no GPU and device memory to its owner only, until `hsa_amd_agents_allow_access`
//!   adds agents. The packet processor checks that map before an agent touches memory.
//!
//! All pools are host memory here. `hsa_amd_memory_pool_free` accepts only pointers the runtime
//! handed out.

use crossbeam_utils::sync::{ShardedLock, ShardedLockReadGuard, ShardedLockWriteGuard};
use std::alloc::Layout;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use aqueduct_hsa::sys::{pool_info, status};

/// Allocation granule and alignment of every allocatable pool (ROCr: `GetPageSize()`).
pub(crate) const GRANULE: usize = 4096;
/// Recommended granule of device memory: ROCr's fragment allocator block (dump: 2048KB).
pub(crate) const DEVICE_RECOMMENDED_GRANULE: usize = 2 << 20;
/// The GROUP (LDS) pool of a GPU agent (dump: `GROUP`, 64 KB, not allocatable).
pub(crate) const GROUP_BYTES: u64 = 64 << 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PoolKind {
    /// CPU agent: `GLOBAL; FLAGS: FINE GRAINED`.
    SystemFine,
    /// CPU agent: `GLOBAL; FLAGS: KERNARG, FINE GRAINED`.
    SystemKernarg,
    /// CPU agent: `GLOBAL; FLAGS: COARSE GRAINED`.
    SystemCoarse,
    /// GPU agent: `GLOBAL; FLAGS: COARSE GRAINED`, the device-local memory.
    DeviceCoarse,
    /// GPU agent: `GLOBAL; FLAGS: EXTENDED FINE GRAINED`.
    DeviceExtendedFine,
    /// GPU agent: `GROUP`.
    Group,
}

impl PoolKind {
    /// The pools each kind of agent owns, in ROCr's order (the dump's Pool 1, 2, 3).
    pub const CPU: [PoolKind; 3] = [PoolKind::SystemFine, PoolKind::SystemKernarg, PoolKind::SystemCoarse];
    pub const GPU: [PoolKind; 3] = [PoolKind::DeviceCoarse, PoolKind::DeviceExtendedFine, PoolKind::Group];

    pub fn is_system(self) -> bool {
        matches!(self, Self::SystemFine | Self::SystemKernarg | Self::SystemCoarse)
    }
}

pub(crate) struct Pool {
    pub kind: PoolKind,
    /// The owning agent's index in the runtime's agent list.
    pub agent_index: usize,
    pub size: u64,
    pub used: AtomicU64,
}

impl Pool {
    pub fn new(kind: PoolKind, agent_index: usize, size: u64) -> Self {
        Self { kind, agent_index, size, used: AtomicU64::new(0) }
    }

    pub fn segment(&self) -> u32 {
        if self.kind == PoolKind::Group { pool_info::SEGMENT_GROUP } else { pool_info::SEGMENT_GLOBAL }
    }

    /// `HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS` (ROCr: 0 for a non-global pool).
    pub fn global_flags(&self) -> u32 {
        match self.kind {
            PoolKind::SystemFine => pool_info::GLOBAL_FLAG_FINE_GRAINED,
            PoolKind::SystemKernarg => pool_info::GLOBAL_FLAG_KERNARG_INIT | pool_info::GLOBAL_FLAG_FINE_GRAINED,
            PoolKind::SystemCoarse | PoolKind::DeviceCoarse => pool_info::GLOBAL_FLAG_COARSE_GRAINED,
            PoolKind::DeviceExtendedFine => aqueduct_hsa::rocr_facts::GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED,
            PoolKind::Group => 0,
        }
    }

    pub fn alloc_allowed(&self) -> bool {
        self.kind != PoolKind::Group
    }

    /// Granule and alignment: the page size for allocatable pools, 0 for GROUP.
    pub fn granule(&self) -> usize {
        if self.alloc_allowed() { GRANULE } else { 0 }
    }

    pub fn recommended_granule(&self) -> usize {
        match self.kind {
            PoolKind::DeviceCoarse | PoolKind::DeviceExtendedFine => DEVICE_RECOMMENDED_GRANULE,
            PoolKind::Group => 0,
            _ => GRANULE,
        }
    }

    /// ROCr: `IsSystem()`.
    pub fn accessible_by_all(&self) -> bool {
        self.kind.is_system()
    }

    /// `HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE`: the pool's size where it can be allocated.
    pub fn alloc_max_size(&self) -> u64 {
        if self.alloc_allowed() { self.size } else { 0 }
    }
}

/// `hsa_amd_memory_pool_access_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum PoolAccess {
    NeverAllowed = 0,
    AllowedByDefault = 1,
    DisallowedByDefault = 2,
}

/// ROCr's `MemoryRegion::GetAccessInfo`: the owner is always allowed; system memory is
/// allowed for CPU agents and must be granted to GPUs; other agents may be granted device
/// memory (soft GPUs are all linked, as over PCIe P2P) but never a GROUP pool.
pub(crate) fn access(pool: &Pool, agent_index: usize, agent_is_cpu: bool) -> PoolAccess {
    if pool.agent_index == agent_index {
        PoolAccess::AllowedByDefault
    } else if pool.kind.is_system() {
        if agent_is_cpu { PoolAccess::AllowedByDefault } else { PoolAccess::DisallowedByDefault }
    } else if pool.kind == PoolKind::Group {
        PoolAccess::NeverAllowed
    } else {
        PoolAccess::DisallowedByDefault
    }
}

/// Why an agent may not touch an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AccessFault {
    /// No allocation of this runtime holds the range (ROCr: page not present).
    NotMapped,
    /// The allocation exists but is not mapped for this agent.
    NotGranted,
}

struct Allocation {
    pool_index: usize,
    layout: Layout,
    /// Bit `i`: agent `i` may access it (the owner from the start, others once granted).
    agents: AtomicU64,
    /// `hsa_amd_register_deallocation_callback` registrations: (callback, user data), called in
    /// order when the allocation is freed, before its memory goes.
    /// Deallocation callbacks: (the pointer registered, anywhere in the allocation; the callback;
    /// its user data), as ROCr's notifiers keep them.
    callbacks: std::sync::Mutex<Vec<(usize, DeallocationCallback, usize)>>,
    /// `hsa_amd_pointer_info_set_userdata`'s value.
    user_data: std::sync::atomic::AtomicUsize,
    /// The shared file backing it once `hsa_amd_ipc_memory_create` made it shareable.
    shared: std::sync::Mutex<Option<super::shared_file::SharedFile>>,
}

/// What `hsa_amd_pointer_info` reports of an allocation.
pub(crate) struct AllocationInfo {
    pub base: usize,
    pub size: usize,
    pub pool_index: usize,
    /// Bit `i`: agent `i` may access it.
    pub agents: u64,
    pub user_data: usize,
}

/// A deallocation callback (`hsa_amd_deallocation_callback_t`, never null here).
pub(crate) type DeallocationCallback = unsafe extern "C" fn(*mut core::ffi::c_void, *mut core::ffi::c_void);

/// Memory the runtime maps for agents without allocating it: host memory the client locked
/// (`hsa_amd_memory_lock`; overlapping locks are separate mappings, `hsa_ext_amd.h`), or another
/// process's allocation attached through IPC (`hsa_amd_ipc_memory_attach`).
///
/// A lock gets an agent address of its own, as ROCr's thunk gives one on a discrete GPU
/// (libhsakmt `fmm.c`, `fmm_register_user_memory`: a userptr buffer object placed in the SVM
/// aperture, the host address's page offset kept), so a client can tell the two apart, as HIP's
/// memory map must. An import's agent address is its host mapping's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MappedRange {
    /// Where the client's threads reach it.
    pub host_base: usize,
    /// Where agents reach it.
    pub agent_base: usize,
    pub size: usize,
    /// The pool it counts as: the CPU pool it was locked to, or the GPU pool of an import.
    pub pool_index: usize,
    /// Bit `i`: agent `i` may access it.
    pub agents: u64,
    pub kind: MappingKind,
}

impl MappedRange {
    fn holds_agent_range(&self, address: u64, end: Option<u64>) -> bool {
        address >= self.agent_base as u64 && end.is_some_and(|end| end <= (self.agent_base + self.size) as u64)
    }

    fn contains(&self, address: usize) -> bool {
        (self.host_base..self.host_base + self.size).contains(&address)
            || (self.agent_base..self.agent_base + self.size).contains(&address)
    }

    /// What to add to an agent address in this range to get its host address.
    fn host_delta(&self) -> u64 {
        (self.host_base as u64).wrapping_sub(self.agent_base as u64)
    }
}

/// Address space held with no access (`PROT_NONE`) for a lock's agent addresses: nothing else in
/// the process can be placed there while the lock lives, so an agent address never names another
/// object, and a host thread that dereferences one faults instead of reaching someone's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reservation {
    pub base: usize,
    pub length: usize,
}

impl Reservation {
    /// Reserves the pages an agent address range `[.., + size)` with `host`'s page offset needs.
    fn new(host: usize, size: usize) -> Result<(Self, usize), u32> {
        let offset = host % GRANULE;
        let length = (offset + size).checked_next_multiple_of(GRANULE).ok_or(status::ERROR_OUT_OF_RESOURCES)?;
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
        // SAFETY: a fresh anonymous mapping the kernel places; it touches no existing memory.
        let base = unsafe { libc::mmap(core::ptr::null_mut(), length, libc::PROT_NONE, flags, -1, 0) };
        if base == libc::MAP_FAILED {
            return Err(status::ERROR_OUT_OF_RESOURCES);
        }
        Ok((Self { base: base as usize, length }, base as usize + offset))
    }

    fn of(range: &MappedRange) -> Self {
        let base = range.agent_base - range.agent_base % GRANULE;
        let length = (range.agent_base % GRANULE + range.size).next_multiple_of(GRANULE);
        Self { base, length }
    }

    fn release(self) {
        // SAFETY: the reservation `new` made, no longer named by any mapping; it holds no memory
        // of anyone's.
        unsafe { libc::munmap(self.base as *mut core::ffi::c_void, self.length) };
    }
}

/// How a [`MappedRange`] came to be (`hsa_amd_pointer_info`'s LOCKED or IPC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MappingKind {
    Locked,
    Imported,
}

/// The live allocations, ordered by address so a range can be mapped back to its allocation,
/// and the locked host ranges.
///
/// Each behind a sharded reader-writer lock (a read takes the reading thread's own shard, a
/// write every shard): kernels on every core look ranges up in them at each dispatch, and one
/// `RwLock`'s reader count, a cache line every reader writes, was 6 % of a 16-core MLP serving
/// run; allocations and frees are rare beside those reads.
#[derive(Default)]
pub(crate) struct Allocations {
    live: ShardedLock<BTreeMap<usize, Allocation>>,
    mapped: ShardedLock<Vec<MappedRange>>,
}

impl Allocations {
    /// Allocates zeroed memory from `pool`; the size is rounded up to the granule. Only the
    /// pool's owner may access it (ROCr's `AllocateRestrict`).
    pub fn allocate(&self, pool_index: usize, pool: &Pool, size: usize) -> Result<*mut u8, u32> {
        if size == 0 {
            return Err(status::ERROR_INVALID_ARGUMENT);
        }
        if !pool.alloc_allowed() {
            return Err(status::ERROR_INVALID_ALLOCATION);
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
        let agents = AtomicU64::new(owner_bit(pool.agent_index));
        let (callbacks, user_data) = (std::sync::Mutex::new(Vec::new()), std::sync::atomic::AtomicUsize::new(0));
        let shared = std::sync::Mutex::new(None);
        self.write().insert(pointer as usize, Allocation { pool_index, layout, agents, callbacks, user_data, shared });
        Ok(pointer)
    }

    /// Frees a pointer this runtime allocated; anything else is refused without effect.
    pub fn free(&self, pools: &[Pool], pointer: *mut u8) -> Result<(), u32> {
        let allocation = self.write().remove(&(pointer as usize)).ok_or(status::ERROR_INVALID_ARGUMENT)?;
        revoke();
        let callbacks = allocation.callbacks.into_inner().unwrap_or_else(|poison| poison.into_inner());
        for (registered, callback, data) in callbacks {
            // SAFETY: the client registered the callback with this pointer and data; it runs
            // before the memory is freed, with the pointer registered, as ROCr runs it
            // (`Runtime::FreeMemory`).
            unsafe { callback(registered as *mut core::ffi::c_void, data as *mut core::ffi::c_void) };
        }
        if let Some(pool) = pools.get(allocation.pool_index) {
            pool.used.fetch_sub(allocation.layout.size() as u64, Ordering::AcqRel);
        }
        Self::unshare(pointer as usize, allocation.layout.size(), &allocation.shared);
        // SAFETY: the pointer came from `alloc_zeroed` with exactly this layout and was removed
        // from the live map, so it is freed once.
        unsafe { std::alloc::dealloc(pointer, allocation.layout) };
        Ok(())
    }

    /// `hsa_amd_register_deallocation_callback`: `pointer` may lie anywhere in a live allocation,
    /// and the callback later gets that pointer; in none is INVALID_ALLOCATION (ROCr's
    /// `Runtime::RegisterReleaseNotifier`, core/runtime/runtime.cpp).
    pub fn register_callback(&self, pointer: usize, callback: DeallocationCallback, data: usize) -> Result<(), u32> {
        let live = self.read();
        let (_, allocation) = Self::containing(&live, pointer).ok_or(status::ERROR_INVALID_ALLOCATION)?;
        allocation.callbacks.lock().unwrap_or_else(|poison| poison.into_inner()).push((pointer, callback, data));
        Ok(())
    }

    /// `hsa_amd_deregister_deallocation_callback`: removes every registration of `callback` with
    /// exactly `pointer`; none (or a pointer in no allocation) is INVALID_ARGUMENT (ROCr's
    /// `Runtime::DeregisterReleaseNotifier`).
    pub fn deregister_callback(&self, pointer: usize, callback: DeallocationCallback) -> Result<(), u32> {
        let live = self.read();
        let (_, allocation) = Self::containing(&live, pointer).ok_or(status::ERROR_INVALID_ARGUMENT)?;
        let mut callbacks = allocation.callbacks.lock().unwrap_or_else(|poison| poison.into_inner());
        let before = callbacks.len();
        callbacks.retain(|(registered, registered_callback, _)| {
            !(*registered == pointer && core::ptr::fn_addr_eq(*registered_callback, callback))
        });
        if callbacks.len() == before { Err(status::ERROR_INVALID_ARGUMENT) } else { Ok(()) }
    }

    /// The live allocation `address` lies in, with its base.
    fn containing(live: &BTreeMap<usize, Allocation>, address: usize) -> Option<(usize, &Allocation)> {
        let (&base, allocation) = live.range(..=address).next_back()?;
        (address < base + allocation.layout.size()).then_some((base, allocation))
    }

    /// The live allocation that contains `address`, if any.
    pub fn info(&self, address: usize) -> Option<AllocationInfo> {
        let live = self.read();
        let (base, allocation) = Self::containing(&live, address)?;
        Some(AllocationInfo {
            base,
            size: allocation.layout.size(),
            pool_index: allocation.pool_index,
            agents: allocation.agents.load(Ordering::Acquire),
            user_data: allocation.user_data.load(Ordering::Acquire),
        })
    }

    /// `hsa_amd_pointer_info_set_userdata`: `pointer` must start a live allocation.
    pub fn set_user_data(&self, pointer: usize, user_data: usize) -> Result<(), u32> {
        let live = self.read();
        let allocation = live.get(&pointer).ok_or(status::ERROR_INVALID_ARGUMENT)?;
        allocation.user_data.store(user_data, Ordering::Release);
        Ok(())
    }

    /// `hsa_amd_agents_allow_access`: `pointer` must be the start of a live allocation.
    pub fn allow(&self, pointer: usize, agents: u64) -> Result<(), u32> {
        let live = self.read();
        let allocation = live.get(&pointer).ok_or(status::ERROR_INVALID_ARGUMENT)?;
        allocation.agents.fetch_or(agents, Ordering::AcqRel);
        Ok(())
    }

    /// Makes the allocation that starts at `pointer` shareable with other processes: `back`
    /// moves its memory onto a shared file the first time (later calls reuse the file). `len`
    /// must be the allocation's length as the client asked for it (rounded up to the granule, its
    /// size), else INVALID_ARGUMENT, as a pointer that starts no allocation is (`hsa_ext_amd.h`).
    /// Returns the file's descriptor and inode and the shared size.
    pub fn share(
        &self,
        pointer: usize,
        len: usize,
        back: impl FnOnce(usize, usize) -> Result<super::shared_file::SharedFile, u32>,
    ) -> Result<(i32, u64, usize), u32> {
        let live = self.read();
        let allocation = live.get(&pointer).ok_or(status::ERROR_INVALID_ARGUMENT)?;
        let size = allocation.layout.size();
        if len == 0 || len.checked_next_multiple_of(GRANULE) != Some(size) {
            return Err(status::ERROR_INVALID_ARGUMENT);
        }
        let mut shared = allocation.shared.lock().unwrap_or_else(|poison| poison.into_inner());
        if shared.is_none() {
            *shared = Some(back(pointer, size)?);
        }
        let file = shared.as_ref().map(|file| (file.descriptor(), file.inode));
        file.map(|(descriptor, inode)| (descriptor, inode, size)).ok_or(status::ERROR)
    }

    /// Gives a shared allocation its private memory back before it is freed.
    fn unshare(pointer: usize, size: usize, shared: &std::sync::Mutex<Option<super::shared_file::SharedFile>>) {
        if shared.lock().unwrap_or_else(|poison| poison.into_inner()).take().is_some() {
            super::shared_file::make_private(pointer, size);
        }
    }

    /// Adds an import's mapping (one more, whatever it overlaps).
    pub fn map(&self, range: MappedRange) {
        self.mapped_write().push(range);
    }

    /// Locks `[host, host + size)` for `agents` as pool `pool_index`'s memory and returns its
    /// agent address. A range locked already (the same start and size) keeps its agent address
    /// and counts one more lock, as the thunk counts registrations (`registration_count`); any
    /// other range gets a reservation of its own.
    pub fn lock(&self, host: usize, size: usize, pool_index: usize, agents: u64) -> Result<usize, u32> {
        let mut mapped = self.mapped_write();
        let existing = mapped
            .iter()
            .find(|range| range.kind == MappingKind::Locked && range.host_base == host && range.size == size);
        let agent_base = match existing {
            Some(range) => range.agent_base,
            None => Reservation::new(host, size)?.1,
        };
        mapped.push(MappedRange { host_base: host, agent_base, size, pool_index, agents, kind: MappingKind::Locked });
        Ok(agent_base)
    }

    /// Removes the newest mapping of `kind` whose host range starts at `host`, and releases a
    /// lock's reservation once no lock names it; a pointer none starts is INVALID_ARGUMENT
    /// (`hsa_ext_amd.h` leaves an unlock of unlocked memory undefined; the soft runtime refuses
    /// it, changing nothing).
    pub fn unmap(&self, host: usize, kind: MappingKind) -> Result<MappedRange, u32> {
        let mut mapped = self.mapped_write();
        let newest = mapped
            .iter()
            .rposition(|range| range.host_base == host && range.kind == kind)
            .ok_or(status::ERROR_INVALID_ARGUMENT)?;
        let removed = mapped.remove(newest);
        revoke();
        let still_named = mapped.iter().any(|range| range.kind == kind && range.agent_base == removed.agent_base);
        drop(mapped);
        if kind == MappingKind::Locked && !still_named {
            Reservation::of(&removed).release();
        }
        Ok(removed)
    }

    /// The newest mapping whose host or agent range contains `address`, if any.
    pub fn mapped_at(&self, address: usize) -> Option<MappedRange> {
        self.mapped_read().iter().rev().find(|range| range.contains(address)).copied()
    }

    /// The host address of `[address, address + length)` for the runtime's own copies and fills:
    /// a lock's agent addresses become the host memory behind them; any other address is the
    /// host's already. A range that starts among a lock's agent addresses and runs past them is
    /// INVALID_ARGUMENT: the rest is reserved address space, which no one may touch.
    pub fn host_address(&self, address: usize, length: usize) -> Result<usize, u32> {
        let mapped = self.mapped_read();
        let Some(range) = mapped.iter().find(|range| {
            range.kind == MappingKind::Locked && (range.agent_base..range.agent_base + range.size).contains(&address)
        }) else {
            return Ok(address);
        };
        if !range.holds_agent_range(address as u64, (address as u64).checked_add(length as u64)) {
            return Err(status::ERROR_INVALID_ARGUMENT);
        }
        Ok((address as u64).wrapping_add(range.host_delta()) as usize)
    }

    /// [`Self::host_address`] of a copy's destination and source, `length` bytes each.
    pub fn host_addresses(&self, dst: usize, src: usize, length: usize) -> Result<(usize, usize), u32> {
        Ok((self.host_address(dst, length)?, self.host_address(src, length)?))
    }

    /// Where agent `agent_index` touching `[address, address + length)` lands in host memory: an
    /// allocation it was granted (the same address), or a mapping made for it (its host memory).
    /// Failing both, a mapping that holds the range makes the fault NotGranted; otherwise the
    /// allocation's answer stands.
    pub fn translate(&self, agent_index: usize, address: u64, length: u64) -> Result<u64, AccessFault> {
        if let Some((_, _, delta)) = self.granted_range(agent_index, address, length) {
            return Ok(address.wrapping_add(delta));
        }
        let end = address.checked_add(length);
        if self.mapped_read().iter().any(|range| range.holds_agent_range(address, end)) {
            return Err(AccessFault::NotGranted);
        }
        self.check_allocation(agent_index, address, length).map(|()| address)
    }

    /// The range granted to agent `agent_index` that holds `[address, address + length)`, as
    /// `(start, end, delta)` with `delta` what turns its agent addresses into host ones: an
    /// allocation, or a mapping made for the agent; `None` if none does.
    pub fn granted_range(&self, agent_index: usize, address: u64, length: u64) -> Option<(u64, u64, u64)> {
        if let Some((start, end)) = self.granted_allocation(agent_index, address, length) {
            return Some((start, end, 0));
        }
        let mapped = self.mapped_read();
        let end = address.checked_add(length);
        mapped
            .iter()
            .find(|range| range.holds_agent_range(address, end) && range.agents & owner_bit(agent_index) != 0)
            .map(|range| (range.agent_base as u64, (range.agent_base + range.size) as u64, range.host_delta()))
    }

    /// The allocation granted to agent `agent_index` that holds `[address, address + length)`,
    /// as `(start, end)`; `None` if none does (mappings are not looked at).
    fn granted_allocation(&self, agent_index: usize, address: u64, length: u64) -> Option<(u64, u64)> {
        let live = self.read();
        let (start, allocation) = live.range(..=address as usize).next_back()?;
        let end = *start as u64 + allocation.layout.size() as u64;
        let fits = address.checked_add(length).is_some_and(|last| last <= end);
        let granted = allocation.agents.load(Ordering::Acquire) & owner_bit(agent_index) != 0;
        (fits && granted).then_some((*start as u64, end))
    }

    fn check_allocation(&self, agent_index: usize, address: u64, length: u64) -> Result<(), AccessFault> {
        let live = self.read();
        let (start, allocation) = live.range(..=address as usize).next_back().ok_or(AccessFault::NotMapped)?;
        let end = *start as u64 + allocation.layout.size() as u64;
        if address.checked_add(length).is_none_or(|last| last > end) {
            return Err(AccessFault::NotMapped);
        }
        if allocation.agents.load(Ordering::Acquire) & owner_bit(agent_index) == 0 {
            return Err(AccessFault::NotGranted);
        }
        Ok(())
    }

    pub fn live_count(&self) -> usize {
        self.read().len()
    }

    pub fn free_all(&self) {
        let live = std::mem::take(&mut *self.write());
        let mapped = std::mem::take(&mut *self.mapped_write());
        revoke();
        for (pointer, allocation) in live {
            Self::unshare(pointer, allocation.layout.size(), &allocation.shared);
            // SAFETY: as in `free`; the map is emptied, so each pointer is freed once.
            unsafe { std::alloc::dealloc(pointer as *mut u8, allocation.layout) };
        }
        let mut reservations: Vec<Reservation> =
            mapped.iter().filter(|range| range.kind == MappingKind::Locked).map(Reservation::of).collect();
        reservations.sort_unstable_by_key(|reservation| reservation.base);
        reservations.dedup();
        reservations.into_iter().for_each(Reservation::release);
    }

    fn mapped_read(&self) -> ShardedLockReadGuard<'_, Vec<MappedRange>> {
        self.mapped.read().unwrap_or_else(|poison| poison.into_inner())
    }

    fn mapped_write(&self) -> ShardedLockWriteGuard<'_, Vec<MappedRange>> {
        self.mapped.write().unwrap_or_else(|poison| poison.into_inner())
    }

    fn read(&self) -> ShardedLockReadGuard<'_, BTreeMap<usize, Allocation>> {
        self.live.read().unwrap_or_else(|poison| poison.into_inner())
    }

    fn write(&self) -> ShardedLockWriteGuard<'_, BTreeMap<usize, Allocation>> {
        self.live.write().unwrap_or_else(|poison| poison.into_inner())
    }
}

/// Counts removals of memory an agent could reach (an allocation freed, a mapping removed, a
/// runtime's memory released), in every runtime of the process. A granted range a thread
/// remembers (`isa_exec`) holds while this is unchanged since it was found: a removal that
/// happens before a dispatch starts is seen by every check of that dispatch, and a range
/// found once serves every later dispatch instead of being found again under the maps' locks
/// (a seventh of a 16-core MLP serving run's runtime time was those lookups).
static REVOCATIONS: AtomicU64 = AtomicU64::new(1);

/// The present count of removals ([`REVOCATIONS`]); read it before looking a range up.
pub(crate) fn revocations() -> u64 {
    REVOCATIONS.load(Ordering::Acquire)
}

/// Counts a removal: called after the range leaves the maps and before its memory is released.
fn revoke() {
    REVOCATIONS.fetch_add(1, Ordering::AcqRel);
}

/// The access bit of agent `index` (a runtime holds at most 64 agents).
pub(crate) fn owner_bit(index: usize) -> u64 {
    1u64.checked_shl(index as u32).unwrap_or(0)
}
