//! Beginning and ending a profile capture on a device: the session (`crate::profile`) and every
//! live queue's part of it, which the queues keep through [`DeviceQueue`].

use std::sync::Arc;

use aqueduct_hsa::aqlprofile::{AqlProfileLibrary, library_candidates};
use aqueduct_profile::{AgentDescription, BundleHeader, DeviceDescription, HostClock, Record};

use super::DeviceShared;
use crate::error::{EngineError, EngineResult};
use crate::profile::{ProfileConfig, ProfileModes, ProfileReport, ProfileSession, SystemClockMap};

impl DeviceShared {
    /// Begins a capture on every queue of the device, and on each queue created until it ends.
    pub fn begin_profile(self: &Arc<Self>, config: ProfileConfig) -> EngineResult<()> {
        config.validate()?;
        self.check_aqlprofile(config.modes)?;
        let mut slot = self.profile.lock().unwrap_or_else(|poison| poison.into_inner());
        if slot.as_ref().is_some_and(|session| session.bundle) {
            return Err(EngineError::ProfileState { reason: "a capture is already running on this device" });
        }
        // The Tracy view gives way to the capture, which shows the same zones.
        if let Some(view) = slot.take() {
            self.end_session(&view)?;
        }
        let clock = SystemClockMap::calibrate(&self.hsa)?;
        let header = BundleHeader {
            aqueduct_version: env!("CARGO_PKG_VERSION").to_string(),
            device: DeviceDescription {
                provider: self.hsa.kind().name().to_string(),
                agents: self
                    .agents
                    .iter()
                    .map(|agent| AgentDescription {
                        name: agent.info.name.clone(),
                        isa: agent.info.isa_names.first().cloned().unwrap_or_default(),
                    })
                    .collect(),
            },
            wait_strategy: super::strategy_name(self.strategy).to_string(),
            clock: HostClock { domain: "CLOCK_MONOTONIC".into(), tick_frequency_hz: clock.frequency_hz },
        };
        let session = ProfileSession::start(config, header, clock)?;
        if session.config.modes.contains(ProfileModes::EXECUTABLE_METADATA) {
            for metadata in self.executables.all() {
                session.push_device(Record::Executable(metadata));
            }
        }
        for queue in self.queues.live() {
            queue.attach_capture(&session)?;
        }
        *slot = Some(session);
        Ok(())
    }

    /// Ends the running capture: waits (up to the config's `end_timeout`) for the work in
    /// flight to drain, writes what is left and closes the file.
    pub fn end_profile(&self) -> EngineResult<ProfileReport> {
        let mut slot = self.profile.lock().unwrap_or_else(|poison| poison.into_inner());
        let Some(session) = slot.take_if(|session| session.bundle) else {
            return Err(EngineError::ProfileState { reason: "no capture is running on this device" });
        };
        let report = self.end_session(&session);
        #[cfg(feature = "tracy")]
        if let Err(error) = self.begin_tracy_view(&mut slot) {
            tracing::warn!(%error, "the Tracy view could not start again after the capture");
        }
        report
    }

    /// The Tracy view: GPU zones of every timed dispatch with no capture running (the `tracy`
    /// feature times packets for it). `slot` is the device's capture slot, held.
    #[cfg(feature = "tracy")]
    pub fn begin_tracy_view(&self, slot: &mut Option<Arc<ProfileSession>>) -> EngineResult<()> {
        let view = ProfileSession::start_tracy_view(SystemClockMap::calibrate(&self.hsa)?);
        for queue in self.queues.live() {
            queue.attach_capture(&view)?;
        }
        *slot = Some(view);
        Ok(())
    }

    /// Stops every queue's part of `session` (waiting, up to its `end_timeout`, for the work in
    /// flight to drain) and finishes it.
    pub fn end_session(&self, session: &ProfileSession) -> EngineResult<ProfileReport> {
        let queues = self.queues.live();
        let targets: Vec<u64> = queues.iter().map(|queue| queue.stop_capturing()).collect();
        let deadline = crate::clock::deadline_after(std::time::Instant::now(), session.config.end_timeout);
        for (queue, target) in queues.iter().zip(&targets) {
            queue.wait_drained(*target, deadline);
        }
        let untimed = queues.iter().map(|queue| queue.detach_capture()).sum();
        session.finish(untimed)
    }

    /// Modes that go through aqlprofile need the library and an AMD GPU; asking for them without
    /// either is an error that says what was searched, never a capture that silently lacks them.
    fn check_aqlprofile(&self, modes: ProfileModes) -> EngineResult<()> {
        let wanted = modes.intersection(ProfileModes::AQLPROFILE);
        if wanted.is_empty() {
            return Ok(());
        }
        let unavailable = |reason: String| EngineError::ProfileModeUnavailable { modes: wanted.to_string(), reason };
        let library = AqlProfileLibrary::load().map_err(|error| {
            unavailable(format!(
                "aqlprofile could not be loaded (searched {}, set {} to its path): {error}",
                library_candidates().join(", "),
                aqueduct_hsa::aqlprofile::LIBAQLPROFILE_PATH_VARIABLE
            ))
        })?;
        if aqueduct_soft_hsa::SoftControls::of(&self.hsa).is_some() {
            return Err(unavailable(format!(
                "aqlprofile ({}) needs an AMD GPU, and this device is the soft runtime",
                library.path
            )));
        }
        Err(unavailable(format!(
            "aqlprofile {} (interface v{}) loaded, but aqueduct does not program hardware counters or traces yet",
            library.path, library.version_major
        )))
    }
}
