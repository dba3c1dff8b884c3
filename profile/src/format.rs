//! The chunked capture file both captures write: a preamble (magic and format version), then
//! checksummed chunks (a header, records, an end). A [`CaptureFormat`] names one file type: the
//! profile bundle (`.aqprof`, [`ProfileFormat`], docs/PROFILE_FORMAT.md) and the replay capture
//! (`.aqreplay`, `crate::replay::ReplayFormat`, docs/REPLAY_FORMAT.md) share the container, its
//! checks and its errors; keep the documents in step with this file.
//!
//! Both ends stream: the writer holds at most one chunk of encoded records, the reader at most one
//! chunk's payload and the record it is decoding, so a capture of any length passes through
//! bounded memory.

use std::io::{self, Read, Write};

use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::record::{BundleHeader, Record};

/// One file type in the chunked container: its magic, version, header and records.
pub trait CaptureFormat {
    /// The first 8 bytes of every file. 0x89 catches 7-bit transfers and the trailing `\n`
    /// catches line-ending conversion, as PNG's signature does.
    const MAGIC: [u8; 8];
    /// Readers refuse a file of a newer major version.
    const MAJOR: u16;
    /// Readers accept any minor version of their major: minor versions only add.
    const MINOR: u16;
    /// What errors call the file: "aqueduct profile (.aqprof)".
    const NAME: &'static str;
    /// The header chunk's one value.
    type Header: Serialize + DeserializeOwned;
    /// One record of a records chunk.
    type Record: Serialize + DeserializeOwned;
}

/// The profile bundle, `.aqprof` (docs/PROFILE_FORMAT.md).
pub struct ProfileFormat;

impl CaptureFormat for ProfileFormat {
    const MAGIC: [u8; 8] = MAGIC;
    const MAJOR: u16 = FORMAT_MAJOR;
    const MINOR: u16 = FORMAT_MINOR;
    const NAME: &'static str = "aqueduct profile (.aqprof)";
    type Header = BundleHeader;
    type Record = Record;
}

/// The first 8 bytes of every profile bundle.
pub const MAGIC: [u8; 8] = [0x89, b'A', b'Q', b'P', b'R', b'O', b'F', b'\n'];
/// Readers refuse a bundle of a newer major version; see docs/PROFILE_FORMAT.md, "Versioning".
pub const FORMAT_MAJOR: u16 = 1;
/// Readers accept any minor version of their major: minor versions only add.
pub const FORMAT_MINOR: u16 = 0;

/// Writes a profile bundle.
pub type ProfileWriter<W> = CaptureWriter<W, ProfileFormat>;
/// Reads a profile bundle.
pub type ProfileReader<R> = CaptureReader<R, ProfileFormat>;
/// No chunk's payload may exceed this; a length field above it is corruption, refused before any
/// allocation.
pub const MAX_CHUNK_PAYLOAD: u32 = 16 << 20;
/// The writer closes a records chunk once its payload reaches this many bytes.
pub const DEFAULT_CHUNK_TARGET: usize = 64 << 10;

const PREAMBLE_BYTES: usize = 12;
const CHUNK_HEADER_BYTES: usize = 16;
/// The chunk header's bytes that its checksum covers (all but the checksum itself).
const CHECKED_HEADER_BYTES: usize = 12;
/// The reader grows a payload buffer by at most this much per read, so a length field larger than
/// the data that follows never allocates more than the data.
const READ_STEP: usize = 64 << 10;

/// The kinds of chunk. A reader skips a kind it does not know (after checking its checksum): that is
/// how a minor version adds record types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum ChunkKind {
    Header = 1,
    Records = 2,
    End = 3,
}

/// The format version of a bundle, from its preamble.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FormatVersion {
    pub major: u16,
    pub minor: u16,
}

