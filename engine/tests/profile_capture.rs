//! Profile capture on the soft runtime: each mode's records (fields, counts, order), device
//! times against fault-injected slow packets of known length, dropped records, and the errors
//! for modes that cannot run here.

mod common;

use std::time::Duration;

use aqueduct_engine::{
    BindingTable, BufferRef, CommandBufferUsage, Dispatch, EngineError, MemoryKind, ProfileConfig, ProfileModes,
    WaitStrategy,
};
use aqueduct_profile::{CodeObjectHash, OperationKind, ProfileReader, Record, WaitResolution};
use aqueduct_soft_hsa::Fault;
use common::profile::{device_event, dispatches, output, queue_events, read, read_keeping};
use common::{KernelRig, TIMEOUT, engine, fault_next, queue};

const SLOW: Duration = Duration::from_millis(30);
/// How far a device time may sit outside the host times around it: the calibration's bracket.
const CLOCK_SLACK_NS: u64 = 200_000;

#[test]
fn every_software_mode_records_what_the_queues_did() {
    for strategy in [WaitStrategy::BarrierValue, WaitStrategy::BarrierAnd] {
        let rig = KernelRig::new(strategy);
        let device = rig.device();
        let path = output(&format!("all-{strategy:?}"));
        device.begin_profile(ProfileConfig::new(&path)).unwrap();
        let (a, b) = (queue(device), queue(device));
        let (x, y) = (rig.buffer(), rig.buffer());
        let (s, t) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
        // The producer is slowed, so the consumer's wait finds it running: a device barrier.
        fault_next(&a, Fault::Slow(SLOW));
        rig.store(&a, &x, 1, &[], &[s.at(1)]);
        rig.add(&b, &y, &x, 10, &[s.at(1)], &[t.at(1)]);
        b.fill(y.whole(), &[7]).wait(t.at(1)).signal(t.at(2)).submit().unwrap();
        t.wait(2, TIMEOUT).unwrap();
        b.barrier().wait(s.at(1)).signal(t.at(3)).submit().unwrap();
        t.wait(3, TIMEOUT).unwrap();
        let report = device.end_profile().unwrap();
        let (records, bytes) = read_keeping(&path);
        assert_eq!(report.records, records.len() as u64, "{strategy:?}");
        assert_eq!((report.dropped, report.untimed), (0, 0), "{strategy:?}");
        let (qa, qb) = (u32::from(a.index()), u32::from(b.index()));

        // queue-events: one per submission, in epoch order, with the tier of each wait.
        let (on_a, on_b) = (queue_events(&records, qa), queue_events(&records, qb));
        assert_eq!(on_a.len(), 1, "{strategy:?}");
        let kinds: Vec<OperationKind> = on_b.iter().map(|event| event.operation).collect();
        assert_eq!(kinds, [OperationKind::Dispatch, OperationKind::Fill, OperationKind::Barrier], "{strategy:?}");
        assert_eq!(on_b.iter().map(|event| event.epoch).collect::<Vec<_>>(), [1, 2, 3]);
        let tiers: Vec<WaitResolution> = on_b.iter().map(|event| event.waits[0].resolution).collect();
        assert_eq!(
            tiers,
            [
                WaitResolution::DeviceBarrier { producer_queue: qa, producer_epoch: 1 },
                WaitResolution::SameQueue,
                WaitResolution::Satisfied
            ],
            "{strategy:?}"
        );
        assert_eq!(on_b[0].signals.len(), 1);
        assert_eq!(on_b[0].signals[0].value, 1);
        // A barrier packet ahead of the dispatch; a timed payload adds its trailing barrier.
        assert_eq!(on_b[0].packets, 3, "{strategy:?}");
        assert!(on_b[0].kernarg_bytes > 0 && on_b[2].kernarg_bytes == 0);
        for event in on_a.iter().chain(&on_b) {
            let seen = event.completion_seen_ns.expect("drained before the capture ended");
            assert!(event.submit_entry_ns > 0, "{event:?}");
            assert!(event.submit_entry_ns <= event.published_ns && event.published_ns <= seen, "{event:?}");
        }

        // device-queue-events: the slow producer lasts its injected time; the consumer began (at
        // its wait barrier) while the producer ran and ended after it; each sits between its
        // submission's entry and its drain.
        let producer = device_event(&records, qa, 1);
        assert!(producer.end_ns - producer.begin_ns >= SLOW.as_nanos() as u64, "{producer:?}");
        let consumer = device_event(&records, qb, 1);
        assert!(
            consumer.begin_ns < producer.end_ns,
            "{strategy:?}: waiting is the consumer's: {consumer:?} {producer:?}"
        );
        assert!(consumer.end_ns + CLOCK_SLACK_NS >= producer.end_ns, "{strategy:?}: {consumer:?} {producer:?}");
        for event in on_a.iter().chain(&on_b) {
            let device = device_event(&records, event.queue, event.epoch);
            assert!(device.begin_ns <= device.end_ns);
            // Publication is stamped after the doorbell (`note_pass`), so a submitter preempted
            // between the two sees the device begin first (CI's 2-core machine: 10 ms); the
            // device cannot begin before the submission entered.
            assert!(device.begin_ns + CLOCK_SLACK_NS >= event.submit_entry_ns, "{device:?} {event:?}");
            assert!(device.end_ns <= event.completion_seen_ns.unwrap() + CLOCK_SLACK_NS, "{device:?} {event:?}");
        }

        // dispatch-events: the kernels by name, with the executable that holds them.
        let executables: Vec<_> = records
            .iter()
            .filter_map(|record| match record {
                Record::Executable(metadata) => Some(metadata),
                _ => None,
            })
            .collect();
        let kernels = executables
            .iter()
            .find(|metadata| metadata.code_object_hash == CodeObjectHash::of(common::TEST_KERNELS_GFX1100))
            .expect("the test kernels' metadata");
        assert!(kernels.kernels.iter().any(|kernel| kernel.symbol == "store_value"));
        assert_eq!(kernels.code_object_version, 5);
        let on_a = dispatches(&records, qa);
        assert_eq!(on_a.len(), 1);
        assert_eq!((on_a[0].kernel.as_str(), on_a[0].executable), ("store_value", kernels.executable));
        assert_eq!((on_a[0].grid, on_a[0].workgroup, on_a[0].command), ([256, 1, 1], [64, 1, 1], None));
        assert!(on_a[0].end_ns - on_a[0].begin_ns >= SLOW.as_nanos() as u64);
        // The consumer's kernel ran once the producer had ended.
        assert!(dispatches(&records, qb)[0].begin_ns + CLOCK_SLACK_NS >= producer.end_ns, "{strategy:?}");
        let on_b: Vec<&str> = dispatches(&records, qb).iter().map(|event| event.kernel.as_str()).collect();
        assert_eq!(on_b.len(), 2, "{on_b:?}");
        assert_eq!(on_b[0], "add_from");
        assert!(on_b[1].starts_with("fill_"), "the fill is a device-library dispatch: {on_b:?}");
        let library = dispatches(&records, qb)[1].executable;
        assert!(executables.iter().any(|metadata| metadata.executable == library), "the library's metadata too");

        // counters: the last sample of each queue says what its statistics say.
        let last = |queue: u32, name: &str| {
            records
                .iter()
                .rev()
                .find_map(|record| match record {
                    Record::Counter(sample) if sample.queue == queue && sample.name == name => Some(sample.value),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("no {name} counter on queue {queue}"))
        };
        assert_eq!(last(qb, "submissions"), 3);
        assert_eq!(last(qb, "packets"), b.stats().packets);
        assert_eq!(last(qb, "device-waits"), 1);
        assert!(last(qb, "ring-high-water") >= 3);
        assert!(last(qb, "kernarg-bytes") > 0);
        assert_eq!(last(qa, "submissions"), 1);

        // The tools over the capture: the summary's numbers are the records', and the trace's
        // flow arrows are the cross-queue waits.
        let summary = aqueduct_profile::summarize(ProfileReader::new(bytes.as_slice()).unwrap()).unwrap();
        let queue_b = summary.queues.iter().find(|queue| queue.queue == qb).unwrap();
        assert_eq!(queue_b.submissions, 3);
        let mut device_times: Vec<u64> = queue_events(&records, qb)
            .iter()
            .map(|event| {
                let device = device_event(&records, qb, event.epoch);
                device.end_ns - device.begin_ns
            })
            .collect();
        device_times.sort();
        assert_eq!(queue_b.device_time.total_ns, device_times.iter().sum::<u64>());
        assert_eq!(queue_b.device_time.p50_ns, device_times[1]);
        assert_eq!(queue_b.waits_on.len(), 1, "b waited on a");
        // The time b's barrier waited for a: from b's begin to a's end.
        let waited = queue_b.waits_on[0].total_wait_ns;
        assert_eq!(waited, producer.end_ns - consumer.begin_ns, "{strategy:?}");
        let store = summary.kernels.iter().find(|kernel| kernel.kernel == "store_value").unwrap();
        assert_eq!(store.device_time.count, 1);
        assert_eq!(
            store.device_time.total_ns,
            dispatches(&records, qa)[0].end_ns - dispatches(&records, qa)[0].begin_ns
        );
        let mut trace = Vec::new();
        aqueduct_profile::export_chrome(std::io::Cursor::new(&bytes), &mut trace).unwrap();
        let trace: serde_json::Value = serde_json::from_slice(&trace).unwrap();
        let events = trace["traceEvents"].as_array().expect("a Trace Event JSON object");
        let flows: Vec<_> = events.iter().filter(|event| event["ph"] == "s").collect();
        assert_eq!(flows.len(), 1, "one arrow, from a's signal to b's device barrier: {flows:?}");

        // Dropped: one record per queue, none dropped.
        let dropped: Vec<_> = records.iter().filter(|record| matches!(record, Record::Dropped(_))).collect();
        assert_eq!(dropped.len(), 2, "{dropped:?}");
        assert!(dropped.iter().all(|record| matches!(record, Record::Dropped(d) if d.count == 0)));
    }
}

#[test]
fn a_full_buffer_drops_and_counts_records_and_never_blocks() {
    let engine = engine(WaitStrategy::Auto);
    let device = engine.device();
    let path = output("dropped");
    let config = ProfileConfig::new(&path).modes(ProfileModes::QUEUE_EVENTS).queue_buffer_records(1);
    device.begin_profile(config).unwrap();
    let queue = queue(device);
    let target = device.allocate(MemoryKind::HostVisible, 64).unwrap();
    let done = device.create_semaphore(0).unwrap();
    const SUBMISSIONS: u64 = 3000;
    for value in 1..=SUBMISSIONS {
        queue.fill(target.whole(), &[1]).signal(done.at(value)).submit().unwrap();
    }
    done.wait(SUBMISSIONS, TIMEOUT).unwrap();
    let report = device.end_profile().unwrap();
    let records = read(&path);
    let written = queue_events(&records, u32::from(queue.index())).len() as u64;
    let counted: u64 = records
        .iter()
        .filter_map(|record| match record {
            Record::Dropped(dropped) => Some(dropped.count),
            _ => None,
        })
        .sum();
    assert_eq!(counted, report.dropped);
    assert_eq!(written + counted, SUBMISSIONS, "every submission is written or counted as dropped");
    assert!(counted > 0, "a one-record buffer cannot hold a burst of {SUBMISSIONS}");
}

#[test]
fn a_command_buffer_execution_is_timed_as_one_submission() {
    let rig = KernelRig::new(WaitStrategy::Auto);
    let device = rig.device();
    let path = output("command-buffer");
    let modes = ProfileModes::QUEUE_EVENTS | ProfileModes::DEVICE_QUEUE_EVENTS;
    device.begin_profile(ProfileConfig::new(&path).modes(modes)).unwrap();
    let queue = queue(device);
    let (x, y) = (rig.buffer(), rig.buffer());
    let mut program = device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    let x_ref: BufferRef = x.whole().into();
    let store = Dispatch::grid([256, 1, 1]).workgroup([64, 1, 1]).bindings(std::slice::from_ref(&x_ref));
    program.dispatch(&rig.kernels.store_value, &store.constants(&[5, 256])).unwrap();
    // The add reads what the store wrote: without the barrier the two may overlap (the device's
    // block processor lets them; the host's happens to order a segment's last packet).
    program.barrier().unwrap();
    let bindings: [BufferRef; 2] = [y.whole().into(), x.whole().into()];
    let add = Dispatch::grid([256, 1, 1]).workgroup([64, 1, 1]).bindings(&bindings);
    program.dispatch(&rig.kernels.add_from, &add.constants(&[1, 256])).unwrap();
    program.finish().unwrap();
    let done = device.create_semaphore(0).unwrap();
    fault_next(&queue, Fault::Slow(SLOW));
    queue.execute(&program, &BindingTable::default()).signal(done.at(1)).submit().unwrap();
    done.wait(1, TIMEOUT).unwrap();
    assert_eq!(common::words(&y.to_vec().unwrap())[..2], [6, 7], "the program ran");
    device.end_profile().unwrap();
    let records = read(&path);
    let events = queue_events(&records, u32::from(queue.index()));
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].operation, OperationKind::Execute);
    // The timed lead barrier is the slowed packet: the segment's span covers it.
    let span = device_event(&records, events[0].queue, events[0].epoch);
    assert!(span.end_ns - span.begin_ns >= SLOW.as_nanos() as u64, "{span:?}");
}

