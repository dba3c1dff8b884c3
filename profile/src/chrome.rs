//! `aqueduct profile export --format chrome`: Trace Event JSON (the JSON object format), which
//! Perfetto's UI and chrome://tracing open.
//!
//! Each queue is a process (`pid` = queue + 1) with two threads: `tid` 1 its host submissions
//! (submit entry → published), `tid` 2 its device execution (submissions, and dispatches nested in
//! them). Flow arrows run from the submission whose signal satisfied a wait to the waiting
//! submission; counters are `C` events on the queue's process.
//!
//! Two passes over the file: the first indexes what flows need (each submission's host and device
//! span and its signals), the second streams the events out, so only that index is held.

use std::io::{self, Read, Seek, SeekFrom, Write};

use serde_json::{Value, json};

use crate::format::{ProfileReader, Result, json_error};
use crate::record::{QueueEvent, Record, Wait};
use crate::timeline::TimelineIndex;

pub const HOST_THREAD: u32 = 1;
pub const DEVICE_THREAD: u32 = 2;

pub fn queue_process(queue: u32) -> u64 {
    u64::from(queue) + 1
}

/// Writes the Chrome trace of the bundle read from `input` to `out`. Reads `input` twice.
pub fn export_chrome<R: Read + Seek, W: Write>(mut input: R, out: W) -> Result<()> {
    let start = input.stream_position()?;
    let index = TimelineIndex::build(ProfileReader::new(&mut input)?)?;
    input.seek(SeekFrom::Start(start))?;
    let reader = ProfileReader::new(&mut input)?;

    let mut writer = EventWriter { out: io::BufWriter::new(out), first: true };
    let header = serde_json::to_value(reader.header()).map_err(json_error)?;
    let dropped: serde_json::Map<String, Value> =
        index.dropped.iter().map(|(queue, count)| (format!("queue {queue}"), json!(count))).collect();
    let other_data = json!({
        "header": header,
        "time_origin_ns": index.origin_ns.unwrap_or(0),
        "executables": index.executables,
        "dropped_records": dropped,
    });
    write!(writer.out, "{{\"displayTimeUnit\":\"ns\",\"otherData\":")?;
    serde_json::to_writer(&mut writer.out, &other_data).map_err(json_error)?;
    write!(writer.out, ",\"traceEvents\":[")?;

    for &queue in &index.queues {
        let pid = queue_process(queue);
        writer.event(
            &json!({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": format!("queue {queue}")}}),
        )?;
        writer.event(&json!({"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": queue}}))?;
        writer.event(&json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": HOST_THREAD, "args": {"name": "host submissions"}}))?;
        writer.event(&json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": DEVICE_THREAD, "args": {"name": "device execution"}}))?;
    }

    let mut next_flow_id = 1u64;
    for record in reader {
        match record? {
            Record::QueueEvent(event) => {
                writer.event(&host_slice(&index, &event))?;
                for wait in &event.waits {
                    let Some(producer) = index.producer_of(wait) else { continue };
                    if let Some((start, finish)) =
                        flow(&index, producer, (event.queue, event.epoch), wait, next_flow_id)
                    {
                        writer.event(&start)?;
                        writer.event(&finish)?;
                        next_flow_id += 1;
                    }
                }
            }
            Record::DeviceQueueEvent(event) => {
                let name = index
                    .operations
                    .get(&(event.queue, event.epoch))
                    .map_or_else(|| format!("epoch {}", event.epoch), |operation| operation.name().to_string());
                writer.event(&json!({
                    "ph": "X", "cat": "submission", "name": name,
                    "pid": queue_process(event.queue), "tid": DEVICE_THREAD,
                    "ts": index.microseconds(event.begin_ns),
                    "dur": event.end_ns.saturating_sub(event.begin_ns) as f64 / 1000.0,
                    "args": {"epoch": event.epoch},
                }))?;
            }
            Record::Dispatch(event) => {
                writer.event(&json!({
                    "ph": "X", "cat": "dispatch", "name": event.kernel,
                    "pid": queue_process(event.queue), "tid": DEVICE_THREAD,
                    "ts": index.microseconds(event.begin_ns),
                    "dur": event.end_ns.saturating_sub(event.begin_ns) as f64 / 1000.0,
                    "args": {
                        "epoch": event.epoch, "executable": event.executable,
                        "grid": event.grid, "workgroup": event.workgroup, "command": event.command,
                    },
                }))?;
            }
            Record::Counter(sample) => {
                writer.event(&json!({
                    "ph": "C", "name": sample.name, "pid": queue_process(sample.queue),
                    "ts": index.microseconds(sample.timestamp_ns),
                    "args": {"value": sample.value},
                }))?;
            }
            Record::Executable(_) | Record::Dropped(_) => {}
        }
    }
    write!(writer.out, "]}}")?;
    writer.out.flush()?;
    Ok(())
}

fn host_slice(index: &TimelineIndex, event: &QueueEvent) -> Value {
    json!({
        "ph": "X", "cat": "submission", "name": event.operation.name(),
        "pid": queue_process(event.queue), "tid": HOST_THREAD,
        "ts": index.microseconds(event.submit_entry_ns),
        "dur": event.published_ns.saturating_sub(event.submit_entry_ns) as f64 / 1000.0,
        "args": {
            "epoch": event.epoch, "packets": event.packets, "kernarg_bytes": event.kernarg_bytes,
            "waits": event.waits, "signals": event.signals, "completion_seen_ns": event.completion_seen_ns,
        },
    })
}

fn flow(
    index: &TimelineIndex,
    producer: (u32, u64),
    waiter: (u32, u64),
    wait: &Wait,
    id: u64,
) -> Option<(Value, Value)> {
    let endpoints = index.flow_endpoints(producer, waiter)?;
    let thread = if endpoints.on_device { DEVICE_THREAD } else { HOST_THREAD };
    let name = format!("semaphore {} ≥ {}", wait.semaphore, wait.value);
    let start = json!({
        "ph": "s", "cat": "dependency", "name": name, "id": id,
        "pid": queue_process(producer.0), "tid": thread, "ts": index.microseconds(endpoints.from_ns),
    });
    let finish = json!({
        "ph": "f", "bp": "e", "cat": "dependency", "name": name, "id": id,
        "pid": queue_process(waiter.0), "tid": thread, "ts": index.microseconds(endpoints.to_ns),
    });
    Some((start, finish))
}

struct EventWriter<W: Write> {
    out: W,
    first: bool,
}

impl<W: Write> EventWriter<W> {
    fn event(&mut self, event: &Value) -> Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        serde_json::to_writer(&mut self.out, event).map_err(json_error)
    }
}
