//! Soft runtime configuration: which agents exist and how queues execute.
//!
//! Set it with [`configure`] before `hsa_init`; it takes effect at the next initialization (when
//! the init count goes from 0 to 1), exactly as ROCr reads its environment at init. Without one,
//! each initialization takes [`SoftConfig::default`], which reads the environment then.
//!
//! The configuration crosses the drop-in's C ABI (`aqueduct_soft_configure`) as JSON:
//! [`SoftConfig::to_json`] and [`SoftConfig::from_json`], whose missing fields take their defaults.

use std::ops::RangeInclusive;
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How a queue's packet processor treats packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExecutionMode {
    /// Packets run one at a time, in order: a test mode.
    Strict,
    /// Consecutive dispatches without the barrier bit run one after another in reverse order
    /// and retire out of order, so a missing barrier bit shows up as wrong results, every time:
    /// a test mode.
    Relaxed,
    /// Packets retire (signals, timestamps, barriers) without running kernels, so host cost can
    /// be measured alone. No kernel runs, the device library's block processor included: a
    /// command-buffer execution processed on the device never reaches its packets here (the
    /// engine's `BlockProcessing::Host` keeps such executions on the host).
    RetireOnly,
    /// Consecutive dispatches without the barrier bit run at the same time, up to the agent's
    /// compute units, and each retires when it finishes, as a command processor may run them:
    /// the HSA system architecture lets a packet start before the packets ahead of it complete
    /// unless its barrier bit is set (docs/rocr-facts.md, "Barrier bit"). The default.
    #[default]
    Concurrent,
}

/// How a dispatch's kernel runs: `AQUEDUCT_SOFT_EXEC=host|isa|native|auto` (default `auto`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KernelExecution {
    /// The kernel's host build only: a CPU implementation registered for its code object and
    /// symbol. A kernel without one faults its queue.
    Host,
    /// The gfx11 interpreter runs the code object's own machine code (`aqueduct-isa`).
    Isa,
    /// The native tier runs the code object's own machine code, compiled to the host's SIMD
    /// (`aqueduct_isa::native`); a kernel it cannot compile (wave64, a host without AVX2) fails
    /// its dispatch.
    Native,
    /// The host build where one is registered; otherwise the machine code, compiled (the native
    /// tier) where the kernel and the host allow it and interpreted where not. So a user's kernel
    /// runs from its machine code with no CPU port. The default.
    #[default]
    Auto,
}

