//! What the CLI prints for people and for programs, from the built binary: snapshots where the
//! output is fixed (fixtures, the sample bundle), structure where it holds timings.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use aqueduct::profile::sample::sample_bundle;

fn run(command: &mut Command) -> (bool, String, String) {
    let Output { status, stdout, stderr } = command.output().expect("the program runs");
    (status.success(), String::from_utf8_lossy(&stdout).into_owned(), String::from_utf8_lossy(&stderr).into_owned())
}

fn aqueduct(arguments: &[&str]) -> (bool, String, String) {
    run(Command::new(env!("CARGO_BIN_EXE_aqueduct")).args(arguments))
}

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/bench/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A fresh directory for one test.
fn scratch(test: &str) -> PathBuf {
    let directory = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-output-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).unwrap();
    directory
}

#[test]
fn the_bench_table_names_its_units_in_the_header() {
    let (ok, stdout, stderr) = aqueduct(&["bench", "--quick", "--device", "soft", "--filter", "chain/submit/2048"]);
    assert!(ok, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    // The first two lines name the machine and the repetitions; the table follows.
    let header: Vec<&str> = lines[2].split("  ").map(str::trim).filter(|cell| !cell.is_empty()).collect();
    assert_eq!(
        header,
        ["name", "median (ns/op)", "p10 (ns/op)", "p90 (ns/op)", "host cpu (ns/op)", "× limit"],
        "{stdout}"
    );
    let rows: Vec<&str> = lines[4..].iter().map(|line| line.split_whitespace().next().unwrap_or("")).collect();
    assert_eq!(rows, ["limit/ring_write_release", "chain/submit/2048"], "{stdout}");
    assert!(!stdout.contains("ns per operation;"), "no unit footer: {stdout}");
}

#[test]
fn compare_does_not_flag_two_runs_of_one_binary() {
    // The reported case: a bimodal row whose median moved from one mode to the other.
    let (ok, stdout, stderr) = aqueduct(&["bench", "--compare", &fixture("run1.json"), &fixture("run2.json")]);
    assert!(ok, "{stderr}");
    insta::assert_snapshot!(stdout);
    let (ok, stdout, stderr) = aqueduct(&["bench", "--compare", &fixture("run1.json"), &fixture("run1.json")]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("0 slower, 0 faster, 4 without a significant change"), "{stdout}");
}

#[test]
fn compare_flags_a_real_difference() {
    let (ok, stdout, stderr) = aqueduct(&["bench", "--compare", &fixture("run1.json"), &fixture("slower.json")]);
    assert!(ok, "{stderr}");
    insta::assert_snapshot!(stdout);
    let (ok, stdout, stderr) =
        aqueduct(&["bench", "--compare", &fixture("run1.json"), &fixture("slower.json"), "--json"]);
    assert!(ok, "{stderr}");
    let value: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    let verdicts: Vec<(&str, &str)> = value["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| (row["name"].as_str().unwrap(), row["verdict"].as_str().unwrap()))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("limit/ring_write_release", "unchanged"),
            ("edge/submit/512", "slower"),
            ("chain/e2e/2", "unchanged"),
            ("a/shape/name/well/past/thirty/six/characters/512", "unchanged")
        ]
    );
}

#[test]
fn compare_refuses_a_report_without_repetitions() {
    let directory = scratch("schema-one");
    let mut report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("run1.json")).unwrap()).unwrap();
    let object = report.as_object_mut().unwrap();
    object.remove("schema");
    for row in object["results"].as_array_mut().unwrap() {
        row.as_object_mut().unwrap().remove("samples");
    }
    let old = directory.join("old.json");
    std::fs::write(&old, report.to_string()).unwrap();
    let (ok, _, stderr) = aqueduct(&["bench", "--compare", old.to_str().unwrap(), &fixture("run1.json")]);
    assert!(!ok);
    insta::assert_snapshot!(stderr.trim_end(), @"aqueduct: the old report is schema 1, which records no repetitions; rerun `aqueduct bench --json`");
}

