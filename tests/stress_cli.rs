//! `aqueduct stress` as CI runs it: 4 threads × 4 queues × 100,000 submissions on each wait
//! strategy, every operation kind, host failures and kernel faults injected; nothing may be lost.

use std::process::Command;

#[test]
fn four_threads_four_queues_100k_submissions_lose_nothing_on_either_strategy() {
    let output = Command::new(env!("CARGO_BIN_EXE_aqueduct"))
        .args(["stress", "--device", "soft", "--threads", "4", "--queues", "4", "--submissions", "100000"])
        .args(["--seed", "7", "--json"])
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("a JSON report");
    let strategies = report["strategies"].as_array().expect("strategies");
    let names: Vec<&str> = strategies.iter().map(|strategy| strategy["strategy"].as_str().unwrap()).collect();
    assert_eq!(names, ["BarrierValue", "BarrierAnd"]);
    for strategy in strategies {
        let count = |key: &str| strategy[key].as_u64().unwrap_or_else(|| panic!("{key} in {strategy}"));
        assert_eq!(count("lost"), 0, "{strategy}");
        assert_eq!(count("submissions"), 100_000);
        // Every kind of operation ran, and both ways a wait resolves.
        for (kind, submitted) in strategy["operations"].as_object().expect("operations") {
            assert!(submitted.as_u64().unwrap() > 1000, "{kind}: {strategy}");
        }
        assert!(count("device_waits") > 1000 && count("parked") > 1000, "{strategy}");
        assert!(count("host_gated") > 100, "{strategy}");
        // Failures of both kinds were injected, and each reached its dependent with its record.
        let injected = count("host_failures_injected") + count("kernel_faults_injected");
        assert!(count("host_failures_injected") > 20 && count("kernel_faults_injected") > 20, "{strategy}");
        assert_eq!(count("failures_surfaced"), injected, "{strategy}");
    }
}

/// Runs `aqueduct stress ARGS --device soft --json` and returns its report, failing the test if
/// the run takes longer than `bound` (a stall) or loses anything.
fn stress_within(args: &[&str], bound: std::time::Duration) -> serde_json::Value {
    let mut child = Command::new(env!("CARGO_BIN_EXE_aqueduct"))
        .args(["stress", "--device", "soft", "--json"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let deadline = std::time::Instant::now() + bound;
    while child.try_wait().expect("the child can be polled").is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().expect("a stalled stress can be killed");
            panic!("`aqueduct stress {}` stalled past {bound:?}", args.join(" "));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let output = child.wait_with_output().expect("the output");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{args:?}: {stdout}{}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("a JSON report");
    for strategy in report["strategies"].as_array().expect("strategies") {
        assert_eq!(strategy["lost"], 0, "{args:?}: {strategy}");
    }
    report
}

/// Issue 29, finding 2: a window shorter than a run of doomed steps stalled (the window waited
/// on the chain's timeline, which doomed steps leave to a later step). Every window from 1 and
/// every step doomed but the last now finish.
#[test]
fn short_windows_with_dense_failures_finish() {
    let bound = std::time::Duration::from_secs(120);
    stress_within(
        &["--window", "2", "--failure-every", "10", "--submissions", "1000", "--threads", "1", "--queues", "1"],
        bound,
    );
    let report =
        stress_within(&["--failure-every", "1", "--submissions", "100", "--threads", "1", "--queues", "1"], bound);
    for strategy in report["strategies"].as_array().unwrap() {
        assert_eq!(strategy["failures_surfaced"], 99, "every step but the last was doomed: {strategy}");
    }
    stress_within(
        &["--window", "1", "--failure-every", "3", "--submissions", "300", "--threads", "2", "--queues", "2"],
        bound,
    );
}

/// Issue 29, finding 1: rounds in quick succession with cross-queue waits read a step's own
/// semaphore at 0 after its timeline reached its end (another queue's drain had raised the
/// timeline before the step's queue drained).
#[test]
fn quick_rounds_lose_no_signal() {
    let report = stress_within(
        &["--minutes", "0.1", "--submissions", "200", "--seed", "1000", "--threads", "6", "--queues", "5"],
        std::time::Duration::from_secs(120),
    );
    let rounds: u64 = report["strategies"].as_array().unwrap().iter().map(|s| s["rounds"].as_u64().unwrap()).sum();
    assert!(rounds >= 10, "many rounds ran: {rounds}");
}

/// The soak draws a shape per round and keeps queues across rounds: 20 rounds by default.
#[test]
fn a_soak_draws_its_rounds_and_loses_nothing() {
    let report = stress_within(&["--soak", "--submissions", "600", "--seed", "5"], std::time::Duration::from_secs(240));
    assert_eq!(report["soak"], true);
    let strategies = report["strategies"].as_array().unwrap();
    let rounds: u64 = strategies.iter().map(|s| s["rounds"].as_u64().unwrap()).sum();
    assert_eq!(rounds, 20);
    let injected: u64 = strategies
        .iter()
        .map(|s| s["host_failures_injected"].as_u64().unwrap() + s["kernel_faults_injected"].as_u64().unwrap())
        .sum();
    let surfaced: u64 = strategies.iter().map(|s| s["failures_surfaced"].as_u64().unwrap()).sum();
    assert!(injected > 0, "some round drew failures");
    assert_eq!(surfaced, injected);
}
