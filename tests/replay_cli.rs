//! `aqueduct replay` end to end: the demo, captured as an unmodified program through
//! AQUEDUCT_REPLAY_OUTPUT, then read, replayed (checksums match), benchmarked and profiled; a
//! file whose checksums cannot match exits non-zero naming the buffer.

use std::path::Path;
use std::process::Command;

use aqueduct::profile::replay::{Operation, ReplayReader, ReplayRecord, ReplayWriter};

fn aqueduct(arguments: &[&str], env: &[(&str, &Path)]) -> (bool, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_aqueduct"));
    command.args(arguments).env_remove("AQUEDUCT_REPLAY_OUTPUT").env_remove("AQUEDUCT_PROFILE");
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("the binary runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_demo_captured_as_is_replays_benchmarks_and_profiles() {
    let directory = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("replay-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).unwrap();
    let capture = directory.join("demo.aqreplay");
    let (ok, _, stderr) =
        aqueduct(&["demo", "--device", "soft", "--handoffs", "64"], &[("AQUEDUCT_REPLAY_OUTPUT", &capture)]);
    assert!(ok, "{stderr}");
    let file = capture.to_str().unwrap();

    let (ok, stdout, stderr) = aqueduct(&["replay", "info", file, "--json"], &[]);
    assert!(ok, "{stderr}");
    let info: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(info["queues"], 4);
    assert_eq!(info["executables"], 2, "the demo's kernels and the digits MLP's");
    let count = |kind: &str| {
        info["operations"].as_array().unwrap().iter().find(|row| row["kind"] == kind).map(|row| row["count"].clone())
    };
    assert_eq!(count("dispatch"), Some(65.into()), "64 handoffs and the iota: {stdout}");
    assert_eq!(count("execute"), Some(12.into()), "the model's 360 items in batches of 32: {stdout}");
    assert!(info["host_reads"].as_u64().unwrap() >= 1 && info["final_checksums"].as_u64().unwrap() >= 1);
    let (ok, stdout, _) = aqueduct(&["replay", "info", file], &[]);
    assert!(ok && stdout.contains("queues: 4") && stdout.contains("dispatch"), "{stdout}");

    let (ok, stdout, stderr) = aqueduct(&["replay", "run", file], &[]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("replay matches the capture"), "{stdout}");

    let (ok, stdout, stderr) = aqueduct(&["replay", "bench", file, "--quick", "--json"], &[]);
    assert!(ok, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let rows = report["results"].as_array().unwrap();
    assert_eq!(rows[0]["name"], "limit/ring_write_release");
    assert_eq!(rows[1]["name"], "replay/e2e");
    assert!(rows[1]["median"].as_f64().unwrap() > 0.0 && rows[1]["host_cpu_median"].as_f64().unwrap() > 0.0);

    let profile = directory.join("demo.aqprof");
    let (ok, _, stderr) = aqueduct(&["replay", "profile", file, "-o", profile.to_str().unwrap()], &[]);
    assert!(ok, "{stderr}");
    let (ok, stdout, stderr) = aqueduct(&["profile", "summary", profile.to_str().unwrap(), "--json"], &[]);
    assert!(ok, "{stderr}");
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["queues"].as_array().unwrap().len(), 4, "the profile saw the replayed queues");

    // The same stream with the demo's update changed: non-zero, naming the first buffer that
    // differs.
    let reader = ReplayReader::new(std::fs::File::open(&capture).unwrap()).unwrap();
    let changed = directory.join("changed.aqreplay");
    let mut writer = ReplayWriter::new(std::fs::File::create(&changed).unwrap(), reader.header()).unwrap();
    let mut updated = false;
    for record in reader {
        let mut record = record.unwrap();
        if let ReplayRecord::Operation { operation: Operation::Update { data, .. }, .. } = &mut record {
            data.iter_mut().for_each(|byte| *byte ^= 0x5a);
            updated = true;
        }
        writer.append(&record).unwrap();
    }
    writer.finish().unwrap();
    assert!(updated, "the demo uploads its input with an update");
    let (ok, _, stderr) = aqueduct(&["replay", "run", changed.to_str().unwrap()], &[]);
    assert!(!ok, "a changed stream must not match");
    assert!(stderr.contains("differ; the first: buffer"), "{stderr}");

    // A missing file and a cut one fail with what is wrong.
    let (ok, _, stderr) = aqueduct(&["replay", "run", "/nonexistent.aqreplay"], &[]);
    assert!(!ok && stderr.contains("cannot open"), "{stderr}");
    let truncated = directory.join("truncated.aqreplay");
    let bytes = std::fs::read(&capture).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() - 20]).unwrap();
    let (ok, _, stderr) = aqueduct(&["replay", "run", truncated.to_str().unwrap()], &[]);
    assert!(!ok && stderr.contains("truncated"), "{stderr}");
}
