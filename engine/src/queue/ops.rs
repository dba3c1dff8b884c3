//! The operations a queue offers, one argument struct each: the builder method that gathers the
//! arguments (on [`Queue`], and on [`Batch`] for those a batch offers too), and the struct's
//! [`Submittable`] impl, which names its [`OperationKind`], enqueues it (the code in
//! `operations.rs`, or the queue's own file for queue-only operations) and describes it to a
//! replay capture. `Submission::submit` (`builder.rs`) runs them.
//!
//! Adding an operation kind: its `OperationKind` entry (`vocabulary/src/lib.rs`), its replay
//! record (`profile/src/replay.rs`, `Operation`), its struct, builder methods and impl here, its
//! code, and the replayer's call; the checklist is in docs/ARCHITECTURE.md.
//!
//! A host call has its own `submit` here (its operation is generic over the closure, which runs
//! once), and so does a typed launch (`launch.rs`, which checks its arguments first).

// `Submittable` is sealed: its methods name the engine's own `Submitter` and `ReplayCapture`,
// which a user never sees (the methods are hidden, and no type outside can implement it).
#![allow(private_bounds, private_interfaces)]

use core::marker::PhantomData;

use aqueduct_profile::replay::Operation;
use aqueduct_vocabulary::OperationKind;

use super::builder::{Submission, Submittable, Submitted, captured, private::Sealed};
use super::operations::{self, Submitter};
use super::replay_records as replay;
use super::{Batch, HostCallResult, Queue, RawDispatch};
use crate::command_buffer::{BindingTable, CommandBuffer};
use crate::dispatch::Dispatch;
use crate::error::EngineResult;
use crate::executable::Kernel;
use crate::memory::pool::Pool;
use crate::memory::{Binding, Buffer};
use crate::replay_capture::ReplayCapture;
use crate::semaphore::SemaphorePoint;

/// The arguments of [`Queue::barrier`].
pub struct BarrierOp<'a>(PhantomData<&'a ()>);

/// The arguments of [`Queue::fill`].
pub struct FillOp<'a> {
    target: Binding<'a>,
    pattern: &'a [u8],
}

/// The arguments of [`Queue::copy`].
pub struct CopyOp<'a> {
    source: Binding<'a>,
    target: Binding<'a>,
}

/// The arguments of [`Queue::update`].
pub struct UpdateOp<'a> {
    target: &'a Buffer,
    offset: u64,
    data: &'a [u8],
}

/// The arguments of [`Queue::dispatch`].
pub struct DispatchOp<'a> {
    kernel: &'a Kernel,
    dispatch: &'a Dispatch<'a>,
}

/// The arguments of [`Queue::dispatch_raw`].
pub struct RawDispatchOp<'a> {
    kernel: &'a Kernel,
    dispatch: &'a RawDispatch<'a>,
}

/// The arguments of [`Queue::execute`].
pub struct ExecuteOp<'a> {
    command_buffer: &'a CommandBuffer,
    table: &'a BindingTable,
    processing: Option<crate::BlockProcessing>,
}

/// The arguments of [`Queue::alloca`].
pub struct AllocaOp<'a> {
    pool: &'a Pool,
    size: u64,
}

/// The arguments of [`Queue::dealloca`].
pub struct DeallocaOp<'a> {
    buffer: &'a Buffer,
}

/// The arguments of [`Queue::read_file`].
pub struct ReadFileOp<'a> {
    file: &'a std::fs::File,
    offset: u64,
    target: Binding<'a>,
}

/// The arguments of [`Queue::write_file`].
pub struct WriteFileOp<'a> {
    source: Binding<'a>,
    file: &'a std::fs::File,
    offset: u64,
}

impl Queue {
    /// Orders nothing but the queue: signals once the waits are met and earlier work is done.
    #[inline(always)]
    pub fn barrier(&self) -> Submission<'_, &Queue, BarrierOp<'_>> {
        Submission::new(self, BarrierOp(PhantomData))
    }

