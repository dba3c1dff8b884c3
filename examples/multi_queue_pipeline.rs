//! The smallest picture of the engine: a producer queue and a consumer queue, handing buffers
//! over through timeline semaphores, with no host round trip between them.
//!
//! The producer fills slot `i % SLOTS` with the value `i + 0.5`; once it signalled, the consumer
//! scales the slot in place (`saxpy`: y = 2 * x + y with x = y, so y = 3 * y) and copies it to
//! the results. A slot is reused only after the consumer's previous use of it, again on the
//! device.
//!
//! `cargo run --release --example multi_queue_pipeline -- [--items N] [--device SPEC]`

use std::time::Duration;

use aqueduct::prelude::*;
use aqueduct_cli::demo::load_demo_kernels;
use clap::Parser;

const SLOTS: usize = 3;
const COUNT: u32 = 1024;

/// A producer queue and a consumer queue handing buffers over through timeline semaphores.
#[derive(Parser)]
struct Arguments {
    /// Items to hand from the producer to the consumer.
    #[arg(long, default_value_t = 24, value_parser = clap::value_parser!(u32).range(1..=4096))]
    items: u32,
    /// Device: auto, soft, amdgpu, amdgpu:N or amdgpu://UUID[,UUID...].
    #[arg(long, default_value = "auto")]
    device: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Arguments { items: item_count, device } = Arguments::parse();
    let engine = Engine::new(&device)?;
    let device = engine.device();
    let executable = load_demo_kernels(device)?;
    let saxpy = executable.kernel("saxpy")?;
    let (producer, consumer) = (device.create_queue()?, device.create_queue()?);
    // `produced` reaches i + 1 when item i is in its slot; `consumed` when it was scaled.
    let (produced, consumed) = (device.create_semaphore(0)?, device.create_semaphore(0)?);
    let slots = (0..SLOTS)
        .map(|_| device.allocate_typed::<f32>(MemoryKind::DeviceLocal, u64::from(COUNT)))
        .collect::<Result<Vec<_>, _>>()?;
    let results = device.allocate_typed::<f32>(MemoryKind::HostVisible, u64::from(COUNT * item_count))?;
    for item in 0..item_count {
        let slot = &slots[item as usize % SLOTS];
        let value = u64::from(item) + 1;
        // The slot is free once the consumer is done with the item that used it before.
        let free = consumed.at(value.saturating_sub(SLOTS as u64));
        let input = item as f32 + 0.5;
        producer.fill(slot.whole(), &input.to_le_bytes()).wait(free).signal(produced.at(value)).submit()?;
        consumer
            .launch(&saxpy)
            .grid([COUNT, 1, 1])
            .arg(slot)
            .arg(slot)
            .arg(2.0f32)
            .arg(COUNT)
            .wait(produced.at(value))
            .submit()?;
        // Keep what the consumer made, then hand the slot back.
        consumer
            .copy(slot.whole(), results.range(u64::from(item * COUNT), u64::from(COUNT)))
            .signal(consumed.at(value))
            .submit()?;
    }
    consumed.wait(u64::from(item_count), Duration::from_secs(30))?;
    let results = results.to_vec()?;
    for (index, got) in results.iter().enumerate() {
        let input = (index as u32 / COUNT) as f32 + 0.5;
        let expected = 2.0 * input + input;
        if *got != expected {
            return Err(format!("element {index}: {got}, expected {expected}").into());
        }
    }
    println!(
        "multi_queue_pipeline: {item_count} items through {SLOTS} slots, producer -> consumer: all {} elements checked",
        results.len()
    );
    Ok(())
}
