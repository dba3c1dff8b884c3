//! Every way an engine call can fail. Bad input is reported before anything changes.
//!
//! Every type an [`EngineError`] carries is named here, whichever crate defines it, so a caller
//! can match on it with one import path.

use std::sync::Arc;
use std::time::Duration;

pub use aqueduct_builtins::PlanError;
pub use aqueduct_codeobject::{ArgLayoutMismatch, UnknownKernel};
pub use aqueduct_components::semaphore_table::FailureRecord;
pub use aqueduct_components::submission::SubmissionFault;
pub use aqueduct_hsa::{ExecutableError, HsaError};

/// The result of an engine call.
pub type EngineResult<T> = Result<T, EngineError>;

/// Why an engine call failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A [`DeviceSpec`](crate::DeviceSpec) string could not be parsed.
    #[error("device spec `{spec}`: {reason}")]
    InvalidDeviceSpec {
        /// The string as given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No device could be opened: the runtime did not load, no agent matches the spec, an
    /// agent lacks a needed pool, or a queue's completion thread could not start.
    #[error("no device: {reason}")]
    NoDevice {
        /// Why.
        reason: String,
    },
    /// A call into the HSA provider (ROCr or the soft runtime) failed.
    #[error(transparent)]
    Hsa(#[from] HsaError),
    /// An object (buffer, kernel, pool, semaphore, command buffer) was used with a device other
    /// than the one that created it.
    #[error("{what} belongs to another device")]
    ForeignObject {
        /// Which kind of object.
        what: &'static str,
    },
    /// A byte range does not fit its buffer or file, or its end overflows `u64`.
    #[error("{what}: range at offset {offset} of {length} bytes exceeds the {size}-byte buffer")]
    OutOfBounds {
        /// Which operation or argument the range belongs to.
        what: &'static str,
        /// Start of the range, in bytes.
        offset: u64,
        /// Length of the range, in bytes.
        length: u64,
        /// Size of the buffer or file (`u64::MAX` when only the end overflowed).
        size: u64,
    },
    /// An argument has a value the call does not accept.
    #[error("invalid {what}: {reason}")]
    InvalidArgument {
        /// Which argument.
        what: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A typed launch's arguments do not match what the kernel's metadata declares.
    #[error("kernel `{kernel}`, argument {index}: {reason}")]
    KernelArgument {
        /// The kernel.
        kernel: String,
        /// The argument's position among the explicit arguments.
        index: usize,
        /// What the metadata declares and what was given.
        reason: String,
    },
    /// A built-in operation (fill, copy, update) was asked for something it cannot plan.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A dispatch's grid or workgroup size is zero in some dimension, too large in total, or
    /// beyond the kernel's limits.
    #[error("invalid grid {grid:?} with workgroup {workgroup:?}: {reason}")]
    InvalidGrid {
        /// Grid size in work-items.
        grid: [u32; 3],
        /// Workgroup size in work-items.
        workgroup: [u16; 3],
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// A dispatch would name no kernel object (an agent the kernel was not loaded on, or a
    /// provider that reported 0): refused, never published as kernel object 0.
    #[error("kernel `{kernel}` has no kernel object on agent {agent}")]
    NoKernelObject {
        /// The kernel's name.
        kernel: String,
        /// Index of the agent in the device.
        agent: usize,
    },
    /// The kernel arguments given do not fit the kernel: wrong byte count, wrong number of
    /// bindings or constants, a kernel without the HAL layout, or a kernarg segment too large
    /// for a command buffer.
    #[error("kernargs for `{kernel}` do not match its metadata: {reason}")]
    KernargMismatch {
        /// The kernel's name.
        kernel: String,
        /// What does not match.
        reason: String,
    },
    /// A kernel lookup named a kernel the code object does not have (also: a host build
    /// registered for a descriptor symbol the code object does not define).
    #[error(transparent)]
    UnknownKernel(#[from] UnknownKernel),
    /// A host build (the CPU implementation the soft runtime runs, C or Rust) declares explicit
    /// arguments that disagree with its code object's metadata; names the kernel and the first
    /// argument that differs. Reported when the host build is registered and when the code object
    /// loads, never left for a dispatch to find.
    #[error(transparent)]
    HostBuildMismatch(#[from] ArgLayoutMismatch),
    /// A code object could not be loaded: it is not a usable code object, its target cannot
    /// run on an agent, or the runtime refused a loading step.
    #[error(transparent)]
    Executable(#[from] ExecutableError),
    /// None of the code objects a program offered runs on the device's agents
    /// ([`Device::select_code_object`](crate::Device::select_code_object)); one reason per code
    /// object, in the order given (empty: none was offered).
    #[error("no code object runs on agents {agents}: {}", if rejected.is_empty() { "none was given".to_owned() } else { rejected.join("; ") })]
    NoCodeObjectForAgents {
        /// The agents' ISA names.
        agents: String,
        /// Why each code object was passed over.
        rejected: Vec<String>,
    },
    /// A host signal would not raise the semaphore above both its value and every value queued
    /// work has promised to set.
    #[error("semaphore signalled to {requested}, not above the {current} it holds or is promised")]
    SemaphoreNotIncreasing {
        /// The highest of the current and promised values.
        current: u64,
        /// The value asked for.
        requested: u64,
    },
    /// The semaphore queried or waited on has failed; holds its failure.
    #[error("semaphore failed: {}", .0.message)]
    SemaphoreFailed(Arc<FailureRecord>),
    /// A semaphore the submission waits on has failed, so the submission fails too; holds that
    /// failure.
    #[error("a waited-on semaphore failed: {}", .0.message)]
    DependencyFailed(Arc<FailureRecord>),
    /// The queue has failed (e.g. after a kernel fault) and fails the submission; holds the
    /// queue's failure.
    #[error("queue failed: {}", .0.message)]
    QueueFailed(Arc<FailureRecord>),
    /// A host wait reached its timeout before the semaphores did.
    #[error("timed out after {waited:?}{}", UnmetPoint::describe(unmet))]
    Timeout {
        /// How long the wait lasted.
        waited: Duration,
        /// The semaphores that had not reached their values (empty for a wait on no semaphore).
        unmet: Vec<UnmetPoint>,
    },
    /// The queue's rings stayed full for the whole submit timeout.
    #[error("the queue stayed full for {waited:?} (backpressure)")]
    Backpressure {
        /// How long the submission waited for room.
        waited: Duration,
    },
    /// The submission needs more packet or kernarg ring space than the queue has in total, so
    /// waiting cannot help.
    #[error("the submission needs more ring space than the queue has ({reason})")]
    SubmissionTooLarge {
        /// The queue's ring sizes.
        reason: String,
    },
    /// The engine's own state contradicts what it checked earlier; the submission and its
    /// signals fail instead of running something else.
    #[error("submission failed: {0}")]
    SubmissionFault(SubmissionFault),
    /// A fixed limit was reached (semaphores or queues per device, blocks processed by one
    /// command-buffer execution).
    #[error("{what} limit reached ({limit})")]
    LimitReached {
        /// Which limit.
        what: &'static str,
        /// Its value.
        limit: usize,
    },
    /// A command buffer was used in a state that does not allow it (recorded into after
    /// finishing, executed while recording, a one-shot buffer executed twice).
    #[error("command buffer: {reason}")]
    CommandBufferState {
        /// What was wrong.
        reason: &'static str,
    },
    /// A binding table slot does not satisfy what the command buffer's program needs of it.
    #[error("binding table slot {slot}: {reason}")]
    BindingTable {
        /// The slot.
        slot: u32,
        /// What is wrong with it.
        reason: String,
    },
    /// Profile modes that cannot run here (aqlprofile missing, or no AMD GPU); names what was
    /// searched.
    #[error("profile modes {modes} are unavailable: {reason}")]
    ProfileModeUnavailable {
        /// The modes asked for.
        modes: String,
        /// Why they cannot run.
        reason: String,
    },
    /// A profile capture was started while one runs, or stopped or finished when none does.
    #[error("profile capture: {reason}")]
    ProfileState {
        /// What was wrong.
        reason: &'static str,
    },
    /// A capture file (profile bundle or replay capture) could not be written or read.
    #[error("capture file: {0}")]
    Profile(#[from] aqueduct_profile::CaptureFileError),
    /// The replay capture failed: the writer fell behind past its stall timeout, or the file
    /// could not be written. The file lacks its end chunk, so readers report it truncated.
    #[error("replay capture {}: {reason}", output.display())]
    ReplayCapture {
        /// The `.aqreplay` file.
        output: std::path::PathBuf,
        /// What failed.
        reason: String,
    },
    /// A replay could not run the capture as recorded (on this device, or at all), or its
    /// results differ from the capture's.
    #[error("replay, record {record}: {reason}")]
    Replay {
        /// The record (counted from 0) where it stopped.
        record: u64,
        /// Why.
        reason: String,
    },
    /// A replay would hold more memory than its budget allows
    /// ([`ReplayOptions::memory_budget`](crate::replay::ReplayOptions::memory_budget)): the
    /// capture's allocations, pool reserves and allocas, counted as the stream makes them.
    #[error(
        "replay, record {record}: {what} of {requested} bytes would hold {would_hold} bytes, past the replay's memory \
         budget of {budget} bytes (raise it with --memory-budget)"
    )]
    ReplayMemoryBudget {
        /// The record (counted from 0) that asked.
        record: u64,
        /// What asked (`an allocation`, `a pool's reserve`, `an alloca`).
        what: &'static str,
        /// Bytes it asked for.
        requested: u64,
        /// Bytes the replay would then hold.
        would_hold: u64,
        /// The budget.
        budget: u64,
    },
    /// A host read or write, or a binding that needs host access, names a buffer whose memory
    /// the host cannot reach.
    #[error("buffer memory ({kind:?}) is not accessible from the host")]
    NotHostAccessible {
        /// The buffer's memory kind.
        kind: aqueduct_components::device_entities::MemoryKind,
    },
    /// A pool could not serve an alloca and may not grow (or its wait for returned memory ran
    /// out).
    #[error("pool exhausted: {requested} bytes requested, {in_use} in use of {reserved} reserved (max {max_size})")]
    PoolExhausted {
        /// Bytes the alloca asked for, rounded up to the pool's granule.
        requested: u64,
        /// Bytes handed out by allocas and not yet returned.
        in_use: u64,
        /// Bytes the pool's blocks hold.
        reserved: u64,
        /// The pool's `max_size` ([`PoolConfig`](crate::PoolConfig)).
        max_size: u64,
    },
    /// A buffer used after its dealloca, or deallocated twice.
    #[error("the buffer was deallocated (Queue::dealloca); it cannot be used or deallocated again")]
    BufferDeallocated,
    /// A file could not be inspected or shared with the host-call thread.
    #[error("file: {reason}")]
    File {
        /// Why.
        reason: String,
    },
    /// The agent has no pool for the memory kind.
    #[error("{kind:?} memory is unavailable on {agent}: {reason}")]
    MemoryKindUnavailable {
        /// The memory kind asked for.
        kind: aqueduct_components::device_entities::MemoryKind,
        /// The agent's name.
        agent: String,
        /// Why it has no such pool.
        reason: String,
    },
}

/// A semaphore a timed-out wait was still waiting for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnmetPoint {
    /// The semaphore ([`Semaphore::id`](crate::Semaphore::id)).
    pub semaphore: u32,
    /// The value waited for.
    pub value: u64,
    /// The value it had reached when the wait gave up.
    pub reached: u64,
}

impl UnmetPoint {
    fn describe(unmet: &[UnmetPoint]) -> String {
        let points: Vec<String> = unmet
            .iter()
            .map(|point| format!("semaphore {} waited for {}, reached {}", point.semaphore, point.value, point.reached))
            .collect();
        if points.is_empty() { String::new() } else { format!(": {}", points.join("; ")) }
    }
}
