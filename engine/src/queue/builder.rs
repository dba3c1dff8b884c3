//! The submission builder: one queue operation, its waits and signals gathered with defaults,
//! then [`Submission::submit`]. `queue.fill(range, &pattern).wait(a.at(1)).signal(b.at(2))
//! .submit()?` reads as what it does, and an operation with no waits or signals needs neither.
//!
//! The same builder serves a [`Queue`] (submit publishes at once) and a [`Batch`] (submit stages
//! into the batch, which publishes at its flush). The points live inline for up to
//! [`INLINE_POINTS`] of each, so building allocates nothing on the hot path.

use smallvec::SmallVec;

use aqueduct_components::capture::OperationKind;
use aqueduct_profile::replay::Operation;

use super::operations::{self, Immediate, Submitter};
use super::replay_records as replay;
use super::{Batch, HostCallResult, Queue, RawDispatch};
use crate::command_buffer::{BindingTable, CommandBuffer};
use crate::dispatch::Dispatch;
use crate::error::EngineResult;
use crate::executable::Kernel;
use crate::memory::pool::Pool;
use crate::memory::{Binding, Buffer};
use crate::semaphore::SemaphorePoint;

/// A place in one queue's submission order, which `submit()` on a queue returns (wgpu's
/// `SubmissionIndex`): [`Queue::wait_for`] waits until the submission, and everything submitted
/// to the queue before it, has finished. Comparable: a later submission's is greater.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Submitted {
    pub(crate) device: u64,
    pub(crate) queue: u16,
    /// The queue's staged-row count when the submission returned: its row and every earlier
    /// one are below it (a concurrent submission through another handle may be too, which
    /// only makes a wait for this one wait for that one as well).
    pub(crate) rows: u64,
}

/// What `submit()` on a queue returns for an operation's output: the [`Submitted`] token for an
/// operation that returns nothing, or the operation's own result (`alloca`'s buffer).
pub trait SubmitOutput {
    /// The returned value.
    type Queued;
    /// Pairs the output with the submission's token.
    fn queued(self, submitted: Submitted) -> Self::Queued;
}

impl SubmitOutput for () {
    type Queued = Submitted;
    fn queued(self, submitted: Submitted) -> Submitted {
        submitted
    }
}

impl SubmitOutput for Buffer {
    type Queued = Buffer;
    fn queued(self, _: Submitted) -> Buffer {
        self
    }
}

/// Waits, and signals, an operation holds without allocating.
pub const INLINE_POINTS: usize = 4;

pub(crate) type Points<'a> = SmallVec<[SemaphorePoint<'a>; INLINE_POINTS]>;

/// One queue operation being built: add waits and signals, then `submit()`. Nothing happens
/// until then; a dropped builder submits nothing. `T` is where it goes: a [`Queue`] (published at
/// once) or a [`Batch`] (staged until the batch flushes).
#[must_use = "nothing is submitted until `.submit()`"]
pub struct Submission<'a, T, O> {
    target: T,
    operation: O,
    waits: Points<'a>,
    signals: Points<'a>,
}

impl<'a, T, O> Submission<'a, T, O> {
    // The builder steps are forced inline: out of line, each step moved the whole builder (two
    // inline point lists) through `memcpy`, about 30 instructions an operation in a batch.
    #[inline(always)]
    pub(crate) fn new(target: T, operation: O) -> Self {
        Self { target, operation, waits: Points::new(), signals: Points::new() }
    }

    pub(crate) fn operation_mut(&mut self) -> &mut O {
        &mut self.operation
    }

    pub(crate) fn into_parts(self) -> (T, O, Points<'a>, Points<'a>) {
        (self.target, self.operation, self.waits, self.signals)
    }

    /// Runs once `point` is reached (and earlier work on the queue is done).
    #[inline(always)]
    pub fn wait(mut self, point: SemaphorePoint<'a>) -> Self {
        self.waits.push(point);
        self
    }

