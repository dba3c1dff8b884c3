//! The replayer: runs a `.aqreplay` stream on a device, in file order, from one thread.
//!
//! Each captured object is made again (queues with their agent, priority and CU mask;
//! semaphores at their initial values; allocations of their kind and size; pools with their
//! settings; executables from the stored code objects; command buffers from their recorded
//! calls) and each record is issued as the program issued it. File order is a valid order: the
//! capture wrote every record before its effect could be observed (`capture.rs`), so a host
//! wait in the file always follows the operations that satisfy it.
//!
//! Checks: every read-back is read again at the same point of the stream and its checksum
//! compared; at the end, once every queue has drained, so is every host-visible buffer's final
//! checksum. The first mismatch is named, and the run goes on so the report counts them all.
//!
//! **Mapping to another device.** Queues and allocations keep their agent index: a capture that
//! names agent `n` needs a device with more than `n` agents (otherwise a `Replay` error names the
//! record, the agent and the device's count). Queues are made one for one; a device that cannot
//! make as many fails at that queue's record. Agents of a different kind are allowed as long as
//! the code objects load on them.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use aqueduct_profile::CodeObjectHash;
use aqueduct_profile::replay::{
    BufferRange, Checksummer, Command, CommandRange, Operation, Point, ReplayHeader, ReplayReader, ReplayRecord,
};

use aqueduct_components::device_entities::MemoryKind;

use super::waits::WaitCheck;
use crate::command_buffer::{BlockLabel, BufferRef};
use crate::error::{EngineError, EngineResult};
use crate::replay_capture::names;
use crate::{
    BindingTable, BlockLimits, Buffer, CommandBuffer, CommandBufferUsage, CompareOp, Device, Dispatch, Executable,
    Exhaustion, Kernel, Pool, PoolConfig, Queue, QueueConfig, QueuePriority, RawDispatch, Semaphore, SemaphorePoint,
    TrimPolicy,
};

/// A `.aqreplay` file, opened: its header was read and checked.
#[derive(Debug)]
pub struct Replay {
    path: PathBuf,
    header: ReplayHeader,
}

/// How a replay runs.
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// How long one host wait of the stream (or the final drain) may take before the replay
    /// fails as diverged. 30 s by default.
    pub wait_timeout: Duration,
    /// The most bytes of device memory the replay may hold at once: the capture's allocations,
    /// pool reserves and allocas, as the stream makes and frees them. A record that would go
    /// past it fails the replay with [`EngineError::ReplayMemoryBudget`] before anything is
    /// allocated, so a small (or hostile) file cannot make the replay take the machine's
    /// memory. [`DEFAULT_REPLAY_MEMORY_BUDGET`] by default.
    pub memory_budget: u64,
}

/// The default [`ReplayOptions::memory_budget`]: 1 GiB.
pub const DEFAULT_REPLAY_MEMORY_BUDGET: u64 = 1 << 30;

/// Checksums and read-backs read buffers this much at a time, so a check never holds a whole
/// large buffer a second time.
const CHECKSUM_CHUNK: usize = 1 << 20;

impl Default for ReplayOptions {
    fn default() -> Self {
        Self { wait_timeout: Duration::from_secs(30), memory_budget: DEFAULT_REPLAY_MEMORY_BUDGET }
    }
}

