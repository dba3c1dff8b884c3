//! A headless Bevy app (`MinimalPlugins`) stepping a particle simulation on the GPU every frame.
//!
//! Each frame, one system stages a reusable command buffer (`saxpy`: position += dt * velocity)
//! on the `sim` lane, behind the previous frame's work on the device, and asks for the positions
//! back. When a frame's positions arrive (a frame or more later, without blocking), the host
//! bounces every particle that left the box by flipping its velocity, which the next frame
//! uploads in queue order. A host mirror runs the same steps and flips at the same frames, and
//! every read-back must equal it exactly. Frame times are printed at the end.
//!
//! `cargo run --release --example bevy_frame_compute [FRAMES]`

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aqueduct::demo::{DEMO_CODE_OBJECT, demo_host_kernels};
use aqueduct::{
    Buffer, BufferRef, CommandBuffer, CommandBufferUsage, Dispatch, MemoryKind, QueueConfig, QueuePriority,
};
use aqueduct_bevy::{AqueductDevice, AqueductFrame, AqueductPlugin, AqueductUnavailable, Lane, QueueFailed, Readback};
use bevy_app::{App, AppExit, Update};
use bevy_ecs::prelude::*;
use bevy_internal::MinimalPlugins;

const PARTICLES: u32 = 8192;
const DT: f32 = 1.0 / 60.0;
const BOX: f32 = 100.0;

#[derive(Resource)]
struct Simulation {
    positions: Buffer<f32>,
    velocities: Buffer<f32>,
    step: Arc<CommandBuffer>,
    /// The host mirror: what the GPU must hold after each frame.
    mirror_positions: Vec<f32>,
    mirror_velocities: Vec<f32>,
    history: VecDeque<(u64, Vec<f32>)>,
    /// Velocities to upload before the next step (after a bounce).
    upload: Option<Vec<f32>>,
    frames: u64,
    checked: u64,
    bounces: u64,
    frame_times: Vec<Duration>,
    last_frame: Instant,
}

fn setup(world: &mut World) -> aqueduct::EngineResult<()> {
    let device = world.resource::<AqueductDevice>().device().clone();
    device.register_host_kernels(DEMO_CODE_OBJECT, demo_host_kernels())?;
    let executable = device.load_executable(DEMO_CODE_OBJECT)?;
    let saxpy = executable.kernel("saxpy")?;
    let positions: Vec<f32> = (0..PARTICLES).map(|index| 10.0 + (index % 80) as f32).collect();
    let velocities: Vec<f32> = (0..PARTICLES).map(|index| ((index * 37) % 41) as f32 - 20.0).collect();
    let position_buffer = device.buffer_from(MemoryKind::HostVisible, &positions)?;
    let velocity_buffer = device.buffer_from(MemoryKind::HostVisible, &velocities)?;
    // Recorded once, replayed every frame: y = a * x + y over (positions, velocities).
    let mut step = device.create_command_buffer(CommandBufferUsage::Reusable)?;
    let bindings = [BufferRef::from(position_buffer.whole()), BufferRef::from(velocity_buffer.whole())];
    let constants = [DT.to_bits(), PARTICLES];
    step.dispatch(&saxpy, &Dispatch::grid([PARTICLES, 1, 1]).bindings(&bindings).constants(&constants))?;
    step.finish()?;
    let frames = std::env::args().nth(1).and_then(|value| value.parse().ok()).unwrap_or(240);
    world.insert_resource(Simulation {
        positions: position_buffer,
        velocities: velocity_buffer,
        step: Arc::new(step),
        mirror_positions: positions,
        mirror_velocities: velocities,
        history: VecDeque::new(),
        upload: None,
        frames,
        checked: 0,
        bounces: 0,
        frame_times: Vec::new(),
        last_frame: Instant::now(),
    });
    Ok(())
}

