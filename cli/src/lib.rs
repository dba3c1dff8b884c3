//! aqueduct-cli: the `aqueduct` command-line tool and the workloads it runs.
//!
//! The root crate's `aqueduct` binary is [`main`]. The workloads are library modules, so tests,
//! examples and benches run the very code the tool runs:
//! - [`demo`]: the end-to-end workload (a cross-queue handoff chain, then the digits MLP);
//! - [`digits`] and [`nbody`]: the trained model and the game simulation;
//! - [`mod@bench`]: the queue benchmark shapes against the physical-limit baseline;
//! - [`stress`]: random work from several threads, every result verified;
//! - [`replay`]: running and timing a replay capture;
//! - [`info`]: the provider, agents and pools, as `rocminfo` prints them.
//!
//! The subcommands' argument parsing and printing are private (`commands`).

#![deny(missing_docs)]

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// The code objects `kernels/regen.sh` builds from one CLI workload's source
/// (`cli/kernels/NAME_TARGET.hsaco`), in the order the script lists its targets: RDNA3
/// (gfx11-generic), RDNA2 (gfx10-3-generic), RDNA4 (gfx12-generic), CDNA2 (gfx90a) and CDNA3
/// (gfx942). [`aqueduct_engine::Device::select_code_object`] picks the one the device's agents run,
/// as HIP picks a fat binary's entry. The target list lives here and in the script only.
macro_rules! workload_code_objects {
    ($name:literal) => {
        [
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/", $name, "_gfx11-generic.hsaco")),
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/", $name, "_gfx10-3-generic.hsaco")),
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/", $name, "_gfx12-generic.hsaco")),
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/", $name, "_gfx90a.hsaco")),
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels/", $name, "_gfx942.hsaco")),
        ]
    };
}

/// How many code objects each CLI workload has: one per target `kernels/regen.sh` builds
/// (gfx11-generic, gfx10-3-generic, gfx12-generic, gfx90a, gfx942, in that order).
pub const WORKLOAD_TARGETS: usize = 5;

pub mod bench;
mod commands;
pub mod demo;
pub mod digits;
pub mod info;
pub mod nbody;
pub mod replay;
pub mod stress;

