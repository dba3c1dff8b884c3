//! The cross-queue wait strategy, chosen once per queue instead of matched per submission.
//!
//! A device waits across its queues in one of two ways
//! ([`CrossQueueWait`](aqueduct_components::directory::CrossQueueWait)). Everything that differs between them is a method of
//! [`CrossQueueStrategy`], implemented by the zero-sized [`BarrierValue`] and [`BarrierAnd`].
//! The stages are generic over it, and [`QueueStages::for_strategy`](crate::QueueStages::for_strategy) picks the monomorphized entry
//! points once, when the queue is built: the per-submission path holds no `match` on the
//! strategy, and each strategy's pieces inline into its own copy of the stages.
//!
//! **Contract.** The methods that take the epoch table or arm per-epoch state run under the queue's
//! lock, inside the stages. `device_retired`, `has_retired` and `retirement_wait` read only an
//! endpoint and its signals, with no lock, so other queues and the completion thread may call them.

use core::sync::atomic::Ordering;

use aqueduct_abi::{
    BarrierAndPacket, BarrierValuePacket, FenceScope, PacketHeader, PacketType, SignalCondition, VendorPacketHeader,
    packet::amd_format,
};
use aqueduct_components::dependency::DeviceWait;
use aqueduct_components::directory::{EPOCH_BASE, QueueEndpoint};
use aqueduct_components::endpoint_scan::scan_retired;
use aqueduct_components::submission::SubmissionFault;
use aqueduct_hsa::ring::AqlRing;

use crate::sync::signal_value;
use crate::{DeviceLink, QueueHandles};
use aqueduct_components::queue_state::EpochTable;

/// Dependency signals one BARRIER_AND packet can name.
pub const BARRIER_AND_DEPENDENCIES: usize = 5;

/// A signal condition the completion thread sleeps on until an epoch retires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetirementWait {
    pub signal: u64,
    pub condition: SignalCondition,
    pub value: i64,
}

/// What one way of waiting across queues does at each stage. Every endpoint a queue reaches
/// belongs to the same device, so to the same strategy.
pub trait CrossQueueStrategy: 'static {
    /// The header and setup half of the wait barriers' header words.
    const WAIT_HEADER: (PacketHeader, u16);

    /// AQL packets that `barriers` device-side waits take.
    fn barrier_packets(barriers: u64) -> u64;

    /// The signal a barrier on `producer` names once wait resolution decides it needs one (0 when
    /// it is named at reservation instead).
    fn resolved_wait_signal(producer: &QueueEndpoint) -> u64;

    /// Whether `epoch`'s device-side retirement state is free to reuse (an admission capacity
    /// check: it changes nothing).
    fn epoch_state_free(endpoint: &QueueEndpoint, epoch: u64) -> bool;

    /// After the reservation: arms `epoch`'s retirement state, then names the signals the
    /// barriers in `waits` wait on. A barrier whose producer queue cannot be found is an error:
    /// the submission then runs nothing and fails (publication), never waits on nothing.
    fn reserve_epoch(
        endpoint: &QueueEndpoint,
        link: &DeviceLink,
        epoch: u64,
        waits: &mut [DeviceWait],
    ) -> Result<(), SubmissionFault>;

    /// The signal the last packet of `epoch` decrements.
    fn completion_signal(handles: &QueueHandles, epoch: u64) -> u64;

    /// Writes the bodies of the barrier packets for `waits`' barriers from packet `first`, the
    /// first completing on `first_completion` (0 for none: a profile capture times it, so the
    /// submission's device begin is when the device began waiting); returns how many it wrote.
    ///
    /// # Safety
    /// The [`Self::barrier_packets`] packets from `first` are reserved by the caller and
    /// unpublished.
    unsafe fn write_wait_barriers(ring: &AqlRing, first: u64, waits: &[DeviceWait], first_completion: u64) -> u64;

    /// Gives back what `waits` claimed on their producers at reservation, once the epoch retired.
    fn release_waits(link: &DeviceLink, waits: &[DeviceWait]);

    /// Makes the device-side state say every submitted epoch retired (a failed queue).
    fn force_retire(handles: &QueueHandles, epochs: &EpochTable);

    /// The highest epoch known to have retired on the device.
    fn device_retired(endpoint: &QueueEndpoint) -> u64;

    /// Whether `epoch`, submitted and not yet drained, has retired on the device: one signal
    /// load (the queue runs in order, so every earlier epoch has too).
    fn has_retired(endpoint: &QueueEndpoint, epoch: u64) -> bool;

    /// What the completion thread sleeps on until `target` retires, `None` when there is no
    /// signal to wait on yet (`target` is not submitted, and the strategy cannot wait ahead).
    fn retirement_wait(endpoint: &QueueEndpoint, target: u64, submitted: u64) -> Option<RetirementWait>;

    /// Wakes a completion thread that slept without a retirement signal because the queue was
    /// idle. Called once `epoch` is published and the endpoint says it was submitted.
    fn wake_idle_completion(handles: &QueueHandles, epochs: &EpochTable, epoch: u64);
}

