//! Timeline semaphores: a u64 that only grows, signalled by queues or the host, waited on by
//! queues (device-side where possible) or the host (with a timeout), or failed with an error.

use std::sync::Arc;
use std::time::{Duration, Instant};

use aqueduct_components::device_entities::SemaphoreEntity;
use aqueduct_components::semaphore_table::FailureRecord;
use aqueduct_systems::sync::{HostParking, SemaphoreSync};
use bevy_ecs::entity::Entity;

use aqueduct_profile::replay::{Point, ReplayRecord};

use crate::clock::deadline_after;
use crate::device::DeviceShared;
use crate::error::{EngineError, EngineResult, UnmetPoint};

/// Host waits spin this long before parking: a packet about to retire costs no sleep.
const SPIN_BEFORE_PARK: Duration = Duration::from_micros(30);

pub(crate) struct SemaphoreInner {
    pub device: Arc<DeviceShared>,
    pub slot: u32,
    entity: Entity,
    /// Its id in the replay capture (0: not captured).
    replay_id: crate::replay_capture::ReplayId,
    /// The highest value the program was seen to know the semaphore reached (a wait returned,
    /// or a read saw it): the capture records each advance once.
    observed: std::sync::atomic::AtomicU64,
}

impl Drop for SemaphoreInner {
    fn drop(&mut self) {
        // No handle is left, so nothing new can promise the semaphore a value: a parked wait past
        // every promise now fails instead of waiting forever (`SemaphoreSync::wait_source`), and
        // parked work looks again.
        self.device.semaphores.orphan(self.slot);
        self.device.wake_deferred(None);
        // Parked, pending and in-flight rows may still name the slot: it is reused only once they
        // have settled.
        self.device.defer_release(self.entity);
    }
}

/// A timeline semaphore. Cloning shares it.
///
/// Dropping the last handle keeps every value already reached or promised: a submission that
/// signals it still does, and work waiting for such a value still runs. A wait for a higher
/// value, which nothing can raise the semaphore to any more, fails with `semaphore N was
/// dropped at value V: no handle is left to raise it to W` (and so does the work behind it).
#[derive(Clone)]
pub struct Semaphore(pub(crate) Arc<SemaphoreInner>);

impl std::fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let value = self.0.device.semaphores.value(self.0.slot);
        f.debug_struct("Semaphore").field("slot", &self.0.slot).field("value", &value).finish()
    }
}

/// A semaphore at a value: what a queue operation waits for or signals.
#[derive(Clone, Copy, Debug)]
pub struct SemaphorePoint<'a> {
    /// The semaphore.
    pub semaphore: &'a Semaphore,
    /// The value waited for (reached when the semaphore is at least this) or signalled.
    pub value: u64,
}

impl crate::replay_capture::ReplayPoint for SemaphorePoint<'_> {
    fn point(&self) -> aqueduct_profile::replay::Point {
        aqueduct_profile::replay::Point { semaphore: self.semaphore.replay_id(), value: self.value }
    }
}

impl Semaphore {
    pub(crate) fn create(device: &Arc<DeviceShared>, initial: u64) -> EngineResult<Self> {
        // Released semaphores whose rows have settled give their slots back first.
        device.release_settled();
        let slot = device
            .semaphores
            .allocate(initial)
            .map_err(|full| EngineError::LimitReached { what: "semaphores per device", limit: full.capacity })?;
        let entity = device.world().spawn(SemaphoreEntity { slot, initial_value: initial }).id();
        Ok(Self(Arc::new(SemaphoreInner {
            device: device.clone(),
            slot,
            entity,
            replay_id: Default::default(),
            observed: std::sync::atomic::AtomicU64::new(initial),
        })))
    }

