//! `aqueduct replay`: what a `.aqreplay` capture holds, and running, benchmarking and profiling
//! it on its own.

use std::path::{Path, PathBuf};

use crate::replay::{bench, open_engine};
use aqueduct_engine::replay::{DEFAULT_REPLAY_MEMORY_BUDGET, Replay, ReplayOptions};
use aqueduct_engine::{ProfileConfig, ProfileModes};
use clap::Subcommand;

use super::CliResult;
use super::output::{progress_bar, table};

/// How a replay runs: its limits.
#[derive(clap::Args, Clone, Copy)]
pub struct Limits {
    /// The most device memory the replay may hold at once, in MiB (the capture's allocations,
    /// pool reserves and allocas); a capture that needs more is refused by name.
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_REPLAY_MEMORY_BUDGET >> 20)]
    memory_budget: u64,
}

impl Limits {
    fn options(self) -> ReplayOptions {
        ReplayOptions { memory_budget: self.memory_budget.saturating_mul(1 << 20), ..ReplayOptions::default() }
    }
}

#[derive(Subcommand)]
pub enum ReplayCommand {
    /// What the capture holds: queues, operations by kind, executables, bytes, duration.
    Info {
        /// The replay capture (.aqreplay).
        file: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Re-execute the stream (same queues, same dependencies) and compare every checksum; exits
    /// non-zero on a mismatch, naming the first buffer that differs.
    Run {
        /// The replay capture (.aqreplay).
        file: PathBuf,
        /// Device: auto, soft, amdgpu, amdgpu:N or amdgpu://UUID[,UUID...]; the capture's own by
        /// default.
        #[arg(long)]
        device: Option<String>,
        #[command(flatten)]
        limits: Limits,
    },
    /// Replay the stream repeatedly: host cost per operation and end-to-end time, against the
    /// baseline measured in the same run (as `aqueduct bench`).
    Bench {
        /// The replay capture (.aqreplay).
        file: PathBuf,
        /// Device: auto, soft, amdgpu, amdgpu:N or amdgpu://UUID[,UUID...]; the capture's own by
        /// default.
        #[arg(long)]
        device: Option<String>,
        /// One repetition.
        #[arg(long)]
        quick: bool,
        /// Print the stable JSON report (the bench's schema) on stdout (and no progress bar).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        limits: Limits,
    },
    /// Replay the stream under a profile capture (every software mode) into a `.aqprof`.
    Profile {
        /// The replay capture (.aqreplay).
        file: PathBuf,
        /// The profile bundle to write (.aqprof).
        #[arg(short, long)]
        output: PathBuf,
        /// Device: auto, soft, amdgpu, amdgpu:N or amdgpu://UUID[,UUID...]; the capture's own by
        /// default.
        #[arg(long)]
        device: Option<String>,
        #[command(flatten)]
        limits: Limits,
    },
}

pub fn run(command: ReplayCommand) -> CliResult {
    match command {
        ReplayCommand::Info { file, json } => info(&file, json),
        ReplayCommand::Run { file, device, limits } => run_file(&file, device.as_deref(), limits.options()),
        ReplayCommand::Bench { file, device, quick, json, limits } => {
            bench_file(&file, device.as_deref(), quick, json, limits.options())
        }
        ReplayCommand::Profile { file, output, device, limits } => {
            profile(&file, &output, device.as_deref(), limits.options())
        }
    }
}

fn info(file: &Path, json: bool) -> CliResult {
    let replay = Replay::open(file)?;
    let summary = replay.summarize()?;
    let header = replay.header();
    if json {
        let value = serde_json::json!({
            "schema": 1,
            "header": header,
            "records": summary.records,
            "file_bytes": summary.file_bytes,
            "duration_ns": summary.duration.as_nanos() as u64,
            "queues": summary.queues,
            "operations": summary.operations.iter().map(|(kind, count)| serde_json::json!({"kind": kind, "count": count})).collect::<Vec<_>>(),
            "executables": summary.executables,
            "code_objects": summary.code_objects.iter().map(|(hash, bytes)| serde_json::json!({"sha256": hash.to_string(), "bytes": bytes})).collect::<Vec<_>>(),
            "semaphores": summary.semaphores,
            "allocations": summary.allocations,
            "allocated_bytes": summary.allocated_bytes,
            "pools": summary.pools,
            "command_buffers": summary.command_buffers,
            "host_writes": summary.host_writes,
            "host_write_bytes": summary.host_write_bytes,
            "host_reads": summary.host_reads,
            "host_waits": summary.host_waits,
            "host_signals": summary.host_signals,
            "final_checksums": summary.final_checksums,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(());
    }
    println!("{}", file.display());
    println!(
        "  captured by aqueduct {} on {} (device `{}`, {})",
        header.aqueduct_version, header.provider, header.device_spec, header.wait_strategy
    );
    for (index, agent) in header.agents.iter().enumerate() {
        println!("  agent {index}: {} ({})", agent.name, agent.isa);
    }
    println!(
        "  {} records, {} bytes, {} of program time",
        summary.records,
        summary.file_bytes,
        super::output::duration(summary.duration)
    );
    println!("  queues: {}", summary.queues);
    let total: u64 = summary.operations.iter().map(|(_, count)| count).sum();
    println!("  operations: {total}");
    let mut operations = table(&["kind", "count"], 1);
    for (kind, count) in &summary.operations {
        operations.add_row([kind.to_string(), count.to_string()]);
    }
    println!("{operations}");
    println!("  executables: {} from {} code object(s)", summary.executables, summary.code_objects.len());
    for (hash, bytes) in &summary.code_objects {
        println!("    {hash} ({bytes} bytes)");
    }
    println!(
        "  semaphores: {}, allocations: {} ({} bytes), pools: {}, command buffers: {}",
        summary.semaphores, summary.allocations, summary.allocated_bytes, summary.pools, summary.command_buffers
    );
    println!(
        "  host: {} writes ({} bytes), {} read-backs, {} waits, {} signals",
        summary.host_writes, summary.host_write_bytes, summary.host_reads, summary.host_waits, summary.host_signals
    );
    println!("  final checksums: {}", summary.final_checksums);
    Ok(())
}

fn run_file(file: &Path, device: Option<&str>, options: ReplayOptions) -> CliResult {
    let replay = Replay::open(file)?;
    let engine = open_engine(&replay, device, None)?;
    let outcome = replay.run(engine.device(), &options)?;
    eprintln!(
        "aqueduct replay: {} records, {} operations in {:.3} ms; {} read-backs and {} final checksums compared",
        outcome.records,
        outcome.operations,
        outcome.timing.wall.as_secs_f64() * 1e3,
        outcome.reads_checked,
        outcome.finals_checked
    );
    match outcome.mismatches.first() {
        None => {
            println!("replay matches the capture");
            Ok(())
        }
        Some(first) => Err(format!("{} checksum(s) differ; the first: {first}", outcome.mismatches.len()).into()),
    }
}

fn bench_file(file: &Path, device: Option<&str>, quick: bool, json: bool, options: ReplayOptions) -> CliResult {
    let replay = Replay::open(file)?;
    let engine = open_engine(&replay, device, None)?;
    let bar = progress_bar(0, json);
    bar.set_message("repetitions");
    let (report, outcome) = bench(&replay, engine.device(), quick, &options, |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })?;
    bar.finish_and_clear();
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "{} ({} operations per repetition; {} on {}, {} cores)",
        file.display(),
        outcome.operations,
        report.provider,
        report.cpu,
        report.cores
    );
    print!("{}", super::bench::results_table(&report));
    Ok(())
}

fn profile(file: &Path, output: &Path, device: Option<&str>, options: ReplayOptions) -> CliResult {
    let replay = Replay::open(file)?;
    let config = ProfileConfig::new(output).modes(ProfileModes::SOFTWARE);
    let engine = open_engine(&replay, device, Some(config))?;
    let outcome = replay.run(engine.device(), &options)?;
    let report = engine.device().end_profile()?;
    eprintln!(
        "aqueduct replay: profiled {} operations into {} ({} records, {} dropped)",
        outcome.operations,
        report.output.display(),
        report.records,
        report.dropped
    );
    if let Some(first) = outcome.mismatches.first() {
        return Err(format!("{} checksum(s) differ; the first: {first}", outcome.mismatches.len()).into());
    }
    Ok(())
}
