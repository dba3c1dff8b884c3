//! A throughput study, instrumented for Tracy: sweep the number of queues and the submissions
//! kept in flight per queue, measure dispatches per second over several repetitions of each
//! point, and print a table of their median and spread.
//!
//! Built with `--features tracy`, every stage of every submission is a Tracy span and each
//! repetition ends with a frame mark, so Tracy shows where the host time of each point goes;
//! `--wait-for-viewer SECONDS` holds the sweep until the profiler connects. Without a Tracy
//! viewer attached (or without the feature) it still runs and prints the table.
//!
//! `cargo run --release --features tracy --example tracy_throughput -- [--repeats N] [--wait-for-viewer S]`

use std::time::{Duration, Instant};

use aqueduct::bench::Spread;
use aqueduct::demo::load_demo_kernels;
use aqueduct::{Buffer, Device, Engine, Kernel, MemoryKind, Queue, Semaphore};
use clap::Parser;

const ELEMENTS: u32 = 256;

/// Sweep queues × in-flight depth and print dispatches per second (median and spread).
#[derive(Parser)]
struct Arguments {
    /// Repetitions of each sweep point (a single run varies severalfold between runs).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    repeats: u32,
    /// Dispatches per repetition.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(4..))]
    dispatches: u64,
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
    let executable = load_demo_kernels(device)?;
    let saxpy = executable.kernel("saxpy")?;
    let x = device.buffer_from(MemoryKind::HostVisible, &[1.0f32; ELEMENTS as usize])?;
    let y = device.allocate_typed::<f32>(MemoryKind::HostVisible, u64::from(ELEMENTS))?;

    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::NOTHING).set_header([
        "queues",
        "in flight",
        "dispatches/s (median)",
        "p10",
        "p90",
        "µs/dispatch (median)",
    ]);
    table.column_iter_mut().for_each(|column| column.set_cell_alignment(comfy_table::CellAlignment::Right));
    println!("{} repetitions of {} dispatches per point", arguments.repeats, arguments.dispatches);
    for queue_count in [1usize, 2, 4] {
        for depth in [1u64, 4, 16] {
            // Queues live for the point (a device hands out 64 queue indices in its life).
            let queues = (0..queue_count).map(|_| device.create_queue()).collect::<Result<Vec<_>, _>>()?;
            let point = Point { device, saxpy: &saxpy, x: &x, y: &y, queues: &queues, depth };
            let rates = (0..arguments.repeats)
                .map(|_| point.run(arguments.dispatches))
                .collect::<Result<Vec<f64>, Box<dyn std::error::Error>>>()?;
            let spread = Spread::of(&rates);
            table.add_row([
                queue_count.to_string(),
                depth.to_string(),
                format!("{:.0}", spread.median),
                format!("{:.0}", spread.p10),
                format!("{:.0}", spread.p90),
                format!("{:.2}", 1e6 / spread.median),
            ]);
        }
    }
    println!("{table}");
    println!("\nevery repetition checked its sums; see docs/BENCHMARKS.md for the engine's own benchmark rows");
    Ok(())
}

/// One sweep point: its queues and the depth each keeps in flight.
struct Point<'a> {
    device: &'a Device,
    saxpy: &'a Kernel,
    x: &'a Buffer<f32>,
    y: &'a Buffer<f32>,
    queues: &'a [Queue],
    depth: u64,
}

impl Point<'_> {
    /// Runs `dispatches` saxpys over the queues, checks y, and returns dispatches per second.
    fn run(&self, dispatches: u64) -> Result<f64, Box<dyn std::error::Error>> {
        let (queue_count, depth) = (self.queues.len(), self.depth);
        let done: Vec<Semaphore> =
            (0..queue_count).map(|_| self.device.create_semaphore(0)).collect::<Result<_, _>>()?;
        self.y.write(0, &[0.0; ELEMENTS as usize])?;
        // Each queue adds into its own part of y, so no two queues race.
        let part = u64::from(ELEMENTS) / queue_count as u64;
        let started = Instant::now();
        for dispatch in 0..dispatches {
            let lane = dispatch as usize % queue_count;
            let value = dispatch / queue_count as u64 + 1;
            // Keep at most `depth` dispatches in flight on each queue.
            if value > depth {
                done[lane].wait(value - depth, Duration::from_secs(30))?;
            }
            self.queues[lane]
                .launch(self.saxpy)
                .grid([part as u32, 1, 1])
                .arg(self.y.range(lane as u64 * part, part))
                .arg(self.x.range(0, part))
                .arg(1.0f32)
                .arg(part as u32)
                .signal(done[lane].at(value))
                .submit()?;
        }
        for (lane, semaphore) in done.iter().enumerate() {
            let last = (dispatches - 1 - lane as u64) / queue_count as u64 + 1;
            semaphore.wait(last, Duration::from_secs(30))?;
        }
        let elapsed = started.elapsed();
        self.device.frame_mark();
        // Each element of a queue's part got 1.0 added once per dispatch on that queue.
        for (index, value) in self.y.to_vec()?.iter().enumerate().take(part as usize * queue_count) {
            let lane = index / part as usize;
            let expected = ((dispatches - 1 - lane as u64) / queue_count as u64 + 1) as f32;
            if *value != expected {
                return Err(
                    format!("queues {queue_count}, depth {depth}: y[{index}] = {value}, expected {expected}").into()
                );
            }
        }
        Ok(dispatches as f64 / elapsed.as_secs_f64())
    }
}

/// Installs the Tracy layer (with the feature) and, if asked, waits for a profiler to connect.
#[cfg(feature = "tracy")]
fn start_tracy(wait_for_viewer: Option<u64>) -> Result<(), Box<dyn std::error::Error>> {
    aqueduct::profiling::install_tracy().map_err(|error| format!("tracing subscriber: {error}"))?;
    println!("tracy: the client is running; connect the Tracy profiler (it finds this process on port 8086)");
    println!("       to see a span per stage and submission, and one frame per repetition");
    let Some(seconds) = wait_for_viewer else { return Ok(()) };
    let deadline = Instant::now() + Duration::from_secs(seconds);
    println!("tracy: waiting up to {seconds} s for the profiler to connect");
    while !aqueduct::profiling::tracy_connected() {
        if Instant::now() >= deadline {
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
