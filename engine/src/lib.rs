//! aqueduct-engine: the public API.
//!
//! # The model
//!
//! An [`Engine`] opens one logical [`Device`] (one or more physical agents). A device makes:
//!
//! - **[`Queue`]s**: each is one HSA user-mode AQL queue. Every operation (`fill`, `copy`,
//!   `update`, `dispatch`, `launch`, `execute`, `barrier`, `alloca`, `host_call`, ...) is a
//!   [`Submission`] builder: add waits and signals, then `submit()`, which validates it and
//!   writes its packets straight into the queue's ring. Operations on one queue run in order;
//!   a [`Batch`] enqueues many and publishes them with one doorbell.
//! - **Timeline [`Semaphore`]s**: a `u64` that only rises. An operation waits for points
//!   (`semaphore.at(n)`) and raises points when it completes; a wait on another queue's work
//!   becomes a device-side barrier, never a host round trip. Hosts wait with a timeout.
//! - **[`Buffer`]s**: device memory of a [`MemoryKind`], typed (`Buffer<f32>`) or bytes, and
//!   [`Pool`]s that hand memory out in queue order.
//! - **[`Executable`]s** and their [`Kernel`]s, loaded from AMDGPU code objects; a typed
//!   [`Queue::launch`] checks each argument against the kernel's metadata.
//! - **[`CommandBuffer`]s**: work recorded once and run by `execute`, with dynamic
//!   bindings resolved through a [`BindingTable`] per execution.
//!
//! # Choosing a provider
//!
//! The engine reaches HSA through one function table, filled by one of two providers; the code
//! that submits work is the same on both. The device spec chooses ([`Engine::new`],
//! [`EngineConfig::device`]):
//!
//! - `auto` (the default): ROCr if `libhsa-runtime64.so.1` loads and reports a GPU, otherwise
//!   the embedded soft runtime.
//! - `amdgpu`, `amdgpu:N`, `amdgpu://UUID[,UUID...]`: ROCr only, all GPUs, one, or a set as one
//!   logical device; no GPU is an error, not a fallback.
//! - `soft`: the soft HSA runtime, a CPU implementation of the HSA queue ABI: real AQL rings,
//!   doorbells and signals, a packet processor thread per queue, and kernels run from their host
//!   builds ([`Device::register_host_builds`]). It is what runs where no AMD GPU is, and what
//!   the tests run on. [`EngineConfig::soft`] sets its agents and execution mode.
//!
//! # Where errors come from
//!
//! Every failure is an [`EngineError`], and each has one of three origins:
//!
//! - **Bad input**, found before anything is enqueued: an out-of-range binding, a signal that does
//!   not rise, a kernel argument that does not match the metadata, a foreign object. The call
//!   returns the error and nothing changes.
//! - **The provider**: an HSA call failed ([`EngineError::Hsa`] carries the status and ROCr's
//!   string), or the device ran out of something ([`EngineError::LimitReached`],
//!   [`EngineError::Backpressure`]).
//! - **The device, later**: a kernel fault or memory fault fails the queue. Its in-flight
//!   semaphores fail with a [`FailureRecord`], work that waits on them fails too, and later
//!   submissions on the queue return [`EngineError::QueueFailed`]. Host waits return
//!   [`EngineError::SemaphoreFailed`] with the record; [`Semaphore::failure`] reads it.
//!
//! ```
//! use std::time::Duration;
//! use aqueduct_engine::prelude::*;
//!
//! let engine = Engine::new("soft")?;
//! let device = engine.device();
//! let queue = device.create_queue()?;
//! let done = device.create_semaphore(0)?;
//! let buffer = device.allocate_typed::<u32>(MemoryKind::HostVisible, 1024)?;
//! queue.fill(buffer.whole(), &7u32.to_le_bytes()).signal(done.at(1)).submit()?;
//! done.wait(1, Duration::from_secs(5))?;
//! assert!(buffer.to_vec()?.iter().all(|word| *word == 7));
//! # Ok::<(), aqueduct_engine::EngineError>(())
//! ```

#![deny(missing_docs)]

mod clock;
mod command_buffer;
mod config;
mod device;
mod dispatch;
pub mod error;
mod executable;
mod launch_args;
mod memory;
mod profile;
#[cfg(feature = "tracy")]
pub mod profiling;
mod queue;
pub mod replay;
mod replay_capture;
mod semaphore;

