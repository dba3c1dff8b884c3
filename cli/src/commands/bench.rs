//! `aqueduct bench`: a progress bar while it runs, then a table or the stable JSON report;
//! `--compare OLD NEW` tests every row's repetitions for a significant change.

use std::path::PathBuf;

use crate::bench::{BenchOptions, CompareMethod, CompareOptions, Report, Verdict};

use super::CliResult;
use super::output::{progress_bar, table};

pub fn run(options: BenchOptions, json: bool) -> CliResult {
    let bar = progress_bar(0, json);
    let (report, notes) = crate::bench::run_with_notes(&options, |done, total, name| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        bar.set_message(name.to_string());
    })?;
    bar.finish_and_clear();
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        // Notes are not part of the schema: stderr, so stdout stays one JSON document.
        notes.iter().for_each(|note| eprintln!("{note}"));
        return Ok(());
    }
    println!(
        "aqueduct bench: provider {}, agent {}, {} ({} cores); limit {:.2} ns/packet",
        report.provider, report.agent, report.cpu, report.cores, report.limit_ns_per_packet
    );
    let repetitions = report.results.last().map_or(0, |row| row.samples.len());
    println!(
        "repetitions per row: {repetitions}; median and 10th to 90th percentile of wall time, median host CPU time"
    );
    print!("{}", results_table(&report));
    notes.iter().for_each(|note| println!("{note}"));
    Ok(())
}

/// The report's rows, with the unit in every timing column's header.
pub fn results_table(report: &Report) -> String {
    let mut rows = table(&["name", "median (ns/op)", "p10 (ns/op)", "p90 (ns/op)", "host cpu (ns/op)", "× limit"], 1);
    for row in &report.results {
        rows.add_row([
            row.name.clone(),
            format!("{:.1}", row.median),
            format!("{:.1}", row.p10),
            format!("{:.1}", row.p90),
            format!("{:.1}", row.host_cpu_median),
            format!("{:.1}×", row.ratio_to_limit),
        ]);
    }
    format!("{rows}\n")
}

pub fn compare(old: &[PathBuf], new: &[PathBuf], options: CompareOptions, json: bool) -> CliResult {
    let read = |path: &PathBuf| -> Result<Report, Box<dyn std::error::Error>> {
        let text = std::fs::read_to_string(path).map_err(|error| format!("{}: {error}", path.display()))?;
        Ok(serde_json::from_str(&text).map_err(|error| format!("{}: not a bench report: {error}", path.display()))?)
    };
    let read_all = |paths: &[PathBuf]| paths.iter().map(read).collect::<Result<Vec<_>, _>>();
    let (old, new) = (read_all(old)?, read_all(new)?);
    let changes = crate::bench::compare_runs(&old, &new, options)?;
    let method = CompareMethod::for_runs(old.len(), new.len());
    if json {
        let value = serde_json::json!({
            "schema": 1,
            "method": method,
            "runs": { "old": old.len(), "new": new.len() },
            "significance": options.significance,
            "noise_threshold": options.noise_threshold,
            "rows": changes,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(());
    }
    let tested = changes.iter().filter(|row| row.p_value.is_some()).count();
    let test = match method {
        CompareMethod::Repetitions => "Mann-Whitney U over each row's repetitions (one run per side: \
             drift between runs is not measured; compare several runs with --old and --new)"
            .to_string(),
        CompareMethod::Runs => {
            format!("F-test over each row's run medians ({} old runs, {} new)", old.len(), new.len())
        }
    };
    println!(
        "{test}; flagged when p < {} / {tested} rows and the median moved by at least {:.0} %",
        options.significance,
        options.noise_threshold * 100.0
    );
    let mut rows = table(&["name", "old median (ns/op)", "new median (ns/op)", "change", "p-value", "verdict"], 1);
    let number = |value: Option<f64>| value.map_or_else(|| "-".to_string(), |value| format!("{value:.1}"));
    for change in &changes {
        rows.add_row([
            change.name.clone(),
            number(change.old_median),
            number(change.new_median),
            change.change_percent.map_or_else(|| "-".to_string(), |percent| format!("{percent:+.1} %")),
            change.p_value.map_or_else(|| "-".to_string(), |p| format!("{p:.2e}")),
            change.verdict.to_string(),
        ]);
    }
    println!("{rows}");
    let flagged = |verdict| changes.iter().filter(|row| row.verdict == verdict).count();
    println!(
        "{} slower, {} faster, {} without a significant change",
        flagged(Verdict::Slower),
        flagged(Verdict::Faster),
        flagged(Verdict::Unchanged)
    );
    Ok(())
}
