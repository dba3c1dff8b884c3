//! What a queue captures for the profiler, as plain data: which modes are on, what a submission
//! row carries for its record, and what an epoch row keeps until the epoch is drained.
//!
//! Publication copies a submission's facts into its epoch row's [`EpochCapture`] only while a
//! mode is on; the engine turns the row into profile records when the epoch is drained. With
//! capture off, the stages pay one test of [`CaptureFlags`] per published row.
//!
//! **Contract.** The flags and an epoch's `EpochCapture` live in the queue's state and epoch table,
//! under the queue's lock; the engine takes an epoch's capture when it drains the epoch.

use aqueduct_vocabulary::OperationKind;

use crate::dependency::SignalOp;

/// The capture modes a queue's stages act on (the engine's other modes need nothing from them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaptureFlags {
    /// Keep each submission's facts in its epoch row (`queue-events`).
    pub queue_events: bool,
    /// Time each submission's payload on the device (`device-queue-events`).
    pub device_timing: bool,
    /// Time each dispatch on the device (`dispatch-events`).
    pub dispatch_timing: bool,
}

impl CaptureFlags {
    pub const OFF: CaptureFlags = CaptureFlags { queue_events: false, device_timing: false, dispatch_timing: false };

    #[inline]
    pub fn any(self) -> bool {
        self.queue_events || self.device_timing || self.dispatch_timing
    }

    /// Whether the payload's packets complete on timing signals of their own.
    #[inline]
    pub fn times_packets(self) -> bool {
        self.device_timing || self.dispatch_timing
    }
}

/// Which of admission's tiers resolved a wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitTier {
    /// The semaphore already held the value.
    Satisfied,
    /// The producer was this queue, which runs in order.
    SameQueue,
    /// The producer's epoch was drained, or this queue's frontier covered it.
    Covered,
    /// A device-side barrier on the producer queue's epoch.
    DeviceBarrier { queue: u16, epoch: u64 },
    /// The row parked (no producer known yet) and was admitted once the semaphore advanced
    /// far enough to be satisfied.
    Deferred,
}

/// A wait as the profile records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapturedWait {
    pub semaphore: u32,
    pub value: u64,
    pub tier: WaitTier,
}

/// A packet that completes on a timing signal of its own: the device writes its start and end
/// there when profiling is enabled on the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedPacket {
    /// The timing signal's `hsa_signal_t` handle.
    pub signal: u64,
    pub kind: TimedKind,
}

/// What a timed packet was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimedKind {
    /// A packet timed for the submission's span, not a dispatch: its first wait barrier, a
    /// barrier payload, or a command-buffer leg's lead barrier and end.
    Payload,
    /// A kernel dispatch: the kernel object, grid and workgroup as published, and for an executed
    /// one, the command that recorded it.
    Dispatch { kernel_object: u64, grid: [u32; 3], workgroup: [u16; 3], command: Option<(u64, u32)> },
    /// Entry `index` of a device-processed execution's timing table at `table`: the dispatch the
    /// block processor gave this signal, logged as a packet index of the device program at
    /// `program` (of program id `program_id`), known once the execution retired. The engine
    /// turns it into a `Dispatch`, or into `Unused` if the processor never got that far.
    DeviceSlot { table: u64, index: u32, program: u64, program_id: u64 },
    /// A timing signal no packet completed: it times nothing.
    Unused,
}

/// One epoch's capture, in its epoch's row from publication until the engine has turned it into
/// records. A column of its own: the stages that never capture never touch it, and the columns
/// they walk stay small.
#[derive(Debug, Default)]
pub struct EpochCapture {
    /// Whether publication filled this row for the current epoch.
    pub captured: bool,
    pub operation: OperationKind,
    /// Host clock (ns) when the submitting call entered the engine.
    pub submit_entry_ns: u64,
    /// Host clock (ns) when the pass that published the epoch rang the doorbell.
    pub published_ns: u64,
    pub packets: u32,
    pub kernarg_bytes: u64,
    pub waits: Vec<CapturedWait>,
    pub signals: Vec<SignalOp>,
    /// Packets timed on the device, in publication order.
    pub timed: Vec<TimedPacket>,
}

impl EpochCapture {
    pub fn clear(&mut self) {
        self.captured = false;
        self.waits.clear();
        self.signals.clear();
        self.timed.clear();
    }
}
