//! `aqueduct profile` end to end: the tools on the synthetic sample bundle, and `record` (and the
//! environment capture it uses) on the demo.

use std::path::{Path, PathBuf};
use std::process::Command;

use aqueduct::profile::sample::sample_bundle;

fn aqueduct(arguments: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_aqueduct")).args(arguments).output().expect("the binary runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A fresh directory for one test, holding the sample bundle as `sample.aqprof`.
fn workspace(test: &str) -> (PathBuf, String) {
    let directory = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("profile-cli-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).unwrap();
    let bundle = directory.join("sample.aqprof");
    std::fs::write(&bundle, sample_bundle()).unwrap();
    (directory, bundle.to_string_lossy().into_owned())
}

#[test]
fn summary_prints_text_and_json() {
    let (_, bundle) = workspace("summary");
    let (ok, stdout, stderr) = aqueduct(&["profile", "summary", &bundle]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("device: soft (soft-gfx1100 amdgcn-amd-amdhsa--gfx1100), wait strategy barrier-value"),
        "{stdout}"
    );
    assert!(stdout.contains("records: 24, dropped: 3"), "{stdout}");
    assert!(stdout.contains("waits on queue 0: 3 device-barrier waits, 2 timed, 3.00 µs waiting"), "{stdout}");

    let (ok, stdout, stderr) = aqueduct(&["profile", "summary", &bundle, "--json"]);
    assert!(ok, "{stderr}");
    let summary: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    assert_eq!(summary["queues"][0]["device_time"]["total_ns"], 4600);
    assert_eq!(summary["kernels"][0]["kernel"], "add");
    assert_eq!(summary["format_version"]["major"], 1);
}

#[test]
fn dispatches_list_as_jsonl_and_csv() {
    let (directory, bundle) = workspace("dispatches");
    let (ok, stdout, stderr) = aqueduct(&["profile", "dispatches", &bundle, "--format", "jsonl"]);
    assert!(ok, "{stderr}");
    let kernels: Vec<String> = stdout
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap()["kernel"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kernels, ["scale", "add", "scale", "add"]);

    let csv = directory.join("dispatches.csv");
    let (ok, _, stderr) = aqueduct(&["profile", "dispatches", &bundle, "--format", "csv", "-o", csv.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count(), 5, "{text}");
    assert!(text.lines().nth(3).unwrap().starts_with("0,3,scale,7,"), "{text}");
}

#[test]
fn export_chrome_writes_a_trace_with_flows() {
    let (directory, bundle) = workspace("export");
    let trace = directory.join("trace.json");
    let (ok, stdout, stderr) =
        aqueduct(&["profile", "export", &bundle, "--format", "chrome", "-o", trace.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    let trace: serde_json::Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    assert_eq!(events.iter().filter(|event| event["ph"] == "s").count(), 4);
    assert_eq!(events.iter().filter(|event| event["ph"] == "f").count(), 4);
}

#[test]
fn export_perfetto_writes_a_protobuf_trace_with_tracks_slices_flows_and_counters() {
    use aqueduct::profile::perfetto::prost::Message;
    use aqueduct::profile::perfetto::protos::Trace;
    use aqueduct::profile::perfetto::protos::trace_packet::Data;
    use aqueduct::profile::perfetto::protos::track_event::Type;

    let (directory, bundle) = workspace("perfetto");
    let trace = directory.join("trace.pftrace");
    let (ok, stdout, stderr) =
        aqueduct(&["profile", "export", &bundle, "--format", "perfetto", "-o", trace.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    let trace = Trace::decode(std::fs::read(&trace).unwrap().as_slice()).expect("a Perfetto Trace");
    let mut tracks = 0;
    let mut events: Vec<(Type, usize, usize)> = Vec::new();
    for packet in &trace.packet {
        match packet.data.as_ref().unwrap() {
            Data::TrackDescriptor(_) => tracks += 1,
            Data::TrackEvent(event) => {
                events.push((event.r#type(), event.flow_ids.len(), event.terminating_flow_ids.len()))
            }
        }
    }
    // Per queue a parent, a host and a device track; one counter track on each queue.
    assert_eq!(tracks, 8);
    // 8 host submissions, 7 device submissions and 4 dispatches.
    assert_eq!(events.iter().filter(|event| event.0 == Type::SliceBegin).count(), 19);
    assert_eq!(events.iter().filter(|event| event.0 == Type::SliceEnd).count(), 19);
    assert_eq!(events.iter().filter(|event| event.0 == Type::Counter).count(), 3);
    // The same 4 flows as the Chrome export.
    assert_eq!(events.iter().map(|event| event.1).sum::<usize>(), 4);
    assert_eq!(events.iter().map(|event| event.2).sum::<usize>(), 4);
}

#[test]
fn export_svg_writes_a_self_contained_picture() {
    let (directory, bundle) = workspace("svg");
    let picture = directory.join("timeline.svg");
    let (ok, _, stderr) = aqueduct(&["profile", "export", &bundle, "--format", "svg", "-o", picture.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let svg = std::fs::read_to_string(&picture).unwrap();
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""), "{svg}");
    assert_eq!(svg.matches("<line class=\"flow\"").count(), 4);
}

#[test]
fn bad_bundles_are_clear_errors_naming_the_file() {
    let (directory, _) = workspace("errors");
    let bytes = sample_bundle();
    let truncated = directory.join("truncated.aqprof");
    std::fs::write(&truncated, &bytes[..bytes.len() - 3]).unwrap();
    let (ok, _, stderr) = aqueduct(&["profile", "summary", truncated.to_str().unwrap()]);
    assert!(!ok);
    assert!(stderr.contains("truncated.aqprof: the file is truncated at byte"), "{stderr}");

    let newer = directory.join("newer.aqprof");
    let mut newer_bytes = bytes.clone();
    newer_bytes[8] = 3;
    std::fs::write(&newer, &newer_bytes).unwrap();
    let (ok, _, stderr) = aqueduct(&["profile", "dispatches", newer.to_str().unwrap()]);
    assert!(!ok);
    assert!(stderr.contains("format version is 3.0, newer than this aqueduct reads (1.x)"), "{stderr}");

    let (ok, _, stderr) = aqueduct(&["profile", "summary", "Cargo.toml"]);
    assert!(!ok);
    assert!(stderr.contains("Cargo.toml: not an aqueduct profile"), "{stderr}");

    // A failed export leaves no half-written trace behind.
    let corrupt = directory.join("corrupt.aqprof");
    let mut corrupt_bytes = bytes.clone();
    // The middle of the file: inside the records chunk's payload.
    let middle = corrupt_bytes.len() / 2;
    corrupt_bytes[middle] ^= 0x40;
    std::fs::write(&corrupt, &corrupt_bytes).unwrap();
    let trace = directory.join("corrupt.json");
    let (ok, _, stderr) = aqueduct(&[
        "profile",
        "export",
        corrupt.to_str().unwrap(),
        "--format",
        "chrome",
        "-o",
        trace.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(stderr.contains("fails its checksum"), "{stderr}");
    assert!(!trace.exists());
    let pftrace = directory.join("corrupt.pftrace");
    let (ok, _, stderr) = aqueduct(&[
        "profile",
        "export",
        corrupt.to_str().unwrap(),
        "--format",
        "perfetto",
        "-o",
        pftrace.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(stderr.contains("fails its checksum"), "{stderr}");
    assert!(!pftrace.exists());

    let (ok, _, stderr) = aqueduct(&["profile", "summary", directory.join("missing.aqprof").to_str().unwrap()]);
    assert!(!ok);
    assert!(stderr.contains("cannot read"), "{stderr}");
}

/// Runs the binary with extra environment variables.
fn aqueduct_with_env(arguments: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_aqueduct"));
    command.args(arguments);
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("the binary runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

const DEMO: [&str; 6] = ["demo", "--device", "soft", "--handoffs", "16", "--queues"];

#[test]
fn record_profiles_the_demo_and_every_tool_reads_the_capture() {
    let (directory, _) = workspace("record");
    let capture = directory.join("demo.aqprof");
    let capture = capture.to_str().unwrap();
    let mut arguments = vec!["profile", "record", "-o", capture, "--"];
    arguments.extend(DEMO);
    arguments.push("3");
    let (ok, stdout, stderr) = aqueduct(&arguments);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("all correct"), "the demo ran and verified: {stdout}");
    assert!(stderr.contains("aqueduct: wrote the profile of `demo"), "{stderr}");

    let (ok, stdout, stderr) = aqueduct(&["profile", "summary", capture, "--json"]);
    assert!(ok, "{stderr}");
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let queues = summary["queues"].as_array().unwrap();
    assert_eq!(queues.len(), 3, "one summary per demo queue: {stdout}");
    assert!(queues.iter().all(|queue| queue["submissions"].as_u64().unwrap() > 0));
    assert!(queues.iter().all(|queue| queue["device_time"]["count"].as_u64().unwrap() > 0), "device times");
    assert!(queues.iter().any(|queue| !queue["waits_on"].as_array().unwrap().is_empty()), "cross-queue waits");
    let kernels: Vec<&str> =
        summary["kernels"].as_array().unwrap().iter().map(|kernel| kernel["kernel"].as_str().unwrap()).collect();
    assert!(kernels.contains(&"saxpy") && kernels.contains(&"iota"), "{kernels:?}");
    assert_eq!(summary["dropped"].as_u64(), Some(0));

    let (ok, stdout, stderr) = aqueduct(&["profile", "dispatches", capture, "--format", "jsonl"]);
    assert!(ok, "{stderr}");
    let saxpy = stdout.lines().filter(|line| line.contains("\"saxpy\"")).count();
    assert_eq!(saxpy, 16, "one saxpy per handoff: {stdout}");

    for (format, name) in [("chrome", "demo.json"), ("perfetto", "demo.pftrace"), ("svg", "demo.svg")] {
        let out = directory.join(name);
        let (ok, _, stderr) =
            aqueduct(&["profile", "export", capture, "--format", format, "-o", out.to_str().unwrap()]);
        assert!(ok, "{format}: {stderr}");
        assert!(std::fs::metadata(&out).unwrap().len() > 0, "{format}");
    }
    let svg = std::fs::read_to_string(directory.join("demo.svg")).unwrap();
    // Slices thinner than a pixel merge: the 16 short saxpys may, the model's GEMMs do not.
    assert!(svg.contains("dense"), "the picture names the kernels");
}

#[test]
fn an_unmodified_program_is_profiled_from_the_environment() {
    let (directory, _) = workspace("environment");
    let capture = directory.join("env.aqprof");
    let mut arguments = DEMO.to_vec();
    arguments.push("2");
    let env = [("AQUEDUCT_PROFILE", "queue-events"), ("AQUEDUCT_PROFILE_OUTPUT", capture.to_str().unwrap())];
    let (ok, _, stderr) = aqueduct_with_env(&arguments, &env);
    assert!(ok, "{stderr}");
    let (ok, stdout, stderr) = aqueduct(&["profile", "summary", capture.to_str().unwrap(), "--json"]);
    assert!(ok, "{stderr}");
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["queues"].as_array().unwrap().len(), 2);
    assert!(summary["kernels"].as_array().unwrap().is_empty(), "queue-events only: no dispatch records");

    let bad = [("AQUEDUCT_PROFILE", "queue-events,bogus"), ("AQUEDUCT_PROFILE_OUTPUT", capture.to_str().unwrap())];
    let (ok, _, stderr) = aqueduct_with_env(&arguments, &bad);
    assert!(!ok && stderr.contains("unknown mode `bogus`"), "{stderr}");
}

#[test]
fn record_refuses_what_it_cannot_capture() {
    let (directory, _) = workspace("record-refusals");
    let capture = directory.join("x.aqprof");
    let capture = capture.to_str().unwrap();
    // `info` is this binary's subcommand, not a workload: as a program it is looked up on PATH.
    let (ok, _, stderr) = aqueduct(&["profile", "record", "-o", capture, "--", "info"]);
    assert!(!ok && stderr.contains("cannot run `info`"), "{stderr}");
    let (ok, _, stderr) = aqueduct(&["profile", "record", "-o", capture, "--modes", "nope", "--", "demo"]);
    assert!(!ok && stderr.contains("unknown mode `nope`"), "{stderr}");
    // Hardware counters need aqlprofile and an AMD GPU: the workload's device refuses to open.
    let mut arguments = vec!["profile", "record", "-o", capture, "--modes", "hardware-counters", "--"];
    arguments.extend(DEMO);
    arguments.push("2");
    let (ok, _, stderr) = aqueduct(&arguments);
    assert!(!ok, "{stderr}");
    assert!(stderr.contains("hardware-counters are unavailable"), "{stderr}");
    assert!(stderr.contains("libhsa-amd-aqlprofile64.so") || stderr.contains("soft runtime"), "{stderr}");
}
