//! Repetitions, their order statistics and the report rows, and the comparison of two reports.
//!
//! Medians and percentiles are statrs' (its R-8 quantiles, interpolated between repetitions);
//! whether two rows differ is statrs' Mann-Whitney U test over their repetitions, so a
//! change is only flagged when the repetitions say it is not noise.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use statrs::statistics::{Data, OrderStatistics};
use statrs::stats_tests::f_oneway::{FOneWayTestError, f_oneway};
use statrs::stats_tests::mannwhitneyu::{MannWhitneyUMethod, mannwhitneyu};
use statrs::stats_tests::{Alternative, NaNPolicy};

/// The version of the bench JSON report. 2 added `schema` itself and every row's `samples`.
pub const BENCH_SCHEMA: u32 = 2;

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
    /// Wall time per operation of every measured repetition, in the order they ran: what
    /// `--compare` tests. Absent from schema 1 reports.
    #[serde(default)]
    pub samples: Vec<f64>,
}

/// The whole report, exactly as `--json` prints it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// [`BENCH_SCHEMA`] when written; 1 for a report from before the field existed.
    #[serde(default = "schema_one")]
    pub schema: u32,
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

fn schema_one() -> u32 {
    1
}

/// Median and spread of a set of values (each one run of something).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// The median.
    pub median: f64,
    /// The 10th percentile.
    pub p10: f64,
    /// The 90th percentile.
    pub p90: f64,
}

impl Spread {
    /// statrs' order statistics of `values`; all zero when there are none.
    pub fn of(values: &[f64]) -> Spread {
        if values.is_empty() {
            return Spread { median: 0.0, p10: 0.0, p90: 0.0 };
        }
        let mut data = Data::new(values.to_vec());
        Spread { median: data.median(), p10: data.percentile(10), p90: data.percentile(90) }
    }
}

/// Summarizes repetitions into a row (ns per operation); the ratio is filled in later.
pub fn summarize(name: &str, ops_per_rep: u64, samples: &[Sample]) -> ResultRow {
    let per_op = |duration: Duration| duration.as_secs_f64() * 1e9 / ops_per_rep.max(1) as f64;
    let wall: Vec<f64> = samples.iter().map(|sample| per_op(sample.wall)).collect();
    let cpu: Vec<f64> = samples.iter().map(|sample| per_op(sample.host_cpu)).collect();
    let spread = Spread::of(&wall);
    ResultRow {
        name: name.to_string(),
        unit: "ns/op".into(),
        ops_per_rep,
        median: spread.median,
        p10: spread.p10,
        p90: spread.p90,
        host_cpu_median: Spread::of(&cpu).median,
        ratio_to_limit: 0.0,
        samples: wall,
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

/// How `--compare` decides that a row changed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompareOptions {
    /// The chance of flagging any row of two reports of the same code (family-wise): each of the
    /// m rows compared is tested at `significance / m` (Bonferroni), since a report has dozens
    /// of rows and some would pass a per-row 5 % by chance alone.
    pub significance: f64,
    /// Changes of the median smaller than this fraction are never flagged, however certain.
    pub noise_threshold: f64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        Self { significance: 0.05, noise_threshold: 0.02 }
    }
}

/// What the comparison concluded about one row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Significantly slower, by more than the noise threshold.
    Slower,
    /// Significantly faster, by more than the noise threshold.
    Faster,
    /// No difference the repetitions can tell from noise.
    Unchanged,
    /// Only in the new report.
    New,
    /// Only in the old report.
    Gone,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Slower => "slower",
            Verdict::Faster => "faster",
            Verdict::Unchanged => "no change",
            Verdict::New => "new",
            Verdict::Gone => "gone",
        })
    }
}

/// One row of a comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RowChange {
    /// The shape's name.
    pub name: String,
    /// The old report's median (ns/op), if the row is there.
    pub old_median: Option<f64>,
    /// The new report's median (ns/op), if the row is there.
    pub new_median: Option<f64>,
    /// The change of the median in percent (new / old − 1), for rows in both.
    pub change_percent: Option<f64>,
    /// The two-sided Mann-Whitney U p-value of the repetitions, for rows in both.
    pub p_value: Option<f64>,
    /// What that adds up to.
    pub verdict: Verdict,
}

