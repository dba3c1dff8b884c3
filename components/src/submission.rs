//! Pending submissions as rows of a queue's column table ([`SubmissionRows`]).
//!
//! A row is a sequence number: the queue's `n`-th enqueued submission is row `n`, and its fields
//! sit at `n % capacity` of one dense array per field the stages read (operation, payload, wait
//! and signal ranges, kernarg recipe, admission's verdict and reservation). Rows are enqueued at
//! the back and leave from the front, so the pending rows are the range `front..enqueued` and a
//! stage is one loop over a range of it, with no per-row lookup. Variable-length parts (waits,
//! signals, kernarg bytes) live in per-queue [`Arena`]s that rows reference by [`Span`]; each
//! arena is given back from the front as rows leave.
//!
//! Nothing here allocates in a steady stream: the columns grow (doubling) only when more rows
//! are pending than ever before, and the arenas keep their capacity.
//!
//! **Contract.** `SubmissionRows` lives in the queue's `QueueState`, so only the holder of the queue's
//! lock reads or writes it. A `RowWriter` borrows one row while it is enqueued. A row's spans stay valid
//! until the row leaves the front and `release_spans` gives its arenas back; a row refused or failed
//! is the front row, removed with its spans.

use aqueduct_abi::ImplicitKernargs;

use crate::dependency::{SignalOp, WaitOp};
use crate::program::{LegPlan, ProgramRun};
use aqueduct_vocabulary::OperationKind;

/// The one kernel dispatch a submission carries, without its kernarg address: the packet body
/// prebuilt at enqueueing, less the kernarg address and the completion signal.
pub use aqueduct_abi::DispatchTemplate;

/// The enqueued payload: what the stages emit after the device-side waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Payload {
    /// Only ordering and signals: one BARRIER_AND without dependencies carries the epoch.
    #[default]
    Barrier,
    Dispatch(DispatchTemplate),
    /// A leg of a command buffer's execution (the row's run in the `program` column).
    Execute,
}

/// The kinds of [`Payload`]. Publication writes a run of rows of one kind by the loop compiled
/// for it, whose const parameter is a number ([`Payload::kind`]): an enum cannot be one on
/// stable Rust, so the numbers are these discriminants.
#[repr(usize)]
enum PayloadKind {
    Barrier,
    Dispatch,
    Execute,
}

impl Payload {
    pub const BARRIER: usize = PayloadKind::Barrier as usize;
    pub const DISPATCH: usize = PayloadKind::Dispatch as usize;
    pub const EXECUTE: usize = PayloadKind::Execute as usize;

    /// The payload's kind: [`Self::BARRIER`], [`Self::DISPATCH`] or [`Self::EXECUTE`].
    #[inline]
    pub fn kind(&self) -> usize {
        (match self {
            Payload::Barrier => PayloadKind::Barrier,
            Payload::Dispatch(_) => PayloadKind::Dispatch,
            Payload::Execute => PayloadKind::Execute,
        }) as usize
    }
}

/// A range of an [`Arena`]: `start` is a position (positions grow forever), `len` items.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    pub start: u64,
    pub len: u32,
}

impl Span {
    #[inline]
    pub fn end(self) -> u64 {
        self.start + u64::from(self.len)
    }

    #[inline]
    pub fn is_empty(self) -> bool {
        self.len == 0
    }
}

/// A first-in, first-out arena: items are appended at the back and given back from the front,
/// in the order they were appended, and addressed by position. Spans stay contiguous (no
/// wrapping); the dead front is dropped when everything is given back (the common case: an
/// immediate submission, a flushed batch) or moved out once it outweighs what lives.
#[derive(Debug)]
pub struct Arena<T> {
    items: Vec<T>,
    /// Position of `items[0]`.
    base: u64,
    /// Everything before this position was given back.
    released: u64,
}

impl<T: Copy> Arena<T> {
    pub fn with_capacity(capacity: usize) -> Self {
        Self { items: Vec::with_capacity(capacity), base: 0, released: 0 }
    }

    /// The position the next item gets.
    #[inline]
    pub fn end(&self) -> u64 {
        self.base + self.items.len() as u64
    }

    #[inline]
    pub fn push(&mut self, item: T) {
        self.items.push(item);
    }

