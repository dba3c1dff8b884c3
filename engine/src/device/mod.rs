//! The logical device: its provider, its physical agents with their pools and device library,
//! the shared semaphore table and queue registry, and the device World.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use aqueduct_builtins::{Builtin, DeviceLibrary};
use aqueduct_components::device_entities::{MemoryKind, ReleaseAfter};
use aqueduct_components::directory::CrossQueueWait;
use aqueduct_components::host_writes::HostWrites;
use aqueduct_components::semaphore_table::SemaphoreTable;
use aqueduct_hsa::sys::{hsa_amd_memory_pool_t, hsa_signal_t};
use aqueduct_hsa::{AgentInfo, Executable as HsaExecutable, Hsa, PoolKindInfo, ProviderKind};
use bevy_ecs::prelude::{Entity, QueryState, World};

mod profile;
pub(crate) mod programs;
pub(crate) mod queues;
pub(crate) mod release;

use crate::config::{DeviceSpec, EngineConfig, WaitStrategy};
use crate::error::{EngineError, EngineResult};
use crate::profile::{ExecutableRegistry, ProfileSession};

static NEXT_DEVICE_ID: AtomicU64 = AtomicU64::new(1);

/// A builtin kernel resolved on one agent.
pub(crate) use aqueduct_components::program::BuiltinObject as BuiltinKernel;

/// How a GPU agent reaches the memory the engine places for it: facts placement code reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AgentTopology {
    /// The host (CPU) agent whose system pools serve this GPU's host-visible and kernarg memory.
    pub host_agent: u64,
    /// The GPU's access to those pools: 2 (DISALLOWED_BY_DEFAULT) on ROCr, hence the grants.
    pub host_pool_access: u32,
    /// Link hops from the GPU to the host pools.
    pub host_link_hops: u32,
    /// The first hop's link type (`hsa_amd_link_info_type_t`: 2 = PCIe, 4 = xGMI), when there
    /// is a hop.
    pub host_link_type: Option<u32>,
    /// The first hop's NUMA distance, when there is a hop.
    pub host_numa_distance: Option<u32>,
}

/// One physical agent of the logical device.
pub(crate) struct AgentState {
    pub info: AgentInfo,
    /// The GPU's own coarse-grained (device-local) pool.
    pub device_pool: hsa_amd_memory_pool_t,
    /// The host agent's fine-grained and kernarg pools: ROCr puts them on the CPU agent.
    pub host_pool: hsa_amd_memory_pool_t,
    pub kernarg_pool: hsa_amd_memory_pool_t,
    /// Host-visible device memory: the device pool, when the host may be granted access to it;
    /// otherwise why not.
    pub host_visible_device: Result<hsa_amd_memory_pool_t, String>,
    /// The agent's HDP publication, when its memory path has HDP registers.
    pub host_writes: Option<Arc<HostWrites>>,
    pub topology: AgentTopology,
    pub builtins: [BuiltinKernel; Builtin::ALL.len()],
    /// The same kernels as a finished program carries them, made once and shared by every
    /// program recorded for the agent.
    pub builtin_objects: Arc<[aqueduct_components::program::BuiltinObject]>,
    pub library_target: &'static str,
    /// The device library's code object as embedded (what the profile hashes).
    pub library_code_object: &'static [u8],
    _library: HsaExecutable,
}

impl AgentState {
    /// The pool ROCr provides `kind` from on this agent, or why there is none.
    pub fn pool(&self, kind: MemoryKind) -> EngineResult<hsa_amd_memory_pool_t> {
        match kind {
            MemoryKind::DeviceLocal => Ok(self.device_pool),
            MemoryKind::HostVisible => Ok(self.host_pool),
            MemoryKind::HostVisibleDevice => self
                .host_visible_device
                .clone()
                .map_err(|reason| EngineError::MemoryKindUnavailable { kind, agent: self.info.name.clone(), reason }),
        }
    }

    /// `Builtin::ALL` lists the kernels in declaration order, so the discriminant is the index
    /// (a test below checks it).
    pub fn builtin(&self, builtin: Builtin) -> BuiltinKernel {
        self.builtins[builtin as usize]
    }
}