use std::sync::Arc;

pub use aqueduct_components::device_entities::MemoryKind;
use aqueduct_components::device_entities::PoolEntity;
pub use aqueduct_components::directory::CrossQueueWait;
use aqueduct_components::directory::QueueEndpoint;
pub use aqueduct_components::semaphore_table::{FailureRecord, MAX_SEMAPHORES};
pub use clock::thread_cpu_time;
pub use command_buffer::{
    BindingTable, BlockLabel, BlockLimits, BufferRef, CommandBuffer, CommandBufferUsage, CompareOp, ProgramFacts,
    RecordedLaunch,
};
pub use config::{BlockProcessing, DeviceSpec, EngineConfig, QueueConfig, QueuePriority, WaitStrategy};
pub use device::AgentTopology;
pub use dispatch::Dispatch;
pub use error::{EngineError, EngineResult, UnmetPoint};
pub use executable::{Executable, HalLayout, Kernel};
pub use launch_args::{IntoKernelArgument, KernelArgument};
pub use memory::pool::{Exhaustion, Pool, PoolConfig, PoolStats, TrimPolicy};
pub use memory::{Binding, Buffer, MAX_UPDATE_BYTES};
pub use profile::{
    DEFAULT_PROFILE_OUTPUT, PROFILE_ENV, PROFILE_OUTPUT_ENV, ProfileConfig, ProfileModes, ProfileReport,
};
pub use queue::Batch;
pub use queue::Submission;
/// Host builds written in Rust: the CPU implementation of a kernel from your own code object,
/// which the soft runtime runs where a GPU would run the code object. Declare the arguments with
/// [`kernel_args!`](host_build::kernel_args), implement [`HostKernel`](host_build::HostKernel),
/// and register [`HostBuild::of`](host_build::HostBuild::of) with
/// [`Device::register_host_builds`], which checks it against the code object's metadata.
/// The module's documentation is in `aqueduct_abi::host_build`.
pub mod host_build {
    /// `HostBuild`'s name before issue 56's renames.
    #[allow(deprecated)]
    pub use aqueduct_abi::SoftKernel;
    pub use aqueduct_abi::host_build::*;
    pub use aqueduct_abi::kernel_args;
    pub use aqueduct_abi::{HostArg, HostBuild, WorkgroupContext};
}
/// The argument bundles the submission builder carries, one per operation ([`Submission`]).
pub mod ops {
    pub use crate::launch_args::LaunchOp;
    pub use crate::queue::builder::Submittable;
    // Every argument struct `queue/ops.rs` declares, so a new one needs no line here.
    pub use crate::queue::ops::*;
}
pub use queue::{HostCallResult, Queue, QueueStats, RawDispatch, SubmitOutput, Submitted};
pub use semaphore::{Semaphore, SemaphorePoint, wait_all, wait_any};

use device::DeviceShared;

/// What the examples and most programs use, in one import: `use aqueduct_engine::prelude::*;`.
pub mod prelude {
    pub use crate::{
        BindingTable, Buffer, BufferRef, CommandBuffer, CommandBufferUsage, Device, DeviceSpec, Dispatch, Engine,
        EngineConfig, EngineError, EngineResult, Executable, Kernel, MemoryKind, Pool, PoolConfig, Queue, QueueConfig,
        QueuePriority, Semaphore, SemaphorePoint, wait_all, wait_any,
    };
}

/// Raw HSA access, for provider-specific control beside the engine. Every function here is
/// `unsafe`: what the caller does with the handles can break what the engine relies on.
pub mod raw {
    use crate::Queue;
    use aqueduct_hsa::Hsa;
    use aqueduct_hsa::sys::hsa_queue_t;

    /// The HSA queue under `queue`. It stays valid while `queue` lives.
    ///
    /// # Safety
    /// The engine owns the queue's ring, write index and doorbell, and destroys the queue when
    /// `queue` is dropped: the caller writes none of them, does not destroy the queue, and does
    /// not use the pointer after `queue` is dropped. Reading its fields, and naming it to the
    /// provider's own controls (the soft runtime's `SoftControls`), is what it is for.
    pub unsafe fn hsa_queue(queue: &Queue) -> *mut hsa_queue_t {
        queue.raw_parts().0
    }

