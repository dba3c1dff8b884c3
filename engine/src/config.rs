//! How an engine is set up: which device, and the sizes of each queue's rings.

use std::time::Duration;

use aqueduct_components::semaphore_table::MAX_SEMAPHORES;
use aqueduct_soft_hsa::SoftConfig;

use crate::error::{EngineError, EngineResult};

/// Where a command-buffer execution's blocks are turned into packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BlockProcessing {
    /// The engine picks, per execution, by a fixed rule (chosen from measurements,
    /// docs/BENCHMARKS.md): the device for programs with a
    /// conditional branch (a branch on the host costs a round trip: the queue drains, the host
    /// reads the value) or with at least 256 (`DEVICE_MIN_PACKETS`) packets and no transfer with a
    /// dynamic side (which the device writes with kernels planned for any alignment); the host
    /// otherwise, and while a profile capture runs.
    #[default]
    Auto,
    /// The host writes every packet of every execution (the queue's own stages).
    Host,
    /// The device library's block processor writes them: the host publishes one dispatch and a
    /// barrier, and uploads the binding table. A program the device cannot process is refused
    /// with a typed error that says why.
    Device,
}

/// Which physical agents form the engine's logical device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceSpec {
    /// ROCr's GPUs if it loads and has any, otherwise the embedded soft runtime.
    Auto,
    /// The embedded soft HSA runtime (all of its agents).
    Soft,
    /// Every ROCr GPU agent.
    Amdgpu,
    /// The ROCr GPU agent with this ordinal.
    AmdgpuIndex(usize),
    /// The ROCr GPU agents with these UUIDs, as one logical device.
    AmdgpuUuids(Vec<String>),
}

impl std::str::FromStr for DeviceSpec {
    type Err = EngineError;

    /// `auto`, `soft`, `amdgpu`, `amdgpu:N` or `amdgpu://UUID[,UUID…]`.
    fn from_str(spec: &str) -> EngineResult<Self> {
        let invalid =
            |reason: &str| EngineError::InvalidDeviceSpec { spec: spec.to_string(), reason: reason.to_string() };
        Ok(match spec {
            "auto" => Self::Auto,
            "soft" => Self::Soft,
            "amdgpu" => Self::Amdgpu,
            _ => {
                if let Some(uuids) = spec.strip_prefix("amdgpu://") {
                    let uuids: Vec<String> = uuids.split(',').map(str::trim).map(String::from).collect();
                    if uuids.iter().any(String::is_empty) {
                        return Err(invalid("empty UUID in the list"));
                    }
                    Self::AmdgpuUuids(uuids)
                } else if let Some(index) = spec.strip_prefix("amdgpu:") {
                    Self::AmdgpuIndex(index.parse().map_err(|_| invalid("the agent ordinal is not a number"))?)
                } else {
                    return Err(invalid("expected auto, soft, amdgpu, amdgpu:N or amdgpu://UUID[,UUID...]"));
                }
            }
        })
    }
}

impl std::fmt::Display for DeviceSpec {
    /// The spec as [`DeviceSpec::from_str`](std::str::FromStr) reads it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Auto => f.write_str("auto"),
            Self::Soft => f.write_str("soft"),
            Self::Amdgpu => f.write_str("amdgpu"),
            Self::AmdgpuIndex(index) => write!(f, "amdgpu:{index}"),
            Self::AmdgpuUuids(uuids) => write!(f, "amdgpu://{}", uuids.join(",")),
        }
    }
}

/// How queues of the device wait on each other from the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WaitStrategy {
    /// BARRIER_VALUE where the agent supports it (CDNA, the soft runtime), else BARRIER_AND.
    #[default]
    Auto,
    /// Always AMD BARRIER_VALUE packets on the producer queue's epoch signal.
    BarrierValue,
    /// Always BARRIER_AND packets on the producer epoch's own signal.
    BarrierAnd,
}