    /// The span from `start` (a position this arena returned from [`Self::end`]) to the end.
    #[inline]
    pub fn span_from(&self, start: u64) -> Span {
        Span { start, len: (self.end() - start) as u32 }
    }

    /// Appends `items` and returns their span.
    #[inline]
    pub fn extend(&mut self, items: &[T]) -> Span {
        let start = self.end();
        if let [item] = items {
            // The common case (a submission's one signal): `extend_from_slice` calls `memcpy`,
            // whose dispatch costs more than the copy.
            self.items.push(*item);
        } else {
            self.items.extend_from_slice(items);
        }
        self.span_from(start)
    }

    #[inline]
    fn range(&self, span: Span) -> core::ops::Range<usize> {
        let start = (span.start - self.base) as usize;
        start..start + span.len as usize
    }

    /// The items of a live span.
    #[inline]
    pub fn get(&self, span: Span) -> &[T] {
        &self.items[self.range(span)]
    }

    /// Drops everything from `position` on (the items appended since [`Self::end`] said it).
    #[inline]
    pub fn truncate(&mut self, position: u64) {
        self.items.truncate((position - self.base) as usize);
    }

    /// The items from `position` (one [`Self::end`] returned) to the end.
    #[inline]
    pub fn tail(&self, position: u64) -> &[T] {
        &self.items[(position - self.base) as usize..]
    }

    #[inline]
    pub fn tail_mut(&mut self, position: u64) -> &mut [T] {
        let start = (position - self.base) as usize;
        &mut self.items[start..]
    }

    /// Gives back everything before `position`.
    #[inline]
    pub fn release_before(&mut self, position: u64) {
        self.released = self.released.max(position);
        let dead = (self.released - self.base) as usize;
        if dead == self.items.len() {
            self.items.clear();
            self.base = self.released;
        } else if dead > 64 && dead * 2 > self.items.len() {
            // Amortised: what moves is less than what was given back since the last move.
            self.items.drain(..dead);
            self.base = self.released;
        }
    }

    /// Gives back everything.
    #[inline]
    pub fn clear(&mut self) {
        self.released = self.end();
        self.base = self.released;
        self.items.clear();
    }

    /// Items alive (appended and not given back).
    pub fn live(&self) -> usize {
        (self.end() - self.released) as usize
    }
}

impl Arena<u8> {
    /// Appends zero bytes until the next position is a multiple of `alignment` (a power of two).
    #[inline]
    pub fn pad_to(&mut self, alignment: u64) {
        let pad = self.end().wrapping_neg() & (alignment - 1);
        self.items.resize(self.items.len() + pad as usize, 0);
    }

    /// The live bytes from `start` to `end` (positions), to write in place before they are copied.
    #[inline]
    pub fn bytes_mut(&mut self, start: u64, end: u64) -> &mut [u8] {
        &mut self.items[(start - self.base) as usize..(end - self.base) as usize]
    }

    /// The live bytes from `start` to `end` (positions).
    #[inline]
    pub fn bytes(&self, start: u64, end: u64) -> &[u8] {
        &self.items[(start - self.base) as usize..(end - self.base) as usize]
    }

    /// Appends `len` zero bytes and returns them with their span.
    #[inline]
    pub fn zeroed(&mut self, len: usize) -> (Span, &mut [u8]) {
        let start = self.end();
        self.items.resize(self.items.len() + len, 0);
        let span = self.span_from(start);
        let range = self.range(span);
        (span, &mut self.items[range])
    }
}

/// Where a row's kernarg segment starts in the kernarg arena and in the kernarg ring: a multiple
/// of this many bytes in both, with its update bytes at the same offset from it in both
/// ([`KernargRecipe::update_offset`]). So consecutive rows lie in the ring as they lie in the
/// arena, and patching copies a range of rows with one `memcpy` (two where the ring wraps).
pub const KERNARG_GRANULE: u64 = 64;

/// How a row's kernarg segment gets to the device: enqueueing serialised it (bindings, constants,
/// implicit arguments, in the kernel's layout, or the caller's raw bytes) into the queue's kernarg
/// arena, laid out as it will lie in the ring, so patching is a copy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernargRecipe {
    /// The segment's bytes (`len` is the kernarg segment size), then the update bytes.
    pub segment: Span,
    /// Extra bytes placed in the kernarg ring after the segment (an update's payload), whose
    /// device address is written as a u64 at `update_pointer_offset` inside the segment.
    pub update_bytes: Span,
    pub update_pointer_offset: u32,
    /// The segment's alignment in the ring (at least [`KERNARG_GRANULE`]).
    pub alignment: u32,
}

