//! The end-to-end demo workload, through the engine: several queues hand a saxpy chain to each
//! other through cross-queue semaphore waits (device-side barriers), with fills, copies, an
//! update and an iota dispatch around it, and every element verified on the host; then the
//! trained digits MLP ([`crate::digits`]) serves its test split in batches on the same device,
//! every item checked against numpy's logits.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use aqueduct_abi::{HostBuild, HostBuildRecord};

use crate::digits::{DigitsModel, ForwardPass, Precision, ServeConfig, ServeError, ServeReport, serve};
use aqueduct_engine::{Device, Dispatch, Engine, EngineConfig, EngineError, Executable, MemoryKind, Queue, QueueStats};

/// The demo kernels, built from `cli/kernels/demo.c` by `kernels/regen.sh` for each of its targets
/// ([`crate::WORKLOAD_TARGETS`]); [`Device::select_code_object`] picks the one the device's agents run.
pub const DEMO_CODE_OBJECTS: [&[u8]; crate::WORKLOAD_TARGETS] = workload_code_objects!("demo");

unsafe extern "C" {
    /// The host-build table of `cli/kernels/demo.c`, compiled for the host by build.rs.
    fn aq_demo_kernels(count: *mut u32) -> *const HostBuildRecord;
}

/// The host builds of `iota` and `saxpy` (the same C as [`DEMO_CODE_OBJECTS`]), for the soft
/// runtime.
pub fn demo_host_builds() -> &'static [HostBuild] {
    static KERNELS: OnceLock<Vec<HostBuild>> = OnceLock::new();
    // SAFETY: `aq_demo_kernels` is the AQ_HOST_TABLE accessor of cli/kernels/demo.c, linked into this
    // crate by build.rs; its records are static.
    KERNELS.get_or_init(|| unsafe { HostBuild::from_table(aq_demo_kernels) })
}

/// Loads the demo kernels on `device`: the code object its agents run, with the host builds
/// registered for it (which a provider that runs code objects on the GPU ignores).
pub fn load_demo_kernels(device: &Device) -> Result<Executable, EngineError> {
    let code_object = device.select_code_object(&DEMO_CODE_OBJECTS)?;
    device.register_host_builds(code_object, demo_host_builds())?;
    device.load_executable(code_object)
}

/// Elements per buffer.
pub const ELEMENTS: u32 = 4096;
const WORKGROUP: u16 = 256;
const WAIT: Duration = Duration::from_secs(60);

/// What ran on one queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueReport {
    /// The queue's index on its device.
    pub index: u16,
    /// The queue's counters after the run.
    pub stats: QueueStats,
}

/// What a demo run did and how long it took.
#[derive(Debug)]
pub struct DemoReport {
    /// The HSA provider (`soft` or `rocr`).
    pub provider: &'static str,
    /// Why that provider was chosen.
    pub provider_reason: String,
    /// The ISA name of the device's first agent.
    pub agent: String,
    /// Saxpy steps in the chain.
    pub handoffs: u32,
    /// One report per queue.
    pub queues: Vec<QueueReport>,
    /// Queue operations submitted (dispatches, fills, copies, updates, barriers).
    pub operations: u64,
    /// Kernel dispatches submitted.
    pub dispatches: u64,
    /// Fills, copies and updates submitted.
    pub transfers: u64,
    /// Host time spent inside submission calls.
    pub submit_time: Duration,
    /// From the first submission until the readback copies completed.
    pub end_to_end: Duration,
    /// Elements checked on the host (`y`, the iota, and the snapshot if one was taken).
    pub verified_elements: usize,
    /// The digits MLP served over its test split (every item checked), unless
    /// [`DemoOptions::model`] was off.
    pub model: Option<ServeReport>,
}

/// Why the demo failed.
#[derive(Debug)]
pub enum DemoError {
    /// An engine call failed.
    Engine(EngineError),
    /// The arguments cannot make a demo (fewer than 2 queues, or no handoff).
    Setup(String),
    /// An item's outputs differ from numpy's.
    Model(ServeError),
    /// The model's accuracy is not numpy's.
    ModelAccuracy {
        /// The served accuracy.
        accuracy: f64,
        /// numpy's on the same items.
        reference: f64,
    },
    /// An element read back differs from its expected value.
    Mismatch {
        /// Which buffer: `y`, `iota` or `snapshot`.
        buffer: &'static str,
        /// The element's index.
        index: usize,
        /// The value it must have.
        expected: f64,
        /// The value read back.
        found: f64,
    },
}

impl std::fmt::Display for DemoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Engine(error) => error.fmt(f),
            Self::Setup(reason) => write!(f, "demo setup failed: {reason}"),
            Self::Model(error) => write!(f, "the digits model: {error}"),
            Self::ModelAccuracy { accuracy, reference } => {
                write!(f, "the digits model's accuracy {accuracy} is not numpy's {reference}")
            }
            Self::Mismatch { buffer, index, expected, found } => {
                write!(f, "verification failed: {buffer}[{index}] is {found}, expected {expected}")
            }
        }
    }
}

