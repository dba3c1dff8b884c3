//! Batch inference: record a multi-dispatch program once, with binding slots, then replay it over
//! a stream of inputs, keeping several batches in flight on several queues, and check every
//! output.
//!
//! The "model" is three dispatches over slot 0 (the input) and slot 1 (the output):
//! `out = 0`, then `out = 2 * in + out`, then `out = 3 * in + out`, so `out = 5 * in`. Each item
//! writes its input from the host, executes the recorded program with a binding table naming
//! that item's buffers, and is read back once its semaphore says it is done.
//!
//! `cargo run --release --example batch_inference -- [ITEMS] [QUEUES] [IN_FLIGHT] [--device SPEC]`

use std::time::{Duration, Instant};

use aqueduct::demo::load_demo_kernels;
use aqueduct::{BindingTable, BufferRef, CommandBufferUsage, Dispatch, Engine, MemoryKind, Semaphore, thread_cpu_time};
use clap::Parser;

const ELEMENTS: u32 = 4096;

/// Replay a recorded three-dispatch program over a stream of inputs and check every output.
#[derive(Parser)]
struct Arguments {
    /// Items (inputs) to run through the program.
    #[arg(default_value_t = 2000, value_parser = clap::value_parser!(u32).range(1..))]
    items: u32,
    /// Queues the items are spread over.
    #[arg(default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    queues: u32,
    /// Items in flight per queue.
    #[arg(default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1024))]
    in_flight: u32,
    /// Device: auto, soft, amdgpu, amdgpu:N or amdgpu://UUID[,UUID...].
    #[arg(long, default_value = "auto")]
    device: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Arguments { items, queues: queue_count, in_flight, device } = Arguments::parse();
    let engine = Engine::new(&device)?;
    let device = engine.device();
    let executable = load_demo_kernels(device)?;
    let saxpy = executable.kernel("saxpy")?;

    // Record once: slots 0 and 1 are bound per execution.
    let bytes = u64::from(ELEMENTS) * 4;
    let (input, output) = (BufferRef::slot(0, 0, bytes), BufferRef::slot(1, 0, bytes));
    let mut program = device.create_command_buffer(CommandBufferUsage::Reusable)?;
    program.fill(output, &0f32.to_le_bytes())?;
    for scale in [2.0f32, 3.0] {
        // Each step reads what the one before wrote: without a barrier the two may overlap.
        program.barrier()?;
        let bindings = [output, input];
        let constants = [scale.to_bits(), ELEMENTS];
        program.dispatch(&saxpy, &Dispatch::grid([ELEMENTS, 1, 1]).bindings(&bindings).constants(&constants))?;
    }
    program.finish()?;

    // Per queue, `in_flight` slots, each with its own input, output and timeline.
    struct Slot {
        input: aqueduct::Buffer<f32>,
        output: aqueduct::Buffer<f32>,
        done: Semaphore,
        uses: u64,
        item: Option<u32>,
    }
    let queues = (0..queue_count).map(|_| device.create_queue()).collect::<Result<Vec<_>, _>>()?;
    let mut slots = Vec::new();
    for _ in 0..queue_count * in_flight {
        slots.push(Slot {
            input: device.allocate_typed(MemoryKind::HostVisible, u64::from(ELEMENTS))?,
            output: device.allocate_typed(MemoryKind::HostVisible, u64::from(ELEMENTS))?,
            done: device.create_semaphore(0)?,
            uses: 0,
            item: None,
        });
    }
    let input_for =
        |item: u32| -> Vec<f32> { (0..ELEMENTS).map(|index| (item % 97) as f32 + index as f32 / 8.0).collect() };
    let check = |slot: &Slot, item: u32| -> Result<(), String> {
        let got = slot.output.to_vec().map_err(|error| error.to_string())?;
        for (index, (got, input)) in got.iter().zip(input_for(item)).enumerate() {
            let expected = 3.0 * input + (2.0 * input + 0.0);
            if *got != expected {
                return Err(format!("item {item}, element {index}: {got}, expected {expected}"));
            }
        }
        Ok(())
    };

    let (started, cpu_started) = (Instant::now(), thread_cpu_time());
    let mut verified = 0u32;
    for item in 0..items {
        let index = (item % (queue_count * in_flight)) as usize;
        let queue = &queues[index % queue_count as usize];
        let slot = &mut slots[index];
        // The slot's previous item must be done (and checked) before its buffers are reused.
        if let Some(previous) = slot.item.take() {
            slot.done.wait(slot.uses, Duration::from_secs(30))?;
            check(slot, previous)?;
            verified += 1;
        }
        slot.input.write(0, &input_for(item))?;
        slot.uses += 1;
        let table = BindingTable::from_bindings(&[slot.input.whole(), slot.output.whole()])?;
        queue.execute(&program, &table).signal(slot.done.at(slot.uses)).submit()?;
        slot.item = Some(item);
    }
    for slot in &mut slots {
        if let Some(previous) = slot.item.take() {
            slot.done.wait(slot.uses, Duration::from_secs(30))?;
            check(slot, previous)?;
            verified += 1;
        }
    }
    let (elapsed, cpu) = (started.elapsed(), thread_cpu_time() - cpu_started);
    assert_eq!(verified, items, "every item was checked");
    println!(
        "batch_inference: {items} items ({ELEMENTS} floats, 3 dispatches each) on {queue_count} queues x {in_flight} in flight: \
         {:.0} items/s, host {:.2} us/item (including writing inputs and checking outputs); every output verified",
        f64::from(items) / elapsed.as_secs_f64(),
        cpu.as_secs_f64() * 1e6 / f64::from(items),
    );
    Ok(())
}