/// AMD vendor BARRIER_VALUE packets on the producer's epoch signal, which counts down from
/// [`EPOCH_BASE`] as epochs retire (CDNA, the soft runtime).
pub struct BarrierValue;

/// BARRIER_AND packets on the producer's per-epoch signals (every AQL agent).
pub struct BarrierAnd;

impl CrossQueueStrategy for BarrierValue {
    // A vendor packet's AMD format byte shares the header word, in the `setup` half.
    const WAIT_HEADER: (PacketHeader, u16) = (
        PacketHeader::new(PacketType::VendorSpecific, true, FenceScope::System, FenceScope::None),
        amd_format::BARRIER_VALUE as u16,
    );

    #[inline]
    fn barrier_packets(barriers: u64) -> u64 {
        barriers
    }

    #[inline]
    fn resolved_wait_signal(producer: &QueueEndpoint) -> u64 {
        producer.epoch_signal
    }

    #[inline]
    fn epoch_state_free(_: &QueueEndpoint, _: u64) -> bool {
        true // one signal for every epoch
    }

    #[inline]
    fn reserve_epoch(_: &QueueEndpoint, _: &DeviceLink, _: u64, _: &mut [DeviceWait]) -> Result<(), SubmissionFault> {
        Ok(()) // resolution named the producer's epoch signal
    }

    #[inline]
    fn completion_signal(handles: &QueueHandles, _: u64) -> u64 {
        handles.epoch_signal
    }

    #[inline]
    unsafe fn write_wait_barriers(ring: &AqlRing, first: u64, waits: &[DeviceWait], first_completion: u64) -> u64 {
        let mut id = first;
        for wait in waits.iter().filter(|wait| wait.barrier) {
            // Retired epochs = EPOCH_BASE - value ≥ epoch  ⇔  value < EPOCH_BASE - epoch + 1.
            let packet = BarrierValuePacket {
                header: VendorPacketHeader {
                    header: Self::WAIT_HEADER.0,
                    amd_format: amd_format::BARRIER_VALUE,
                    reserved: 0,
                },
                signal: wait.signal,
                value: EPOCH_BASE - wait.producer.epoch as i64 + 1,
                mask: -1,
                cond: SignalCondition::Lt as u32,
                completion_signal: if id == first { first_completion } else { 0 },
                ..Default::default()
            };
            // SAFETY: one packet per barrier, all reserved for the caller (the contract).
            unsafe { ring.write_body(id, &packet) };
            id += 1;
        }
        id - first
    }

    #[inline]
    fn release_waits(_: &DeviceLink, _: &[DeviceWait]) {}

