//! The tools' numbers against the sample bundle, worked out by hand (see `sample.rs`'s table).

use aqueduct_profile::chrome::{DEVICE_THREAD, HOST_THREAD};
use aqueduct_profile::sample::{self, sample_bundle};
use aqueduct_profile::summary::QueueWaits;
use aqueduct_profile::*;
use serde_json::Value;

fn stats(count: u64, total_ns: u64, mean_ns: f64, p50_ns: u64, p90_ns: u64, p99_ns: u64) -> DurationStats {
    DurationStats { count, total_ns, mean_ns, p50_ns, p90_ns, p99_ns }
}

#[test]
fn nearest_rank_percentiles() {
    assert_eq!(DurationStats::of(vec![]), DurationStats::default());
    assert_eq!(DurationStats::of(vec![7]), stats(1, 7, 7.0, 7, 7, 7));
    // 1..=100: the p-th percentile is p itself.
    assert_eq!(DurationStats::of((1..=100).rev().collect()), stats(100, 5050, 50.5, 50, 90, 99));
    assert_eq!(DurationStats::of(vec![u64::MAX, 1]).total_ns, u64::MAX, "the total saturates");
}

#[test]
fn summary_matches_the_hand_computed_numbers() {
    let summary = summarize(ProfileReader::new(sample_bundle().as_slice()).unwrap()).unwrap();
    // 1 executable, 8 submissions, 7 device records, 4 dispatches, 3 counters, 1 dropped.
    assert_eq!(summary.records, 24);
    assert_eq!(summary.dropped, 3);
    assert_eq!(summary.queues.len(), 2);

    let queue0 = &summary.queues[0];
    assert_eq!((queue0.queue, queue0.submissions, queue0.dropped), (0, 4, 0));
    // device 1000, 500, 3000, 100; host 100, 50, 300, 50.
    assert_eq!(queue0.device_time, stats(4, 4600, 1150.0, 500, 3000, 3000));
    assert_eq!(queue0.host_submit_cost, stats(4, 500, 125.0, 50, 300, 300));
    assert!(queue0.waits_on.is_empty());

    let queue1 = &summary.queues[1];
    assert_eq!((queue1.queue, queue1.submissions, queue1.dropped), (1, 4, 3));
    // device 1300, 2600, 100 (epoch 4's record was dropped); host 250, 20, 5200, 10.
    assert_eq!(queue1.device_time, stats(3, 4000, 4000.0 / 3.0, 1300, 2600, 2600));
    assert_eq!(queue1.host_submit_cost, stats(4, 5480, 1370.0, 20, 5200, 5200));
    // Epoch 1 waits 3000 − 2500, epoch 2 waits 6500 − 4000; epoch 4 has no device record.
    assert_eq!(
        queue1.waits_on,
        [QueueWaits { producer_queue: 0, device_barrier_waits: 3, timed_waits: 2, total_wait_ns: 3000 }]
    );

    let kernels: Vec<(&str, u64, &DurationStats)> =
        summary.kernels.iter().map(|kernel| (kernel.kernel.as_str(), kernel.executable, &kernel.device_time)).collect();
    assert_eq!(
        kernels,
        [("add", 7, &stats(2, 2600, 1300.0, 800, 1800, 1800)), ("scale", 7, &stats(2, 1900, 950.0, 900, 1000, 1000))]
    );

    let json = serde_json::to_value(&summary).unwrap();
    assert_eq!(json["queues"][1]["host_submit_cost"]["p50_ns"], 20);
}

