//! The replay capture's recording side, below every object that records into it: the running
//! capture (the stream's places in order, the ids, the bounded record buffer, and the writer
//! thread that streams it into the `.aqreplay` file), its configuration, the ids objects carry,
//! and the names the file gives engine enums (`names.rs`). The replayer is `crate::replay`.
//!
//! The capture starts with the device and ends when the device drops: every host-visible
//! buffer's contents are checksummed when its memory is freed (after its last handle dropped and
//! every submission that could touch it settled), so "the end" of each buffer is exact even for
//! a program that drops its buffers long before its engine. With the capture off, each recorded
//! call pays one load of an `Option` and a branch.
//!
//! **Order.** A record must have its place in the stream before anything it describes can be
//! observed by another thread; otherwise a replay, issuing records in file order, could wait on
//! the host for a signal whose operation comes later in the file. So an operation reserves its
//! slot before it runs and fills it after ([`ReplayCapture::operation`]; a refused operation
//! voids it), a host signal is recorded before it takes effect, and an observation (a wait that
//! returned, a read-back, a value seen) is recorded after it: it lands after every operation
//! that could have caused it. The writer streams slots in order and waits at one still reserved.
//! No lock is held while an operation runs, so capture adds no lock-order edge to the engine's
//! (a batch holds its queue's lock while it stages; a host-call thread may record too).
//!
//! **Bounds.** The buffer holds at most `ReplayConfig::buffer_bytes` of records (counted by their
//! payload). A producer that finds it full waits for the writer; after `stall_timeout` the
//! capture fails loudly: an error is logged, later records are dropped, and the file is closed
//! without its end chunk, so every reader reports it truncated. A capture never ends as a
//! silently incomplete file.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fs::File;
use std::io::BufWriter;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Instant;

use aqueduct_profile::CodeObjectHash;
use aqueduct_profile::replay::{Point, Relocation, ReplayHeader, ReplayRecord, ReplayWriter};

mod config;
pub(crate) mod names;

pub use config::{REPLAY_OUTPUT_ENV, ReplayConfig};

use crate::error::{EngineError, EngineResult};
use crate::profile::{create_output, spawn_writer};

/// An object's id in the running capture; 0 for one it does not record (the engine's own
/// buffers and semaphores, or any object made while no capture runs).
#[derive(Debug, Default)]
pub(crate) struct ReplayId(AtomicU64);

impl ReplayId {
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    pub fn set(&self, id: u64) {
        self.0.store(id, Ordering::Relaxed);
    }
}

/// A semaphore point as the file names it (implemented where the semaphore is).
pub(crate) trait ReplayPoint {
    fn point(&self) -> Point;
}

/// What a finished capture wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ReplayCaptureReport {
    /// The `.aqreplay` file.
    pub output: std::path::PathBuf,
    /// Records written.
    pub records: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// One place in the stream.
enum Slot {
    /// Taken by an operation that is running.
    Reserved,
    Filled(ReplayRecord),
    /// The operation was refused: nothing to write.
    Void,
}

/// The records waiting for the writer.
#[derive(Default)]
struct Pending {
    slots: VecDeque<Slot>,
    /// The sequence number of `slots[0]`.
    first: u64,
    bytes: usize,
    /// Why the capture failed, once it has: nothing more is recorded.
    failed: Option<String>,
    stopping: bool,
}

/// A buffer live in the capture: replay relocates raw-kernarg pointers into it.
#[derive(Clone, Copy)]
struct LiveBuffer {
    id: u64,
    size: u64,
}

pub(crate) struct ReplayCapture {
    pub config: ReplayConfig,
    started: Instant,
    next_id: AtomicU64,
    pending: Mutex<Pending>,
    /// Rung when records arrive (the writer waits) and when space frees (producers wait).
    changed: Condvar,
    /// Set once the capture has failed or ended: recording stops at one load.
    closed: AtomicBool,
    /// Live captured buffers by address, for raw-kernarg relocation.
    live: Mutex<BTreeMap<u64, LiveBuffer>>,
    /// Host-visible buffers whose handles dropped, by address, until their memory is freed.
    finals: Mutex<HashMap<u64, LiveBuffer>>,
    code_objects: Mutex<HashSet<CodeObjectHash>>,
    writer: Mutex<Option<JoinHandle<WriterOutcome>>>,
}