pub(crate) struct DeviceShared {
    pub id: u64,
    pub agents: Vec<AgentState>,
    pub strategy: CrossQueueWait,
    pub semaphores: Arc<SemaphoreTable>,
    /// Queues, semaphores, allocations, executables and finished command buffers as entities
    /// (off the hot path): what each holds, and when a released one may be freed.
    pub world: Mutex<World>,
    /// Entities released by their handles and not yet freed (`crate::release`).
    pub pending_releases: AtomicUsize,
    /// The query over them, built once: building one walks every archetype and allocates,
    /// which cost a dropped handle more than the rest of its release. Locked inside `world`.
    pub released: Mutex<QueryState<(Entity, &'static ReleaseAfter)>>,
    /// Which queues have parked submissions to admit when a semaphore advances.
    pub parked_queues: aqueduct_components::parked_queues::ParkedQueues,
    pub config: EngineConfig,
    pub provider_reason: String,
    /// Block Worlds and published images finished programs gave back, for the next to reuse.
    pub programs: programs::ProgramPools,
    /// Every queue created on the device, by index: its endpoint (the directory), its handle and
    /// its completion thread (a capture joins the live ones; a drain held on a queue's epoch
    /// drains that queue through it).
    pub queues: queues::QueueRegistry,
    /// Every executable loaded, for the profile's names and metadata.
    pub executables: ExecutableRegistry,
    /// The profile capture running on the device, if any.
    pub profile: Mutex<Option<Arc<ProfileSession>>>,
    /// The replay capture, which starts with the device and ends when it drops.
    pub replay: Option<Arc<crate::replay_capture::ReplayCapture>>,
    // Dropped last: everything above may call into the provider while dropping.
    pub hsa: Hsa,
}

impl DeviceShared {
    pub fn open(config: EngineConfig) -> EngineResult<Arc<Self>> {
        config.validate()?;
        let (hsa, reason) = open_provider(&config)?;
        let gpus = hsa.gpu_agents()?;
        let chosen = choose_agents(&config.device, gpus)?;
        if hsa.kind() == ProviderKind::Soft {
            aqueduct_builtins::soft_registrations()
                .for_each(|(id, kernels)| aqueduct_soft_hsa::register_kernels(id, kernels));
        }
        let host = HostPools::find(&hsa)?;
        let agents = chosen.into_iter().map(|info| open_agent(&hsa, &host, info)).collect::<EngineResult<Vec<_>>>()?;
        let strategy = choose_strategy(config.wait_strategy, hsa.kind(), &agents);
        tracing::info!(provider = hsa.kind().name(), agents = agents.len(), ?strategy, reason = %reason, "aqueduct device opened");
        let mut world = World::new();
        let released = Mutex::new(world.query::<(Entity, &ReleaseAfter)>());
        let executables = ExecutableRegistry::default();
        for agent in &agents {
            register_device_library(&executables, agent)?;
        }
        let profile = match config.profile.clone() {
            Some(profile) => Some(profile),
            None => crate::profile::ProfileConfig::from_env()?.map(|mut profile| {
                profile.output = env_capture_output(profile.output, &PROFILES_FROM_ENV);
                profile
            }),
        };
        let replay = match config.replay.clone() {
            Some(replay) => Some(replay),
            None => crate::replay_capture::ReplayConfig::from_env()?.map(|mut replay| {
                replay.output = env_capture_output(replay.output, &REPLAYS_FROM_ENV);
                replay
            }),
        };
        let replay = match replay {
            Some(replay) => {
                replay.validate()?;
                let header = aqueduct_profile::replay::ReplayHeader {
                    aqueduct_version: env!("CARGO_PKG_VERSION").to_string(),
                    provider: hsa.kind().name().to_string(),
                    device_spec: config.device.to_string(),
                    agents: agents
                        .iter()
                        .map(|agent| aqueduct_profile::AgentDescription {
                            name: agent.info.name.clone(),
                            isa: agent.info.isa_names.first().cloned().unwrap_or_default(),
                        })
                        .collect(),
                    wait_strategy: strategy_name(strategy).to_string(),
                    started_unix_ns: std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |since| since.as_nanos() as u64),
                };
                Some(crate::replay_capture::ReplayCapture::start(replay, header)?)
            }
            None => None,
        };
        let device = Arc::new(Self {
            id: NEXT_DEVICE_ID.fetch_add(1, Ordering::Relaxed),
            agents,
            strategy,
            semaphores: Arc::new(SemaphoreTable::new(config.semaphore_capacity)),
            world: Mutex::new(world),
            pending_releases: AtomicUsize::new(0),
            released,
            parked_queues: Default::default(),
            config,
            provider_reason: reason,
            programs: Default::default(),
            queues: queues::QueueRegistry::new(),
            executables,
            profile: Mutex::new(None),
            replay,
            hsa,
        });
        match profile {
            Some(profile) => device.begin_profile(profile)?,
            // With the `tracy` feature, Tracy shows GPU zones without a capture.
            #[cfg(feature = "tracy")]
            None => device.begin_tracy_view(&mut device.profile.lock().unwrap_or_else(|poison| poison.into_inner()))?,
            #[cfg(not(feature = "tracy"))]
            None => {}
        }
        Ok(device)
    }