/// A file read and a file write are of their own kinds in a profile, as in a capture: every row
/// they stage (the host calls, and the enqueueing copies when the memory is the device's) carries
/// it, and none says `host-call`.
#[test]
fn file_reads_and_writes_are_recorded_as_their_own_kinds() {
    let rig = KernelRig::new(WaitStrategy::Auto);
    let device = rig.device();
    let path = output("files");
    device.begin_profile(ProfileConfig::new(&path).modes(ProfileModes::QUEUE_EVENTS)).unwrap();
    let queue = queue(device);
    let file_path = output("files-data");
    std::fs::write(&file_path, [3u8; 256]).unwrap();
    let file = std::fs::OpenOptions::new().read(true).write(true).open(&file_path).unwrap();
    let (host, on_device) = (
        device.allocate(MemoryKind::HostVisible, 256).unwrap(),
        device.allocate(MemoryKind::DeviceLocal, 256).unwrap(),
    );
    let done = device.create_semaphore(0).unwrap();
    queue.read_file(&file, 0, host.whole()).signal(done.at(1)).submit().unwrap();
    queue.read_file(&file, 0, on_device.whole()).wait(done.at(1)).signal(done.at(2)).submit().unwrap();
    queue.write_file(on_device.whole(), &file, 0).wait(done.at(2)).signal(done.at(3)).submit().unwrap();
    done.wait(3, TIMEOUT).unwrap();
    device.end_profile().unwrap();
    let records = read(&path);
    std::fs::remove_file(&file_path).unwrap();
    let kinds: Vec<OperationKind> =
        queue_events(&records, u32::from(queue.index())).iter().map(|event| event.operation).collect();
    assert!(kinds.contains(&OperationKind::ReadFile) && kinds.contains(&OperationKind::WriteFile), "{kinds:?}");
    assert!(kinds.iter().all(|kind| matches!(kind, OperationKind::ReadFile | OperationKind::WriteFile)), "{kinds:?}");
    // The write comes last and streams through the enqueueing copies, whose rows are its own.
    let first_write = kinds.iter().position(|kind| *kind == OperationKind::WriteFile).unwrap();
    assert!(kinds[..first_write].iter().all(|kind| *kind == OperationKind::ReadFile), "{kinds:?}");
    assert!(kinds.len() - first_write >= 2, "the write's copy and host call: {kinds:?}");
}

