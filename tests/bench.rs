//! `aqueduct bench`: every shape runs once in quick mode with its results verified (each shape
//! checks its semaphores and, end to end, the bytes its kernels wrote), and the JSON report has
//! every documented field. These tests check that shapes work, never how fast they are.

use std::path::Path;
use std::process::Command;

use aqueduct_cli::bench::{BenchOptions, Report};

fn expected_names() -> Vec<String> {
    let mut names = vec!["limit/ring_write_release".to_string()];
    for prefix in ["edge", "edge+copy4", "edge+fill4", "edge+dispatch", "edge+noop"] {
        for mode in ["submit", "e2e"] {
            for handoffs in [2, 32, 512, 2048] {
                names.push(format!("{prefix}/{mode}/{handoffs}"));
            }
        }
    }
    for mode in ["submit", "e2e"] {
        for length in [2, 32, 512, 2048] {
            names.push(format!("chain/{mode}/{length}"));
        }
    }
    names.extend(["batch/edge/512".to_string(), "batch/dispatch/512".to_string()]);
    for bindings in [0, 4, 16, 64, 256] {
        names.push(format!("dispatch/submit/bindings={bindings}"));
    }
    for queues in [1, 2, 4, 8] {
        names.push(format!("scale/queues={queues}"));
    }
    for length in [1, 16, 64, 128, 256, 512, 5000] {
        for kind in ["record", "static", "dynamic_extra"] {
            names.push(format!("cb/{kind}/{length}"));
        }
    }
    names.extend([16, 64, 128, 256, 512, 5000].map(|length| format!("cb/device/{length}")));
    names.extend(["cb/device/same-table/512".to_string(), "cb/device/new-table/512".to_string()]);
    for length in [16, 64, 128, 256, 512] {
        names.extend(["host", "device"].map(|side| format!("cb/e2e/{side}/{length}")));
    }
    for side in ["", "device/"] {
        for concurrency in [1, 2, 4, 8] {
            names.push(format!("clip/{side}c{concurrency}d16"));
        }
    }
    names.push("queue_index/cas_handoff/4".into());
    names.push("diamond/waits".into());
    for name in [
        "alloca/roundtrip",
        "alloca/baseline",
        "alloca/cross_queue",
        "host_call/e2e",
        "host_call/after_barrier/e2e",
        "file/read/64MiB",
        "file/read_bounced/64MiB",
        "file/read_baseline/64MiB",
    ] {
        names.push(name.into());
    }
    for modes in ["queue-events", "device-queue-events", "dispatch-events", "counters", "all"] {
        for mode in ["submit", "e2e"] {
            names.push(format!("profile/{modes}/edge+dispatch/{mode}/512"));
        }
    }
    names
}

#[test]
fn every_shape_runs_once_in_quick_mode() {
    let mut seen = Vec::new();
    let options = BenchOptions { filter: None, quick: true, device: "soft".into() };
    let report =
        aqueduct_cli::bench::run(&options, |_, _, name| seen.push(name.to_string())).expect("every shape succeeds");
    let names: Vec<String> = report.results.iter().map(|row| row.name.clone()).collect();
    assert_eq!(names, expected_names());
    assert_eq!(report.provider, "soft");
    assert!(report.limit_ns_per_packet > 0.0);
    for row in &report.results {
        assert_eq!(row.unit, "ns/op");
        assert!(row.median > 0.0 && row.p10 <= row.median && row.median <= row.p90, "{row:?}");
        assert!(row.ops_per_rep > 0 && row.ratio_to_limit > 0.0, "{row:?}");
    }
    assert!(seen.iter().any(|name| name == "edge/e2e/2048"), "progress reported every shape");
}

