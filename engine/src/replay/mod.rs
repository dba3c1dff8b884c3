//! Replay: a device records its program's device-level stream into a `.aqreplay` file
//! (format: docs/REPLAY_FORMAT.md; the records are `aqueduct_profile::replay`), and
//! [`Replay`] runs such a file again, on its own.
//!
//! - `crate::replay_capture`: the recording side, below every object that records (the
//!   configuration, the ids objects carry, the names the file gives engine enums, the running
//!   capture with its bounded buffer and writer thread);
//! - `run.rs`: the replayer, above everything it replays;
//! - `waits.rs`: the check, before a run, that every wait of the stream can be met.

mod run;
mod waits;

pub use run::{DEFAULT_REPLAY_MEMORY_BUDGET, Replay, ReplayOptions, ReplayOutcome, ReplaySummary, ReplayTiming};

pub use crate::replay_capture::{REPLAY_OUTPUT_ENV, ReplayConfig};