    /// The replay capture, while it takes records.
    #[inline]
    pub fn replay_capture(&self) -> Option<&crate::replay_capture::ReplayCapture> {
        self.replay.as_deref().filter(|replay| replay.is_open())
    }

    /// The agent with index `agent` within the logical device.
    pub fn agent(&self, agent: usize) -> EngineResult<&AgentState> {
        self.agents.get(agent).ok_or_else(|| EngineError::InvalidArgument {
            what: "agent",
            reason: format!("agent {agent} does not exist ({} present)", self.agents.len()),
        })
    }

    /// Allocates from `pool` and maps the memory for every GPU of the device: ROCr allocates
    /// pool memory with `AllocateRestrict`, so host memory is mapped to no GPU and device memory
    /// to its owner only until `hsa_amd_agents_allow_access` (one GPU's device-local memory is
    /// read by the other GPUs' copies).
    pub fn allocate_granted(&self, pool: hsa_amd_memory_pool_t, bytes: usize) -> EngineResult<*mut u8> {
        self.allocate_granted_to(pool, bytes, None)
    }

    /// [`Self::allocate_granted`], and mapped for the host agent `host` too (host-visible device
    /// memory: ROCr answers DISALLOWED_BY_DEFAULT for a CPU on a GPU's coarse-grained pool).
    pub fn allocate_granted_to(
        &self,
        pool: hsa_amd_memory_pool_t,
        bytes: usize,
        host: Option<aqueduct_hsa::sys::hsa_agent_t>,
    ) -> EngineResult<*mut u8> {
        let pointer = self.hsa.allocate(pool, bytes)?;
        let agents: Vec<_> = self.agents.iter().map(|agent| agent.info.agent).chain(host).collect();
        if let Err(error) = self.hsa.allow_access(&agents, pointer) {
            // SAFETY: the allocation was never handed out.
            let _ = unsafe { self.hsa.free(pointer) };
            return Err(error.into());
        }
        Ok(pointer)
    }

    pub fn world(&self) -> std::sync::MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    /// Wakes the completion threads of queues with parked work (other than `except`), so they
    /// try to admit it again after a semaphore moved.
    pub fn wake_deferred(&self, except: Option<u16>) {
        self.wake_queues(self.parked_queues.to_wake(except));
    }

    /// Wakes the completion threads of the queues in `mask` (bit per queue index).
    pub fn wake_queues(&self, mut mask: u64) {
        while mask != 0 {
            let index = mask.trailing_zeros() as u16;
            mask &= mask - 1;
            if let Some(endpoint) = self.queues.directory.get(index) {
                self.poke(endpoint.control_signal);
            }
        }
    }

    /// Wakes every queue's completion thread: a host thread is about to park, and each must drain
    /// epoch by epoch while one is (see `queue::completion`).
    pub fn wake_completion_threads(&self) {
        for index in 0..aqueduct_components::MAX_QUEUES as u16 {
            if let Some(endpoint) = self.queues.directory.get(index) {
                self.poke(endpoint.control_signal);
            }
        }
    }

    /// Bumps a control signal through the provider, which wakes whoever waits on it.
    pub fn poke(&self, control: u64) {
        // SAFETY: control signals live as long as the device.
        unsafe { (self.hsa.api().hsa_signal_add_scacq_screl)(hsa_signal_t { handle: control }, 1) };
    }
}