impl std::error::Error for DemoError {}

impl From<ServeError> for DemoError {
    fn from(error: ServeError) -> Self {
        match error {
            ServeError::Engine(error) => Self::Engine(error),
            mismatch => Self::Model(mismatch),
        }
    }
}

impl From<EngineError> for DemoError {
    fn from(error: EngineError) -> Self {
        Self::Engine(error)
    }
}

/// Times submission calls and counts operations by kind.
#[derive(Default)]
struct Tally {
    submit_time: Duration,
    dispatches: u64,
    transfers: u64,
}

impl Tally {
    fn dispatch<T>(&mut self, submit: impl FnOnce() -> Result<T, EngineError>) -> Result<T, EngineError> {
        self.dispatches += 1;
        self.timed(submit)
    }

    fn transfer<T>(&mut self, submit: impl FnOnce() -> Result<T, EngineError>) -> Result<T, EngineError> {
        self.transfers += 1;
        self.timed(submit)
    }

    fn timed<T>(&mut self, submit: impl FnOnce() -> Result<T, EngineError>) -> Result<T, EngineError> {
        let start = Instant::now();
        let result = submit();
        self.submit_time += start.elapsed();
        result
    }
}

/// Runs the workload on the device `spec` names (`auto` falls back to the embedded soft runtime):
/// queue 0 uploads `x` and zeroes `y`, queue 1 writes an iota, then `handoffs` saxpy steps
/// (`y += x`) rotate over the queues, each waiting on the step before through a cross-queue
/// semaphore wait; every 64th step also snapshots `y` with a copy. Finally `y`, the iota and the
/// last snapshot are copied to host-visible memory and checked element by element.
pub fn run_on(spec: &str, handoffs: u32, queue_count: u32) -> Result<DemoReport, DemoError> {
    let options = DemoOptions { handoffs, queues: queue_count, ..DemoOptions::default() };
    run_with(EngineConfig { device: spec.parse()?, ..EngineConfig::default() }, options)
}

/// What the demo runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DemoOptions {
    /// Saxpy steps in the chain (at least 1).
    pub handoffs: u32,
    /// Queues the chain rotates over (at least 2).
    pub queues: u32,
    /// Serve the digits MLP after the chain. Its kernels have no host build, so a soft runtime
    /// forced to host builds (`AQUEDUCT_SOFT_EXEC=host`) runs the chain only.
    pub model: bool,
}

impl Default for DemoOptions {
    fn default() -> Self {
        Self { handoffs: 512, queues: 4, model: true }
    }
}

