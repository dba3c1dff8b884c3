//! The replay capture (`.aqreplay`): the records of a program's device-level stream, in the
//! chunked container of [`crate::format`]. The engine writes them (`aqueduct_engine` capture) and
//! replays them; `aqueduct replay info` reads them without opening a device. Field by field in
//! docs/REPLAY_FORMAT.md; keep the two in step.
//!
//! Every object the stream names (queue, semaphore, buffer, pool, executable, command buffer)
//! has an id, unique within the capture and never reused: a buffer freed and another allocated
//! at the same address are two ids. Records appear in the order the program's calls took
//! effect: a record is written before anything it describes can be observed by another thread,
//! so a replay that issues them one after another, in file order, meets every dependency the
//! program had.

use serde::{Deserialize, Serialize};

use crate::format::{CaptureFormat, CaptureReader, CaptureWriter};
use crate::record::{AgentDescription, CodeObjectHash, OperationKind};

/// The replay capture file type.
pub struct ReplayFormat;

impl CaptureFormat for ReplayFormat {
    const MAGIC: [u8; 8] = REPLAY_MAGIC;
    const MAJOR: u16 = REPLAY_FORMAT_MAJOR;
    const MINOR: u16 = REPLAY_FORMAT_MINOR;
    const NAME: &'static str = "aqueduct replay capture (.aqreplay)";
    type Header = ReplayHeader;
    type Record = ReplayRecord;
}

/// The first 8 bytes of every replay capture.
pub const REPLAY_MAGIC: [u8; 8] = [0x89, b'A', b'Q', b'R', b'P', b'L', b'Y', b'\n'];
/// Readers refuse a capture of a newer major version (docs/REPLAY_FORMAT.md, "Versioning").
pub const REPLAY_FORMAT_MAJOR: u16 = 1;
/// Minor versions only add record kinds or optional fields.
pub const REPLAY_FORMAT_MINOR: u16 = 2;

/// Writes a replay capture.
pub type ReplayWriter<W> = CaptureWriter<W, ReplayFormat>;
/// Reads a replay capture.
pub type ReplayReader<R> = CaptureReader<R, ReplayFormat>;

/// The header chunk: what the capture ran on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayHeader {
    pub aqueduct_version: String,
    /// `soft` or `rocr`.
    pub provider: String,
    /// The device spec the engine was opened with (`auto`, `soft`, `amdgpu:1`, ...).
    pub device_spec: String,
    /// The device's agents, in agent order: a queue's or allocation's `agent` indexes this.
    pub agents: Vec<AgentDescription>,
    /// `barrier-value` or `barrier-and`.
    pub wait_strategy: String,
    /// When the capture began, nanoseconds since the Unix epoch.
    pub started_unix_ns: u64,
}

/// Where in a buffer an operation reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BufferRange {
    pub buffer: u64,
    pub offset: u64,
    pub length: u64,
}

/// A semaphore and a value: a wait or a signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Point {
    pub semaphore: u64,
    pub value: u64,
}

/// A memory kind, as the engine names it (`device-local`, `host-visible`,
/// `host-visible-device`).
pub type MemoryKindName = String;

/// A pool's settings (`PoolConfig`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolSettings {
    pub kind: MemoryKindName,
    pub agent: u32,
    /// Bytes the pool allocates at a time (read from older captures as `block_size`).
    #[serde(alias = "block_size")]
    pub slab_size: u64,
    pub granule: u64,
    pub reserve: u64,
    pub max_size: u64,
    /// `eager`, `keep-reserve`, `manual`: the engine's `TrimPolicy` names.
    pub trim: String,
    /// `fail`, or `wait:<nanoseconds>`.
    pub exhaustion: String,
}

/// A pointer inside raw kernargs that was the address of a captured buffer: replay writes the
/// replayed buffer's address plus `delta` there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relocation {
    /// Byte offset of the 8-byte pointer in the kernargs.
    pub at: u32,
    pub buffer: u64,
    pub delta: u64,
}