/// Why a capture file could not be written or read. Each hostile-input case has its own variant.
#[derive(Debug, thiserror::Error)]
pub enum CaptureFileError {
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    #[error("not an {expected}: the file starts with {found:02x?}")]
    BadMagic { expected: &'static str, found: Vec<u8> },
    #[error("the file is truncated at byte {offset}: {context}")]
    Truncated { offset: u64, context: &'static str },
    #[error(
        "the file's format version is {}.{}, newer than this aqueduct reads ({}.x): use a newer aqueduct",
        found.major, found.minor, supported_major
    )]
    NewerVersion { found: FormatVersion, supported_major: u16 },
    #[error("the file's format version {}.{} was never a released format", found.major, found.minor)]
    UnsupportedVersion { found: FormatVersion },
    #[error("the chunk at byte {offset} declares a {length}-byte payload, over the {limit}-byte limit")]
    ChunkTooLarge { offset: u64, length: u32, limit: u32 },
    #[error("the chunk at byte {offset} fails its checksum (stored {stored:08x}, computed {computed:08x})")]
    ChecksumMismatch { offset: u64, stored: u32, computed: u32 },
    #[error("the chunk at byte {offset} does not decode: {reason}")]
    Undecodable { offset: u64, reason: String },
    #[error("the file is malformed at byte {offset}: {reason}")]
    Malformed { offset: u64, reason: String },
    #[error("a record encodes to {size} bytes, over the {limit}-byte chunk limit")]
    RecordTooLarge { size: usize, limit: u32 },
    #[error("a record cannot be encoded: {0}")]
    Encode(String),
}

pub type Result<T, E = CaptureFileError> = std::result::Result<T, E>;

/// Writes a capture file as records arrive. Call [`CaptureWriter::finish`]: a writer dropped
/// without it writes its pending records but no end chunk, so readers report the file as
/// truncated, which is what a capture cut short is.
pub struct CaptureWriter<W: Write, F: CaptureFormat> {
    out: Option<W>,
    pending: Vec<u8>,
    pending_records: u32,
    records_written: u64,
    bytes_written: u64,
    chunk_target: usize,
    format: PhantomData<fn() -> F>,
}

impl<W: Write, F: CaptureFormat> CaptureWriter<W, F> {
    /// Writes the preamble and the header chunk.
    pub fn new(out: W, header: &F::Header) -> Result<Self> {
        Self::with_chunk_target(out, header, DEFAULT_CHUNK_TARGET)
    }

    /// As [`CaptureWriter::new`], closing records chunks at `chunk_target` bytes (clamped to the
    /// format's limit).
    pub fn with_chunk_target(mut out: W, header: &F::Header, chunk_target: usize) -> Result<Self> {
        out.write_all(&F::MAGIC)?;
        out.write_all(&F::MAJOR.to_le_bytes())?;
        out.write_all(&F::MINOR.to_le_bytes())?;
        let payload = encode_named(header)?;
        if payload.len() > MAX_CHUNK_PAYLOAD as usize {
            return Err(CaptureFileError::RecordTooLarge { size: payload.len(), limit: MAX_CHUNK_PAYLOAD });
        }
        write_chunk(&mut out, ChunkKind::Header, 1, &payload)?;
        Ok(CaptureWriter {
            out: Some(out),
            pending: Vec::new(),
            pending_records: 0,
            records_written: 0,
            bytes_written: (PREAMBLE_BYTES + CHUNK_HEADER_BYTES + payload.len()) as u64,
            chunk_target: chunk_target.clamp(1, MAX_CHUNK_PAYLOAD as usize),
            format: PhantomData,
        })
    }

    /// Appends one record; writes a chunk when the pending payload reaches the chunk target.
    pub fn append(&mut self, record: &F::Record) -> Result<()> {
        let start = self.pending.len();
        if let Err(error) = rmp_serde::encode::write_named(&mut self.pending, record) {
            self.pending.truncate(start);
            return Err(CaptureFileError::Encode(error.to_string()));
        }
        let size = self.pending.len() - start;
        if size > MAX_CHUNK_PAYLOAD as usize {
            self.pending.truncate(start);
            return Err(CaptureFileError::RecordTooLarge { size, limit: MAX_CHUNK_PAYLOAD });
        }
        if self.pending.len() > MAX_CHUNK_PAYLOAD as usize {
            // The new record does not fit beside the pending ones: they go first, alone.
            let record_bytes = self.pending.split_off(start);
            self.write_pending_chunk()?;
            self.pending = record_bytes;
        }
        self.pending_records += 1;
        if self.pending.len() >= self.chunk_target {
            self.write_pending_chunk()?;
        }
        Ok(())
    }

