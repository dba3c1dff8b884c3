//! Every way an engine call can fail. Bad input is reported before anything changes.

use std::sync::Arc;
use std::time::Duration;

use aqueduct_builtins::PlanError;
use aqueduct_codeobject::UnknownKernel;
use aqueduct_components::semaphore_table::FailureRecord;
use aqueduct_hsa::{ExecutableError, HsaError};

pub type EngineResult<T> = Result<T, EngineError>;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("device spec `{spec}`: {reason}")]
    InvalidDeviceSpec { spec: String, reason: String },
    #[error("no device: {reason}")]
    NoDevice { reason: String },
    #[error(transparent)]
    Hsa(#[from] HsaError),
    #[error("{what} belongs to another device")]
    ForeignObject { what: &'static str },
    #[error("{what}: range at offset {offset} of {length} bytes exceeds the {size}-byte buffer")]
    OutOfBounds { what: &'static str, offset: u64, length: u64, size: u64 },
    #[error("invalid {what}: {reason}")]
    InvalidArgument { what: &'static str, reason: String },
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("invalid grid {grid:?} with workgroup {workgroup:?}: {reason}")]
    InvalidGrid { grid: [u32; 3], workgroup: [u16; 3], reason: &'static str },
    /// A dispatch would name no kernel object (an agent the kernel was not loaded on, or a
    /// provider that reported 0): refused, never published as kernel object 0.
    #[error("kernel `{kernel}` has no kernel object on agent {agent}")]
    NoKernelObject { kernel: String, agent: usize },
    #[error("kernargs for `{kernel}` do not match its metadata: {reason}")]
    KernargMismatch { kernel: String, reason: String },
    #[error(transparent)]
    UnknownKernel(#[from] UnknownKernel),
    #[error(transparent)]
    Executable(#[from] ExecutableError),
    #[error("semaphore signalled to {requested}, not above the {current} it holds or is promised")]
    SemaphoreNotIncreasing { current: u64, requested: u64 },
    #[error("semaphore failed: {}", .0.message)]
    SemaphoreFailed(Arc<FailureRecord>),
    #[error("a waited-on semaphore failed: {}", .0.message)]
    DependencyFailed(Arc<FailureRecord>),
    #[error("queue failed: {}", .0.message)]
    QueueFailed(Arc<FailureRecord>),
    #[error("timed out after {waited:?}")]
    Timeout { waited: Duration },
    #[error("the queue stayed full for {waited:?} (backpressure)")]
    Backpressure { waited: Duration },
    #[error("the submission needs more ring space than the queue has ({reason})")]
    SubmissionTooLarge { reason: String },
    /// The engine's own state contradicts what it checked earlier; the submission and its
    /// signals fail instead of running something else.
    #[error("submission failed: {0}")]
    SubmissionFault(aqueduct_components::submission::SubmissionFault),
    #[error("{what} limit reached ({limit})")]
    LimitReached { what: &'static str, limit: usize },
    #[error("command buffer: {reason}")]
    CommandBufferState { reason: &'static str },
    #[error("invalid block program: {0}")]
    InvalidProgram(aqueduct_abi::block_program::ProgramError),
    #[error("binding table slot {slot}: {reason}")]
    BindingTable { slot: u32, reason: String },
    /// Profile modes that cannot run here (aqlprofile missing, or no AMD GPU); names what was
    /// searched.
    #[error("profile modes {modes} are unavailable: {reason}")]
    ProfileModeUnavailable { modes: String, reason: String },
    #[error("profile capture: {reason}")]
    ProfileState { reason: &'static str },
    #[error("profile bundle: {0}")]
    Profile(#[from] aqueduct_profile::ProfileError),
    #[error("buffer memory ({kind:?}) is not accessible from the host")]
    NotHostAccessible { kind: aqueduct_components::device_entities::MemoryKind },
    /// A pool could not serve an alloca and may not grow (or its wait for returned memory ran
    /// out).
    #[error("pool exhausted: {requested} bytes requested, {in_use} in use of {reserved} reserved (max {max_size})")]
    PoolExhausted { requested: u64, in_use: u64, reserved: u64, max_size: u64 },
    /// A buffer used after its dealloca, or deallocated twice.
    #[error("the buffer was deallocated (Queue::dealloca); it cannot be used or deallocated again")]
    BufferDeallocated,
    /// A file could not be inspected or shared with the host-call thread.
    #[error("file: {reason}")]
    File { reason: String },
    /// The agent has no pool for the memory kind.
    #[error("{kind:?} memory is unavailable on {agent}: {reason}")]
    MemoryKindUnavailable { kind: aqueduct_components::device_entities::MemoryKind, agent: String, reason: String },
}
