//! Replay capture: a device records its program's device-level stream into a `.aqreplay` file
//! (format: docs/REPLAY_FORMAT.md; the records are `aqueduct_profile::replay`), and
//! [`Replay`] runs such a file again, on its own.
//!
//! - here: the configuration (in code, or from `AQUEDUCT_REPLAY_OUTPUT`), the ids objects carry,
//!   and the names the file gives engine enums;
//! - `capture.rs`: the running capture: its places in the stream, bounded buffer and writer thread;
//! - `run.rs`: the replayer.
//!
//! The capture starts with the device and ends when the device drops: every host-visible
//! buffer's contents are checksummed when its memory is freed (after its last handle dropped and
//! every submission that could touch it settled), so "the end" of each buffer is exact even for
//! a program that drops its buffers long before its engine.
//!
//! With the capture off, each recorded call pays one load of an `Option` and a branch.

mod capture;
mod run;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use aqueduct_components::device_entities::MemoryKind;
use aqueduct_profile::replay::{BufferRange, Operation};

pub(crate) use capture::ReplayCapture;
pub use run::{DEFAULT_REPLAY_MEMORY_BUDGET, Replay, ReplayOptions, ReplayOutcome, ReplaySummary, ReplayTiming};

use crate::error::{EngineError, EngineResult};
use crate::memory::Binding;

/// The variable naming a replay output file: a device opened while it is set captures into it.
pub const REPLAY_OUTPUT_ENV: &str = "AQUEDUCT_REPLAY_OUTPUT";

/// How a replay capture runs. `ReplayConfig::new(path)` gives the defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayConfig {
    /// The `.aqreplay` file written.
    pub output: PathBuf,
    /// Most bytes of records waiting for the writer; a producer that finds the buffer full
    /// waits. 64 MiB by default.
    pub buffer_bytes: usize,
    /// How long a producer waits for room before the capture fails (loudly: an error is logged
    /// and returned when it ends, and the file is left without its end chunk). 10 s by default.
    pub stall_timeout: Duration,
}

impl ReplayConfig {
    /// A capture into `output`, with a 64 MiB buffer and a 10 s stall timeout.
    pub fn new(output: impl Into<PathBuf>) -> Self {
        Self { output: output.into(), buffer_bytes: 64 << 20, stall_timeout: Duration::from_secs(10) }
    }

    /// With at most `bytes` of records waiting for the writer.
    pub fn buffer_bytes(mut self, bytes: usize) -> Self {
        self.buffer_bytes = bytes;
        self
    }

    /// Failing once a producer waited `timeout` for room (`Duration::MAX`: never).
    pub fn stall_timeout(mut self, timeout: Duration) -> Self {
        self.stall_timeout = timeout;
        self
    }

    /// The capture `AQUEDUCT_REPLAY_OUTPUT` asks for, if it is set and not empty.
    pub fn from_env() -> EngineResult<Option<Self>> {
        let Some(output) = std::env::var_os(REPLAY_OUTPUT_ENV) else { return Ok(None) };
        if output.is_empty() {
            return Ok(None);
        }
        Ok(Some(Self::new(output)))
    }

    /// Checks the settings: a buffer of at least 4 KiB and a stall timeout above zero.
    pub fn validate(&self) -> EngineResult<()> {
        let invalid = |reason: &str| Err(EngineError::InvalidArgument { what: "replay", reason: reason.into() });
        if self.buffer_bytes < 4096 {
            return invalid("buffer_bytes must be at least 4096");
        }
        if self.stall_timeout.is_zero() {
            return invalid("stall_timeout must be above zero");
        }
        Ok(())
    }
}

/// An object's id in the running capture; 0 for one it does not record (the engine's own
/// buffers and semaphores, or any object made while no capture runs).
#[derive(Debug, Default)]
pub(crate) struct ReplayId(AtomicU64);

impl ReplayId {
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    pub fn set(&self, id: u64) {
        self.0.store(id, Ordering::Relaxed);
    }
}

/// A pool's settings as the file names them.
pub(crate) fn pool_settings(config: &crate::PoolConfig) -> aqueduct_profile::replay::PoolSettings {
    aqueduct_profile::replay::PoolSettings {
        kind: names::kind(config.kind),
        agent: config.agent as u32,
        block_size: config.block_size,
        granule: config.granule,
        reserve: config.reserve,
        max_size: config.max_size,
        trim: names::trim(config.trim),
        exhaustion: names::exhaustion(config.exhaustion),
    }
}

/// A HAL dispatch as the file names it.
pub(crate) fn describe_dispatch(kernel: &crate::Kernel, dispatch: &crate::Dispatch) -> Operation {
    Operation::Dispatch {
        executable: kernel.executable.replay_id.get(),
        kernel: kernel.name().to_string(),
        grid: dispatch.grid,
        workgroup: dispatch.workgroup,
        bindings: dispatch.bindings.iter().map(range).collect(),
        constants: dispatch.constants.to_vec(),
    }
}

/// A raw dispatch: its kernargs, and where they point into captured buffers.
pub(crate) fn describe_raw_dispatch(
    capture: &ReplayCapture,
    kernel: &crate::Kernel,
    dispatch: &crate::RawDispatch,
) -> Operation {
    Operation::RawDispatch {
        executable: kernel.executable.replay_id.get(),
        kernel: kernel.name().to_string(),
        grid: dispatch.grid,
        workgroup: dispatch.workgroup,
        kernargs: dispatch.kernargs.to_vec(),
        relocations: capture.relocations(dispatch.kernargs),
    }
}