struct WriterOutcome {
    records: u64,
    bytes: u64,
    error: Option<String>,
}

impl ReplayCapture {
    /// Creates the file, writes the header and starts the writer thread.
    pub fn start(config: ReplayConfig, header: ReplayHeader) -> EngineResult<Arc<Self>> {
        let writer = ReplayWriter::new(create_output(&config.output, "replay output")?, &header)?;
        let capture = Arc::new(Self {
            config,
            started: Instant::now(),
            next_id: AtomicU64::new(1),
            pending: Mutex::new(Pending::default()),
            changed: Condvar::new(),
            closed: AtomicBool::new(false),
            live: Mutex::new(BTreeMap::new()),
            finals: Mutex::new(HashMap::new()),
            code_objects: Mutex::new(HashSet::new()),
            writer: Mutex::new(None),
        });
        let thread = {
            let capture = capture.clone();
            spawn_writer("aqueduct-replay-writer", "replay capture", move || capture.write(writer))?
        };
        *lock(&capture.writer) = Some(thread);
        Ok(capture)
    }

    /// Why the capture failed, once it has.
    pub fn failure(&self) -> Option<String> {
        lock(&self.pending).failed.clone()
    }

    /// Whether records are still taken.
    pub fn is_open(&self) -> bool {
        !self.closed.load(Ordering::Acquire)
    }

    /// A fresh object id (never 0, which marks an object the capture does not know).
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Nanoseconds since the capture began.
    pub fn now_ns(&self) -> u64 {
        self.started.elapsed().as_nanos() as u64
    }

    /// Performs a queue operation and records it in the place it reserved before running; a
    /// refused operation records nothing.
    pub fn operation<R>(
        &self,
        queue: u64,
        waits: &[impl ReplayPoint],
        signals: &[impl ReplayPoint],
        run: impl FnOnce() -> EngineResult<R>,
        describe: impl FnOnce(&Self, &R) -> aqueduct_profile::replay::Operation,
    ) -> EngineResult<R> {
        let ticket = self.reserve();
        let output = match run() {
            Ok(output) => output,
            Err(error) => {
                self.settle(ticket, Slot::Void);
                return Err(error);
            }
        };
        let operation = describe(self, &output);
        let record = ReplayRecord::Operation {
            queue,
            time_ns: self.now_ns(),
            waits: points(waits),
            signals: points(signals),
            operation,
        };
        self.settle(ticket, Slot::Filled(record));
        Ok(output)
    }

    /// Records a code object (once per hash) and the executable loaded from it.
    pub fn executable(&self, id: u64, code_object: &[u8]) {
        let hash = CodeObjectHash::of(code_object);
        if lock(&self.code_objects).insert(hash) {
            self.push(ReplayRecord::CodeObject { hash, bytes: code_object.to_vec() });
        }
        self.push(ReplayRecord::Executable { id, code_object: hash });
    }

    /// A buffer joins the capture: raw kernargs pointing into it are relocated.
    pub fn buffer_live(&self, id: u64, address: u64, size: u64) {
        lock(&self.live).insert(address, LiveBuffer { id, size });
    }

    /// A buffer's last handle dropped. A host-visible buffer with its own allocation gets its
    /// final checksum when that memory is freed ([`Self::allocation_freed`]): only then has
    /// every submission that could write it settled.
    pub fn buffer_freed(&self, id: u64, address: u64, final_checksum: bool, size: u64) {
        let mut live = lock(&self.live);
        if live.get(&address).is_some_and(|buffer| buffer.id == id) {
            live.remove(&address);
        }
        drop(live);
        if final_checksum {
            lock(&self.finals).insert(address, LiveBuffer { id, size });
        }
        self.push(ReplayRecord::Free { buffer: id });
    }