impl KernargRecipe {
    /// Whether patching writes anything (a segment or update bytes).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.segment.is_empty() && self.update_bytes.is_empty()
    }

    /// Kernarg-ring bytes the row needs, before alignment padding.
    #[inline]
    pub fn ring_bytes(&self) -> u64 {
        let update = if self.update_bytes.is_empty() { 0 } else { u64::from(self.update_bytes.len) + 16 };
        u64::from(self.segment.len) + update
    }

    /// Offset of the update bytes from the segment's start.
    #[inline]
    pub fn update_offset(&self) -> u64 {
        u64::from(self.segment.len).next_multiple_of(16)
    }
}

/// Admission's verdict on a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Verdict {
    /// Not yet decided.
    #[default]
    Pending,
    /// Every wait is resolved; the reservation below is held.
    Admitted,
    /// A wait cannot be resolved on the device yet (wait-before-signal, host-signalled): the
    /// submission must be parked and admitted again when a semaphore advances.
    Defer,
    /// Resources are short (AQL slots, kernarg space, epoch rows): retry after reclaim.
    Backpressure,
    /// A wait's semaphore failed; the index is into the failure log.
    DependencyFailed(u32),
    /// The queue itself failed.
    QueueFailed(u32),
    /// More packets or kernarg bytes than the queue can ever hold at once.
    TooLarge,
    /// A command-buffer execution processed more blocks than its limit (a conditional loop that
    /// never exits).
    BlockLimit,
    /// The engine's own state is inconsistent; the submission fails instead of running
    /// something other than what was asked.
    Fault(SubmissionFault),
}

/// A submission the stages cannot carry out as asked, because something the engine checked
/// earlier no longer holds (an internal invariant, not bad input). It fails the submission and
/// its signals; it never turns into a barrier that passes, a null pointer or kernel object 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubmissionFault {
    /// A program payload without its finished image.
    NoProgramImage,
    /// A program payload whose cursor is already past its return.
    ProgramFinished,
    /// The program has no block with this ordinal, or the block cannot be read.
    MissingBlock { block: u32 },
    /// A block's closing branch could not be read or evaluated.
    UnreadableBranch { block: u32 },
    /// A command's binding source resolves to no address with this execution's table.
    UnresolvedSource { block: u32, source: u32 },
    /// A command's kernarg data (template, constants) is not in the image.
    MissingKernargData { block: u32, command: u32 },
    /// A fill, copy, update or marker that the device library cannot plan.
    TransferNotPlanned { block: u32, command: u32 },
    /// The agent's device library has no kernel for this builtin (by discriminant).
    MissingBuiltin { builtin: u8 },
    /// A device wait's producer queue has no endpoint in the directory when its barrier is
    /// named (wait resolution found it, and entries are never removed, so this is a broken
    /// invariant, reported instead of publishing a barrier that waits on nothing).
    UnknownProducerQueue { queue: u16 },
    /// An execution processed on the device was stopped by the block processor (its status
    /// record: an `aqueduct_abi::device_program::ProcessorFailure` code, the block, the command's
    /// recording index or `u32::MAX` for the block itself, and a detail).
    DeviceProcessor { code: u32, block: u32, command: u32, detail: u32 },
    /// An execution chosen for the device has no device program or no target queue to run on.
    NoDeviceProgram,
}

