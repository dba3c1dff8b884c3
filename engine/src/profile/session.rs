//! A running capture: each queue's bounded record buffer, and the writer thread that drains
//! them into the `.aqprof` file.
//!
//! Producers never wait: a queue pushes records into its own lock-free bounded buffer
//! ([`QueueCapture::push`]), and a record that finds the buffer full is dropped and counted.
//! The writer thread wakes every 10 ms (or when a buffer passes half full), moves what the buffers hold into the file (the
//! bundle writer streams chunks, so a long capture is never held whole), samples the software
//! counters, and at the end writes each queue's dropped count.

use std::fs::File;
use std::io::BufWriter;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use aqueduct_profile::{BundleHeader, CounterSample, Dropped, ProfileWriter, Record};
use crossbeam_queue::ArrayQueue;

use super::clock::{SystemClockMap, host_now_ns};
use super::modes::{ProfileConfig, ProfileModes};
use crate::error::{EngineError, EngineResult};

/// How long the writer sleeps between passes over the buffers, unless a buffer passes half
/// full and wakes it. Not shorter: each wake-up takes a core from the workload, and with 1 ms
/// the soft runtime's packet processors lost theirs often enough to double `e2e` rows on 2 cores
/// (BENCHMARKS, issue 14).
const WRITER_PERIOD: Duration = Duration::from_millis(10);

/// A queue as the device and a capture drive it, implemented by the queue
/// (`queue/capture.rs`): the device keeps its queues as this, so the device and the profile sit
/// below the queue module.
pub(crate) trait DeviceQueue: Send + Sync {
    /// Joins `session`: a buffer for its records, timing signals when it times packets, and the
    /// flags the stages read.
    fn attach_capture(self: Arc<Self>, session: &ProfileSession) -> EngineResult<()>;
    /// Stops capturing new submissions; returns the last epoch submitted, which the capture
    /// still waits for.
    fn stop_capturing(&self) -> u64;
    /// Waits until `epoch` is drained (its records made) or `deadline` passes.
    fn wait_drained(&self, epoch: u64, deadline: Instant);
    /// Leaves the capture; returns how many packets went untimed.
    fn detach_capture(&self) -> u64;
    /// The queue's own counters, sampled into the capture: (name, value).
    fn software_counters(&self) -> [(&'static str, u64); 5];
    /// If the queue's last handle dropped, waits until its work has drained and it is gone, or
    /// `deadline` passes; then cancels it (the engine is going away).
    fn finish_orphan(&self, deadline: Instant);
    /// Drains what retired on this queue, in causal order, for a queue whose drain stopped at
    /// one of its epochs; `None` if its lock is taken (this never waits for it) or it is going
    /// away. The caller sends the outcome's wake-ups (`DeviceShared::wake_queues`).
    fn drain_for_waiter(&self) -> Option<aqueduct_systems::queue_state::DrainOutcome>;
}

/// One queue's side of a capture.
pub(crate) struct QueueCapture {
    pub queue: u32,
    pub modes: ProfileModes,
    records: ArrayQueue<Record>,
    /// Whether records are kept for a bundle (false in the Tracy view, which only shows zones).
    keep_records: bool,
    pub dropped: AtomicU64,
    /// Timed packets published without a timing signal (every one was in flight).
    pub untimed: AtomicU64,
    /// Highest occupancy seen after a pass: AQL packets, kernarg-ring bytes, epochs in flight.
    pub ring_high_water: AtomicU64,
    pub kernarg_high_water: AtomicU64,
    pub epochs_high_water: AtomicU64,
    /// Kernarg-ring bytes consumed since the queue was created (the ring's head position).
    pub kernarg_bytes: AtomicU64,
    /// The timing signals this capture created for the queue (destroyed when it ends).
    pub timing_signals: Mutex<Vec<u64>>,
    /// The queue, for its software counters.
    pub queue_handle: Weak<dyn DeviceQueue>,
    pub clock: SystemClockMap,
    /// The writer thread, woken when the buffer passes half full.
    writer: Option<std::thread::Thread>,
    /// The queue's Tracy GPU context and plots.
    #[cfg(feature = "tracy")]
    pub tracy: Option<super::tracy::TracyQueue>,
}

impl QueueCapture {
    /// Hands a record to the writer; drops and counts it when the buffer is full.
    pub fn push(&self, record: Record) {
        if !self.keep_records {
            return;
        }
        if self.records.push(record).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        if 2 * self.records.len() > self.records.capacity()
            && let Some(writer) = &self.writer
        {
            writer.unpark();
        }
    }

    pub fn raise(mark: &AtomicU64, value: u64) {
        if value > mark.load(Ordering::Relaxed) {
            mark.store(value, Ordering::Relaxed);
        }
    }
}

/// A capture in progress on a device.
pub(crate) struct ProfileSession {
    pub config: ProfileConfig,
    pub clock: SystemClockMap,
    queues: Mutex<Vec<Arc<QueueCapture>>>,
    /// Device-wide records (executables).
    device_records: ArrayQueue<Record>,
    device_dropped: AtomicU64,
    stop: AtomicBool,
    writer: Mutex<Option<JoinHandle<WriterOutcome>>>,
    /// False for the Tracy view ([`Self::start_tracy_view`]): no bundle, no writer thread.
    pub bundle: bool,
}

/// What the writer thread reports when it stops.
struct WriterOutcome {
    records: u64,
    dropped: u64,
    error: Option<aqueduct_profile::CaptureFileError>,
}

/// What a finished capture wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileReport {
    /// The `.aqprof` file written.
    pub output: std::path::PathBuf,
    /// The modes captured.
    pub modes: ProfileModes,
    /// Records written to the file.
    pub records: u64,
    /// Records dropped because a buffer was full when they were made.
    pub dropped: u64,
    /// Packets captured without device timestamps because every timing signal was in flight (a
    /// submission's payload, or under dispatch-events a dispatch of a command buffer's execution).
    pub untimed: u64,
}

impl ProfileSession {
    /// Opens the output file, writes the header and starts the writer thread.
    pub fn start(config: ProfileConfig, header: BundleHeader, clock: SystemClockMap) -> EngineResult<Arc<Self>> {
        let writer = ProfileWriter::new(create_output(&config.output, "profile output")?, &header)?;
        let session = Arc::new(Self::new(config, clock, true));
        let thread = {
            let session = session.clone();
            spawn_writer("aqueduct-profile-writer", "profile", move || session.write(writer))?
        };
        *session.writer.lock().unwrap_or_else(|poison| poison.into_inner()) = Some(thread);
        Ok(session)
    }