/// What a capture holds, from one pass over it (no device needed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplaySummary {
    /// Records in the file.
    pub records: u64,
    /// Queues made.
    pub queues: u64,
    /// Queue operations by kind, in first-seen order.
    pub operations: Vec<(String, u64)>,
    /// Executables loaded.
    pub executables: u64,
    /// Distinct code objects stored, with their sizes.
    pub code_objects: Vec<(CodeObjectHash, u64)>,
    /// Semaphores made.
    pub semaphores: u64,
    /// Allocations made.
    pub allocations: u64,
    /// Bytes of allocations made.
    pub allocated_bytes: u64,
    /// Pools made.
    pub pools: u64,
    /// Command buffers recorded.
    pub command_buffers: u64,
    /// Host writes.
    pub host_writes: u64,
    /// Bytes the host wrote.
    pub host_write_bytes: u64,
    /// Read-backs with a checksum.
    pub host_reads: u64,
    /// Host waits (and values seen advancing).
    pub host_waits: u64,
    /// Host signals (and fails).
    pub host_signals: u64,
    /// Final checksums of host-visible buffers.
    pub final_checksums: u64,
    /// From the capture's start to its last operation (or its end record).
    pub duration: Duration,
    /// The file's size.
    pub file_bytes: u64,
}

/// One checksum that differs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The record (counted from 0) that holds the expected checksum.
    pub record: u64,
    /// The captured buffer's id.
    pub buffer: u64,
    /// `read-back` or `final`.
    pub check: &'static str,
    /// The captured checksum.
    pub expected: u32,
    /// The replay's checksum.
    pub found: u32,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "buffer {} differs at its {} checksum (record {}): captured {:08x}, replayed {:08x}",
            self.buffer, self.check, self.record, self.expected, self.found
        )
    }
}

/// Where a replay's time went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplayTiming {
    /// Wall time from the first record to the last queue drained.
    pub wall: Duration,
    /// CPU time of the replaying thread over the same span.
    pub host_cpu: Duration,
}

/// What a replay did and found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplayOutcome {
    /// Records issued.
    pub records: u64,
    /// Queue operations submitted.
    pub operations: u64,
    /// Read-back checksums compared.
    pub reads_checked: u64,
    /// Final checksums compared.
    pub finals_checked: u64,
    /// Every checksum that differed, in stream order.
    pub mismatches: Vec<Mismatch>,
    /// Where the time went.
    pub timing: ReplayTiming,
}

impl ReplayOutcome {
    /// Whether every checksum matched.
    pub fn matches(&self) -> bool {
        self.mismatches.is_empty()
    }
}

impl Replay {
    /// Opens a capture and checks its preamble and header.
    pub fn open(path: impl AsRef<Path>) -> EngineResult<Self> {
        let path = path.as_ref().to_path_buf();
        let reader = Self::reader(&path)?;
        Ok(Self { header: reader.header().clone(), path })
    }

    /// What the capture ran on.
    pub fn header(&self) -> &ReplayHeader {
        &self.header
    }

    fn reader(path: &Path) -> EngineResult<ReplayReader<BufReader<File>>> {
        let file = File::open(path).map_err(|error| EngineError::InvalidArgument {
            what: "replay file",
            reason: format!("cannot open {}: {error}", path.display()),
        })?;
        Ok(ReplayReader::new(BufReader::new(file))?)
    }

    /// Every record, decoded (`bench` runs the stream from memory, so decoding is not timed).
    pub fn records(&self) -> EngineResult<Vec<ReplayRecord>> {
        Self::reader(&self.path)?.map(|record| record.map_err(EngineError::from)).collect()
    }

    /// The code objects the capture stored (a soft-runtime caller registers their host builds
    /// before [`Self::run`]).
    pub fn code_objects(&self) -> EngineResult<Vec<Vec<u8>>> {
        let mut found = Vec::new();
        for record in Self::reader(&self.path)? {
            if let ReplayRecord::CodeObject { bytes, .. } = record? {
                found.push(bytes);
            }
        }
        Ok(found)
    }

