//! The queue's state behind its lock, [`QueueState`], and the device-wide tables it reaches
//! ([`DeviceLink`]).
//!
//! They are defined here rather than in `aqueduct-components` because both hold HSA handles:
//! the producer's view of the queue's AQL ring ([`AqlRing`], whose operations are the hsa crate's
//! producer path, shared with its tests, the builtins' tests and the bench baseline) and the
//! provider's function table. The plain data they gather (kernarg and epoch rings, the endpoint,
//! the frontier, the shared tables) stays in components, which does not depend on hsa.
//!
//! **Contract.** The engine keeps the `QueueState` in the queue's `Mutex`; every field is read and
//! written only by the lock's holder (a batch run moves the parts its systems name into the queue
//! World and back, under the same lock). `QueueHandles` is fixed once built. `DeviceLink`'s
//! tables and the endpoint are shared with other queues and read lock-free. The state owns its
//! `DeviceTarget`, which the engine destroys with the queue, after the HSA queue.

use std::sync::Arc;

use aqueduct_components::capture::{CaptureFlags, TimedKind, TimedPacket};
use aqueduct_components::directory::{QueueDirectory, QueueEndpoint};
use aqueduct_components::frontier::QueueFrontier;
use aqueduct_components::kernarg_ring::KernargRing;
use aqueduct_components::queue_state::EpochTable;
use aqueduct_components::semaphore_table::SemaphoreTable;
use aqueduct_components::submission::SubmissionRows;
use aqueduct_hsa::ring::AqlRing;
use bevy_ecs::prelude::Resource;

/// The device-wide tables every queue reads.
#[derive(Clone)]
pub struct DeviceLink {
    pub api: &'static aqueduct_hsa::HsaApi,
    pub semaphores: Arc<SemaphoreTable>,
    pub directory: Arc<QueueDirectory>,
    /// The queue's agent's HDP publication, when its memory path has one: publication flushes
    /// host writes into host-visible device memory before the headers that may read them.
    pub host_writes: Option<Arc<aqueduct_components::host_writes::HostWrites>>,
}

impl DeviceLink {
    /// Bumps a queue's control signal (its endpoint's `control_signal`), which wakes that
    /// queue's completion thread.
    #[inline]
    pub fn poke(&self, control: u64) {
        // SAFETY: control signals live as long as the device.
        unsafe { (self.api.hsa_signal_add_scacq_screl)(aqueduct_hsa::sys::hsa_signal_t { handle: control }, 1) };
    }
}

/// What a queue is and reaches, fixed when it is built: read by every stage and written by none.
/// The state holds it, and the queue World a copy (the ring is a view of pointers, the rest
/// counted references), so the batch schedule's systems read it as a resource without a loan.
#[derive(Resource, Clone)]
pub struct QueueHandles {
    pub index: u16,
    /// The producer's view of the queue's AQL ring.
    pub ring: AqlRing,
    pub endpoint: Arc<QueueEndpoint>,
    pub link: DeviceLink,
    /// The `hsa_signal_t` the last packet of a submission decrements (BarrierValue strategy).
    pub epoch_signal: u64,
}

/// The queue's state: everything the stages read and write, and the queue World a batch's
/// schedule runs them in, behind the queue's lock. Each stage works on a view of the fields it
/// names (`Admission`, `Publication`, `Reclaim`, the rows alone for kernarg patching): the
/// immediate path borrows them from here, and a batch run moves them into the World's
/// resources for the run and back ([`crate::schedule`]).
pub struct QueueState {
    pub handles: QueueHandles,
    /// The consumer's read index as last loaded; it only grows, so a stale value
    /// underestimates free space and is safe.
    pub known_read_index: u64,
    pub kernargs: KernargRing,
    pub epochs: EpochTable,
    /// What this queue's published work is known to follow on other queues (its own device
    /// waits, and transitively what their producers followed): a later wait it covers needs no
    /// barrier.
    pub frontier: QueueFrontier,
    /// Sticky failure (failure-log index), mirrored in the endpoint for other queues.
    pub failure: Option<u32>,
    /// The pending submission rows (a column table, in queue order) and what the current pass
    /// did.
    pub rows: SubmissionRows,
    /// What the reclaim stage of the last pass drained (with the drained epoch before it), for
    /// the engine to follow up (profile records, the settled mark, wake-ups); taken by it.
    pub drain: Option<(u64, DrainOutcome)>,
    /// What a profile capture asks of the stages; off unless the engine begins one.
    pub capture: CaptureState,
    /// The row of the oldest epoch that was in flight when the queue failed. A failed queue's
    /// epochs are force-retired (other queues' barriers on them pass), but its HSA queue may
    /// still run their packets (a queue failed with another queue's memory fault keeps running),
    /// so those rows, and everything they name, stay unsettled until the HSA queue is destroyed.
    pub unsettled_from: Option<u64>,
    /// The queue World and the schedule of the four stages as systems, for a batch's flush:
    /// taken out of the state while the schedule runs ([`Self::run_schedule`]).
    pub(crate) batch_world: Option<Box<BatchWorld>>,
    /// Where executions processed on the device run, made at the first one.
    pub device_target: Option<DeviceTarget>,
}

/// A queue's World and its submission schedule, for a batch's run (`crate::schedule` builds
/// it and runs it). Between runs the World holds the queue's handles and an empty part in place
/// of each part of the state the systems name.
pub struct BatchWorld {
    pub(crate) world: bevy_ecs::world::World,
    pub(crate) schedule: bevy_ecs::schedule::Schedule,
}

