//! A headless Bevy app (`MinimalPlugins`, an uncapped loop) stepping a particle simulation on the
//! GPU every frame.
//!
//! Each frame, one system stages a reusable command buffer (`saxpy`: position += dt * velocity)
//! on the `Sim` lane (a typed label, also the set its systems run in), behind the previous frame's
//! work on the device, and asks for the positions back as a `Readback<f32, Positions>`. When a
//! frame's positions arrive (without blocking), the host bounces every particle that left the box
//! by flipping its velocity, which the next frame uploads in queue order. A host mirror runs the
//! same steps and flips at the same frames, and every read-back must equal it exactly.
//!
//! The plugin keeps at most `--frames-in-flight` frames in flight, so the loop never runs ahead of
//! the device by more than that: the example checks that the frame timeline never trails the
//! app's frame by more, and that every read-back arrives within that many frames. Its compute
//! systems run only if `aqueduct_available`; with a device that cannot open (`--device amdgpu` on
//! a machine without a GPU) the app still runs, says why, and exits with an error. Frame times,
//! the lag and the read-back lateness are printed at the end.
//!
//! `cargo run --release --example bevy_frame_compute -- [FRAMES] [--frames-in-flight N] [--device SPEC]`

use std::collections::VecDeque;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aqueduct::demo::load_demo_kernels;
use aqueduct::{
    Buffer, BufferRef, CommandBuffer, CommandBufferUsage, DeviceSpec, Dispatch, MemoryKind, QueueConfig, QueuePriority,
};
use aqueduct_bevy::{
    AqueductDevice, AqueductFrame, AqueductPlugin, FrameStalled, Lane, QueueFailed, Readback, SubmitRefused,
    aqueduct_available,
};
use bevy_app::{App, AppExit, Update};
use bevy_ecs::prelude::*;
use bevy_internal::MinimalPlugins;
use clap::Parser;

const PARTICLES: u32 = 8192;
const DT: f32 = 1.0 / 60.0;
const BOX: f32 = 100.0;

/// A particle simulation stepped on the GPU in a Bevy app's own frame.
#[derive(Parser)]
struct Args {
    /// Frames to simulate.
    #[arg(default_value_t = 240, value_parser = clap::value_parser!(u64).range(1..))]
    frames: u64,
    /// The most frames in flight (at least 1).
    #[arg(long, default_value_t = aqueduct_bevy::DEFAULT_FRAMES_IN_FLIGHT)]
    frames_in_flight: NonZeroU32,
    /// The device: auto, soft, amdgpu, amdgpu:N or amdgpu://UUID[,UUID...].
    #[arg(long, default_value = "auto")]
    device: DeviceSpec,
}

/// The lane the simulation runs on.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Sim;
impl Lane for Sim {}

/// The tag of a read-back of the particles' positions.
struct Positions;

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
    /// The most frames the timeline trailed the frame being recorded, and the most frames a
    /// read-back arrived after the frame that asked for it.
    worst_lag: u64,
    latest_readback: u64,
    frame_times: Vec<Duration>,
    last_frame: Instant,
}

fn setup(world: &mut World, frames: u64) -> Result<(), Box<dyn std::error::Error>> {
    let device = world.resource::<AqueductDevice>().device()?.clone();
    let executable = load_demo_kernels(&device)?;
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
        worst_lag: 0,
        latest_readback: 0,
        frame_times: Vec::new(),
        last_frame: Instant::now(),
    });
    Ok(())
}

