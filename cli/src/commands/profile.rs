//! `aqueduct profile`: capture any program (`record`), and the offline tools over a `.aqprof`
//! bundle (summary, dispatch listing, trace export).

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use aqueduct_profile::{DispatchFormat, DurationStats, ProfileReader, Summary};
use clap::{Subcommand, ValueEnum};

use super::{CliResult, output};

#[derive(Subcommand)]
pub enum ProfileCommand {
    /// Run a program with a profile capture on, as `nsys profile` does:
    /// `aqueduct profile record -o FILE -- PROGRAM [ARGS...]`. The program is captured through
    /// AQUEDUCT_PROFILE and AQUEDUCT_PROFILE_OUTPUT, which every aqueduct device reads when it
    /// opens. A bare `demo` or `bench` is this binary's own workload.
    Record {
        /// The profile bundle to write (.aqprof); an existing file is replaced.
        #[arg(short, long)]
        output: PathBuf,
        /// Comma-separated capture modes, or `all` (every mode that needs no aqlprofile).
        #[arg(long, default_value = "all")]
        modes: String,
        /// The program and its arguments (`demo …` or `bench …` for the built-in workloads).
        #[arg(last = true, required = true, num_args = 1.., value_name = "PROGRAM")]
        program: Vec<String>,
    },
    /// Per queue and per kernel: counts and device times, host submit cost, cross-queue waits,
    /// dropped records.
    Summary {
        /// The profile bundle (.aqprof).
        file: PathBuf,
        /// Print the summary as JSON (durations in nanoseconds).
        #[arg(long)]
        json: bool,
    },
    /// Every dispatch record, one row each.
    Dispatches {
        /// The profile bundle (.aqprof).
        file: PathBuf,
        /// The listing's format.
        #[arg(long, value_enum, default_value_t = DispatchesFormat::Jsonl)]
        format: DispatchesFormat,
        /// Write here instead of stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Export the timeline for a trace viewer.
    Export {
        /// The profile bundle (.aqprof).
        file: PathBuf,
        /// The trace format.
        #[arg(long, value_enum)]
        format: ExportFormat,
        /// The file to write.
        #[arg(short, long)]
        output: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum DispatchesFormat {
    /// One JSON object per line.
    Jsonl,
    /// RFC 4180 CSV with a header line.
    Csv,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    /// Trace Event JSON: open in Perfetto's UI or chrome://tracing.
    Chrome,
    /// Native Perfetto protobuf (TrackEvent): open in Perfetto's UI or trace processor.
    Perfetto,
    /// A self-contained SVG picture, one host and one device track per queue.
    Svg,
}

impl ExportFormat {
    fn describe(self) -> &'static str {
        match self {
            ExportFormat::Chrome => "a Trace Event JSON trace",
            ExportFormat::Perfetto => "a Perfetto protobuf trace",
            ExportFormat::Svg => "an SVG timeline",
        }
    }
}

pub fn run(command: ProfileCommand) -> CliResult {
    match command {
        ProfileCommand::Record { output, modes, program } => record(&output, &modes, &program),
        ProfileCommand::Summary { file, json } => {
            let summary = aqueduct_profile::summarize(open(&file)?).map_err(|error| in_file(&file, error))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&summary)?);
            } else {
                print!("{}", summary_text(&summary));
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
                    let rows = write_output(&path, |out| aqueduct_profile::write_dispatches(reader, format, out))
                        .map_err(|error| in_file(&file, error))?;
                    output::wrote(&format!("{rows} dispatches"), &path);
                    Ok(())
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
            output::wrote(format.describe(), &output);
            Ok(())
        }
    }
}