    /// What the capture holds, from one pass over it; a damaged file is the reader's error.
    pub fn summarize(&self) -> EngineResult<ReplaySummary> {
        let mut summary = ReplaySummary {
            file_bytes: std::fs::metadata(&self.path).map_or(0, |metadata| metadata.len()),
            ..ReplaySummary::default()
        };
        for record in Self::reader(&self.path)? {
            summary.records += 1;
            match record? {
                ReplayRecord::CodeObject { hash, bytes } => summary.code_objects.push((hash, bytes.len() as u64)),
                ReplayRecord::Executable { .. } => summary.executables += 1,
                ReplayRecord::Queue { .. } => summary.queues += 1,
                ReplayRecord::Semaphore { .. } => summary.semaphores += 1,
                ReplayRecord::Allocation { size, .. } => {
                    summary.allocations += 1;
                    summary.allocated_bytes += size;
                }
                ReplayRecord::Pool { .. } => summary.pools += 1,
                ReplayRecord::HostWrite { data, .. } => {
                    summary.host_writes += 1;
                    summary.host_write_bytes += data.len() as u64;
                }
                ReplayRecord::HostRead { .. } => summary.host_reads += 1,
                ReplayRecord::HostSignal(_) | ReplayRecord::HostFail { .. } => summary.host_signals += 1,
                ReplayRecord::HostWait(_) => summary.host_waits += 1,
                ReplayRecord::Operation { operation, time_ns, .. } => {
                    summary.duration = summary.duration.max(Duration::from_nanos(time_ns));
                    let kind = operation.kind().name();
                    match summary.operations.iter_mut().find(|(name, _)| name == kind) {
                        Some((_, count)) => *count += 1,
                        None => summary.operations.push((kind.to_string(), 1)),
                    }
                }
                ReplayRecord::CommandBuffer { .. } => summary.command_buffers += 1,
                ReplayRecord::FinalChecksum { .. } => summary.final_checksums += 1,
                ReplayRecord::CaptureEnd { time_ns } => {
                    summary.duration = summary.duration.max(Duration::from_nanos(time_ns))
                }
                ReplayRecord::Free { .. } | ReplayRecord::QueueDropped { .. } | ReplayRecord::QueueCancelled { .. } => {
                }
            }
        }
        Ok(summary)
    }

    /// Runs the stream on `device`, streaming it from the file. A capture with a wait that no
    /// record can meet is refused first, by a pass over the file that touches no device
    /// (`waits.rs`), naming the record.
    pub fn run(&self, device: &Device, options: &ReplayOptions) -> EngineResult<ReplayOutcome> {
        WaitCheck::run(Self::reader(&self.path)?.map(|record| record.map_err(EngineError::from)))?;
        let records = Self::reader(&self.path)?.map(|record| record.map_err(EngineError::from));
        Replayer::new(device, options).run(records)
    }

    /// Runs records already decoded ([`Self::records`]) on `device`.
    pub fn run_records(
        device: &Device,
        records: &[ReplayRecord],
        options: &ReplayOptions,
    ) -> EngineResult<ReplayOutcome> {
        WaitCheck::run(records.iter().cloned().map(Ok))?;
        Replayer::new(device, options).run(records.iter().cloned().map(Ok))
    }
}

/// The checksum of `length` bytes of `buffer` from `offset` (in range), read a chunk at a time.
fn chunked_checksum(buffer: &Buffer, offset: u64, length: u64) -> EngineResult<u32> {
    let mut checksummer = Checksummer::default();
    let mut chunk = vec![0u8; CHECKSUM_CHUNK.min(length as usize)];
    let mut done = 0;
    while done < length {
        let take = (length - done).min(CHECKSUM_CHUNK as u64) as usize;
        buffer.read(offset + done, &mut chunk[..take])?;
        checksummer.update(&chunk[..take]);
        done += take as u64;
    }
    Ok(checksummer.finish())
}