/// One queue operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Operation {
    Barrier,
    Fill {
        target: BufferRange,
        #[serde(with = "serde_bytes")]
        pattern: Vec<u8>,
    },
    Copy {
        source: BufferRange,
        target: BufferRange,
    },
    Update {
        buffer: u64,
        offset: u64,
        #[serde(with = "serde_bytes")]
        data: Vec<u8>,
    },
    /// A HAL-layout dispatch: bindings, then constants.
    Dispatch {
        executable: u64,
        kernel: String,
        grid: [u32; 3],
        workgroup: Option<[u16; 3]>,
        bindings: Vec<BufferRange>,
        constants: Vec<u32>,
    },
    /// A dispatch with caller-built kernargs; pointers to captured buffers are relocated.
    RawDispatch {
        executable: u64,
        kernel: String,
        grid: [u32; 3],
        workgroup: Option<[u16; 3]>,
        #[serde(with = "serde_bytes")]
        kernargs: Vec<u8>,
        relocations: Vec<Relocation>,
    },
    /// A finished command buffer and this execution's binding table (`None`: an empty slot).
    Execute {
        command_buffer: u64,
        table: Vec<Option<BufferRange>>,
    },
    /// `Queue::alloca`: `buffer` is the id of the buffer it returned.
    Alloca {
        pool: u64,
        size: u64,
        buffer: u64,
    },
    Dealloca {
        buffer: u64,
    },
    /// A host call: the function itself is the program's, so replay runs an empty call in its
    /// place (same queue position, waits and signals).
    HostCall,
    /// A file read into `target`: the file is the program's; replay refuses to run a capture
    /// that holds one (docs/REPLAY_FORMAT.md).
    ReadFile {
        target: BufferRange,
        file_offset: u64,
    },
    /// A file write from `source` (replay refuses it as a read).
    WriteFile {
        source: BufferRange,
        file_offset: u64,
    },
}

impl Operation {
    /// The operation's kind: the one enum submissions and profiles use too.
    pub fn kind(&self) -> OperationKind {
        match self {
            Operation::Barrier => OperationKind::Barrier,
            Operation::Fill { .. } => OperationKind::Fill,
            Operation::Copy { .. } => OperationKind::Copy,
            Operation::Update { .. } => OperationKind::Update,
            Operation::Dispatch { .. } => OperationKind::Dispatch,
            Operation::RawDispatch { .. } => OperationKind::RawDispatch,
            Operation::Execute { .. } => OperationKind::Execute,
            Operation::Alloca { .. } => OperationKind::Alloca,
            Operation::Dealloca { .. } => OperationKind::Dealloca,
            Operation::HostCall => OperationKind::HostCall,
            Operation::ReadFile { .. } => OperationKind::ReadFile,
            Operation::WriteFile { .. } => OperationKind::WriteFile,
        }
    }
}

/// A buffer range a recorded command uses: a captured buffer, or a binding-table slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CommandRange {
    Static(BufferRange),
    Slot { slot: u32, offset: u64, length: u64 },
}

/// One recording call of a command buffer, in recording order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Command {
    Dispatch {
        executable: u64,
        kernel: String,
        grid: [u32; 3],
        workgroup: Option<[u16; 3]>,
        bindings: Vec<CommandRange>,
        constants: Vec<u32>,
    },
    DispatchIndirect {
        executable: u64,
        kernel: String,
        grid: CommandRange,
        workgroup: Option<[u16; 3]>,
        bindings: Vec<CommandRange>,
        constants: Vec<u32>,
    },
    Fill {
        target: CommandRange,
        #[serde(with = "serde_bytes")]
        pattern: Vec<u8>,
    },
    Copy {
        source: CommandRange,
        target: CommandRange,
    },
    Update {
        target: CommandRange,
        #[serde(with = "serde_bytes")]
        data: Vec<u8>,
    },
    Barrier,
    ProfileMarker {
        target: CommandRange,
        marker: u32,
    },
    /// `new_block`: labels are numbered from 0 in the order they were made.
    NewBlock,
    Begin {
        label: u32,
    },
    Branch {
        label: u32,
    },
    /// `branch_if`: `compare` is the `CompareOp` name.
    BranchIf {
        value: CommandRange,
        compare: String,
        operand: u64,
        taken: u32,
        not_taken: u32,
    },
    Return,
}

