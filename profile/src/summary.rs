//! `aqueduct profile summary`: per queue and per kernel counts and timings, cross-queue waits and
//! dropped records.
//!
//! One pass over the records. Exact percentiles need every duration, so the summary keeps one
//! `u64` per submission and per dispatch, and the device span of each submission to time the
//! waits: a few dozen bytes per submission, never the records themselves.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;

use serde::Serialize;

use crate::format::{FormatVersion, ProfileReader, Result};
use crate::record::{BundleHeader, Record, WaitResolution};

/// The nearest-rank `percent` percentile of `sorted` (ascending): the smallest value with at least
/// `percent` % of the values at or below it; `None` when there are none. The one definition the
/// profile summary and `aqueduct bench` share.
pub fn nearest_rank<T: Copy>(sorted: &[T], percent: u32) -> Option<T> {
    let rank = (u64::from(percent.min(100)) * sorted.len() as u64).div_ceil(100).max(1);
    sorted.get(rank as usize - 1).copied()
}

/// Count, total, mean and nearest-rank percentiles of a set of durations (ns).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DurationStats {
    pub count: u64,
    pub total_ns: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
}

impl DurationStats {
    /// Percentiles by nearest rank: the smallest duration with at least p% of them at or below it.
    pub fn of(mut durations: Vec<u64>) -> DurationStats {
        if durations.is_empty() {
            return DurationStats::default();
        }
        durations.sort_unstable();
        let count = durations.len() as u64;
        let total_ns = durations.iter().fold(0u64, |sum, duration| sum.saturating_add(*duration));
        let rank = |percent| nearest_rank(&durations, percent).unwrap_or_default();
        DurationStats {
            count,
            total_ns,
            mean_ns: total_ns as f64 / count as f64,
            p50_ns: rank(50),
            p90_ns: rank(90),
            p99_ns: rank(99),
        }
    }
}

/// A queue's device-side waits on one other queue.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueWaits {
    pub producer_queue: u32,
    /// Waits resolved as a device barrier on this producer.
    pub device_barrier_waits: u64,
    /// Those whose waiting and producing submissions both have device records.
    pub timed_waits: u64,
    /// Over the timed waits: the producer epoch's device end minus the waiting submission's device
    /// begin, where positive (the time the waiting submission sat at its barrier).
    pub total_wait_ns: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueSummary {
    pub queue: u32,
    /// Host submission records.
    pub submissions: u64,
    /// Device end − begin of each submission.
    pub device_time: DurationStats,
    /// Published − submit entry of each submission.
    pub host_submit_cost: DurationStats,
    pub waits_on: Vec<QueueWaits>,
    pub dropped: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelSummary {
    pub kernel: String,
    pub executable: u64,
    /// Device end − begin of each dispatch.
    pub device_time: DurationStats,
}

/// The whole summary: `--json` prints it as is.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub format_version: FormatVersion,
    pub header: BundleHeader,
    pub records: u64,
    pub queues: Vec<QueueSummary>,
    pub kernels: Vec<KernelSummary>,
    pub dropped: u64,
}

#[derive(Default)]
struct QueueAccumulator {
    submissions: u64,
    device_times: Vec<u64>,
    host_costs: Vec<u64>,
    dropped: u64,
}

struct PendingWait {
    queue: u32,
    epoch: u64,
    producer_queue: u32,
    producer_epoch: u64,
}

/// Reads every record of `reader` and summarizes them.
pub fn summarize<R: Read>(reader: ProfileReader<R>) -> Result<Summary> {
    let format_version = reader.version();
    let header = reader.header().clone();
    let mut records = 0u64;
    let mut queues: BTreeMap<u32, QueueAccumulator> = BTreeMap::new();
    let mut kernels: BTreeMap<(String, u64), Vec<u64>> = BTreeMap::new();
    let mut device_spans: HashMap<(u32, u64), (u64, u64)> = HashMap::new();
    let mut pending_waits: Vec<PendingWait> = Vec::new();
    for record in reader {
        records += 1;
        match record? {
            Record::QueueEvent(event) => {
                let queue = queues.entry(event.queue).or_default();
                queue.submissions += 1;
                queue.host_costs.push(event.published_ns.saturating_sub(event.submit_entry_ns));
                for wait in &event.waits {
                    if let WaitResolution::DeviceBarrier { producer_queue, producer_epoch } = wait.resolution {
                        pending_waits.push(PendingWait {
                            queue: event.queue,
                            epoch: event.epoch,
                            producer_queue,
                            producer_epoch,
                        });
                    }
                }
            }
            Record::DeviceQueueEvent(event) => {
                queues.entry(event.queue).or_default().device_times.push(event.end_ns.saturating_sub(event.begin_ns));
                device_spans.insert((event.queue, event.epoch), (event.begin_ns, event.end_ns));
            }
            Record::Dispatch(event) => {
                kernels
                    .entry((event.kernel, event.executable))
                    .or_default()
                    .push(event.end_ns.saturating_sub(event.begin_ns));
            }
            Record::Dropped(dropped) => {
                let queue = queues.entry(dropped.queue).or_default();
                queue.dropped = queue.dropped.saturating_add(dropped.count);
            }
            Record::Executable(_) | Record::Counter(_) => {}
        }
    }

    let mut waits: BTreeMap<(u32, u32), QueueWaits> = BTreeMap::new();
    for wait in pending_waits {
        let entry = waits.entry((wait.queue, wait.producer_queue)).or_insert(QueueWaits {
            producer_queue: wait.producer_queue,
            device_barrier_waits: 0,
            timed_waits: 0,
            total_wait_ns: 0,
        });
        entry.device_barrier_waits += 1;
        let waiting = device_spans.get(&(wait.queue, wait.epoch));
        let producing = device_spans.get(&(wait.producer_queue, wait.producer_epoch));
        if let (Some(&(begin, _)), Some(&(_, producer_end))) = (waiting, producing) {
            entry.timed_waits += 1;
            entry.total_wait_ns = entry.total_wait_ns.saturating_add(producer_end.saturating_sub(begin));
        }
    }

    let dropped = queues.values().fold(0u64, |sum, queue| sum.saturating_add(queue.dropped));
    let queues = queues
        .into_iter()
        .map(|(queue, accumulator)| QueueSummary {
            queue,
            submissions: accumulator.submissions,
            device_time: DurationStats::of(accumulator.device_times),
            host_submit_cost: DurationStats::of(accumulator.host_costs),
            waits_on: waits.range((queue, 0)..=(queue, u32::MAX)).map(|(_, waits)| waits.clone()).collect(),
            dropped: accumulator.dropped,
        })
        .collect();
    let kernels = kernels
        .into_iter()
        .map(|((kernel, executable), durations)| KernelSummary {
            kernel,
            executable,
            device_time: DurationStats::of(durations),
        })
        .collect();
    Ok(Summary { format_version, header, records, queues, kernels, dropped })
}