/// The objects made so far, by captured id.
struct Replayer<'d> {
    device: &'d Device,
    options: &'d ReplayOptions,
    /// The record being issued, for errors.
    record: u64,
    queues: HashMap<u64, Queue>,
    semaphores: HashMap<u64, Semaphore>,
    buffers: HashMap<u64, Buffer>,
    /// Host-visible buffers the program dropped: kept until their final checksum is compared.
    retired: HashMap<u64, Buffer>,
    pools: HashMap<u64, Pool>,
    code_objects: HashMap<CodeObjectHash, Vec<u8>>,
    executables: HashMap<u64, Executable>,
    command_buffers: HashMap<u64, CommandBuffer>,
    finals: Vec<(u64, u64, u32)>,
    /// Bytes of device memory the objects made so far hold (see [`ReplayOptions::memory_budget`]).
    memory_held: u64,
    outcome: ReplayOutcome,
}

impl<'d> Replayer<'d> {
    fn new(device: &'d Device, options: &'d ReplayOptions) -> Self {
        Self {
            device,
            options,
            record: 0,
            queues: HashMap::new(),
            semaphores: HashMap::new(),
            buffers: HashMap::new(),
            retired: HashMap::new(),
            pools: HashMap::new(),
            code_objects: HashMap::new(),
            executables: HashMap::new(),
            command_buffers: HashMap::new(),
            finals: Vec::new(),
            memory_held: 0,
            outcome: ReplayOutcome::default(),
        }
    }

    fn error(&self, reason: impl Into<String>) -> EngineError {
        EngineError::Replay { record: self.record, reason: reason.into() }
    }

    /// Adds the record's place to an engine error.
    fn context<T>(&self, result: EngineResult<T>, what: &str) -> EngineResult<T> {
        result.map_err(|error| match error {
            EngineError::Replay { .. } => error,
            error => self.error(format!("{what}: {error}")),
        })
    }

    fn run(mut self, records: impl Iterator<Item = EngineResult<ReplayRecord>>) -> EngineResult<ReplayOutcome> {
        let (start, cpu_start) = (Instant::now(), crate::thread_cpu_time());
        for (index, record) in records.enumerate() {
            self.record = index as u64;
            let record = record?;
            self.issue(record)?;
            self.outcome.records += 1;
        }
        self.drain()?;
        self.outcome.timing =
            ReplayTiming { wall: start.elapsed(), host_cpu: crate::thread_cpu_time().saturating_sub(cpu_start) };
        self.check_finals()?;
        Ok(self.outcome)
    }