    /// The HSA provider `queue`'s device opened (ROCr, or the soft runtime), as a function table.
    ///
    /// # Safety
    /// The engine owns every queue, signal, memory block and executable it made through this
    /// table: the caller releases, destroys or writes none of them. Objects the caller makes
    /// through it are the caller's to release.
    pub unsafe fn provider(queue: &Queue) -> &Hsa {
        queue.raw_parts().1
    }
}

/// Tuning constants, for tests that size their inputs by them (the `test-hooks` feature).
#[cfg(feature = "test-hooks")]
pub mod tuning {
    pub use crate::command_buffer::DEVICE_MIN_PACKETS;
    pub use crate::queue::BOUNCE_BUFFER_BYTES;
}

/// The entry point: a provider and one logical device on it.
pub struct Engine {
    device: Device,
}

impl Engine {
    /// Opens the device named by `spec` (`auto`, `soft`, `amdgpu`, `amdgpu:N`,
    /// `amdgpu://UUID[,UUID…]`) with default settings.
    pub fn new(spec: &str) -> EngineResult<Self> {
        Self::with_config(EngineConfig { device: spec.parse()?, ..EngineConfig::default() })
    }

    /// Opens the device `config.device` names, with every setting of `config`.
    pub fn with_config(config: EngineConfig) -> EngineResult<Self> {
        let device = DeviceShared::open(config)?;
        queue::route_memory_faults(&device)?;
        Ok(Self { device: Device(device) })
    }

    /// The engine's logical device.
    pub fn device(&self) -> &Device {
        &self.device
    }
}

impl Drop for Engine {
    /// Waits for the work of queues whose handles are gone (as destroying a device waits for it
    /// to go idle in Vulkan and wgpu), so that captures are complete and no work runs past the
    /// engine; after `EngineConfig::submit_timeout` it cancels what is left. Queues that still
    /// have handles, and the device's other handles, are left as they are.
    fn drop(&mut self) {
        let shared = &self.device.0;
        let deadline = clock::deadline_after(std::time::Instant::now(), shared.config.submit_timeout);
        for queue in shared.queues.live() {
            queue.finish_orphan(deadline);
        }
    }
}

/// A logical device. Cloning shares it; it lives until its last queue, buffer, semaphore and
/// executable are gone. Dropping it first cancels nothing: queues whose last handle dropped finish
/// their submitted work before they go (see [`Queue`]). Dropping the [`Engine`] waits for that
/// work, up to `EngineConfig::submit_timeout`, and then cancels what is left.
#[derive(Clone)]
pub struct Device(Arc<DeviceShared>);

/// One physical agent of a device, as a report shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentSummary {
    /// The agent's name (`gfx1100`, ...).
    pub name: String,
    /// Its first ISA name.
    pub isa: String,
    /// Its UUID.
    pub uuid: String,
    /// Its compute units (`HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT`).
    pub compute_units: u32,
    /// Work-items per wavefront.
    pub wavefront_size: u32,
    /// The embedded device-library target chosen for it.
    pub library_target: &'static str,
    /// How it reaches the host memory the engine places for it.
    pub topology: AgentTopology,
}