    /// [`Self::create`] for the program: the replay capture records it.
    pub(crate) fn create_captured(device: &Arc<DeviceShared>, initial: u64) -> EngineResult<Self> {
        let semaphore = Self::create(device, initial)?;
        if let Some(replay) = device.replay_capture() {
            let id = replay.next_id();
            semaphore.0.replay_id.set(id);
            replay.push(ReplayRecord::Semaphore { id, initial });
        }
        Ok(semaphore)
    }

    /// Its id in the replay capture (0 when it is not captured).
    pub(crate) fn replay_id(&self) -> u64 {
        self.0.replay_id.get()
    }

    /// The program now knows the value reached `value`: a capture records the advance.
    fn observed(&self, value: u64) {
        use std::sync::atomic::Ordering;
        if let Some(replay) = self.0.device.replay_capture()
            && self.replay_id() != 0
            && self.0.observed.fetch_max(value, Ordering::Relaxed) < value
        {
            replay.push(ReplayRecord::HostWait(Point { semaphore: self.replay_id(), value }));
        }
    }

    /// The semaphore's id on its device, as errors and `Debug` name it (an id is reused once
    /// the semaphore is gone and nothing references it).
    pub fn id(&self) -> u32 {
        self.0.slot
    }

    /// This semaphore at `value`, for a wait or signal list.
    pub fn at(&self, value: u64) -> SemaphorePoint<'_> {
        SemaphorePoint { semaphore: self, value }
    }

    /// The current value.
    pub fn value(&self) -> u64 {
        let value = self.0.device.semaphores.value(self.0.slot);
        self.observed(value);
        value
    }

    /// The error the semaphore failed with, if it failed.
    pub fn failure(&self) -> Option<Arc<FailureRecord>> {
        let table = &self.0.device.semaphores;
        table.failure(self.0.slot).and_then(|failure| table.failure_record(failure))
    }

    /// Whether the semaphore failed (no record is fetched).
    pub(crate) fn has_failed(&self) -> bool {
        self.0.device.semaphores.failure(self.0.slot).is_some()
    }

    /// The current value, or the failure.
    pub fn query(&self) -> EngineResult<u64> {
        match self.failure() {
            Some(failure) => Err(EngineError::SemaphoreFailed(failure)),
            None => Ok(self.value()),
        }
    }

    /// Raises the value from the host. It must exceed both the current value and every value a
    /// queued submission will set.
    pub fn signal(&self, value: u64) -> EngineResult<()> {
        let device = &self.0.device;
        let current = device.semaphores.highest_promised(self.0.slot);
        if value <= current {
            return Err(EngineError::SemaphoreNotIncreasing { current, requested: value });
        }
        // Recorded before it takes effect: whatever it releases comes after it in the stream.
        if let Some(replay) = device.replay_capture().filter(|_| self.replay_id() != 0) {
            replay.push(ReplayRecord::HostSignal(Point { semaphore: self.replay_id(), value }));
        }
        self.raise(value);
        Ok(())
    }

    /// Raises the value from the host without the promise check (the host keeping a promise it
    /// made, as a host call does for its signals), and wakes whoever waits.
    pub(crate) fn raise(&self, value: u64) {
        let device = &self.0.device;
        device.semaphores.signal(self.0.slot, value);
        device.semaphores.notify();
        device.wake_deferred(None);
    }

    /// Fails the semaphore from the host: waiters, and work waiting on it, get `message`.
    pub fn fail(&self, message: impl Into<String>) {
        let message = message.into();
        if let Some(replay) = self.0.device.replay_capture().filter(|_| self.replay_id() != 0) {
            replay.push(ReplayRecord::HostFail { semaphore: self.replay_id(), message: message.clone() });
        }
        self.fail_with(FailureRecord { status: None, message });
    }

    pub(crate) fn fail_with(&self, record: FailureRecord) {
        let device = &self.0.device;
        let failure = device.semaphores.record_failure(record);
        device.semaphores.fail(self.0.slot, failure);
        device.semaphores.notify();
        device.wake_deferred(None);
    }

    /// Blocks until the value reaches `value`, the semaphore fails, or `timeout` passes.
    pub fn wait(&self, value: u64, timeout: Duration) -> EngineResult<()> {
        wait_all(&[self.at(value)], timeout)
    }
}

