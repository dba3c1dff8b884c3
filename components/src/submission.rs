//! A submission as the stages see it: a *submission row*, an entity of the queue's World with the
//! staged input ([`StagedSubmission`]) and the admission plan the stages hand on
//! ([`AdmissionPlan`]), listed in queue order by [`SubmissionRows`].
//!
//! Rows are spawned when the queue is created (more only when a batch or parked work outgrows
//! them) and recycled: their vectors keep their capacity from one submission to the next, so a
//! steady stream of submissions allocates nothing.

use std::collections::VecDeque;

use aqueduct_abi::ImplicitKernargs;
use bevy_ecs::prelude::*;

use crate::capture::OperationTag;
use crate::frontier::Frontier;
use crate::program::{ProgramRun, SegmentPlan};
use crate::semaphore_table::Producer;

/// A wait on a timeline semaphore of this device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitOp {
    pub semaphore: u32,
    pub value: u64,
}

/// A signal of a timeline semaphore of this device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignalOp {
    pub semaphore: u32,
    pub value: u64,
}

/// The one kernel dispatch a submission carries, without its kernarg address.
pub use aqueduct_abi::DispatchTemplate;

/// How the kernarg segment is built in the reserved kernarg space.
// The HAL variant carries the 256-byte implicit block inline on purpose: the layout lives once per
// queue (in the staged submission), and boxing it would allocate on every submission.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum KernargLayout {
    /// No kernargs (a barrier).
    #[default]
    None,
    /// The HAL layout: binding pointers, then 32-bit constants, then (when the kernel reads
    /// them) the implicit arguments at `implicit_offset`.
    Hal { implicit_offset: Option<u32>, implicit: ImplicitKernargs },
    /// Caller-supplied bytes, copied as they are.
    Raw,
}

/// The staged payload: what the stages emit after the device-side waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Payload {
    /// Only ordering and signals: one BARRIER_AND without dependencies carries the epoch.
    #[default]
    Barrier,
    Dispatch(DispatchTemplate),
    /// A segment of a command-buffer execution ([`StagedSubmission::program`]).
    Program,
}

/// A submission waiting to be published. Filled by the engine's queue operation, consumed by the
/// stages.
#[derive(Component, Default)]
pub struct StagedSubmission {
    pub waits: Vec<WaitOp>,
    pub signals: Vec<SignalOp>,
    /// The row's place in the queue's staging order ([`SubmissionRows::staged`] when it was
    /// staged).
    pub row: u64,
    pub payload: Payload,
    pub layout: KernargLayout,
    /// Binding pointers (HAL layout).
    pub bindings: Vec<u64>,
    /// 32-bit constants (HAL layout).
    pub constants: Vec<u32>,
    /// Raw kernarg bytes (raw layout and builtins).
    pub raw: Vec<u8>,
    /// Bytes of the kernarg segment, and its alignment.
    pub kernarg_size: u32,
    pub kernarg_alignment: u32,
    /// Extra bytes staged in the kernarg ring after the segment (update payloads), whose device
    /// address is written as a u64 at `staging_pointer_offset` inside the segment.
    pub staging: Vec<u8>,
    pub staging_pointer_offset: Option<u32>,
    /// The command-buffer execution ([`Payload::Program`]).
    pub program: ProgramRun,
    /// The row was parked (counted once in the queue's statistics).
    pub parked: bool,
    /// The operation as the user called it (for the profile).
    pub operation: OperationTag,
    /// Host clock (ns) when the submitting call entered the engine; 0 when not capturing.
    pub submit_entry_ns: u64,
}

impl StagedSubmission {
    /// Empties every list, keeping capacity.
    pub fn clear(&mut self) {
        self.waits.clear();
        self.signals.clear();
        self.payload = Payload::Barrier;
        self.layout = KernargLayout::None;
        self.bindings.clear();
        self.constants.clear();
        self.raw.clear();
        self.kernarg_size = 0;
        self.kernarg_alignment = 16;
        self.staging.clear();
        self.staging_pointer_offset = None;
        self.program.clear();
        self.parked = false;
        self.operation = OperationTag::Barrier;
        self.submit_entry_ns = 0;
    }

    /// Whether kernarg patching writes anything for this row (a segment layout or staged bytes).
    #[inline]
    pub fn has_kernargs_to_patch(&self) -> bool {
        !matches!(self.layout, KernargLayout::None) || !self.staging.is_empty()
    }