    /// Fills `target` with a repeated `pattern` of 1, 2, 4 or 8 bytes.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use aqueduct_engine::prelude::*;
    /// # let engine = Engine::new("soft")?;
    /// # let device = engine.device();
    /// let queue = device.create_queue()?;
    /// let done = device.create_semaphore(0)?;
    /// let buffer = device.allocate(MemoryKind::HostVisible, 64)?;
    /// queue.fill(buffer.whole(), &7u32.to_le_bytes()).signal(done.at(1)).submit()?;
    /// done.wait(1, Duration::from_secs(5))?;
    /// assert_eq!(buffer.to_vec()?[..4], 7u32.to_le_bytes());
    /// # Ok::<(), aqueduct_engine::EngineError>(())
    /// ```
    #[inline(always)]
    pub fn fill<'a>(&'a self, target: Binding<'a>, pattern: &'a [u8]) -> Submission<'a, &'a Queue, FillOp<'a>> {
        Submission::new(self, FillOp { target, pattern })
    }

    /// Copies `source` to `target`; the ranges must have equal lengths and must not overlap.
    #[inline(always)]
    pub fn copy<'a>(&'a self, source: Binding<'a>, target: Binding<'a>) -> Submission<'a, &'a Queue, CopyOp<'a>> {
        Submission::new(self, CopyOp { source, target })
    }

    /// Writes `data` into `target` at `offset` when the queue reaches it. Up to
    /// [`UPDATE_INLINE_MAX_BYTES`](aqueduct_builtins::UPDATE_INLINE_MAX_BYTES) travel inside the
    /// kernargs; larger updates (up to [`MAX_UPDATE_BYTES`](crate::MAX_UPDATE_BYTES)) are enqueued
    /// in the kernarg ring and copied.
    #[inline(always)]
    pub fn update<'a>(
        &'a self,
        target: &'a Buffer,
        offset: u64,
        data: &'a [u8],
    ) -> Submission<'a, &'a Queue, UpdateOp<'a>> {
        Submission::new(self, UpdateOp { target, offset, data })
    }

    /// Dispatches `kernel` with HAL-layout kernargs (bindings, then constants).
    #[inline(always)]
    pub fn dispatch<'a>(
        &'a self,
        kernel: &'a Kernel,
        dispatch: &'a Dispatch<'a>,
    ) -> Submission<'a, &'a Queue, DispatchOp<'a>> {
        Submission::new(self, DispatchOp { kernel, dispatch })
    }

    /// Dispatches `kernel` with caller-built kernarg bytes, at least the explicit arguments and
    /// at most the kernel's kernarg segment (the rest is zeroed).
    #[inline(always)]
    pub fn dispatch_raw<'a>(
        &'a self,
        kernel: &'a Kernel,
        dispatch: &'a RawDispatch<'a>,
    ) -> Submission<'a, &'a Queue, RawDispatchOp<'a>> {
        Submission::new(self, RawDispatchOp { kernel, dispatch })
    }

    /// Runs a finished command buffer after the waits, raising the signals once all of it is
    /// done. Dynamic bindings resolve through `table`. Returns once the first leg is
    /// published (or parked behind earlier work); larger programs and conditional branches
    /// continue from the queue's completion thread.
    ///
    /// Where its blocks become packets is the command buffer's choice
    /// ([`CommandBuffer::set_processing`]) unless [`Submission::processing`] overrides it.
    #[inline(always)]
    pub fn execute<'a>(
        &'a self,
        command_buffer: &'a CommandBuffer,
        table: &'a BindingTable,
    ) -> Submission<'a, &'a Queue, ExecuteOp<'a>> {
        Submission::new(self, ExecuteOp { command_buffer, table, processing: None })
    }

    /// Takes `size` bytes from `pool` in queue order and returns the buffer at once. Work may use
    /// the memory once it is ordered after the signals (or after this call, on this queue). With
    /// no waits or signals, and memory that needs no wait, nothing is submitted at all.
    #[inline(always)]
    pub fn alloca<'a>(&'a self, pool: &'a Pool, size: u64) -> Submission<'a, &'a Queue, AllocaOp<'a>> {
        Submission::new(self, AllocaOp { pool, size })
    }

    /// Returns an alloca's buffer to its pool once the waits are met and earlier work on this
    /// queue is done; the waits must cover every use on other queues. Later work on this queue
    /// may reuse the memory at once; other queues once this dealloca retires (or behind a wait
    /// on it). The buffer handle refuses every use from now on (`BufferDeallocated`).
    #[inline(always)]
    pub fn dealloca<'a>(&'a self, buffer: &'a Buffer) -> Submission<'a, &'a Queue, DeallocaOp<'a>> {
        Submission::new(self, DeallocaOp { buffer })
    }

    /// Reads `target.length` bytes of `file` at `offset` into `target`, in queue order. Memory
    /// the host cannot reach streams through a 4 MiB (`BOUNCE_BUFFER_BYTES`) bounce buffer. A range
    /// past the end of the file is refused now; a short read or an I/O error later fails the
    /// signals.
    #[inline(always)]
    pub fn read_file<'a>(
        &'a self,
        file: &'a std::fs::File,
        offset: u64,
        target: Binding<'a>,
    ) -> Submission<'a, &'a Queue, ReadFileOp<'a>> {
        Submission::new(self, ReadFileOp { file, offset, target })
    }

    /// Writes `source` into `file` at `offset`, in queue order (as [`Queue::read_file`]).
    #[inline(always)]
    pub fn write_file<'a>(
        &'a self,
        source: Binding<'a>,
        file: &'a std::fs::File,
        offset: u64,
    ) -> Submission<'a, &'a Queue, WriteFileOp<'a>> {
        Submission::new(self, WriteFileOp { source, file, offset })
    }
}