#[test]
fn json_report_has_every_documented_field_and_compare_reads_it() {
    let binary = env!("CARGO_BIN_EXE_aqueduct");
    let output = Command::new(binary)
        .args(["bench", "--quick", "--json", "--device", "soft", "--filter", "edge/submit/2"])
        .output()
        .expect("runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("stdout is JSON");
    for field in ["schema", "provider", "agent", "cpu", "cores", "limit_ns_per_packet", "results"] {
        assert!(value.get(field).is_some(), "missing {field}");
    }
    assert_eq!(value["schema"], aqueduct_cli::bench::BENCH_SCHEMA);
    let rows = value["results"].as_array().expect("results array");
    let names: Vec<&str> = rows.iter().filter_map(|row| row["name"].as_str()).collect();
    assert_eq!(names, ["limit/ring_write_release", "edge/submit/2", "edge/submit/2048"]);
    for row in rows {
        let fields =
            ["name", "unit", "ops_per_rep", "median", "p10", "p90", "host_cpu_median", "ratio_to_limit", "samples"];
        for field in fields {
            assert!(row.get(field).is_some(), "row misses {field}: {row}");
        }
        assert_eq!(row.as_object().map(|object| object.len()), Some(fields.len()), "no undocumented fields: {row}");
        assert!(!row["samples"].as_array().expect("samples").is_empty(), "every repetition kept: {row}");
    }
    assert_eq!(value.as_object().map(|object| object.len()), Some(7), "no undocumented fields");
    let report: Report = serde_json::from_value(value).expect("typed");

    // --compare reads two reports: one whose every repetition doubled is significantly slower
    // (a single quick repetition cannot be told from noise, so the rows get 12 of them).
    let directory =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("bench-compare-own-report-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let (old, new) = (directory.join("old.json"), directory.join("new.json"));
    let mut repeated = report.clone();
    for row in &mut repeated.results {
        row.samples = (0..12).map(|index| row.median * (1.0 + index as f64 / 100.0)).collect();
    }
    let mut slower = repeated.clone();
    slower.results[1].median *= 2.0;
    slower.results[1].samples.iter_mut().for_each(|sample| *sample *= 2.0);
    std::fs::write(&old, serde_json::to_string(&repeated).unwrap()).unwrap();
    std::fs::write(&new, serde_json::to_string(&slower).unwrap()).unwrap();
    let output = Command::new(binary).args(["bench", "--compare"]).arg(&old).arg(&new).output().expect("runs");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let line = |name: &str| text.lines().find(|line| line.trim_start().starts_with(&format!("{name} "))).unwrap_or("");
    assert!(line("edge/submit/2").contains("+100.0 %") && line("edge/submit/2").ends_with("slower"), "{text}");
    assert!(line("edge/submit/2048").trim_end().ends_with("no change"), "{text}");
}

#[test]
fn bench_kernels_cpu_twins_match_the_code_object() {
    for bytes in aqueduct_cli::bench::kernels::BENCH_CODE_OBJECTS {
        bench_cpu_twins_match(&aqueduct::codeobject::CodeObject::parse(bytes).expect("parses"));
    }
}

fn bench_cpu_twins_match(code_object: &aqueduct::codeobject::CodeObject) {
    let explicit = |name: &str| -> Vec<(u32, u32, String)> {
        let kernel = code_object.kernel(name).expect("kernel exists");
        kernel
            .args
            .iter()
            .filter(|arg| !arg.value_kind.is_hidden())
            .map(|arg| (arg.offset, arg.size, arg.value_kind.as_str().to_string()))
            .collect()
    };
    assert!(explicit("noop").is_empty());
    assert_eq!(
        explicit("tiny"),
        [
            (0, 8, "global_buffer".into()),
            (8, 8, "global_buffer".into()),
            (16, 4, "by_value".into()),
            (20, 4, "by_value".into())
        ]
    );
    for count in [4u32, 16, 64, 256] {
        let expected: Vec<_> = (0..count).map(|index| (8 * index, 8, "global_buffer".to_string())).collect();
        assert_eq!(explicit(&format!("bindings_{count}")), expected);
    }
    let symbols: Vec<_> =
        aqueduct_cli::bench::kernels::bench_host_builds().iter().map(|kernel| kernel.symbol).collect();
    assert_eq!(symbols, ["noop.kd", "tiny.kd", "bindings_4.kd", "bindings_16.kd", "bindings_64.kd", "bindings_256.kd"]);
}
