//! `aqueduct replay`'s workloads: opening a device for a capture, giving the soft runtime the
//! host builds of the code objects this crate knows (the demo's and the bench's), and the
//! benchmark of a replayed stream.

use aqueduct_engine::replay::{Replay, ReplayOptions, ReplayOutcome};
use aqueduct_engine::{Device, Engine, EngineConfig, EngineError, ProfileConfig};

use crate::bench::{Report, ResultRow, Sample, limit_row};

/// The engine a replay runs on: `spec`, or the device spec the capture was made with. Rings are
/// as deep as the bench's, so a capture of a deep pipeline replays without parking for room.
pub fn open_engine(replay: &Replay, spec: Option<&str>, profile: Option<ProfileConfig>) -> Result<Engine, EngineError> {
    let spec = spec.unwrap_or(&replay.header().device_spec);
    let engine = Engine::with_config(EngineConfig {
        device: spec.parse()?,
        queue_packets: 16384,
        kernarg_ring_bytes: 4 << 20,
        profile,
        ..EngineConfig::default()
    })?;
    register_known_kernels(engine.device(), replay)?;
    Ok(engine)
}

/// Registers the host builds of every captured code object this crate has them for; returns
/// how many it registered. Others load as they are (a GPU runs them; the soft runtime refuses a
/// kernel it has no host version of, naming it).
pub fn register_known_kernels(device: &Device, replay: &Replay) -> Result<usize, EngineError> {
    let demo = crate::demo::DEMO_CODE_OBJECTS.map(|bytes| (bytes, crate::demo::demo_host_builds()));
    let bench =
        crate::bench::kernels::BENCH_CODE_OBJECTS.map(|bytes| (bytes, crate::bench::kernels::bench_host_builds()));
    let known = [demo, bench].concat();
    let mut registered = 0;
    for code_object in replay.code_objects()? {
        if let Some((bytes, kernels)) = known.iter().find(|(bytes, _)| *bytes == code_object.as_slice()) {
            device.register_host_builds(bytes, kernels)?;
            registered += 1;
        }
    }
    Ok(registered)
}

/// `replay bench`: the stream, decoded once, replayed `reps` times after `warmup`, each time on
/// fresh objects of the same device. Rows (ns per operation, as `aqueduct bench`): the
/// baseline measured in the same run, then `replay/e2e` (wall time from the first record to the
/// last queue drained) with the replaying thread's CPU time as its host cost. Every repetition's
/// checksums must match. `progress(done, total)` is called before each repetition and once at
/// the end.
pub fn bench(
    replay: &Replay,
    device: &Device,
    quick: bool,
    options: &ReplayOptions,
    mut progress: impl FnMut(usize, usize),
) -> Result<(Report, ReplayOutcome), EngineError> {
    let records = replay.records()?;
    let (warmup, reps) = if quick { (0, 1) } else { (1, 11) };
    let mut samples = Vec::with_capacity(reps);
    let mut last = ReplayOutcome::default();
    for repetition in 0..warmup + reps {
        progress(repetition, warmup + reps);
        let outcome = Replay::run_records(device, &records, options)?;
        if let Some(mismatch) = outcome.mismatches.first() {
            return Err(EngineError::Replay {
                record: mismatch.record,
                reason: format!("repetition {repetition}: {mismatch}"),
            });
        }
        if repetition >= warmup {
            samples.push(Sample { wall: outcome.timing.wall, host_cpu: outcome.timing.host_cpu });
        }
        last = outcome;
    }
    progress(warmup + reps, warmup + reps);
    let limit = limit_row(quick);
    let limit_ns = limit.median.max(f64::MIN_POSITIVE);
    let mut row: ResultRow = crate::bench::measure::summarize("replay/e2e", last.operations.max(1), &samples);
    row.ratio_to_limit = row.median / limit_ns;
    let report = Report {
        schema: crate::bench::BENCH_SCHEMA,
        provider: device.provider().to_string(),
        agent: device.agents().first().map(|agent| agent.isa.clone()).unwrap_or_default(),
        cpu: crate::bench::measure::cpu_model(),
        cores: std::thread::available_parallelism().map(usize::from).unwrap_or(1),
        limit_ns_per_packet: limit_ns,
        results: vec![limit, row],
    };
    Ok((report, last))
}