#[test]
fn demo_json_is_one_document_with_the_expected_fields() {
    let (ok, stdout, stderr) = aqueduct(&["demo", "--device", "soft", "--handoffs", "8", "--queues", "2", "--json"]);
    assert!(ok, "{stderr}");
    let value: serde_json::Value = serde_json::from_str(&stdout).expect("stdout is one JSON document");
    let mut keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "agent",
            "dispatches",
            "end_to_end_ns",
            "handoffs",
            "model",
            "operations",
            "provider",
            "provider_reason",
            "queues",
            "schema",
            "submit_ns",
            "transfers",
            "verified",
            "verified_elements"
        ]
    );
    assert_eq!((value["schema"].as_u64(), value["provider"].as_str()), (Some(1), Some("soft")));
    assert_eq!((value["handoffs"].as_u64(), value["verified"].as_bool()), (Some(8), Some(true)));
    let queues = value["queues"].as_array().unwrap();
    assert_eq!(queues.len(), 2);
    let operations: u64 = queues.iter().map(|queue| queue["operations"].as_u64().unwrap()).sum();
    assert_eq!(Some(operations), value["operations"].as_u64(), "the queues' operations add up");
    assert!(value["end_to_end_ns"].as_u64().unwrap() > 0);
    let model = &value["model"];
    assert_eq!((model["items"].as_u64(), model["correct"].as_u64()), (Some(360), Some(349)), "{model}");
    assert_eq!(model["accuracy"], model["reference_accuracy"], "{model}");
    assert!(model["items_per_second"].as_f64().unwrap() > 0.0, "{model}");
}