impl core::fmt::Display for SubmissionFault {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::NoProgramImage => f.write_str("the command buffer's program image is missing"),
            Self::ProgramFinished => f.write_str("the command-buffer execution already returned"),
            Self::MissingBlock { block } => write!(f, "program block {block} does not exist or cannot be read"),
            Self::UnreadableBranch { block } => {
                write!(f, "the branch closing program block {block} cannot be evaluated")
            }
            Self::UnresolvedSource { block, source } => {
                write!(
                    f,
                    "binding source {source} of program block {block} resolves to no address with this binding table"
                )
            }
            Self::MissingKernargData { block, command } => {
                write!(f, "command {command} of program block {block} has no kernarg data")
            }
            Self::UnknownProducerQueue { queue } => {
                write!(f, "queue {queue}, which produces a waited-on value, is not in the queue directory")
            }
            Self::TransferNotPlanned { block, command } => {
                write!(f, "the device library cannot plan command {command} of program block {block}")
            }
            Self::MissingBuiltin { builtin } => write!(f, "the device library has no kernel for builtin {builtin}"),
            Self::DeviceProcessor { code, block, command, detail } => {
                use aqueduct_abi::device_program::ProcessorFailure;
                let what = match ProcessorFailure::from_code(code) {
                    Some(ProcessorFailure::BadImage) => format!("the device program is malformed ({detail:#x})"),
                    Some(ProcessorFailure::MissingBlock) => {
                        format!("it names a block past the program's {detail} blocks")
                    }
                    Some(ProcessorFailure::UnresolvedBinding) => {
                        format!("binding-table slot {detail} is past this execution's table")
                    }
                    Some(ProcessorFailure::BlockLimit) => {
                        "the execution ran out of its block budget (a loop that never exits?)".to_string()
                    }
                    Some(ProcessorFailure::TooLarge) => {
                        format!("its {detail} packets do not fit the device queue's ring or kernarg area")
                    }
                    Some(ProcessorFailure::RingFull) => {
                        format!("the device queue's ring stayed full ({detail} packets)")
                    }
                    None => format!("unknown status {code} ({detail})"),
                };
                if command == u32::MAX {
                    write!(f, "the device block processor stopped at program block {block}: {what}")
                } else {
                    write!(
                        f,
                        "the device block processor stopped at command {command} of program block {block}: {what}"
                    )
                }
            }
            Self::NoDeviceProgram => f.write_str("the execution was chosen for the device, which cannot run it"),
        }
    }
}

/// What admission reserved for a row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reservation {
    /// AQL packets reserved: the device-wait barriers' (`wait_packets`), then the payload's.
    pub packets: u64,
    pub wait_packets: u64,
    /// First reserved AQL packet id.
    pub first_packet: u64,
    /// Device address of the kernarg segment.
    pub kernarg_address: u64,
    /// Kernarg-ring position after this row (what reclaim frees up to).
    pub kernarg_end: u64,
    /// The epoch this row retires.
    pub epoch: u64,
    /// A wait barrier that could not be named at reservation: publication runs nothing of the
    /// payload and the epoch fails.
    pub wait_fault: Option<SubmissionFault>,
}

/// One column of a table: a power-of-two number of slots, indexed modulo its length, so an index
/// needs a mask, not a bounds check (each stage reads several columns per row).
#[derive(Debug)]
pub struct Column<T> {
    slots: Box<[T]>,
    /// `slots.len() - 1`.
    mask: usize,
}

impl<T: Default> Column<T> {
    /// `capacity` default slots; `capacity` is a power of two.
    pub fn with_capacity(capacity: usize) -> Self {
        assert!(capacity.is_power_of_two(), "a column's length is a power of two");
        Self { slots: (0..capacity).map(|_| T::default()).collect(), mask: capacity - 1 }
    }
}

impl<T> core::ops::Index<usize> for Column<T> {
    type Output = T;

    #[inline(always)]
    fn index(&self, slot: usize) -> &T {
        // SAFETY: `slot & mask` is at most `mask`, which is `slots.len() - 1` (set together by
        // `with_capacity`, the only constructor; the fields are private).
        unsafe { self.slots.get_unchecked(slot & self.mask) }
    }
}

impl<T> core::ops::IndexMut<usize> for Column<T> {
    #[inline(always)]
    fn index_mut(&mut self, slot: usize) -> &mut T {
        // SAFETY: as for `index`.
        unsafe { self.slots.get_unchecked_mut(slot & self.mask) }
    }
}