#[test]
fn dispatch_listings_hold_every_dispatch() {
    let mut jsonl = Vec::new();
    let count =
        write_dispatches(ProfileReader::new(sample_bundle().as_slice()).unwrap(), DispatchFormat::Jsonl, &mut jsonl)
            .unwrap();
    assert_eq!(count, 4);
    let rows: Vec<Value> =
        String::from_utf8(jsonl).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[2]["kernel"], "scale");
    assert_eq!(rows[2]["command_buffer"], 9);
    assert_eq!(rows[2]["command_index"], 0);
    assert_eq!(rows[2]["duration_ns"], 1000);
    assert_eq!(rows[0]["command_buffer"], Value::Null);

    let mut csv = Vec::new();
    write_dispatches(ProfileReader::new(sample_bundle().as_slice()).unwrap(), DispatchFormat::Csv, &mut csv).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 5);
    assert!(lines[0].starts_with("queue,epoch,kernel,executable,grid_x"));
    assert_eq!(lines[4], "0,3,add,7,1024,1,1,64,1,1,9,1,4600,6400,1800");
    assert_eq!(lines[1], "0,1,scale,7,1024,1,1,64,1,1,,,2000,2900,900");
}

fn chrome_trace() -> Value {
    let mut out = Vec::new();
    export_chrome(std::io::Cursor::new(sample_bundle()), &mut out).unwrap();
    serde_json::from_slice(&out).expect("the export is one JSON document")
}