    /// Runs once every point of `points` is reached: for code that builds its lists itself.
    #[inline(always)]
    pub fn waits(mut self, points: &[SemaphorePoint<'a>]) -> Self {
        // Point by point: for the few points an operation names, a push is a fraction of
        // `SmallVec`'s general slice insertion (about 75 instructions a call).
        points.iter().for_each(|point| self.waits.push(*point));
        self
    }

    /// Raises `point`'s semaphore to its value when the operation completes.
    #[inline(always)]
    pub fn signal(mut self, point: SemaphorePoint<'a>) -> Self {
        self.signals.push(point);
        self
    }

    /// Raises every point of `points` when the operation completes.
    #[inline(always)]
    pub fn signals(mut self, points: &[SemaphorePoint<'a>]) -> Self {
        points.iter().for_each(|point| self.signals.push(*point));
        self
    }
}

/// Declares one operation's argument struct and its builder method on [`Queue`]: the part every
/// operation shares.
macro_rules! operation {
    (
        $(#[$doc:meta])* $method:ident($($arg:ident: $ty:ty),*)
        with { $($option:ident: $oty:ty = $default:expr),* } as $name:ident
    ) => {
        #[doc = concat!("The arguments of [`Queue::", stringify!($method), "`].")]
        pub struct $name<'a> {
            $(pub(crate) $arg: $ty,)*
            $(pub(crate) $option: $oty,)*
            _borrow: core::marker::PhantomData<&'a ()>,
        }

        impl Queue {
            $(#[$doc])*
            #[inline(always)]
            pub fn $method<'a>(&'a self, $($arg: $ty),*) -> Submission<'a, &'a Queue, $name<'a>> {
                Submission::new(self, $name { $($arg,)* $($option: $default,)* _borrow: core::marker::PhantomData })
            }
        }
    };
}

/// Runs `$body` (an operation on `$queue`); under a replay capture, performs and records it
/// through [`ReplayCapture::operation`](crate::replay_capture::ReplayCapture::operation), described by
/// the closure.
macro_rules! captured {
    ($queue:expr, $waits:expr, $signals:expr, $body:expr, $describe:expr) => {{
        match $queue.device.replay.clone().filter(|replay| replay.is_open()) {
            None => $body,
            Some(replay) => {
                let queue = $queue.replay_id();
                replay.operation(queue, $waits, $signals, || $body, $describe)
            }
        }
    }};
}
pub(crate) use captured;

/// Declares the operations a queue and a batch both offer: the struct and queue method
/// ([`operation!`]), the batch method, and how each submits. One list, so the queue and the batch
/// can never offer different operations.
macro_rules! operations {
    ($(
        $(#[$doc:meta])*
        $method:ident($($arg:ident: $ty:ty),*) $(with { $($option:ident: $oty:ty = $default:expr),* })?
            -> $output:ty as $name:ident of $kind:ident
        => |$to:ident, $kind_arg:ident, $waits:ident, $signals:ident| $body:expr;
        record |$capture:pat_param, $out:pat_param| $describe:expr;
    )*) => {
        $(
            operation!(
                $(#[$doc])* $method($($arg: $ty),*) with { $($($option: $oty = $default),*)? } as $name
            );

            impl<'a> Submission<'a, &'a Queue, $name<'a>> {
                /// Validates and publishes the operation; a refused one changes nothing. Returns
                /// its place in the queue's order, which [`Queue::wait_for`] waits on.
                pub fn submit(self) -> EngineResult<<$output as SubmitOutput>::Queued> {
                    let $name { $($arg,)* $($($option,)*)? .. } = self.operation;
                    let queue = self.target;
                    let ($to, $waits, $signals) = (&mut Immediate(queue), &self.waits[..], &self.signals[..]);
                    let $kind_arg = OperationKind::$kind;
                    captured!(Submitter::queue($to), $waits, $signals, $body, |$capture, $out| $describe)
                        .map(|output| output.queued(queue.submitted()))
                }
            }

            impl<'a, 'q> Submission<'a, &'a mut Batch<'q>, $name<'a>> {
                /// Validates the operation and stages it in the batch, which publishes it at its
                /// flush; a refused one stages nothing.
                pub fn submit(self) -> EngineResult<$output> {
                    let $name { $($arg,)* $($($option,)*)? .. } = self.operation;
                    let ($to, $waits, $signals) = (self.target, &self.waits[..], &self.signals[..]);
                    let $kind_arg = OperationKind::$kind;
                    captured!(Submitter::queue($to), $waits, $signals, $body, |$capture, $out| $describe)
                }
            }
        )*

        /// The kinds the list above declares, in its order.
        #[cfg(test)]
        const QUEUE_AND_BATCH_KINDS: &[OperationKind] = &[$(OperationKind::$kind),*];

        impl<'q> Batch<'q> {
            $(
                #[doc = concat!("Stages [`Queue::", stringify!($method), "`] in the batch.")]
                #[inline(always)]
                pub fn $method<'a>(&'a mut self, $($arg: $ty),*) -> Submission<'a, &'a mut Batch<'q>, $name<'a>> {
                    Submission::new(
                        self,
                        $name { $($arg,)* $($($option: $default,)*)? _borrow: core::marker::PhantomData },
                    )
                }
            )*
        }
    };
}

operations! {
    /// Orders nothing but the queue: signals once the waits are met and earlier work is done.
    barrier() -> () as BarrierOp of Barrier
        => |to, kind, waits, signals| operations::barrier(to, kind, waits, signals);
        record |_, _| Operation::Barrier;

    /// Fills `target` with a repeated `pattern` of 1, 2, 4 or 8 bytes.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use aqueduct_engine::{Engine, MemoryKind};
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
    fill(target: Binding<'a>, pattern: &'a [u8]) -> () as FillOp of Fill
        => |to, kind, waits, signals| operations::fill(to, kind, target, pattern, waits, signals);
        record |_, _| Operation::Fill { target: target.replay_range(), pattern: pattern.to_vec() };

    /// Copies `source` to `target`; the ranges must have equal lengths and must not overlap.
    copy(source: Binding<'a>, target: Binding<'a>) -> () as CopyOp of Copy
        => |to, kind, waits, signals| operations::copy(to, kind, source, target, waits, signals);
        record |_, _| Operation::Copy { source: source.replay_range(), target: target.replay_range() };

    /// Writes `data` into `target` at `offset` when the queue reaches it. Up to
    /// [`UPDATE_INLINE_MAX_BYTES`](aqueduct_builtins::UPDATE_INLINE_MAX_BYTES) travel inside the
    /// kernargs; larger updates (up to [`MAX_UPDATE_BYTES`](crate::MAX_UPDATE_BYTES)) are staged
    /// in the kernarg ring and copied.
    update(target: &'a Buffer, offset: u64, data: &'a [u8]) -> () as UpdateOp of Update
        => |to, kind, waits, signals| operations::update(to, kind, target, offset, data, waits, signals);
        record |_, _| Operation::Update { buffer: target.replay_id(), offset, data: data.to_vec() };

    /// Dispatches `kernel` with HAL-layout kernargs (bindings, then constants).
    dispatch(kernel: &'a Kernel, dispatch: &'a Dispatch<'a>) -> () as DispatchOp of Dispatch
        => |to, kind, waits, signals| operations::dispatch(to, kind, kernel, dispatch, waits, signals);
        record |_, _| replay::describe_dispatch(kernel, dispatch);

    /// Dispatches `kernel` with caller-built kernarg bytes, at least the explicit arguments and
    /// at most the kernel's kernarg segment (the rest is zeroed).
    dispatch_raw(kernel: &'a Kernel, dispatch: &'a RawDispatch<'a>) -> () as RawDispatchOp of RawDispatch
        => |to, kind, waits, signals| operations::dispatch_raw(to, kind, kernel, dispatch, waits, signals);
        record |capture, _| replay::describe_raw_dispatch(capture, kernel, dispatch);

    /// Runs a finished command buffer after the waits, raising the signals once all of it is
    /// done. Dynamic bindings resolve through `table`. Returns once the first segment is
    /// published (or parked behind earlier work); larger programs and conditional branches
    /// continue from the queue's completion thread.
    ///
    /// Where its blocks become packets is the command buffer's choice
    /// ([`CommandBuffer::set_processing`]) unless [`Submission::processing`] overrides it.
    execute(command_buffer: &'a CommandBuffer, table: &'a BindingTable)
        with { processing: Option<crate::BlockProcessing> = None } -> () as ExecuteOp of Execute
        => |to, kind, waits, signals| super::execute::execute(to, kind, command_buffer, table, processing, waits, signals);
        record |_, _| replay::describe_execute(command_buffer, table);
}

impl<'a, T> Submission<'a, T, ExecuteOp<'a>> {
    /// Where this execution's blocks become packets, whatever the command buffer's own choice:
    /// [`BlockProcessing::Host`](crate::BlockProcessing::Host) or `Device` forces either (a
    /// program the device cannot take is then refused with a typed error), `Auto` asks the
    /// engine's model.
    pub fn processing(mut self, processing: crate::BlockProcessing) -> Self {
        self.operation.processing = Some(processing);
        self
    }
}

/// The operations only a queue offers (they hold the queue's own threads and timelines).
macro_rules! queue_operations {
    ($(
        $(#[$doc:meta])*
        $method:ident($($arg:ident: $ty:ty),*) -> $output:ty as $name:ident of $kind:ident
        => |$queue:ident, $kind_arg:ident, $waits:ident, $signals:ident| $body:expr;
        record |$capture:pat_param, $out:pat_param| $describe:expr;
    )*) => {
        $(
            operation!($(#[$doc])* $method($($arg: $ty),*) with {} as $name);

            impl<'a> Submission<'a, &'a Queue, $name<'a>> {
                /// Validates and submits the operation; a refused one changes nothing.
                pub fn submit(self) -> EngineResult<<$output as SubmitOutput>::Queued> {
                    let $name { $($arg,)* .. } = self.operation;
                    let ($queue, $waits, $signals) = (self.target, &self.waits[..], &self.signals[..]);
                    let $kind_arg = OperationKind::$kind;
                    captured!($queue, $waits, $signals, $body, |$capture, $out| $describe)
                        .map(|output| output.queued($queue.submitted()))
                }
            }
        )*

        /// The kinds the list above declares, in its order.
        #[cfg(test)]
        const QUEUE_ONLY_KINDS: &[OperationKind] = &[$(OperationKind::$kind),*];
    };
}

queue_operations! {
    /// Takes `size` bytes from `pool` in queue order and returns the buffer at once. Work may use
    /// the memory once it is ordered after the signals (or after this call, on this queue). With
    /// no waits or signals, and memory that needs no wait, nothing is submitted at all.
    alloca(pool: &'a Pool, size: u64) -> Buffer as AllocaOp of Alloca
        => |queue, kind, waits, signals| queue.submit_alloca(kind, pool, size, waits, signals);
        record |capture, buffer| replay::describe_alloca(capture, pool, size, buffer);

    /// Returns an alloca's buffer to its pool once the waits are met and earlier work on this
    /// queue is done; the waits must cover every use on other queues. Later work on this queue
    /// may reuse the memory at once; other queues once this dealloca retires (or behind a wait
    /// on it). The buffer handle refuses every use from now on (`BufferDeallocated`).
    dealloca(buffer: &'a Buffer) -> () as DeallocaOp of Dealloca
        => |queue, kind, waits, signals| queue.submit_dealloca(kind, buffer, waits, signals);
        record |_, _| Operation::Dealloca { buffer: buffer.replay_id() };

    /// Reads `target.length` bytes of `file` at `offset` into `target`, in queue order. Memory
    /// the host cannot reach streams through a 4 MiB (`STAGING_BYTES`) staging
    /// buffer. A range past the end of the file is refused now; a short read or an I/O error
    /// later fails the signals.
    read_file(file: &'a std::fs::File, offset: u64, target: Binding<'a>) -> () as ReadFileOp of ReadFile
        => |queue, kind, waits, signals| queue.submit_read_file(kind, file, offset, target, waits, signals);
        record |_, _| Operation::ReadFile { target: target.replay_range(), file_offset: offset };

    /// Writes `source` into `file` at `offset`, in queue order (as [`Queue::read_file`]).
    write_file(source: Binding<'a>, file: &'a std::fs::File, offset: u64) -> () as WriteFileOp of WriteFile
        => |queue, kind, waits, signals| queue.submit_write_file(kind, source, file, offset, waits, signals);
        record |_, _| Operation::WriteFile { source: source.replay_range(), file_offset: offset };
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
        let queue = self.target;
        let call = Box::new(self.operation.call);
        captured!(
            queue,
            &self.waits,
            &self.signals,
            queue.submit_host_call(OperationKind::HostCall, call, &self.waits, &self.signals),
            |_, _| { Operation::HostCall }
        )
        .map(|()| queue.submitted())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kind of operation is declared by one entry of the operation lists (or, for a host
    /// call, by its hand-written submission), so every row, profile and capture names it alike.
    #[test]
    fn the_operation_lists_declare_every_kind_once() {
        let mut declared: Vec<OperationKind> = QUEUE_AND_BATCH_KINDS.iter().chain(QUEUE_ONLY_KINDS).copied().collect();
        declared.push(OperationKind::HostCall);
        declared.sort();
        let mut all = OperationKind::ALL.to_vec();
        all.sort();
        assert_eq!(declared, all);
    }
}