/// How an engine is set up; [`Default`] gives `auto` and the documented sizes.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Which agents form the device.
    pub device: DeviceSpec,
    /// The embedded soft runtime's agents and execution mode, when it is the provider. The
    /// soft runtime's drop-in, loaded as ROCr, reads its environment instead, as ROCr does, or a
    /// configuration given with `aqueduct_soft_hsa::SoftControls::drop_in()?.configure(..)`.
    pub soft: SoftConfig,
    /// AQL packets per queue ring (a power of two).
    pub queue_packets: u32,
    /// Bytes of kernarg ring per queue.
    pub kernarg_ring_bytes: u64,
    /// Submissions a queue can have in flight.
    pub epochs_in_flight: u32,
    /// How queues wait on each other from the device.
    pub wait_strategy: WaitStrategy,
    /// How long a submission waits for ring space before failing with backpressure; also how
    /// long dropping the [`Engine`](crate::Engine) waits for the work of queues whose handles
    /// are gone before it cancels what is left.
    pub submit_timeout: Duration,
    /// Live semaphores per device, at most `MAX_SEMAPHORES` (2^20). The device allocates 128
    /// bytes per semaphore when it opens.
    pub semaphore_capacity: usize,
    /// Most blocks one command-buffer execution may run (a conditional loop that never exits
    /// fails its execution here instead of occupying the queue forever).
    pub execution_block_limit: u64,
    /// The longest a queue's completion thread sleeps between checks. Its wake-ups come from the
    /// queue's signals; this only bounds what a missed one would cost. Tests raise it far past
    /// their wait timeouts, so a missed wake-up fails them as a hang rather than as a slow run.
    pub completion_fallback: Duration,
    /// A profile capture that starts with the device and ends when it drops. `None` takes it
    /// from `AQUEDUCT_PROFILE` and `AQUEDUCT_PROFILE_OUTPUT`, if they ask for one.
    pub profile: Option<crate::profile::ProfileConfig>,
    /// A replay capture that starts with the device and ends when it drops. `None` takes it
    /// from `AQUEDUCT_REPLAY_OUTPUT`, if it is set.
    pub replay: Option<crate::replay_capture::ReplayConfig>,
    /// Where command buffers made from now on turn their executions' blocks into packets
    /// (`CommandBuffer::set_processing` changes one).
    pub block_processing: BlockProcessing,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            device: DeviceSpec::Auto,
            soft: SoftConfig::default(),
            queue_packets: 4096,
            kernarg_ring_bytes: 1 << 20,
            epochs_in_flight: 2048,
            wait_strategy: WaitStrategy::Auto,
            submit_timeout: Duration::from_secs(10),
            semaphore_capacity: 1 << 16,
            execution_block_limit: 1 << 20,
            completion_fallback: Duration::from_millis(100),
            profile: None,
            replay: None,
            block_processing: BlockProcessing::Auto,
        }
    }
}

impl EngineConfig {
    /// Checks the settings; the first bad one is an `InvalidArgument` naming it.
    pub fn validate(&self) -> EngineResult<()> {
        let invalid = |what, reason: String| Err(EngineError::InvalidArgument { what, reason });
        if !self.queue_packets.is_power_of_two() || self.queue_packets < 4 {
            return invalid("queue_packets", format!("{} is not a power of two ≥ 4", self.queue_packets));
        }
        if self.completion_fallback.is_zero() {
            return invalid("completion_fallback", "zero would make the completion thread spin".into());
        }
        if self.kernarg_ring_bytes < 4096 {
            return invalid("kernarg_ring_bytes", format!("{} is below 4096", self.kernarg_ring_bytes));
        }
        if self.epochs_in_flight == 0 {
            return invalid("epochs_in_flight", "must be at least 1".into());
        }
        if self.semaphore_capacity > MAX_SEMAPHORES {
            return invalid("semaphore_capacity", format!("{} is above {MAX_SEMAPHORES}", self.semaphore_capacity));
        }
        if let Some(profile) = &self.profile {
            profile.validate()?;
        }
        if let Some(replay) = &self.replay {
            replay.validate()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_specs_parse() {
        assert_eq!("auto".parse::<DeviceSpec>().unwrap(), DeviceSpec::Auto);
        assert_eq!("soft".parse::<DeviceSpec>().unwrap(), DeviceSpec::Soft);
        assert_eq!("amdgpu".parse::<DeviceSpec>().unwrap(), DeviceSpec::Amdgpu);
        assert_eq!("amdgpu:3".parse::<DeviceSpec>().unwrap(), DeviceSpec::AmdgpuIndex(3));
        assert_eq!(
            "amdgpu://GPU-a1,GPU-b2".parse::<DeviceSpec>().unwrap(),
            DeviceSpec::AmdgpuUuids(vec!["GPU-a1".into(), "GPU-b2".into()])
        );
        for bad in ["", "cuda", "amdgpu:x", "amdgpu://", "amdgpu://a,,b"] {
            assert!(matches!(bad.parse::<DeviceSpec>(), Err(EngineError::InvalidDeviceSpec { .. })), "{bad}");
        }
    }
}

/// A queue's scheduling priority against the device's other queues
/// (`hsa_amd_queue_priority_t`). On a GPU it orders dispatch and wavefront scheduling; on the
/// soft runtime a dispatch yields its workgroups to running higher-priority dispatches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum QueuePriority {
    /// Background work: behind normal and high-priority compute.
    Low,
    /// The HSA default.
    #[default]
    Normal,
    /// Frame-critical work: ahead of low and normal-priority compute.
    High,
}

impl crate::replay_capture::names::Named for QueuePriority {
    const WHAT: &'static str = "queue priority";
    const NAMES: &'static [(Self, &'static str)] =
        &[(QueuePriority::Low, "low"), (QueuePriority::Normal, "normal"), (QueuePriority::High, "high")];
}

