//! Command buffers: record once, finish once into a block program, execute many times.
//!
//! - [`recording`]: the public recording calls; each is checked by the recorder and, under a
//!   replay capture, described.
//! - [`recorder`]: the `CommandBuffer` builder. Barriers fold into the neighbouring commands'
//!   fence scopes, blocks split at a size limit, each dispatch gets its kernarg strategy.
//! - [`finish`]: one pass that lays the blocks out, bakes each command's block step, publishes
//!   the image to device memory when something reads it there, and records the facts execution reads
//!   ([`ProgramFacts`], the binding table's needs).
//! - [`pool`]: the recorders a device keeps for reuse.
//! - [`needs`]: what every execution needs of its binding table (slot requirements, copies
//!   whose overlap depends on the table); the recorder collects it, finishing keeps it.
//! - [`binding_table`]: the per-execution slots a program's dynamic bindings name.
//!
//! `Queue::execute` (`queue/execute.rs`) checks the table once and hands the program to the
//! queue's stages; the block processor in `aqueduct-systems` runs it.

mod binding_table;
mod device_program;
mod finish;
mod needs;
mod pool;
mod recorder;
mod recording;

use std::mem::ManuallyDrop;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

pub use aqueduct_abi::block_program::CompareOp;

use crate::replay_capture::names::{self, Named};
pub use binding_table::BindingTable;
pub use device_program::DEVICE_MIN_PACKETS;
pub use finish::ProgramFacts;
pub use recorder::{BlockLabel, BufferRef};
pub use recording::RecordedLaunch;

use aqueduct_components::program::ProgramImage;
use bevy_ecs::entity::Entity;

use crate::config::BlockProcessing;
use crate::device::DeviceShared;

/// Whether a command buffer runs once or many times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandBufferUsage {
    /// Executed at most once: all-static dispatches copy their template at execution instead of
    /// keeping prepublished kernargs.
    OneShot,
    /// Executed any number of times, concurrently on several queues.
    Reusable,
}

impl Named for CommandBufferUsage {
    const WHAT: &'static str = "command buffer usage";
    const NAMES: &'static [(Self, &'static str)] =
        &[(CommandBufferUsage::OneShot, "one-shot"), (CommandBufferUsage::Reusable, "reusable")];
}

impl Named for CompareOp {
    const WHAT: &'static str = "comparison";
    const NAMES: &'static [(Self, &'static str)] = &[
        (CompareOp::Eq, "eq"),
        (CompareOp::Ne, "ne"),
        (CompareOp::Lt, "lt"),
        (CompareOp::Le, "le"),
        (CompareOp::Gt, "gt"),
        (CompareOp::Ge, "ge"),
    ];
}

/// Where recording splits a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockLimits {
    /// Most AQL packets one block may cost; a block must fit a queue's ring to execute.
    pub packets: u32,
    /// Most kernarg bytes one block may cost; at most half a queue's kernarg ring.
    pub kernarg_bytes: u32,
}

impl Default for BlockLimits {
    fn default() -> Self {
        Self { packets: 512, kernarg_bytes: 128 * 1024 }
    }
}

/// A recorded sequence of queue work. Recording takes `&mut self`; once [`Self::finish`]ed, the
/// buffer is immutable and [`crate::Queue::execute`] can run it on any queue of its agent.
pub struct CommandBuffer {
    pub(crate) device: Arc<DeviceShared>,
    agent: usize,
    usage: CommandBufferUsage,
    state: State,
    /// The limits recording splits blocks at (a replay capture records them).
    limits: BlockLimits,
    /// Under a replay capture: the recording calls so far, recorded when it finishes.
    captured: Option<Vec<aqueduct_profile::replay::Command>>,
    /// Its id in the replay capture once finished (0: not captured).
    replay_id: u64,
    /// Where its executions' blocks are turned into packets.
    processing: BlockProcessing,
}

enum State {
    Recording(Box<recorder::Recorder>),
    Finished(Arc<FinishedProgram>),
    /// Only while finishing or dropping: the recorder went back to the device.
    Released,
}

/// What a recording keeps alive: the buffers and executables its static bindings and kernels
/// point into, for as long as the command buffer lives (per recording, not per execution).
pub(crate) type Retained = Arc<dyn core::any::Any + Send + Sync>;

/// A finished program and what it keeps alive.
pub(crate) struct FinishedProgram {
    pub device: Arc<DeviceShared>,
    pub agent: usize,
    /// Shared with the program's entity, which keeps it for executions until released; taken
    /// first in `drop`, so the entity's is the last reference and gives the block World back.
    pub image: ManuallyDrop<Arc<ProgramImage>>,
    pub facts: ProgramFacts,
    /// What each binding-table slot must provide, by slot.
    pub slot_needs: Vec<needs::SlotNeed>,
    /// Copies with a dynamic side, checked for overlap per execution.
    pub copy_checks: Vec<needs::CopyCheck>,
    /// Static buffers and executables the program points into. Never read: held so they are
    /// not released before the command buffer is; dropped with it, they are freed once its
    /// executions have settled, as it is.
    #[allow(dead_code)]
    pub retained: Vec<Retained>,
    /// The device World's record of the program (its published image, if any), released when
    /// the last handle drops.
    pub entity: Entity,
    pub one_shot: bool,
    pub executed: AtomicBool,
}

