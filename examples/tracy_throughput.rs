//! A throughput study, instrumented for Tracy: sweep the number of queues and the submissions
//! kept in flight per queue, measure dispatches per second, and print a table.
//!
//! Built with `--features tracy`, every stage of every submission is a Tracy span and each sweep
//! point ends with a frame mark, so Tracy shows where the host time of each point goes. Without a
//! Tracy viewer attached (or without the feature) it still runs and prints the table.
//!
//! `cargo run --release --features tracy --example tracy_throughput`

use std::time::{Duration, Instant};

use aqueduct::demo::{DEMO_CODE_OBJECT, demo_host_kernels};
use aqueduct::{Engine, MemoryKind, Semaphore};

const DISPATCHES: u64 = 4096;
const ELEMENTS: u32 = 256;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    #[cfg(feature = "tracy")]
    {
        aqueduct::profiling::install_tracy().map_err(|error| format!("tracing subscriber: {error}"))?;
        println!("tracy: the client is running; connect the Tracy profiler (it finds this process on port 8086)");
        println!("       to see a span per stage and submission, and one frame per sweep point");
    }
    #[cfg(not(feature = "tracy"))]
    println!(
        "tracy: built without the `tracy` feature; rerun with `--features tracy` and attach Tracy to see the spans"
    );

    let engine = Engine::new("auto")?;
    let device = engine.device();
    device.register_host_kernels(DEMO_CODE_OBJECT, demo_host_kernels())?;
    let executable = device.load_executable(DEMO_CODE_OBJECT)?;
    let saxpy = executable.kernel("saxpy")?;
    let (x, y) = (
        device.buffer_from(MemoryKind::HostVisible, &[1.0f32; ELEMENTS as usize])?,
        device.allocate_typed::<f32>(MemoryKind::HostVisible, u64::from(ELEMENTS))?,
    );

    println!("\n{:>6} {:>9} {:>14} {:>12}", "queues", "in flight", "dispatches/s", "us/dispatch");
    for queue_count in [1usize, 2, 4] {
        for depth in [1u64, 4, 16] {
            let queues = (0..queue_count).map(|_| device.create_queue()).collect::<Result<Vec<_>, _>>()?;
            let done: Vec<Semaphore> =
                (0..queue_count).map(|_| device.create_semaphore(0)).collect::<Result<_, _>>()?;
            y.write(0, &[0.0; ELEMENTS as usize])?;
            let started = Instant::now();
            for dispatch in 0..DISPATCHES {
                let lane = dispatch as usize % queue_count;
                let value = dispatch / queue_count as u64 + 1;
                // Keep at most `depth` dispatches in flight on each queue.
                if value > depth {
                    done[lane].wait(value - depth, Duration::from_secs(30))?;
                }
                // Each queue adds into its own part of y, so no two queues race.
                let part = u64::from(ELEMENTS) / queue_count as u64;
                let count = part as u32;
                queues[lane]
                    .launch(&saxpy)
                    .grid([count, 1, 1])
                    .arg(y.range(lane as u64 * part, part))
                    .arg(x.range(0, part))
                    .arg(1.0f32)
                    .arg(count)
                    .signal(done[lane].at(value))
                    .submit()?;
            }
            for (lane, semaphore) in done.iter().enumerate() {
                let last = (DISPATCHES - 1 - lane as u64) / queue_count as u64 + 1;
                semaphore.wait(last, Duration::from_secs(30))?;
            }
            let elapsed = started.elapsed();
            device.frame_mark();
            // Each element of y got 1.0 added once per dispatch on its queue.
            let per_queue = DISPATCHES / queue_count as u64;
            let part = ELEMENTS as usize / queue_count;
            for (index, value) in y.to_vec()?.iter().enumerate().take(part * queue_count) {
                if *value != per_queue as f32 {
                    return Err(format!(
                        "queues {queue_count}, depth {depth}: y[{index}] = {value}, expected {per_queue}"
                    )
                    .into());
                }
            }
            println!(
                "{queue_count:>6} {depth:>9} {:>14.0} {:>12.2}",
                DISPATCHES as f64 / elapsed.as_secs_f64(),
                elapsed.as_secs_f64() * 1e6 / DISPATCHES as f64
            );
        }
    }
    println!("\nevery point checked its sums; see docs/BENCHMARKS.md for the engine's own benchmark rows");
    Ok(())
}