#[derive(Parser)]
#[command(name = "aqueduct", version, about = "Submit work to AMD GPUs through HSA AQL queues")]
struct Arguments {
    /// Say more: the HSA status behind a provider that is not usable.
    #[arg(short, long, global = true)]
    verbose: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show the chosen HSA provider and why, its agents, pools and queue limits (like rocminfo).
    Info {
        /// Which HSA provider to open.
        #[arg(long, value_enum, default_value_t = commands::info::Provider::Auto)]
        provider: commands::info::Provider,
        /// Print the stable JSON report (schema 1) instead of rocminfo's text.
        #[arg(long)]
        json: bool,
    },
    /// Print a code object's target, code-object version and kernels.
    Inspect {
        /// An HSACO, a clang offload bundle, or a host object with a `.hip_fatbin` section.
        file: std::path::PathBuf,
        /// Print the stable JSON report instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run the end-to-end workload through the engine and verify its results.
    Demo {
        /// Cross-queue handoffs in the dependency chain.
        #[arg(long, default_value_t = 512)]
        handoffs: u32,
        /// Queues to rotate over (at least 2).
        #[arg(long, default_value_t = 4)]
        queues: u32,
        /// Device: auto, soft, amdgpu, amdgpu:N or amdgpu://UUID[,UUID...].
        #[arg(long, default_value = "auto")]
        device: String,
        /// Print the result as JSON (schema 1) instead of text.
        #[arg(long)]
        json: bool,
        /// Run the handoff chain only, without serving the digits MLP (whose kernels have no
        /// host build, so `AQUEDUCT_SOFT_EXEC=host` needs this).
        #[arg(long)]
        no_model: bool,
    },
    /// Measure the queue benchmark shapes against the physical-limit baseline.
    Bench {
        /// Only shapes whose name contains this.
        #[arg(long)]
        filter: Option<String>,
        /// One repetition per shape: checks every shape works (results are still verified).
        #[arg(long)]
        quick: bool,
        /// Print the stable JSON report (or, with --compare, the comparison) on stdout.
        #[arg(long)]
        json: bool,
        /// Device: auto, soft, amdgpu, amdgpu:N or amdgpu://UUID[,UUID...].
        #[arg(long, default_value = "auto")]
        device: String,
        /// Compare two JSON reports (OLD NEW) instead of running: a Mann-Whitney U test of each
        /// row's repetitions; only a significant change is flagged. One run per side cannot see
        /// drift between runs: on a shared machine, compare several with --old and --new.
        #[arg(long, num_args = 2, value_names = ["OLD", "NEW"], group = "comparison")]
        compare: Option<Vec<std::path::PathBuf>>,
        /// Reports of the old code, one per run (repeat the flag or list them), compared with
        /// --new's: each row is tested on the runs' medians, so run-to-run drift counts as noise.
        #[arg(long, num_args = 1.., value_name = "OLD", requires = "new", group = "comparison")]
        old: Vec<std::path::PathBuf>,
        /// Reports of the new code, one per run, compared with --old's.
        #[arg(long, num_args = 1.., value_name = "NEW", requires = "old")]
        new: Vec<std::path::PathBuf>,
        /// When comparing: the chance of flagging any row when nothing changed (split over the
        /// rows compared).
        #[arg(long, value_name = "P", default_value_t = 0.05, requires = "comparison")]
        significance: f64,
        /// When comparing: changes of the median below this many percent are never flagged.
        #[arg(long, value_name = "PERCENT", default_value_t = 2.0, requires = "comparison")]
        noise_threshold: f64,
    },
    /// Submit random work with cross-queue waits, host gates and injected failures from several
    /// threads, then verify every result and semaphore. Exits non-zero if anything was lost.
    Stress(commands::stress::Arguments),
    /// Record a profile of a program (.aqprof), and read one: summarize it, list its dispatches,
    /// export its timeline.
    Profile {
        #[command(subcommand)]
        command: commands::profile::ProfileCommand,
    },
    /// Read, run, benchmark or profile a replay capture (.aqreplay; record one by running any
    /// program with AQUEDUCT_REPLAY_OUTPUT=FILE).
    Replay {
        #[command(subcommand)]
        command: commands::replay::ReplayCommand,
    },
}

/// Runs the command line in `std::env::args()` and returns the process's exit code.
pub fn main() -> ExitCode {
    // A closed stdout ends the process quietly, as it ends `cat` and `grep` (`aqueduct replay
    // info f | head -1`): Rust ignores SIGPIPE, so `println!` would panic on the EPIPE instead.
    // SAFETY: restoring a signal's default disposition at the start of `main`, before any thread
    // exists, races nothing; SIG_DFL is a valid handler for SIGPIPE.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    // `--version` names the providers this machine can use; probing ROCr costs an `hsa_init`, so
    // only then.
    let asks_version = std::env::args().skip(1).any(|argument| argument == "--version" || argument == "-V");
    let mut command = Arguments::command();
    if asks_version {
        let version = format!("{}\n{}", env!("CARGO_PKG_VERSION"), crate::info::providers_summary());
        // clap keeps a `&'static str` (without its `string` feature); printed once, then exit.
        command = command.version(&*Box::leak(version.into_boxed_str()));
    }
    let arguments = match command.try_get_matches().and_then(|matches| Arguments::from_arg_matches(&matches)) {
        Ok(arguments) => arguments,
        Err(error) => error.exit(),
    };
    if arguments.verbose {
        eprintln!("aqueduct: {}", crate::info::rocr_status());
    }
    let result = match arguments.command {
        Command::Info { provider, json } => commands::info::run(provider, json),
        Command::Inspect { file, json } => commands::inspect::run(&file, json),
        Command::Demo { handoffs, queues, device, json, no_model } => {
            commands::demo::run(&device, crate::demo::DemoOptions { handoffs, queues, model: !no_model }, json)
        }
        Command::Bench { filter, quick, json, device, compare, old, new, significance, noise_threshold } => {
            let options = crate::bench::CompareOptions { significance, noise_threshold: noise_threshold / 100.0 };
            match compare {
                Some(paths) => commands::bench::compare(&paths[..1], &paths[1..], options, json),
                None if !old.is_empty() => commands::bench::compare(&old, &new, options, json),
                None => commands::bench::run(crate::bench::BenchOptions { filter, quick, device }, json),
            }
        }
        Command::Profile { command } => commands::profile::run(command),
        Command::Replay { command } => commands::replay::run(command),
        Command::Stress(arguments) => commands::stress::run(arguments),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("aqueduct: {error}");
            ExitCode::FAILURE
        }
    }
}