/// A queue's target for command-buffer executions processed on the device: a second HSA queue
/// that only the device library's block processor writes (so no host submission lands between
/// an execution's steps), the state its steps share, and per epoch slot a done signal and a
/// status record. Executions on it run one at a time: each waits, on this queue, for the one
/// before to complete, so the state and the target ring are the running execution's alone.
pub struct DeviceTarget {
    /// The target `hsa_queue_t *`.
    pub queue: u64,
    pub ring_packets: u32,
    /// Continuation-argument slots, then `kernarg_capacity` bytes of kernarg area (64-aligned).
    pub state: u64,
    pub kernarg_capacity: u64,
    /// `hsa_signal_t` handles, one per epoch slot (a power of two at least the epochs in
    /// flight): an execution's final packet completes the one of its epoch.
    pub done_signals: Box<[u64]>,
    /// Status records (`aqueduct_abi::device_program::ProcessorStatus`, 16 bytes), one per epoch
    /// slot, in host-visible memory.
    pub statuses: u64,
    /// The block processor's kernel on this queue's agent.
    pub processor: aqueduct_components::program::BuiltinObject,
    /// Executions' binding tables, in kernarg memory of the target's own (`binding_tables.ring.base`).
    pub binding_tables: crate::binding_tables::BindingTables,
}

impl DeviceTarget {
    /// The done signal and status record of `epoch`.
    #[inline]
    pub fn slot_of(&self, epoch: u64) -> (u64, u64) {
        let slot = (epoch & (self.done_signals.len() as u64 - 1)) as usize;
        (self.done_signals[slot], self.statuses + 16 * slot as u64)
    }
}

/// What one drain did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DrainOutcome {
    pub epochs: u64,
    /// Semaphore values published (after coalescing).
    pub signals: u64,
    /// Semaphores failed (dependency failures carried through).
    pub failures: u64,
    /// The queue this drain stopped for: an epoch waited from the device on one of its epochs,
    /// which it had not drained yet. Under `DrainOrder::Causal` that queue wakes this one's
    /// completion thread when it has; under `DrainOrder::CausalProbe` nothing is registered.
    pub held_on: Option<u16>,
    /// Queues whose drains were held on this one, to wake now that it drained (bit per queue).
    pub wake: u64,
}

impl DrainOutcome {
    /// Adds `later`, a drain after this one: the counts add up, the wake-ups join, and the hold
    /// is the later drain's.
    pub fn add(&mut self, later: DrainOutcome) {
        self.epochs += later.epochs;
        self.signals += later.signals;
        self.failures += later.failures;
        self.wake |= later.wake;
        self.held_on = later.held_on;
    }
}

/// The stages' part of a profile capture.
#[derive(Debug, Default, Resource)]
pub struct CaptureState {
    /// Set only through [`Self::set_flags`], which keeps the extra packet counts in step.
    flags: CaptureFlags,
    /// Packets a timed payload adds (its trailing barrier), and a timed program leg (its lead
    /// and trailing barriers): 0 with timing off, so admission adds without a branch.
    extra_payload_packets: u64,
    extra_leg_packets: u64,
    /// Timing signals (`hsa_signal_t` handles) free for the next timed packet. The engine
    /// creates them when a capture that times packets begins, and takes each back once it has
    /// read the timestamps of the epoch that used it.
    pub timing_signals: Vec<u64>,
    /// Packets that should have been timed but found no free timing signal.
    pub untimed: u64,
    /// The packets the submission being published times, in publication order: publication
    /// moves them into the epoch row (swapping vectors, so the capacity ping-pongs), or gives
    /// their signals back if the submission fails. Empty between publications.
    pub timed: Vec<TimedPacket>,
    /// The engine's side of the capture this queue is part of (its record buffer): opaque here,
    /// held with the rest of the state so that one lock reaches both.
    pub sink: Option<Arc<dyn core::any::Any + Send + Sync>>,
}

impl CaptureState {
    /// AQL packets a payload of `payload_packets` takes under this capture: a timed payload
    /// completes on its own timing signal, so a trailing barrier carries the epoch, and a
    /// multi-packet payload (a program leg) is opened by a barrier timed for its begin.
    #[inline]
    pub fn payload_packets(&self, payload_packets: u64, program: bool) -> u64 {
        payload_packets + if program { self.extra_leg_packets } else { self.extra_payload_packets }
    }

    #[inline]
    pub fn flags(&self) -> CaptureFlags {
        self.flags
    }

    pub fn set_flags(&mut self, flags: CaptureFlags) {
        self.flags = flags;
        let timed = u64::from(flags.times_packets());
        (self.extra_payload_packets, self.extra_leg_packets) = (timed, 2 * timed);
    }

    /// A free timing signal, or `None` (counted) when every one is in flight.
    #[inline]
    pub fn take_timing_signal(&mut self) -> Option<u64> {
        let signal = self.timing_signals.pop();
        self.untimed += u64::from(signal.is_none());
        signal
    }

    /// Times a packet of kind `kind`: takes a free timing signal, notes it in [`Self::timed`]
    /// and returns it, or returns 0 (counted) when none is free.
    #[inline]
    pub fn time_packet(&mut self, kind: TimedKind) -> u64 {
        let Some(signal) = self.take_timing_signal() else { return 0 };
        self.timed.push(TimedPacket { signal, kind });
        signal
    }
}
