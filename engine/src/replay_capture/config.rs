//! How a replay capture runs: in code, or from `AQUEDUCT_REPLAY_OUTPUT`.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::{EngineError, EngineResult};

/// The variable naming a replay output file: a device opened while it is set captures into it.
pub const REPLAY_OUTPUT_ENV: &str = "AQUEDUCT_REPLAY_OUTPUT";

/// How a replay capture runs. `ReplayConfig::new(path)` gives the defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayConfig {
    /// The `.aqreplay` file written.
    pub output: PathBuf,
    /// Most bytes of records waiting for the writer; a producer that finds the buffer full
    /// waits. 64 MiB by default.
    pub buffer_bytes: usize,
    /// How long a producer waits for room before the capture fails (loudly: an error is logged
    /// and returned when it ends, and the file is left without its end chunk). 10 s by default.
    pub stall_timeout: Duration,
}

impl ReplayConfig {
    /// A capture into `output`, with a 64 MiB buffer and a 10 s stall timeout.
    pub fn new(output: impl Into<PathBuf>) -> Self {
        Self { output: output.into(), buffer_bytes: 64 << 20, stall_timeout: Duration::from_secs(10) }
    }

    /// With at most `bytes` of records waiting for the writer.
    pub fn buffer_bytes(mut self, bytes: usize) -> Self {
        self.buffer_bytes = bytes;
        self
    }

    /// Failing once a producer waited `timeout` for room (`Duration::MAX`: never).
    pub fn stall_timeout(mut self, timeout: Duration) -> Self {
        self.stall_timeout = timeout;
        self
    }

    /// The capture `AQUEDUCT_REPLAY_OUTPUT` asks for, if it is set and not empty.
    pub fn from_env() -> EngineResult<Option<Self>> {
        let Some(output) = std::env::var_os(REPLAY_OUTPUT_ENV) else { return Ok(None) };
        if output.is_empty() {
            return Ok(None);
        }
        Ok(Some(Self::new(output)))
    }

    /// Checks the settings: a buffer of at least 4 KiB and a stall timeout above zero.
    pub fn validate(&self) -> EngineResult<()> {
        let invalid = |reason: &str| Err(EngineError::InvalidArgument { what: "replay", reason: reason.into() });
        if self.buffer_bytes < 4096 {
            return invalid("buffer_bytes must be at least 4096");
        }
        if self.stall_timeout.is_zero() {
            return invalid("stall_timeout must be above zero");
        }
        Ok(())
    }
}
