//! Batch inference: a trained model served through a command buffer recorded once.
//!
//! The model is the digits MLP (`cli/models/digits`: 64 → 64 ReLU → 10, trained on scikit-learn's
//! handwritten digits). Its forward pass (a tiled GEMM with bias and ReLU, a second GEMM, a
//! softmax and an argmax, HIP kernels in `cli/kernels/mlp.hip`) is recorded once as a command buffer
//! with binding slots for one batch's buffers. Each batch writes its inputs from the host,
//! executes the program with a binding table naming its buffers, and is read back once its
//! semaphore says it is done; every item's logits are checked against numpy's, and the accuracy
//! must be numpy's. The kernels have no CPU port: on the soft runtime they run from their
//! machine code.
//!
//! `cargo run --release --example batch_inference -- [--batch N] [--queues N] [--in-flight N]
//! [--passes N] [--precision f32] [--device SPEC]`

use aqueduct::prelude::*;
use aqueduct_cli::digits::{DigitsModel, ForwardPass, Precision, ServeConfig, serve};
use clap::Parser;

/// Serve the digits MLP's test split in batches, with batches in flight across queues, and check
/// every item against numpy's reference.
#[derive(Parser)]
struct Arguments {
    /// Items per batch.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=4096))]
    batch: u32,
    /// Queues the batches are spread over.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    queues: u32,
    /// Batches in flight per queue.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1024))]
    in_flight: u32,
    /// Passes over the 360-item test split.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    passes: u32,
    /// Arithmetic of the forward pass: f32; f16 (packed math, v_dot2_f32_f16); f16-wmma (the
    /// products by WMMA, RDNA3 only).
    #[arg(long, default_value = "f32")]
    precision: Precision,
    /// Device: auto, soft, amdgpu, amdgpu:N or amdgpu://UUID[,UUID...].
    #[arg(long, default_value = "auto")]
    device: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Arguments { batch, queues, in_flight, passes, precision, device } = Arguments::parse();
    let engine = Engine::new(&device)?;
    let device = engine.device();
    let model = DigitsModel::embedded();
    let queue_list = (0..queues).map(|_| device.create_queue()).collect::<Result<Vec<_>, _>>()?;
    let pass = ForwardPass::record(device, &queue_list[0], &model, batch, precision)?;
    let report = serve(device, &queue_list, &model, &pass, ServeConfig { in_flight, passes })?;
    let agent = device.agents().first().map(|agent| agent.isa.clone()).unwrap_or_default();
    println!(
        "batch_inference: digits MLP ({}) on {} ({agent}), {} items in batches of {batch} on {queues} queues x {in_flight} in flight",
        precision.name(),
        device.provider(),
        report.items,
    );
    let checked_against =
        if precision == Precision::F32 { "numpy's" } else { "the host's pass over the same f16 model" };
    println!(
        "  accuracy {:.4} ({} of {}), numpy's {:.4}; every item's logits within {} of {checked_against} (largest {:.2e})",
        report.accuracy,
        report.correct,
        report.items,
        report.reference_accuracy,
        precision.logit_tolerance(),
        report.max_logit_error,
    );
    println!(
        "  {:.0} items/s, host {:.2} us/item (writing inputs, submitting, reading back, checking); batch latency p50 {:.2} ms, p99 {:.2} ms",
        report.items_per_second(),
        report.host_us_per_item(),
        report.latency(0.5).as_secs_f64() * 1e3,
        report.latency(0.99).as_secs_f64() * 1e3,
    );
    if report.accuracy != report.reference_accuracy {
        return Err(format!("accuracy {} differs from numpy's {}", report.accuracy, report.reference_accuracy).into());
    }
    Ok(())
}