/// Which state a point is in.
fn point_state(point: &SemaphorePoint) -> EngineResult<bool> {
    let table = &point.semaphore.0.device.semaphores;
    if let Some(failure) = table.failure(point.semaphore.0.slot) {
        let record = table
            .failure_record(failure)
            .unwrap_or_else(|| Arc::new(FailureRecord { status: None, message: "unknown failure".into() }));
        return Err(EngineError::SemaphoreFailed(record));
    }
    Ok(table.value(point.semaphore.0.slot) >= point.value)
}

/// Spins, then parks on the device's notifier, until `ready` gives an answer or time runs out.
fn block_on(
    points: &[SemaphorePoint],
    timeout: Duration,
    mut ready: impl FnMut() -> EngineResult<bool>,
) -> EngineResult<()> {
    let start = Instant::now();
    let deadline = deadline_after(start, timeout);
    let spin_until = start + SPIN_BEFORE_PARK.min(timeout);
    loop {
        if ready()? {
            return Ok(());
        }
        if Instant::now() >= spin_until {
            break;
        }
        core::hint::spin_loop();
    }
    let Some(first) = points.first() else { return Ok(()) };
    let device = &first.semaphore.0.device;
    let table = device.semaphores.clone();
    let mut outcome = Ok(false);
    let mut registered = false;
    table.park_until(deadline, || {
        if !registered {
            // Counted among the parked now: completion threads that batch their drains behind
            // later work must drain what our semaphores wait for as soon as it retires.
            registered = true;
            device.wake_completion_threads();
        }
        outcome = ready();
        !matches!(outcome, Ok(false))
    });
    match outcome {
        Ok(true) => Ok(()),
        Ok(false) => {
            let unmet = points
                .iter()
                .filter_map(|point| {
                    let reached = table.value(point.semaphore.0.slot);
                    (reached < point.value).then_some(UnmetPoint {
                        semaphore: point.semaphore.0.slot,
                        value: point.value,
                        reached,
                    })
                })
                .collect();
            Err(EngineError::Timeout { waited: start.elapsed(), unmet })
        }
        Err(error) => Err(error),
    }
}

fn same_device(points: &[SemaphorePoint]) -> EngineResult<()> {
    let Some(first) = points.first() else { return Ok(()) };
    if points.iter().all(|point| point.semaphore.0.device.id == first.semaphore.0.device.id) {
        Ok(())
    } else {
        Err(EngineError::ForeignObject { what: "semaphore (all semaphores of one wait must share a device)" })
    }
}

/// Blocks until every point is reached. A failed semaphore ends the wait with its error.
pub fn wait_all(points: &[SemaphorePoint], timeout: Duration) -> EngineResult<()> {
    same_device(points)?;
    block_on(points, timeout, || {
        let mut all = true;
        for point in points {
            all &= point_state(point)?;
        }
        Ok(all)
    })?;
    for point in points {
        point.semaphore.observed(point.value);
    }
    Ok(())
}

/// Blocks until at least one point is reached; returns its index. A failed semaphore ends the
/// wait with its error.
pub fn wait_any(points: &[SemaphorePoint], timeout: Duration) -> EngineResult<usize> {
    if points.is_empty() {
        return Err(EngineError::InvalidArgument { what: "wait_any", reason: "no semaphores given".into() });
    }
    same_device(points)?;
    let mut found = 0;
    block_on(points, timeout, || {
        for (index, point) in points.iter().enumerate() {
            if point_state(point)? {
                found = index;
                return Ok(true);
            }
        }
        Ok(false)
    })?;
    points[found].semaphore.observed(points[found].value);
    Ok(found)
}