    /// The provider allocation at `address` is about to be freed: if it was a captured
    /// host-visible buffer's, its final contents are checksummed.
    pub fn allocation_freed(&self, address: u64) {
        let Some(buffer) = lock(&self.finals).remove(&address) else { return };
        // SAFETY: the allocation is live until the caller frees it after this returns, it is
        // host-accessible (only such buffers are registered), and every row that could write it
        // has settled.
        let bytes = unsafe { std::slice::from_raw_parts(address as *const u8, buffer.size as usize) };
        self.push(ReplayRecord::FinalChecksum {
            buffer: buffer.id,
            length: buffer.size,
            checksum: aqueduct_profile::replay::checksum(bytes),
        });
    }

    /// The relocations of raw kernargs: every aligned 8-byte word that is an address inside a
    /// live captured buffer.
    pub fn relocations(&self, kernargs: &[u8]) -> Vec<Relocation> {
        let live = lock(&self.live);
        kernargs
            .chunks_exact(8)
            .enumerate()
            .filter_map(|(index, word)| {
                let value = u64::from_le_bytes(word.try_into().expect("8 bytes"));
                let (&address, buffer) = live.range(..=value).next_back()?;
                (value - address < buffer.size).then_some(Relocation {
                    at: (index * 8) as u32,
                    buffer: buffer.id,
                    delta: value - address,
                })
            })
            .collect()
    }

    /// Appends a record to the stream.
    pub fn push(&self, record: ReplayRecord) {
        let ticket = self.reserve();
        self.settle(ticket, Slot::Filled(record));
    }

    /// Takes the next place in the stream (`None` once the capture failed or ended); waits while
    /// the buffer is full, and fails the capture once a wait passes `stall_timeout`.
    fn reserve(&self) -> Option<u64> {
        if !self.is_open() {
            return None;
        }
        let mut pending = lock(&self.pending);
        let deadline = crate::clock::deadline_after(Instant::now(), self.config.stall_timeout);
        // A record larger than the whole buffer still goes in, alone.
        while pending.failed.is_none()
            && !pending.slots.is_empty()
            && pending.bytes + RECORD_FIXED_BYTES > self.config.buffer_bytes
        {
            let now = Instant::now();
            if now >= deadline {
                let reason = format!(
                    "the writer fell behind: the {}-byte record buffer stayed full for {:?}",
                    self.config.buffer_bytes, self.config.stall_timeout
                );
                tracing::error!(output = %self.config.output.display(), %reason, "replay capture failed; the file will read as truncated");
                pending.failed = Some(reason);
                self.closed.store(true, Ordering::Release);
                break;
            }
            pending = self.changed.wait_timeout(pending, deadline - now).unwrap_or_else(|p| p.into_inner()).0;
        }
        if pending.failed.is_some() {
            return None;
        }
        pending.bytes += RECORD_FIXED_BYTES;
        pending.slots.push_back(Slot::Reserved);
        Some(pending.first + pending.slots.len() as u64 - 1)
    }

    /// Fills or voids a reserved place, and wakes the writer if it can go on.
    fn settle(&self, ticket: Option<u64>, slot: Slot) {
        let Some(ticket) = ticket else { return };
        let mut pending = lock(&self.pending);
        // A failed capture cleared its slots: the ticket is stale.
        if ticket < pending.first || ticket - pending.first >= pending.slots.len() as u64 {
            return;
        }
        if let Slot::Filled(record) = &slot {
            pending.bytes += record_bytes(record);
        }
        let index = (ticket - pending.first) as usize;
        pending.slots[index] = slot;
        let head_ready = !matches!(pending.slots.front(), Some(Slot::Reserved));
        drop(pending);
        if head_ready {
            self.changed.notify_all();
        }
    }