/// Declares a table of columns (one [`Column`] per field), with a constructor and a move of one
/// row from another table (for growth).
macro_rules! columns {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[$field_meta:meta])* pub $field:ident: $ty:ty,)* }) => {
        $(#[$meta])*
        pub struct $name {
            $($(#[$field_meta])* pub $field: Column<$ty>,)*
        }

        impl $name {
            fn with_capacity(capacity: usize) -> Self {
                Self { $($field: Column::with_capacity(capacity),)* }
            }

            fn take_row(&mut self, to: usize, from: &mut Self, at: usize) {
                $(self.$field[to] = core::mem::take(&mut from.$field[at]);)*
            }
        }
    };
}

columns! {
    /// The columns of the pending rows, indexed by [`SubmissionRows::slot`].
    #[derive(Debug)]
    pub struct RowColumns {
        /// The operation as the user called it (for the profile).
        pub operation: OperationKind,
        pub payload: Payload,
        pub waits: Span,
        pub signals: Span,
        pub kernargs: KernargRecipe,
        pub reservation: Reservation,
        /// The row was parked (counted once in the queue's statistics).
        pub parked: bool,
        /// Host clock (ns) when the submitting call entered the engine; 0 when not capturing.
        pub entry_ns: u64,
        /// A command-buffer execution's progress ([`Payload::Execute`] rows only).
        pub program: ProgramRun,
        /// The leg admission planned for a program row.
        pub leg: LegPlan,
    }
}

/// The queue's pending submission rows as a column table, in queue order.
///
/// A pass of the stages starts at the front and admits rows in order until one cannot go;
/// everything behind that row waits with it, so queue order holds.
#[derive(Debug, bevy_ecs::prelude::Resource)]
pub struct SubmissionRows {
    pub columns: RowColumns,
    /// `capacity - 1`; the capacity is a power of two.
    mask: u64,
    /// The oldest pending row.
    pub front: u64,
    /// Rows enqueued so far: the next row's sequence.
    pub enqueued: u64,
    /// The pending rows are parked: a pass stopped on a wait that cannot be resolved on the
    /// device yet, and the completion thread retries them when a semaphore advances. While set,
    /// new submissions queue behind them without running a pass.
    pub parked: bool,
    pub waits: Arena<WaitOp>,
    pub signals: Arena<SignalOp>,
    pub kernarg_bytes: Arena<u8>,
    /// What the current pass did.
    pub pass: PassOutcome,
}

impl SubmissionRows {
    /// A table with room for `capacity` pending rows (rounded up to a power of two) before it grows.
    pub fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.max(2).next_power_of_two();
        Self {
            columns: RowColumns::with_capacity(capacity),
            mask: capacity as u64 - 1,
            front: 0,
            enqueued: 0,
            parked: false,
            waits: Arena::with_capacity(capacity * 2),
            signals: Arena::with_capacity(capacity * 2),
            kernarg_bytes: Arena::with_capacity(capacity * 512),
            pass: PassOutcome::default(),
        }
    }

    /// The column index of row `row`.
    #[inline]
    pub fn slot(&self, row: u64) -> usize {
        (row & self.mask) as usize
    }

    /// The pending rows, oldest first.
    #[inline]
    pub fn pending(&self) -> core::ops::Range<u64> {
        self.front..self.enqueued
    }

    #[inline]
    pub fn pending_len(&self) -> u64 {
        self.enqueued - self.front
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.front == self.enqueued
    }

    /// Appends a row behind the pending ones, its columns reset (but `entry_ns`, which enqueueing
    /// always sets, and `reservation`, which admission writes before anything reads it), and
    /// returns its sequence. The columns double when every slot is pending (the only allocation,
    /// and only past the most rows ever pending at once).
    #[inline]
    pub fn push(&mut self) -> u64 {
        if self.pending_len() > self.mask {
            self.grow();
        }
        let row = self.enqueued;
        self.enqueued += 1;
        let slot = self.slot(row);
        let columns = &mut self.columns;
        columns.operation[slot] = OperationKind::Barrier;
        columns.payload[slot] = Payload::Barrier;
        let (waits, signals, bytes) = (self.waits.end(), self.signals.end(), self.kernarg_bytes.end());
        columns.waits[slot] = Span { start: waits, len: 0 };
        columns.signals[slot] = Span { start: signals, len: 0 };
        columns.kernargs[slot] = KernargRecipe {
            segment: Span { start: bytes, len: 0 },
            update_bytes: Span { start: bytes, len: 0 },
            update_pointer_offset: 0,
            alignment: KERNARG_GRANULE as u32,
        };
        columns.parked[slot] = false;
        row
    }

    /// Out of line, so the common push keeps a small frame.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let capacity = (self.mask as usize + 1) * 2;
        let mut columns = RowColumns::with_capacity(capacity);
        let mask = capacity as u64 - 1;
        for row in self.pending() {
            let from = (row & self.mask) as usize;
            columns.take_row((row & mask) as usize, &mut self.columns, from);
        }
        self.columns = columns;
        self.mask = mask;
    }

    /// Removes the front row (published, failed or refused). Its arena spans are given back by
    /// [`Self::release_spans`], once for every row that left.
    #[inline]
    pub fn pop_front(&mut self) {
        debug_assert!(!self.is_empty());
        let slot = self.slot(self.front);
        if self.columns.payload[slot] == Payload::Execute {
            self.columns.program[slot].clear();
            self.columns.leg[slot].clear();
        }
        self.front += 1;
    }

    /// Gives back the arena spans of every row that left: everything, when no row is pending (an
    /// immediate submission, a flushed batch), or what lies before the front row's spans.
    #[inline]
    pub fn release_spans(&mut self) {
        if self.is_empty() {
            self.waits.clear();
            self.signals.clear();
            self.kernarg_bytes.clear();
        } else {
            self.release_spans_before_front();
        }
    }

    /// [`Self::release_spans`] with rows still pending, out of line: the common case is inline.
    #[inline(never)]
    fn release_spans_before_front(&mut self) {
        let slot = self.slot(self.front);
        let columns = &self.columns;
        self.waits.release_before(columns.waits[slot].start);
        self.signals.release_before(columns.signals[slot].start);
        self.kernarg_bytes.release_before(columns.kernargs[slot].segment.start);
    }

    /// The kind of row `row`'s payload (`Payload::kind`).
    #[inline]
    pub fn payload_kind(&self, row: u64) -> usize {
        self.columns.payload[self.slot(row)].kind()
    }

    /// The signals of row `row`.
    #[inline]
    pub fn row_signals(&self, row: u64) -> &[SignalOp] {
        self.signals.get(self.columns.signals[self.slot(row)])
    }

    /// The waits of row `row`.
    #[inline]
    pub fn row_waits(&self, row: u64) -> &[WaitOp] {
        self.waits.get(self.columns.waits[self.slot(row)])
    }

    /// A writer over the back row, which the caller just [`push`](Self::push)ed.
    #[inline]
    pub fn writer(&mut self, row: u64) -> RowWriter<'_> {
        let slot = self.slot(row);
        RowWriter { rows: self, slot, row }
    }
}