#[test]
fn modes_that_need_aqlprofile_fail_and_name_what_was_searched() {
    let engine = engine(WaitStrategy::Auto);
    let device = engine.device();
    let path = output("aqlprofile");
    for modes in [ProfileModes::HARDWARE_COUNTERS, ProfileModes::EXECUTABLE_TRACES | ProfileModes::QUEUE_EVENTS] {
        let error = device.begin_profile(ProfileConfig::new(&path).modes(modes)).unwrap_err();
        let EngineError::ProfileModeUnavailable { modes: named, reason } = &error else {
            panic!("expected ProfileModeUnavailable, got {error}");
        };
        assert!(named.contains("hardware-counters") || named.contains("executable-traces"), "{error}");
        // Without the library the reason lists the paths; with it, that this is no AMD GPU.
        assert!(
            reason.contains("libhsa-amd-aqlprofile64.so") && reason.contains("AQUEDUCT_LIBAQLPROFILE_PATH")
                || reason.contains("soft runtime"),
            "{error}"
        );
        assert!(!path.exists(), "a refused capture creates no file");
    }
    // Nothing changed: a software capture begins and ends.
    device.begin_profile(ProfileConfig::new(&path).modes(ProfileModes::QUEUE_EVENTS)).unwrap();
    device.end_profile().unwrap();
    assert!(read(&path).iter().all(|record| matches!(record, Record::Dropped(_))));
}

