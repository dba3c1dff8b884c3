//! `aqueduct bench`: the queue benchmark suite, with the physical-limit baseline measured in the
//! same run and a stable JSON report.
//!
//! Shape names (stable; documented in docs/BENCHMARKS.md):
//! - `limit/ring_write_release`: the baseline, per packet;
//! - `edge/{submit,e2e}/N`, `edge+copy4/…`, `edge+fill4/…`, `edge+dispatch/…`, `edge+noop/…` for
//!   N in 2, 32, 512, 2048: cross-queue ping-pong handoffs;
//! - `chain/{submit,e2e}/N`: same-queue barrier chains;
//! - `batch/edge/512`, `batch/dispatch/512`: 512 barriers (or 2-binding dispatches) enqueued on one
//!   queue's batch, each waiting on the previous one, published by one flush;
//! - `dispatch/submit/bindings=B` for B in 0, 4, 16, 64, 256;
//! - `scale/queues=Q` for Q in 1, 2, 4, 8;
//! - `cb/record/N`, `cb/static/N`, `cb/dynamic_extra/N` for N in 1, 16, 64, 128, 256, 512, 5000:
//!   command-buffer dispatch chains (recording, executing a prebuilt chain, and the extra of
//!   recording per execution);
//! - `cb/device/N` for N in 16, 64, 128, 256, 512, 5000: the host's cost per execution of an N-dispatch
//!   chain processed on the device (one dispatch, an empty binding table); `cb/device/same-table/512`
//!   and `cb/device/new-table/512`: the same with a one-slot table, unchanged (reused) or new at
//!   each execution (written); `cb/e2e/host/N` and
//!   `cb/e2e/device/N` for N in 16, 64, 128, 256, 512: one execution of the N-dispatch chain, submitted
//!   and waited for, on a queue that runs the kernels (where host and device processing cross);
//! - `clip/cCd16` and `clip/device/cCd16` for C in 1, 2, 4, 8: the CLIP-shaped program, per item,
//!   processed by the host and on the device;
//! - `queue_index/cas_handoff/4` (soft provider only): four threads passing a compare-and-swap of
//!   an HSA queue's write index round-robin, per hand-off (`queue_index.rs`);
//! - `alloca/roundtrip`, `alloca/baseline`, `alloca/cross_queue`, `host_call/e2e`,
//!   `host_call/after_barrier/e2e`,
//!   `file/read/64MiB`, `file/read_bounced/64MiB`, `file/read_baseline/64MiB`: queue-ordered
//!   memory, host calls and file reads (`memory.rs`; the file rows are per MiB);
//! - `diamond/waits`: diamonds of cross-queue waits over 4 queues, per submission (its note gives
//!   the barriers emitted against the waits asked for);
//! - `profile/<mode>/edge+dispatch/{submit,e2e}/512` for each capture mode with a per-submission
//!   cost (`queue-events`, `device-queue-events`, `dispatch-events`, `counters`) and `all`: the
//!   `edge+dispatch` shape with that capture running (begun before and ended after each
//!   repetition, outside its timing), against the same row without one.
//!
//! Host-cost (`submit`) shapes run on retire-only soft queues; `e2e` shapes execute for real.

pub mod command_buffers;
pub mod kernels;
pub mod measure;
pub mod memory;
pub mod queue_index;
pub mod shapes;

use aqueduct_engine::{Engine, EngineConfig, EngineError};

use command_buffers::CommandBufferRig;
pub use measure::{
    BENCH_SCHEMA, CompareError, CompareMethod, CompareOptions, Report, ResultRow, RowChange, Sample, Spread, Verdict,
    compare, compare_runs,
};
use shapes::{HANDOFFS, LIMIT_PACKETS, Payload, Rig, SUBMITS};

/// Which shapes `aqueduct bench` runs, how thoroughly, and on which device.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Only shapes whose name contains this.
    pub filter: Option<String>,
    /// One repetition per shape, no warm-up: checks that every shape works.
    pub quick: bool,
    /// The device spec (`auto`, `soft`, `amdgpu`, ...), as [`DeviceSpec`](aqueduct_engine::DeviceSpec) parses it.
    pub device: String,
}

/// One named shape: operations per repetition and how to run one repetition.
pub struct Shape<'a> {
    /// The stable shape name (e.g. `edge/submit/32`).
    pub name: String,
    /// Operations per repetition; the report gives times per operation.
    pub ops_per_rep: u64,
    run: Box<dyn FnMut() -> Result<Sample, EngineError> + 'a>,
    /// A line printed under the table (never part of the JSON schema): counts a row cannot carry.
    note: Option<Box<dyn Fn() -> String + 'a>>,
}