/// One record of the stream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReplayRecord {
    /// A code object's bytes, stored once; executables name it by hash.
    CodeObject {
        hash: CodeObjectHash,
        #[serde(with = "serde_bytes")]
        bytes: Vec<u8>,
    },
    Executable {
        id: u64,
        code_object: CodeObjectHash,
    },
    Queue {
        id: u64,
        agent: u32,
        /// `low`, `normal` or `high`.
        priority: String,
        cu_mask: Option<Vec<u32>>,
    },
    Semaphore {
        id: u64,
        initial: u64,
    },
    Allocation {
        id: u64,
        agent: u32,
        kind: MemoryKindName,
        size: u64,
    },
    Pool {
        id: u64,
        settings: PoolSettings,
    },
    /// The last handle of a buffer dropped.
    Free {
        buffer: u64,
    },
    /// The last handle of a queue dropped (format 1.1). Since format 1.2 its work still runs,
    /// and the queue goes once it has drained; before, the HSA queue was destroyed here and
    /// work it had not run was failed.
    QueueDropped {
        queue: u64,
    },
    /// `Queue::cancel` (format 1.2): work not yet on the device failed, and so does later work.
    QueueCancelled {
        queue: u64,
    },
    /// `Buffer::write`: the bytes the host wrote.
    HostWrite {
        buffer: u64,
        offset: u64,
        #[serde(with = "serde_bytes")]
        data: Vec<u8>,
    },
    /// `Buffer::read`: what the program read back, as a checksum.
    HostRead {
        range: BufferRange,
        checksum: u32,
    },
    /// `Semaphore::signal` from the host.
    HostSignal(Point),
    /// `Semaphore::fail` from the host.
    HostFail {
        semaphore: u64,
        message: String,
    },
    /// A host wait that returned satisfied, or a host read of a semaphore's value that saw it
    /// advance: either way the program went on knowing the semaphore reached `value`.
    HostWait(Point),
    /// A queue operation, accepted by the engine.
    Operation {
        queue: u64,
        /// Nanoseconds since the capture began.
        time_ns: u64,
        waits: Vec<Point>,
        signals: Vec<Point>,
        operation: Operation,
    },
    /// A command buffer that finished recording.
    CommandBuffer {
        id: u64,
        agent: u32,
        /// `one-shot` or `reusable`.
        usage: String,
        block_packets: u32,
        block_kernarg_bytes: u32,
        commands: Vec<Command>,
    },
    /// At capture end: a live host-visible buffer's contents.
    FinalChecksum {
        buffer: u64,
        length: u64,
        checksum: u32,
    },
    /// The last record: the capture ended cleanly after the queues drained.
    CaptureEnd {
        time_ns: u64,
    },
}

/// The checksum both ends use: CRC-32 (IEEE), as the container's chunks.
pub fn checksum(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// [`checksum`] fed a part at a time: the same value for the same bytes.
#[derive(Clone, Default)]
pub struct Checksummer(crc32fast::Hasher);

impl Checksummer {
    /// Feeds the next bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The checksum of everything fed.
    pub fn finish(self) -> u32 {
        self.0.finalize()
    }
}

#[cfg(test)]
mod tests {
    use super::PoolSettings;

    /// A capture written before the pool's provider allocation was called a slab names the field
    /// `block_size`; it still reads, into `slab_size`.
    #[test]
    fn pool_settings_written_with_the_old_field_name_still_read() {
        #[derive(serde::Serialize)]
        struct Older<'a> {
            kind: &'a str,
            agent: u32,
            block_size: u64,
            granule: u64,
            reserve: u64,
            max_size: u64,
            trim: &'a str,
            exhaustion: &'a str,
        }
        let older = Older {
            kind: "host-visible",
            agent: 0,
            block_size: 1 << 20,
            granule: 256,
            reserve: 0,
            max_size: 4 << 20,
            trim: "manual",
            exhaustion: "fail",
        };
        let bytes = rmp_serde::to_vec_named(&older).unwrap();
        let read: PoolSettings = rmp_serde::from_slice(&bytes).unwrap();
        assert_eq!((read.slab_size, read.max_size, read.trim.as_str()), (1 << 20, 4 << 20, "manual"));
        let written = rmp_serde::to_vec_named(&read).unwrap();
        assert!(written.windows(9).any(|name| name == b"slab_size"), "new captures name the field slab_size");
    }
}