    /// Writes the pending records as a chunk and flushes the output.
    pub fn flush(&mut self) -> Result<()> {
        self.write_pending_chunk()?;
        self.output().flush()?;
        Ok(())
    }

    /// Records appended so far.
    pub fn records(&self) -> u64 {
        self.records_written + u64::from(self.pending_records)
    }

    /// Bytes written to the output so far (chunks not yet written excluded).
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    /// Writes the pending records and the end chunk, flushes, and hands the output back.
    pub fn finish(mut self) -> Result<W> {
        self.write_pending_chunk()?;
        let total = self.records_written;
        let mut out = self.out.take().expect("the output is present until finish or drop");
        write_chunk(&mut out, ChunkKind::End, 0, &total.to_le_bytes())?;
        out.flush()?;
        Ok(out)
    }

    fn output(&mut self) -> &mut W {
        self.out.as_mut().expect("the output is present until finish or drop")
    }

    fn write_pending_chunk(&mut self) -> Result<()> {
        if self.pending_records == 0 {
            return Ok(());
        }
        let out = self.out.as_mut().expect("the output is present until finish or drop");
        write_chunk(out, ChunkKind::Records, self.pending_records, &self.pending)?;
        self.bytes_written += (CHUNK_HEADER_BYTES + self.pending.len()) as u64;
        self.records_written += u64::from(self.pending_records);
        self.pending.clear();
        self.pending_records = 0;
        Ok(())
    }
}

impl<W: Write, F: CaptureFormat> Drop for CaptureWriter<W, F> {
    fn drop(&mut self) {
        if self.out.is_some() {
            // Best effort, as BufWriter's drop: keep what was captured; the missing end chunk tells
            // readers the capture did not finish.
            let _ = self.flush();
        }
    }
}

fn encode_named<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    rmp_serde::to_vec_named(value).map_err(|error| CaptureFileError::Encode(error.to_string()))
}

fn chunk_checksum(checked_header: &[u8], payload: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(checked_header);
    hasher.update(payload);
    hasher.finalize()
}

fn write_chunk<W: Write>(out: &mut W, kind: ChunkKind, records: u32, payload: &[u8]) -> io::Result<()> {
    let length = u32::try_from(payload.len()).expect("payloads are capped below u32::MAX");
    let mut header = [0u8; CHUNK_HEADER_BYTES];
    header[0] = kind as u8;
    // header[1..4]: flags, zero in format 1.
    header[4..8].copy_from_slice(&length.to_le_bytes());
    header[8..12].copy_from_slice(&records.to_le_bytes());
    let checksum = chunk_checksum(&header[..CHECKED_HEADER_BYTES], payload);
    header[12..16].copy_from_slice(&checksum.to_le_bytes());
    out.write_all(&header)?;
    out.write_all(payload)
}

/// Reads a capture file as a stream of records: `CaptureReader` is an iterator of
/// `Result<F::Record, CaptureFileError>` that ends after the first error.
pub struct CaptureReader<R: Read, F: CaptureFormat> {
    input: R,
    offset: u64,
    version: FormatVersion,
    header: F::Header,
    /// The records chunk being decoded, one record per `next`.
    current: Option<RecordsChunk>,
    records_read: u64,
    done: bool,
}

