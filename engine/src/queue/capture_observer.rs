//! The capture observer: the queue's entry in the device's registry ([`CaptureObserver`], a
//! `dyn DeviceQueue`), through which a profile capture joins and leaves the queue and the device
//! reaches the queue from outside its handles (another queue's held drain, the engine's drop).
//! Joining makes the capture's timing signals and sets the state's capture part; leaving records
//! what was never drained and destroys the signals no packet still names. Each takes the queue
//! lock itself.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use aqueduct_components::capture::CaptureFlags;
use aqueduct_hsa::sys::hsa_signal_t;

use super::capture::{capture_of, record_epoch};
use super::pass_driver::PassDriver;
use crate::error::EngineResult;
use crate::profile::{DeviceQueue, ProfileModes, ProfileSession};

/// Timing signals per epoch that can be in flight: a program leg takes two (under
/// dispatch-events, one more per dispatch it runs but its last; a packet that finds none
/// free goes untimed and is counted).
const TIMING_SIGNALS_PER_EPOCH: usize = 2;
/// At most this many timing signals per queue (each is a signal of the provider's).
const MAX_TIMING_SIGNALS: usize = 4096;

fn flags_for(modes: ProfileModes) -> CaptureFlags {
    let device = modes.contains(ProfileModes::DEVICE_QUEUE_EVENTS);
    let dispatch = modes.contains(ProfileModes::DISPATCH_EVENTS);
    CaptureFlags {
        queue_events: modes.contains(ProfileModes::QUEUE_EVENTS) || device || dispatch,
        device_timing: device,
        dispatch_timing: dispatch,
    }
}

/// The queue's entry in the device's registry (`DeviceQueue`): what a capture joins and leaves
/// the queue by, and what the device reaches the queue by from outside its handles (another
/// queue's held drain, the engine's drop finishing orphans). Held by the queue's completion
/// thread while it runs; the registry keeps a weak reference, so the entry goes with the thread.
pub(crate) struct CaptureObserver {
    driver: Arc<PassDriver>,
}

impl CaptureObserver {
    /// The registry entry of the queue `driver` runs.
    pub(crate) fn new(driver: Arc<PassDriver>) -> Self {
        Self { driver }
    }

    /// The queue's pass driver.
    pub(crate) fn driver(&self) -> &PassDriver {
        &self.driver
    }
}

impl DeviceQueue for CaptureObserver {
    fn attach_capture(self: Arc<Self>, session: &ProfileSession) -> EngineResult<()> {
        let index = self.driver.index;
        let handle: Arc<dyn DeviceQueue> = self.clone();
        let capture = session.add_queue(index, Arc::downgrade(&handle));
        let flags = flags_for(capture.modes);
        let mut signals = Vec::new();
        if flags.times_packets() {
            let count = (self.driver.device.config.epochs_in_flight as usize * TIMING_SIGNALS_PER_EPOCH)
                .min(MAX_TIMING_SIGNALS);
            for _ in 0..count {
                match self.driver.device.hsa.signal_create_gpu_only(1) {
                    Ok(signal) => signals.push(signal.handle),
                    Err(error) => {
                        signals.iter().for_each(|&signal| destroy_signal(&self.driver, signal));
                        return Err(error.into());
                    }
                }
            }
            // SAFETY: the queue lives as long as this Queue.
            unsafe { self.driver.device.hsa.set_profiler_enabled(self.driver.hsa_queue, true)? };
        }
        capture.timing_signals.lock().unwrap_or_else(|poison| poison.into_inner()).clone_from(&signals);
        let mut state = self.driver.lock();
        let queue = &mut state.capture;
        queue.set_flags(flags);
        queue.timing_signals = signals;
        queue.untimed = 0;
        queue.sink = Some(capture);
        self.driver.endpoint.capturing.store(true, Ordering::Release);
        Ok(())
    }

    fn stop_capturing(&self) -> u64 {
        let mut state = self.driver.lock();
        self.driver.endpoint.capturing.store(false, Ordering::Release);
        let queue = &mut *state;
        queue.capture.set_flags(CaptureFlags::OFF);
        queue.epochs.submitted
    }

    fn wait_drained(&self, epoch: u64, deadline: Instant) {
        while self.driver.epochs().1 < epoch && Instant::now() < deadline {
            if self.driver.error_sink.status.load(Ordering::Acquire) != 0 {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Records what was never drained (without its completion) and destroys the timing signals
    /// no packet still names.
    fn detach_capture(&self) -> u64 {
        let mut state = self.driver.lock();
        let queue = &mut *state;
        let Some(capture) = capture_of(queue) else { return 0 };
        queue.capture.sink = None;
        let (drained, submitted) = (queue.epochs.drained, queue.epochs.submitted);
        // Still in flight: their submission records go out without a completion, and their
        // timing signals stay alive, since a packet may still complete on them.
        for epoch in drained + 1..=submitted {
            let slot = queue.epochs.slot(epoch);
            let facts = &mut queue.epochs.capture[slot];
            if facts.captured {
                record_epoch(&self.driver.device, self.driver.agent, &capture, epoch, facts, None, false);
                facts.clear();
            }
        }
        let created = std::mem::take(&mut *capture.timing_signals.lock().unwrap_or_else(|poison| poison.into_inner()));
        let free = std::mem::take(&mut queue.capture.timing_signals);
        let untimed = std::mem::take(&mut queue.capture.untimed);
        capture.untimed.fetch_add(untimed, Ordering::Relaxed);
        if !created.is_empty() {
            // SAFETY: the queue lives as long as this Queue.
            if let Err(error) = unsafe { self.driver.device.hsa.set_profiler_enabled(self.driver.hsa_queue, false) } {
                tracing::warn!(%error, queue = self.driver.index, "disabling queue profiling failed");
            }
        }
        let in_flight = created.len() - free.len();
        if in_flight > 0 {
            tracing::warn!(
                queue = self.driver.index,
                in_flight,
                "timing signals still named by packets in flight are kept"
            );
        }
        free.into_iter().for_each(|signal| destroy_signal(&self.driver, signal));
        capture.untimed.load(Ordering::Relaxed)
    }

    fn software_counters(&self) -> [(&'static str, u64); 5] {
        let stats = self.driver.stats();
        [
            ("submissions", stats.submissions),
            ("packets", stats.packets),
            ("device-waits", stats.device_waits),
            ("parked-submissions", stats.deferred),
            ("epochs-drained", stats.epochs_drained),
        ]
    }

    fn finish_orphan(&self, deadline: Instant) {
        self.driver.finish_orphaned(deadline);
    }

    fn drain_for_waiter(&self) -> Option<aqueduct_systems::queue_state::DrainOutcome> {
        self.driver.drain_for_waiter()
    }
}

fn destroy_signal(driver: &PassDriver, signal: u64) {
    if let Err(error) = driver.device.hsa.signal_destroy(hsa_signal_t { handle: signal }) {
        tracing::warn!(%error, "destroying a timing signal failed");
    }
}