impl KernelExecution {
    /// Reads `AQUEDUCT_SOFT_EXEC`; unset or empty is `Auto`, an unknown value `Auto` with a
    /// warning.
    pub fn from_env() -> KernelExecution {
        match std::env::var("AQUEDUCT_SOFT_EXEC").as_deref().map(str::trim) {
            Err(_) | Ok("") | Ok("auto") => KernelExecution::Auto,
            Ok("host") => KernelExecution::Host,
            Ok("isa") => KernelExecution::Isa,
            Ok("native") => KernelExecution::Native,
            Ok(other) => {
                tracing::warn!(value = other, "AQUEDUCT_SOFT_EXEC is host, isa, native or auto; using auto");
                KernelExecution::Auto
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SoftAgentConfig {
    /// Marketing-style agent name (`HSA_AGENT_INFO_NAME` is limited to 63 bytes).
    pub name: String,
    /// Full ISA name, e.g. `amdgcn-amd-amdhsa--gfx1100`.
    pub isa_name: String,
    pub wavefront_size: u32,
    /// The CUs the agent reports and the runtime schedules by (a queue runs up to this many
    /// packets at once; CU masks are clipped to it): 8 by default whatever the model
    /// (docs/DECISIONS.md, "Soft agents report their configured compute units").
    pub compute_units: u32,
    /// Size of the device-local (coarse-grained) pool in bytes.
    pub device_memory_bytes: u64,
}

impl SoftAgentConfig {
    pub fn gfx1100() -> Self {
        Self::with_isa("amdgcn-amd-amdhsa--gfx1100", 32)
    }

    /// The agent of `processor`'s model (`gfx90a`) as its published dump shows it
    /// ([`crate::gpu_models`]): the dump's ISA name with its target features
    /// (`amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`), its wavefront size and its VRAM. Compute
    /// units stay [`Self::with_isa`]'s 8 (docs/DECISIONS.md, "Soft agents report their configured
    /// compute units"). `None` for a processor without a row.
    pub fn model(processor: &str) -> Option<Self> {
        let model = crate::gpu_models::model(processor)?;
        Some(Self { device_memory_bytes: model.vram_bytes, ..Self::with_isa(model.isa_name, model.wavefront_size) })
    }

    /// An agent of `isa_name` as written (target features and all), with 8 compute units and a
    /// 16 GiB device pool whatever the model; `hsa_agent_get_info` reports the model's other
    /// facts ([`crate::gpu_models`]).
    pub fn with_isa(isa_name: &str, wavefront_size: u32) -> Self {
        let processor = isa_name.rsplit("--").next().unwrap_or(isa_name);
        let processor = processor.split(':').next().unwrap_or(processor);
        Self {
            name: processor.to_string(),
            isa_name: isa_name.to_string(),
            wavefront_size,
            compute_units: 8,
            device_memory_bytes: 16 << 30,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SoftConfig {
    /// The GPU agents, in KFD node order. A CPU agent always comes first (node 0), as in every
    /// published `rocminfo` dump (`soft-hsa/tests/fixtures/rocminfo-gfx1100.txt`).
    pub agents: Vec<SoftAgentConfig>,
    /// `ROCR_VISIBLE_DEVICES` as ROCr reads it at `hsa_init`: `None` = every GPU. `Default`
    /// takes it from the environment.
    pub visible_devices: Option<String>,
    /// The CPU agent's name (`HSA_AGENT_INFO_NAME`; ROCr reports the KFD marketing name).
    pub cpu_name: String,
    /// The mode new queues start in; [`crate::set_queue_mode`] changes one queue.
    pub default_mode: ExecutionMode,
    /// Largest queue, in packets (`HSA_AGENT_INFO_QUEUE_MAX_SIZE`).
    pub queue_max_packets: u32,
    /// Smallest queue, in packets (`HSA_AGENT_INFO_QUEUE_MIN_SIZE`): ROCr's 64 by default.
    /// Backpressure tests lower it to build tiny rings; that is a deviation from ROCr they opt
    /// into, never the default.
    pub queue_min_packets: u32,
    /// Size of each of the CPU agent's system pools, in bytes.
    pub host_memory_bytes: u64,
    /// Queues hand out USER-kind doorbell signals, as queues wrapped by a tool (ROCr's
    /// `InterceptQueue`) do, instead of DOORBELL-kind ones: a producer must ring them through
    /// `hsa_signal_store_*`, never through `hardware_doorbell_ptr`.
    pub intercepted_doorbells: bool,
    /// Code-object major versions the loader accepts; a load of another version fails with
    /// HSA_STATUS_ERROR_INVALID_CODE_OBJECT, as ROCr's does. Default 1..=6: ROCr's loader
    /// (`ExecutableImpl::LoadCodeObject` in loader/executable.cpp) refuses `majorVersion < 1 ||
    /// majorVersion > 6`; before early 2024 its bound was 5, so `4..=5` models an older ROCr.
    /// (This runtime's parser reads v4 to v6 only, so v1 to v3 fail earlier, at reader creation.)
    pub code_object_versions: RangeInclusive<u32>,
    /// How long a packet processor spins on a barrier's dependencies before it parks. A hardware
    /// command processor polls for free; here it shares the host's cores with the producers, so
    /// the default ([`default_processor_spin`]) spins long only where cores are plentiful.
    pub processor_spin: Duration,
    /// How kernels run: host builds, the ISA interpreter, or the host build where one exists.
    /// `Default` reads `AQUEDUCT_SOFT_EXEC`.
    pub kernel_execution: KernelExecution,
    /// How long one dispatch may run before the soft runtime calls it hung, stops its waves at
    /// their next turn and fails its queue (ERROR_EXCEPTION, naming the kernel and the PC):
    /// the stand-in for amdgpu's compute lockup timeout, whose default
    /// ([`DEFAULT_DISPATCH_TIMEOUT`]) it takes. `Default` reads
    /// `AQUEDUCT_SOFT_DISPATCH_TIMEOUT_MS` (the drop-in's environment); 0 there, or a zero
    /// duration here, means no limit.
    pub dispatch_timeout: Duration,
}

/// amdgpu's lockup timeout for compute jobs on bare metal, 60,000 ms: "By default timeout for
/// non compute jobs is 10000 and 60000 for compute jobs" (`amdgpu_device_get_job_timeout_settings`,
/// drivers/gpu/drm/amd/amdgpu/amdgpu_device.c, Linux 5.3 to 6.14; later kernels use 10 s for
/// their kernel queues but leave KFD's user queues without one). The soft runtime runs kernels
/// far slower than a GPU, so it keeps the longer one.
pub const DEFAULT_DISPATCH_TIMEOUT: Duration = Duration::from_secs(60);

/// `AQUEDUCT_SOFT_DISPATCH_TIMEOUT_MS`: milliseconds, 0 for no limit; unset or unparsable gives
/// [`DEFAULT_DISPATCH_TIMEOUT`] (with a warning for the last).
fn dispatch_timeout_from_env() -> Duration {
    dispatch_timeout(std::env::var("AQUEDUCT_SOFT_DISPATCH_TIMEOUT_MS").ok().as_deref())
}

/// [`dispatch_timeout_from_env`]'s reading of the variable's value (`None`: unset).
fn dispatch_timeout(value: Option<&str>) -> Duration {
    match value.map(str::trim) {
        None | Some("") => DEFAULT_DISPATCH_TIMEOUT,
        Some(text) => text.parse::<u64>().map(Duration::from_millis).unwrap_or_else(|_| {
            tracing::warn!(value = text, "AQUEDUCT_SOFT_DISPATCH_TIMEOUT_MS is a count of milliseconds; using 60000");
            DEFAULT_DISPATCH_TIMEOUT
        }),
    }
}

/// Spin before a processor parks on a barrier: 20 µs with at least 8 hardware threads, so one
/// late wake-up (a futex wake costs microseconds) does not make the next queue park too and
/// every later hand-off pay a wake-up; 2 µs on smaller hosts, where a spinning processor takes
/// the core its producer needs.
pub fn default_processor_spin() -> Duration {
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    if threads >= 8 { Duration::from_micros(20) } else { Duration::from_micros(2) }
}

/// Smallest queue ROCr accepts (`HSA_AGENT_INFO_QUEUE_MIN_SIZE`: 0x40 in ROCm 5.x–6.x's
/// `GpuAgent`, "Queue Min Size: 64(0x40)" in rocminfo-gfx1100.txt); older ROCr refused below
/// 0x1000. The default of [`SoftConfig::queue_min_packets`].
pub(crate) const MIN_PACKETS: u32 = 64;

impl Default for SoftConfig {
    fn default() -> Self {
        Self {
            agents: agents_from_env().unwrap_or_else(default_agents),
            visible_devices: std::env::var("ROCR_VISIBLE_DEVICES").ok(),
            cpu_name: "aqueduct soft CPU".into(),
            default_mode: ExecutionMode::Concurrent,
            queue_max_packets: 1 << 17,
            queue_min_packets: MIN_PACKETS,
            host_memory_bytes: 16 << 30,
            intercepted_doorbells: false,
            code_object_versions: 1..=6,
            processor_spin: default_processor_spin(),
            kernel_execution: KernelExecution::from_env(),
            dispatch_timeout: dispatch_timeout_from_env(),
        }
    }
}

/// `AQUEDUCT_SOFT_AGENTS`: a comma-separated list of GPU ISAs, each optionally followed by
/// `@wavefront` (default 32 for gfx10+, 64 before), e.g. `gfx1100,gfx90a:sramecc+:xnack-@64`.
/// Unset, empty or unparsable: `None` (the default single gfx1100), with a warning for the last.
fn agents_from_env() -> Option<Vec<SoftAgentConfig>> {
    let text = std::env::var("AQUEDUCT_SOFT_AGENTS").ok()?;
    match parse_agents(&text) {
        Ok(agents) if !agents.is_empty() => Some(agents),
        Ok(_) => None,
        Err(reason) => {
            tracing::warn!(%reason, "AQUEDUCT_SOFT_AGENTS ignored");
            None
        }
    }
}

/// Parses an `AQUEDUCT_SOFT_AGENTS` value.
pub fn parse_agents(text: &str) -> Result<Vec<SoftAgentConfig>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            let (isa, wavefront) = match entry.split_once('@') {
                Some((isa, wave)) => (
                    isa,
                    Some(wave.parse::<u32>().map_err(|_| format!("`{entry}`: wavefront `{wave}` is not a number"))?),
                ),
                None => (entry, None),
            };
            let full = if isa.starts_with("amdgcn-") { isa.to_string() } else { format!("amdgcn-amd-amdhsa--{isa}") };
            let target = aqueduct_codeobject::TargetId::parse(&full).map_err(|error| format!("`{entry}`: {error}"))?;
            let wavefront = wavefront.unwrap_or(if target.processor().name().starts_with("gfx9") { 64 } else { 32 });
            if wavefront != 32 && wavefront != 64 {
                return Err(format!("`{entry}`: wavefront {wavefront} is neither 32 nor 64"));
            }
            Ok(SoftAgentConfig::with_isa(&full, wavefront))
        })
        .collect()
}

impl SoftConfig {
    /// The configuration as JSON, every field written, for `aqueduct_soft_configure`.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a SoftConfig always serializes")
    }

    /// Reads [`Self::to_json`]'s form; a field left out takes its [`Default`] value, an unknown
    /// field or a value of the wrong type is an error.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|error| error.to_string())?;
        // serde would also read a struct from an array of its fields in order.
        if !value.is_object() {
            return Err("a configuration is a JSON object".into());
        }
        serde_json::from_value(value).map_err(|error| error.to_string())
    }
}

pub(crate) static PENDING_CONFIG: Mutex<Option<SoftConfig>> = Mutex::new(None);

/// The GPU agents a configuration gets when `AQUEDUCT_SOFT_AGENTS` names none: set once per
/// process by [`set_default_agents`] (the drop-in sets gfx1030), otherwise one gfx1100.
static DEFAULT_AGENTS: Mutex<Option<Vec<SoftAgentConfig>>> = Mutex::new(None);

/// Makes `agents` the GPU agents of every later default configuration in this process (an
/// `AQUEDUCT_SOFT_AGENTS` or an explicit configuration still wins). The drop-in calls it when it
/// loads: its clients are HIP and ROCm tools, and Debian's HIP 5.2.3 refuses gfx1100
/// ("Unsupported HSA device", as on hardware) while gfx1030 is its newest RDNA target; the
/// engine's embedded runtime keeps gfx1100.
pub fn set_default_agents(agents: Vec<SoftAgentConfig>) {
    *DEFAULT_AGENTS.lock().unwrap_or_else(|poison| poison.into_inner()) = Some(agents);
}

fn default_agents() -> Vec<SoftAgentConfig> {
    DEFAULT_AGENTS
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .clone()
        .filter(|agents| !agents.is_empty())
        .unwrap_or_else(|| vec![SoftAgentConfig::gfx1100()])
}

/// Sets the configuration used at the next initialization of the soft runtime.
pub fn configure(config: SoftConfig) {
    *PENDING_CONFIG.lock().unwrap_or_else(|poison| poison.into_inner()) = Some(config);
}

pub(crate) fn current() -> SoftConfig {
    PENDING_CONFIG.lock().unwrap_or_else(|poison| poison.into_inner()).clone().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watchdog_variable_is_milliseconds_zero_for_none_and_the_default_otherwise() {
        assert_eq!(dispatch_timeout(None), DEFAULT_DISPATCH_TIMEOUT);
        assert_eq!(dispatch_timeout(Some(" ")), DEFAULT_DISPATCH_TIMEOUT);
        assert_eq!(dispatch_timeout(Some("300")), Duration::from_millis(300));
        assert_eq!(dispatch_timeout(Some(" 0 ")), Duration::ZERO);
        assert_eq!(dispatch_timeout(Some("5s")), DEFAULT_DISPATCH_TIMEOUT);
        assert_eq!(dispatch_timeout(Some("-1")), DEFAULT_DISPATCH_TIMEOUT);
    }

    #[test]
    fn json_round_trips_and_fills_missing_fields_with_defaults() {
        let config = SoftConfig {
            agents: vec![
                SoftAgentConfig { name: "second \"quoted\"".into(), ..SoftAgentConfig::gfx1100() },
                SoftAgentConfig::with_isa("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", 64),
            ],
            visible_devices: Some("1,0".into()),
            default_mode: ExecutionMode::RetireOnly,
            queue_min_packets: 4,
            intercepted_doorbells: true,
            code_object_versions: 4..=5,
            processor_spin: Duration::from_nanos(1234),
            ..SoftConfig::default()
        };
        assert_eq!(SoftConfig::from_json(&config.to_json()), Ok(config));
        let partial = SoftConfig::from_json(r#"{"default_mode":"relaxed","queue_min_packets":4}"#).unwrap();
        assert_eq!(
            partial,
            SoftConfig { default_mode: ExecutionMode::Relaxed, queue_min_packets: 4, ..SoftConfig::default() }
        );
    }

    #[test]
    fn json_that_is_not_a_configuration_is_refused() {
        for text in [
            "",
            "{",
            "[]",
            r#"{"agents": 3}"#,
            r#"{"default_mode": "sideways"}"#,
            r#"{"no_such_field": 1}"#,
            r#"{"agents": [{"name": "a"}]}"#,
            r#"{"queue_min_packets": -1}"#,
        ] {
            assert!(SoftConfig::from_json(text).is_err(), "{text}");
        }
    }
}
