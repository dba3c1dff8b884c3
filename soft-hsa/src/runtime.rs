//! The soft runtime's global state: init reference count, agents, pools and handle encoding.
//!
//! HSA is a process-global library with a reference-counted `hsa_init`, so this is global state
//! too. Handles carry a tag and the init generation, so a handle from an earlier initialization
//! (or of another kind) is rejected instead of aliasing a new object.

use std::sync::{Arc, Mutex, RwLock};

use hashbrown::HashMap;

use super::config::{self, SoftAgentConfig, SoftConfig};
use super::executable::Executables;
use super::memory::{Allocations, Pool, PoolKind};
use super::queue::SoftQueue;
use aqueduct_hsa::sys::{hsa_code_object_reader_t, hsa_status_t, status};

/// What kind of agent, and its configuration.
pub(crate) enum AgentKind {
    /// The host: `FULL_PROFILE`, no queues, owns the system pools.
    Cpu,
    Gpu(SoftAgentConfig),
}

pub(crate) struct Agent {
    pub kind: AgentKind,
    /// Indices of the pools this agent owns, in ROCr's order.
    pub pools: [usize; 3],
    /// ROCr's UUID form: `GPU-<16 hex digits>`, or `CPU-XX` for CPU agents.
    pub uuid: String,
    /// The KFD node: 0 for the CPU, 1.. for GPUs in configured order (before filtering).
    pub node: u32,
    /// The HDP flush registers (`HDP_MEM_FLUSH_CNTL`, `HDP_REG_FLUSH_CNTL`) a GPU reports:
    /// plain words here, since soft device memory is host memory with nothing to flush; a
    /// client's flush is a store to the first.
    pub hdp_registers: Box<[std::sync::atomic::AtomicU32; 2]>,
    /// `hsa_amd_coherency_set_type`'s value (COHERENT 0 at start).
    pub coherency: std::sync::atomic::AtomicU32,
}

impl Agent {
    pub fn gpu(&self) -> Option<&SoftAgentConfig> {
        match &self.kind {
            AgentKind::Gpu(config) => Some(config),
            AgentKind::Cpu => None,
        }
    }

    pub fn is_cpu(&self) -> bool {
        matches!(self.kind, AgentKind::Cpu)
    }
}

pub(crate) struct Runtime {
    pub generation: u32,
    pub config: SoftConfig,
    pub agents: Vec<Agent>,
    pub pools: Vec<Pool>,
    pub allocations: Allocations,
    pub queues: Mutex<HashMap<usize, Arc<SoftQueue>>>,
    /// `hsa_soft_queue_create`'s queues, by `hsa_queue_t *`.
    pub host_queues: Mutex<HashMap<usize, super::queue_slots::HostQueue>>,
    pub executables: Executables,
    /// `hsa_amd_register_system_event_handler` registrations: (callback, data), in order.
    pub event_handlers: Mutex<Vec<(aqueduct_hsa::sys::hsa_amd_system_event_callback_t, usize)>>,
    /// Which priorities have dispatches running (`scheduling.rs`).
    pub arbiter: super::scheduling::Arbiter,
    /// `hsa_signal_group_create`'s groups, by index (`None`: destroyed).
    pub signal_groups: Mutex<Vec<Option<Box<[u64]>>>>,
    /// `hsa_amd_signal_async_handler`'s handlers and their thread.
    pub async_handlers: super::async_handlers::AsyncHandlers,
    /// `hsa_amd_profiling_async_copy_enable`: async copies record their start and end.
    pub copy_profiling: std::sync::atomic::AtomicBool,
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

/// The most nested `hsa_init`s: ROCr's, `INT32_MAX`.
pub(crate) const MAX_INIT_COUNT: u32 = i32::MAX as u32;

pub(crate) fn init() -> Result<(), u32> {
    let mut global = GLOBAL.lock().unwrap_or_else(|poison| poison.into_inner());
    if count_init(&mut global.init_count)? {
        global.generation = global.generation.wrapping_add(1) & 0xFF_FFFF;
        let runtime = Arc::new(Runtime::new(global.generation, config::current()));
        global.runtime = Some(runtime.clone());
        *CURRENT.write().unwrap_or_else(|poison| poison.into_inner()) = Some(runtime);
    }
    Ok(())
}

/// Counts one more `hsa_init`; returns whether it is the first (the runtime must start). ROCr
/// keeps the count in an int32 and refuses past INT32_MAX (`Runtime::Acquire`, `runtime.cpp`:
/// `if (ref_count_ == INT32_MAX) return HSA_STATUS_ERROR_REFCOUNT_OVERFLOW;`).
fn count_init(count: &mut u32) -> Result<bool, u32> {
    if *count == MAX_INIT_COUNT {
        return Err(aqueduct_hsa::sys::status::ERROR_REFCOUNT_OVERFLOW);
    }
    *count += 1;
    Ok(*count == 1)
}

#[cfg(test)]
mod init_count_tests {
    use super::*;

