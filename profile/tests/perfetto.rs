//! The Perfetto export of the hand-worked sample, decoded back with the same generated types and
//! replayed the way trace processor reads it (each track's events in timestamp order, file order
//! breaking ties; an END closes the innermost open slice).

use std::collections::{BTreeMap, HashMap};

use aqueduct_profile::perfetto::protos::debug_annotation::Value as AnnotationValue;
use aqueduct_profile::perfetto::protos::trace_packet::{Data, OptionalTrustedPacketSequenceId, SequenceFlags};
use aqueduct_profile::perfetto::protos::track_event::{CounterValueField, NameField, Type};
use aqueduct_profile::perfetto::protos::{Trace, TrackDescriptor, TrackEvent};
use aqueduct_profile::perfetto::{FIRST_COUNTER_TRACK, SEQUENCE_ID, device_track, host_track, queue_track};
use aqueduct_profile::sample::sample_bundle;
use aqueduct_profile::{CaptureFileError, export_chrome, export_perfetto};
use prost::Message;

fn perfetto_bytes(bundle: Vec<u8>) -> Result<Vec<u8>, CaptureFileError> {
    let mut out = Vec::new();
    export_perfetto(std::io::Cursor::new(bundle), &mut out)?;
    Ok(out)
}

fn sample_trace() -> Trace {
    Trace::decode(perfetto_bytes(sample_bundle()).unwrap().as_slice()).expect("the export decodes as a Trace")
}

/// A slice as trace processor would build it.
#[derive(Debug, Clone)]
struct Slice {
    name: String,
    begin: u64,
    end: u64,
    depth: usize,
    flow_ids: Vec<u64>,
    terminating_flow_ids: Vec<u64>,
    annotations: HashMap<String, AnnotationValue>,
}

struct Decoded {
    descriptors: Vec<TrackDescriptor>,
    /// Per track, its slices in begin order.
    slices: BTreeMap<u64, Vec<Slice>>,
    /// (track, timestamp, value), in file order.
    counters: Vec<(u64, u64, i64)>,
}

fn decode(trace: &Trace) -> Decoded {
    let mut descriptors = Vec::new();
    let mut events: BTreeMap<u64, Vec<(u64, usize, TrackEvent)>> = BTreeMap::new();
    let mut counters = Vec::new();
    for (position, packet) in trace.packet.iter().enumerate() {
        match packet.data.clone().expect("every packet carries data") {
            Data::TrackDescriptor(descriptor) => {
                descriptors.push(descriptor);
            }
            Data::TrackEvent(event) => {
                let track = event.track_uuid.expect("every event names its track");
                assert!(
                    descriptors.iter().any(|descriptor| descriptor.uuid == Some(track)),
                    "track {track} is described before its first event"
                );
                let timestamp = packet.timestamp.expect("every event has a timestamp");
                if event.r#type() == Type::Counter {
                    let Some(CounterValueField::CounterValue(value)) = event.counter_value_field else {
                        panic!("a counter event without an integer value: {event:?}")
                    };
                    counters.push((track, timestamp, value));
                } else {
                    events.entry(track).or_default().push((timestamp, position, event));
                }
            }
        }
    }
    let mut slices = BTreeMap::new();
    for (track, mut events) in events {
        events.sort_by_key(|&(timestamp, position, _)| (timestamp, position));
        let mut open: Vec<Slice> = Vec::new();
        let mut done = Vec::new();
        for (timestamp, _, event) in events {
            match event.r#type() {
                Type::SliceBegin => {
                    let Some(NameField::Name(name)) = event.name_field else { panic!("an unnamed slice") };
                    open.push(Slice {
                        name,
                        begin: timestamp,
                        end: 0,
                        depth: open.len(),
                        flow_ids: event.flow_ids,
                        terminating_flow_ids: event.terminating_flow_ids,
                        annotations: event
                            .debug_annotations
                            .into_iter()
                            .map(|annotation| {
                                let aqueduct_profile::perfetto::protos::debug_annotation::NameField::Name(name) =
                                    annotation.name_field.unwrap();
                                (name, annotation.value.unwrap())
                            })
                            .collect(),
                    });
                }
                Type::SliceEnd => {
                    let mut slice = open.pop().expect("an END closes an open slice");
                    slice.end = timestamp;
                    done.push(slice);
                }
                other => panic!("unexpected event type {other:?}"),
            }
        }
        assert!(open.is_empty(), "track {track} leaves slices open: {open:?}");
        done.sort_by_key(|slice| (slice.begin, slice.depth));
        slices.insert(track, done);
    }
    Decoded { descriptors, slices, counters }
}