impl<R: Read, F: CaptureFormat> CaptureReader<R, F> {
    /// Reads and checks the preamble and the header chunk.
    pub fn new(mut input: R) -> Result<Self> {
        let mut preamble = [0u8; PREAMBLE_BYTES];
        let filled = read_up_to(&mut input, &mut preamble)?;
        let magic = filled.min(F::MAGIC.len());
        if preamble[..magic] != F::MAGIC[..magic] {
            return Err(CaptureFileError::BadMagic { expected: F::NAME, found: preamble[..magic].to_vec() });
        }
        if filled < PREAMBLE_BYTES {
            return Err(CaptureFileError::Truncated { offset: filled as u64, context: "in the preamble" });
        }
        let version = FormatVersion {
            major: u16::from_le_bytes([preamble[8], preamble[9]]),
            minor: u16::from_le_bytes([preamble[10], preamble[11]]),
        };
        if version.major > F::MAJOR {
            return Err(CaptureFileError::NewerVersion { found: version, supported_major: F::MAJOR });
        }
        if version.major == 0 {
            return Err(CaptureFileError::UnsupportedVersion { found: version });
        }
        let mut offset = PREAMBLE_BYTES as u64;
        let chunk = read_chunk(&mut input, &mut offset)?
            .ok_or(CaptureFileError::Truncated { offset, context: "the header chunk is missing" })?;
        if chunk.kind != ChunkKind::Header as u8 {
            return Err(CaptureFileError::Malformed {
                offset: chunk.offset,
                reason: format!("the first chunk is of kind {}, not the header", chunk.kind),
            });
        }
        let header = rmp_serde::from_slice(&chunk.payload)
            .map_err(|error| CaptureFileError::Undecodable { offset: chunk.offset, reason: error.to_string() })?;
        Ok(CaptureReader { input, offset, version, header, current: None, records_read: 0, done: false })
    }

    pub fn header(&self) -> &F::Header {
        &self.header
    }

    pub fn version(&self) -> FormatVersion {
        self.version
    }

    /// The next record: from the current records chunk, else from the next one; `None` after the
    /// end chunk.
    fn next_record(&mut self) -> Result<Option<F::Record>> {
        loop {
            if let Some(chunk) = &mut self.current {
                if let Some(record) = chunk.next_record::<F::Record>()? {
                    self.records_read += 1;
                    return Ok(Some(record));
                }
                self.current = None;
            }
            let Some(chunk) = read_chunk(&mut self.input, &mut self.offset)? else {
                return Err(CaptureFileError::Truncated {
                    offset: self.offset,
                    context: "the end chunk is missing (the capture did not finish)",
                });
            };
            match chunk.kind {
                kind if kind == ChunkKind::Records as u8 => {
                    self.current = Some(RecordsChunk { chunk, position: 0, decoded: 0 });
                }
                kind if kind == ChunkKind::End as u8 => {
                    self.check_end(&chunk)?;
                    return Ok(None);
                }
                kind if kind == ChunkKind::Header as u8 => {
                    return Err(CaptureFileError::Malformed {
                        offset: chunk.offset,
                        reason: "a second header chunk".to_string(),
                    });
                }
                // A kind from a newer minor version: its checksum held, so skip it.
                _ => {}
            }
        }
    }

    fn check_end(&mut self, chunk: &Chunk) -> Result<()> {
        let total: [u8; 8] = chunk.payload.as_slice().try_into().map_err(|_| CaptureFileError::Malformed {
            offset: chunk.offset,
            reason: format!("the end chunk holds {} bytes, not 8", chunk.payload.len()),
        })?;
        let total = u64::from_le_bytes(total);
        if total != self.records_read {
            return Err(CaptureFileError::Malformed {
                offset: chunk.offset,
                reason: format!("the end chunk counts {total} records, the file holds {}", self.records_read),
            });
        }
        let mut probe = [0u8; 1];
        if read_up_to(&mut self.input, &mut probe)? != 0 {
            return Err(CaptureFileError::Malformed {
                offset: self.offset,
                reason: "data after the end chunk".to_string(),
            });
        }
        Ok(())
    }
}

impl<R: Read, F: CaptureFormat> Iterator for CaptureReader<R, F> {
    type Item = Result<F::Record>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let next = self.next_record().transpose();
        // After the end chunk or an error, the reader is spent.
        self.done = !matches!(next, Some(Ok(_)));
        next
    }
}

