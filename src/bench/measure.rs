//! Repetitions, percentiles and the report rows.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// One repetition: wall time and the measuring thread's CPU time for `ops` operations.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sample {
    /// Wall time of the repetition.
    pub wall: Duration,
    /// CPU time the measuring threads spent on the repetition.
    pub host_cpu: Duration,
}

/// One result row of the stable JSON report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultRow {
    /// The shape's name.
    pub name: String,
    /// The unit of the timings: `ns/op`.
    pub unit: String,
    /// Operations per repetition.
    pub ops_per_rep: u64,
    /// Median wall time per operation.
    pub median: f64,
    /// 10th percentile wall time per operation.
    pub p10: f64,
    /// 90th percentile wall time per operation.
    pub p90: f64,
    /// Median host CPU time per operation.
    pub host_cpu_median: f64,
    /// `median` divided by the baseline's median (1 for the baseline row).
    pub ratio_to_limit: f64,
}

/// The whole report, exactly as `--json` prints it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The HSA provider (`soft` or `rocr`).
    pub provider: String,
    /// The ISA name of the device's first agent.
    pub agent: String,
    /// The host CPU model, from /proc/cpuinfo (`unknown` if it cannot be read).
    pub cpu: String,
    /// The host's available parallelism.
    pub cores: usize,
    /// The baseline (`limit/ring_write_release`): median ns per packet.
    pub limit_ns_per_packet: f64,
    /// One row per shape, the baseline first.
    pub results: Vec<ResultRow>,
}

/// The nearest-rank `percent` percentile of sorted values (the profile summary's definition);
/// 0 when there are none.
pub fn percentile(sorted: &[f64], percent: u32) -> f64 {
    aqueduct_profile::summary::nearest_rank(sorted, percent).unwrap_or(0.0)
}

/// Summarizes repetitions into a row (ns per operation); the ratio is filled in later.
pub fn summarize(name: &str, ops_per_rep: u64, samples: &[Sample]) -> ResultRow {
    let per_op = |duration: Duration| duration.as_secs_f64() * 1e9 / ops_per_rep.max(1) as f64;
    let mut wall: Vec<f64> = samples.iter().map(|sample| per_op(sample.wall)).collect();
    let mut cpu: Vec<f64> = samples.iter().map(|sample| per_op(sample.host_cpu)).collect();
    wall.sort_by(f64::total_cmp);
    cpu.sort_by(f64::total_cmp);
    ResultRow {
        name: name.to_string(),
        unit: "ns/op".into(),
        ops_per_rep,
        median: percentile(&wall, 50),
        p10: percentile(&wall, 10),
        p90: percentile(&wall, 90),
        host_cpu_median: percentile(&cpu, 50),
        ratio_to_limit: 0.0,
    }
}

/// The machine's CPU model, from /proc/cpuinfo.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split(':').nth(1))
                .map(|model| model.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// One line per row present in both reports: old and new medians and the change.
pub fn compare(old: &Report, new: &Report) -> Vec<String> {
    let mut lines = vec![format!("{:<36} {:>12} {:>12} {:>9}", "name", "old ns/op", "new ns/op", "change")];
    for row in &new.results {
        match old.results.iter().find(|candidate| candidate.name == row.name) {
            Some(before) => {
                let change = if before.median > 0.0 { (row.median / before.median - 1.0) * 100.0 } else { 0.0 };
                let flag = if change > 10.0 {
                    "  slower"
                } else if change < -10.0 {
                    "  faster"
                } else {
                    ""
                };
                lines.push(format!(
                    "{:<36} {:>12.1} {:>12.1} {:>+8.1}%{flag}",
                    row.name, before.median, row.median, change
                ));
            }
            None => lines.push(format!("{:<36} {:>12} {:>12.1} {:>9}", row.name, "-", row.median, "new")),
        }
    }
    for row in old.results.iter().filter(|row| !new.results.iter().any(|candidate| candidate.name == row.name)) {
        lines.push(format!("{:<36} {:>12.1} {:>12} {:>9}", row.name, row.median, "-", "gone"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_nearest_rank() {
        let values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0];
        assert_eq!(percentile(&values, 50), 6.0);
        assert_eq!(percentile(&values, 10), 2.0);
        assert_eq!(percentile(&values, 90), 10.0);
        assert_eq!(percentile(&values, 100), 11.0);
        assert_eq!(percentile(&values[..10], 50), 5.0, "the smallest with half at or below it");
        assert_eq!(percentile(&[], 50), 0.0);
    }

    #[test]
    fn summary_is_per_operation() {
        let samples = [Sample { wall: Duration::from_micros(10), host_cpu: Duration::from_micros(5) }; 3];
        let row = summarize("x", 100, &samples);
        assert_eq!((row.median, row.host_cpu_median, row.unit.as_str()), (100.0, 50.0, "ns/op"));
    }
}
