//! The aqueduct capture files. The profile bundle (`.aqprof`): the records a profile capture
//! writes and the offline tools over it (summary, dispatch listing, Chrome trace JSON, native
//! Perfetto protobuf and SVG timeline export). The replay capture (`.aqreplay`, [`replay`]): a
//! program's device-level stream. Both are one streaming chunked container ([`format`](mod@format)).
//!
//! The engine depends on this crate to write records; this crate depends on nothing of the engine,
//! so the tools read a bundle without opening a device. The file layout is in
//! docs/PROFILE_FORMAT.md.

pub mod chrome;
pub mod dispatches;
pub mod format;
pub mod perfetto;
pub mod record;
pub mod replay;
pub mod sample;
pub mod summary;
pub mod svg;
mod timeline;

pub use chrome::export_chrome;
pub use dispatches::{DispatchFormat, write_dispatches};
pub use format::{
    CaptureFileError, CaptureFormat, CaptureReader, CaptureWriter, DEFAULT_CHUNK_TARGET, FORMAT_MAJOR, FORMAT_MINOR,
    FormatVersion, MAGIC, MAX_CHUNK_PAYLOAD, ProfileFormat, ProfileReader, ProfileWriter,
};
pub use perfetto::export_perfetto;
pub use record::*;
pub use summary::{DurationStats, Summary, summarize};
pub use svg::export_svg;