#[test]
fn chrome_export_has_the_tracks_slices_and_counters() {
    let trace = chrome_trace();
    let events = trace["traceEvents"].as_array().unwrap();
    let of_phase = |phase: &'static str| events.iter().filter(move |event| event["ph"] == phase);
    let thread_names: Vec<(u64, u64, &str)> = of_phase("M")
        .filter(|event| event["name"] == "thread_name")
        .map(|event| {
            (event["pid"].as_u64().unwrap(), event["tid"].as_u64().unwrap(), event["args"]["name"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        thread_names,
        [
            (1, 1, "host submissions"),
            (1, 2, "device execution"),
            (2, 1, "host submissions"),
            (2, 2, "device execution")
        ]
    );
    let slices: Vec<&Value> = of_phase("X").collect();
    let on = |pid: u64, tid: u32| slices.iter().filter(move |event| event["pid"] == pid && event["tid"] == tid).count();
    assert_eq!((on(1, HOST_THREAD), on(2, HOST_THREAD)), (4, 4));
    // Queue 0: 4 submissions + 3 dispatches; queue 1: 3 submissions + 1 dispatch.
    assert_eq!((on(1, DEVICE_THREAD), on(2, DEVICE_THREAD)), (7, 4));
    // Timestamps are microseconds from the earliest one (1000 ns).
    let fill = slices.iter().find(|event| event["name"] == "fill" && event["tid"] == HOST_THREAD).unwrap();
    assert_eq!((fill["ts"].as_f64(), fill["dur"].as_f64()), (Some(0.2), Some(0.05)));
    let executed = slices.iter().find(|event| event["name"] == "add" && event["pid"] == 1).unwrap();
    assert_eq!(executed["args"]["command"]["command_index"], 1);
    assert_eq!(of_phase("C").count(), 3);
    assert_eq!(trace["otherData"]["dropped_records"]["queue 1"], 3);
    assert_eq!(trace["otherData"]["time_origin_ns"], 1000);
    assert_eq!(trace["otherData"]["executables"][0]["kernels"][1]["symbol"], "add");
}

#[test]
fn chrome_flows_run_from_each_signal_to_the_waits_it_satisfied() {
    let trace = chrome_trace();
    let events = trace["traceEvents"].as_array().unwrap();
    let flow_ends = |phase: &str| -> Vec<(u64, u64, u64, f64)> {
        let mut ends: Vec<_> = events
            .iter()
            .filter(|event| event["ph"] == phase)
            .map(|event| {
                (
                    event["id"].as_u64().unwrap(),
                    event["pid"].as_u64().unwrap(),
                    event["tid"].as_u64().unwrap(),
                    event["ts"].as_f64().unwrap(),
                )
            })
            .collect();
        ends.sort_by_key(|end| end.0);
        ends
    };
    let starts = flow_ends("s");
    let finishes = flow_ends("f");
    // Device flows end where the producer ended, clamped into the waiter's slice (the moment its
    // barrier let go). (0,1) → (1,1) and (0,3) → (1,2) on the device; (0,4) → (1,3), deferred on sem 3, on the
    // device; (0,3) → (1,4) on the host (epoch 4 has no device record). The satisfied and
    // frontier-covered waits draw nothing.
    let expected_starts = [(1, 1, 2, 1.999), (2, 1, 2, 5.499), (3, 1, 2, 6.059), (4, 1, 1, 0.599)];
    let expected_finishes = [(1, 2, 2, 2.0), (2, 2, 2, 5.5), (3, 2, 2, 6.1), (4, 2, 1, 6.3)];
    let close = |a: &[(u64, u64, u64, f64)], b: &[(u64, u64, u64, f64)]| {
        a.len() == b.len()
            && a.iter().zip(b).all(|(x, y)| x.0 == y.0 && x.1 == y.1 && x.2 == y.2 && (x.3 - y.3).abs() < 1e-9)
    };
    assert!(close(&starts, &expected_starts), "{starts:?}");
    assert!(close(&finishes, &expected_finishes), "{finishes:?}");
    assert!(events.iter().filter(|event| event["ph"] == "f").all(|event| event["bp"] == "e"));
}

fn svg_of(bundle: Vec<u8>) -> String {
    let mut out = Vec::new();
    export_svg(std::io::Cursor::new(bundle), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn svg_export_draws_every_track_slice_and_flow() {
    let svg = svg_of(sample_bundle());
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""), "{svg}");
    assert!(svg.trim_end().ends_with("</svg>"));
    assert!(!svg.contains("<image") && !svg.contains("href=\"http"), "self-contained");
    let count = |needle: &str| svg.matches(needle).count();
    // 8 host submissions, 7 device records, 4 dispatches, 4 dependency lines (as the Chrome flows).
    assert_eq!(count("<rect class=\"host\""), 8);
    assert_eq!(count("<rect class=\"device\""), 7);
    assert_eq!(count("<rect class=\"dispatch\""), 4);
    assert_eq!(count("<line class=\"flow\""), 4);
    for track in ["queue 0 host", "queue 0 device", "queue 1 host", "queue 1 device"] {
        assert!(svg.contains(&format!(">{track}</text>")), "{track}");
    }
    assert!(svg.contains("<title>queue 1 epoch 3: copy, submit 5.20 µs</title>"), "{svg}");
    assert!(svg.contains("3 records were dropped during capture"));
    // Every element that opens closes (a cheap well-formedness check without an XML parser):
    // slices and flows carry a title; the background and the grid lines close themselves.
    assert_eq!(count("<title>"), count("</title>"));
    assert_eq!(count("<text "), count("</text>"));
    assert_eq!(count("<rect "), count("</rect>") + 1);
    assert_eq!(count("<line "), count("</line>") + count("<line class=\"grid\""));
    assert_eq!(count("</rect>") + count("</line>"), count("</title>"));
}

#[test]
fn svg_size_follows_the_picture_not_the_capture() {
    // 20,000 submissions of 10 ns, 1 µs apart, on one queue: far thinner than a pixel each.
    let mut writer = ProfileWriter::new(Vec::new(), &sample::sample_header()).unwrap();
    for epoch in 0..20_000u64 {
        let at = epoch * 1000;
        writer
            .append(&Record::DeviceQueueEvent(DeviceQueueEvent { queue: 0, epoch, begin_ns: at, end_ns: at + 10 }))
            .unwrap();
    }
    let svg = svg_of(writer.finish().unwrap());
    let rects = svg.matches("<rect class=\"device\"").count();
    assert!((1..=1500).contains(&rects), "{rects} rects");
    assert!(svg.contains("device submissions</title>"), "merged runs say how many they hold");
    assert!(svg.len() < 512 << 10, "{} bytes", svg.len());
}
