//! What the timeline exports need before they can stream events: every submission's host and
//! device span, its operation, who signalled what, and the time range. Built in one pass over the
//! file; its size is a few dozen bytes per submission, never the records.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;

use serde_json::Value;

use crate::format::{ProfileReader, Result};
use crate::record::{OperationKind, Record, Wait, WaitResolution};

#[derive(Default)]
pub(crate) struct TimelineIndex {
    pub(crate) origin_ns: Option<u64>,
    /// The latest timestamp seen (an end where the record has one).
    pub(crate) end_ns: u64,
    pub(crate) queues: BTreeSet<u32>,
    pub(crate) host_spans: HashMap<(u32, u64), (u64, u64)>,
    pub(crate) device_spans: HashMap<(u32, u64), (u64, u64)>,
    pub(crate) operations: HashMap<(u32, u64), OperationKind>,
    /// Per semaphore, its signalled values and who signalled them, by value.
    signals: HashMap<u64, BTreeMap<u64, (u32, u64)>>,
    pub(crate) executables: Vec<Value>,
    pub(crate) dropped: BTreeMap<u32, u64>,
    /// The counters' time range: it sets the timeline's range only when nothing else does (a
    /// capture samples its counters from its start, before the workload's first submission).
    counter_span: Option<(u64, u64)>,
}

impl TimelineIndex {
    fn see_span(&mut self, begin_ns: u64, end_ns: u64) {
        self.origin_ns = Some(self.origin_ns.map_or(begin_ns, |origin| origin.min(begin_ns)));
        self.end_ns = self.end_ns.max(begin_ns).max(end_ns);
    }

    pub(crate) fn build<R: Read>(reader: ProfileReader<R>) -> Result<TimelineIndex> {
        let mut index = TimelineIndex::default();
        for record in reader {
            match record? {
                Record::QueueEvent(event) => {
                    index.queues.insert(event.queue);
                    index.see_span(event.submit_entry_ns, event.published_ns);
                    index.host_spans.insert((event.queue, event.epoch), (event.submit_entry_ns, event.published_ns));
                    index.operations.insert((event.queue, event.epoch), event.operation);
                    for signal in &event.signals {
                        // The first submission to signal a value is the one that reached it.
                        index
                            .signals
                            .entry(signal.semaphore)
                            .or_default()
                            .entry(signal.value)
                            .or_insert((event.queue, event.epoch));
                    }
                }
                Record::DeviceQueueEvent(event) => {
                    index.queues.insert(event.queue);
                    index.see_span(event.begin_ns, event.end_ns);
                    index.device_spans.insert((event.queue, event.epoch), (event.begin_ns, event.end_ns));
                }
                Record::Dispatch(event) => {
                    index.queues.insert(event.queue);
                    index.see_span(event.begin_ns, event.end_ns);
                }
                Record::Counter(sample) => {
                    index.queues.insert(sample.queue);
                    let (first, last) = index.counter_span.unwrap_or((sample.timestamp_ns, sample.timestamp_ns));
                    index.counter_span = Some((first.min(sample.timestamp_ns), last.max(sample.timestamp_ns)));
                }
                Record::Executable(executable) => {
                    index.executables.push(serde_json::to_value(&executable).map_err(crate::format::json_error)?)
                }
                Record::Dropped(dropped) => {
                    index.queues.insert(dropped.queue);
                    let count = index.dropped.entry(dropped.queue).or_default();
                    *count = count.saturating_add(dropped.count);
                }
            }
        }
        if let (None, Some((first, last))) = (index.origin_ns, index.counter_span) {
            index.see_span(first, last);
        }
        Ok(index)
    }

    /// The submission whose signal satisfied `wait`, if the bundle shows one.
    pub(crate) fn producer_of(&self, wait: &Wait) -> Option<(u32, u64)> {
        match wait.resolution {
            WaitResolution::DeviceBarrier { producer_queue, producer_epoch } => Some((producer_queue, producer_epoch)),
            // Parked until the semaphore advanced: the first signal at or past the value did it.
            WaitResolution::Deferred => {
                self.signals.get(&wait.semaphore)?.range(wait.value..).next().map(|(_, producer)| *producer)
            }
            // Resolved at admission without waiting: there is nothing to draw.
            WaitResolution::Satisfied | WaitResolution::SameQueue | WaitResolution::CoveredByFrontier => None,
        }
    }

    pub(crate) fn microseconds(&self, ns: u64) -> f64 {
        ns.saturating_sub(self.origin_ns.unwrap_or(0)) as f64 / 1000.0
    }

    /// Where a flow from `producer` to `waiter` runs: on the device tracks when both have device
    /// records (from just inside the producer's end to the moment the waiter's barrier let go: the
    /// producer's end clamped into the waiter's span), else on the host tracks (producer published
    /// → waiter's submit entry). Each end lies inside its span, so viewers bind it to that slice.
    pub(crate) fn flow_endpoints(&self, producer: (u32, u64), waiter: (u32, u64)) -> Option<FlowEndpoints> {
        match (self.device_spans.get(&producer), self.device_spans.get(&waiter)) {
            (Some(&(producer_begin, producer_end)), Some(&(waiter_begin, waiter_end))) => Some(FlowEndpoints {
                on_device: true,
                from_ns: producer_end.saturating_sub(1).max(producer_begin),
                to_ns: producer_end.clamp(waiter_begin, waiter_end.saturating_sub(1).max(waiter_begin)),
            }),
            _ => {
                let (producer_entry, producer_published) = *self.host_spans.get(&producer)?;
                let (waiter_entry, _) = *self.host_spans.get(&waiter)?;
                Some(FlowEndpoints {
                    on_device: false,
                    from_ns: producer_published.saturating_sub(1).max(producer_entry),
                    to_ns: waiter_entry,
                })
            }
        }
    }
}

pub(crate) struct FlowEndpoints {
    pub(crate) on_device: bool,
    pub(crate) from_ns: u64,
    pub(crate) to_ns: u64,
}
