//! The capture modes, their names, and the configuration a capture starts from (in code, or
//! from `AQUEDUCT_PROFILE` and `AQUEDUCT_PROFILE_OUTPUT`).

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use crate::error::{EngineError, EngineResult};

/// A set of capture modes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ProfileModes(u8);

impl ProfileModes {
    /// No mode.
    pub const NONE: ProfileModes = ProfileModes(0);
    /// One host record per submission: queue, operation, epoch, waits with the tier that resolved
    /// each, signals, packets, kernarg bytes, and host timestamps.
    pub const QUEUE_EVENTS: ProfileModes = ProfileModes(1);
    /// The device's begin and end of each submission, from its completion signals' timestamps.
    pub const DEVICE_QUEUE_EVENTS: ProfileModes = ProfileModes(1 << 1);
    /// Each dispatch (direct, or from a command buffer's execution) with its device begin and end.
    pub const DISPATCH_EVENTS: ProfileModes = ProfileModes(1 << 2);
    /// Each loaded executable's code-object hash, target, version and kernel metadata.
    pub const EXECUTABLE_METADATA: ProfileModes = ProfileModes(1 << 3);
    /// Software counters per queue, sampled while the capture runs.
    pub const COUNTERS: ProfileModes = ProfileModes(1 << 4);
    /// Hardware performance counters, through ROCm's aqlprofile.
    pub const HARDWARE_COUNTERS: ProfileModes = ProfileModes(1 << 5);
    /// ATT/SQTT instruction traces, through ROCm's aqlprofile.
    pub const EXECUTABLE_TRACES: ProfileModes = ProfileModes(1 << 6);
    /// Every mode that needs nothing beyond the engine (what `all` names).
    pub const SOFTWARE: ProfileModes = ProfileModes(0b1_1111);
    /// The modes that go through aqlprofile.
    pub const AQLPROFILE: ProfileModes = ProfileModes(0b110_0000);

    const NAMES: [(&'static str, ProfileModes); 7] = [
        ("queue-events", Self::QUEUE_EVENTS),
        ("device-queue-events", Self::DEVICE_QUEUE_EVENTS),
        ("dispatch-events", Self::DISPATCH_EVENTS),
        ("executable-metadata", Self::EXECUTABLE_METADATA),
        ("counters", Self::COUNTERS),
        ("hardware-counters", Self::HARDWARE_COUNTERS),
        ("executable-traces", Self::EXECUTABLE_TRACES),
    ];

    /// Whether every mode of `modes` is in the set.
    pub fn contains(self, modes: ProfileModes) -> bool {
        self.0 & modes.0 == modes.0
    }

    /// Whether any mode of `modes` is in the set.
    pub fn intersects(self, modes: ProfileModes) -> bool {
        self.0 & modes.0 != 0
    }

    /// The modes in both sets.
    pub fn intersection(self, modes: ProfileModes) -> ProfileModes {
        ProfileModes(self.0 & modes.0)
    }

    /// Whether the set has no mode.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The names of the modes in the set, in declaration order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Self::NAMES.into_iter().filter(move |(_, mode)| self.contains(*mode)).map(|(name, _)| name)
    }
}

impl std::ops::BitOr for ProfileModes {
    type Output = ProfileModes;

    fn bitor(self, other: ProfileModes) -> ProfileModes {
        ProfileModes(self.0 | other.0)
    }
}

impl FromStr for ProfileModes {
    type Err = EngineError;

    /// A comma-separated list of mode names, or `all` for [`ProfileModes::SOFTWARE`].
    fn from_str(text: &str) -> EngineResult<Self> {
        let mut modes = ProfileModes::NONE;
        for name in text.split(',').map(str::trim) {
            if name == "all" {
                modes = modes | Self::SOFTWARE;
                continue;
            }
            let Some((_, mode)) = Self::NAMES.iter().find(|(known, _)| *known == name) else {
                let known: Vec<&str> = Self::NAMES.iter().map(|(known, _)| *known).collect();
                return Err(EngineError::InvalidArgument {
                    what: "profile modes",
                    reason: format!("unknown mode `{name}` in `{text}`; expected all or {}", known.join(", ")),
                });
            };
            modes = modes | *mode;
        }
        Ok(modes)
    }
}

impl fmt::Display for ProfileModes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.names().collect();
        f.write_str(&names.join(","))
    }
}

