//! Thin `Result` wrappers over the table for the calls made off the hot path: discovery, pools,
//! queue and signal lifetime, executables.

use core::ffi::{c_int, c_void};

use crate::sys::*;
use crate::{Hsa, HsaResult};

/// What `aqueduct info` and device selection need to know about an agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentInfo {
    pub agent: hsa_agent_t,
    pub name: String,
    pub product_name: String,
    pub device_type: u32,
    pub isa_names: Vec<String>,
    pub uuid: String,
    pub wavefront_size: u32,
    pub compute_units: u32,
    pub queue_min_packets: u32,
    pub queue_max_packets: u32,
    pub queues_max: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolKindInfo {
    CoarseGrained,
    FineGrained,
    /// `EXTENDED_SCOPE_FINE_GRAINED` (ROCm 6.x): device memory coherent at system scope.
    ExtendedFineGrained,
    Kernarg,
    /// The GROUP (LDS) segment: reported, never allocated from.
    Group,
    Other(u32),
}

/// How an agent may reach a pool (`hsa_amd_agent_memory_pool_get_info`), and over what link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolReach {
    /// `hsa_amd_memory_pool_access_t`: never (0), allowed by default (1), after
    /// `hsa_amd_agents_allow_access` (2).
    pub access: u32,
    /// Link hops between the agent and the pool's owner (0 for its own pools).
    pub hops: u32,
    /// The first hop's link, when there is one.
    pub link: Option<hsa_amd_memory_pool_link_info_t>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolInfo {
    pub pool: hsa_amd_memory_pool_t,
    pub kind: PoolKindInfo,
    pub global_flags: u32,
    pub size: usize,
    pub alloc_allowed: bool,
    pub granule: usize,
    pub alignment: usize,
    pub accessible_by_all: bool,
}

unsafe extern "C" fn collect_handle<T: Copy>(item: T, data: *mut c_void) -> hsa_status_t {
    // SAFETY: `data` is the `Vec<T>` the iterating wrapper passed in, alive for the call.
    unsafe { (*data.cast::<Vec<T>>()).push(item) };
    status::SUCCESS
}