    fn issue(&mut self, record: ReplayRecord) -> EngineResult<()> {
        match record {
            ReplayRecord::CodeObject { hash, bytes } => {
                if CodeObjectHash::of(&bytes) != hash {
                    return Err(self.error(format!("code object {hash} does not hash to its name")));
                }
                self.code_objects.insert(hash, bytes);
            }
            ReplayRecord::Executable { id, code_object } => {
                let bytes = self.code_objects.get(&code_object).ok_or_else(|| {
                    self.error(format!("executable {id} names code object {code_object}, not stored before it"))
                })?;
                let executable = self.context(self.device.load_executable(bytes), "loading an executable")?;
                self.executables.insert(id, executable);
            }
            ReplayRecord::Queue { id, agent, priority, cu_mask } => {
                self.check_agent(agent)?;
                let mut config =
                    QueueConfig::new().agent(agent as usize).priority(names::parse::<QueuePriority>(&priority)?);
                config.cu_mask = cu_mask;
                let made = self.device.create_queue_with(config);
                let queue = self.context(made, &format!("making queue {id} ({} made so far)", self.queues.len()))?;
                self.queues.insert(id, queue);
            }
            ReplayRecord::Semaphore { id, initial } => {
                let semaphore = self.context(self.device.create_semaphore(initial), "making a semaphore")?;
                self.semaphores.insert(id, semaphore);
            }
            ReplayRecord::Allocation { id, agent, kind, size } => {
                self.check_agent(agent)?;
                let kind = names::parse::<MemoryKind>(&kind)?;
                self.hold_memory("an allocation", size)?;
                let buffer = self.context(self.device.allocate_on(agent as usize, kind, size), "allocating")?;
                self.buffers.insert(id, buffer);
            }
            ReplayRecord::Pool { id, settings } => {
                self.check_agent(settings.agent)?;
                let config = PoolConfig::new(names::parse::<MemoryKind>(&settings.kind)?)
                    .agent(settings.agent as usize)
                    .slab_size(settings.slab_size)
                    .granule(settings.granule)
                    .reserve(settings.reserve)
                    .max_size(settings.max_size)
                    .trim(names::parse::<TrimPolicy>(&settings.trim)?)
                    .exhaustion(Exhaustion::parse_replay_name(&settings.exhaustion)?);
                self.hold_memory("a pool's reserve", settings.reserve)?;
                let pool = self.context(self.device.create_pool(config), "making a pool")?;
                self.pools.insert(id, pool);
            }
            ReplayRecord::Free { buffer } => {
                let freed = self.buffers.remove(&buffer).ok_or_else(|| self.unknown("buffer", buffer))?;
                // Pool memory is reused, so only buffers with their own memory have a final; those
                // are kept, and their memory stays held, until it is compared.
                if freed.pool_origin().is_none() {
                    if freed.kind().host_accessible() {
                        self.retired.insert(buffer, freed);
                    } else {
                        self.memory_held -= freed.size().min(self.memory_held);
                    }
                }
            }
            ReplayRecord::QueueDropped { queue } => {
                // The last handle: its work goes on, and the queue goes once it has drained, as
                // it did in the capture.
                drop(self.queues.remove(&queue).ok_or_else(|| self.unknown("queue", queue))?);
            }
            ReplayRecord::QueueCancelled { queue } => {
                // Through a second handle: the capture's `QueueDropped` follows, from the last one.
                self.queues.get(&queue).ok_or_else(|| self.unknown("queue", queue))?.clone().cancel();
            }
            ReplayRecord::HostWrite { buffer, offset, data } => {
                let buffer = self.buffer(buffer)?;
                self.context(buffer.write(offset, &data), "a host write")?;
            }
            ReplayRecord::HostRead { range, checksum: expected } => {
                let buffer = self.buffer(range.buffer)?;
                let fits = range.offset.checked_add(range.length).is_some_and(|end| end <= buffer.size());
                if !fits {
                    return Err(self.error(format!(
                        "a read-back of {} bytes at offset {} runs past buffer {}'s {} bytes (the file is damaged)",
                        range.length,
                        range.offset,
                        range.buffer,
                        buffer.size()
                    )));
                }
                let found = self.context(chunked_checksum(buffer, range.offset, range.length), "a read-back")?;
                self.outcome.reads_checked += 1;
                if found != expected {
                    let mismatch =
                        Mismatch { record: self.record, buffer: range.buffer, check: "read-back", expected, found };
                    self.outcome.mismatches.push(mismatch);
                }
            }
            ReplayRecord::HostSignal(point) => {
                let semaphore = self.semaphore(point.semaphore)?;
                self.context(semaphore.signal(point.value), "a host signal")?;
            }
            ReplayRecord::HostFail { semaphore, message } => self.semaphore(semaphore)?.fail(message),
            ReplayRecord::HostWait(point) => {
                let semaphore = self.semaphore(point.semaphore)?;
                semaphore.wait(point.value, self.options.wait_timeout).map_err(|error| {
                    // The captured id only: the engine's error names the replay's own slot.
                    let ended = match error {
                        EngineError::Timeout { waited, .. } => {
                            format!("timed out after {waited:?} at {}", semaphore.value())
                        }
                        other => format!("failed at {}: {other}", semaphore.value()),
                    };
                    self.error(format!(
                        "the host wait for semaphore {} to reach {} {ended} (the replay diverged from the capture)",
                        point.semaphore, point.value
                    ))
                })?;
            }
            ReplayRecord::Operation { queue, waits, signals, operation, .. } => {
                self.operation(queue, &waits, &signals, operation)?;
                self.outcome.operations += 1;
            }
            ReplayRecord::CommandBuffer { id, agent, usage, block_packets, block_kernarg_bytes, commands } => {
                self.check_agent(agent)?;
                let limits = BlockLimits { packets: block_packets, kernarg_bytes: block_kernarg_bytes };
                let usage = names::parse::<CommandBufferUsage>(&usage)?;
                let made = self.device.create_command_buffer_on(agent as usize, usage, limits);
                let mut command_buffer = self.context(made, "making a command buffer")?;
                for (index, command) in commands.into_iter().enumerate() {
                    let recorded = self.command(&mut command_buffer, command);
                    self.context(recorded, &format!("command {index} of command buffer {id}"))?;
                }
                self.context(command_buffer.finish(), &format!("finishing command buffer {id}"))?;
                self.command_buffers.insert(id, command_buffer);
            }
            ReplayRecord::FinalChecksum { buffer, length, checksum } => self.finals.push((buffer, length, checksum)),
            ReplayRecord::CaptureEnd { .. } => {}
        }
        Ok(())
    }

