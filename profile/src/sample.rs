//! A small synthetic bundle whose numbers are worked out by hand, for tests and for trying the
//! tools before capture exists. Two queues; queue 1 waits on queue 0 from the device twice (once
//! timed, once without a device record), once deferred (sem 3, which queue 0 epoch 4 signals
//! later), and drops 3 records.
//!
//! | queue | epoch | operation | host submit (entry → published) | device | dispatches |
//! | --- | --- | --- | --- | --- | --- |
//! | 0 | 1 | dispatch | 1000 → 1100 | 2000 → 3000 | `scale` 2000 → 2900 |
//! | 0 | 2 | fill | 1200 → 1250 | 3000 → 3500 | |
//! | 0 | 3 | command-buffer execution | 1300 → 1600 | 3500 → 6500 | `scale` 3600 → 4600, `add` 4600 → 6400 (buffer 9) |
//! | 0 | 4 | update, signals sem 3 = 1 | 6900 → 6950 | 6960 → 7060 | |
//! | 1 | 1 | dispatch, waits sem 1 ≥ 1 on (0, 1) | 1150 → 1400 | 2500 → 3800 | `add` 3000 → 3800 |
//! | 1 | 2 | barrier, waits sem 1 ≥ 2 on (0, 3) | 1700 → 1720 | 4000 → 6600 | |
//! | 1 | 3 | copy, deferred on sem 3 ≥ 1 | 1800 → 7000 | 7100 → 7200 | |
//! | 1 | 4 | update, waits sem 1 ≥ 2 on (0, 3) | 7300 → 7310 | (dropped) | |

use crate::record::*;

pub const SAMPLE_EXECUTABLE: u64 = 7;
pub const SAMPLE_COMMAND_BUFFER: u64 = 9;

pub fn sample_header() -> BundleHeader {
    BundleHeader {
        aqueduct_version: "0.1.0".to_string(),
        device: DeviceDescription {
            provider: "soft".to_string(),
            agents: vec![AgentDescription {
                name: "soft-gfx1100".to_string(),
                isa: "amdgcn-amd-amdhsa--gfx1100".to_string(),
            }],
        },
        wait_strategy: "barrier-value".to_string(),
        clock: HostClock { domain: "CLOCK_MONOTONIC".to_string(), tick_frequency_hz: 1_000_000_000 },
    }
}

fn submission(
    queue: u32,
    epoch: u64,
    operation: OperationKind,
    waits: Vec<Wait>,
    signals: Vec<Signal>,
    host: (u64, u64),
) -> Record {
    Record::QueueEvent(QueueEvent {
        queue,
        operation,
        epoch,
        waits,
        signals,
        packets: 1,
        kernarg_bytes: 64,
        submit_entry_ns: host.0,
        published_ns: host.1,
        completion_seen_ns: Some(host.1 + 10_000),
    })
}

fn device(queue: u32, epoch: u64, begin_ns: u64, end_ns: u64) -> Record {
    Record::DeviceQueueEvent(DeviceQueueEvent { queue, epoch, begin_ns, end_ns })
}

fn dispatch(queue: u32, epoch: u64, kernel: &str, command: Option<u32>, begin_ns: u64, end_ns: u64) -> Record {
    Record::Dispatch(DispatchEvent {
        queue,
        epoch,
        kernel: kernel.to_string(),
        executable: SAMPLE_EXECUTABLE,
        grid: [1024, 1, 1],
        workgroup: [64, 1, 1],
        command: command.map(|command_index| CommandRef { command_buffer: SAMPLE_COMMAND_BUFFER, command_index }),
        begin_ns,
        end_ns,
    })
}

fn device_barrier(semaphore: u64, value: u64, producer_queue: u32, producer_epoch: u64) -> Wait {
    Wait { semaphore, value, resolution: WaitResolution::DeviceBarrier { producer_queue, producer_epoch } }
}

/// The sample's records, in an order a capture could write them (each queue's host records in
/// order, device records later and interleaved).
pub fn sample_records() -> Vec<Record> {
    let kernel = |symbol: &str| KernelMetadata {
        symbol: symbol.to_string(),
        kernarg_size: 24,
        group_segment_size: 0,
        private_segment_size: 0,
        required_workgroup_size: None,
        workgroup_size_hint: Some([64, 1, 1]),
    };
    let signal = |semaphore, value| Signal { semaphore, value };
    let wait = |semaphore, value, resolution| Wait { semaphore, value, resolution };
    vec![
        Record::Executable(ExecutableMetadata {
            executable: SAMPLE_EXECUTABLE,
            code_object_hash: CodeObjectHash::of(b"sample code object"),
            target: "amdgcn-amd-amdhsa--gfx11-generic".to_string(),
            code_object_version: 6,
            kernels: vec![kernel("scale"), kernel("add")],
        }),
        submission(0, 1, OperationKind::Dispatch, vec![], vec![signal(1, 1)], (1000, 1100)),
        submission(1, 1, OperationKind::Dispatch, vec![device_barrier(1, 1, 0, 1)], vec![], (1150, 1400)),
        submission(0, 2, OperationKind::Fill, vec![], vec![signal(2, 1)], (1200, 1250)),
        submission(0, 3, OperationKind::Execute, vec![], vec![signal(1, 2)], (1300, 1600)),
        submission(
            1,
            2,
            OperationKind::Barrier,
            vec![device_barrier(1, 2, 0, 3), wait(2, 1, WaitResolution::Satisfied)],
            vec![],
            (1700, 1720),
        ),
        submission(
            1,
            3,
            OperationKind::Copy,
            vec![wait(3, 1, WaitResolution::Deferred), wait(1, 1, WaitResolution::CoveredByFrontier)],
            vec![signal(4, 1)],
            (1800, 7000),
        ),
        device(0, 1, 2000, 3000),
        dispatch(0, 1, "scale", None, 2000, 2900),
        device(1, 1, 2500, 3800),
        dispatch(1, 1, "add", None, 3000, 3800),
        Record::Counter(CounterSample { queue: 0, timestamp_ns: 3000, name: "submissions".to_string(), value: 1 }),
        device(0, 2, 3000, 3500),
        device(0, 3, 3500, 6500),
        dispatch(0, 3, "scale", Some(0), 3600, 4600),
        dispatch(0, 3, "add", Some(1), 4600, 6400),
        Record::Counter(CounterSample { queue: 0, timestamp_ns: 6500, name: "submissions".to_string(), value: 3 }),
        device(1, 2, 4000, 6600),
        submission(0, 4, OperationKind::Update, vec![], vec![signal(3, 1)], (6900, 6950)),
        device(0, 4, 6960, 7060),
        device(1, 3, 7100, 7200),
        submission(1, 4, OperationKind::Update, vec![device_barrier(1, 2, 0, 3)], vec![], (7300, 7310)),
        Record::Counter(CounterSample { queue: 1, timestamp_ns: 7200, name: "packets".to_string(), value: 9 }),
        Record::Dropped(Dropped { queue: 1, count: 3 }),
    ]
}

/// The sample as a complete `.aqprof` file.
pub fn sample_bundle() -> Vec<u8> {
    let mut writer = crate::ProfileWriter::new(Vec::new(), &sample_header()).expect("writing to a Vec cannot fail");
    for record in sample_records() {
        writer.append(&record).expect("the sample's records encode");
    }
    writer.finish().expect("writing to a Vec cannot fail")
}