fn c_string(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|byte| *byte == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

impl Hsa {
    /// Reads an attribute of plain type `T`.
    fn info<T: bytemuck::Pod>(
        &self,
        call: &'static str,
        get: impl FnOnce(*mut c_void) -> hsa_status_t,
    ) -> HsaResult<T> {
        let mut value = T::zeroed();
        self.check(get((&mut value as *mut T).cast()), call)?;
        Ok(value)
    }

    pub fn timestamp_frequency(&self) -> HsaResult<u64> {
        // SAFETY: TIMESTAMP_FREQUENCY is a u64 attribute.
        self.info("hsa_system_get_info", |out| unsafe {
            (self.api.hsa_system_get_info)(system_info::TIMESTAMP_FREQUENCY, out)
        })
    }

    pub fn agents(&self) -> HsaResult<Vec<hsa_agent_t>> {
        let mut agents: Vec<hsa_agent_t> = Vec::new();
        // SAFETY: the callback pushes into `agents`, which outlives the call.
        let status = unsafe {
            (self.api.hsa_iterate_agents)(Some(collect_handle::<hsa_agent_t>), (&mut agents as *mut Vec<_>).cast())
        };
        self.check(status, "hsa_iterate_agents")?;
        Ok(agents)
    }

    pub fn agent_u32(&self, agent: hsa_agent_t, attribute: u32) -> HsaResult<u32> {
        // SAFETY: the caller asks only for u32 attributes.
        self.info("hsa_agent_get_info", |out| unsafe { (self.api.hsa_agent_get_info)(agent, attribute, out) })
    }

    pub fn agent_string<const N: usize>(&self, agent: hsa_agent_t, attribute: u32) -> HsaResult<String> {
        // SAFETY: char[N] attribute; N matches the documented size.
        let bytes: [u8; N] =
            self.info("hsa_agent_get_info", |out| unsafe { (self.api.hsa_agent_get_info)(agent, attribute, out) })?;
        Ok(c_string(&bytes))
    }

    pub fn isa_names(&self, agent: hsa_agent_t) -> HsaResult<Vec<String>> {
        let mut isas: Vec<hsa_isa_t> = Vec::new();
        // SAFETY: the callback pushes into `isas`, which outlives the call.
        let status = unsafe {
            (self.api.hsa_agent_iterate_isas)(
                agent,
                Some(collect_handle::<hsa_isa_t>),
                (&mut isas as *mut Vec<_>).cast(),
            )
        };
        self.check(status, "hsa_agent_iterate_isas")?;
        isas.into_iter()
            .map(|isa| {
                // SAFETY: NAME_LENGTH is a u32 attribute.
                let length: u32 = self.info("hsa_isa_get_info_alt", |out| unsafe {
                    (self.api.hsa_isa_get_info_alt)(isa, isa_info::NAME_LENGTH, out)
                })?;
                let mut name = vec![0u8; length as usize + 1];
                // SAFETY: the buffer holds NAME_LENGTH bytes plus one.
                let status = unsafe { (self.api.hsa_isa_get_info_alt)(isa, isa_info::NAME, name.as_mut_ptr().cast()) };
                self.check(status, "hsa_isa_get_info_alt")?;
                Ok(c_string(&name))
            })
            .collect()
    }

    pub fn agent_info(&self, agent: hsa_agent_t) -> HsaResult<AgentInfo> {
        let device_type = self.agent_u32(agent, agent_info::DEVICE)?;
        let gpu = device_type == device_type::GPU;
        Ok(AgentInfo {
            agent,
            name: self.agent_string::<64>(agent, agent_info::NAME)?,
            product_name: self.agent_string::<64>(agent, agent_info::AMD_PRODUCT_NAME).unwrap_or_default(),
            device_type,
            isa_names: if gpu { self.isa_names(agent)? } else { Vec::new() },
            uuid: self.agent_string::<21>(agent, agent_info::AMD_UUID).unwrap_or_default(),
            wavefront_size: if gpu { self.agent_u32(agent, agent_info::WAVEFRONT_SIZE)? } else { 0 },
            compute_units: self.agent_u32(agent, agent_info::AMD_COMPUTE_UNIT_COUNT).unwrap_or(0),
            queue_min_packets: if gpu { self.agent_u32(agent, agent_info::QUEUE_MIN_SIZE)? } else { 0 },
            queue_max_packets: if gpu { self.agent_u32(agent, agent_info::QUEUE_MAX_SIZE)? } else { 0 },
            queues_max: if gpu { self.agent_u32(agent, agent_info::QUEUES_MAX)? } else { 0 },
        })
    }

    /// The agent's `HDP_MEM_FLUSH_CNTL` register, where its memory path has one
    /// (`HSA_AMD_AGENT_INFO_HDP_FLUSH`; null on APUs, whose host writes need no flush).
    pub fn hdp_flush_register(&self, agent: hsa_agent_t) -> HsaResult<Option<u64>> {
        const _: () = assert!(size_of::<crate::sys::hsa_amd_hdp_flush_t>() == size_of::<[u64; 2]>());
        // SAFETY: HDP_FLUSH is an hsa_amd_hdp_flush_t attribute: two pointers, read as the two
        // 64-bit words they are (checked above, and against hsa_ext_amd.h by abi_conformance).
        let [memory_flush, _register_flush]: [u64; 2] = self.info("hsa_agent_get_info", |out| unsafe {
            (self.api.hsa_agent_get_info)(agent, agent_info::AMD_HDP_FLUSH, out)
        })?;
        Ok((memory_flush != 0).then_some(memory_flush))
    }

    /// The GPU agents, described.
    pub fn gpu_agents(&self) -> HsaResult<Vec<AgentInfo>> {
        self.agents_of_type(device_type::GPU)
    }

    /// The CPU agents (the hosts' NUMA nodes), described.
    pub fn cpu_agents(&self) -> HsaResult<Vec<AgentInfo>> {
        self.agents_of_type(device_type::CPU)
    }

    fn agents_of_type(&self, wanted: u32) -> HsaResult<Vec<AgentInfo>> {
        self.agents()?
            .into_iter()
            .map(|agent| self.agent_info(agent))
            .filter(|info| info.as_ref().map_or(true, |info| info.device_type == wanted))
            .collect()
    }

    /// The first pool of `kind` that a CPU agent owns (ROCr puts fine-grained and kernarg memory
    /// there, not on GPU agents), allocatable.
    pub fn host_pool(&self, kind: PoolKindInfo) -> HsaResult<PoolInfo> {
        for cpu in self.cpu_agents()? {
            if let Some(pool) = self.pools(cpu.agent)?.into_iter().find(|pool| pool.kind == kind && pool.alloc_allowed)
            {
                return Ok(pool);
            }
        }
        Err(crate::HsaError {
            status: status::ERROR_INVALID_MEMORY_POOL,
            call: "hsa_amd_agent_iterate_memory_pools",
            message: format!("no CPU agent has a {kind:?} pool"),
        })
    }

    /// How `agent` may reach `pool`.
    pub fn pool_reach(&self, agent: hsa_agent_t, pool: hsa_amd_memory_pool_t) -> HsaResult<PoolReach> {
        let call = "hsa_amd_agent_memory_pool_get_info";
        // SAFETY (each closure): ACCESS and NUM_LINK_HOPS are u32 attributes.
        let access: u32 = self.info(call, |out| unsafe {
            (self.api.hsa_amd_agent_memory_pool_get_info)(agent, pool, agent_pool_info::ACCESS, out)
        })?;
        let hops: u32 = self.info(call, |out| unsafe {
            (self.api.hsa_amd_agent_memory_pool_get_info)(agent, pool, agent_pool_info::NUM_LINK_HOPS, out)
        })?;
        let link = if hops > 0 {
            let mut links = vec![hsa_amd_memory_pool_link_info_t::default(); hops as usize];
            // SAFETY: LINK_INFO fills NUM_LINK_HOPS entries; the vector holds that many.
            let status = unsafe {
                (self.api.hsa_amd_agent_memory_pool_get_info)(
                    agent,
                    pool,
                    agent_pool_info::LINK_INFO,
                    links.as_mut_ptr().cast(),
                )
            };
            self.check(status, call)?;
            links.first().copied()
        } else {
            None
        };
        Ok(PoolReach { access, hops, link })
    }

    /// `hsa_amd_agents_allow_access`: maps the allocation at `pointer` for `agents`.
    pub fn allow_access(&self, agents: &[hsa_agent_t], pointer: *const u8) -> HsaResult<()> {
        let count = u32::try_from(agents.len()).unwrap_or(u32::MAX);
        // SAFETY: `count` agents at `agents`; flags must be null (ROCr refuses others).
        let status = unsafe {
            (self.api.hsa_amd_agents_allow_access)(count, agents.as_ptr(), core::ptr::null(), pointer.cast())
        };
        self.check(status, "hsa_amd_agents_allow_access")
    }

    /// Converts an agent's device-clock tick to the system domain.
    pub fn tick_to_system(&self, agent: hsa_agent_t, tick: u64) -> HsaResult<u64> {
        let mut system = 0u64;
        // SAFETY: valid out-pointer.
        let status = unsafe { (self.api.hsa_amd_profiling_convert_tick_to_system_domain)(agent, tick, &mut system) };
        self.check(status, "hsa_amd_profiling_convert_tick_to_system_domain")?;
        Ok(system)
    }

    /// `hsa_amd_profiling_set_profiler_enabled`: whether the queue's packets write start and end
    /// timestamps into their completion signals.
    ///
    /// # Safety
    /// `queue` must be a live queue of this provider.
    pub unsafe fn set_profiler_enabled(&self, queue: *mut hsa_queue_t, enabled: bool) -> HsaResult<()> {
        // SAFETY: forwarded to the caller.
        let status = unsafe { (self.api.hsa_amd_profiling_set_profiler_enabled)(queue, c_int::from(enabled)) };
        self.check(status, "hsa_amd_profiling_set_profiler_enabled")
    }

    /// `hsa_amd_queue_set_priority`: LOW, NORMAL or HIGH (`sys::enums::QUEUE_PRIORITY_*`).
    ///
    /// # Safety
    /// `queue` must be a live queue of this provider.
    pub unsafe fn queue_set_priority(&self, queue: *mut hsa_queue_t, priority: u32) -> HsaResult<()> {
        // SAFETY: forwarded to the caller.
        let status = unsafe { (self.api.hsa_amd_queue_set_priority)(queue, priority) };
        self.check(status, "hsa_amd_queue_set_priority")
    }

    /// `hsa_amd_queue_cu_set_mask` with `mask.len() * 32` bits (none: every CU). Returns whether
    /// the runtime reduced the mask (`HSA_STATUS_CU_MASK_REDUCED`: a process-wide `HSA_CU_MASK`
    /// disabled some of the CUs asked for), which is a success.
    ///
    /// # Safety
    /// `queue` must be a live queue of this provider.
    pub unsafe fn queue_set_cu_mask(&self, queue: *mut hsa_queue_t, mask: &[u32]) -> HsaResult<bool> {
        let bits = u32::try_from(mask.len() * 32)
            .map_err(|_| self.error(status::ERROR_INVALID_ARGUMENT, "hsa_amd_queue_cu_set_mask"))?;
        let words = if mask.is_empty() { core::ptr::null() } else { mask.as_ptr() };
        // SAFETY: `words` holds `bits` bits (or is null with 0); the caller vouches for `queue`.
        let status = unsafe { (self.api.hsa_amd_queue_cu_set_mask)(queue, bits, words) };
        if status == status::CU_MASK_REDUCED {
            return Ok(true);
        }
        self.check(status, "hsa_amd_queue_cu_set_mask").map(|()| false)
    }

    /// `hsa_amd_queue_cu_get_mask`: the first `out.len() * 32` bits of the queue's CU mask.
    ///
    /// # Safety
    /// `queue` must be a live queue of this provider.
    pub unsafe fn queue_cu_mask(&self, queue: *mut hsa_queue_t, out: &mut [u32]) -> HsaResult<()> {
        let bits = u32::try_from(out.len() * 32)
            .map_err(|_| self.error(status::ERROR_INVALID_ARGUMENT, "hsa_amd_queue_cu_get_mask"))?;
        // SAFETY: `out` has room for `bits` bits; the caller vouches for `queue`.
        let status = unsafe { (self.api.hsa_amd_queue_cu_get_mask)(queue, bits, out.as_mut_ptr()) };
        self.check(status, "hsa_amd_queue_cu_get_mask")
    }

    /// `hsa_amd_profiling_get_dispatch_time`: the start and end, in system-domain ticks, that the
    /// last packet completing on `signal` wrote (with profiling enabled on its queue).
    pub fn dispatch_time(&self, agent: hsa_agent_t, signal: hsa_signal_t) -> HsaResult<(u64, u64)> {
        let mut time = hsa_amd_profiling_dispatch_time_t::default();
        // SAFETY: valid out-pointer; the provider validates the handles.
        let status = unsafe { (self.api.hsa_amd_profiling_get_dispatch_time)(agent, signal, &mut time) };
        self.check(status, "hsa_amd_profiling_get_dispatch_time")?;
        Ok((time.start, time.end))
    }

    /// `HSA_SYSTEM_INFO_TIMESTAMP`: the system domain's clock now.
    pub fn system_timestamp(&self) -> HsaResult<u64> {
        // SAFETY: TIMESTAMP is a u64 attribute.
        self.info("hsa_system_get_info", |out| unsafe { (self.api.hsa_system_get_info)(system_info::TIMESTAMP, out) })
    }

    /// Registers a system event handler (GPU memory faults). HSA has no way to unregister one:
    /// `data` must stay valid for as long as the runtime is initialized.
    ///
    /// # Safety
    /// `callback` must be safe to call with `data` from any runtime thread until shutdown.
    pub unsafe fn register_system_event_handler(
        &self,
        callback: hsa_amd_system_event_callback_t,
        data: *mut c_void,
    ) -> HsaResult<()> {
        // SAFETY: forwarded to the caller.
        let status = unsafe { (self.api.hsa_amd_register_system_event_handler)(callback, data) };
        self.check(status, "hsa_amd_register_system_event_handler")
    }

    pub fn pools(&self, agent: hsa_agent_t) -> HsaResult<Vec<PoolInfo>> {
        let mut pools: Vec<hsa_amd_memory_pool_t> = Vec::new();
        // SAFETY: the callback pushes into `pools`, which outlives the call.
        let status = unsafe {
            (self.api.hsa_amd_agent_iterate_memory_pools)(
                agent,
                Some(collect_handle::<hsa_amd_memory_pool_t>),
                (&mut pools as *mut Vec<_>).cast(),
            )
        };
        self.check(status, "hsa_amd_agent_iterate_memory_pools")?;
        pools
            .into_iter()
            .map(|pool| {
                // SAFETY (each closure): the attribute's documented type matches the read type.
                let segment: u32 = self.info("hsa_amd_memory_pool_get_info", |out| unsafe {
                    (self.api.hsa_amd_memory_pool_get_info)(pool, pool_info::SEGMENT, out)
                })?;
                let flags: u32 = if segment == pool_info::SEGMENT_GLOBAL {
                    self.info("hsa_amd_memory_pool_get_info", |out| unsafe {
                        (self.api.hsa_amd_memory_pool_get_info)(pool, pool_info::GLOBAL_FLAGS, out)
                    })?
                } else {
                    0
                };
                let size: usize = self.info("hsa_amd_memory_pool_get_info", |out| unsafe {
                    (self.api.hsa_amd_memory_pool_get_info)(pool, pool_info::SIZE, out)
                })?;
                let alloc_allowed: u8 = self.info("hsa_amd_memory_pool_get_info", |out| unsafe {
                    (self.api.hsa_amd_memory_pool_get_info)(pool, pool_info::RUNTIME_ALLOC_ALLOWED, out)
                })?;
                let granule: usize = self.info("hsa_amd_memory_pool_get_info", |out| unsafe {
                    (self.api.hsa_amd_memory_pool_get_info)(pool, pool_info::RUNTIME_ALLOC_GRANULE, out)
                })?;
                let alignment: usize = self.info("hsa_amd_memory_pool_get_info", |out| unsafe {
                    (self.api.hsa_amd_memory_pool_get_info)(pool, pool_info::RUNTIME_ALLOC_ALIGNMENT, out)
                })?;
                let accessible: u8 = self.info("hsa_amd_memory_pool_get_info", |out| unsafe {
                    (self.api.hsa_amd_memory_pool_get_info)(pool, pool_info::ACCESSIBLE_BY_ALL, out)
                })?;
                let kind = if segment == pool_info::SEGMENT_GROUP {
                    PoolKindInfo::Group
                } else if segment != pool_info::SEGMENT_GLOBAL {
                    PoolKindInfo::Other(segment)
                } else if flags & pool_info::GLOBAL_FLAG_KERNARG_INIT != 0 {
                    PoolKindInfo::Kernarg
                } else if flags & pool_info::GLOBAL_FLAG_COARSE_GRAINED != 0 {
                    PoolKindInfo::CoarseGrained
                } else if flags & pool_info::GLOBAL_FLAG_FINE_GRAINED != 0 {
                    PoolKindInfo::FineGrained
                } else if flags & crate::rocr_facts::GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED != 0 {
                    PoolKindInfo::ExtendedFineGrained
                } else {
                    PoolKindInfo::Other(segment)
                };
                Ok(PoolInfo {
                    pool,
                    kind,
                    global_flags: flags,
                    size,
                    alloc_allowed: alloc_allowed != 0,
                    granule,
                    alignment,
                    accessible_by_all: accessible != 0,
                })
            })
            .collect()
    }

    /// A pool attribute of plain type `T` (for reports; `pools` reads the ones the engine uses).
    pub fn pool_attribute<T: bytemuck::Pod>(&self, pool: hsa_amd_memory_pool_t, attribute: u32) -> HsaResult<T> {
        // SAFETY: the caller names an attribute whose documented type is `T`.
        self.info("hsa_amd_memory_pool_get_info", |out| unsafe {
            (self.api.hsa_amd_memory_pool_get_info)(pool, attribute, out)
        })
    }

    pub fn allocate(&self, pool: hsa_amd_memory_pool_t, size: usize) -> HsaResult<*mut u8> {
        let mut pointer: *mut c_void = core::ptr::null_mut();
        // SAFETY: valid out-pointer.
        let status = unsafe { (self.api.hsa_amd_memory_pool_allocate)(pool, size, 0, &mut pointer) };
        self.check(status, "hsa_amd_memory_pool_allocate")?;
        Ok(pointer.cast())
    }

    /// # Safety
    /// `pointer` must not be used after this call.
    pub unsafe fn free(&self, pointer: *mut u8) -> HsaResult<()> {
        // SAFETY: forwarded to the caller.
        let status = unsafe { (self.api.hsa_amd_memory_pool_free)(pointer.cast()) };
        self.check(status, "hsa_amd_memory_pool_free")
    }

    /// A signal only agents wait on (`HSA_AMD_SIGNAL_AMD_GPU_ONLY`): ROCr gives it no KFD event,
    /// of which a process has 4096; a host wait on it busy-polls.
    pub fn signal_create_gpu_only(&self, initial: i64) -> HsaResult<hsa_signal_t> {
        let mut signal = hsa_signal_t::default();
        // SAFETY: valid out-pointer; no consumers.
        let status = unsafe {
            (self.api.hsa_amd_signal_create)(initial, 0, core::ptr::null(), amd_event::SIGNAL_AMD_GPU_ONLY, &mut signal)
        };
        self.check(status, "hsa_amd_signal_create")?;
        Ok(signal)
    }

    /// An interrupt signal, for what the host sleeps on.
    pub fn signal_create(&self, initial: i64) -> HsaResult<hsa_signal_t> {
        let mut signal = hsa_signal_t::default();
        // SAFETY: valid out-pointer; no consumers.
        let status = unsafe { (self.api.hsa_signal_create)(initial, 0, core::ptr::null(), &mut signal) };
        self.check(status, "hsa_signal_create")?;
        Ok(signal)
    }

    pub fn signal_destroy(&self, signal: hsa_signal_t) -> HsaResult<()> {
        // SAFETY: the provider validates the handle.
        let status = unsafe { (self.api.hsa_signal_destroy)(signal) };
        self.check(status, "hsa_signal_destroy")
    }

    /// Creates a queue; `callback` receives asynchronous queue errors together with `data`.
    ///
    /// # Safety
    /// `data` must stay valid for whatever `callback` does with it until the queue is destroyed.
    pub unsafe fn queue_create(
        &self,
        agent: hsa_agent_t,
        packets: u32,
        callback: hsa_queue_error_callback_t,
        data: *mut c_void,
    ) -> HsaResult<*mut hsa_queue_t> {
        let mut queue: *mut hsa_queue_t = core::ptr::null_mut();
        // SAFETY: valid out-pointer; UINT32_MAX segment sizes mean "the agent's default".
        let status = unsafe {
            (self.api.hsa_queue_create)(
                agent,
                packets,
                enums::QUEUE_TYPE_MULTI,
                callback,
                data,
                u32::MAX,
                u32::MAX,
                &mut queue,
            )
        };
        self.check(status, "hsa_queue_create")?;
        Ok(queue)
    }

    /// # Safety
    /// Nothing may use `queue` after this call.
    pub unsafe fn queue_destroy(&self, queue: *mut hsa_queue_t) -> HsaResult<()> {
        // SAFETY: forwarded to the caller.
        let status = unsafe { (self.api.hsa_queue_destroy)(queue) };
        self.check(status, "hsa_queue_destroy")
    }

    /// Loads a code object for one agent and freezes the executable.
    pub fn load_executable(&self, agent: hsa_agent_t, code_object: &[u8]) -> HsaResult<hsa_executable_t> {
        let mut reader = hsa_code_object_reader_t::default();
        // SAFETY: the slice is valid for its length; out-pointer valid.
        let status = unsafe {
            (self.api.hsa_code_object_reader_create_from_memory)(
                code_object.as_ptr().cast(),
                code_object.len(),
                &mut reader,
            )
        };
        self.check(status, "hsa_code_object_reader_create_from_memory")?;
        let result = self.load_with_reader(agent, reader);
        // SAFETY: the reader is ours and no longer needed once loading finished.
        unsafe { (self.api.hsa_code_object_reader_destroy)(reader) };
        result
    }

    fn load_with_reader(&self, agent: hsa_agent_t, reader: hsa_code_object_reader_t) -> HsaResult<hsa_executable_t> {
        let mut executable = hsa_executable_t::default();
        // SAFETY: valid out-pointer, null options.
        let status = unsafe {
            (self.api.hsa_executable_create_alt)(
                enums::PROFILE_FULL,
                enums::DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
                core::ptr::null(),
                &mut executable,
            )
        };
        self.check(status, "hsa_executable_create_alt")?;
        // SAFETY: handles from the calls above; null options and loaded-object pointer allowed.
        let loaded = unsafe {
            (self.api.hsa_executable_load_agent_code_object)(
                executable,
                agent,
                reader,
                core::ptr::null(),
                core::ptr::null_mut(),
            )
        };
        let frozen = if loaded == status::SUCCESS {
            // SAFETY: valid executable handle.
            unsafe { (self.api.hsa_executable_freeze)(executable, core::ptr::null()) }
        } else {
            loaded
        };
        if frozen != status::SUCCESS {
            // SAFETY: valid executable handle, destroyed once on the failure path.
            unsafe { (self.api.hsa_executable_destroy)(executable) };
            return Err(self.error(
                frozen,
                if loaded == status::SUCCESS {
                    "hsa_executable_freeze"
                } else {
                    "hsa_executable_load_agent_code_object"
                },
            ));
        }
        Ok(executable)
    }

    /// The kernel object and segment sizes of `symbol` (e.g. `fill.kd`).
    pub fn kernel_symbol(
        &self,
        executable: hsa_executable_t,
        agent: hsa_agent_t,
        symbol: &str,
    ) -> HsaResult<KernelSymbol> {
        let name = std::ffi::CString::new(symbol)
            .map_err(|_| self.error(status::ERROR_INVALID_ARGUMENT, "hsa_executable_get_symbol_by_name"))?;
        let mut handle = hsa_executable_symbol_t::default();
        // SAFETY: NUL-terminated name, valid agent pointer and out-pointer.
        let status =
            unsafe { (self.api.hsa_executable_get_symbol_by_name)(executable, name.as_ptr(), &agent, &mut handle) };
        self.check(status, "hsa_executable_get_symbol_by_name")?;
        let get = |attribute| unsafe_symbol_info(self, handle, attribute);
        Ok(KernelSymbol {
            kernel_object: {
                // SAFETY: KERNEL_OBJECT is a u64 attribute.
                self.info("hsa_executable_symbol_get_info", |out| unsafe {
                    (self.api.hsa_executable_symbol_get_info)(handle, symbol_info::KERNEL_OBJECT, out)
                })?
            },
            kernarg_segment_size: get(symbol_info::KERNEL_KERNARG_SEGMENT_SIZE)?,
            kernarg_segment_alignment: get(symbol_info::KERNEL_KERNARG_SEGMENT_ALIGNMENT)?,
            group_segment_size: get(symbol_info::KERNEL_GROUP_SEGMENT_SIZE)?,
            private_segment_size: get(symbol_info::KERNEL_PRIVATE_SEGMENT_SIZE)?,
            dynamic_callstack: {
                // SAFETY: DYNAMIC_CALLSTACK is a bool attribute.
                let flag: u8 = self.info("hsa_executable_symbol_get_info", |out| unsafe {
                    (self.api.hsa_executable_symbol_get_info)(handle, symbol_info::KERNEL_DYNAMIC_CALLSTACK, out)
                })?;
                flag != 0
            },
        })
    }

    pub fn executable_destroy(&self, executable: hsa_executable_t) -> HsaResult<()> {
        // SAFETY: the provider validates the handle.
        let status = unsafe { (self.api.hsa_executable_destroy)(executable) };
        self.check(status, "hsa_executable_destroy")
    }
}

fn unsafe_symbol_info(hsa: &Hsa, symbol: hsa_executable_symbol_t, attribute: u32) -> HsaResult<u32> {
    // SAFETY: every attribute read through here is a u32 attribute.
    hsa.info("hsa_executable_symbol_get_info", |out| unsafe {
        (hsa.api.hsa_executable_symbol_get_info)(symbol, attribute, out)
    })
}

/// What a dispatch needs from a loaded kernel symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelSymbol {
    pub kernel_object: u64,
    pub kernarg_segment_size: u32,
    pub kernarg_segment_alignment: u32,
    pub group_segment_size: u32,
    pub private_segment_size: u32,
    /// `HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK`: the kernel's stack has no static
    /// bound, so `private_segment_size` is only its minimum.
    pub dynamic_callstack: bool,
}

impl KernelSymbol {
    /// The body of a one-dimensional dispatch of this kernel (`setup` = 1 dimension). The header
    /// is left for the producer to publish.
    pub fn dispatch_1d(
        &self,
        grid: u32,
        workgroup: u16,
        kernarg_address: u64,
        completion: hsa_signal_t,
    ) -> aqueduct_abi::KernelDispatchPacket {
        aqueduct_abi::KernelDispatchPacket {
            setup: 1,
            workgroup_size_x: workgroup,
            workgroup_size_y: 1,
            workgroup_size_z: 1,
            grid_size_x: grid,
            grid_size_y: 1,
            grid_size_z: 1,
            group_segment_size: self.group_segment_size,
            private_segment_size: self.private_segment_size,
            kernel_object: self.kernel_object,
            kernarg_address,
            completion_signal: completion.handle,
            ..Default::default()
        }
    }
}