    fn operation(&mut self, queue: u64, waits: &[Point], signals: &[Point], operation: Operation) -> EngineResult<()> {
        // An alloca's memory counts from its submission, a dealloca's until it is submitted.
        let (held, released) = match &operation {
            Operation::Alloca { size, .. } => (*size, 0),
            Operation::Dealloca { buffer } => (0, self.buffer(*buffer)?.size()),
            _ => (0, 0),
        };
        self.hold_memory("an alloca", held)?;
        let result = self.submit_operation(queue, waits, signals, operation);
        let settled = if result.is_ok() { released } else { held };
        self.memory_held -= settled.min(self.memory_held);
        result
    }

    fn submit_operation(
        &mut self,
        queue: u64,
        waits: &[Point],
        signals: &[Point],
        operation: Operation,
    ) -> EngineResult<()> {
        let queue = self.queues.get(&queue).ok_or_else(|| self.unknown("queue", queue))?;
        let waits = self.points(waits)?;
        let signals = self.points(signals)?;
        let result = match &operation {
            Operation::Barrier => queue.barrier().waits(&waits).signals(&signals).submit(),
            Operation::Fill { target, pattern } => {
                queue.fill(self.binding(target)?, pattern).waits(&waits).signals(&signals).submit()
            }
            Operation::Copy { source, target } => {
                let (source, target) = (self.binding(source)?, self.binding(target)?);
                queue.copy(source, target).waits(&waits).signals(&signals).submit()
            }
            Operation::Update { buffer, offset, data } => {
                queue.update(self.buffer(*buffer)?, *offset, data).waits(&waits).signals(&signals).submit()
            }
            Operation::Dispatch { executable, kernel, grid, workgroup, bindings, constants } => {
                let kernel = self.kernel(*executable, kernel)?;
                let bindings = bindings.iter().map(|range| self.binding(range)).collect::<EngineResult<Vec<_>>>()?;
                let dispatch = Dispatch { grid: *grid, workgroup: *workgroup, bindings: &bindings, constants };
                queue.dispatch(&kernel, &dispatch).waits(&waits).signals(&signals).submit()
            }
            Operation::RawDispatch { executable, kernel, grid, workgroup, kernargs, relocations } => {
                let kernel = self.kernel(*executable, kernel)?;
                let mut kernargs = kernargs.clone();
                for relocation in relocations {
                    let address = self.buffer(relocation.buffer)?.device_address() + relocation.delta;
                    let at = relocation.at as usize;
                    let slot = kernargs
                        .get_mut(at..at + 8)
                        .ok_or_else(|| self.error(format!("a relocation at byte {at} is past the kernargs")))?;
                    slot.copy_from_slice(&address.to_le_bytes());
                }
                let dispatch = RawDispatch { grid: *grid, workgroup: *workgroup, kernargs: &kernargs };
                queue.dispatch_raw(&kernel, &dispatch).waits(&waits).signals(&signals).submit()
            }
            Operation::Execute { command_buffer, table } => {
                let command_buffer = self
                    .command_buffers
                    .get(command_buffer)
                    .ok_or_else(|| self.unknown("command buffer", *command_buffer))?;
                let mut bindings = BindingTable::with_capacity(table.len());
                for (slot, range) in table.iter().enumerate() {
                    if let Some(range) = range {
                        bindings.set(slot as u32, self.binding(range)?)?;
                    }
                }
                queue.execute(command_buffer, &bindings).waits(&waits).signals(&signals).submit()
            }
            Operation::Alloca { pool, size, buffer } => {
                let pool = self.pools.get(pool).ok_or_else(|| self.unknown("pool", *pool))?;
                let made = queue.alloca(pool, *size).waits(&waits).signals(&signals).submit();
                let made = self.context(made, "an alloca")?;
                self.buffers.insert(*buffer, made);
                Ok(crate::queue::Submitted::now(&queue.driver))
            }
            Operation::Dealloca { buffer } => {
                queue.dealloca(self.buffer(*buffer)?).waits(&waits).signals(&signals).submit()
            }
            Operation::HostCall => queue.host_call(|| Ok(())).waits(&waits).signals(&signals).submit(),
            Operation::ReadFile { .. } | Operation::WriteFile { .. } => {
                return Err(self.error(format!(
                    "the capture holds a {}: its file is the program's, and a replay cannot reproduce it \
                     (docs/REPLAY_FORMAT.md, \"What replay cannot reproduce\")",
                    operation.kind().name()
                )));
            }
        };
        self.context(result.map(drop), &format!("submitting a {}", operation.kind().name()))
    }

