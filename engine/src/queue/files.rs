//! File reads and writes in queue order, built on host calls (`host_calls.rs`).
//!
//! Host-visible memory is read into or written from directly, by one host call. Memory the host
//! cannot reach streams through the queue's bounce buffer ([`BOUNCE_BUFFER_BYTES`] of host-visible
//! memory, made at the first such transfer), one chunk at a time: for a read, a host call fills
//! the bounce buffer from the file and a copy moves it to the target; for a write, a copy fills
//! it and a host call writes it out. The queue runs each step after the one before, so one
//! bounce buffer serves every chunk, and a file larger than it streams. The caller's waits go on
//! the first step and its signals on a last host call, which fails them if any step failed.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex, MutexGuard};

use super::host_services::{HostCallResult, HostServices};
use super::operations::{self, Immediate};
use super::pass_driver::PassDriver;
use crate::error::{EngineError, EngineResult};
use crate::memory::{Binding, Buffer};
use crate::semaphore::SemaphorePoint;
use aqueduct_components::device_entities::MemoryKind;
use aqueduct_vocabulary::OperationKind;

/// The bounce buffer each queue streams through.
pub const BOUNCE_BUFFER_BYTES: u64 = 4 << 20;

/// Which way the bytes move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    Read,
    Write,
}

/// The first error of a multi-step transfer: later steps skip their work and the last one fails
/// the caller's signals with it.
type ChainError = Arc<Mutex<Option<String>>>;

fn chain_error(chain: &ChainError) -> MutexGuard<'_, Option<String>> {
    chain.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// Moves `length` bytes between `file` at `file_offset` and host memory at `address`.
///
/// # Safety
/// `address..address + length` is host-accessible memory the queue's order gives this transfer
/// alone (for a read, no other work writes or reads it; for a write, none writes it).
unsafe fn transfer(direction: Direction, file: &File, file_offset: u64, address: u64, length: u64) -> HostCallResult {
    let length = usize::try_from(length)?;
    match direction {
        Direction::Read => {
            // SAFETY: by the function's contract.
            let bytes = unsafe { std::slice::from_raw_parts_mut(address as *mut u8, length) };
            let mut done = 0;
            while done < length {
                match file.read_at(&mut bytes[done..], file_offset + done as u64)? {
                    0 => {
                        return Err(format!(
                            "short read: {done} of {length} bytes at file offset {file_offset} (the file ends first)"
                        )
                        .into());
                    }
                    read => done += read,
                }
            }
        }
        Direction::Write => {
            // SAFETY: by the function's contract.
            let bytes = unsafe { std::slice::from_raw_parts(address as *const u8, length) };
            file.write_all_at(bytes, file_offset)?;
        }
    }
    Ok(())
}

impl HostServices {
    fn bounce_buffer(&self, queue: &PassDriver) -> EngineResult<Buffer> {
        let mut bounce = self.file_bounce_buffer.lock().unwrap_or_else(|poison| poison.into_inner());
        if let Some(buffer) = &*bounce {
            return Ok(buffer.clone());
        }
        let buffer = Buffer::allocate(&queue.device, MemoryKind::HostVisible, BOUNCE_BUFFER_BYTES, queue.agent)?;
        *bounce = Some(buffer.clone());
        Ok(buffer)
    }

    /// Reads `target.length` bytes of `file` from `offset` into `target`, in queue order.
    pub(crate) fn submit_read_file(
        &self,
        queue: &PassDriver,
        file: &File,
        offset: u64,
        target: Binding,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) -> EngineResult<()> {
        let end = offset.checked_add(target.length);
        let size = file.metadata().map_err(|error| EngineError::File { reason: error.to_string() })?.len();
        if end.is_none_or(|end| end > size) {
            return Err(EngineError::OutOfBounds { what: "file read", offset, length: target.length, size });
        }
        file_transfer(queue, OperationKind::ReadFile, file, offset, target, waits, signals)
    }

    /// Writes `source` to `file` at `offset`, in queue order.
    pub(crate) fn submit_write_file(
        &self,
        queue: &PassDriver,
        source: Binding,
        file: &File,
        offset: u64,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) -> EngineResult<()> {
        if offset.checked_add(source.length).is_none() {
            return Err(EngineError::OutOfBounds { what: "file write", offset, length: source.length, size: u64::MAX });
        }
        file_transfer(queue, OperationKind::WriteFile, file, offset, source, waits, signals)
    }
}

/// A file read (`kind` ReadFile) or write (WriteFile): its rows, the bounce copies and the
/// host calls, carry `kind`.
fn file_transfer(
    queue: &PassDriver,
    kind: OperationKind,
    file: &File,
    offset: u64,
    memory: Binding,
    waits: &[SemaphorePoint],
    signals: &[SemaphorePoint],
) -> EngineResult<()> {
    let direction = if kind == OperationKind::ReadFile { Direction::Read } else { Direction::Write };
    memory.buffer.belongs_to(&queue.device)?;
    let address = memory.buffer.check_range("file transfer", memory.offset, memory.length)?;
    queue.check_points(waits, signals)?;
    let file = Arc::new(file.try_clone().map_err(|error| EngineError::File { reason: error.to_string() })?);
    if memory.buffer.kind().host_accessible() {
        // One host call, straight into or out of the buffer (kept alive by the closure).
        let (buffer, length) = (memory.buffer.clone(), memory.length);
        let work = Box::new(move || {
            // SAFETY: a live host-visible range of `buffer`, which the queue orders.
            let result = unsafe { transfer(direction, &file, offset, address, length) };
            if direction == Direction::Read {
                buffer.note_host_write();
            }
            result
        });
        return queue.services.submit_host_call(queue, kind, work, waits, signals);
    }
    let bounce = queue.services.bounce_buffer(queue)?;
    let chain = ChainError::default();
    let mut first_waits = waits;
    let mut done = 0;
    while done < memory.length {
        let length = (memory.length - done).min(BOUNCE_BUFFER_BYTES);
        let bounced = bounce.range(0, length);
        let part = Binding { buffer: memory.buffer, offset: memory.offset + done, length };
        let step = {
            let (file, chain, bounce) = (file.clone(), chain.clone(), bounce.clone());
            let file_offset = offset + done;
            Box::new(move || -> HostCallResult {
                if let Some(error) = &*chain_error(&chain) {
                    return Err(error.clone().into());
                }
                // SAFETY: the bounce buffer is host-visible, and the queue runs this step
                // alone between the copies that fill or drain it.
                let result = unsafe { transfer(direction, &file, file_offset, bounce.device_address(), length) };
                if let Err(error) = &result {
                    chain_error(&chain).get_or_insert(error.to_string());
                }
                result
            })
        };
        match direction {
            Direction::Read => {
                queue.services.submit_host_call(queue, kind, step, first_waits, &[])?;
                operations::copy(&mut Immediate(queue), kind, bounced, part, &[], &[])?;
            }
            Direction::Write => {
                operations::copy(&mut Immediate(queue), kind, part, bounced, first_waits, &[])?;
                queue.services.submit_host_call(queue, kind, step, &[], &[])?;
            }
        }
        first_waits = &[];
        done += length;
    }
    let finish = Box::new(move || -> HostCallResult {
        match chain_error(&chain).take() {
            Some(error) => Err(error.into()),
            None => Ok(()),
        }
    });
    queue.services.submit_host_call(queue, kind, finish, first_waits, signals)
}
