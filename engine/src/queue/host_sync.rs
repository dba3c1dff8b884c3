//! What a host thread waits on a queue for: the queue going idle, and reads and writes of any
//! buffer in queue order (cudarc's `clone_dtoh` and `clone_htod`, wgpu's `queue.write_buffer`).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use aqueduct_systems::sync::{HostParking, SemaphoreSync};
use bytemuck::Pod;

use super::error_sink::unknown_failure;
use super::{Queue, Submitted};
use crate::error::{EngineError, EngineResult};
use crate::memory::Buffer;

/// The longest a `wait_idle` sleeps between looks: a drain that raises no semaphore wakes no
/// host waiter, so the settled mark is polled at this period.
const IDLE_POLL: Duration = Duration::from_millis(1);

impl Queue {
    /// Blocks until everything submitted to the queue before this call, through any handle, has
    /// finished, the queue has failed (its failure is returned), or `timeout` passes.
    pub fn wait_idle(&self, timeout: Duration) -> EngineResult<()> {
        let target = self.driver.endpoint.enqueued_rows.load(Ordering::Acquire);
        self.wait_settled(target, timeout)
    }

    /// Blocks until the submission `submitted` (which `submit()` on this queue returned), and
    /// everything submitted to the queue before it, has finished, the queue has failed (its
    /// failure is returned), or `timeout` passes. A token of another queue is refused.
    pub fn wait_for(&self, submitted: Submitted, timeout: Duration) -> EngineResult<()> {
        if (submitted.device, submitted.queue) != (self.driver.device.id, self.driver.index) {
            return Err(EngineError::ForeignObject { what: "submission token (it names another queue)" });
        }
        self.wait_settled(submitted.rows, timeout)
    }

    /// Whether `submitted` and everything before it on this queue has finished (or failed).
    pub fn is_finished(&self, submitted: Submitted) -> bool {
        self.settled_through(submitted.rows)
    }

    /// Reads `buffer`, of any memory kind, after the queue's earlier work: the queue copies it
    /// into a host-visible bounce buffer (the queue's own, kept between calls, for up to
    /// 4 MiB (`BOUNCE_BUFFER_BYTES`); one made for the call beyond), and this waits
    /// up to `timeout` for the copy.
    pub fn read<T: Pod>(&self, buffer: &Buffer<T>, timeout: Duration) -> EngineResult<Vec<T>> {
        let mut elements = vec![T::zeroed(); buffer.len() as usize];
        let bytes = std::mem::size_of_val(elements.as_slice()) as u64;
        if bytes == 0 {
            return Ok(elements);
        }
        self.driver.services.with_bounce_buffer(&self.driver.device, bytes, |bounce| {
            self.copy_and_wait(buffer.bytes(), bounce, bytes, timeout)?;
            bounce.read(0, bytemuck::cast_slice_mut(&mut elements))
        })?;
        Ok(elements)
    }

    /// Writes `data` to `buffer`, of any memory kind, from element 0, after the queue's earlier
    /// work: the data goes to a host-visible bounce buffer (as for [`Self::read`]), the queue
    /// copies it, and this waits up to `timeout` for the copy.
    pub fn write<T: Pod>(&self, buffer: &Buffer<T>, data: &[T], timeout: Duration) -> EngineResult<()> {
        let elements = data.len() as u64;
        if elements > buffer.len() {
            return Err(EngineError::InvalidArgument {
                what: "queue write",
                reason: format!("{elements} elements do not fit a buffer of {}", buffer.len()),
            });
        }
        let bytes = std::mem::size_of_val(data) as u64;
        if bytes == 0 {
            return Ok(());
        }
        self.driver.services.with_bounce_buffer(&self.driver.device, bytes, |bounce| {
            bounce.write(0, bytemuck::cast_slice(data))?;
            self.copy_and_wait(bounce, buffer.bytes(), bytes, timeout)
        })
    }

    /// Copies the first `bytes` of `source` to `target` in queue order and waits for it.
    fn copy_and_wait(&self, source: &Buffer, target: &Buffer, bytes: u64, timeout: Duration) -> EngineResult<()> {
        let done = self.device().create_semaphore(0)?;
        self.copy(source.range(0, bytes), target.range(0, bytes)).signal(done.at(1)).submit()?;
        done.wait(1, timeout)
    }
}

impl Queue {
    /// Waits until the queue's rows below `target` have settled, or it failed.
    fn wait_settled(&self, target: u64, timeout: Duration) -> EngineResult<()> {
        self.driver.refuse_inside_batch()?;
        let start = Instant::now();
        let deadline = crate::clock::deadline_after(start, timeout);
        let settled = || self.settled_through(target);
        if !settled() {
            // Completion threads drain epoch by epoch while a host thread is parked.
            self.driver.device.wake_completion_threads();
        }
        while !settled() {
            let now = Instant::now();
            if now >= deadline {
                return Err(EngineError::Timeout { waited: start.elapsed(), unmet: Vec::new() });
            }
            self.driver.device.semaphores.park_until(deadline.min(now + IDLE_POLL), settled);
        }
        match self.failure() {
            Some(failure) => Err(EngineError::QueueFailed(
                self.driver.device.semaphores.failure_record(failure).unwrap_or_else(unknown_failure),
            )),
            None => Ok(()),
        }
    }

    /// The queue's sticky failure (failure-log index), as its endpoint mirrors it.
    fn failure(&self) -> Option<u32> {
        self.driver.endpoint.failure.load(Ordering::Acquire).checked_sub(1)
    }

    /// Whether the rows below `rows` have settled, or the queue failed: a failed queue keeps its
    /// rows unsettled while its packets may still run (`failure.rs`).
    fn settled_through(&self, rows: u64) -> bool {
        self.failure().is_some() || self.driver.endpoint.settled_rows.load(Ordering::Acquire) >= rows
    }
}
