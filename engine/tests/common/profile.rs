//! What the capture tests share: where a capture writes, reading it back, and picking records.

use std::path::PathBuf;

use aqueduct_profile::{DeviceQueueEvent, DispatchEvent, ProfileReader, QueueEvent, Record};

/// A capture file unique to this test process and `name`.
pub fn output(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("aqueduct-test-{}-{name}.aqprof", std::process::id()))
}

/// The records of a finished capture, removing its file.
pub fn read(path: &PathBuf) -> Vec<Record> {
    read_keeping(path).0
}

/// The records, and the file's bytes (for the tools), removing the file.
pub fn read_keeping(path: &PathBuf) -> (Vec<Record>, Vec<u8>) {
    let bytes = std::fs::read(path).expect("the capture wrote its file");
    std::fs::remove_file(path).ok();
    let reader = ProfileReader::new(bytes.as_slice()).expect("a valid header");
    let records = reader.collect::<Result<Vec<_>, _>>().expect("every record decodes and the end chunk is there");
    (records, bytes)
}

pub fn queue_events(records: &[Record], queue: u32) -> Vec<&QueueEvent> {
    records
        .iter()
        .filter_map(|record| match record {
            Record::QueueEvent(event) if event.queue == queue => Some(event),
            _ => None,
        })
        .collect()
}

pub fn device_event(records: &[Record], queue: u32, epoch: u64) -> &DeviceQueueEvent {
    records
        .iter()
        .find_map(|record| match record {
            Record::DeviceQueueEvent(event) if event.queue == queue && event.epoch == epoch => Some(event),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no device event for queue {queue} epoch {epoch}"))
}

pub fn dispatches(records: &[Record], queue: u32) -> Vec<&DispatchEvent> {
    records
        .iter()
        .filter_map(|record| match record {
            Record::Dispatch(event) if event.queue == queue => Some(event),
            _ => None,
        })
        .collect()
}
