//! Replay capture: a program captured into a `.aqreplay` runs again on its own and its checksums
//! match; a changed stream is caught and names the buffer; a capture on more agents than the
//! device has is refused by name; damaged files get clear errors; a writer that falls behind
//! either blocks (bounded) or fails the capture loudly.
//!
//! The soft runtime is process-wide and reads its agents when it starts, so every test holds one
//! lock and drops its engines before the next.

mod common;

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use aqueduct_engine::replay::{Replay, ReplayConfig, ReplayOptions};
use aqueduct_engine::{
    BindingTable, BufferRef, CommandBufferUsage, Dispatch, EngineConfig, EngineError, MemoryKind, PoolConfig,
    WaitStrategy,
};
use aqueduct_profile::CaptureFileError;
use aqueduct_profile::replay::{Operation, ReplayRecord};
use aqueduct_soft_hsa::{SoftAgentConfig, SoftConfig};
use common::*;

static RUNTIME: Mutex<()> = Mutex::new(());

fn exclusive() -> MutexGuard<'static, ()> {
    RUNTIME.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// A path under the target directory's temp area (cargo's `CARGO_TARGET_TMPDIR`, so nothing piles
/// up in the system's temp directory), one folder per test process: two runs of the suite at once
/// do not write each other's captures.
fn capture_path(name: &str) -> PathBuf {
    let directory = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("replay-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    directory.join(format!("{name}.aqreplay"))
}

fn capturing(path: &PathBuf, replay: ReplayConfig) -> EngineConfig {
    let _ = std::fs::remove_file(path);
    EngineConfig { wait_strategy: WaitStrategy::BarrierValue, replay: Some(replay), ..EngineConfig::default() }
}

const WORDS: u32 = COUNT;
const BYTES: u64 = WORDS as u64 * 4;

fn words(buffer: &aqueduct_engine::Buffer) -> Vec<u32> {
    bytemuck::cast_slice(&buffer.to_vec().unwrap()).to_vec()
}

/// Two queues; a command buffer with binding-table slots executed twice with different tables;
/// submissions parked behind a host gate and behind each other; a host write, an update, a
/// pool alloca and dealloca, a host call; read-backs. Returns the final words of `x` and `y`.
fn multi_queue_program(config: EngineConfig) -> (Vec<u32>, Vec<u32>) {
    let engine = engine_with(config);
    let kernels = test_kernels(&engine);
    let device = engine.device();
    let (a, b) = (device.create_queue().unwrap(), device.create_queue().unwrap());
    let gate = device.create_semaphore(0).unwrap();
    let timeline = device.create_semaphore(0).unwrap();
    let x = device.allocate(MemoryKind::HostVisible, BYTES).unwrap();
    let y = device.allocate(MemoryKind::HostVisible, BYTES).unwrap();
    let scratch = device.allocate(MemoryKind::DeviceLocal, BYTES).unwrap();
    let pool = device.create_pool(PoolConfig::new(MemoryKind::DeviceLocal).slab_size(1 << 16)).unwrap();

    // out(slot 1)[i] = in(slot 0)[i] + 7, then a fill of slot 0's first word to 3.
    let mut cb = device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    let slots = [BufferRef::slot(1, 0, BYTES), BufferRef::slot(0, 0, BYTES)];
    cb.dispatch(&kernels.add_from, &Dispatch::grid([WORDS, 1, 1]).bindings(&slots).constants(&[7, WORDS])).unwrap();
    cb.barrier().unwrap();
    cb.fill(BufferRef::slot(0, 0, 4), &3u32.to_le_bytes()).unwrap();
    cb.finish().unwrap();

    // Parked behind the host gate: x[i] = 100 + i on a, signalling timeline 1.
    let store = [x.whole()];
    a.dispatch(&kernels.store_value, &Dispatch::grid([WORDS, 1, 1]).bindings(&store).constants(&[100, WORDS]))
        .wait(gate.at(1))
        .signal(timeline.at(1))
        .submit()
        .unwrap();
    // Parked behind a: on b, scratch = x + 7 (x[0] = 3 after), through the table {x, scratch}.
    let first = BindingTable::from_bindings(&[x.whole(), scratch.whole()]).unwrap();
    b.execute(&cb, &first).wait(timeline.at(1)).signal(timeline.at(2)).submit().unwrap();
    y.write(0, &vec![9u8; BYTES as usize]).unwrap();
    gate.signal(1).unwrap();
    // y = scratch + 7 through the table {scratch, y}; then a pooled temporary and a host call.
    let second = BindingTable::from_bindings(&[scratch.whole(), y.whole()]).unwrap();
    b.execute(&cb, &second).wait(timeline.at(2)).signal(timeline.at(3)).submit().unwrap();
    let temporary = a.alloca(&pool, BYTES).wait(timeline.at(3)).submit().unwrap();
    a.copy(y.whole(), temporary.whole()).submit().unwrap();
    a.update(&x, 4, &[1, 2, 3, 4]).submit().unwrap();
    a.dealloca(&temporary).submit().unwrap();
    a.host_call(|| Ok(())).signal(timeline.at(4)).submit().unwrap();
    timeline.wait(4, TIMEOUT).unwrap();
    (words(&x), words(&y))
}

#[test]
fn a_multi_queue_capture_with_command_buffers_and_parked_waits_replays_and_matches() {
    let _runtime = exclusive();
    let path = capture_path("multi-queue");
    let (x, y) = multi_queue_program(capturing(&path, ReplayConfig::new(&path)));
    assert_eq!(x[0], 3, "the first execution filled x[0]");
    assert_eq!(y[5], 105 + 14, "y = x + 7 + 7");

    let replay = Replay::open(&path).unwrap();
    let summary = replay.summarize().unwrap();
    assert_eq!(summary.queues, 2);
    assert_eq!(summary.command_buffers, 1);
    assert_eq!(summary.pools, 1);
    let count = |kind: &str| summary.operations.iter().find(|(name, _)| name == kind).map_or(0, |(_, n)| *n);
    assert_eq!((count("dispatch"), count("execute"), count("alloca"), count("dealloca")), (1, 2, 1, 1));
    assert_eq!((count("copy"), count("update"), count("host-call")), (1, 1, 1));
    assert_eq!((summary.host_writes, summary.host_signals), (1, 1));
    assert!(summary.host_reads >= 2 && summary.host_waits >= 1, "{summary:?}");
    assert_eq!(summary.final_checksums, 2, "x and y are host-visible with their own memory");

    // Replayed on a fresh engine of the same kind.
    let engine = engine_with(EngineConfig::default());
    let outcome = replay.run(engine.device(), &ReplayOptions::default()).unwrap();
    assert!(outcome.matches(), "{:?}", outcome.mismatches);
    assert_eq!(outcome.operations, 8);
    assert_eq!((outcome.reads_checked, outcome.finals_checked), (2, 2));

    // A stream that differs (the host writes other bytes into y) is caught, naming y.
    let mut records = replay.records().unwrap();
    let y_id = records
        .iter_mut()
        .find_map(|record| match record {
            ReplayRecord::HostWrite { buffer, data, .. } => {
                data[0] ^= 1;
                Some(*buffer)
            }
            _ => None,
        })
        .unwrap();
    // The write is overwritten by the second execution, so the difference must not show...
    let outcome = Replay::run_records(engine.device(), &records, &ReplayOptions::default()).unwrap();
    assert!(outcome.matches(), "the host write is overwritten before anything reads it");
    // ...but an update that lands in x does, at x's read-back first.
    for record in &mut records {
        if let ReplayRecord::Operation { operation: Operation::Update { data, .. }, .. } = record {
            data[0] ^= 0xff;
        }
    }
    let outcome = Replay::run_records(engine.device(), &records, &ReplayOptions::default()).unwrap();
    let first = outcome.mismatches.first().expect("a changed update is caught");
    assert_eq!(first.check, "read-back");
    assert_ne!(first.buffer, y_id, "the first buffer that differs is x, read back before y");
    assert!(outcome.mismatches.iter().any(|mismatch| mismatch.check == "final" && mismatch.buffer == first.buffer));
}

#[test]
fn a_capture_on_more_agents_than_the_device_has_is_refused_by_name() {
    let _runtime = exclusive();
    let path = capture_path("two-agents");
    {
        let two =
            vec![SoftAgentConfig::gfx1100(), SoftAgentConfig { name: "second".into(), ..SoftAgentConfig::gfx1100() }];
        let engine = engine_with(EngineConfig {
            soft: SoftConfig { agents: two, ..SoftConfig::default() },
            ..capturing(&path, ReplayConfig::new(&path))
        });
        let queue = engine.device().create_queue_on(1).unwrap();
        let buffer = engine.device().allocate_on(1, MemoryKind::HostVisible, 64).unwrap();
        let done = engine.device().create_semaphore(0).unwrap();
        queue.fill(buffer.whole(), &[5]).signal(done.at(1)).submit().unwrap();
        done.wait(1, TIMEOUT).unwrap();
    }
    let engine = engine_with(EngineConfig::default());
    assert_eq!(engine.device().agents().len(), 1);
    let replay = Replay::open(&path).unwrap();
    assert_eq!(replay.header().agents.len(), 2);
    match replay.run(engine.device(), &ReplayOptions::default()) {
        Err(EngineError::Replay { reason, .. }) => {
            assert!(reason.contains("agent 1") && reason.contains("1 agent(s)"), "{reason}");
        }
        other => panic!("expected a replay error naming the agent, got {other:?}"),
    }
}

/// A small capture's bytes.
fn small_capture(name: &str) -> Vec<u8> {
    let path = capture_path(name);
    {
        let engine = engine_with(capturing(&path, ReplayConfig::new(&path)));
        let queue = engine.device().create_queue().unwrap();
        let buffer = engine.device().allocate(MemoryKind::HostVisible, 256).unwrap();
        let done = engine.device().create_semaphore(0).unwrap();
        for value in 1..=8u8 {
            queue
                .fill(buffer.range(u64::from(value) * 8, 8), &[value])
                .signal(done.at(u64::from(value)))
                .submit()
                .unwrap();
        }
        done.wait(8, TIMEOUT).unwrap();
        buffer.to_vec().unwrap();
    }
    std::fs::read(&path).unwrap()
}

/// Issue 47: a capture whose waits can never be met (a signal dropped, records deleted or
/// reordered) is refused before it runs, in well under a second, naming the record, the
/// semaphore and the value; the intact capture still replays.
#[test]
fn a_capture_whose_waits_cannot_be_met_is_refused_before_it_runs() {
    let _runtime = exclusive();
    let path = capture_path("damaged-waits");
    multi_queue_program(capturing(&path, ReplayConfig::new(&path)));
    let records = Replay::open(&path).unwrap().records().unwrap();
    let engine = engine_with(EngineConfig::default());
    let device = engine.device();
    let options = ReplayOptions::default();
    Replay::run_records(device, &records, &options).expect("the intact capture replays");

    let position = |matches: &dyn Fn(&ReplayRecord) -> bool| records.iter().position(matches).unwrap();
    let host_signal = position(&|record| matches!(record, ReplayRecord::HostSignal(_)));
    let host_wait = records.iter().rposition(|record| matches!(record, ReplayRecord::HostWait(_))).unwrap();
    let ReplayRecord::HostWait(waited) = records[host_wait].clone() else { unreachable!() };
    // The operation that signals what the last host wait waits for (the host call).
    let signaller = records
        .iter()
        .rposition(|record| matches!(record, ReplayRecord::Operation { signals, .. } if signals.contains(&waited)))
        .unwrap();
    let without = |index: usize| {
        let mut damaged = records.clone();
        damaged.remove(index);
        damaged
    };
    let mut reordered = records.clone();
    let moved = reordered.remove(host_wait);
    reordered.insert(host_signal, moved);

    for (damage, damaged, record) in [
        ("the gate's host signal dropped", without(host_signal), host_wait - 1),
        ("the signalling operation deleted", without(signaller), host_wait - 1),
        ("the host wait moved before the gate's signal", reordered, host_signal),
    ] {
        let live = device.live_objects();
        let started = std::time::Instant::now();
        let result = Replay::run_records(device, &damaged, &options);
        let took = started.elapsed();
        match result {
            Err(EngineError::Replay { record: found, reason }) => {
                assert_eq!(found, record as u64, "{damage}: {reason}");
                let named = format!("semaphore {} to reach {}", waited.semaphore, waited.value);
                assert!(reason.contains(&named), "{damage}: {reason}");
                assert!(reason.contains("damaged"), "{damage}: {reason}");
            }
            other => panic!("{damage}: expected a refusal, got {other:?}"),
        }
        assert!(took < Duration::from_secs(1), "{damage}: refused after {took:?}");
        // Nothing was made. The counts may still fall meanwhile: the intact replay's semaphores
        // and buffers count until their submissions settle (`live_objects`), which can be after
        // `live` was sampled (seen once as (1, 5, 4) then (1, 3, 0)).
        let now = device.live_objects();
        assert!(now.0 <= live.0 && now.1 <= live.1 && now.2 <= live.2, "{damage}: {live:?} became {now:?}");
    }
    // An operation's wait that no record meets would hang the final drain: refused too.
    let mut unmet = records.clone();
    let gated = position(&|record| matches!(record, ReplayRecord::Operation { waits, .. } if !waits.is_empty()));
    if let ReplayRecord::Operation { waits, .. } = &mut unmet[gated] {
        waits[0].value = 1 << 40;
    }
    unmet.retain(|record| !matches!(record, ReplayRecord::HostWait(_)));
    match Replay::run_records(device, &unmet, &options) {
        Err(EngineError::Replay { record, reason }) => {
            assert_eq!(record, gated as u64, "{reason}");
            assert!(reason.contains(&format!("to reach {}", 1u64 << 40)), "{reason}");
            assert!(reason.contains("could never drain"), "{reason}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    // A wait that fails while the replay runs names the captured semaphore once, with the value
    // it waited for and the value it reached (the engine's own error names the replay's slot).
    let failed = [
        ReplayRecord::Semaphore { id: 41, initial: 2 },
        ReplayRecord::HostFail { semaphore: 41, message: "the program failed it".into() },
        ReplayRecord::HostWait(aqueduct_profile::replay::Point { semaphore: 41, value: 5 }),
    ];
    match Replay::run_records(device, &failed, &options) {
        Err(EngineError::Replay { record: 2, reason }) => {
            assert!(reason.starts_with("the host wait for semaphore 41 to reach 5 failed at 2:"), "{reason}");
            assert!(reason.contains("the program failed it"), "{reason}");
        }
        other => panic!("expected the failed wait, got {other:?}"),
    }
}

/// Opens and runs `bytes` as a capture file; any error is fine, a panic is not.
fn open_and_run(bytes: &[u8], device: &aqueduct_engine::Device) -> Result<(), EngineError> {
    let path = capture_path("damaged");
    std::fs::write(&path, bytes).unwrap();
    let replay = Replay::open(&path)?;
    replay.summarize()?;
    replay.run(device, &ReplayOptions { wait_timeout: Duration::from_secs(5), ..ReplayOptions::default() }).map(drop)
}

#[test]
fn truncated_corrupted_and_newer_files_get_clear_errors() {
    let _runtime = exclusive();
    let bytes = small_capture("small");
    let engine = engine_with(EngineConfig::default());
    open_and_run(&bytes, engine.device()).expect("the intact file replays");
    // Cut anywhere: the reader says truncated (or, before the magic, not a capture).
    for cut in (0..bytes.len()).step_by(7) {
        match open_and_run(&bytes[..cut], engine.device()) {
            Err(EngineError::Profile(CaptureFileError::Truncated { .. } | CaptureFileError::BadMagic { .. })) => {}
            other => panic!("cut at {cut}: {other:?}"),
        }
    }
    // A flipped byte past the preamble: a chunk's checksum or its header fails.
    for position in (12..bytes.len()).step_by(5) {
        let mut damaged = bytes.clone();
        damaged[position] ^= 0x20;
        let result = open_and_run(&damaged, engine.device());
        assert!(matches!(result, Err(EngineError::Profile(_))), "byte {position}: {result:?}");
    }
    // A newer major version.
    let mut newer = bytes.clone();
    newer[8..10].copy_from_slice(&2u16.to_le_bytes());
    match open_and_run(&newer, engine.device()) {
        Err(error @ EngineError::Profile(CaptureFileError::NewerVersion { .. })) => {
            assert!(error.to_string().contains("newer"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    // A profile bundle is not a replay capture.
    let mut profile = bytes.clone();
    profile[..8].copy_from_slice(&aqueduct_profile::MAGIC);
    match open_and_run(&profile, engine.device()) {
        Err(EngineError::Profile(CaptureFileError::BadMagic { expected, .. })) => {
            assert!(expected.contains(".aqreplay"))
        }
        other => panic!("{other:?}"),
    }
}

/// Writes `writes` host writes of 64 KiB each through a capture with a 4 KiB buffer.
fn burst(config: ReplayConfig, path: &PathBuf, writes: usize) -> Option<String> {
    let engine = engine_with(capturing(path, config));
    let buffer = engine.device().allocate(MemoryKind::HostVisible, 64 << 10).unwrap();
    for index in 0..writes {
        buffer.write(0, &vec![index as u8; 64 << 10]).unwrap();
    }
    engine.device().replay_capture_failure()
}

#[test]
fn a_writer_that_falls_behind_blocks_within_its_bound_or_fails_loudly() {
    let _runtime = exclusive();
    // Bounded and patient (no stall timeout at all): producers wait for the writer and nothing
    // is lost.
    let path = capture_path("bounded");
    let failure = burst(ReplayConfig::new(&path).buffer_bytes(4096).stall_timeout(Duration::MAX), &path, 200);
    assert_eq!(failure, None);
    let summary = Replay::open(&path).unwrap().summarize().unwrap();
    assert_eq!(summary.host_writes, 200, "every write recorded");
    // Bounded and impatient: the capture fails, says so, and the file reads as truncated.
    let path = capture_path("impatient");
    let failure = burst(ReplayConfig::new(&path).buffer_bytes(4096).stall_timeout(Duration::from_nanos(1)), &path, 200);
    let reason = failure.expect("a 1 ns stall timeout cannot hold 200 writes of 64 KiB");
    assert!(reason.contains("fell behind"), "{reason}");
    match Replay::open(&path).and_then(|replay| replay.summarize()) {
        Err(EngineError::Profile(CaptureFileError::Truncated { context, .. })) => {
            assert!(context.contains("end chunk"), "{context}");
        }
        other => panic!("a failed capture must not read as complete: {other:?}"),
    }
}

#[test]
fn bad_replay_settings_are_refused() {
    let _runtime = exclusive();
    for config in [
        ReplayConfig::new(capture_path("tiny")).buffer_bytes(100),
        ReplayConfig::new(capture_path("zero")).stall_timeout(Duration::ZERO),
    ] {
        let result = open_engine(EngineConfig { replay: Some(config), ..EngineConfig::default() });
        assert!(matches!(result, Err(EngineError::InvalidArgument { what: "replay", .. })));
    }
    let unwritable = ReplayConfig::new("/nonexistent-directory/x.aqreplay");
    let result = open_engine(EngineConfig { replay: Some(unwritable), ..EngineConfig::default() });
    assert!(matches!(result, Err(EngineError::InvalidArgument { what: "replay output", .. })));
}

#[test]
fn raw_kernargs_are_relocated_and_file_operations_stop_a_replay_by_name() {
    let _runtime = exclusive();
    let path = capture_path("raw");
    {
        let engine = engine_with(capturing(&path, ReplayConfig::new(&path)));
        let kernels = test_kernels(&engine);
        let device = engine.device();
        let queue = device.create_queue().unwrap();
        let done = device.create_semaphore(0).unwrap();
        let out = device.allocate(MemoryKind::HostVisible, BYTES + 64).unwrap();
        // store_value(out + 64, 500, WORDS): the pointer word points inside `out`.
        let mut kernargs = Vec::new();
        kernargs.extend_from_slice(&(out.device_address() + 64).to_le_bytes());
        kernargs.extend_from_slice(&500u32.to_le_bytes());
        kernargs.extend_from_slice(&WORDS.to_le_bytes());
        let raw = aqueduct_engine::RawDispatch { grid: [WORDS, 1, 1], workgroup: None, kernargs: &kernargs };
        queue.dispatch_raw(&kernels.store_value, &raw).signal(done.at(1)).submit().unwrap();
        done.wait(1, TIMEOUT).unwrap();
        assert_eq!(words(&out)[16 + 7], 507);
    }
    let records = Replay::open(&path).unwrap().records().unwrap();
    let relocations = records.iter().find_map(|record| match record {
        ReplayRecord::Operation { operation: Operation::RawDispatch { relocations, .. }, .. } => Some(relocations),
        _ => None,
    });
    let relocation = relocations.expect("the raw dispatch is recorded").first().copied().expect("one relocation");
    assert_eq!((relocation.at, relocation.delta), (0, 64));
    // The replay writes into its own buffer, at the same offset, and its checksums match.
    let engine = engine_with(EngineConfig::default());
    let outcome = Replay::run_records(engine.device(), &records, &ReplayOptions::default()).unwrap();
    assert!(outcome.matches() && outcome.reads_checked == 1, "{outcome:?}");

    // A file read is captured, and a replay stops at it, saying why.
    let path = capture_path("file");
    let source = capture_path("file-source");
    std::fs::write(&source, [7u8; 64]).unwrap();
    {
        let engine = engine_with(capturing(&path, ReplayConfig::new(&path)));
        let device = engine.device();
        let queue = device.create_queue().unwrap();
        let done = device.create_semaphore(0).unwrap();
        let target = device.allocate(MemoryKind::HostVisible, 64).unwrap();
        let file = std::fs::File::open(&source).unwrap();
        queue.read_file(&file, 0, target.whole()).signal(done.at(1)).submit().unwrap();
        done.wait(1, TIMEOUT).unwrap();
    }
    let replay = Replay::open(&path).unwrap();
    assert!(replay.summarize().unwrap().operations.iter().any(|(kind, _)| kind == "read-file"));
    match replay.run(engine.device(), &ReplayOptions::default()) {
        Err(EngineError::Replay { reason, .. }) => assert!(reason.contains("read-file"), "{reason}"),
        other => panic!("a file read cannot be replayed: {other:?}"),
    }
}

fn allocation(id: u64, size: u64) -> ReplayRecord {
    ReplayRecord::Allocation { id, agent: 0, kind: "host-visible".into(), size }
}

/// Issue 29, finding 3: every size in a capture is checked against the capture's own objects
/// before anything is allocated, and the replay holds no more memory than its budget.
#[test]
fn sizes_are_checked_before_allocating_and_the_memory_budget_is_refused_by_name() {
    let _runtime = exclusive();
    let engine = engine_with(EngineConfig::default());
    let device = engine.device();
    let options = ReplayOptions::default();
    // A read-back of 1 TiB from a 64-byte buffer: an error naming the buffer, not an abort.
    let read = ReplayRecord::HostRead {
        range: aqueduct_profile::replay::BufferRange { buffer: 1, offset: 0, length: 1 << 40 },
        checksum: 0,
    };
    match Replay::run_records(device, &[allocation(1, 64), read], &options) {
        Err(EngineError::Replay { record: 1, reason }) => assert!(reason.contains("runs past buffer 1"), "{reason}"),
        other => panic!("expected a refused read-back, got {other:?}"),
    }
    let wrapped = ReplayRecord::HostRead {
        range: aqueduct_profile::replay::BufferRange { buffer: 1, offset: u64::MAX, length: 2 },
        checksum: 0,
    };
    assert!(matches!(
        Replay::run_records(device, &[allocation(1, 64), wrapped], &options),
        Err(EngineError::Replay { .. })
    ));
    // One allocation of 2^31 - 1 bytes is past the default budget (1 GiB): refused before it is made.
    let live = device.live_objects();
    match Replay::run_records(device, &[allocation(1, (1 << 31) - 1)], &options) {
        Err(error @ EngineError::ReplayMemoryBudget { record: 0, requested, budget, .. }) => {
            assert_eq!((requested, budget), ((1 << 31) - 1, 1 << 30));
            assert!(error.to_string().contains("memory budget"), "{error}");
        }
        other => panic!("expected the budget's refusal, got {other:?}"),
    }
    assert_eq!(device.live_objects(), live, "nothing was allocated");
    // The budget counts what is held: a freed allocation gives its bytes back.
    let small = ReplayOptions { memory_budget: 1 << 20, ..ReplayOptions::default() };
    let half = 600 << 10;
    let too_much = [allocation(1, half), allocation(2, half)];
    assert!(matches!(
        Replay::run_records(device, &too_much, &small),
        Err(EngineError::ReplayMemoryBudget { record: 1, would_hold, .. }) if would_hold == 2 * half
    ));
    let device_local = |id| ReplayRecord::Allocation { id, agent: 0, kind: "device-local".into(), size: half };
    let freed_first = [device_local(1), ReplayRecord::Free { buffer: 1 }, device_local(2)];
    let outcome = Replay::run_records(device, &freed_first, &small).expect("the freed bytes are back under budget");
    assert!(outcome.matches());
    // A pool's reserve counts when the pool is made.
    let settings = aqueduct_profile::replay::PoolSettings {
        kind: "device-local".into(),
        agent: 0,
        slab_size: 1 << 20,
        granule: 256,
        reserve: 2 << 20,
        max_size: 4 << 20,
        trim: "manual".into(),
        exhaustion: "fail".into(),
    };
    assert!(matches!(
        Replay::run_records(device, &[ReplayRecord::Pool { id: 1, settings }], &small),
        Err(EngineError::ReplayMemoryBudget { record: 0, what: "a pool's reserve", requested, .. }) if requested == 2 << 20
    ));
}

/// Issue 29, finding 6: a program written from the docs alone opened a second engine in the same
/// process and dropped a queue whose work waited behind a host-signalled semaphore; its capture
/// replayed with a read-back that differed.
#[test]
fn a_second_engine_and_a_queue_dropped_with_parked_work_replay_and_match() {
    let _runtime = exclusive();
    let path = capture_path("dropped-queue");
    let expected;
    {
        let engine = engine_with(capturing(&path, ReplayConfig::new(&path)));
        let other = engine_with(EngineConfig::default());
        let device = engine.device();
        let (gate, done) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
        let out = device.allocate(MemoryKind::HostVisible, BYTES).unwrap();
        out.write(0, &[0; BYTES as usize]).unwrap();
        let doomed = device.create_queue().unwrap();
        doomed.fill(out.whole(), &7u32.to_le_bytes()).wait(gate.at(1)).signal(done.at(1)).submit().unwrap();
        // Work on the second engine meanwhile.
        let elsewhere = other.device().create_queue().unwrap();
        let theirs = other.device().create_semaphore(0).unwrap();
        elsewhere.barrier().signal(theirs.at(1)).submit().unwrap();
        theirs.wait(1, TIMEOUT).unwrap();
        drop(doomed);
        gate.signal(1).unwrap();
        // Work outlives its queue's handle: the fill runs once the gate opens.
        done.wait(1, TIMEOUT).unwrap();
        // A second queue writes half the buffer after it.
        let survivor = device.create_queue().unwrap();
        let finished = device.create_semaphore(0).unwrap();
        survivor
            .fill(out.range(0, BYTES / 2), &9u32.to_le_bytes())
            .wait(done.at(1))
            .signal(finished.at(1))
            .submit()
            .unwrap();
        finished.wait(1, TIMEOUT).unwrap();
        expected = words(&out);
    }
    assert_eq!(expected[0], 9);
    assert_eq!(expected[WORDS as usize - 1], 7, "the dropped queue's fill ran");
    let engine = engine_with(EngineConfig::default());
    let replay = Replay::open(&path).unwrap();
    let outcome = replay.run(engine.device(), &ReplayOptions::default()).unwrap();
    assert!(outcome.matches(), "{:?}", outcome.mismatches);
    assert!(outcome.finals_checked >= 1, "{outcome:?}");
}