    /// Records the end, stops the writer and reports what it wrote; an error if the capture
    /// failed at any point (its file then lacks the end chunk).
    pub fn finish(&self) -> EngineResult<ReplayCaptureReport> {
        self.push(ReplayRecord::CaptureEnd { time_ns: self.now_ns() });
        self.closed.store(true, Ordering::Release);
        lock(&self.pending).stopping = true;
        self.changed.notify_all();
        let thread = lock(&self.writer).take();
        let failed = |reason: String| EngineError::ReplayCapture { output: self.config.output.clone(), reason };
        let outcome = match thread.map(JoinHandle::join) {
            Some(Ok(outcome)) => outcome,
            Some(Err(_)) => return Err(failed("the writer thread panicked".into())),
            None => return Err(failed("the capture already finished".into())),
        };
        if let Some(reason) = outcome.error.or_else(|| lock(&self.pending).failed.clone()) {
            return Err(failed(reason));
        }
        Ok(ReplayCaptureReport { output: self.config.output.clone(), records: outcome.records, bytes: outcome.bytes })
    }

    /// The writer thread: moves records from the buffer into the file until told to stop; writes
    /// the end chunk only if nothing failed.
    fn write(&self, mut writer: ReplayWriter<BufWriter<File>>) -> WriterOutcome {
        let mut batch = Vec::new();
        loop {
            let mut pending = lock(&self.pending);
            let ready = |pending: &Pending| matches!(pending.slots.front(), Some(Slot::Filled(_) | Slot::Void));
            while !ready(&pending) && !pending.stopping && pending.failed.is_none() {
                pending = self.changed.wait(pending).unwrap_or_else(|p| p.into_inner());
            }
            // At a stop every operation has returned: nothing is still reserved.
            let stopping = pending.stopping || pending.failed.is_some();
            while let Some(slot) = pending.slots.front() {
                let size = match slot {
                    Slot::Reserved if !stopping => break,
                    Slot::Filled(record) => RECORD_FIXED_BYTES + record_bytes(record),
                    Slot::Reserved | Slot::Void => RECORD_FIXED_BYTES,
                };
                pending.bytes -= size;
                if let Some(Slot::Filled(record)) = pending.slots.pop_front() {
                    batch.push(record);
                }
                pending.first += 1;
            }
            drop(pending);
            self.changed.notify_all();
            for record in batch.drain(..) {
                if let Err(error) = writer.append(&record) {
                    let reason = format!("writing {}: {error}", self.config.output.display());
                    tracing::error!(%reason, "replay capture failed; the file will read as truncated");
                    let mut pending = lock(&self.pending);
                    pending.failed = Some(reason.clone());
                    let cleared = pending.slots.len() as u64;
                    pending.slots.clear();
                    pending.first += cleared;
                    pending.bytes = 0;
                    self.closed.store(true, Ordering::Release);
                    drop(pending);
                    self.changed.notify_all();
                    // Dropped without `finish`: no end chunk.
                    return WriterOutcome {
                        records: writer.records(),
                        bytes: writer.bytes_written(),
                        error: Some(reason),
                    };
                }
            }
            if stopping {
                let failed = lock(&self.pending).failed.clone();
                let records = writer.records();
                if failed.is_some() {
                    return WriterOutcome { records, bytes: writer.bytes_written(), error: failed };
                }
                return match writer.finish() {
                    Ok(_) => WriterOutcome { records, bytes: file_size(&self.config.output), error: None },
                    Err(error) => WriterOutcome { records, bytes: 0, error: Some(error.to_string()) },
                };
            }
        }
    }
}

/// Points as the capture names them.
pub(crate) fn points(points: &[impl ReplayPoint]) -> Vec<Point> {
    points.iter().map(ReplayPoint::point).collect()
}

/// What a place in the buffer counts before its payload.
const RECORD_FIXED_BYTES: usize = 96;

/// What a record's payload counts in the buffer.
fn record_bytes(record: &ReplayRecord) -> usize {
    use aqueduct_profile::replay::Operation;
    match record {
        ReplayRecord::CodeObject { bytes, .. } => bytes.len(),
        ReplayRecord::HostWrite { data, .. } => data.len(),
        ReplayRecord::Operation { operation: Operation::Update { data, .. }, .. } => data.len(),
        ReplayRecord::Operation { operation: Operation::RawDispatch { kernargs, .. }, .. } => kernargs.len(),
        ReplayRecord::CommandBuffer { commands, .. } => commands.len() * RECORD_FIXED_BYTES,
        _ => 0,
    }
}

fn file_size(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).map_or(0, |metadata| metadata.len())
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}