#[test]
fn profile_summary_prints_durations_for_people() {
    let directory = scratch("summary");
    let bundle = directory.join("sample.aqprof");
    std::fs::write(&bundle, sample_bundle()).unwrap();
    let (ok, stdout, stderr) = aqueduct(&["profile", "summary", bundle.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    // The sample bundle is hand-worked, so the whole text is fixed.
    insta::assert_snapshot!(stdout);
}

#[test]
fn export_and_dispatch_files_say_what_was_written() {
    let directory = scratch("wrote");
    let bundle = directory.join("sample.aqprof");
    std::fs::write(&bundle, sample_bundle()).unwrap();
    let trace = directory.join("trace.json");
    let (ok, stdout, stderr) =
        aqueduct(&["profile", "export", bundle.to_str().unwrap(), "--format", "chrome", "-o", trace.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    let size = std::fs::metadata(&trace).unwrap().len();
    assert!(size > 1024, "the sample's trace is over a KiB: {size}");
    let expected = format!("aqueduct: wrote a Trace Event JSON trace to {} (", trace.display());
    assert!(stderr.starts_with(&expected) && stderr.trim_end().ends_with(" KiB)"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");

    let csv = directory.join("dispatches.csv");
    let (ok, _, stderr) =
        aqueduct(&["profile", "dispatches", bundle.to_str().unwrap(), "--format", "csv", "-o", csv.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let bytes = std::fs::metadata(&csv).unwrap().len();
    assert_eq!(stderr.trim_end(), format!("aqueduct: wrote 4 dispatches to {} ({bytes} B)", csv.display()));
}

#[test]
fn profile_record_runs_any_program_and_reports_its_exit() {
    let directory = scratch("record");
    let capture = directory.join("demo.aqprof");
    // The binary by its path is an ordinary program, profiled through the environment.
    let (ok, stdout, stderr) = aqueduct(&[
        "profile",
        "record",
        "-o",
        capture.to_str().unwrap(),
        "--modes",
        "queue-events",
        "--",
        env!("CARGO_BIN_EXE_aqueduct"),
        "demo",
        "--device",
        "soft",
        "--handoffs",
        "4",
        "--queues",
        "2",
    ]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("all correct"), "{stdout}");
    assert!(stderr.contains("exited successfully") && stderr.contains(&capture.display().to_string()), "{stderr}");
    assert!(stderr.contains("queue-events: ") && stderr.contains("2 queues"), "{stderr}");

    // A program that opens no device writes no profile, and its status is reported.
    let (ok, _, stderr) = aqueduct(&["profile", "record", "-o", capture.to_str().unwrap(), "--", "sh", "-c", "exit 3"]);
    assert!(!ok);
    assert!(stderr.contains("`sh -c exit 3` exited with status 3, and wrote no profile"), "{stderr}");
    assert!(!capture.exists(), "the earlier capture was replaced, not kept");

    let (ok, _, stderr) = aqueduct(&["profile", "record", "-o", capture.to_str().unwrap(), "--", "no-such-program-31"]);
    assert!(!ok);
    assert!(stderr.contains("cannot run `no-such-program-31`"), "{stderr}");
}

#[test]
fn a_mode_that_needs_aqlprofile_fails_once_with_the_loaders_text() {
    if std::env::var_os("AQUEDUCT_LIBAQLPROFILE_PATH").is_some() {
        println!("SKIPPED: AQUEDUCT_LIBAQLPROFILE_PATH points at an aqlprofile");
        return;
    }
    let directory = scratch("aqlprofile");
    let capture = directory.join("x.aqprof");
    let (ok, _, stderr) = aqueduct(&[
        "profile",
        "record",
        "-o",
        capture.to_str().unwrap(),
        "--modes",
        "hardware-counters",
        "--",
        "demo",
        "--device",
        "soft",
    ]);
    assert!(!ok);
    if !stderr.contains("aqlprofile could not be loaded") {
        println!("SKIPPED: aqlprofile loads here: {stderr}");
        return;
    }
    assert_eq!(stderr.lines().count(), 1, "one error, before the program runs: {stderr}");
    // dlerror's text, not only `dlopen failed`.
    assert!(
        stderr.contains("libhsa-amd-aqlprofile64.so: dlopen failed: libhsa-amd-aqlprofile64.so: cannot open"),
        "{stderr}"
    );
}

#[test]
fn without_kfd_the_provider_line_says_so_in_one_line() {
    if Path::new("/dev/kfd").exists() {
        println!("SKIPPED: this machine has /dev/kfd");
        return;
    }
    let (ok, stdout, stderr) = aqueduct(&["--version"]);
    assert!(ok, "{stderr}");
    insta::assert_snapshot!(stdout.lines().nth(1).unwrap_or(""), @"providers: soft (embedded); rocr: not usable: /dev/kfd is absent (no AMD GPU driver)");
    let (ok, stdout, stderr) = aqueduct(&["info"]);
    assert!(ok, "{stderr}");
    let reason = stdout.lines().find(|line| line.starts_with("Reason:")).unwrap_or("");
    insta::assert_snapshot!(reason, @"Reason:   rocr: not usable: /dev/kfd is absent (no AMD GPU driver); using the embedded soft HSA runtime");
    assert!(!stdout.contains("0x1008") && stderr.is_empty(), "{stdout}{stderr}");
    // --verbose adds ROCr's own status, on stderr.
    let (ok, _, stderr) = aqueduct(&["--verbose", "info"]);
    assert!(ok);
    assert!(stderr.starts_with("aqueduct: rocr status: "), "{stderr}");
}

/// An example's binary, built beside the tests by `cargo test`.
fn example(name: &str) -> PathBuf {
    let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    deps.parent().unwrap().join("examples").join(name)
}

#[test]
fn examples_refuse_bad_arguments() {
    for (name, arguments, complaint) in [
        ("batch_inference", &["--batch", "abc"][..], "invalid value 'abc' for '--batch <BATCH>'"),
        ("batch_inference", &["--batch", "0"][..], "invalid value '0' for '--batch <BATCH>'"),
        ("batch_inference", &["--precision", "f8"][..], "invalid value 'f8' for '--precision <PRECISION>'"),
        ("batch_inference", &["10"][..], "unexpected argument '10'"),
        ("multi_queue_pipeline", &["7"][..], "unexpected argument '7'"),
        ("multi_queue_pipeline", &["--items", "-1"][..], "unexpected argument '-1'"),
        ("tracy_throughput", &["--repeats", "0"][..], "invalid value '0' for '--repeats <REPEATS>'"),
        ("tracy_throughput", &["--passes", "many"][..], "invalid value 'many' for '--passes <PASSES>'"),
    ] {
        let path = example(name);
        assert!(
            path.exists(),
            "cargo test builds the examples (after `--test`, run cargo build --examples): {}",
            path.display()
        );
        let output = Command::new(&path).args(arguments).output().expect("the example runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{name} {arguments:?}: {stderr}");
        assert!(stderr.contains(complaint), "{name} {arguments:?}: {stderr}");
    }
}

#[test]
fn compare_tests_run_medians_when_several_runs_are_given() {
    let (ok, stdout, stderr) = aqueduct(&[
        "bench",
        "--old",
        &fixture("run1.json"),
        &fixture("run2.json"),
        "--new",
        &fixture("run2.json"),
        &fixture("run1.json"),
    ]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("F-test over each row's run medians (2 old runs, 2 new)"), "{stdout}");
    assert!(stdout.contains("0 slower, 0 faster"), "{stdout}");
    let (ok, _, stderr) = aqueduct(&["bench", "--old", &fixture("run1.json")]);
    assert!(!ok && stderr.contains("--new"), "--old needs --new: {stderr}");
}