impl Drop for DeviceShared {
    fn drop(&mut self) {
        // A capture still running (one the environment started) ends with the device: every
        // queue is gone, so everything it recorded is drained or failed.
        if let Some(session) = self.profile.get_mut().unwrap_or_else(|poison| poison.into_inner()).take() {
            match self.end_session(&session) {
                Ok(report) if session.bundle => {
                    tracing::info!(output = %report.output.display(), records = report.records, dropped = report.dropped, "profile written")
                }
                Ok(_) => {}
                Err(error) => tracing::error!(%error, "the profile capture could not be finished"),
            }
        }
        // Every queue and handle is gone (each held the device), so no row can read anything.
        self.release_all();
        // After `release_all`: freeing each host-visible buffer recorded its final checksum.
        if let Some(replay) = &self.replay {
            match replay.finish() {
                Ok(report) => {
                    tracing::info!(output = %report.output.display(), records = report.records, bytes = report.bytes, "replay capture written")
                }
                Err(error) => tracing::error!(%error, "the replay capture failed"),
            }
        }
        self.programs.free_images(&self.hsa);
        // Queue endpoints' signals outlive their queues so late readers never see freed memory.
        for index in 0..aqueduct_components::MAX_QUEUES as u16 {
            let Some(endpoint) = self.queues.directory.get(index) else { continue };
            let signals = endpoint.epoch_slots.iter().chain([&endpoint.epoch_signal, &endpoint.control_signal]);
            for &signal in signals {
                let _ = self.hsa.signal_destroy(hsa_signal_t { handle: signal });
            }
        }
    }
}

fn open_provider(config: &EngineConfig) -> EngineResult<(Hsa, String)> {
    match config.device {
        DeviceSpec::Soft => Ok((aqueduct_soft_hsa::open(config.soft.clone())?, "requested the soft runtime".into())),
        DeviceSpec::Auto => {
            let selection = aqueduct_soft_hsa::auto(config.soft.clone())?;
            tracing::info!(provider = selection.hsa.kind().name(), reason = %selection.reason, "auto device selection");
            Ok((selection.hsa, selection.reason))
        }
        _ => {
            let hsa = Hsa::rocr().map_err(|error| EngineError::NoDevice { reason: format!("ROCr: {error}") })?;
            let reason = format!("requested ROCr ({})", hsa.library_path().unwrap_or("?"));
            Ok((hsa, reason))
        }
    }
}