/// The summary for people: the bundle's header, then per queue and per kernel a table of
/// durations, each in the unit that reads best.
pub fn summary_text(summary: &Summary) -> String {
    let mut text = String::new();
    let header = &summary.header;
    let agents: Vec<String> =
        header.device.agents.iter().map(|agent| format!("{} {}", agent.name, agent.isa)).collect();
    let _ = writeln!(
        text,
        "aqueduct profile: format {}.{}, written by aqueduct {}\ndevice: {} ({}), wait strategy {}, clock {} ({} Hz ticks)",
        summary.format_version.major,
        summary.format_version.minor,
        header.aqueduct_version,
        header.device.provider,
        agents.join(", "),
        header.wait_strategy,
        header.clock.domain,
        header.clock.tick_frequency_hz,
    );
    let _ = writeln!(text, "records: {}, dropped: {}", summary.records, summary.dropped);
    let stats_table = |rows: &[(String, &DurationStats)]| {
        let mut table = output::table(&["", "count", "total", "mean", "p50", "p90", "p99"], 1);
        for (label, stats) in rows {
            table.add_row([
                label.clone(),
                stats.count.to_string(),
                output::duration_ns(stats.total_ns as f64),
                output::duration_ns(stats.mean_ns),
                output::duration_ns(stats.p50_ns as f64),
                output::duration_ns(stats.p90_ns as f64),
                output::duration_ns(stats.p99_ns as f64),
            ]);
        }
        table
    };
    for queue in &summary.queues {
        let _ = writeln!(
            text,
            "\nqueue {}: {} submissions, {} dropped records",
            queue.queue, queue.submissions, queue.dropped
        );
        let rows = [
            ("device time".to_string(), &queue.device_time),
            ("host submit cost".to_string(), &queue.host_submit_cost),
        ];
        let _ = writeln!(text, "{}", stats_table(&rows));
        for waits in &queue.waits_on {
            let _ = writeln!(
                text,
                "waits on queue {}: {} device-barrier waits, {} timed, {} waiting",
                waits.producer_queue,
                waits.device_barrier_waits,
                waits.timed_waits,
                output::duration_ns(waits.total_wait_ns as f64)
            );
        }
    }
    if !summary.kernels.is_empty() {
        let _ = writeln!(text, "\nkernels (device time)");
        let rows: Vec<(String, &DurationStats)> = summary
            .kernels
            .iter()
            .map(|kernel| (format!("{} (executable {})", kernel.kernel, kernel.executable), &kernel.device_time))
            .collect();
        let _ = writeln!(text, "{}", stats_table(&rows));
    }
    text
}

/// Runs `program` (or this binary's `demo`/`bench`) with the capture asked for in its
/// environment, waits for it, then reads the bundle back and reports what it holds.
fn record(output: &Path, modes: &str, program: &[String]) -> CliResult {
    // Checked here, so a typo fails before the program runs rather than inside it.
    let parsed: aqueduct_engine::ProfileModes = modes.parse()?;
    check_aqlprofile(parsed)?;
    let Some((name, arguments)) = program.split_first() else {
        return Err("profile record needs a program to run after `--`".into());
    };
    // The capture writes the file when the program's device closes; a stale file from an earlier
    // run must not pass for this one.
    match std::fs::remove_file(output) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            return Err(format!("cannot replace {}: {error}", output.display()).into());
        }
        _ => {}
    }
    // Absolute, so a program that changes its directory still writes where it was asked to.
    let output = std::path::absolute(output)?;
    let mut command = match name.as_str() {
        "demo" | "bench" => {
            let mut command = std::process::Command::new(std::env::current_exe()?);
            command.arg(name);
            command
        }
        _ => std::process::Command::new(name),
    };
    let status = command
        .args(arguments)
        .env(aqueduct_engine::PROFILE_ENV, parsed.to_string())
        .env(aqueduct_engine::PROFILE_OUTPUT_ENV, &output)
        .status()
        .map_err(|error| format!("cannot run `{name}`: {error}"))?;
    let ran = format!("`{}` {}", program.join(" "), describe_exit(status));
    if !output.exists() {
        return Err(
            format!("{ran}, and wrote no profile to {} (does it open an aqueduct device?)", output.display()).into()
        );
    }
    let summary = aqueduct_profile::summarize(open(&output)?).map_err(|error| in_file(&output, error))?;
    let submissions: u64 = summary.queues.iter().map(|queue| queue.submissions).sum();
    let dispatches: u64 = summary.kernels.iter().map(|kernel| kernel.device_time.count).sum();
    output::wrote(
        &format!(
            "the profile of {ran} ({parsed}: {} records, {} queues, {submissions} submissions, {dispatches} dispatches, {} dropped)",
            summary.records,
            summary.queues.len(),
            summary.dropped,
        ),
        &output,
    );
    if !status.success() {
        return Err(ran.into());
    }
    Ok(())
}

fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(0), _) => "exited successfully".into(),
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => format!("ended ({status})"),
    }
}

/// Modes that go through aqlprofile need its library: say why it does not load (the loader's own
/// text) before running anything, rather than once from the program and again from here.
fn check_aqlprofile(modes: aqueduct_engine::ProfileModes) -> CliResult {
    let wanted = modes.intersection(aqueduct_engine::ProfileModes::AQLPROFILE);
    if wanted.is_empty() {
        return Ok(());
    }
    match aqueduct_hsa::aqlprofile::AqlProfileLibrary::load() {
        Ok(_) => Ok(()),
        Err(error) => Err(format!(
            "profile modes {wanted} are unavailable: aqlprofile could not be loaded (set {} to its path): {error}",
            aqueduct_hsa::aqlprofile::LIBAQLPROFILE_PATH_VARIABLE
        )
        .into()),
    }
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
