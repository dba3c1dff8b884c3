//! Queue-ordered memory: `alloca` takes memory from a pool for work ordered after its signals,
//! `dealloca` gives it back in queue order (see `crate::pool` for the reuse rules).
//!
//! Each queue keeps a *memory timeline*, an internal semaphore its deallocas signal: dealloca `n`
//! raises it to `n` when its epoch retires, which is when the memory it returns is dead. The pool
//! tags that memory with the point; an alloca on another queue that takes it waits on the point
//! (a device-side barrier on the dealloca's epoch, resolved like any cross-queue wait).

use std::sync::MutexGuard;
use std::sync::atomic::Ordering;

use aqueduct_vocabulary::OperationKind;

use super::host_services::{HostServices, MemoryTimeline};
use super::pass_driver::PassDriver;
use crate::error::{EngineError, EngineResult};
use crate::memory::Buffer;
use crate::memory::pool::{Pool, Pooled};
use crate::semaphore::{Semaphore, SemaphorePoint};

/// Whether a submission error means nothing was enqueued (its input was refused).
fn refused(error: &EngineError) -> bool {
    matches!(
        error,
        EngineError::InvalidArgument { .. }
            | EngineError::ForeignObject { .. }
            | EngineError::SemaphoreNotIncreasing { .. }
            | EngineError::SubmissionTooLarge { .. }
            | EngineError::Backpressure { .. }
    )
}

/// `points` and then `extra`, on the stack for up to 7 points.
fn with_point<R>(points: &[SemaphorePoint], extra: SemaphorePoint, then: impl FnOnce(&[SemaphorePoint]) -> R) -> R {
    const INLINE: usize = 8;
    if points.len() < INLINE {
        let mut all = [extra; INLINE];
        all[..points.len()].copy_from_slice(points);
        then(&all[..=points.len()])
    } else {
        let mut all = points.to_vec();
        all.push(extra);
        then(&all)
    }
}

impl HostServices {
    fn timeline(&self) -> MutexGuard<'_, MemoryTimeline> {
        self.memory_timeline.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    pub(crate) fn submit_alloca(
        &self,
        queue: &PassDriver,
        kind: OperationKind,
        pool: &Pool,
        size: u64,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) -> EngineResult<Buffer> {
        let shared = &pool.0;
        if shared.device.id != queue.device.id {
            return Err(EngineError::ForeignObject { what: "pool" });
        }
        queue.check_points(waits, signals)?;
        let reservation = shared.reserve(queue.index, size)?;
        let submitted = match &reservation.wait {
            // Nothing to order: later work on this queue follows it, other queues have no signal
            // to wait on, and the memory is not in flight elsewhere.
            None if waits.is_empty() && signals.is_empty() => Ok(()),
            None => queue.submit(waits, signals, |row| row.set_operation(kind)),
            Some((timeline, value)) => with_point(waits, timeline.at(*value), |waits| {
                queue.submit(waits, signals, |row| row.set_operation(kind))
            }),
        };
        match submitted {
            Ok(()) => {
                let (entity, address) = (reservation.entity, reservation.address);
                Ok(Buffer::pooled(Pooled { pool: shared.clone(), entity }, address, size))
            }
            Err(error) => {
                // Refused, or enqueued and failed: either way no work may use the memory.
                shared.unreserve(reservation);
                Err(error)
            }
        }
    }

    pub(crate) fn submit_dealloca(
        &self,
        queue: &PassDriver,
        kind: OperationKind,
        buffer: &Buffer,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) -> EngineResult<()> {
        buffer.belongs_to(&queue.device)?;
        let Some(pooled) = buffer.pool_origin() else {
            return Err(EngineError::InvalidArgument {
                what: "dealloca",
                reason: "the buffer is not from Queue::alloca".into(),
            });
        };
        queue.check_points(waits, signals)?;
        if buffer.0.deallocated.swap(true, Ordering::AcqRel) {
            return Err(EngineError::BufferDeallocated);
        }
        let mut guard = self.timeline();
        let timeline = &mut *guard;
        let semaphore = match &timeline.semaphore {
            Some(semaphore) if !semaphore.has_failed() => semaphore,
            _ => match Semaphore::create(&queue.device, 0) {
                Ok(semaphore) => {
                    timeline.value = 0;
                    timeline.semaphore.insert(semaphore)
                }
                Err(error) => {
                    buffer.0.deallocated.store(false, Ordering::Release);
                    return Err(error);
                }
            },
        };
        let value = timeline.value + 1;
        let result = with_point(signals, semaphore.at(value), |signals| {
            queue.submit(waits, signals, |row| row.set_operation(kind))
        });
        match result {
            Ok(()) => {
                // Under the timeline's lock, so the pool learns of its values in order.
                pooled.pool.deallocated(pooled.entity, queue.index, semaphore, value);
                timeline.value = value;
                Ok(())
            }
            Err(error) if refused(&error) => {
                buffer.0.deallocated.store(false, Ordering::Release);
                Err(error)
            }
            Err(error) => {
                // Enqueued and failed (a failed wait, or the queue): its timeline point failed, so
                // nothing says when the buffer's users end; the pool holds the memory until every
                // queue has settled what was enqueued until now.
                timeline.value = value;
                pooled.pool.abandon(pooled.entity);
                Err(error)
            }
        }
    }
}