fn choose_agents(spec: &DeviceSpec, gpus: Vec<AgentInfo>) -> EngineResult<Vec<AgentInfo>> {
    if gpus.is_empty() {
        return Err(EngineError::NoDevice { reason: "the provider reports no GPU agents".into() });
    }
    match spec {
        DeviceSpec::Auto | DeviceSpec::Soft | DeviceSpec::Amdgpu => Ok(gpus),
        DeviceSpec::AmdgpuIndex(index) => {
            let count = gpus.len();
            gpus.into_iter().nth(*index).map(|agent| vec![agent]).ok_or_else(|| EngineError::NoDevice {
                reason: format!("GPU agent {index} does not exist ({count} present)"),
            })
        }
        DeviceSpec::AmdgpuUuids(uuids) => uuids
            .iter()
            .map(|uuid| {
                gpus.iter().find(|agent| &agent.uuid == uuid).cloned().ok_or_else(|| EngineError::NoDevice {
                    reason: format!(
                        "no GPU agent has UUID {uuid} (present: {})",
                        gpus.iter().map(|agent| agent.uuid.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                })
            })
            .collect(),
    }
}

/// The host agent's pools the engine places host-visible and kernarg memory in.
struct HostPools {
    agent: aqueduct_hsa::sys::hsa_agent_t,
    fine: hsa_amd_memory_pool_t,
    kernarg: hsa_amd_memory_pool_t,
}

impl HostPools {
    /// The first CPU agent with an allocatable fine-grained and kernarg pool, as IREE takes host
    /// and kernarg memory from the CPU agent.
    fn find(hsa: &Hsa) -> EngineResult<Self> {
        let cpus = hsa.cpu_agents()?;
        for cpu in &cpus {
            let pools = hsa.pools(cpu.agent)?;
            let find = |kind: PoolKindInfo| {
                pools.iter().find(|pool| pool.kind == kind && pool.alloc_allowed).map(|pool| pool.pool)
            };
            if let (Some(fine), Some(kernarg)) = (find(PoolKindInfo::FineGrained), find(PoolKindInfo::Kernarg)) {
                return Ok(Self { agent: cpu.agent, fine, kernarg });
            }
        }
        Err(EngineError::NoDevice {
            reason: format!("none of the {} CPU agents has an allocatable fine-grained and kernarg pool", cpus.len()),
        })
    }
}

fn open_agent(hsa: &Hsa, host: &HostPools, info: AgentInfo) -> EngineResult<AgentState> {
    let pools = hsa.pools(info.agent)?;
    let device_pool = pools
        .iter()
        .find(|pool| pool.kind == PoolKindInfo::CoarseGrained && pool.alloc_allowed)
        .map(|pool| pool.pool)
        .ok_or_else(|| EngineError::NoDevice { reason: format!("agent {} has no device-local pool", info.name) })?;
    let reach = hsa.pool_reach(info.agent, host.kernarg)?;
    if reach.access == aqueduct_hsa::sys::agent_pool_info::ACCESS_NEVER_ALLOWED {
        return Err(EngineError::NoDevice {
            reason: format!("agent {} can never access the host's kernarg pool", info.name),
        });
    }
    let topology = AgentTopology {
        host_agent: host.agent.handle,
        host_pool_access: reach.access,
        host_link_hops: reach.hops,
        host_link_type: reach.link.map(|link| link.link_type),
        host_numa_distance: reach.link.map(|link| link.numa_distance),
    };
    let (host_pool, kernarg_pool) = (host.fine, host.kernarg);
    // The host's reach to the GPU's coarse-grained pool: DISALLOWED_BY_DEFAULT (grantable) on
    // ROCr for a linked CPU, NEVER_ALLOWED without a link (`MemoryRegion::GetAccessInfo`).
    let host_visible_device =
        host_visible_device(hsa.pool_reach(host.agent, device_pool)?.access, device_pool, &info.name);
    let host_writes =
        hsa.hdp_flush_register(info.agent).ok().flatten().map(|register| Arc::new(HostWrites::new(register)));
    let (library_target, library_code_object, library) = load_device_library(hsa, &info)?;
    let mut builtins = [BuiltinKernel::default(); Builtin::ALL.len()];
    for (slot, builtin) in builtins.iter_mut().zip(Builtin::ALL) {
        let kernel = library.kernel(builtin.name())?;
        *slot = BuiltinKernel {
            kernel_object: kernel.kernel_object,
            group_segment_size: kernel.group_segment_size,
            private_segment_size: kernel.private_segment_size,
        };
    }
    Ok(AgentState {
        info,
        device_pool,
        host_pool,
        kernarg_pool,
        host_visible_device,
        host_writes,
        topology,
        builtin_objects: builtins
            .iter()
            .map(|kernel| aqueduct_components::program::BuiltinObject {
                kernel_object: kernel.kernel_object,
                group_segment_size: kernel.group_segment_size,
                private_segment_size: kernel.private_segment_size,
            })
            .collect(),
        builtins,
        library_target,
        library_code_object,
        _library: library,
    })
}

/// Host-visible device memory comes from the GPU's coarse-grained pool, granted to the host: ROCr
/// answers DISALLOWED_BY_DEFAULT for a linked CPU on it (grantable), NEVER_ALLOWED without a link
/// (`MemoryRegion::GetAccessInfo`; docs/rocr-facts.md).
fn host_visible_device(
    host_access: u32,
    device_pool: hsa_amd_memory_pool_t,
    agent: &str,
) -> Result<hsa_amd_memory_pool_t, String> {
    if host_access == aqueduct_hsa::sys::agent_pool_info::ACCESS_NEVER_ALLOWED {
        Err(format!("the host can never access {agent}'s device memory"))
    } else {
        Ok(device_pool)
    }
}

/// Loads the device library on an agent: the first embedded candidate (best first, see
/// `DeviceLibrary::candidates`) that the provider accepts. A provider may refuse a code-object
/// version its loader does not know (ROCr refused v6, which generic targets need, until early
/// 2024), so a refusal moves on to the next candidate; if none loads, the error lists every
/// candidate with its refusal.
fn load_device_library(hsa: &Hsa, info: &AgentInfo) -> EngineResult<(&'static str, &'static [u8], HsaExecutable)> {
    let isa = info.isa_names.first().cloned().unwrap_or_default();
    let candidates = DeviceLibrary::candidates(&isa)
        .map_err(|error| EngineError::NoDevice { reason: format!("device library for {isa}: {error}") })?;
    let mut rejections = Vec::with_capacity(candidates.len());
    for candidate in candidates {
        match HsaExecutable::load(hsa, info.agent, candidate.code_object) {
            Ok(library) => return Ok((candidate.target, candidate.code_object, library)),
            Err(error) => {
                tracing::info!(target = candidate.target, %error, "device library candidate refused, trying the next");
                rejections
                    .push(format!("{} (code object v{}): {error}", candidate.target, candidate.code_object_version));
            }
        }
    }
    Err(EngineError::NoDevice {
        reason: format!("no device library code object loads on {isa}: {}", rejections.join("; ")),
    })
}

/// Devices of the process the environment profiled, and captured for replay.
static PROFILES_FROM_ENV: AtomicUsize = AtomicUsize::new(0);
static REPLAYS_FROM_ENV: AtomicUsize = AtomicUsize::new(0);

/// The first device of the process that the environment captures writes to the path it names;
/// each later one to `<stem>-device<N>.<extension>`, so they do not overwrite each other.
fn env_capture_output(mut output: std::path::PathBuf, taken: &AtomicUsize) -> std::path::PathBuf {
    let earlier = taken.fetch_add(1, Ordering::Relaxed);
    if earlier > 0 {
        let stem = output.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
        let extension = output.extension().map(|ext| ext.to_string_lossy().into_owned());
        let name = match extension {
            Some(extension) => format!("{stem}-device{earlier}.{extension}"),
            None => format!("{stem}-device{earlier}"),
        };
        output.set_file_name(name);
    }
    output
}

/// The wait strategy as capture headers name it.
pub(crate) fn strategy_name(strategy: aqueduct_components::directory::CrossQueueWait) -> &'static str {
    match strategy {
        aqueduct_components::directory::CrossQueueWait::BarrierValue => "barrier-value",
        aqueduct_components::directory::CrossQueueWait::BarrierAnd => "barrier-and",
    }
}

/// Registers an agent's device library with the profile's executables: builtin dispatches are
/// dispatches too, and their records name the library's kernels.
fn register_device_library(executables: &ExecutableRegistry, agent: &AgentState) -> EngineResult<()> {
    let parsed = aqueduct_codeobject::CodeObject::parse(agent.library_code_object)
        .map_err(|error| EngineError::NoDevice { reason: format!("the device library does not parse: {error}") })?;
    let kernels = Builtin::ALL.iter().map(|builtin| (builtin.name(), agent.builtin(*builtin).kernel_object));
    executables.register(agent.library_code_object, &parsed, kernels);
    Ok(())
}

/// Processors whose command processor runs the AMD vendor BARRIER_VALUE packet: CDNA 2 and 3.
/// Source: IREE's AMDGPU driver (`select_wait_barrier_strategy`, see
/// shared/reference/iree-amdgpu-notes.md §5) uses it on gfx90a and gfx940–gfx942 and nowhere
/// else. A processor missing here gets BARRIER_AND, which every AQL packet processor runs.
const BARRIER_VALUE_PROCESSORS: &[&str] = &["gfx90a", "gfx940", "gfx941", "gfx942"];

/// Whether the agent's processor (from its parsed target ID, never a substring of the ISA name)
/// is one [`BARRIER_VALUE_PROCESSORS`] lists.
fn runs_barrier_value(isa: &str) -> bool {
    aqueduct_codeobject::TargetId::parse(isa)
        .is_ok_and(|target| BARRIER_VALUE_PROCESSORS.contains(&target.processor().name()))
}

/// BARRIER_VALUE where every agent is known to run it (the soft runtime executes it as the AMD
/// vendor packet is specified); BARRIER_AND everywhere else.
fn choose_strategy(requested: WaitStrategy, provider: ProviderKind, agents: &[AgentState]) -> CrossQueueWait {
    match requested {
        WaitStrategy::BarrierValue => CrossQueueWait::BarrierValue,
        WaitStrategy::BarrierAnd => CrossQueueWait::BarrierAnd,
        WaitStrategy::Auto => {
            let capable = |agent: &AgentState| agent.info.isa_names.first().is_some_and(|isa| runs_barrier_value(isa));
            if provider == ProviderKind::Soft || agents.iter().all(capable) {
                CrossQueueWait::BarrierValue
            } else {
                CrossQueueWait::BarrierAnd
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_discriminants_index_the_kernel_table() {
        for (index, builtin) in Builtin::ALL.into_iter().enumerate() {
            assert_eq!(builtin as usize, index, "{builtin:?}");
        }
    }

    fn gpu(uuid: &str) -> AgentInfo {
        AgentInfo {
            agent: Default::default(),
            name: "gfx1100".into(),
            product_name: String::new(),
            device_type: 1,
            isa_names: vec!["amdgcn-amd-amdhsa--gfx1100".into()],
            uuid: uuid.into(),
            wavefront_size: 32,
            compute_units: 8,
            queue_min_packets: 4,
            queue_max_packets: 1 << 17,
            queues_max: 64,
        }
    }

    #[test]
    fn barrier_value_follows_the_parsed_processor() {
        for isa in [
            "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-",
            "amdgcn-amd-amdhsa--gfx942",
            "amdgcn-amd-amdhsa--gfx940:xnack+",
        ] {
            assert!(runs_barrier_value(isa), "{isa}");
        }
        // A name that merely contains "gfx94" or "gfx95" is not enough, nor is RDNA or gfx908.
        for isa in [
            "amdgcn-amd-amdhsa--gfx950",
            "amdgcn-amd-amdhsa--gfx1100",
            "amdgcn-amd-amdhsa--gfx908",
            "gfx94",
            "not an isa gfx90a",
        ] {
            assert!(!runs_barrier_value(isa), "{isa}");
        }
    }

    #[test]
    fn host_visible_device_memory_needs_a_grantable_device_pool() {
        use aqueduct_hsa::sys::agent_pool_info::{
            ACCESS_ALLOWED_BY_DEFAULT, ACCESS_DISALLOWED_BY_DEFAULT, ACCESS_NEVER_ALLOWED,
        };
        let pool = hsa_amd_memory_pool_t { handle: 7 };
        for access in [ACCESS_ALLOWED_BY_DEFAULT, ACCESS_DISALLOWED_BY_DEFAULT] {
            assert_eq!(host_visible_device(access, pool, "gfx1100"), Ok(pool));
        }
        let reason = host_visible_device(ACCESS_NEVER_ALLOWED, pool, "gfx1100").unwrap_err();
        assert!(reason.contains("never access gfx1100's device memory"), "{reason}");
    }

    #[test]
    fn device_specs_pick_agents_or_say_why_not() {
        let gpus = || vec![gpu("GPU-a"), gpu("GPU-b")];
        assert_eq!(choose_agents(&DeviceSpec::Amdgpu, gpus()).unwrap().len(), 2);
        assert_eq!(choose_agents(&DeviceSpec::AmdgpuIndex(1), gpus()).unwrap()[0].uuid, "GPU-b");
        let picked = choose_agents(&DeviceSpec::AmdgpuUuids(vec!["GPU-b".into(), "GPU-a".into()]), gpus()).unwrap();
        assert_eq!(picked.iter().map(|agent| agent.uuid.as_str()).collect::<Vec<_>>(), ["GPU-b", "GPU-a"]);
        let reason = |result: EngineResult<Vec<AgentInfo>>| match result {
            Err(EngineError::NoDevice { reason }) => reason,
            other => panic!("expected NoDevice, got {other:?}"),
        };
        assert!(reason(choose_agents(&DeviceSpec::AmdgpuIndex(2), gpus())).contains("2 present"));
        assert!(reason(choose_agents(&DeviceSpec::AmdgpuUuids(vec!["GPU-z".into()]), gpus())).contains("GPU-a, GPU-b"));
        assert!(reason(choose_agents(&DeviceSpec::Soft, Vec::new())).contains("no GPU agents"));
    }
}