impl<'a> Shape<'a> {
    fn new(name: String, ops_per_rep: u64, run: impl FnMut() -> Result<Sample, EngineError> + 'a) -> Self {
        Self { name, ops_per_rep, run: Box::new(run), note: None }
    }
}

/// The soft runtime's controls for `queue` and the HSA queue they name, when the provider is the
/// soft runtime (embedded or its drop-in); `None` on ROCr. The pointer is for the controls only,
/// while `queue` lives.
pub(crate) fn soft_controls(
    queue: &aqueduct_engine::Queue,
) -> Option<(aqueduct_soft_hsa::SoftControls, *mut aqueduct_hsa::sys::hsa_queue_t)> {
    // SAFETY: the controls change only how the soft runtime runs this queue's packets (a mode, an
    // injected fault); nothing here writes the queue's ring or releases what the engine owns, and
    // every caller names the queue to the controls while it holds `queue`.
    let (provider, hsa_queue) =
        unsafe { (aqueduct_engine::raw::provider(queue), aqueduct_engine::raw::hsa_queue(queue)) };
    aqueduct_soft_hsa::SoftControls::of(provider).map(|controls| (controls, hsa_queue))
}

/// A queue of the bench in `mode` where the provider is the soft runtime, embedded or as its
/// drop-in; a GPU runs its queues as they are.
pub(crate) fn set_soft_mode(
    queue: &aqueduct_engine::Queue,
    mode: aqueduct_soft_hsa::ExecutionMode,
) -> Result<(), EngineError> {
    let Some((controls, hsa_queue)) = soft_controls(queue) else { return Ok(()) };
    controls
        .set_queue_mode(hsa_queue, mode)
        .map_err(|error| EngineError::InvalidArgument { what: "soft queue mode", reason: format!("{error:?}") })
}

/// `diamond/waits`, with a note of the barriers its waits cost.
fn diamond_shape(rig: &Rig) -> Shape<'_> {
    let counts = std::rc::Rc::new(shapes::WaitCounts::default());
    let seen = counts.clone();
    let mut shape = Shape::new("diamond/waits".into(), 4 * shapes::DIAMONDS, move || shapes::diamonds(rig, &counts));
    shape.note = Some(Box::new(move || {
        let (requested, emitted) = (seen.requested.get(), seen.emitted.get());
        format!(
            "{emitted} device barriers for {requested} cross-queue waits ({:.1} % of the waits elided)",
            100.0 * requested.saturating_sub(emitted) as f64 / requested.max(1) as f64
        )
    }));
    shape
}

/// Items each CLIP lane submits per repetition.
fn clip_items(quick: bool) -> u64 {
    if quick { 2 * command_buffers::CLIP_DEPTH as u64 } else { 4 * command_buffers::CLIP_DEPTH as u64 }
}

