//! Profile capture: a device streams queue, device and dispatch timing, executable metadata and
//! software counters into a `.aqprof` bundle (format: docs/PROFILE_FORMAT.md; the tools are in
//! `aqueduct-profile`).
//!
//! - `modes.rs`: the modes and [`ProfileConfig`] (also from `AQUEDUCT_PROFILE` and
//!   `AQUEDUCT_PROFILE_OUTPUT`);
//! - `clock.rs`: the one clock of a bundle, and device timestamps mapped onto it;
//! - `session.rs`: a running capture: per-queue bounded buffers and the writer thread;
//! - `executables.rs`: what the profile knows of loaded executables;
//! - `tracy.rs` (the `tracy` feature): the capture's device times as Tracy GPU zones, one GPU
//!   context per queue, and plots of each queue's occupancy;
//!
//! This module sits below the device and the queues: beginning and ending a capture on a device
//! is `device/profile.rs`, and a queue's part (stamping submissions, turning drained epochs into
//! records) is `queue/capture.rs`, which the session drives through [`DeviceQueue`].
//!
//! Capture never blocks a submission: records go to the queue's own bounded buffer, and a full
//! buffer drops (and counts) the record.

mod clock;
mod executables;
mod modes;
mod session;
#[cfg(any(feature = "tracy", test))]
pub(crate) mod tracy;

pub(crate) use clock::{SystemClockMap, host_now_ns};
pub(crate) use executables::ExecutableRegistry;
pub use modes::{DEFAULT_PROFILE_OUTPUT, PROFILE_ENV, PROFILE_OUTPUT_ENV, ProfileConfig, ProfileModes};
pub use session::ProfileReport;
pub(crate) use session::{DeviceQueue, ProfileSession, QueueCapture, create_output, spawn_writer};