/// An execution: the command buffer and its binding table's slots.
pub(crate) fn describe_execute(command_buffer: &crate::CommandBuffer, table: &crate::BindingTable) -> Operation {
    Operation::Execute {
        command_buffer: command_buffer.replay_id(),
        table: table
            .slots
            .iter()
            .map(|slot| slot.as_ref().map(|slot| range(&slot.buffer.range(slot.offset, slot.length))))
            .collect(),
    }
}

/// An alloca: the buffer it returned joins the capture.
pub(crate) fn describe_alloca(
    capture: &ReplayCapture,
    pool: &crate::Pool,
    size: u64,
    buffer: &crate::Buffer,
) -> Operation {
    let id = capture.next_id();
    buffer.0.replay_id.set(id);
    capture.buffer_live(id, buffer.device_address(), buffer.size());
    Operation::Alloca { pool: pool.0.replay_id.get(), size, buffer: id }
}

/// A binding as the file names it.
pub(crate) fn range(binding: &Binding) -> BufferRange {
    BufferRange { buffer: binding.buffer.replay_id(), offset: binding.offset, length: binding.length }
}

/// Names the file gives engine enums, one table each way.
pub(crate) mod names {
    use super::*;
    use crate::config::QueuePriority;
    use crate::pool::{Exhaustion, TrimPolicy};
    use crate::{CommandBufferUsage, CompareOp};

    const KINDS: [(MemoryKind, &str); 3] = [
        (MemoryKind::DeviceLocal, "device-local"),
        (MemoryKind::HostVisible, "host-visible"),
        (MemoryKind::HostVisibleDevice, "host-visible-device"),
    ];
    const PRIORITIES: [(QueuePriority, &str); 3] =
        [(QueuePriority::Low, "low"), (QueuePriority::Normal, "normal"), (QueuePriority::High, "high")];
    const TRIMS: [(TrimPolicy, &str); 2] = [(TrimPolicy::Manual, "manual"), (TrimPolicy::KeepReserve, "keep-reserve")];
    const USAGES: [(CommandBufferUsage, &str); 2] =
        [(CommandBufferUsage::OneShot, "one-shot"), (CommandBufferUsage::Reusable, "reusable")];
    const COMPARES: [(CompareOp, &str); 6] = [
        (CompareOp::Eq, "eq"),
        (CompareOp::Ne, "ne"),
        (CompareOp::Lt, "lt"),
        (CompareOp::Le, "le"),
        (CompareOp::Gt, "gt"),
        (CompareOp::Ge, "ge"),
    ];

    fn name<T: PartialEq + Copy>(table: &[(T, &'static str)], value: T) -> String {
        table.iter().find(|(entry, _)| *entry == value).map_or("?", |(_, name)| name).to_string()
    }

    fn parse<T: Copy>(table: &[(T, &'static str)], what: &'static str, name: &str) -> EngineResult<T> {
        table.iter().find(|(_, entry)| *entry == name).map(|(value, _)| *value).ok_or_else(|| {
            EngineError::InvalidArgument { what, reason: format!("`{name}` is not a {what} this aqueduct knows") }
        })
    }

    pub fn kind(kind: MemoryKind) -> String {
        name(&KINDS, kind)
    }
    pub fn parse_kind(text: &str) -> EngineResult<MemoryKind> {
        parse(&KINDS, "memory kind", text)
    }
    pub fn priority(priority: QueuePriority) -> String {
        name(&PRIORITIES, priority)
    }
    pub fn parse_priority(text: &str) -> EngineResult<QueuePriority> {
        parse(&PRIORITIES, "queue priority", text)
    }
    pub fn trim(trim: TrimPolicy) -> String {
        name(&TRIMS, trim)
    }
    pub fn parse_trim(text: &str) -> EngineResult<TrimPolicy> {
        parse(&TRIMS, "trim policy", text)
    }
    pub fn usage(usage: CommandBufferUsage) -> String {
        name(&USAGES, usage)
    }
    pub fn parse_usage(text: &str) -> EngineResult<CommandBufferUsage> {
        parse(&USAGES, "command buffer usage", text)
    }
    pub fn compare(compare: CompareOp) -> String {
        name(&COMPARES, compare)
    }
    pub fn parse_compare(text: &str) -> EngineResult<CompareOp> {
        parse(&COMPARES, "comparison", text)
    }

    pub fn exhaustion(exhaustion: Exhaustion) -> String {
        match exhaustion {
            Exhaustion::Fail => "fail".into(),
            Exhaustion::Wait(timeout) => format!("wait:{}", timeout.as_nanos()),
        }
    }
    pub fn parse_exhaustion(text: &str) -> EngineResult<Exhaustion> {
        if text == "fail" {
            return Ok(Exhaustion::Fail);
        }
        text.strip_prefix("wait:")
            .and_then(|ns| ns.parse().ok())
            .map(|ns| Exhaustion::Wait(Duration::from_nanos(ns)))
            .ok_or_else(|| EngineError::InvalidArgument {
                what: "exhaustion",
                reason: format!("`{text}` is not fail or wait:<ns>"),
            })
    }
}
