//! A throughput study of a real model, instrumented for Tracy: the digits MLP
//! ([`aqueduct_cli::digits`], its forward pass a command buffer of four HIP kernels) served over its
//! test split at every point of batch size × queues × batches in flight, several repetitions
//! each, with a table of items per second (median and spread) and host time per item. Every
//! item of every repetition is checked against numpy's logits.
//!
//! Built with `--features tracy`, every stage of every submission is a Tracy span and each
//! repetition ends with a frame mark, so Tracy shows where the host time of each point goes;
//! `--wait-for-viewer SECONDS` holds the sweep until the profiler connects. Without a Tracy
//! viewer attached (or without the feature) it still runs and prints the table.
//!
//! `cargo run --release --features tracy --example tracy_throughput -- [--repeats N] [--passes N] [--wait-for-viewer S]`

use std::time::Duration;

use aqueduct::prelude::*;
use aqueduct_cli::bench::Spread;
use aqueduct_cli::digits::{DigitsModel, ForwardPass, Precision, ServeConfig, serve};
use clap::Parser;

const BATCHES: [u32; 3] = [8, 32, 128];
const QUEUES: [usize; 3] = [1, 2, 4];
const IN_FLIGHT: [u32; 3] = [1, 4, 16];

/// Sweep batch size × queues × in-flight depth over the digits MLP and print items per second.
#[derive(Parser)]
struct Arguments {
    /// Repetitions of each sweep point (a single run varies between runs).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    repeats: u32,
    /// Passes over the 360-item test split per repetition.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    passes: u32,
    /// Wait up to this many seconds for a Tracy profiler to connect before measuring (needs the
    /// `tracy` feature); the study fails if none connects in time.
    #[arg(long, value_name = "SECONDS")]
    wait_for_viewer: Option<u64>,
    /// Device: auto, soft, amdgpu, amdgpu:N or amdgpu://UUID[,UUID...].
    #[arg(long, default_value = "auto")]
    device: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arguments = Arguments::parse();
    start_tracy(arguments.wait_for_viewer)?;

    let engine = Engine::new(&arguments.device)?;
    let device = engine.device();
    let model = DigitsModel::embedded();
    // One set of queues for the whole sweep (a device hands out 64 queue indices in its life);
    // a point uses the first few.
    let queues = (0..QUEUES[QUEUES.len() - 1]).map(|_| device.create_queue()).collect::<Result<Vec<_>, _>>()?;

    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::NOTHING).set_header([
        "batch",
        "queues",
        "in flight",
        "items/s (median)",
        "p10",
        "p90",
        "host µs/item",
        "batch p99 ms",
    ]);
    table.column_iter_mut().for_each(|column| column.set_cell_alignment(comfy_table::CellAlignment::Right));
    println!(
        "digits MLP on {} ({}): {} repetitions of {} pass(es) over {} items per point, every item checked",
        device.provider(),
        device.agents().first().map(|agent| agent.isa.clone()).unwrap_or_default(),
        arguments.repeats,
        arguments.passes,
        model.items(),
    );
    for batch in BATCHES {
        let pass = ForwardPass::record(device, &queues[0], &model, batch, Precision::F32)?;
        for queue_count in QUEUES {
            for in_flight in IN_FLIGHT {
                let config = ServeConfig { in_flight, passes: arguments.passes };
                let mut rates = Vec::new();
                let (mut host_us, mut p99) = (Vec::new(), Duration::ZERO);
                for _ in 0..arguments.repeats {
                    let report = serve(device, &queues[..queue_count], &model, &pass, config)?;
                    device.frame_mark();
                    if report.accuracy != report.reference_accuracy {
                        return Err(format!(
                            "accuracy {} is not numpy's {}",
                            report.accuracy, report.reference_accuracy
                        )
                        .into());
                    }
                    rates.push(report.items_per_second());
                    host_us.push(report.host_us_per_item());
                    p99 = p99.max(report.latency(0.99));
                }
                let spread = Spread::of(&rates);
                table.add_row([
                    batch.to_string(),
                    queue_count.to_string(),
                    in_flight.to_string(),
                    format!("{:.0}", spread.median),
                    format!("{:.0}", spread.p10),
                    format!("{:.0}", spread.p90),
                    format!("{:.2}", Spread::of(&host_us).median),
                    format!("{:.2}", p99.as_secs_f64() * 1e3),
                ]);
            }
        }
    }
    println!("{table}");
    println!(
        "\nevery item matched numpy's logits and the accuracy numpy's; docs/BENCHMARKS.md has the engine's own rows"
    );
    Ok(())
}

/// Installs the Tracy layer (with the feature) and, if asked, waits for a profiler to connect.
#[cfg(feature = "tracy")]
fn start_tracy(wait_for_viewer: Option<u64>) -> Result<(), Box<dyn std::error::Error>> {
    aqueduct::profiling::install_tracy().map_err(|error| format!("tracing subscriber: {error}"))?;
    println!("tracy: the client is running; connect the Tracy profiler (it finds this process on port 8086)");
    println!("       to see a span per stage and submission, and one frame per repetition");
    let Some(seconds) = wait_for_viewer else { return Ok(()) };
    let deadline = std::time::Instant::now() + Duration::from_secs(seconds);
    println!("tracy: waiting up to {seconds} s for the profiler to connect");
    while !aqueduct::profiling::tracy_connected() {
        if std::time::Instant::now() >= deadline {
            return Err(format!("no Tracy profiler connected within {seconds} s").into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    println!("tracy: profiler connected");
    Ok(())
}

#[cfg(not(feature = "tracy"))]
fn start_tracy(wait_for_viewer: Option<u64>) -> Result<(), Box<dyn std::error::Error>> {
    if wait_for_viewer.is_some() {
        return Err("--wait-for-viewer needs the `tracy` feature: rerun with `--features tracy`".into());
    }
    println!(
        "tracy: built without the `tracy` feature; rerun with `--features tracy` and attach Tracy to see the spans"
    );
    Ok(())
}