    /// The Tracy view (the `tracy` feature, while no capture runs): packets are timed as under
    /// device-queue and dispatch events, and the drains turn the times into Tracy GPU zones,
    /// but no record is kept and nothing is written.
    #[cfg(feature = "tracy")]
    pub fn start_tracy_view(clock: SystemClockMap) -> Arc<Self> {
        let config = ProfileConfig {
            modes: ProfileModes::DEVICE_QUEUE_EVENTS | ProfileModes::DISPATCH_EVENTS,
            // No record is kept, so no buffer holds any.
            queue_buffer_records: 1,
            ..ProfileConfig::new(std::path::PathBuf::new())
        };
        Arc::new(Self::new(config, clock, false))
    }

    /// A session with no queue yet and no writer thread; `bundle` false keeps no records.
    fn new(config: ProfileConfig, clock: SystemClockMap, bundle: bool) -> Self {
        Self {
            device_records: ArrayQueue::new(config.queue_buffer_records),
            config,
            clock,
            queues: Mutex::new(Vec::new()),
            device_dropped: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            writer: Mutex::new(None),
            bundle,
        }
    }

    /// A queue joins the capture (at its start, or when it is created during it).
    pub fn add_queue(&self, index: u16, queue: Weak<dyn DeviceQueue>) -> Arc<QueueCapture> {
        let capture = Arc::new(QueueCapture {
            queue: u32::from(index),
            modes: self.config.modes,
            records: ArrayQueue::new(self.config.queue_buffer_records),
            keep_records: self.bundle,
            dropped: AtomicU64::new(0),
            untimed: AtomicU64::new(0),
            ring_high_water: AtomicU64::new(0),
            kernarg_high_water: AtomicU64::new(0),
            epochs_high_water: AtomicU64::new(0),
            kernarg_bytes: AtomicU64::new(0),
            timing_signals: Mutex::new(Vec::new()),
            queue_handle: queue,
            clock: self.clock,
            writer: self
                .writer
                .lock()
                .unwrap_or_else(|poison| poison.into_inner())
                .as_ref()
                .map(|thread| thread.thread().clone()),
            #[cfg(feature = "tracy")]
            tracy: super::tracy::TracyQueue::new(index),
        });
        self.queues.lock().unwrap_or_else(|poison| poison.into_inner()).push(capture.clone());
        capture
    }