fn spans(slices: &[Slice]) -> Vec<(&str, u64, u64, usize)> {
    slices.iter().map(|slice| (slice.name.as_str(), slice.begin, slice.end, slice.depth)).collect()
}

#[test]
fn packets_are_on_one_sequence_whose_first_packet_clears_incremental_state() {
    let trace = sample_trace();
    assert!(trace.packet.len() > 40, "{}", trace.packet.len());
    for (position, packet) in trace.packet.iter().enumerate() {
        assert_eq!(
            packet.optional_trusted_packet_sequence_id,
            Some(OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(SEQUENCE_ID))
        );
        let expected_flags = (position == 0).then_some(SequenceFlags::SeqIncrementalStateCleared as u32);
        assert_eq!(packet.sequence_flags, expected_flags, "packet {position}");
        assert_eq!(packet.first_packet_on_sequence, (position == 0).then_some(true));
    }
}

#[test]
fn every_queue_has_a_parent_with_host_device_and_counter_tracks() {
    let decoded = decode(&sample_trace());
    let tracks: Vec<(u64, Option<u64>, &str, bool)> = decoded
        .descriptors
        .iter()
        .map(|descriptor| {
            (descriptor.uuid.unwrap(), descriptor.parent_uuid, descriptor.name(), descriptor.counter.is_some())
        })
        .collect();
    assert_eq!(
        tracks,
        [
            (queue_track(0), None, "queue 0", false),
            (host_track(0), Some(queue_track(0)), "host submissions", false),
            (device_track(0), Some(queue_track(0)), "device execution", false),
            (queue_track(1), None, "queue 1 (3 records dropped)", false),
            (host_track(1), Some(queue_track(1)), "host submissions", false),
            (device_track(1), Some(queue_track(1)), "device execution", false),
            (FIRST_COUNTER_TRACK, Some(queue_track(0)), "submissions", true),
            (FIRST_COUNTER_TRACK + 1, Some(queue_track(1)), "packets", true),
        ]
    );
    // Slices go on the host and device tracks only.
    let with_slices: Vec<u64> = decoded.slices.keys().copied().collect();
    assert_eq!(with_slices, [host_track(0), device_track(0), host_track(1), device_track(1)]);
}