impl Device {
    /// `soft` or `rocr`.
    pub fn provider(&self) -> &'static str {
        self.0.hsa.kind().name()
    }

    /// Why this provider was chosen.
    pub fn provider_reason(&self) -> &str {
        &self.0.provider_reason
    }

    /// What each agent of the device is, in agent order.
    pub fn agents(&self) -> Vec<AgentSummary> {
        self.0
            .agents
            .iter()
            .map(|agent| AgentSummary {
                name: agent.info.name.clone(),
                isa: agent.info.isa_names.first().cloned().unwrap_or_default(),
                uuid: agent.info.uuid.clone(),
                compute_units: agent.info.compute_units,
                wavefront_size: agent.info.wavefront_size,
                library_target: agent.library_target,
                topology: agent.topology,
            })
            .collect()
    }

    /// How queues of this device wait on each other.
    pub fn cross_queue_wait(&self) -> CrossQueueWait {
        self.0.strategy
    }

    /// The settings the device was opened with.
    pub fn config(&self) -> &EngineConfig {
        &self.0.config
    }

    /// A queue on agent 0, at normal priority, on every CU.
    pub fn create_queue(&self) -> EngineResult<Queue> {
        self.create_queue_with(QueueConfig::new())
    }

    /// A queue on agent `agent` of the device.
    pub fn create_queue_on(&self, agent: usize) -> EngineResult<Queue> {
        self.create_queue_with(QueueConfig::new().agent(agent))
    }

    /// A queue made as `config` says: its agent, priority and CU mask.
    pub fn create_queue_with(&self, config: QueueConfig) -> EngineResult<Queue> {
        let queue = Queue::create(&self.0, &config)?;
        if let Some(replay) = self.0.replay_capture() {
            let id = replay.next_id();
            queue.driver.endpoint.replay_id.store(id, std::sync::atomic::Ordering::Relaxed);
            replay.push(aqueduct_profile::replay::ReplayRecord::Queue {
                id,
                agent: config.agent as u32,
                priority: replay_capture::names::name(config.priority),
                cu_mask: config.cu_mask,
            });
        }
        Ok(queue)
    }

    /// A timeline semaphore starting at `initial`.
    pub fn create_semaphore(&self, initial: u64) -> EngineResult<Semaphore> {
        Semaphore::create_captured(&self.0, initial)
    }

    /// `size` bytes of `kind` memory on agent 0.
    pub fn allocate(&self, kind: MemoryKind, size: u64) -> EngineResult<Buffer> {
        Buffer::allocate_captured(&self.0, kind, size, 0)
    }

    /// `size` bytes of `kind` memory on agent `agent`.
    pub fn allocate_on(&self, agent: usize, kind: MemoryKind, size: u64) -> EngineResult<Buffer> {
        Buffer::allocate_captured(&self.0, kind, size, agent)
    }

    /// `len` elements of `T` in `kind` memory on agent 0 (contents as the provider leaves them).
    pub fn allocate_typed<T: bytemuck::Pod>(&self, kind: MemoryKind, len: u64) -> EngineResult<Buffer<T>> {
        let size = len.checked_mul(size_of::<T>() as u64).ok_or_else(|| EngineError::InvalidArgument {
            what: "buffer size",
            reason: format!("{len} elements of {} overflow", std::any::type_name::<T>()),
        })?;
        Buffer::allocate_captured(&self.0, kind, size, 0)?.cast()
    }

    /// A buffer of `kind` memory on agent 0 holding a copy of `data`; the kind must be one the
    /// host can write.
    pub fn buffer_from<T: bytemuck::Pod>(&self, kind: MemoryKind, data: &[T]) -> EngineResult<Buffer<T>> {
        if !kind.host_accessible() {
            return Err(EngineError::NotHostAccessible { kind });
        }
        let buffer = self.allocate_typed::<T>(kind, data.len() as u64)?;
        buffer.write(0, data)?;
        Ok(buffer)
    }

    /// HDP flushes the queues of agent `agent` made to publish host writes into host-visible
    /// device memory (0 where the memory path has no HDP).
    pub fn hdp_flushes(&self, agent: usize) -> u64 {
        self.0
            .agents
            .get(agent)
            .and_then(|state| state.host_writes.as_ref())
            .map_or(0, |host_writes| host_writes.flushes.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// A pool for queue-ordered allocation (`Queue::alloca`), drawing on `config.kind` memory
    /// of `config.agent`.
    pub fn create_pool(&self, config: PoolConfig) -> EngineResult<Pool> {
        let pool = Pool::create(&self.0, config)?;
        if let Some(replay) = self.0.replay_capture() {
            let id = replay.next_id();
            pool.0.replay_id.set(id);
            replay.push(aqueduct_profile::replay::ReplayRecord::Pool { id, settings: config.replay_settings() });
        }
        Ok(pool)
    }

    /// A command buffer to record for queues of agent 0.
    pub fn create_command_buffer(&self, usage: CommandBufferUsage) -> EngineResult<CommandBuffer> {
        CommandBuffer::new(&self.0, 0, usage, BlockLimits::default())
    }

    /// A command buffer for queues of agent `agent`, split into blocks at `limits`.
    pub fn create_command_buffer_on(
        &self,
        agent: usize,
        usage: CommandBufferUsage,
        limits: BlockLimits,
    ) -> EngineResult<CommandBuffer> {
        CommandBuffer::new(&self.0, agent, usage, limits)
    }

    /// Begins a profile capture on every queue of the device (and each queue created until it
    /// ends), streaming into `config.output`. Fails if one is already running, if a mode needs
    /// what is not here (aqlprofile, an AMD GPU), or if the file cannot be created. With the
    /// `tracy` feature it takes over from the Tracy view, which resumes when it ends.
    pub fn begin_profile(&self, config: ProfileConfig) -> EngineResult<()> {
        self.0.begin_profile(config)
    }

    /// Ends the running capture: waits for the work in flight to drain (up to the config's
    /// `end_timeout`), then writes the rest and closes the file.
    pub fn end_profile(&self) -> EngineResult<ProfileReport> {
        self.0.end_profile()
    }

    /// Why this device's replay capture failed (its writer fell behind past the stall timeout,
    /// or the file could not be written), if it did; `None` while it runs well or when there is
    /// none. The failure is also logged at error level, and the file lacks its end chunk.
    pub fn replay_capture_failure(&self) -> Option<String> {
        self.0.replay.as_ref().and_then(|replay| replay.failure())
    }

    /// Whether the device shows Tracy the GPU zones of its timed dispatches without a profile
    /// capture (the `tracy` feature): from its opening, except while a capture runs, which
    /// shows the same zones and writes its bundle too.
    #[cfg(feature = "tracy")]
    pub fn tracy_view_running(&self) -> bool {
        self.0
            .profile
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .as_ref()
            .is_some_and(|session| !session.bundle)
    }

    /// Marks the end of a frame for Tracy (the `tracy` feature, with a Tracy client running):
    /// a game calls it once per frame so Tracy's frame view lines up with its GPU zones. Without
    /// the feature it does nothing.
    pub fn frame_mark(&self) {
        #[cfg(feature = "tracy")]
        if let Some(client) = tracy_client::Client::running() {
            client.frame_mark();
        }
    }

    /// Registers the CPU implementations `kernels` (host builds) of kernels of `code_object`,
    /// for a provider that runs kernels on the CPU: the embedded soft runtime, or its drop-in
    /// `libhsa-runtime64.so.1` loaded as ROCr. A GPU runs the code object itself, so on ROCr with
    /// a GPU this takes nothing and returns `false`; the same program runs on both.
    ///
    /// A host build is keyed by the code object's bytes and its descriptor symbol (`name.kd`),
    /// so it never runs another code object's kernel of the same name. Write one in Rust with
    /// [`host_build`] and [`HostBuild::of`](host_build::HostBuild::of); C ones come from the
    /// device library's shim. Call this before loading the code object.
    ///
    /// Every host build is checked against `code_object` first, whatever the provider: a symbol
    /// it does not define is [`EngineError::UnknownKernel`], and declared arguments (offset,
    /// size, pointer or not) that disagree with its metadata are
    /// [`EngineError::HostBuildMismatch`], naming the kernel and the argument. Nothing is
    /// registered then.
    pub fn register_host_builds(&self, code_object: &[u8], kernels: &[aqueduct_abi::HostBuild]) -> EngineResult<bool> {
        executable::check_host_builds(code_object, kernels)?;
        Ok(aqueduct_soft_hsa::register_host_builds(&self.0.hsa, code_object, kernels)?)
    }

    /// The old name of [`Device::register_host_builds`].
    #[deprecated(note = "a kernel's CPU implementation is a host build: use register_host_builds")]
    pub fn register_host_kernels(&self, code_object: &[u8], kernels: &[aqueduct_abi::HostBuild]) -> EngineResult<bool> {
        self.register_host_builds(code_object, kernels)
    }

    /// The one of `code_objects` a device loads: the one whose target runs on every agent of the
    /// device with the best fit, as HIP picks a fat binary's entry for its GPU. A build for the
    /// agent's processor wins over one for its generic family (gfx1100 over gfx11-generic),
    /// and one naming the agent's `sramecc`/`xnack` states over one that leaves them "any";
    /// among equals, the first ([`aqueduct_codeobject::Fit`]). None runs:
    /// [`EngineError::NoCodeObjectForAgents`], with each candidate's reason.
    pub fn select_code_object<'a>(&self, code_objects: &[&'a [u8]]) -> EngineResult<&'a [u8]> {
        executable::select_code_object(&self.agent_isas(), code_objects)
    }

    /// The agents' ISA names, in the device's agent order.
    fn agent_isas(&self) -> Vec<String> {
        self.0.agents.iter().map(|agent| agent.info.isa_names.first().cloned().unwrap_or_default()).collect()
    }

    /// Loads a code object on every agent; its target must run on each of them. `bytes` may also
    /// be a fat binary: a clang offload bundle, or a host ELF (a HIP program or library) whose
    /// `.hip_fatbin` holds one bundle. The entry loaded is the one
    /// [`Device::select_code_object`] picks among the bundle's code objects.
    pub fn load_executable(&self, bytes: &[u8]) -> EngineResult<Executable> {
        let code_object = executable::code_object_for_agents(&self.agent_isas(), bytes)?;
        let executable = Executable::load(&self.0, code_object)?;
        if let Some(replay) = self.0.replay_capture() {
            let id = replay.next_id();
            executable.0.replay_id.set(id);
            replay.executable(id, code_object);
        }
        Ok(executable)
    }

    /// Live entities in the device World: (queues, semaphores, allocations). A semaphore or
    /// buffer whose handles are gone counts until the submissions enqueued before then settle.
    pub fn live_objects(&self) -> (usize, usize, usize) {
        use aqueduct_components::device_entities::{Allocation, SemaphoreEntity, Shared};
        self.0.release_settled();
        let mut world = self.0.world();
        let queues = world.query::<&Shared<QueueEndpoint>>().iter(&world).count();
        let semaphores = world.query::<&SemaphoreEntity>().iter(&world).count();
        let allocations = world.query::<&Allocation>().iter(&world).count();
        (queues, semaphores, allocations)
    }

    /// The device's queues, by index, as their device-World entities record them. A queue
    /// leaves the list once it is destroyed: when its last handle drops, or after its work
    /// drains.
    pub fn live_queues(&self) -> Vec<LiveQueue> {
        use aqueduct_components::device_entities::Shared;
        let mut world = self.0.world();
        let mut queues: Vec<LiveQueue> =
            world.query::<&Shared<QueueEndpoint>>().iter(&world).map(|shared| LiveQueue::of(&shared.0)).collect();
        queues.sort_by_key(|queue| queue.index);
        queues
    }

    /// The device's memory pools, as their device-World entities record them, in no set order.
    /// A pool counts until its release settles, as [`Self::live_objects`] counts buffers.
    pub fn live_pools(&self) -> Vec<LivePool> {
        self.0.release_settled();
        let mut world = self.0.world();
        world.query::<&PoolEntity>().iter(&world).map(LivePool::of).collect()
    }

    /// Live entities in the device World: (executables, finished command buffers), counted like
    /// [`Self::live_objects`].
    pub fn live_programs(&self) -> (usize, usize) {
        use aqueduct_components::device_entities::{CommandBufferEntity, ExecutableEntity};
        self.0.release_settled();
        let mut world = self.0.world();
        let executables = world.query::<&ExecutableEntity>().iter(&world).count();
        let command_buffers = world.query::<&CommandBufferEntity>().iter(&world).count();
        (executables, command_buffers)
    }
}