impl FinishedProgram {
    /// Its device program, built and published by the first caller, or why it has none.
    pub fn device_program(&self) -> Result<&aqueduct_components::program::DeviceProgramRef, &'static str> {
        self.image
            .device
            .get_or_init(|| finish::publish_device_program(&self.device, self.agent, &self.image))
            .as_ref()
            .map_err(|reason| *reason)
    }
}

impl Drop for FinishedProgram {
    fn drop(&mut self) {
        // SAFETY: `image` is not used again: this is the program's drop. Dropped first, so that
        // the entity's reference is the last one when it is released (perhaps right away).
        drop(unsafe { ManuallyDrop::take(&mut self.image) });
        self.device.defer_release(self.entity);
    }
}

impl CommandBuffer {
    pub(crate) fn new(
        device: &Arc<DeviceShared>,
        agent: usize,
        usage: CommandBufferUsage,
        limits: BlockLimits,
    ) -> crate::EngineResult<Self> {
        device.agent(agent)?;
        recorder::check_limits(limits)?;
        let mut recorder = pool::take_recorder(device);
        recorder.start(limits);
        let captured = device.replay_capture().map(|_| Vec::new());
        Ok(Self {
            device: device.clone(),
            agent,
            usage,
            state: State::Recording(recorder),
            limits,
            captured,
            replay_id: 0,
            processing: device.config.block_processing,
        })
    }

    /// Where its executions' blocks are turned into packets: by the host, by the device
    /// library's block processor, or (the default, from `EngineConfig::block_processing`) as
    /// the engine's cost model picks per execution.
    pub fn set_processing(&mut self, processing: BlockProcessing) {
        self.processing = processing;
    }

    /// See [`Self::set_processing`].
    pub fn processing(&self) -> BlockProcessing {
        self.processing
    }

    /// Why the device cannot process its executions, once finished; `None` when it can.
    pub fn device_ineligible(&self) -> Option<&'static str> {
        match &self.state {
            State::Finished(program) => program.device_program().err(),
            State::Recording(_) | State::Released => Some("it is not finished"),
        }
    }

    /// Whether it runs once or many times.
    pub fn usage(&self) -> CommandBufferUsage {
        self.usage
    }

    /// The agent whose queues can execute it.
    pub fn agent(&self) -> usize {
        self.agent
    }

    /// Whether [`Self::finish`] has succeeded: the buffer can be executed, no longer recorded into.
    pub fn is_finished(&self) -> bool {
        matches!(self.state, State::Finished(_))
    }

    /// The command buffer's id once finished: unique in the process, it names the command
    /// buffer in the profile's records of its executed dispatches (`CommandRef::command_buffer`,
    /// beside the command's recording index).
    pub fn id(&self) -> Option<u64> {
        match &self.state {
            State::Finished(program) => Some(program.image.id),
            State::Recording(_) | State::Released => None,
        }
    }

    /// The facts finishing recorded, once finished.
    pub fn facts(&self) -> Option<&ProgramFacts> {
        match &self.state {
            State::Finished(program) => Some(&program.facts),
            State::Recording(_) | State::Released => None,
        }
    }

    /// The finished program image (the bytes the ABI validator accepts), once finished.
    pub fn program_image(&self) -> Option<&[u8]> {
        match &self.state {
            State::Finished(program) => Some(&program.image.bytes),
            State::Recording(_) | State::Released => None,
        }
    }

    /// Its id in the replay capture (0 when it is not captured).
    pub(crate) fn replay_id(&self) -> u64 {
        self.replay_id
    }

    /// Finishing succeeded: a capture records the command buffer's calls.
    fn record_finished(&mut self) {
        let (Some(commands), Some(replay)) = (self.captured.take(), self.device.replay_capture()) else { return };
        self.replay_id = replay.next_id();
        replay.push(aqueduct_profile::replay::ReplayRecord::CommandBuffer {
            id: self.replay_id,
            agent: self.agent as u32,
            usage: names::name(self.usage),
            block_packets: self.limits.packets,
            block_kernarg_bytes: self.limits.kernarg_bytes,
            commands,
        });
    }

    pub(crate) fn finished(&self) -> crate::EngineResult<&Arc<FinishedProgram>> {
        match &self.state {
            State::Finished(program) => Ok(program),
            State::Recording(_) | State::Released => {
                Err(crate::EngineError::CommandBufferState { reason: "it is still recording; call finish() first" })
            }
        }
    }
}

impl Drop for CommandBuffer {
    fn drop(&mut self) {
        // A buffer dropped while recording gives its recorder back too.
        if let State::Recording(recorder) = std::mem::replace(&mut self.state, State::Released) {
            pool::give_recorder(&self.device, recorder);
        }
    }
}

impl std::fmt::Debug for CommandBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandBuffer")
            .field("agent", &self.agent)
            .field("usage", &self.usage)
            .field("facts", &self.facts())
            .finish()
    }
}
