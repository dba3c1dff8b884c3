//! `aqueduct bench`: a progress bar while it runs, then a table or the stable JSON report;
//! `--compare OLD NEW` prints the change of every row.

use aqueduct::bench::{BenchOptions, Report};

use super::CliResult;

pub fn run(options: BenchOptions, json: bool) -> CliResult {
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let (report, notes) = aqueduct::bench::run_with_notes(&options, |done, total, name| {
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
    println!("{:<36} {:>10} {:>10} {:>10} {:>12} {:>9}", "name", "median", "p10", "p90", "host cpu", "× limit");
    for row in &report.results {
        println!(
            "{:<36} {:>10.1} {:>10.1} {:>10.1} {:>12.1} {:>8.1}×",
            row.name, row.median, row.p10, row.p90, row.host_cpu_median, row.ratio_to_limit
        );
    }
    println!("(ns per operation; medians of the repetitions)");
    notes.iter().for_each(|note| println!("{note}"));
    Ok(())
}

pub fn compare(old: &std::path::Path, new: &std::path::Path) -> CliResult {
    let read = |path: &std::path::Path| -> Result<Report, Box<dyn std::error::Error>> {
        let text = std::fs::read_to_string(path).map_err(|error| format!("{}: {error}", path.display()))?;
        Ok(serde_json::from_str(&text).map_err(|error| format!("{}: not a bench report: {error}", path.display()))?)
    };
    for line in aqueduct::bench::compare(&read(old)?, &read(new)?) {
        println!("{line}");
    }
    Ok(())
}