/// Fills the row just enqueued: what the operation is, and its payload and kernargs, serialised
/// once, here.
pub struct RowWriter<'a> {
    rows: &'a mut SubmissionRows,
    slot: usize,
    row: u64,
}

impl RowWriter<'_> {
    /// The row's place in the queue's enqueueing order.
    #[inline]
    pub fn row(&self) -> u64 {
        self.row
    }

    #[inline]
    pub fn set_operation(&mut self, operation: OperationKind) {
        self.rows.columns.operation[self.slot] = operation;
    }

    #[inline]
    pub fn set_entry_ns(&mut self, entry_ns: u64) {
        self.rows.columns.entry_ns[self.slot] = entry_ns;
    }

    /// Appends a wait; waits and signals are written before anything else of the row.
    #[inline]
    pub fn push_wait(&mut self, wait: WaitOp) {
        self.rows.waits.push(wait);
        let span = &mut self.rows.columns.waits[self.slot];
        span.len += 1;
    }

    #[inline]
    pub fn push_signal(&mut self, signal: SignalOp) {
        self.rows.signals.push(signal);
        self.rows.columns.signals[self.slot].len += 1;
    }

    /// A dispatch whose kernarg segment (`size` bytes, `alignment`) follows the HAL layout:
    /// binding pointers, then 32-bit constants, then the implicit block at its offset.
    pub fn hal_dispatch(
        &mut self,
        template: DispatchTemplate,
        size: u32,
        alignment: u32,
        bindings: impl IntoIterator<Item = u64>,
        constants: &[u32],
        implicit: Option<(u32, &ImplicitKernargs)>,
    ) {
        self.rows.columns.payload[self.slot] = Payload::Dispatch(template);
        self.rows.kernarg_bytes.pad_to(KERNARG_GRANULE);
        let (span, segment) = self.rows.kernarg_bytes.zeroed(size as usize);
        aqueduct_abi::write_hal_kernargs(segment, bindings, bytemuck::cast_slice(constants), implicit);
        self.set_segment(span, alignment);
    }

    /// A dispatch with the caller's kernarg bytes, zero-padded to the segment's `size`.
    pub fn raw_dispatch(&mut self, template: DispatchTemplate, bytes: &[u8], size: u32, alignment: u32) {
        self.rows.columns.payload[self.slot] = Payload::Dispatch(template);
        self.rows.kernarg_bytes.pad_to(KERNARG_GRANULE);
        let (span, segment) = self.rows.kernarg_bytes.zeroed((size as usize).max(bytes.len()));
        segment[..bytes.len()].copy_from_slice(bytes);
        self.set_segment(span, alignment);
    }

    fn set_segment(&mut self, segment: Span, alignment: u32) {
        let kernargs = &mut self.rows.columns.kernargs[self.slot];
        kernargs.segment = segment;
        kernargs.update_bytes = Span { start: segment.end(), len: 0 };
        kernargs.alignment = alignment.max(KERNARG_GRANULE as u32);
    }

    /// Bytes placed in the kernarg ring after the segment, whose device address is written at
    /// `pointer_offset` inside it (after [`Self::hal_dispatch`] or [`Self::raw_dispatch`]).
    pub fn place_update_bytes(&mut self, bytes: &[u8], pointer_offset: u32) {
        // At the offset from the segment they will have in the ring.
        self.rows.kernarg_bytes.pad_to(16);
        let span = self.rows.kernarg_bytes.extend(bytes);
        let kernargs = &mut self.rows.columns.kernargs[self.slot];
        kernargs.update_bytes = span;
        kernargs.update_pointer_offset = pointer_offset;
    }

    /// Makes the row a command-buffer execution and returns its run state to fill in.
    pub fn program(&mut self) -> &mut ProgramRun {
        self.rows.columns.payload[self.slot] = Payload::Execute;
        let program = &mut self.rows.columns.program[self.slot];
        program.clear();
        self.rows.columns.leg[self.slot].clear();
        program
    }
}

