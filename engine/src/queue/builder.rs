//! The submission builder: one queue operation, its waits and signals gathered with defaults,
//! then [`Submission::submit`]. `queue.fill(range, &pattern).wait(a.at(1)).signal(b.at(2))
//! .submit()?` reads as what it does, and an operation with no waits or signals needs neither.
//!
//! The same builder serves a [`Queue`] (submit publishes at once) and a [`Batch`] (submit enqueues
//! into the batch, which publishes at its flush). The points live inline for up to
//! [`INLINE_POINTS`] of each, so building allocates nothing on the hot path.

use std::sync::atomic::Ordering;

use smallvec::SmallVec;

use aqueduct_profile::replay::Operation;
use aqueduct_vocabulary::OperationKind;

use super::operations::{Immediate, Submitter};
use super::pass_driver::PassDriver;
use super::{Batch, Queue};
use crate::error::EngineResult;
use crate::memory::Buffer;
use crate::replay_capture::ReplayCapture;
use crate::semaphore::SemaphorePoint;

/// A place in one queue's submission order, which `submit()` on a queue returns (wgpu's
/// `SubmissionIndex`): [`Queue::wait_for`] waits until the submission, and everything submitted
/// to the queue before it, has finished. Comparable: a later submission's is greater.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Submitted {
    pub(crate) device: u64,
    pub(crate) queue: u16,
    /// The queue's enqueued-row count when the submission returned: its row and every earlier
    /// one are below it (a concurrent submission through another handle may be too, which
    /// only makes a wait for this one wait for that one as well).
    pub(crate) rows: u64,
}

impl Submitted {
    /// The token of what was submitted to `queue` so far.
    #[inline]
    pub(crate) fn now(queue: &PassDriver) -> Self {
        Submitted {
            device: queue.device.id,
            queue: queue.index,
            rows: queue.endpoint.enqueued_rows.load(Ordering::Relaxed),
        }
    }
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
/// once) or a [`Batch`] (enqueued until the batch flushes).
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

/// One operation's arguments, as the queue and batch builder methods gather them
/// (`queue.fill(..)` makes a [`FillOp`](crate::ops::FillOp)): what kind of operation it is, how
/// it submits, and what a replay capture records of it. The engine implements it for each
/// operation in `queue/ops.rs`; [`Submission::submit`] is written once over it.
pub trait Submittable<'a>: private::Sealed {
    /// What the operation returns besides its place in the queue (`alloca`'s buffer).
    type Output: SubmitOutput;

    /// The kind its rows, profile records and replay records name.
    #[doc(hidden)]
    const KIND: OperationKind;

    /// Validates the operation and enqueues it through `to` (the queue at once, or a batch); a
    /// refused one enqueues nothing.
    #[doc(hidden)]
    #[allow(private_bounds)]
    fn enqueue(
        &self,
        to: &mut impl Submitter,
        waits: &[SemaphorePoint<'a>],
        signals: &[SemaphorePoint<'a>],
    ) -> EngineResult<Self::Output>;

    /// The operation as a replay capture names it, once it was enqueued with `output`.
    #[doc(hidden)]
    #[allow(private_interfaces)]
    fn describe(&self, capture: &ReplayCapture, output: &Self::Output) -> Operation;
}

pub(crate) mod private {
    /// Only the engine's operations are [`Submittable`](super::Submittable).
    pub trait Sealed {}
}

impl<'a, O: Submittable<'a>> Submission<'a, &'a Queue, O> {
    /// Validates and publishes the operation; a refused one changes nothing. Returns its place
    /// in the queue's order, which [`Queue::wait_for`] waits on (or the operation's own result:
    /// `alloca`'s buffer).
    pub fn submit(self) -> EngineResult<<O::Output as SubmitOutput>::Queued> {
        let (queue, operation, waits, signals) =
            (&*self.target.driver, &self.operation, &self.waits[..], &self.signals[..]);
        let to = &mut Immediate(queue);
        captured!(queue, waits, signals, operation.enqueue(to, waits, signals), |capture, output| operation
            .describe(capture, output))
        .map(|output| output.queued(Submitted::now(queue)))
    }
}

impl<'a, 'q, O: Submittable<'a>> Submission<'a, &'a mut Batch<'q>, O> {
    /// Validates the operation and enqueues it in the batch, which publishes it at its flush; a
    /// refused one enqueues nothing.
    pub fn submit(self) -> EngineResult<O::Output> {
        let (batch, operation, waits, signals) = (self.target, &self.operation, &self.waits[..], &self.signals[..]);
        captured!(
            Submitter::driver(batch),
            waits,
            signals,
            operation.enqueue(batch, waits, signals),
            |capture, output| { operation.describe(capture, output) }
        )
    }
}