    /// Kernarg-ring bytes this submission needs, before alignment padding.
    pub fn kernarg_bytes(&self) -> u64 {
        let staging = if self.staging.is_empty() { 0 } else { self.staging.len() as u64 + 16 };
        u64::from(self.kernarg_size) + staging
    }
}

/// A wait admission turned into a device-side barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceWait {
    pub producer: Producer,
    /// The semaphore the wait came from: if it fails, the waiting submission fails with it.
    pub semaphore: u32,
    /// The value waited for. Once the wait has passed on the device, the semaphore is known to
    /// hold it even if the producer's queue has not drained yet, so this queue's drain raises it
    /// first: whoever sees this epoch's signals then sees what they depended on.
    pub value: u64,
    /// Whether a barrier packet waits on it; false when queue order or the frontier covers it.
    pub barrier: bool,
    /// A covered wait that holds only if this queue's epoch `via` succeeds (the frontier entry
    /// covering it is still pending on that epoch's barriers); 0 when unconditional.
    pub via: u64,
    /// The device signal a barrier waits on, named at admission so publication needs no lookup:
    /// the producer queue's epoch signal (BarrierValue) or the producer epoch's own signal
    /// (BarrierAnd; 0 when that epoch was drained first, and the packet names nothing).
    pub signal: u64,
    /// BarrierAnd: whether the barrier named the producer's per-epoch signal (and so holds one
    /// of its `slot_users` until this epoch is drained).
    pub slot_named: bool,
}

/// Admission's verdict on the staged submission.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Verdict {
    /// Not yet decided.
    #[default]
    Pending,
    /// Every wait is resolved; the reservation below is held.
    Admitted,
    /// A wait cannot be resolved on the device yet (wait-before-signal, host-signalled): the
    /// submission must be parked and admitted again when a semaphore advances.
    Defer,
    /// Resources are short (AQL slots, kernarg space, epoch rows): retry after reclaim.
    Backpressure,
    /// A wait's semaphore failed; the index is into the failure log.
    DependencyFailed(u32),
    /// The queue itself failed.
    QueueFailed(u32),
    /// More packets or kernarg bytes than the queue can ever hold at once.
    TooLarge,
    /// A command-buffer execution replayed more blocks than its limit (a conditional loop that
    /// never exits).
    ReplayLimit,
    /// The engine's own state is inconsistent; the submission fails instead of running
    /// something other than what was asked.
    Fault(SubmissionFault),
}

/// A submission the stages cannot carry out as asked, because something the engine checked
/// earlier no longer holds (an internal invariant, not bad input). It fails the submission and
/// its signals; it never turns into a barrier that passes, a null pointer or kernel object 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubmissionFault {
    /// A program payload without its finished image.
    NoProgramImage,
    /// A program payload whose cursor is already past its return.
    ProgramFinished,
    /// The program has no block with this ordinal, or the block cannot be read.
    MissingBlock { block: u32 },
    /// A block's closing branch could not be read or evaluated.
    UnreadableBranch { block: u32 },
    /// A command's binding source resolves to no address with this execution's table.
    UnresolvedSource { block: u32, source: u32 },
    /// A command's kernarg data (template, constants) is not in the image.
    MissingKernargData { block: u32, command: u32 },
    /// A fill, copy, update or marker that the device library cannot plan.
    TransferNotPlanned { block: u32, command: u32 },
    /// The agent's device library has no kernel for this builtin (by discriminant).
    MissingBuiltin { builtin: u8 },
    /// A pending submission row lost its components.
    MissingRow,
    /// A device wait's producer queue has no endpoint in the directory when its barrier is
    /// named (wait resolution found it, and entries are never removed, so this is a broken
    /// invariant, reported instead of publishing a barrier that waits on nothing).
    UnknownProducerQueue { queue: u16 },
}

impl core::fmt::Display for SubmissionFault {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::NoProgramImage => f.write_str("the command buffer's program image is missing"),
            Self::ProgramFinished => f.write_str("the command-buffer execution already returned"),
            Self::MissingBlock { block } => write!(f, "program block {block} does not exist or cannot be read"),
            Self::UnreadableBranch { block } => {
                write!(f, "the branch closing program block {block} cannot be evaluated")
            }
            Self::UnresolvedSource { block, source } => {
                write!(
                    f,
                    "binding source {source} of program block {block} resolves to no address with this binding table"
                )
            }
            Self::MissingKernargData { block, command } => {
                write!(f, "command {command} of program block {block} has no kernarg data")
            }
            Self::UnknownProducerQueue { queue } => {
                write!(f, "queue {queue}, which produces a waited-on value, is not in the queue directory")
            }
            Self::TransferNotPlanned { block, command } => {
                write!(f, "the device library cannot plan command {command} of program block {block}")
            }
            Self::MissingBuiltin { builtin } => write!(f, "the device library has no kernel for builtin {builtin}"),
            Self::MissingRow => f.write_str("a pending submission row lost its components"),
        }
    }
}