#[test]
fn capture_state_errors_and_queues_that_join_late() {
    let engine = engine(WaitStrategy::Auto);
    let device = engine.device();
    assert!(matches!(device.end_profile(), Err(EngineError::ProfileState { .. })));
    // An output that cannot be created is refused, and no capture is left running.
    let unwritable = std::env::temp_dir().join("aqueduct-no-such-directory").join("x.aqprof");
    let refused = device.begin_profile(ProfileConfig::new(&unwritable));
    assert!(matches!(refused, Err(EngineError::InvalidArgument { what: "profile output", .. })), "{refused:?}");
    assert!(matches!(device.end_profile(), Err(EngineError::ProfileState { .. })));
    let path = output("late");
    device.begin_profile(ProfileConfig::new(&path).modes(ProfileModes::QUEUE_EVENTS)).unwrap();
    let again = device.begin_profile(ProfileConfig::new(output("second")));
    assert!(matches!(again, Err(EngineError::ProfileState { .. })), "{again:?}");
    let bad = ProfileConfig::new(output("bad")).modes(ProfileModes::NONE);
    // A queue created during the capture is captured.
    let late = queue(device);
    let done = device.create_semaphore(0).unwrap();
    late.barrier().signal(done.at(1)).submit().unwrap();
    done.wait(1, TIMEOUT).unwrap();
    device.end_profile().unwrap();
    assert!(matches!(device.begin_profile(bad), Err(EngineError::InvalidArgument { what: "profile", .. })));
    let records = read(&path);
    assert_eq!(queue_events(&records, u32::from(late.index())).len(), 1);
    // After the capture, nothing is stamped or recorded.
    late.barrier().signal(done.at(2)).submit().unwrap();
    done.wait(2, TIMEOUT).unwrap();
}

