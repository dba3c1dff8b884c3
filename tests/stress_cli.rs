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