/// A live queue of a device ([`Device::live_queues`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiveQueue {
    /// Its index on the device ([`Queue::index`]).
    pub index: u16,
    /// Index of the physical agent within the logical device.
    pub agent: usize,
    /// AQL packets its ring holds.
    pub ring_packets: u32,
    /// Bytes of its kernarg ring.
    pub kernarg_bytes: u64,
    /// Epochs published so far ([`QueueStats::epochs_submitted`]).
    pub epochs_submitted: u64,
    /// Epochs drained so far ([`QueueStats::epochs_drained`]).
    pub epochs_drained: u64,
}

impl LiveQueue {
    fn of(endpoint: &QueueEndpoint) -> Self {
        use std::sync::atomic::Ordering;
        Self {
            index: endpoint.index,
            agent: endpoint.agent,
            ring_packets: endpoint.ring_packets,
            kernarg_bytes: endpoint.kernarg_bytes,
            epochs_submitted: endpoint.submitted.load(Ordering::Acquire),
            epochs_drained: endpoint.drained.load(Ordering::Acquire),
        }
    }
}

/// A live memory pool of a device ([`Device::live_pools`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LivePool {
    /// The memory it hands out.
    pub kind: MemoryKind,
    /// Index of the physical agent within the logical device.
    pub agent: usize,
    /// Bytes it allocates at a time.
    pub slab_size: u64,
    /// The most bytes its slabs may hold together.
    pub max_size: u64,
}

impl LivePool {
    fn of(pool: &PoolEntity) -> Self {
        Self { kind: pool.kind, agent: pool.agent, slab_size: pool.slab_size, max_size: pool.max_size }
    }
}

/// The README's examples, compiled and run as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