    fn command(&self, command_buffer: &mut CommandBuffer, command: Command) -> EngineResult<()> {
        match command {
            Command::Dispatch { executable, kernel, grid, workgroup, bindings, constants } => {
                let kernel = self.kernel(executable, &kernel)?;
                let bindings = bindings.iter().map(|range| self.reference(range)).collect::<EngineResult<Vec<_>>>()?;
                let dispatch = Dispatch { grid, workgroup, bindings: &bindings, constants: &constants };
                command_buffer.dispatch(&kernel, &dispatch)
            }
            Command::DispatchIndirect { executable, kernel, grid, workgroup, bindings, constants } => {
                let kernel = self.kernel(executable, &kernel)?;
                let bindings = bindings.iter().map(|range| self.reference(range)).collect::<EngineResult<Vec<_>>>()?;
                let dispatch = Dispatch { grid: [0; 3], workgroup, bindings: &bindings, constants: &constants };
                command_buffer.dispatch_indirect(&kernel, &dispatch, self.reference(&grid)?)
            }
            Command::Fill { target, pattern } => command_buffer.fill(self.reference(&target)?, &pattern),
            Command::Copy { source, target } => command_buffer.copy(self.reference(&source)?, self.reference(&target)?),
            Command::Update { target, data } => command_buffer.update(self.reference(&target)?, &data),
            Command::Barrier => command_buffer.barrier(),
            Command::ProfileMarker { target, marker } => {
                command_buffer.profile_marker(self.reference(&target)?, marker)
            }
            Command::NewBlock => command_buffer.new_block().map(drop),
            Command::Begin { label } => command_buffer.begin(BlockLabel(label)),
            Command::Branch { label } => command_buffer.branch(BlockLabel(label)),
            Command::BranchIf { value, compare, operand, taken, not_taken } => command_buffer.branch_if(
                self.reference(&value)?,
                names::parse::<CompareOp>(&compare)?,
                operand,
                BlockLabel(taken),
                BlockLabel(not_taken),
            ),
            Command::Return => command_buffer.ret(),
        }
    }