/// Checks each arrived frame against the mirror and bounces the particles that left the box.
fn react(mut simulation: ResMut<Simulation>, mut readbacks: MessageReader<Readback>, mut exit: MessageWriter<AppExit>) {
    for readback in readbacks.read() {
        let Some(position) = simulation.history.iter().position(|(frame, _)| *frame == readback.frame) else {
            continue;
        };
        let (frame, expected) = simulation.history.remove(position).expect("found");
        let got: Vec<f32> = readback
            .bytes
            .chunks_exact(4)
            .map(|word| f32::from_le_bytes([word[0], word[1], word[2], word[3]]))
            .collect();
        if got != expected {
            let first = got.iter().zip(&expected).position(|(got, expected)| got != expected).unwrap_or(0);
            eprintln!("frame {frame}: particle {first} is at {}, the mirror says {}", got[first], expected[first]);
            exit.write(AppExit::error());
            return;
        }
        simulation.checked += 1;
        // The host logic: what the GPU computed decides the next frame's velocities.
        let mut velocities = simulation.upload.take().unwrap_or_else(|| simulation.mirror_velocities.clone());
        let mut bounced = 0;
        for (velocity, position) in velocities.iter_mut().zip(&got) {
            if (*position < 0.0 && *velocity < 0.0) || (*position > BOX && *velocity > 0.0) {
                *velocity = -*velocity;
                bounced += 1;
            }
        }
        if bounced > 0 {
            simulation.bounces += bounced;
            simulation.upload = Some(velocities);
        }
    }
}

/// Stages this frame's step (after any velocity upload) and asks for the positions back.
fn step(mut frame: ResMut<AqueductFrame>, mut simulation: ResMut<Simulation>, mut exit: MessageWriter<AppExit>) {
    let now = Instant::now();
    let elapsed = now - simulation.last_frame;
    simulation.last_frame = now;
    let number = frame.frame();
    if number > simulation.frames {
        if simulation.history.is_empty() {
            report(&simulation);
            exit.write(AppExit::Success);
        }
        return;
    }
    if number > 1 {
        simulation.frame_times.push(elapsed);
    }
    let simulation = &mut *simulation;
    let upload = simulation.upload.take();
    if let Some(velocities) = &upload {
        simulation.mirror_velocities.clone_from(velocities);
    }
    for (position, velocity) in simulation.mirror_positions.iter_mut().zip(&simulation.mirror_velocities) {
        *position += DT * velocity;
    }
    simulation.history.push_back((number, simulation.mirror_positions.clone()));
    let (velocities, program) = (simulation.velocities.clone(), simulation.step.clone());
    let table = aqueduct::BindingTable::default();
    frame.submit("sim", move |batch, context| {
        if let Some(upload) = upload {
            batch.update(velocities.bytes(), 0, bytemuck::cast_slice(&upload)).submit()?;
        }
        batch.execute(&program, &table).wait(context.previous()).submit()
    });
    frame.read_back("sim", simulation.positions.whole(), number);
}

fn failed(mut failures: MessageReader<QueueFailed>, mut exit: MessageWriter<AppExit>) {
    for failure in failures.read() {
        eprintln!("lane {} failed: {}", failure.lane, failure.record.message);
        exit.write(AppExit::error());
    }
}

fn report(simulation: &Simulation) {
    let times = &simulation.frame_times;
    let total: Duration = times.iter().sum();
    let (min, max) = (times.iter().min().copied().unwrap_or_default(), times.iter().max().copied().unwrap_or_default());
    println!(
        "bevy_frame_compute: {} frames of {PARTICLES} particles; frame time avg {:.3} ms, min {:.3} ms, max {:.3} ms",
        simulation.frames,
        total.as_secs_f64() * 1e3 / times.len().max(1) as f64,
        min.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3,
    );
    println!(
        "  {} read-backs equal to the host mirror; {} bounces fed back from read-backs into later frames",
        simulation.checked, simulation.bounces
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .add_plugins(AqueductPlugin::new("auto")?.lane("sim", QueueConfig::new().priority(QueuePriority::High)));
    if let Some(unavailable) = app.world().get_resource::<AqueductUnavailable>() {
        return Err(unavailable.0.clone().into());
    }
    setup(app.world_mut())?;
    app.add_systems(Update, (failed, react, step.in_set(Lane("sim"))).chain());
    match app.run() {
        AppExit::Success => Ok(()),
        AppExit::Error(code) => Err(format!("the app exited with {code}").into()),
    }
}