/// The operations a batch offers: those of a queue that hold none of the queue's own threads or
/// timelines (not alloca, dealloca, file reads and writes, or host calls).
impl<'q> Batch<'q> {
    /// Stages [`Queue::barrier`] in the batch.
    #[inline(always)]
    pub fn barrier<'a>(&'a mut self) -> Submission<'a, &'a mut Batch<'q>, BarrierOp<'a>> {
        Submission::new(self, BarrierOp(PhantomData))
    }

    /// Stages [`Queue::fill`] in the batch.
    #[inline(always)]
    pub fn fill<'a>(
        &'a mut self,
        target: Binding<'a>,
        pattern: &'a [u8],
    ) -> Submission<'a, &'a mut Batch<'q>, FillOp<'a>> {
        Submission::new(self, FillOp { target, pattern })
    }

    /// Stages [`Queue::copy`] in the batch.
    #[inline(always)]
    pub fn copy<'a>(
        &'a mut self,
        source: Binding<'a>,
        target: Binding<'a>,
    ) -> Submission<'a, &'a mut Batch<'q>, CopyOp<'a>> {
        Submission::new(self, CopyOp { source, target })
    }

    /// Stages [`Queue::update`] in the batch.
    #[inline(always)]
    pub fn update<'a>(
        &'a mut self,
        target: &'a Buffer,
        offset: u64,
        data: &'a [u8],
    ) -> Submission<'a, &'a mut Batch<'q>, UpdateOp<'a>> {
        Submission::new(self, UpdateOp { target, offset, data })
    }

    /// Stages [`Queue::dispatch`] in the batch.
    #[inline(always)]
    pub fn dispatch<'a>(
        &'a mut self,
        kernel: &'a Kernel,
        dispatch: &'a Dispatch<'a>,
    ) -> Submission<'a, &'a mut Batch<'q>, DispatchOp<'a>> {
        Submission::new(self, DispatchOp { kernel, dispatch })
    }

    /// Stages [`Queue::dispatch_raw`] in the batch.
    #[inline(always)]
    pub fn dispatch_raw<'a>(
        &'a mut self,
        kernel: &'a Kernel,
        dispatch: &'a RawDispatch<'a>,
    ) -> Submission<'a, &'a mut Batch<'q>, RawDispatchOp<'a>> {
        Submission::new(self, RawDispatchOp { kernel, dispatch })
    }

    /// Stages [`Queue::execute`] in the batch.
    #[inline(always)]
    pub fn execute<'a>(
        &'a mut self,
        command_buffer: &'a CommandBuffer,
        table: &'a BindingTable,
    ) -> Submission<'a, &'a mut Batch<'q>, ExecuteOp<'a>> {
        Submission::new(self, ExecuteOp { command_buffer, table, processing: None })
    }
}

impl<'a, T> Submission<'a, T, ExecuteOp<'a>> {
    /// Where this execution's blocks become packets, whatever the command buffer's own choice:
    /// [`BlockProcessing::Host`](crate::BlockProcessing::Host) or `Device` forces either (a
    /// program the device cannot take is then refused with a typed error), `Auto` asks the
    /// engine's model.
    pub fn processing(mut self, processing: crate::BlockProcessing) -> Self {
        self.operation_mut().processing = Some(processing);
        self
    }
}

/// The arguments of [`Queue::host_call`].
pub struct HostCallOp<F> {
    call: F,
}

impl Queue {
    /// Runs `call` on a host thread once the waits are met and earlier work on this queue is
    /// done, then raises the signals; an `Err` (or a panic) fails them instead. Later work on
    /// this queue waits for `call` to return; other queues, and earlier work, do not.
    pub fn host_call<F>(&self, call: F) -> Submission<'_, &Queue, HostCallOp<F>>
    where
        F: FnOnce() -> HostCallResult + Send + 'static,
    {
        Submission::new(self, HostCallOp { call })
    }
}