/// With the `tracy` feature, Tracy gets GPU zones without a capture: the device opens with its
/// Tracy view running (packets timed, no bundle), a capture takes over and hands back.
#[cfg(feature = "tracy")]
#[test]
fn the_tracy_view_runs_without_a_capture_and_gives_way_to_one() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    assert!(device.tracy_view_running(), "on from the device's opening");
    assert!(matches!(device.end_profile(), Err(EngineError::ProfileState { .. })), "the view is not a capture to end");
    let queue = queue(device);
    let (done, out) = (device.create_semaphore(0).unwrap(), rig.buffer());
    rig.store(&queue, &out, 5, &[], &[done.at(1)]);
    done.wait(1, TIMEOUT).unwrap();
    let path = output("tracy-view");
    device.begin_profile(ProfileConfig { modes: ProfileModes::DISPATCH_EVENTS, ..ProfileConfig::new(&path) }).unwrap();
    assert!(!device.tracy_view_running(), "the capture took over");
    rig.store(&queue, &out, 6, &[], &[done.at(2)]);
    done.wait(2, TIMEOUT).unwrap();
    let report = device.end_profile().unwrap();
    assert!(device.tracy_view_running(), "back after the capture");
    let records = read(&report.output);
    assert_eq!(dispatches(&records, u32::from(queue.index())).len(), 1, "the capture has its own dispatch only");
    rig.store(&queue, &out, 7, &[], &[done.at(3)]);
    done.wait(3, TIMEOUT).unwrap();
    assert_eq!(common::words(&out.to_vec().unwrap())[0], 7);
}
