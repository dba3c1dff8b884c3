//! `aqueduct profile`: capture one of the project's workloads (`record`), and the offline tools
//! over a `.aqprof` bundle (summary, dispatch listing, trace export).

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use aqueduct_profile::{DispatchFormat, ProfileReader};
use clap::{Subcommand, ValueEnum};

use super::CliResult;

#[derive(Subcommand)]
pub enum ProfileCommand {
    /// Profile one of the project's workloads: `aqueduct profile record -o FILE -- demo [args]`
    /// or `-- bench [args]`. The workload runs as its own process, captured through
    /// AQUEDUCT_PROFILE and AQUEDUCT_PROFILE_OUTPUT, as an unmodified program would be.
    Record {
        #[arg(short, long)]
        output: PathBuf,
        /// Comma-separated capture modes, or `all` (every mode that needs no aqlprofile).
        #[arg(long, default_value = "all")]
        modes: String,
        /// The workload and its arguments: `demo …` or `bench …`.
        #[arg(last = true, required = true, num_args = 1..)]
        workload: Vec<String>,
    },
    /// Per queue and per kernel: counts and device times, host submit cost, cross-queue waits,
    /// dropped records.
    Summary {
        file: PathBuf,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Every dispatch record, one row each.
    Dispatches {
        file: PathBuf,
        #[arg(long, value_enum, default_value = "jsonl")]
        format: DispatchesFormat,
        /// Write here instead of stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Export the timeline for a trace viewer.
    Export {
        file: PathBuf,
        #[arg(long, value_enum)]
        format: ExportFormat,
        #[arg(short, long)]
        output: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum DispatchesFormat {
    Jsonl,
    Csv,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    /// Trace Event JSON: open in Perfetto's UI or chrome://tracing.
    Chrome,
    /// Native Perfetto protobuf (TrackEvent): open in Perfetto's UI or trace processor.
    Perfetto,
    /// A self-contained SVG picture, one host and one device lane per queue.
    Svg,
}

pub fn run(command: ProfileCommand) -> CliResult {
    match command {
        ProfileCommand::Record { output, modes, workload } => record(&output, &modes, &workload),
        ProfileCommand::Summary { file, json } => {
            let summary = aqueduct_profile::summarize(open(&file)?).map_err(|error| in_file(&file, error))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&summary)?);
            } else {
                print!("{}", summary.to_text());
            }
            Ok(())
        }
        ProfileCommand::Dispatches { file, format, output } => {
            let format = match format {
                DispatchesFormat::Jsonl => DispatchFormat::Jsonl,
                DispatchesFormat::Csv => DispatchFormat::Csv,
            };
            let reader = open(&file)?;
            match output {
                Some(path) => {
                    write_output(&path, |out| aqueduct_profile::write_dispatches(reader, format, out).map(drop))
                        .map_err(|error| in_file(&file, error).into())
                }
                None => {
                    let stdout = BufWriter::new(std::io::stdout().lock());
                    aqueduct_profile::write_dispatches(reader, format, stdout)
                        .map_err(|error| in_file(&file, error))?;
                    Ok(())
                }
            }
        }
        ProfileCommand::Export { file, format, output } => {
            let input = File::open(&file).map_err(|error| format!("cannot read {}: {error}", file.display()))?;
            let input = BufReader::new(input);
            write_output(&output, |out| match format {
                ExportFormat::Chrome => aqueduct_profile::export_chrome(input, out),
                ExportFormat::Perfetto => aqueduct_profile::export_perfetto(input, out),
                ExportFormat::Svg => aqueduct_profile::export_svg(input, out),
            })
            .map_err(|error| in_file(&file, error))?;
            Ok(())
        }
    }
}

/// Runs the workload as a child of this same binary with the capture asked for in its
/// environment, then reads the bundle back and reports what it holds.
fn record(output: &Path, modes: &str, workload: &[String]) -> CliResult {
    // Checked here, so a typo fails before the workload runs rather than inside it.
    let parsed: aqueduct_engine::ProfileModes = modes.parse()?;
    match workload.first().map(String::as_str) {
        Some("demo" | "bench") => {}
        other => {
            return Err(format!("profile record runs `demo` or `bench`, not {}", other.unwrap_or("nothing")).into());
        }
    }
    // The capture writes the file when the workload's device closes; a stale file from an earlier
    // run must not pass for this one.
    match std::fs::remove_file(output) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            return Err(format!("cannot replace {}: {error}", output.display()).into());
        }
        _ => {}
    }
    let status = std::process::Command::new(std::env::current_exe()?)
        .args(workload)
        .env(aqueduct_engine::PROFILE_ENV, parsed.to_string())
        .env(aqueduct_engine::PROFILE_OUTPUT_ENV, output)
        .status()?;
    if !status.success() {
        return Err(format!("the workload `{}` failed ({status})", workload.join(" ")).into());
    }
    let summary = aqueduct_profile::summarize(open(output)?).map_err(|error| in_file(output, error))?;
    let submissions: u64 = summary.queues.iter().map(|queue| queue.submissions).sum();
    let dispatches: u64 = summary.kernels.iter().map(|kernel| kernel.device_time.count).sum();
    eprintln!(
        "aqueduct profile: wrote {} ({parsed}): {} records, {} queues, {submissions} submissions, {dispatches} dispatches, {} dropped",
        output.display(),
        summary.records,
        summary.queues.len(),
        summary.dropped,
    );
    Ok(())
}

fn open(file: &Path) -> Result<ProfileReader<BufReader<File>>, String> {
    let input = File::open(file).map_err(|error| format!("cannot read {}: {error}", file.display()))?;
    ProfileReader::new(BufReader::new(input)).map_err(|error| in_file(file, error))
}

fn in_file(file: &Path, error: impl std::fmt::Display) -> String {
    format!("{}: {error}", file.display())
}

/// Runs `write` into a new file at `path`, and removes the file if it fails, so a half-written
/// export never looks like a good one.
fn write_output<T>(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> Result<T, aqueduct_profile::CaptureFileError>,
) -> Result<T, String> {
    let file = File::create(path).map_err(|error| format!("cannot write {}: {error}", path.display()))?;
    let mut out = BufWriter::new(file);
    let result = write(&mut out).map_err(|error| error.to_string()).and_then(|value| {
        out.flush().map_err(|error| format!("cannot write {}: {error}", path.display()))?;
        Ok(value)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(path);
    }
    result
}