    /// A device-wide record (an executable loaded during the capture).
    pub fn push_device(&self, record: Record) {
        if self.device_records.push(record).is_err() {
            self.device_dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Stops the writer after it drained every buffer, and reports what it wrote.
    pub fn finish(&self, untimed: u64) -> EngineResult<ProfileReport> {
        self.stop.store(true, Ordering::Release);
        if !self.bundle {
            let (output, modes) = (self.config.output.clone(), self.config.modes);
            return Ok(ProfileReport { output, modes, records: 0, dropped: 0, untimed });
        }
        let thread = self.writer.lock().unwrap_or_else(|poison| poison.into_inner()).take();
        let outcome = match thread.map(JoinHandle::join) {
            Some(Ok(outcome)) => outcome,
            Some(Err(_)) => {
                return Err(EngineError::InvalidArgument {
                    what: "profile",
                    reason: "the writer thread panicked".into(),
                });
            }
            None => return Err(EngineError::ProfileState { reason: "the capture already finished" }),
        };
        if let Some(error) = outcome.error {
            return Err(error.into());
        }
        Ok(ProfileReport {
            output: self.config.output.clone(),
            modes: self.config.modes,
            records: outcome.records,
            dropped: outcome.dropped,
            untimed,
        })
    }

    /// The writer thread: drains the buffers until told to stop, then once more, then writes the
    /// dropped counts and closes the file.
    fn write(&self, mut writer: ProfileWriter<BufWriter<File>>) -> WriterOutcome {
        let mut error = None;
        let mut next_sample = Instant::now();
        let counters = self.config.modes.contains(ProfileModes::COUNTERS);
        let mut append = |writer: &mut ProfileWriter<BufWriter<File>>, record: &Record| {
            if error.is_none()
                && let Err(failed) = writer.append(record)
            {
                error = Some(failed);
            }
        };
        loop {
            let stopping = self.stop.load(Ordering::Acquire);
            let queues = self.queues.lock().unwrap_or_else(|poison| poison.into_inner()).clone();
            while let Some(record) = self.device_records.pop() {
                append(&mut writer, &record);
            }
            for queue in &queues {
                while let Some(record) = queue.records.pop() {
                    append(&mut writer, &record);
                }
            }
            if counters && (stopping || Instant::now() >= next_sample) {
                next_sample = Instant::now() + self.config.counter_interval;
                for queue in &queues {
                    for sample in counter_samples(queue) {
                        append(&mut writer, &Record::Counter(sample));
                    }
                }
            }
            if stopping {
                let mut dropped = self.device_dropped.load(Ordering::Relaxed);
                for queue in &queues {
                    let count = queue.dropped.load(Ordering::Relaxed);
                    dropped += count;
                    append(&mut writer, &Record::Dropped(Dropped { queue: queue.queue, count }));
                }
                let records = writer.records();
                if let Err(failed) = writer.finish()
                    && error.is_none()
                {
                    error = Some(failed);
                }
                return WriterOutcome { records, dropped, error };
            }
            std::thread::park_timeout(WRITER_PERIOD);
        }
    }
}

/// Creates a capture's output file (`what` names the setting in the error).
pub(crate) fn create_output(path: &std::path::Path, what: &'static str) -> EngineResult<BufWriter<File>> {
    let file = File::create(path).map_err(|error| EngineError::InvalidArgument {
        what,
        reason: format!("cannot create {}: {error}", path.display()),
    })?;
    Ok(BufWriter::new(file))
}

/// Starts a capture's writer thread.
pub(crate) fn spawn_writer<T: Send + 'static>(
    name: &str,
    what: &'static str,
    body: impl FnOnce() -> T + Send + 'static,
) -> EngineResult<JoinHandle<T>> {
    std::thread::Builder::new().name(name.into()).spawn(body).map_err(|error| EngineError::InvalidArgument {
        what,
        reason: format!("cannot start the writer thread: {error}"),
    })
}

/// The software counters of one queue, as samples now.
fn counter_samples(queue: &QueueCapture) -> Vec<CounterSample> {
    let Some(handle) = queue.queue_handle.upgrade() else { return Vec::new() };
    let timestamp_ns = host_now_ns();
    let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
    let capture_counters = [
        ("kernarg-bytes", load(&queue.kernarg_bytes)),
        ("ring-high-water", load(&queue.ring_high_water)),
        ("kernarg-high-water", load(&queue.kernarg_high_water)),
        ("epochs-in-flight-high-water", load(&queue.epochs_high_water)),
        ("dropped-records", load(&queue.dropped)),
        ("untimed-packets", load(&queue.untimed)),
    ];
    handle
        .software_counters()
        .into_iter()
        .chain(capture_counters)
        .map(|(name, value)| CounterSample { queue: queue.queue, timestamp_ns, name: name.into(), value })
        .collect()
}