impl<R: Read, F: CaptureFormat> std::iter::FusedIterator for CaptureReader<R, F> {}

/// Reads the next chunk; `None` at a clean end of input (between chunks).
fn read_chunk<R: Read>(input: &mut R, offset: &mut u64) -> Result<Option<Chunk>> {
    let chunk_offset = *offset;
    let mut header = [0u8; CHUNK_HEADER_BYTES];
    let filled = read_up_to(input, &mut header)?;
    *offset += filled as u64;
    if filled == 0 {
        return Ok(None);
    }
    if filled < CHUNK_HEADER_BYTES {
        return Err(CaptureFileError::Truncated { offset: *offset, context: "in a chunk header" });
    }
    let length = u32::from_le_bytes(header[4..8].try_into().expect("4 bytes"));
    let records = u32::from_le_bytes(header[8..12].try_into().expect("4 bytes"));
    let stored = u32::from_le_bytes(header[12..16].try_into().expect("4 bytes"));
    if length > MAX_CHUNK_PAYLOAD {
        return Err(CaptureFileError::ChunkTooLarge { offset: chunk_offset, length, limit: MAX_CHUNK_PAYLOAD });
    }
    let payload = read_bounded(input, length as usize)?;
    *offset += payload.len() as u64;
    if payload.len() < length as usize {
        return Err(CaptureFileError::Truncated { offset: *offset, context: "in a chunk payload" });
    }
    let computed = chunk_checksum(&header[..CHECKED_HEADER_BYTES], &payload);
    if computed != stored {
        return Err(CaptureFileError::ChecksumMismatch { offset: chunk_offset, stored, computed });
    }
    Ok(Some(Chunk { offset: chunk_offset, kind: header[0], records, payload }))
}

struct Chunk {
    offset: u64,
    kind: u8,
    records: u32,
    payload: Vec<u8>,
}

/// A records chunk whose checksum held, decoded one record at a time: its declared count is only
/// trusted as far as the payload bears it out.
struct RecordsChunk {
    chunk: Chunk,
    position: u64,
    decoded: u32,
}

impl RecordsChunk {
    fn next_record<T: DeserializeOwned>(&mut self) -> Result<Option<T>> {
        let chunk = &self.chunk;
        let undecodable = |reason: String| CaptureFileError::Undecodable { offset: chunk.offset, reason };
        let length = chunk.payload.len() as u64;
        if self.decoded == chunk.records {
            if self.position != length {
                return Err(undecodable(format!("bytes after the chunk's {} records", chunk.records)));
            }
            return Ok(None);
        }
        if self.position == length {
            return Err(undecodable(format!("the chunk declares {} records, holds {}", chunk.records, self.decoded)));
        }
        let mut cursor = io::Cursor::new(chunk.payload.as_slice());
        cursor.set_position(self.position);
        let mut decoder = rmp_serde::Deserializer::new(&mut cursor);
        let record =
            T::deserialize(&mut decoder).map_err(|error| undecodable(format!("record {}: {error}", self.decoded)))?;
        self.position = cursor.position();
        self.decoded += 1;
        Ok(Some(record))
    }
}

/// Fills `buffer` as far as the input allows; the count is short only at the end of input.
fn read_up_to<R: Read>(input: &mut R, buffer: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match input.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(filled)
}

/// Reads up to `length` bytes, growing the buffer only as data arrives.
fn read_bounded<R: Read>(input: &mut R, length: usize) -> io::Result<Vec<u8>> {
    let mut payload = Vec::with_capacity(length.min(READ_STEP));
    while payload.len() < length {
        let start = payload.len();
        let step = (length - start).min(READ_STEP);
        payload.resize(start + step, 0);
        let read = read_up_to(input, &mut payload[start..])?;
        payload.truncate(start + read);
        if read < step {
            break;
        }
    }
    Ok(payload)
}

/// A JSON encoding failure while exporting, as the capture file's I/O error.
pub(crate) fn json_error(error: serde_json::Error) -> CaptureFileError {
    CaptureFileError::Io(std::io::Error::other(error))
}