/// [`run_on`] with a whole engine configuration (a soft runtime with other agents, or one that
/// runs every kernel from its machine code, say) and [`DemoOptions`].
pub fn run_with(config: EngineConfig, options: DemoOptions) -> Result<DemoReport, DemoError> {
    let DemoOptions { handoffs, queues: queue_count, model } = options;
    if queue_count < 2 || handoffs == 0 {
        return Err(DemoError::Setup("the demo needs at least 2 queues and 1 handoff".into()));
    }
    let engine = Engine::with_config(config)?;
    let device = engine.device();
    let executable = load_demo_kernels(device)?;
    let (iota_kernel, saxpy_kernel) = (executable.kernel("iota")?, executable.kernel("saxpy")?);
    let queues = (0..queue_count).map(|_| device.create_queue()).collect::<Result<Vec<Queue>, _>>()?;
    let bytes = u64::from(ELEMENTS) * 4;
    let (x, y, indices, snapshot) = (
        device.allocate(MemoryKind::DeviceLocal, bytes)?,
        device.allocate(MemoryKind::DeviceLocal, bytes)?,
        device.allocate(MemoryKind::DeviceLocal, bytes)?,
        device.allocate(MemoryKind::DeviceLocal, bytes)?,
    );
    let readback = device.allocate(MemoryKind::HostVisible, 3 * bytes)?;
    let chain = device.create_semaphore(0)?;
    let iota_done = device.create_semaphore(0)?;
    let x_values: Vec<u8> = (0..ELEMENTS).flat_map(|index| ((index % 7) as f32).to_le_bytes()).collect();
    let mut tally = Tally::default();
    let started = Instant::now();

    // Setup on queue 0: x from the host, y zeroed. Queue 1 writes the iota meanwhile.
    tally.transfer(|| queues[0].update(&x, 0, &x_values).submit())?;
    tally.transfer(|| queues[0].fill(y.whole(), &0f32.to_le_bytes()).signal(chain.at(1)).submit())?;
    let iota_bindings = [indices.whole()];
    let iota = Dispatch::grid([ELEMENTS, 1, 1])
        .workgroup([WORKGROUP, 1, 1])
        .bindings(&iota_bindings)
        .constants(&[100, ELEMENTS]);
    tally.dispatch(|| queues[1].dispatch(&iota_kernel, &iota).signal(iota_done.at(1)).submit())?;

    // The chain: step k waits for chain = k, runs y += x, signals chain = k + 1.
    let (saxpy_bindings, saxpy_constants) = ([y.whole(), x.whole()], [1f32.to_bits(), ELEMENTS]);
    let saxpy = Dispatch::grid([ELEMENTS, 1, 1])
        .workgroup([WORKGROUP, 1, 1])
        .bindings(&saxpy_bindings)
        .constants(&saxpy_constants);
    let mut snapshot_step = 0;
    for step in 1..=u64::from(handoffs) {
        let queue = &queues[step as usize % queues.len()];
        if step % 64 == 0 {
            // The snapshot runs after this step by queue order, and it, not the step, hands the
            // chain on: the next step (on another queue) writes y, so it must wait for the copy
            // to have read y, not only for this step to have written it.
            tally.dispatch(|| queue.dispatch(&saxpy_kernel, &saxpy).wait(chain.at(step)).submit())?;
            tally.transfer(|| queue.copy(y.whole(), snapshot.whole()).signal(chain.at(step + 1)).submit())?;
            snapshot_step = step;
        } else {
            tally.dispatch(|| {
                queue.dispatch(&saxpy_kernel, &saxpy).wait(chain.at(step)).signal(chain.at(step + 1)).submit()
            })?;
        }
    }
    // Read everything back on the last queue, after the chain and the iota.
    let last = chain.at(u64::from(handoffs) + 1);
    let done = device.create_semaphore(0)?;
    let reader = &queues[queues.len() - 1];
    tally.transfer(|| reader.copy(y.whole(), readback.range(0, bytes)).wait(last).wait(iota_done.at(1)).submit())?;
    tally.transfer(|| reader.copy(indices.whole(), readback.range(bytes, bytes)).submit())?;
    tally.transfer(|| reader.copy(snapshot.whole(), readback.range(2 * bytes, bytes)).signal(done.at(1)).submit())?;
    done.wait(1, WAIT)?;
    let end_to_end = started.elapsed();

    let host = readback.to_vec()?;
    let word = |index: usize| u32::from_le_bytes(host[index * 4..index * 4 + 4].try_into().unwrap_or_default());
    let elements = ELEMENTS as usize;
    for index in 0..elements {
        let expected = handoffs as f32 * (index % 7) as f32;
        let found = f32::from_bits(word(index));
        if found != expected {
            return Err(DemoError::Mismatch {
                buffer: "y",
                index,
                expected: f64::from(expected),
                found: f64::from(found),
            });
        }
        if word(elements + index) != 100 + index as u32 {
            return Err(DemoError::Mismatch {
                buffer: "iota",
                index,
                expected: 100.0 + index as f64,
                found: f64::from(word(elements + index)),
            });
        }
        if snapshot_step > 0 {
            let expected = snapshot_step as f32 * (index % 7) as f32;
            let found = f32::from_bits(word(2 * elements + index));
            if found != expected {
                return Err(DemoError::Mismatch {
                    buffer: "snapshot",
                    index,
                    expected: f64::from(expected),
                    found: f64::from(found),
                });
            }
        }
    }
    let agent = device.agents().first().map(|agent| agent.isa.clone()).unwrap_or_default();
    // The chain's counters, before the model adds its own submissions to the same queues.
    let queue_reports = queues.iter().map(|queue| QueueReport { index: queue.index(), stats: queue.stats() }).collect();
    let model = if model { Some(serve_model(device, &queues)?) } else { None };
    Ok(DemoReport {
        provider: device.provider(),
        provider_reason: device.provider_reason().to_string(),
        agent,
        handoffs,
        queues: queue_reports,
        operations: tally.dispatches + tally.transfers,
        dispatches: tally.dispatches,
        transfers: tally.transfers,
        submit_time: tally.submit_time,
        end_to_end,
        verified_elements: if snapshot_step > 0 { 3 * elements } else { 2 * elements },
        model,
    })
}

/// Items per batch when the demo serves the model.
pub const MODEL_BATCH: u32 = 32;

/// The digits MLP over its test split on the chain's queues: batches of [`MODEL_BATCH`], 4 in
/// flight on each. Its accuracy must be numpy's.
fn serve_model(device: &Device, queues: &[Queue]) -> Result<ServeReport, DemoError> {
    let model = DigitsModel::embedded();
    let pass = ForwardPass::record(device, &queues[0], &model, MODEL_BATCH, Precision::F32)?;
    let report = serve(device, queues, &model, &pass, ServeConfig { in_flight: 4, passes: 1 })?;
    if report.accuracy != report.reference_accuracy {
        return Err(DemoError::ModelAccuracy { accuracy: report.accuracy, reference: report.reference_accuracy });
    }
    Ok(report)
}

/// [`run_on`] with automatic device selection.
pub fn run(handoffs: u32, queues: u32) -> Result<DemoReport, DemoError> {
    run_on("auto", handoffs, queues)
}