    #[test]
    fn the_count_stops_at_int32_max_as_rocrs_does() {
        let mut count = 0;
        assert_eq!(count_init(&mut count), Ok(true), "the first starts the runtime");
        assert_eq!(count_init(&mut count), Ok(false));
        let mut count = MAX_INIT_COUNT - 1;
        assert_eq!(count_init(&mut count), Ok(false));
        assert_eq!(count, i32::MAX as u32);
        assert_eq!(count_init(&mut count), Err(aqueduct_hsa::sys::status::ERROR_REFCOUNT_OVERFLOW));
        assert_eq!(count, i32::MAX as u32, "a refused init counts nothing");
    }
}

pub(crate) fn shut_down() -> Result<(), u32> {
    let mut global = GLOBAL.lock().unwrap_or_else(|poison| poison.into_inner());
    if global.init_count == 0 {
        return Err(aqueduct_hsa::sys::status::ERROR_NOT_INITIALIZED);
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
    SignalGroup = 0xA8,
    /// A cache: its agent's index times 4 plus its level less one.
    Cache = 0xA9,
    /// An ISA's one wavefront: the ISA's (its agent's) index.
    Wavefront = 0xAA,
    /// A deserialized code object's kernel: its slot times 4096 plus the kernel's index.
    CodeSymbol = 0xAB,
}

impl Runtime {
    /// Parses a code object's bytes into a new reader written to `reader`: every reader entry point
    /// ends here. Bytes that are no code object are INVALID_CODE_OBJECT.
    ///
    /// # Safety
    /// `reader` is valid for one write.
    pub(crate) unsafe fn add_reader(
        &self,
        bytes: Vec<u8>,
        origin: super::executable::ReaderOrigin,
        reader: *mut hsa_code_object_reader_t,
    ) -> hsa_status_t {
        let parsed = match aqueduct_codeobject::CodeObject::parse(&bytes) {
            Ok(parsed) => parsed,
            Err(error) => {
                tracing::debug!(%error, "soft runtime rejected a code object");
                return status::ERROR_INVALID_CODE_OBJECT;
            }
        };
        let id = self.executables.add_reader(bytes, parsed, origin);
        // SAFETY: the caller's output pointer.
        unsafe { reader.write(hsa_code_object_reader_t { handle: self.handle(Tag::Reader, id) }) };
        status::SUCCESS
    }

    fn new(generation: u32, config: SoftConfig) -> Self {
        let gpus: Vec<(u32, SoftAgentConfig)> = (1..).zip(config.agents.iter().cloned()).collect();
        let uuid = |node: u32| format!("GPU-50f7{:012x}", 0x00a9_eddc_0000u64 + u64::from(node) - 1);
        let visible = match &config.visible_devices {
            Some(list) => visible_devices(list, &gpus.iter().map(|(node, _)| uuid(*node)).collect::<Vec<_>>()),
            None => (0..gpus.len()).collect(),
        };
        let mut pools = Vec::new();
        let mut agents = Vec::new();
        let kinds = std::iter::once((0, AgentKind::Cpu))
            .chain(visible.into_iter().map(|index| (gpus[index].0, AgentKind::Gpu(gpus[index].1.clone()))));
        // A runtime holds at most 64 agents: access grants are a 64-bit mask.
        for (index, (node, kind)) in kinds.take(64).enumerate() {
            let owned = match &kind {
                AgentKind::Cpu => PoolKind::CPU.map(|kind| (kind, config.host_memory_bytes)),
                AgentKind::Gpu(gpu) => PoolKind::GPU.map(|kind| {
                    (kind, if kind == PoolKind::Group { super::memory::GROUP_BYTES } else { gpu.device_memory_bytes })
                }),
            };
            let pool_indices = owned.map(|(kind, size)| {
                pools.push(Pool::new(kind, index, size));
                pools.len() - 1
            });
            let uuid = if node == 0 { "CPU-XX".to_string() } else { uuid(node) };
            agents.push(Agent {
                kind,
                pools: pool_indices,
                uuid,
                node,
                hdp_registers: Default::default(),
                coherency: Default::default(),
            });
        }
        Self {
            generation,
            config,
            agents,
            pools,
            allocations: Allocations::default(),
            queues: Mutex::new(HashMap::new()),
            host_queues: Mutex::new(HashMap::new()),
            executables: Executables::default(),
            event_handlers: Mutex::new(Vec::new()),
            arbiter: Default::default(),
            signal_groups: Mutex::new(Vec::new()),
            async_handlers: Default::default(),
            copy_profiling: Default::default(),
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

    /// The GPU agent at `index`.
    pub fn gpu(&self, index: usize) -> Option<&SoftAgentConfig> {
        self.agents.get(index)?.gpu()
    }

    /// The CUs of the GPU agent at `index` (1 for anything else, so masks and shares stay defined).
    pub fn compute_units(&self, index: usize) -> u32 {
        self.gpu(index).map_or(1, |gpu| gpu.compute_units)
    }

    fn tear_down(&self) {
        self.async_handlers.shut_down();
        let queues: Vec<_> = self.queues.lock().unwrap_or_else(|poison| poison.into_inner()).drain().collect();
        for (_, queue) in queues {
            queue.shut_down();
        }
        let host_queues: Vec<_> =
            self.host_queues.lock().unwrap_or_else(|poison| poison.into_inner()).drain().collect();
        for (_, queue) in host_queues {
            queue.destroy(&self.allocations, &self.pools);
        }
        self.executables.clear();
        self.allocations.free_all();
    }
}

/// ROCr's `ROCR_VISIBLE_DEVICES` (`RvdFilter`, `core/runtime/amd_filter_device.cpp`): the GPUs
/// to expose, in the listed order. Tokens are comma-separated and trimmed; one starting with `G`
/// is a UUID prefix (5 to 20 characters, case-insensitive, matching exactly one GPU), otherwise an
/// index in `strtol` form (`0x` hex and `0` octal prefixes). The first invalid, out-of-range or
/// duplicate token ends the list; an empty value exposes no GPU.
pub(crate) fn visible_devices(list: &str, uuids: &[String]) -> Vec<usize> {
    let mut chosen = Vec::new();
    for token in list.split(',').map(|token| token.trim().to_ascii_uppercase()) {
        let index = if token.starts_with('G') {
            let matches: Vec<usize> = if (5..=20).contains(&token.len()) {
                uuids
                    .iter()
                    .enumerate()
                    .filter(|(_, uuid)| uuid.to_ascii_uppercase().starts_with(&token))
                    .map(|(index, _)| index)
                    .collect()
            } else {
                Vec::new()
            };
            if matches.len() == 1 { Some(matches[0]) } else { None }
        } else {
            parse_c_integer(&token)
        };
        match index {
            Some(index) if index < uuids.len() && !chosen.contains(&index) => chosen.push(index),
            _ => break,
        }
    }
    chosen
}

/// `strtol(text, &end, 0)` for a whole token: decimal, `0x` hex or leading-`0` octal.
fn parse_c_integer(text: &str) -> Option<usize> {
    if let Some(hex) = text.strip_prefix("0X") {
        usize::from_str_radix(hex, 16).ok()
    } else if text.len() > 1 && text.starts_with('0') {
        usize::from_str_radix(&text[1..], 8).ok()
    } else {
        text.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::visible_devices;

    #[test]
    fn visible_devices_filter_and_order_as_rocr_does() {
        let uuids: Vec<String> =
            ["GPU-aaaa000000000001", "GPU-bbbb000000000002", "GPU-bbbb000000000003"].map(String::from).to_vec();
        assert_eq!(visible_devices("2,0", &uuids), [2, 0]);
        assert_eq!(visible_devices(" 0x1 , 0", &uuids), [1, 0]);
        assert_eq!(visible_devices("GPU-AAAA", &uuids), [0]);
        assert_eq!(visible_devices("gpu-bbbb000000000003,1", &uuids), [2, 1]);
        // An ambiguous prefix, an out-of-range index, a duplicate or junk ends the list.
        assert_eq!(visible_devices("1,GPU-BBBB,0", &uuids), [1]);
        assert_eq!(visible_devices("0,7,1", &uuids), [0]);
        assert_eq!(visible_devices("0,0,1", &uuids), [0]);
        assert_eq!(visible_devices("1,x,0", &uuids), [1]);
        assert_eq!(visible_devices("", &uuids), Vec::<usize>::new());
    }
}