/// What admission decided and reserved for the staged submission.
#[derive(Component, Default)]
pub struct AdmissionPlan {
    pub verdict: Verdict,
    /// Device-side waits, one per producer queue (the latest epoch of each).
    pub device_waits: Vec<DeviceWait>,
    /// What the producers of the barriers are known to have reached (their records' frontiers).
    pub frontier: Frontier,
    /// AQL packets reserved: one per device-wait barrier, plus the payload packet.
    pub packets: u64,
    /// First reserved AQL packet id.
    pub first_packet: u64,
    /// Reserved kernarg-ring span: device address of the segment and of the staging bytes.
    pub kernarg_address: u64,
    pub staging_address: u64,
    /// Kernarg-ring position after this submission (what reclaim frees up to).
    pub kernarg_end: u64,
    /// The epoch this submission retires.
    pub epoch: u64,
    /// Program payloads: the blocks this epoch replays.
    pub segment: SegmentPlan,
    /// A wait barrier that could not be named at reservation: publication runs nothing of the
    /// payload and the epoch fails.
    pub wait_fault: Option<SubmissionFault>,
}

impl AdmissionPlan {
    pub fn clear(&mut self) {
        self.verdict = Verdict::Pending;
        self.device_waits.clear();
        self.wait_fault = None;
        self.frontier = Frontier::EMPTY;
        self.packets = 0;
        self.first_packet = 0;
        self.kernarg_address = 0;
        self.staging_address = 0;
        self.kernarg_end = 0;
        self.epoch = 0;
        self.segment.clear();
    }
}

/// The queue's submission rows: which are staged, in queue order, and which are free. Held by the
/// queue World's `QueueState` resource (not a resource of its own: one fetch less per pass and
/// per staging).
///
/// A pass of the stages starts at the front of `pending` and admits rows in order until one
/// cannot go; everything behind that row waits with it, so queue order holds.
#[derive(Default)]
pub struct SubmissionRows {
    /// Staged rows not yet published, oldest first.
    pub pending: VecDeque<Entity>,
    /// Recycled rows, ready to stage into.
    pub free: Vec<Entity>,
    /// The pending rows are parked: a pass stopped on a wait that cannot be resolved on the
    /// device yet, and the completion thread retries them when a semaphore advances. While set,
    /// new submissions queue behind them without running a pass.
    pub parked: bool,
    /// Rows staged so far: the next row's sequence.
    pub staged: u64,
    /// What the current pass did.
    pub pass: PassOutcome,
}

impl SubmissionRows {
    /// Moves a free row to the back of the pending rows; `None` when no row is free.
    pub fn take_free(&mut self) -> Option<Entity> {
        let entity = self.free.pop()?;
        self.pending.push_back(entity);
        Some(entity)
    }
}

/// What one pass of the stages did with the pending rows.
#[derive(Default)]
pub struct PassOutcome {
    /// Rows admitted by this pass, in order (kernarg patching and publication walk these).
    pub admitted: Vec<Entity>,
    /// How many of them have kernargs to patch (counted by `admit_pending`): when none do (a
    /// pass of barriers), patching looks no row up.
    pub patches: u64,
    /// The row the pass stopped at, and why.
    pub stop: Option<(Entity, Verdict)>,
    /// Submissions published (a program's earlier segments are not counted).
    pub published: u64,
    /// AQL packets published, and how many of them were device-wait barriers.
    pub packets: u64,
    pub device_waits: u64,
    /// The first submission fault publication hit: that submission's epoch runs as passing
    /// barriers and its signals fail when it retires.
    pub fault: Option<SubmissionFault>,
}

impl PassOutcome {
    pub fn clear(&mut self) {
        self.admitted.clear();
        self.patches = 0;
        self.stop = None;
        self.published = 0;
        self.packets = 0;
        self.device_waits = 0;
        self.fault = None;
    }
}
