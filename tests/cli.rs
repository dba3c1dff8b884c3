//! The `aqueduct` binary, run as a user runs it.

use std::process::Command;

fn aqueduct(arguments: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_aqueduct")).args(arguments).output().expect("the binary runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn info_names_the_provider_the_reason_the_agents_and_the_pools() {
    let (ok, stdout, stderr) = aqueduct(&["info", "--provider", "soft"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("Provider: soft"), "{stdout}");
    assert!(stdout.contains("Reason:"), "{stdout}");
    // rocminfo's shape: the CPU agent with the system pools, then the GPU.
    let agents = aqueduct_cli::info::parse_rocminfo(&stdout);
    assert_eq!(
        agents.iter().map(|agent| agent.field("Device Type")).collect::<Vec<_>>(),
        [Some("CPU"), Some("GPU")],
        "{stdout}"
    );
    assert!(stdout.contains("Segment:                 GLOBAL; FLAGS: KERNARG, FINE GRAINED"), "{stdout}");
    assert!(stdout.contains("Segment:                 GROUP"), "{stdout}");
    assert_eq!(agents[1].isas, ["amdgcn-amd-amdhsa--gfx1100"], "{stdout}");
    assert_eq!(agents[1].field("Queue Min Size"), Some("64(0x40)"), "{stdout}");
}

#[test]
fn info_auto_explains_why_it_fell_back_to_the_soft_runtime() {
    if std::path::Path::new("/dev/kfd").exists() {
        println!("SKIPPED: this machine has /dev/kfd, so auto may choose ROCr");
        return;
    }
    let (ok, stdout, stderr) = aqueduct(&["info"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("Provider: soft"), "{stdout}");
    assert!(stdout.contains("rocr: not usable") && stdout.contains("using the embedded soft HSA runtime"), "{stdout}");
}

#[test]
fn unknown_provider_is_a_clear_error() {
    let (ok, _, stderr) = aqueduct(&["info", "--provider", "cuda"]);
    assert!(!ok);
    assert!(stderr.contains("invalid value 'cuda' for '--provider <PROVIDER>'"), "{stderr}");
    assert!(stderr.contains("[possible values: auto, soft, rocr]"), "{stderr}");
}

#[test]
fn inspect_json_has_the_stable_shape() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/cli/kernels/demo_gfx11-generic.hsaco");
    let (ok, stdout, stderr) = aqueduct(&["inspect", path, "--json"]);
    assert!(ok, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("valid JSON");
    assert_eq!(report["target"], "amdgcn-amd-amdhsa--gfx11-generic");
    assert_eq!(report["code_object_version"], serde_json::json!([1, 2]));
    let kernels = report["kernels"].as_array().expect("kernels");
    assert_eq!(
        kernels.iter().map(|kernel| kernel["name"].as_str().unwrap_or("")).collect::<Vec<_>>(),
        ["iota", "saxpy"]
    );
    assert_eq!(kernels[1]["symbol"], "saxpy.kd");
    assert_eq!(kernels[1]["args"][2], serde_json::json!({"offset": 16, "size": 4, "value_kind": "by_value"}));
}

#[test]
fn inspect_rejects_garbage_with_a_typed_message() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let (ok, _, stderr) = aqueduct(&["inspect", path]);
    assert!(!ok);
    assert!(stderr.contains("Cargo.toml"), "{stderr}");
}

#[test]
fn demo_runs_and_verifies() {
    let (ok, stdout, stderr) = aqueduct(&["demo", "--handoffs", "64", "--queues", "3"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("64 saxpy handoffs across 3 queues"), "{stdout}");
    assert!(stdout.contains("provider:    soft"), "{stdout}");
    assert!(stdout.contains("all correct"), "{stdout}");
    assert!(stdout.contains("accuracy 0.9694 (349 of 360), numpy's 0.9694"), "{stdout}");
}

#[test]
fn info_json_is_the_stable_schema() {
    let (ok, stdout, stderr) = aqueduct(&["info", "--provider", "soft", "--json"]);
    assert!(ok, "{stderr}");
    let value: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    let keys = |value: &serde_json::Value| {
        let mut keys: Vec<String> = value.as_object().expect("an object").keys().cloned().collect();
        keys.sort();
        keys
    };
    // Schema 1's fields, exactly: a rename or removal fails here.
    assert_eq!(keys(&value), ["agents", "library", "provider", "reason", "schema", "timestamp_frequency_hz"]);
    assert_eq!(
        keys(&value["agents"][1]),
        [
            "compute_units",
            "device_type",
            "isas",
            "name",
            "pools",
            "product_name",
            "queue_max_packets",
            "queue_min_packets",
            "queues_max",
            "uuid",
            "wavefront_size"
        ]
    );
    assert_eq!(
        keys(&value["agents"][1]["pools"][0]),
        ["accessible_by_all", "alignment", "alloc_allowed", "granule", "kind", "size"]
    );
    let report: aqueduct_cli::info::InfoReport = serde_json::from_value(value).unwrap();
    assert_eq!((report.schema, report.provider.as_str()), (aqueduct_cli::info::INFO_SCHEMA, "soft"));
    let types: Vec<&str> = report.agents.iter().map(|agent| agent.device_type.as_str()).collect();
    assert_eq!(types, ["cpu", "gpu"]);
    let gpu = &report.agents[1];
    assert_eq!((gpu.isas.as_slice(), gpu.queue_min_packets), (&["amdgcn-amd-amdhsa--gfx1100".to_string()][..], 64));
    let kinds: Vec<&str> = report.agents.iter().flat_map(|agent| &agent.pools).map(|pool| pool.kind.as_str()).collect();
    for kind in ["fine-grained", "kernarg", "coarse-grained", "group"] {
        assert!(kinds.contains(&kind), "{kinds:?}");
    }
}

#[test]
fn version_names_the_providers() {
    let (ok, stdout, stderr) = aqueduct(&["--version"]);
    assert!(ok, "{stderr}");
    assert!(stdout.starts_with(&format!("aqueduct {}", env!("CARGO_PKG_VERSION"))), "{stdout}");
    assert!(stdout.contains("providers: soft (embedded); rocr"), "{stdout}");
}

#[test]
fn a_bench_filter_that_matches_nothing_lists_the_shapes() {
    let (ok, _, stderr) = aqueduct(&["bench", "--quick", "--filter", "no-such-shape"]);
    assert!(!ok);
    assert!(stderr.contains("`no-such-shape` matches no shape"), "{stderr}");
    for name in ["edge/submit/2", "alloca/roundtrip", "diamond/waits"] {
        assert!(stderr.contains(name), "{name} missing from: {stderr}");
    }
}

/// Issue 29, finding 5: a closed stdout (`aqueduct ... | head -1`) ends a subcommand quietly, as
/// it ends `cat`: by SIGPIPE, never by a panic (`failed printing to stdout`, exit 101).
#[test]
fn a_closed_stdout_ends_every_subcommand_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let code_object = concat!(env!("CARGO_MANIFEST_DIR"), "/builtins/prebuilt/amdgcn-amd-amdhsa--gfx1100.hsaco");
    let runs: [&[&str]; 6] = [
        &["info"],
        &["info", "--json"],
        &["inspect", code_object],
        &["demo", "--handoffs", "8"],
        &["stress", "--submissions", "200", "--threads", "1", "--queues", "1"],
        &["bench", "--quick", "--filter", "edge/submit/512", "--json"],
    ];
    for arguments in runs {
        let mut child = Command::new(env!("CARGO_BIN_EXE_aqueduct"))
            .args(arguments)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the binary runs");
        drop(child.stdout.take()); // the reader goes away before anything is written
        let output = child.wait_with_output().expect("it ends");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{arguments:?}: {stderr}");
        let quiet = output.status.success() || output.status.signal() == Some(libc::SIGPIPE);
        assert!(quiet, "{arguments:?} ended with {:?}: {stderr}", output.status);
    }
}

/// Forced to host builds, the soft runtime cannot run the model's kernels (they have none): the
/// demo fails naming the kernel, and `--no-model` runs the chain alone.
#[test]
fn demo_with_host_builds_only_needs_no_model() {
    let run = |arguments: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_aqueduct"))
            .args(arguments)
            .env("AQUEDUCT_SOFT_EXEC", "host")
            .output()
            .expect("the binary runs");
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (ok, _, stderr) = run(&["demo", "--device", "soft", "--handoffs", "8"]);
    assert!(!ok && stderr.contains("dense.kd") && stderr.contains("no CPU implementation"), "{stderr}");
    let (ok, stdout, stderr) = run(&["demo", "--device", "soft", "--handoffs", "8", "--no-model"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("all correct") && !stdout.contains("model:"), "{stdout}");
}