/// Why two reports cannot be compared.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A report without repetitions (schema 1) cannot be tested.
    #[error("the {which} report is schema {schema}, which records no repetitions; rerun `aqueduct bench --json`")]
    NoRepetitions {
        /// `old` or `new`.
        which: &'static str,
        /// The report's schema.
        schema: u32,
    },
    /// A row of a schema-2 report lacks its repetitions (an edited file).
    #[error("row `{name}` of the {which} report has no samples")]
    EmptyRow {
        /// `old` or `new`.
        which: &'static str,
        /// The row.
        name: String,
    },
    /// The options are out of range.
    #[error("{0}")]
    Options(String),
    /// statrs refused the samples (a NaN among them).
    #[error("row `{name}`: {reason}")]
    Test {
        /// The row.
        name: String,
        /// statrs' reason.
        reason: String,
    },
}

/// Every row of `new`, then those only in `old`: medians, change, and whether the repetitions
/// show a significant difference (see [`CompareOptions`]). One run each: see [`compare_runs`].
pub fn compare(old: &Report, new: &Report, options: CompareOptions) -> Result<Vec<RowChange>, CompareError> {
    compare_runs(std::slice::from_ref(old), std::slice::from_ref(new), options)
}

/// How a comparison tested its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompareMethod {
    /// One run each: Mann-Whitney U over the two runs' repetitions. Repetitions of one run share
    /// that run's conditions (where the scheduler put its threads, the clock), so a shift between
    /// two runs of the same code can look significant; several runs per side test that drift.
    Repetitions,
    /// Several runs on a side: a one-way ANOVA F-test (two groups: a pooled t-test) over each
    /// run's median, so the run-to-run drift is part of the noise a change must stand out from.
    Runs,
}

impl CompareMethod {
    /// The method for `old` and `new` runs.
    pub fn for_runs(old: usize, new: usize) -> Self {
        if old == 1 && new == 1 { CompareMethod::Repetitions } else { CompareMethod::Runs }
    }
}