/// What one pass of the stages did with the pending rows.
#[derive(Debug, Default)]
pub struct PassOutcome {
    /// Rows admitted by this pass: `front..admitted_end` when it began (kernarg patching and
    /// publication walk these).
    pub admitted_from: u64,
    pub admitted_end: u64,
    /// How many of them have kernargs to patch: when none do (a pass of barriers), patching
    /// skips the range.
    pub patches: u64,
    /// The row the pass stopped at, and why.
    pub stop: Option<(u64, Verdict)>,
    /// AQL packets published, and how many of them were device-wait barriers.
    pub packets: u64,
    pub device_waits: u64,
    /// The first submission fault publication hit: that submission's epoch runs as passing
    /// barriers and its signals fail when it retires.
    pub fault: Option<SubmissionFault>,
}

impl PassOutcome {
    pub fn begin(&mut self, front: u64) {
        *self = PassOutcome { admitted_from: front, admitted_end: front, ..PassOutcome::default() };
    }

    /// The admitted rows.
    #[inline]
    pub fn admitted(&self) -> core::ops::Range<u64> {
        self.admitted_from..self.admitted_end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_index_is_its_slot_modulo_the_length() {
        let mut column = Column::<u64>::with_capacity(8);
        for row in 0..8u64 {
            column[row as usize] = row;
        }
        // A row sequence past the length lands on its slot, never outside the column.
        assert_eq!(column[13], 5);
        assert_eq!(column[usize::MAX], 7);
        column[8] = 80;
        assert_eq!(column[0], 80);
    }

    #[test]
    #[should_panic(expected = "power of two")]
    fn a_column_length_must_be_a_power_of_two() {
        let _ = Column::<u8>::with_capacity(6);
    }

    #[test]
    fn rows_keep_their_columns_and_spans_across_growth() {
        let mut rows = SubmissionRows::with_capacity(2);
        for n in 0..37u64 {
            let row = rows.push();
            assert_eq!(row, n);
            let mut writer = rows.writer(row);
            for k in 0..n % 3 {
                writer.push_wait(WaitOp { semaphore: n as u32, value: k });
            }
            writer.push_signal(SignalOp { semaphore: n as u32, value: n + 1 });
            writer.raw_dispatch(DispatchTemplate::default(), &[n as u8; 3], 8, 16);
        }
        for n in 0..37u64 {
            assert_eq!(rows.front, n);
            assert_eq!(rows.row_waits(n).len() as u64, n % 3);
            assert_eq!(rows.row_signals(n), [SignalOp { semaphore: n as u32, value: n + 1 }]);
            let kernargs = rows.columns.kernargs[rows.slot(n)];
            assert_eq!(rows.kernarg_bytes.get(kernargs.segment), [n as u8, n as u8, n as u8, 0, 0, 0, 0, 0]);
            rows.pop_front();
            rows.release_spans();
        }
        assert!(rows.is_empty());
        assert_eq!(rows.kernarg_bytes.live(), 0, "every span given back");
    }

    use proptest::prelude::*;

    /// What a model keeps of a row: its waits, signals and kernarg bytes.
    type Model = (Vec<WaitOp>, Vec<SignalOp>, Vec<u8>);

    proptest! {
        /// Rows pushed, filled and popped in any order (as enqueueing, publication and failure do,
        /// with the arenas given back once per pass) read back exactly what was written, across
        /// growth of the columns and compaction of the arenas.
        #[test]
        fn rows_read_back_what_was_enqueued_whatever_the_order(
            steps in proptest::collection::vec((0u8..3, 0usize..4, 0usize..4, 0usize..80), 1..400),
        ) {
            let mut rows = SubmissionRows::with_capacity(2);
            let mut model = std::collections::VecDeque::<Model>::new();
            for (step, (action, waits, signals, bytes)) in steps.into_iter().enumerate() {
                let step = step as u64;
                match action {
                    // Stage a row.
                    0 | 1 => {
                        let row = rows.push();
                        let mut writer = rows.writer(row);
                        let waits: Vec<_> = (0..waits as u64).map(|k| WaitOp { semaphore: step as u32, value: k }).collect();
                        let signals: Vec<_> = (0..signals as u64).map(|k| SignalOp { semaphore: k as u32, value: step }).collect();
                        waits.iter().for_each(|wait| writer.push_wait(*wait));
                        signals.iter().for_each(|signal| writer.push_signal(*signal));
                        let kernargs: Vec<u8> = (0..bytes).map(|k| (k as u64 ^ step) as u8).collect();
                        if !kernargs.is_empty() {
                            writer.raw_dispatch(DispatchTemplate::default(), &kernargs, bytes as u32, 16);
                        }
                        model.push_back((waits, signals, kernargs));
                    }
                    // A pass: `waits` rows leave the front, then the arenas give back.
                    _ => {
                        for _ in 0..waits.min(model.len()) {
                            rows.pop_front();
                            model.pop_front();
                        }
                        rows.release_spans();
                    }
                }
                prop_assert_eq!(rows.pending_len(), model.len() as u64);
                for (row, (waits, signals, kernargs)) in rows.pending().zip(&model) {
                    prop_assert_eq!(rows.row_waits(row), waits.as_slice());
                    prop_assert_eq!(rows.row_signals(row), signals.as_slice());
                    let recipe = rows.columns.kernargs[rows.slot(row)];
                    prop_assert_eq!(rows.kernarg_bytes.get(recipe.segment), kernargs.as_slice());
                }
            }
        }
    }

    #[test]
    fn an_arena_moves_its_live_tail_only_once_the_dead_front_outweighs_it() {
        let mut arena = Arena::<u64>::with_capacity(4);
        let mut spans = std::collections::VecDeque::new();
        let mut most = 0;
        for n in 0..1000u64 {
            spans.push_back((n, arena.extend(&[n, n + 1])));
            // Ten spans stay live behind the ones given back, so the front is never all dead
            // and the arena must move its live tail to stay bounded.
            if spans.len() > 10 {
                let (_, given) = spans.pop_front().expect("more than ten spans");
                arena.release_before(given.end());
            }
            for (k, span) in &spans {
                assert_eq!(arena.get(*span), [*k, *k + 1], "a live span reads what was appended");
            }
            most = most.max(arena.items.len());
        }
        assert_eq!(arena.live(), 20);
        assert!(most <= 2 * 64 + 20, "the dead front was moved out ({most} items held at most)");
        assert_eq!(arena.end(), 2000, "positions keep growing");
    }
}