    fn force_retire(handles: &QueueHandles, epochs: &EpochTable) {
        let target = EPOCH_BASE - epochs.submitted as i64;
        let signal = handles.epoch_signal;
        // SAFETY: the epoch signal lives as long as the device.
        let current = unsafe { signal_value(signal) }.load(Ordering::Acquire);
        if current > target {
            store_signal(&handles.link, signal, target);
        }
    }

    #[inline]
    fn device_retired(endpoint: &QueueEndpoint) -> u64 {
        let drained = endpoint.drained.load(Ordering::Acquire);
        // SAFETY: the epoch signal lives as long as the endpoint is registered.
        let value = unsafe { signal_value(endpoint.epoch_signal) }.load(Ordering::Acquire);
        (EPOCH_BASE.saturating_sub(value).max(0) as u64).max(drained)
    }

    #[inline]
    fn has_retired(endpoint: &QueueEndpoint, epoch: u64) -> bool {
        // SAFETY: as above.
        let value = unsafe { signal_value(endpoint.epoch_signal) }.load(Ordering::Acquire);
        value <= EPOCH_BASE - epoch as i64
    }

    #[inline]
    fn retirement_wait(endpoint: &QueueEndpoint, target: u64, _: u64) -> Option<RetirementWait> {
        // The count-down passes every epoch's value, submitted yet or not.
        Some(RetirementWait {
            signal: endpoint.epoch_signal,
            condition: SignalCondition::Lt,
            value: EPOCH_BASE - target as i64 + 1,
        })
    }

    #[inline]
    fn wake_idle_completion(_: &QueueHandles, _: &EpochTable, _: u64) {}
}

impl CrossQueueStrategy for BarrierAnd {
    const WAIT_HEADER: (PacketHeader, u16) =
        (PacketHeader::new(PacketType::BarrierAnd, true, FenceScope::System, FenceScope::None), 0);

    #[inline]
    fn barrier_packets(barriers: u64) -> u64 {
        barriers.div_ceil(BARRIER_AND_DEPENDENCIES as u64)
    }

    #[inline]
    fn resolved_wait_signal(_: &QueueEndpoint) -> u64 {
        0 // the producer epoch's own signal, named when the slot is claimed at reservation
    }

    #[inline]
    fn epoch_state_free(endpoint: &QueueEndpoint, epoch: u64) -> bool {
        endpoint.slot_users[endpoint.slot_index(epoch)].load(Ordering::SeqCst) == 0
    }

    #[inline]
    fn reserve_epoch(
        endpoint: &QueueEndpoint,
        link: &DeviceLink,
        epoch: u64,
        waits: &mut [DeviceWait],
    ) -> Result<(), SubmissionFault> {
        // The epoch's own signal goes to 1 before anyone can learn of the epoch (the producer
        // records admission writes next), so no consumer barrier sees the previous use's 0.
        // SAFETY: the endpoint's per-epoch signals live as long as the device. Admission found no
        // consumer barrier naming this slot, and its previous epoch was drained, so resetting
        // it cannot release anyone early.
        unsafe { signal_value(endpoint.slot_signal(epoch)) }.store(1, Ordering::Release);
        name_epoch_slots(link, waits)
    }

    #[inline]
    fn completion_signal(handles: &QueueHandles, epoch: u64) -> u64 {
        handles.endpoint.slot_signal(epoch) // set to 1 at reservation
    }

    #[inline]
    unsafe fn write_wait_barriers(ring: &AqlRing, first: u64, waits: &[DeviceWait], first_completion: u64) -> u64 {
        // Admission named the signals (0 for an epoch drained first: no dependency).
        let barriers = waits.iter().filter(|wait| wait.barrier).count() as u64;
        let mut signals = waits.iter().filter(|wait| wait.barrier).map(|wait| wait.signal);
        let packets = Self::barrier_packets(barriers);
        for id in first..first + packets {
            let mut packet = BarrierAndPacket {
                completion_signal: if id == first { first_completion } else { 0 },
                ..Default::default()
            };
            for (slot, signal) in packet.dep_signal.iter_mut().zip(signals.by_ref()) {
                *slot = signal;
            }
            // SAFETY: reserved for the caller (the contract).
            unsafe { ring.write_body(id, &packet) };
        }
        packets
    }