/// [`compare`] over several runs of each side (reports of `aqueduct bench --json`): with more
/// than one run on a side, each row is tested on its runs' medians ([`CompareMethod::Runs`]); a
/// row counts on a side only if every run of it has the row.
pub fn compare_runs(old: &[Report], new: &[Report], options: CompareOptions) -> Result<Vec<RowChange>, CompareError> {
    if !(options.significance > 0.0 && options.significance < 1.0) {
        return Err(CompareError::Options(format!("significance {}: expected (0, 1)", options.significance)));
    }
    if !(options.noise_threshold >= 0.0 && options.noise_threshold.is_finite()) {
        return Err(CompareError::Options(format!("noise threshold {}: expected 0 or more", options.noise_threshold)));
    }
    if old.is_empty() || new.is_empty() {
        return Err(CompareError::Options("each side needs at least one report".into()));
    }
    for (which, reports) in [("old", old), ("new", new)] {
        for report in reports {
            if report.schema < 2 {
                return Err(CompareError::NoRepetitions { which, schema: report.schema });
            }
            if let Some(row) = report.results.iter().find(|row| row.samples.is_empty()) {
                return Err(CompareError::EmptyRow { which, name: row.name.clone() });
            }
        }
    }
    let method = CompareMethod::for_runs(old.len(), new.len());
    // A row's runs on one side, if every run has it.
    let runs = |reports: &[Report], name: &str| -> Option<Vec<ResultRow>> {
        reports.iter().map(|report| report.results.iter().find(|row| row.name == name).cloned()).collect()
    };
    let median_of = |rows: &[ResultRow]| Spread::of(&rows.iter().map(|row| row.median).collect::<Vec<_>>()).median;
    let names = &new[0].results;
    let shared = names.iter().filter(|row| runs(new, &row.name).is_some() && runs(old, &row.name).is_some()).count();
    let per_row_level = options.significance / shared.max(1) as f64;
    let mut changes = Vec::new();
    for row in names {
        let (Some(after), Some(before)) = (runs(new, &row.name), runs(old, &row.name)) else {
            changes.push(RowChange {
                name: row.name.clone(),
                old_median: None,
                new_median: Some(row.median),
                change_percent: None,
                p_value: None,
                verdict: Verdict::New,
            });
            continue;
        };
        let (old_median, new_median) = (median_of(&before), median_of(&after));
        let p_value = match method {
            CompareMethod::Repetitions => {
                mannwhitneyu(
                    &before[0].samples,
                    &after[0].samples,
                    MannWhitneyUMethod::Automatic,
                    Alternative::TwoSided,
                )
                .map_err(|error| CompareError::Test { name: row.name.clone(), reason: error.to_string() })?
                .1
            }
            CompareMethod::Runs => {
                let medians = |rows: &[ResultRow]| rows.iter().map(|row| row.median).collect::<Vec<_>>();
                let (before, after) = (medians(&before), medians(&after));
                let test_error = |reason: String| CompareError::Test { name: row.name.clone(), reason };
                match f_oneway(vec![before.clone(), after.clone()], NaNPolicy::Error) {
                    Ok((_, p_value)) => p_value,
                    // A side whose runs all have one median, which statrs' F-test refuses: the
                    // rank test of the medians still answers (conservatively, for few runs).
                    Err(FOneWayTestError::SampleContainsSameConstants) => {
                        mannwhitneyu(&before, &after, MannWhitneyUMethod::Automatic, Alternative::TwoSided)
                            .map_err(|error| test_error(error.to_string()))?
                            .1
                    }
                    Err(error) => return Err(test_error(error.to_string())),
                }
            }
        };
        // Every repetition equal on both sides leaves the test no variance: nothing to tell apart.
        let p_value = if p_value.is_nan() { 1.0 } else { p_value };
        let change = if old_median > 0.0 { new_median / old_median - 1.0 } else { 0.0 };
        let verdict = if p_value >= per_row_level || change.abs() < options.noise_threshold {
            Verdict::Unchanged
        } else if change > 0.0 {
            Verdict::Slower
        } else {
            Verdict::Faster
        };
        changes.push(RowChange {
            name: row.name.clone(),
            old_median: Some(old_median),
            new_median: Some(new_median),
            change_percent: Some(change * 100.0),
            p_value: Some(p_value),
            verdict,
        });
    }
    for row in old[0].results.iter().filter(|row| runs(new, &row.name).is_none()) {
        changes.push(RowChange {
            name: row.name.clone(),
            old_median: Some(row.median),
            new_median: None,
            change_percent: None,
            p_value: None,
            verdict: Verdict::Gone,
        });
    }
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_statrs_order_statistics() {
        let values = [11.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0];
        let spread = Spread::of(&values);
        assert_eq!(spread.median, 6.0);
        assert!(spread.p10 > 1.0 && spread.p10 < 2.0, "interpolated: {spread:?}");
        assert!(spread.p90 > 10.0 && spread.p90 < 11.0, "interpolated: {spread:?}");
        assert_eq!(Spread::of(&[4.0, 2.0]).median, 3.0, "an even count averages the middle two");
        assert_eq!(Spread::of(&[]), Spread { median: 0.0, p10: 0.0, p90: 0.0 });
    }

    #[test]
    fn summary_is_per_operation_and_keeps_every_repetition() {
        let samples = [Sample { wall: Duration::from_micros(10), host_cpu: Duration::from_micros(5) }; 3];
        let row = summarize("x", 100, &samples);
        assert_eq!((row.median, row.host_cpu_median, row.unit.as_str()), (100.0, 50.0, "ns/op"));
        assert_eq!(row.samples, [100.0; 3]);
    }

    /// A run whose every repetition of row `x` sits near `median`.
    fn run_near(median: f64) -> Report {
        let samples: Vec<f64> = (0..21).map(|index| median + (index % 3) as f64 * 0.01 * median).collect();
        report(&[("x", &samples)])
    }

    #[test]
    fn drift_between_runs_is_noise_when_several_runs_are_compared() {
        // Each run is tight, but runs drift by 30 %: one run per side flags the drift...
        let (old, new) =
            ([run_near(100.0), run_near(130.0), run_near(90.0)], [run_near(115.0), run_near(95.0), run_near(125.0)]);
        let single = compare(&old[0], &new[0], CompareOptions::default()).unwrap();
        assert_eq!(single[0].verdict, Verdict::Slower, "one run each sees the drift as a change");
        // ...several runs per side see it as noise.
        let runs = compare_runs(&old, &new, CompareOptions::default()).unwrap();
        assert_eq!(runs[0].verdict, Verdict::Unchanged, "{runs:?}");
        assert_eq!(CompareMethod::for_runs(3, 3), CompareMethod::Runs);
    }

    #[test]
    fn a_change_that_holds_in_every_run_is_flagged() {
        let old = [run_near(100.0), run_near(103.0), run_near(98.0), run_near(101.0)];
        let new = [run_near(150.0), run_near(148.0), run_near(153.0), run_near(151.0)];
        let runs = compare_runs(&old, &new, CompareOptions::default()).unwrap();
        assert_eq!(runs[0].verdict, Verdict::Slower, "{runs:?}");
        assert!((runs[0].change_percent.unwrap() - 49.5).abs() < 2.0, "{runs:?}");
        let faster = compare_runs(&new, &old, CompareOptions::default()).unwrap();
        assert_eq!(faster[0].verdict, Verdict::Faster);
        // One side's runs all alike (statrs' F-test refuses it): the rank test answers instead.
        let alike = [run_near(100.0), run_near(100.0)];
        assert!(compare_runs(&alike, &new, CompareOptions::default()).is_ok());
        assert!(matches!(compare_runs(&[], &new, CompareOptions::default()), Err(CompareError::Options(_))));
    }

    fn report(rows: &[(&str, &[f64])]) -> Report {
        Report {
            schema: BENCH_SCHEMA,
            provider: "soft".into(),
            agent: "gfx".into(),
            cpu: "cpu".into(),
            cores: 2,
            limit_ns_per_packet: 1.0,
            results: rows
                .iter()
                .map(|(name, samples)| ResultRow {
                    name: name.to_string(),
                    unit: "ns/op".into(),
                    ops_per_rep: 1,
                    median: Spread::of(samples).median,
                    p10: 0.0,
                    p90: 0.0,
                    host_cpu_median: 0.0,
                    ratio_to_limit: 1.0,
                    samples: samples.to_vec(),
                })
                .collect(),
        }
    }

    #[test]
    fn only_a_significant_change_is_flagged() {
        let noisy: Vec<f64> = (0..21).map(|index| 100.0 + (index * 37 % 21) as f64).collect();
        let shuffled: Vec<f64> = noisy.iter().rev().copied().collect();
        let doubled: Vec<f64> = noisy.iter().map(|value| value * 2.0).collect();
        let old = report(&[("same", &noisy), ("slower", &noisy), ("gone", &noisy)]);
        let new = report(&[("same", &shuffled), ("slower", &doubled), ("new", &noisy)]);
        let changes = compare(&old, &new, CompareOptions::default()).unwrap();
        let verdicts: Vec<(&str, Verdict)> = changes.iter().map(|row| (row.name.as_str(), row.verdict)).collect();
        assert_eq!(
            verdicts,
            [("same", Verdict::Unchanged), ("slower", Verdict::Slower), ("new", Verdict::New), ("gone", Verdict::Gone)]
        );
        assert_eq!(changes[0].p_value, Some(1.0));
        assert!(changes[1].p_value.unwrap() < 1e-6, "{:?}", changes[1]);
    }

    #[test]
    fn one_outlier_repetition_is_not_a_change() {
        // The reported case: two runs whose medians differ through a few slow repetitions.
        let old: Vec<f64> = (0..21).map(|index| 1000.0 + index as f64).collect();
        let mut new = old.clone();
        new[20] = 5000.0;
        new[19] = 4000.0;
        let changes = compare(&report(&[("r", &old)]), &report(&[("r", &new)]), CompareOptions::default()).unwrap();
        assert_eq!(changes[0].verdict, Verdict::Unchanged, "{:?}", changes[0]);
    }

    #[test]
    fn reports_without_repetitions_are_refused() {
        let mut old = report(&[("r", &[1.0])]);
        old.schema = 1;
        let error = compare(&old, &report(&[("r", &[1.0])]), CompareOptions::default()).unwrap_err();
        assert!(matches!(error, CompareError::NoRepetitions { which: "old", schema: 1 }), "{error}");
        let bad = CompareOptions { significance: 0.0, ..CompareOptions::default() };
        assert!(matches!(compare(&old, &old, bad), Err(CompareError::Options(_))));
    }
}
