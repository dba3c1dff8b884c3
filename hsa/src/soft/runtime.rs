//! The soft runtime's global state: init reference count, agents, pools and handle encoding.
//!
//! HSA is a process-global library with a reference-counted `hsa_init`, so this is global state
//! too. Handles carry a tag and the init generation, so a handle from an earlier initialization
//! (or of another kind) is rejected instead of aliasing a new object.

use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Instant;

use hashbrown::HashMap;

use super::config::{self, SoftAgentConfig, SoftConfig};
use super::executable::Executables;
use super::memory::{Allocations, Pool, PoolKind};
use super::queue::SoftQueue;

pub(crate) struct Agent {
    pub config: SoftAgentConfig,
    pub pools: [usize; 3],
    /// A stable UUID in ROCr's `GPU-<16 hex digits>` form.
    pub uuid: String,
}

pub(crate) struct Runtime {
    pub generation: u32,
    pub config: SoftConfig,
    pub agents: Vec<Agent>,
    pub pools: Vec<Pool>,
    pub allocations: Allocations,
    pub queues: Mutex<HashMap<usize, Arc<SoftQueue>>>,
    pub executables: Executables,
}

struct Global {
    init_count: u32,
    generation: u32,
    runtime: Option<Arc<Runtime>>,
}

static GLOBAL: Mutex<Global> = Mutex::new(Global { init_count: 0, generation: 0, runtime: None });
/// Readers on hot paths take this lock only to clone the Arc.
static CURRENT: RwLock<Option<Arc<Runtime>>> = RwLock::new(None);

/// The live runtime, if initialized.
pub(crate) fn get() -> Option<Arc<Runtime>> {
    CURRENT.read().unwrap_or_else(|poison| poison.into_inner()).clone()
}

pub(crate) fn init() -> Result<(), u32> {
    let mut global = GLOBAL.lock().unwrap_or_else(|poison| poison.into_inner());
    if global.init_count == u32::MAX {
        return Err(crate::sys::status::ERROR_REFCOUNT_OVERFLOW);
    }
    if global.init_count == 0 {
        global.generation = global.generation.wrapping_add(1) & 0xFF_FFFF;
        let runtime = Arc::new(Runtime::new(global.generation, config::current()));
        global.runtime = Some(runtime.clone());
        *CURRENT.write().unwrap_or_else(|poison| poison.into_inner()) = Some(runtime);
    }
    global.init_count += 1;
    Ok(())
}

pub(crate) fn shut_down() -> Result<(), u32> {
    let mut global = GLOBAL.lock().unwrap_or_else(|poison| poison.into_inner());
    if global.init_count == 0 {
        return Err(crate::sys::status::ERROR_NOT_INITIALIZED);
    }
    global.init_count -= 1;
    if global.init_count == 0 {
        *CURRENT.write().unwrap_or_else(|poison| poison.into_inner()) = None;
        if let Some(runtime) = global.runtime.take() {
            runtime.tear_down();
        }
    }
    Ok(())
}

/// Process-wide timestamp origin, so timestamps stay monotonic across re-initialization.
pub(crate) fn now_ticks() -> u64 {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    ORIGIN.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Ticks per second of [`now_ticks`] (`HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY`).
pub(crate) const TIMESTAMP_FREQUENCY: u64 = 1_000_000_000;

/// Handle tags, one per object kind.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub(crate) enum Tag {
    Agent = 0xA1,
    Pool = 0xA2,
    Isa = 0xA3,
    Reader = 0xA4,
    Executable = 0xA5,
    Symbol = 0xA6,
    LoadedCodeObject = 0xA7,
}

impl Runtime {
    fn new(generation: u32, config: SoftConfig) -> Self {
        let mut pools = Vec::new();
        let agents = config
            .agents
            .iter()
            .enumerate()
            .map(|(index, agent)| {
                let mut pool_indices = [0; 3];
                for (slot, (kind, size)) in [
                    (PoolKind::DeviceLocal, agent.device_memory_bytes),
                    (PoolKind::HostFineGrained, config.host_memory_bytes),
                    (PoolKind::Kernarg, config.host_memory_bytes),
                ]
                .into_iter()
                .enumerate()
                {
                    pool_indices[slot] = pools.len();
                    pools.push(Pool::new(kind, index, size));
                }
                Agent {
                    config: agent.clone(),
                    pools: pool_indices,
                    uuid: format!("GPU-50f7{:012x}", 0x00a9_eddc_0000u64 + index as u64),
                }
            })
            .collect();
        Self {
            generation,
            config,
            agents,
            pools,
            allocations: Allocations::default(),
            queues: Mutex::new(HashMap::new()),
            executables: Executables::default(),
        }
    }

    pub fn handle(&self, tag: Tag, index: u64) -> u64 {
        (tag as u64) << 56 | u64::from(self.generation) << 32 | (index & 0xFFFF_FFFF)
    }

    /// Decodes a handle of `tag` from this generation into its index.
    pub fn index_of(&self, tag: Tag, handle: u64) -> Option<u64> {
        let matches = handle >> 56 == tag as u64 && (handle >> 32 & 0xFF_FFFF) as u32 == self.generation;
        matches.then_some(handle & 0xFFFF_FFFF)
    }

    pub fn agent(&self, handle: u64) -> Option<(usize, &Agent)> {
        let index = usize::try_from(self.index_of(Tag::Agent, handle)?).ok()?;
        self.agents.get(index).map(|agent| (index, agent))
    }

    pub fn pool(&self, handle: u64) -> Option<(usize, &Pool)> {
        let index = usize::try_from(self.index_of(Tag::Pool, handle)?).ok()?;
        self.pools.get(index).map(|pool| (index, pool))
    }

    pub fn queue(&self, address: usize) -> Option<Arc<SoftQueue>> {
        self.queues.lock().unwrap_or_else(|poison| poison.into_inner()).get(&address).cloned()
    }

    fn tear_down(&self) {
        let queues: Vec<_> = self.queues.lock().unwrap_or_else(|poison| poison.into_inner()).drain().collect();
        for (_, queue) in queues {
            queue.shut_down();
        }
        self.executables.clear();
        self.allocations.free_all();
    }
}