impl<'a, F> Submission<'a, &'a Queue, HostCallOp<F>>
where
    F: FnOnce() -> HostCallResult + Send + 'static,
{
    /// Validates and submits the host call; a refused one changes nothing. Returns its place in
    /// the queue's order.
    pub fn submit(self) -> EngineResult<Submitted> {
        let (queue, operation, waits, signals) = self.into_parts();
        let queue = &*queue.driver;
        let call = Box::new(operation.call);
        captured!(
            queue,
            &waits,
            &signals,
            queue.services.submit_host_call(queue, OperationKind::HostCall, call, &waits, &signals),
            |_, _| { Operation::HostCall }
        )
        .map(|()| Submitted::now(queue))
    }
}

// Each operation's kind, how it stages, and what a replay capture records of it.

type Point<'a> = SemaphorePoint<'a>;

impl Sealed for BarrierOp<'_> {}
impl<'a> Submittable<'a> for BarrierOp<'a> {
    type Output = ();
    const KIND: OperationKind = OperationKind::Barrier;
    #[inline(always)]
    fn enqueue(&self, to: &mut impl Submitter, waits: &[Point<'a>], signals: &[Point<'a>]) -> EngineResult<()> {
        operations::barrier(to, Self::KIND, waits, signals)
    }
    fn describe(&self, _: &ReplayCapture, _: &()) -> Operation {
        Operation::Barrier
    }
}
impl Sealed for FillOp<'_> {}
impl<'a> Submittable<'a> for FillOp<'a> {
    type Output = ();
    const KIND: OperationKind = OperationKind::Fill;
    #[inline(always)]
    fn enqueue(&self, to: &mut impl Submitter, waits: &[Point<'a>], signals: &[Point<'a>]) -> EngineResult<()> {
        operations::fill(to, Self::KIND, self.target, self.pattern, waits, signals)
    }
    fn describe(&self, _: &ReplayCapture, _: &()) -> Operation {
        Operation::Fill { target: self.target.replay_range(), pattern: self.pattern.to_vec() }
    }
}
impl Sealed for CopyOp<'_> {}
impl<'a> Submittable<'a> for CopyOp<'a> {
    type Output = ();
    const KIND: OperationKind = OperationKind::Copy;
    #[inline(always)]
    fn enqueue(&self, to: &mut impl Submitter, waits: &[Point<'a>], signals: &[Point<'a>]) -> EngineResult<()> {
        operations::copy(to, Self::KIND, self.source, self.target, waits, signals)
    }
    fn describe(&self, _: &ReplayCapture, _: &()) -> Operation {
        Operation::Copy { source: self.source.replay_range(), target: self.target.replay_range() }
    }
}
impl Sealed for UpdateOp<'_> {}
impl<'a> Submittable<'a> for UpdateOp<'a> {
    type Output = ();
    const KIND: OperationKind = OperationKind::Update;
    #[inline(always)]
    fn enqueue(&self, to: &mut impl Submitter, waits: &[Point<'a>], signals: &[Point<'a>]) -> EngineResult<()> {
        operations::update(to, Self::KIND, self.target, self.offset, self.data, waits, signals)
    }
    fn describe(&self, _: &ReplayCapture, _: &()) -> Operation {
        Operation::Update { buffer: self.target.replay_id(), offset: self.offset, data: self.data.to_vec() }
    }
}
impl Sealed for DispatchOp<'_> {}
impl<'a> Submittable<'a> for DispatchOp<'a> {
    type Output = ();
    const KIND: OperationKind = OperationKind::Dispatch;
    #[inline(always)]
    fn enqueue(&self, to: &mut impl Submitter, waits: &[Point<'a>], signals: &[Point<'a>]) -> EngineResult<()> {
        operations::dispatch(to, Self::KIND, self.kernel, self.dispatch, waits, signals)
    }
    fn describe(&self, _: &ReplayCapture, _: &()) -> Operation {
        replay::describe_dispatch(self.kernel, self.dispatch)
    }
}
impl Sealed for RawDispatchOp<'_> {}
impl<'a> Submittable<'a> for RawDispatchOp<'a> {
    type Output = ();
    const KIND: OperationKind = OperationKind::RawDispatch;
    #[inline(always)]
    fn enqueue(&self, to: &mut impl Submitter, waits: &[Point<'a>], signals: &[Point<'a>]) -> EngineResult<()> {
        operations::dispatch_raw(to, Self::KIND, self.kernel, self.dispatch, waits, signals)
    }
    fn describe(&self, capture: &ReplayCapture, _: &()) -> Operation {
        replay::describe_raw_dispatch(capture, self.kernel, self.dispatch)
    }
}
impl Sealed for ExecuteOp<'_> {}
impl<'a> Submittable<'a> for ExecuteOp<'a> {
    type Output = ();
    const KIND: OperationKind = OperationKind::Execute;
    #[inline(always)]
    fn enqueue(&self, to: &mut impl Submitter, waits: &[Point<'a>], signals: &[Point<'a>]) -> EngineResult<()> {
        let (command_buffer, table) = (self.command_buffer, self.table);
        super::execute::execute(to, Self::KIND, command_buffer, table, self.processing, waits, signals)
    }
    fn describe(&self, _: &ReplayCapture, _: &()) -> Operation {
        replay::describe_execute(self.command_buffer, self.table)
    }
}
impl Sealed for AllocaOp<'_> {}
impl<'a> Submittable<'a> for AllocaOp<'a> {
    type Output = Buffer;
    const KIND: OperationKind = OperationKind::Alloca;
    #[inline(always)]
    fn enqueue(&self, to: &mut impl Submitter, waits: &[Point<'a>], signals: &[Point<'a>]) -> EngineResult<Buffer> {
        let queue = to.driver();
        queue.services.submit_alloca(queue, Self::KIND, self.pool, self.size, waits, signals)
    }
    fn describe(&self, capture: &ReplayCapture, buffer: &Buffer) -> Operation {
        replay::describe_alloca(capture, self.pool, self.size, buffer)
    }
}
impl Sealed for DeallocaOp<'_> {}
impl<'a> Submittable<'a> for DeallocaOp<'a> {
    type Output = ();
    const KIND: OperationKind = OperationKind::Dealloca;
    #[inline(always)]
    fn enqueue(&self, to: &mut impl Submitter, waits: &[Point<'a>], signals: &[Point<'a>]) -> EngineResult<()> {
        let queue = to.driver();
        queue.services.submit_dealloca(queue, Self::KIND, self.buffer, waits, signals)
    }
    fn describe(&self, _: &ReplayCapture, _: &()) -> Operation {
        Operation::Dealloca { buffer: self.buffer.replay_id() }
    }
}
impl Sealed for ReadFileOp<'_> {}
impl<'a> Submittable<'a> for ReadFileOp<'a> {
    type Output = ();
    const KIND: OperationKind = OperationKind::ReadFile;
    #[inline(always)]
    fn enqueue(&self, to: &mut impl Submitter, waits: &[Point<'a>], signals: &[Point<'a>]) -> EngineResult<()> {
        let queue = to.driver();
        queue.services.submit_read_file(queue, self.file, self.offset, self.target, waits, signals)
    }
    fn describe(&self, _: &ReplayCapture, _: &()) -> Operation {
        Operation::ReadFile { target: self.target.replay_range(), file_offset: self.offset }
    }
}
impl Sealed for WriteFileOp<'_> {}
impl<'a> Submittable<'a> for WriteFileOp<'a> {
    type Output = ();
    const KIND: OperationKind = OperationKind::WriteFile;
    #[inline(always)]
    fn enqueue(&self, to: &mut impl Submitter, waits: &[Point<'a>], signals: &[Point<'a>]) -> EngineResult<()> {
        let queue = to.driver();
        queue.services.submit_write_file(queue, self.source, self.file, self.offset, waits, signals)
    }
    fn describe(&self, _: &ReplayCapture, _: &()) -> Operation {
        Operation::WriteFile { source: self.source.replay_range(), file_offset: self.offset }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind is enqueued by one operation here, or, for a host call, by its own `submit`
    /// (a typed launch stages a `Dispatch`), so every row, profile and capture names it alike.
    #[test]
    fn every_kind_is_enqueued_by_one_operation() {
        let mut enqueued = vec![
            BarrierOp::KIND,
            FillOp::KIND,
            CopyOp::KIND,
            UpdateOp::KIND,
            DispatchOp::KIND,
            RawDispatchOp::KIND,
            ExecuteOp::KIND,
            AllocaOp::KIND,
            DeallocaOp::KIND,
            ReadFileOp::KIND,
            WriteFileOp::KIND,
            OperationKind::HostCall,
        ];
        enqueued.sort();
        let mut all = OperationKind::ALL.to_vec();
        all.sort();
        assert_eq!(enqueued, all);
    }
}