#[test]
fn slices_match_the_records() {
    let decoded = decode(&sample_trace());
    let on = |track| spans(&decoded.slices[&track]);
    assert_eq!(
        on(host_track(0)),
        [("dispatch", 1000, 1100, 0), ("fill", 1200, 1250, 0), ("execute", 1300, 1600, 0), ("update", 6900, 6950, 0)]
    );
    assert_eq!(
        on(host_track(1)),
        [("dispatch", 1150, 1400, 0), ("barrier", 1700, 1720, 0), ("copy", 1800, 7000, 0), ("update", 7300, 7310, 0)]
    );
    // Dispatches nest in the device span of the submission that carried them.
    assert_eq!(
        on(device_track(0)),
        [
            ("dispatch", 2000, 3000, 0),
            ("scale", 2000, 2900, 1),
            ("fill", 3000, 3500, 0),
            ("execute", 3500, 6500, 0),
            ("scale", 3600, 4600, 1),
            ("add", 4600, 6400, 1),
            ("update", 6960, 7060, 0)
        ]
    );
    assert_eq!(
        on(device_track(1)),
        [("dispatch", 2500, 3800, 0), ("add", 3000, 3800, 1), ("barrier", 4000, 6600, 0), ("copy", 7100, 7200, 0)]
    );
    let executed = decoded.slices[&device_track(0)].iter().find(|slice| slice.name == "add").unwrap();
    assert_eq!(executed.annotations["command_index"], AnnotationValue::UintValue(1));
    assert_eq!(executed.annotations["command_buffer"], AnnotationValue::UintValue(9));
    assert_eq!(executed.annotations["grid"], AnnotationValue::StringValue("1024×1×1".to_string()));
    let copy = decoded.slices[&host_track(1)].iter().find(|slice| slice.name == "copy").unwrap();
    assert_eq!(copy.annotations["epoch"], AnnotationValue::UintValue(3));
    assert_eq!(copy.annotations["completion_seen_ns"], AnnotationValue::UintValue(17_000));
}

#[test]
fn counters_are_samples_on_their_tracks() {
    let decoded = decode(&sample_trace());
    assert_eq!(
        decoded.counters,
        [(FIRST_COUNTER_TRACK, 3000, 1), (FIRST_COUNTER_TRACK, 6500, 3), (FIRST_COUNTER_TRACK + 1, 7200, 9)]
    );
}

/// A flow's end: the track and the begin and end of the slice it binds to.
type FlowEnd = (u64, u64, u64);

/// Per flow id: the slice it starts at and the one it ends at.
fn flows(decoded: &Decoded) -> BTreeMap<u64, (FlowEnd, FlowEnd)> {
    let mut starts = BTreeMap::new();
    let mut ends = BTreeMap::new();
    for (&track, slices) in &decoded.slices {
        for slice in slices {
            for &id in &slice.flow_ids {
                assert!(starts.insert(id, (track, slice.begin, slice.end)).is_none(), "flow {id} starts twice");
            }
            for &id in &slice.terminating_flow_ids {
                assert!(ends.insert(id, (track, slice.begin, slice.end)).is_none(), "flow {id} ends twice");
            }
        }
    }
    assert_eq!(starts.keys().collect::<Vec<_>>(), ends.keys().collect::<Vec<_>>(), "every flow starts and ends");
    starts.into_iter().map(|(id, start)| (id, (start, ends[&id]))).collect()
}

#[test]
fn flows_run_from_each_signal_to_the_waits_it_satisfied() {
    let decoded = decode(&sample_trace());
    // (id, (track, slice begin) it starts at, (track, slice begin) it ends at)
    type Flow = (u64, (u64, u64), (u64, u64));
    let found: Vec<Flow> =
        flows(&decoded).into_iter().map(|(id, (from, to))| (id, (from.0, from.1), (to.0, to.1))).collect();
    // (0,1) → (1,1), (0,3) → (1,2) and (0,4) → (1,3) (deferred on sem 3) on the device; (0,3) →
    // (1,4) on the host, since epoch 4 has no device record. Satisfied and frontier-covered waits
    // draw nothing.
    assert_eq!(
        found,
        [
            (1, (device_track(0), 2000), (device_track(1), 2500)),
            (2, (device_track(0), 3500), (device_track(1), 4000)),
            (3, (device_track(0), 6960), (device_track(1), 7100)),
            (4, (host_track(0), 1300), (host_track(1), 7300)),
        ]
    );
}