/// What a capture records and where it writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileConfig {
    /// The modes to capture.
    pub modes: ProfileModes,
    /// The `.aqprof` file the capture streams into.
    pub output: PathBuf,
    /// Records each queue's buffer holds before the writer thread drains it; a record that finds
    /// it full is dropped and counted.
    pub queue_buffer_records: usize,
    /// How often the writer samples the software counters (`counters`).
    pub counter_interval: Duration,
    /// How long ending a capture waits for work in flight to drain before it writes what it
    /// has (those submissions' records lack their completion).
    pub end_timeout: Duration,
}

/// Environment variable naming the modes of a capture that starts with the device.
pub const PROFILE_ENV: &str = "AQUEDUCT_PROFILE";
/// Environment variable naming that capture's output file.
pub const PROFILE_OUTPUT_ENV: &str = "AQUEDUCT_PROFILE_OUTPUT";
/// The output file when `AQUEDUCT_PROFILE_OUTPUT` is not set.
pub const DEFAULT_PROFILE_OUTPUT: &str = "aqueduct.aqprof";

impl ProfileConfig {
    /// Every software mode, into `output`, with the default buffer and intervals.
    pub fn new(output: impl Into<PathBuf>) -> Self {
        Self {
            modes: ProfileModes::SOFTWARE,
            output: output.into(),
            queue_buffer_records: 1 << 16,
            counter_interval: Duration::from_millis(10),
            end_timeout: Duration::from_secs(10),
        }
    }

    /// Sets the `modes` field.
    pub fn modes(mut self, modes: ProfileModes) -> Self {
        self.modes = modes;
        self
    }

    /// Sets the `queue_buffer_records` field.
    pub fn queue_buffer_records(mut self, records: usize) -> Self {
        self.queue_buffer_records = records;
        self
    }

    /// The capture the environment asks for: `AQUEDUCT_PROFILE=modes` (unset or empty: none) and
    /// `AQUEDUCT_PROFILE_OUTPUT=path` (default `aqueduct.aqprof`).
    pub fn from_env() -> EngineResult<Option<Self>> {
        let Some(modes) = std::env::var_os(PROFILE_ENV) else { return Ok(None) };
        let modes = modes.to_str().ok_or_else(|| EngineError::InvalidArgument {
            what: "profile modes",
            reason: format!("{PROFILE_ENV} is not UTF-8"),
        })?;
        if modes.trim().is_empty() {
            return Ok(None);
        }
        let output = std::env::var_os(PROFILE_OUTPUT_ENV).map_or_else(|| DEFAULT_PROFILE_OUTPUT.into(), PathBuf::from);
        Ok(Some(Self::new(output).modes(modes.parse()?)))
    }

    /// Checks the config: at least one mode, a queue buffer of at least one record, and a
    /// counter interval above zero.
    pub fn validate(&self) -> EngineResult<()> {
        let invalid = |reason: &str| Err(EngineError::InvalidArgument { what: "profile", reason: reason.into() });
        if self.modes.is_empty() {
            return invalid("no capture mode is set");
        }
        if self.queue_buffer_records == 0 {
            return invalid("queue_buffer_records must be at least 1");
        }
        if self.counter_interval.is_zero() {
            return invalid("counter_interval must be above zero");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_print_and_refuse_unknown_names() {
        let modes: ProfileModes = "queue-events, dispatch-events".parse().unwrap();
        assert!(modes.contains(ProfileModes::QUEUE_EVENTS) && modes.contains(ProfileModes::DISPATCH_EVENTS));
        assert!(!modes.contains(ProfileModes::COUNTERS));
        assert_eq!(modes.to_string(), "queue-events,dispatch-events");
        let all: ProfileModes = "all".parse().unwrap();
        assert_eq!(all, ProfileModes::SOFTWARE);
        assert!(!all.intersects(ProfileModes::AQLPROFILE), "all never asks for aqlprofile");
        assert_eq!("hardware-counters".parse::<ProfileModes>().unwrap(), ProfileModes::HARDWARE_COUNTERS);
        for bad in ["", "queue", "all,bogus", "queue-events,"] {
            let error = bad.parse::<ProfileModes>().unwrap_err();
            assert!(matches!(error, EngineError::InvalidArgument { what: "profile modes", .. }), "{bad}: {error}");
        }
    }

    #[test]
    fn a_config_without_modes_or_buffer_is_refused() {
        assert!(ProfileConfig::new("x.aqprof").validate().is_ok());
        assert!(ProfileConfig::new("x.aqprof").modes(ProfileModes::NONE).validate().is_err());
        assert!(ProfileConfig::new("x.aqprof").queue_buffer_records(0).validate().is_err());
    }
}
