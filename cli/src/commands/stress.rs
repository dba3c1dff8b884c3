//! `aqueduct stress`: a line per round while it runs, then what each strategy held (or the JSON
//! report); the exit status says whether anything was lost.

use std::time::Duration;

use crate::stress::{StressOptions, StressReport};
use aqueduct_engine::WaitStrategy;

use super::CliResult;
use super::output::{progress_bar, table};

/// Which wait strategies the stress runs.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum StrategyChoice {
    /// Cross-queue waits as BARRIER_VALUE packets.
    BarrierValue,
    /// Cross-queue waits as BARRIER_AND packets.
    BarrierAnd,
    /// One after the other.
    Both,
}

#[derive(clap::Args)]
pub struct Arguments {
    /// Submitting threads.
    #[arg(long, default_value_t = 4)]
    threads: usize,
    /// Queues (chains are the larger of threads and queues; chain l uses queue l % queues).
    #[arg(long, default_value_t = 4)]
    queues: usize,
    /// Submissions per round (default 100000); with --soak, the most a round draws (default 4000).
    #[arg(long)]
    submissions: Option<u64>,
    /// Seed of the random choices (round r uses seed + r).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Repeat rounds until this many minutes have passed in all, the strategies taking turns
    /// (default: one round per strategy; with --soak, 20 rounds).
    #[arg(long)]
    minutes: Option<f64>,
    /// Soak: every round draws its own threads and queues (1 to 8), window (0 to 8), failure
    /// rate and size from the seed; a device keeps some queues between rounds, drops the others
    /// and makes new ones.
    #[arg(long)]
    soak: bool,
    /// The wait strategies to run.
    #[arg(long, value_enum, default_value_t = StrategyChoice::Both)]
    strategy: StrategyChoice,
    /// One submission in this many waits on an injected failure (0: none).
    #[arg(long, default_value_t = 500)]
    failure_every: u64,
    /// Steps a chain may run ahead of its completed work: 0 is unbounded (most work then parks
    /// behind parked producers).
    #[arg(long, default_value_t = 16)]
    window: u64,
    /// Device: auto, soft, amdgpu, amdgpu:N or amdgpu://UUID[,UUID...].
    #[arg(long, default_value = "auto")]
    device: String,
    /// Print the JSON report on stdout (and no progress bar).
    #[arg(long)]
    json: bool,
}

pub fn run(arguments: Arguments) -> CliResult {
    let strategies = match arguments.strategy {
        StrategyChoice::BarrierValue => vec![WaitStrategy::BarrierValue],
        StrategyChoice::BarrierAnd => vec![WaitStrategy::BarrierAnd],
        StrategyChoice::Both => vec![WaitStrategy::BarrierValue, WaitStrategy::BarrierAnd],
    };
    let duration = match arguments.minutes {
        Some(minutes) if !(minutes.is_finite() && minutes > 0.0) => {
            return Err(format!("--minutes {minutes}: expected a positive number").into());
        }
        minutes => minutes.map(|minutes| Duration::from_secs_f64(minutes * 60.0)),
    };
    let options = StressOptions {
        threads: arguments.threads,
        queues: arguments.queues,
        submissions: arguments.submissions.unwrap_or(if arguments.soak { 4000 } else { 100_000 }),
        seed: arguments.seed,
        duration,
        strategies,
        failure_every: arguments.failure_every,
        window: arguments.window,
        device: arguments.device,
        soak: arguments.soak,
    };
    // The bar counts rounds, or with --minutes seconds; its estimate is the rest at this pace.
    let rounds =
        if options.soak { crate::stress::SOAK_ROUNDS_WITHOUT_DURATION } else { options.strategies.len() as u64 };
    let bar = match options.duration {
        Some(duration) => progress_bar(duration.as_secs(), arguments.json),
        None => progress_bar(rounds, arguments.json),
    };
    bar.enable_steady_tick(Duration::from_millis(250));
    let started = std::time::Instant::now();
    let report = crate::stress::run(&options, |strategy, round, submissions| {
        match options.duration {
            Some(duration) => bar.set_position(started.elapsed().min(duration).as_secs()),
            None => bar.inc(1),
        }
        let line = format!("{strategy}: round {round} done, {submissions} submissions");
        // Without a terminal (a CI log) the rounds are still worth a line each.
        if bar.is_hidden() && !arguments.json {
            eprintln!("{line}");
        }
        bar.set_message(line);
    })?;
    bar.finish_and_clear();
    if arguments.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print(&report);
    }
    match report.lost() {
        0 => Ok(()),
        lost => Err(format!("{lost} results, semaphores, failures or objects were lost").into()),
    }
}

fn print(report: &StressReport) {
    if report.soak {
        println!("aqueduct stress: provider {}, soak, seed {}", report.provider, report.seed);
    } else {
        println!(
            "aqueduct stress: provider {}, {} threads, {} queues, {} chains, seed {}",
            report.provider, report.threads, report.queues, report.chains, report.seed
        );
    }
    let mut totals = table(&["strategy", "rounds", "submissions", "time (s)", "submissions/s", "parked", "lost"], 1);
    for strategy in &report.strategies {
        totals.add_row([
            strategy.strategy.clone(),
            strategy.rounds.to_string(),
            strategy.submissions.to_string(),
            format!("{:.1}", strategy.seconds),
            format!("{:.0}", strategy.submissions_per_second),
            strategy.parked.to_string(),
            strategy.lost.to_string(),
        ]);
    }
    println!("{totals}");
    for strategy in &report.strategies {
        let ops = &strategy.operations;
        println!("{}:", strategy.strategy);
        println!(
            "  dispatches {} cross-queue, {} chained, {} stores; {} fills, {} updates, {} copies, {} command buffers, {} barriers",
            ops.cross_dispatch,
            ops.chained_dispatch,
            ops.store_dispatch,
            ops.fill,
            ops.update,
            ops.copy,
            ops.command_buffer,
            ops.barrier
        );
        println!(
            "  {} waits, {} host-gated; {} device barriers; {} parked (at most {} at once on a queue)",
            strategy.waits, strategy.host_gated, strategy.device_waits, strategy.parked, strategy.max_parked
        );
        println!(
            "  failures injected: {} host, {} kernel faults; surfaced with their record: {}",
            strategy.host_failures_injected, strategy.kernel_faults_injected, strategy.failures_surfaced
        );
        println!(
            "  doomed work already on the device behind a faulting queue, which ran and still failed: {}",
            strategy.doomed_ran
        );
        println!("  lost: {}", strategy.lost);
        for example in &strategy.lost_examples {
            println!("    {example}");
        }
    }
}