/// Checks each arrived frame against the mirror and bounces the particles that left the box.
fn react(
    frame: Res<AqueductFrame>,
    mut simulation: ResMut<Simulation>,
    mut readbacks: MessageReader<Readback<f32, Positions>>,
    mut exit: MessageWriter<AppExit>,
) {
    for readback in readbacks.read() {
        let late = frame.frame() - readback.frame;
        simulation.latest_readback = simulation.latest_readback.max(late);
        if late > u64::from(frame.frames_in_flight().get()) {
            eprintln!("frame {}'s positions arrived {late} frames late, beyond the limit", readback.frame);
            exit.write(AppExit::error());
            return;
        }
        let Some(position) = simulation.history.iter().position(|(frame, _)| *frame == readback.frame) else {
            continue;
        };
        let Some((frame, expected)) = simulation.history.remove(position) else { continue };
        let got = &readback.data;
        if *got != expected {
            let first = got.iter().zip(&expected).position(|(got, expected)| got != expected).unwrap_or(0);
            eprintln!("frame {frame}: particle {first} is at {}, the mirror says {}", got[first], expected[first]);
            exit.write(AppExit::error());
            return;
        }
        simulation.checked += 1;
        // The host logic: what the GPU computed decides the next frame's velocities.
        let mut velocities = simulation.upload.take().unwrap_or_else(|| simulation.mirror_velocities.clone());
        let mut bounced = 0;
        for (velocity, position) in velocities.iter_mut().zip(got) {
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
    let lag = number - frame.completed();
    simulation.worst_lag = simulation.worst_lag.max(lag);
    if lag > u64::from(frame.frames_in_flight().get()) {
        eprintln!("frame {number}: the timeline trails by {lag} frames, beyond the limit");
        exit.write(AppExit::error());
        return;
    }
    if number > simulation.frames {
        if simulation.history.is_empty() {
            report(&simulation, frame.frames_in_flight());
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
    let staged = frame.submit(Sim, move |batch, context| {
        if let Some(upload) = upload {
            batch.update(velocities.bytes(), 0, bytemuck::cast_slice(&upload)).submit()?;
        }
        batch.execute(&program, &table).wait(context.previous()).submit()
    });
    if let Err(error) = staged.and_then(|()| frame.read_back(Sim, &simulation.positions, .., Positions)) {
        eprintln!("frame {number}: {error}");
        exit.write(AppExit::error());
    }
}

/// Any failure the plugin reports ends the run with an error.
fn failed(
    mut failures: MessageReader<QueueFailed>,
    mut refused: MessageReader<SubmitRefused>,
    mut stalled: MessageReader<FrameStalled>,
    mut exit: MessageWriter<AppExit>,
) {
    let failures = failures.read().map(|failure| format!("lane {} failed: {}", failure.lane, failure.record.message));
    let refused = refused.read().map(|refused| format!("lane {} refused: {}", refused.lane, refused.error));
    let stalled = stalled.read().map(|stalled| format!("frame {} stalled: {}", stalled.frame, stalled.error));
    for message in failures.chain(refused).chain(stalled) {
        eprintln!("{message}");
        exit.write(AppExit::error());
    }
}

/// Without a device the app runs on; this example has nothing to check then, so it says why
/// and stops.
fn without_compute(device: Res<AqueductDevice>, mut exit: MessageWriter<AppExit>) {
    if let Err(error) = device.device() {
        eprintln!("bevy_frame_compute: the app runs, without compute: {error}");
    }
    exit.write(AppExit::error());
}

fn report(simulation: &Simulation, frames_in_flight: NonZeroU32) {
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
    println!(
        "  frames-in-flight limit {frames_in_flight}: the timeline trailed the frame being recorded by at most {}, \
         read-backs arrived at most {} frames after theirs",
        simulation.worst_lag, simulation.latest_readback
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let mut plugin = AqueductPlugin::default()
        .lane(Sim, QueueConfig::new().priority(QueuePriority::High))
        .frames_in_flight(args.frames_in_flight)
        .readback::<f32, Positions>();
    plugin.config.device = args.device;
    let mut app = App::new();
    app.add_plugins(MinimalPlugins).add_plugins(plugin);
    if app.world().resource::<AqueductDevice>().is_available() {
        setup(app.world_mut(), args.frames)?;
    }
    app.add_systems(
        Update,
        (
            (failed, react, step.in_set(Sim)).chain().run_if(aqueduct_available),
            without_compute.run_if(not(aqueduct_available)),
        ),
    );
    match app.run() {
        AppExit::Success => Ok(()),
        AppExit::Error(code) => Err(format!("the app exited with {code}").into()),
    }
}