/// Every shape, in report order (the baseline is measured separately, first).
pub fn shapes<'a>(
    rig: &'a Rig,
    cb_rig: &'a CommandBufferRig,
    memory_rig: &'a memory::MemoryRig,
    queue_index_rig: Option<&'a queue_index::QueueIndexRig>,
    quick: bool,
) -> Vec<Shape<'a>> {
    let mut list: Vec<Shape<'_>> = Vec::new();
    for payload in Payload::ALL {
        for e2e in [false, true] {
            for handoffs in HANDOFFS {
                let mode = if e2e { "e2e" } else { "submit" };
                list.push(Shape::new(format!("{}/{mode}/{handoffs}", payload.prefix()), handoffs, move || {
                    shapes::edges(rig, payload, handoffs, e2e)
                }));
            }
        }
    }
    for e2e in [false, true] {
        for length in HANDOFFS {
            let mode = if e2e { "e2e" } else { "submit" };
            list.push(Shape::new(format!("chain/{mode}/{length}"), length, move || shapes::chain(rig, length, e2e)));
        }
    }
    for (name, payload) in [("edge", Payload::Edge), ("dispatch", Payload::Dispatch)] {
        list.push(Shape::new(format!("batch/{name}/{SUBMITS}"), SUBMITS, move || {
            shapes::batched(rig, payload, SUBMITS)
        }));
    }
    for bindings in kernels::BINDING_COUNTS {
        list.push(Shape::new(format!("dispatch/submit/bindings={bindings}"), SUBMITS, move || {
            shapes::dispatches(rig, bindings)
        }));
    }
    for queues in [1usize, 2, 4, shapes::SCALE_QUEUES] {
        list.push(Shape::new(format!("scale/queues={queues}"), shapes::SCALE_SUBMITS * queues as u64, move || {
            shapes::scaling(rig, queues)
        }));
    }
    for length in command_buffers::CHAIN_LENGTHS {
        list.push(Shape::new(format!("cb/record/{length}"), length, move || command_buffers::record(cb_rig, length)));
        list.push(Shape::new(format!("cb/static/{length}"), length, move || {
            command_buffers::execute_static(cb_rig, length)
        }));
        list.push(Shape::new(format!("cb/dynamic_extra/{length}"), length, move || {
            command_buffers::dynamic_extra(cb_rig, length)
        }));
    }
    for length in command_buffers::DEVICE_CHAIN_LENGTHS {
        // Per execution: the point is that it does not grow with N.
        list.push(Shape::new(format!("cb/device/{length}"), 1, move || command_buffers::device_static(cb_rig, length)));
    }
    for (name, new_table) in [("same-table", false), ("new-table", true)] {
        let length = command_buffers::BOUND_CHAIN_LENGTH;
        list.push(Shape::new(format!("cb/device/{name}/{length}"), 1, move || {
            command_buffers::device_bound(cb_rig, new_table)
        }));
    }
    for length in command_buffers::END_TO_END_LENGTHS {
        for device in [false, true] {
            let side = if device { "device" } else { "host" };
            list.push(Shape::new(format!("cb/e2e/{side}/{length}"), 1, move || {
                command_buffers::end_to_end(cb_rig, length, device)
            }));
        }
    }
    let items = clip_items(quick);
    for device in [false, true] {
        for concurrency in command_buffers::CLIP_CONCURRENCY {
            let side = if device { "device/" } else { "" };
            let name = format!("clip/{side}c{concurrency}d{}", command_buffers::CLIP_DEPTH);
            list.push(Shape::new(name, items * concurrency as u64, move || {
                command_buffers::clip(cb_rig, concurrency, items, device)
            }));
        }
    }
    if let Some(queue_index_rig) = queue_index_rig {
        let name = format!("queue_index/cas_handoff/{}", queue_index::THREADS);
        list.push(Shape::new(name, queue_index::HANDOFFS, move || queue_index::cas_handoff(queue_index_rig)));
    }
    list.push(diamond_shape(rig));
    list.push(Shape::new("alloca/roundtrip".into(), SUBMITS, move || memory::roundtrip(rig, memory_rig, true)));
    list.push(Shape::new("alloca/baseline".into(), SUBMITS, move || memory::roundtrip(rig, memory_rig, false)));
    list.push(Shape::new("alloca/cross_queue".into(), SUBMITS, move || memory::cross_queue(rig, memory_rig)));
    list.push(Shape::new("host_call/e2e".into(), memory::HOST_CALLS, move || memory::host_calls(rig, false)));
    list.push(Shape::new("host_call/after_barrier/e2e".into(), memory::HOST_CALLS, move || {
        memory::host_calls(rig, true)
    }));
    let mib = memory::FILE_MIB;
    list.push(Shape::new(format!("file/read/{mib}MiB"), mib, move || memory::read_file(rig, memory_rig, false)));
    list.push(Shape::new(format!("file/read_bounced/{mib}MiB"), mib, move || memory::read_file(rig, memory_rig, true)));
    list.push(Shape::new(format!("file/read_baseline/{mib}MiB"), mib, move || memory::read_baseline(memory_rig)));
    for modes in PROFILED_MODES {
        for e2e in [false, true] {
            let mode = if e2e { "e2e" } else { "submit" };
            let name = format!("profile/{modes}/{}/{mode}/{SUBMITS}", Payload::Dispatch.prefix());
            list.push(Shape::new(name, SUBMITS, move || {
                profiled(rig, modes, || shapes::edges(rig, Payload::Dispatch, SUBMITS, e2e))
            }));
        }
    }
    list
}

/// The capture modes with a cost per submission (executable metadata has none), then all of them.
const PROFILED_MODES: [&str; 5] = ["queue-events", "device-queue-events", "dispatch-events", "counters", "all"];

/// Runs one repetition of a shape inside a capture of `modes`, into a file removed afterwards.
fn profiled(
    rig: &Rig,
    modes: &str,
    shape: impl FnOnce() -> Result<Sample, EngineError>,
) -> Result<Sample, EngineError> {
    let output = std::env::temp_dir().join(format!("aqueduct-bench-{}.aqprof", std::process::id()));
    rig.device.begin_profile(aqueduct_engine::ProfileConfig::new(&output).modes(modes.parse()?))?;
    let sample = rig.wake_queues().and_then(|()| shape());
    let report = rig.device.end_profile();
    let _ = std::fs::remove_file(&output);
    let report = report?;
    if report.dropped > 0 {
        return Err(EngineError::InvalidArgument {
            what: "benchmark result",
            reason: format!("the {modes} capture dropped {} records", report.dropped),
        });
    }
    sample
}