#[test]
fn flows_are_the_chrome_exports_flows() {
    let decoded = decode(&sample_trace());
    let perfetto = flows(&decoded);
    let mut out = Vec::new();
    export_chrome(std::io::Cursor::new(sample_bundle()), &mut out).unwrap();
    let chrome: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let origin_ns = chrome["otherData"]["time_origin_ns"].as_u64().unwrap();
    let mut chrome_flows = 0;
    for event in chrome["traceEvents"].as_array().unwrap() {
        let start = match event["ph"].as_str() {
            Some("s") => true,
            Some("f") => false,
            _ => continue,
        };
        chrome_flows += usize::from(start);
        let id = event["id"].as_u64().unwrap();
        let queue = u32::try_from(event["pid"].as_u64().unwrap() - 1).unwrap();
        let track = match event["tid"].as_u64().unwrap() {
            1 => host_track(queue),
            2 => device_track(queue),
            other => panic!("thread {other}"),
        };
        let ns = origin_ns + (event["ts"].as_f64().unwrap() * 1000.0).round() as u64;
        let (perfetto_track, begin, end) = if start { perfetto[&id].0 } else { perfetto[&id].1 };
        // Same queue and track, and the Chrome endpoint lies in the slice the Perfetto flow binds to.
        assert_eq!(perfetto_track, track, "flow {id}");
        assert!((begin..=end).contains(&ns), "flow {id}: {ns} outside {begin}..={end}");
    }
    assert_eq!(chrome_flows, perfetto.len());
}

#[test]
fn a_bad_bundle_is_an_error_not_a_panic() {
    let bytes = sample_bundle();
    assert!(matches!(perfetto_bytes(bytes[..bytes.len() - 3].to_vec()), Err(CaptureFileError::Truncated { .. })));
    assert!(perfetto_bytes(b"not a profile at all".to_vec()).is_err());
}

/// Counts the bytes read through it.
struct CountingReader<R> {
    inner: R,
    read: std::rc::Rc<std::cell::Cell<u64>>,
}

impl<R: std::io::Read> std::io::Read for CountingReader<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let count = self.inner.read(buffer)?;
        self.read.set(self.read.get() + count as u64);
        Ok(count)
    }
}

impl<R: std::io::Seek> std::io::Seek for CountingReader<R> {
    fn seek(&mut self, position: std::io::SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(position)
    }
}

/// Remembers how much of the input had been read when the first output byte came.
struct FirstWrite {
    read: std::rc::Rc<std::cell::Cell<u64>>,
    read_at_first_write: Option<u64>,
    written: u64,
}

impl std::io::Write for FirstWrite {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        self.read_at_first_write.get_or_insert(self.read.get());
        self.written += buffer.len() as u64;
        Ok(buffer.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn packets_stream_out_while_the_last_pass_reads() {
    use aqueduct_profile::{OperationKind, ProfileWriter, QueueEvent, Record, sample::sample_header};
    let mut writer = ProfileWriter::new(Vec::new(), &sample_header()).unwrap();
    for epoch in 1..=20_000u64 {
        let start = epoch * 1000;
        writer
            .append(&Record::QueueEvent(QueueEvent {
                queue: (epoch % 4) as u32,
                operation: OperationKind::Dispatch,
                epoch,
                waits: Vec::new(),
                signals: Vec::new(),
                packets: 1,
                kernarg_bytes: 64,
                submit_entry_ns: start,
                published_ns: start + 100,
                completion_seen_ns: None,
            }))
            .unwrap();
    }
    let bundle = writer.finish().unwrap();
    let length = bundle.len() as u64;
    let read = std::rc::Rc::new(std::cell::Cell::new(0));
    let input = CountingReader { inner: std::io::Cursor::new(bundle), read: read.clone() };
    let mut out = FirstWrite { read: read.clone(), read_at_first_write: None, written: 0 };
    export_perfetto(input, &mut out).unwrap();
    let first = out.read_at_first_write.expect("the export wrote");
    // Two indexing passes read the whole file; the third had barely begun when packets went out.
    assert!(first >= 2 * length && first < 2 * length + length / 4, "first write after {first} of {length} × 3");
    // Megabytes out, which the export never held: it wrote them as it went.
    assert!(out.written > 1 << 20, "{} bytes out", out.written);
    assert_eq!(read.get(), 3 * length);
}