    fn release_waits(link: &DeviceLink, waits: &[DeviceWait]) {
        for wait in waits.iter().filter(|wait| wait.slot_named) {
            if let Some(endpoint) = link.directory.get(wait.producer.queue) {
                endpoint.slot_users[endpoint.slot_index(wait.producer.epoch)].fetch_sub(1, Ordering::SeqCst);
            }
        }
    }

    fn force_retire(handles: &QueueHandles, epochs: &EpochTable) {
        for epoch in epochs.drained + 1..=epochs.submitted {
            store_signal(&handles.link, handles.endpoint.slot_signal(epoch), 0);
        }
    }

    fn device_retired(endpoint: &QueueEndpoint) -> u64 {
        scan_retired(&endpoint.drained, &endpoint.submitted, |epoch| Self::has_retired(endpoint, epoch))
    }

    #[inline]
    fn has_retired(endpoint: &QueueEndpoint, epoch: u64) -> bool {
        // An epoch in flight owns its slot: the epoch ring never holds more than the slot count.
        // SAFETY: per-epoch signals live as long as the endpoint.
        unsafe { signal_value(endpoint.slot_signal(epoch)) }.load(Ordering::Acquire) == 0
    }

    #[inline]
    fn retirement_wait(endpoint: &QueueEndpoint, target: u64, submitted: u64) -> Option<RetirementWait> {
        // A slot not yet armed for `target` still reads 0 from its previous epoch.
        (target <= submitted).then(|| RetirementWait {
            signal: endpoint.slot_signal(target),
            condition: SignalCondition::Eq,
            value: 0,
        })
    }

    #[inline]
    fn wake_idle_completion(handles: &QueueHandles, epochs: &EpochTable, epoch: u64) {
        // An idle completion thread has no armed per-epoch signal to sleep on, only the control
        // signal: the first epoch after idle pokes it.
        if epoch == epochs.drained + 1 {
            handles.link.poke(handles.endpoint.control_signal);
        }
    }
}

/// BarrierAnd: claims a use of each barrier producer's per-epoch signal and names it, or names
/// nothing when that epoch was already drained (its slot may be reused, and the wait is
/// satisfied anyway).
fn name_epoch_slots(link: &DeviceLink, waits: &mut [DeviceWait]) -> Result<(), SubmissionFault> {
    for wait in waits.iter_mut().filter(|wait| wait.barrier) {
        // Wait resolution found every barrier's producer queue, and directory entries are never
        // removed; if that ever breaks, the submission fails rather than wait on nothing.
        let Some(endpoint) = link.directory.get(wait.producer.queue) else {
            return Err(SubmissionFault::UnknownProducerQueue { queue: wait.producer.queue });
        };
        let users = &endpoint.slot_users[endpoint.slot_index(wait.producer.epoch)];
        users.fetch_add(1, Ordering::SeqCst);
        // Paired with the producer's SeqCst check of `slot_users` before reuse: either it sees
        // our claim and waits, or we see the reclaim and name nothing.
        if endpoint.drained.load(Ordering::SeqCst) >= wait.producer.epoch {
            users.fetch_sub(1, Ordering::SeqCst);
            continue;
        }
        wait.slot_named = true;
        wait.signal = endpoint.slot_signal(wait.producer.epoch);
    }
    Ok(())
}

/// Stores through the provider, so packet processors blocked on the signal wake at once.
fn store_signal(link: &DeviceLink, signal: u64, value: i64) {
    // SAFETY: the signal is live (device lifetime); the store has no other precondition.
    unsafe { (link.api.hsa_signal_store_screlease)(aqueduct_hsa::sys::hsa_signal_t { handle: signal }, value) };
}