    /// Waits for every queue to finish what the stream gave it.
    fn drain(&mut self) -> EngineResult<()> {
        let mut ids: Vec<u64> = self.queues.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let done = self.context(self.device.create_semaphore(0), "draining")?;
            let queue = &self.queues[&id];
            self.context(queue.barrier().signal(done.at(1)).submit(), "draining")?;
            done.wait(1, self.options.wait_timeout).map_err(|error| {
                // The drain's own semaphore is not the capture's: name the queue only.
                let ended = match error {
                    EngineError::Timeout { waited, .. } => format!("within {waited:?}"),
                    other => format!("({other})"),
                };
                self.error(format!("queue {id} did not drain {ended} (the replay diverged from the capture)"))
            })?;
        }
        Ok(())
    }

    fn check_finals(&mut self) -> EngineResult<()> {
        for (buffer, length, expected) in std::mem::take(&mut self.finals) {
            let replayed = self.retired.get(&buffer).or_else(|| self.buffers.get(&buffer));
            let replayed = replayed.ok_or_else(|| self.unknown("buffer", buffer))?;
            if replayed.size() != length {
                return Err(self.error(format!(
                    "buffer {buffer}'s final checksum covers {length} bytes; it has {}",
                    replayed.size()
                )));
            }
            let found = self.context(chunked_checksum(replayed, 0, length), "reading a final checksum")?;
            self.outcome.finals_checked += 1;
            if found != expected {
                self.outcome.mismatches.push(Mismatch { record: self.record, buffer, check: "final", expected, found });
            }
        }
        Ok(())
    }

    /// Counts `bytes` more held, or refuses past the budget (before anything is allocated).
    fn hold_memory(&mut self, what: &'static str, bytes: u64) -> EngineResult<()> {
        let would_hold = self.memory_held.saturating_add(bytes);
        if would_hold > self.options.memory_budget {
            return Err(EngineError::ReplayMemoryBudget {
                record: self.record,
                what,
                requested: bytes,
                would_hold,
                budget: self.options.memory_budget,
            });
        }
        self.memory_held = would_hold;
        Ok(())
    }

    fn check_agent(&self, agent: u32) -> EngineResult<()> {
        let agents = self.device.agents().len();
        if agent as usize >= agents {
            return Err(self.error(format!(
                "the capture uses agent {agent}; this device has {agents} agent(s). Replay keeps agent indices: \
                 give --device a spec with at least {} agents",
                agent + 1
            )));
        }
        Ok(())
    }

    fn unknown(&self, what: &str, id: u64) -> EngineError {
        self.error(format!("names {what} {id}, which no earlier record made (the file is damaged)"))
    }

    fn buffer(&self, id: u64) -> EngineResult<&Buffer> {
        self.buffers.get(&id).ok_or_else(|| self.unknown("buffer", id))
    }

    fn semaphore(&self, id: u64) -> EngineResult<&Semaphore> {
        self.semaphores.get(&id).ok_or_else(|| self.unknown("semaphore", id))
    }

    fn binding(&self, range: &BufferRange) -> EngineResult<crate::Binding<'_>> {
        Ok(self.buffer(range.buffer)?.range(range.offset, range.length))
    }

    fn reference(&self, range: &CommandRange) -> EngineResult<BufferRef<'_>> {
        Ok(match *range {
            CommandRange::Static(range) => BufferRef::Static(self.binding(&range)?),
            CommandRange::Slot { slot, offset, length } => BufferRef::Slot { slot, offset, length },
        })
    }

    fn points(&self, points: &[Point]) -> EngineResult<Vec<SemaphorePoint<'_>>> {
        points.iter().map(|point| Ok(self.semaphore(point.semaphore)?.at(point.value))).collect()
    }

    fn kernel(&self, executable: u64, name: &str) -> EngineResult<Kernel> {
        let loaded = self.executables.get(&executable).ok_or_else(|| self.unknown("executable", executable))?;
        self.context(loaded.kernel(name), "finding a kernel")
    }
}