/// Repetitions: (warm-up, measured).
fn repetitions(quick: bool) -> (usize, usize) {
    if quick { (0, 1) } else { (2, 21) }
}

/// The baseline row, `limit/ring_write_release` (ratio 1): every report measures it in the same
/// run as the rows it divides.
pub fn limit_row(quick: bool) -> ResultRow {
    let (warmup, reps) = repetitions(quick);
    let mut ring = aqueduct_hsa::ring::BaselineRing::default();
    let limit_samples: Vec<Sample> = (0..warmup + reps.max(5)).map(|_| shapes::limit(&mut ring)).skip(warmup).collect();
    let mut row = measure::summarize("limit/ring_write_release", LIMIT_PACKETS, &limit_samples);
    row.ratio_to_limit = 1.0;
    row
}

/// Runs the suite. `progress(done, total, name)` is called before each shape.
pub fn run(options: &BenchOptions, progress: impl FnMut(usize, usize, &str)) -> Result<Report, EngineError> {
    run_with_notes(options, progress).map(|(report, _)| report)
}

/// [`run`], plus the notes of the shapes that have one (`name: note`), which the JSON report
/// does not carry.
pub fn run_with_notes(
    options: &BenchOptions,
    mut progress: impl FnMut(usize, usize, &str),
) -> Result<(Report, Vec<String>), EngineError> {
    // Rings deep enough that a 5000-dispatch chain and 16 CLIP items in flight (12,672 packets)
    // execute from the submitting thread instead of parking for room.
    let engine = Engine::with_config(EngineConfig {
        device: options.device.parse()?,
        queue_packets: 16384,
        kernarg_ring_bytes: 4 << 20,
        ..EngineConfig::default()
    })?;
    let device = engine.device().clone();
    kernels::bench_code_object(&device)?;
    let agent = device.agents().first().map(|agent| agent.isa.clone()).unwrap_or_default();
    let rig = Rig::new(device.clone())?;
    let cb_rig = CommandBufferRig::new(device.clone())?;
    let memory_rig = memory::MemoryRig::new(&rig)?;
    // The index operations of the soft runtime's own queues: only where it is the provider.
    let queue_index_rig = if device.provider() == "soft" { Some(queue_index::QueueIndexRig::new()?) } else { None };
    let (warmup, reps) = repetitions(options.quick);
    let all = shapes(&rig, &cb_rig, &memory_rig, queue_index_rig.as_ref(), options.quick);
    if let Some(filter) = options.filter.as_deref()
        && !all.iter().any(|shape| shape.name.contains(filter))
    {
        let names: Vec<&str> = all.iter().map(|shape| shape.name.as_str()).collect();
        return Err(EngineError::InvalidArgument {
            what: "bench filter",
            reason: format!("`{filter}` matches no shape; the shapes are: {}", names.join(", ")),
        });
    }
    let selected: Vec<Shape> = all
        .into_iter()
        .filter(|shape| options.filter.as_deref().is_none_or(|filter| shape.name.contains(filter)))
        .collect();
    let total = selected.len() + 1;

    progress(0, total, "limit/ring_write_release");
    let limit_row = limit_row(options.quick);
    let limit = limit_row.median.max(f64::MIN_POSITIVE);
    let mut results = vec![limit_row];
    let mut notes = Vec::new();

    for (index, mut shape) in selected.into_iter().enumerate() {
        progress(index + 1, total, &shape.name);
        for _ in 0..warmup {
            (shape.run)()?;
        }
        let samples = (0..reps).map(|_| (shape.run)()).collect::<Result<Vec<_>, _>>()?;
        let mut row = measure::summarize(&shape.name, shape.ops_per_rep, &samples);
        row.ratio_to_limit = row.median / limit;
        results.push(row);
        if let Some(note) = &shape.note {
            notes.push(format!("{}: {}", shape.name, note()));
        }
    }
    progress(total, total, "done");
    let report = Report {
        schema: measure::BENCH_SCHEMA,
        provider: device.provider().to_string(),
        agent,
        cpu: measure::cpu_model(),
        cores: std::thread::available_parallelism().map(usize::from).unwrap_or(1),
        limit_ns_per_packet: limit,
        results,
    };
    Ok((report, notes))
}