impl QueuePriority {
    /// The `hsa_amd_queue_priority_t` value.
    pub fn hsa_value(self) -> u32 {
        use aqueduct_hsa::sys::enums;
        match self {
            Self::Low => enums::QUEUE_PRIORITY_LOW,
            Self::Normal => enums::QUEUE_PRIORITY_NORMAL,
            Self::High => enums::QUEUE_PRIORITY_HIGH,
        }
    }
}

/// How one queue is made: its agent, priority and CU mask. Defaults: agent 0, normal priority,
/// every CU.
///
/// ```
/// use aqueduct_engine::{Engine, QueueConfig, QueuePriority};
///
/// let engine = Engine::new("soft")?;
/// let frame = engine.device().create_queue_with(QueueConfig::new().priority(QueuePriority::High))?;
/// assert_eq!(frame.priority(), QueuePriority::High);
/// # Ok::<(), aqueduct_engine::EngineError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueConfig {
    /// The agent of the device the queue feeds.
    pub agent: usize,
    /// Its priority (`hsa_amd_queue_set_priority`).
    pub priority: QueuePriority,
    /// The compute units its work may use, one bit per CU, 32 per word
    /// (`hsa_amd_queue_cu_set_mask`); `None` for every CU. Bits past the agent's CU count are
    /// dropped; a mask that enables none of the agent's CUs is refused.
    pub cu_mask: Option<Vec<u32>>,
}

impl QueueConfig {
    /// Agent 0, normal priority, every CU.
    pub fn new() -> Self {
        Self::default()
    }

    /// On agent `agent` of the device.
    pub fn agent(mut self, agent: usize) -> Self {
        self.agent = agent;
        self
    }

    /// With priority `priority`.
    pub fn priority(mut self, priority: QueuePriority) -> Self {
        self.priority = priority;
        self
    }

    /// Restricted to the CUs `mask` enables (bit `i` of word `i / 32` is CU `i`).
    pub fn cu_mask(mut self, mask: impl Into<Vec<u32>>) -> Self {
        self.cu_mask = Some(mask.into());
        self
    }

    /// Checks the settings against an agent with `compute_units` CUs.
    pub(crate) fn validate(&self, compute_units: u32) -> EngineResult<()> {
        let Some(mask) = &self.cu_mask else { return Ok(()) };
        // An empty mask means every CU to ROCr; here `None` says that, so an empty one is taken
        // as what it lists: no CU.
        let enabled: u32 = aqueduct_hsa::clip_cu_mask(mask, compute_units).iter().map(|word| word.count_ones()).sum();
        if mask.is_empty() || enabled == 0 {
            return Err(EngineError::InvalidArgument {
                what: "cu_mask",
                reason: format!("enables none of the agent's {compute_units} compute units"),
            });
        }
        Ok(())
    }
}
