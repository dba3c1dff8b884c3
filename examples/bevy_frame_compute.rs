//! A headless Bevy app (`MinimalPlugins`, an uncapped loop) stepping a gravitational n-body
//! simulation on the GPU every frame.
//!
//! The step is a HIP kernel a game would write (`cli/kernels/nbody.hip`: every body's pull summed
//! through LDS tiles of 128 bodies, then semi-implicit Euler), with no CPU port: on the soft
//! runtime it runs from its machine code. Two command buffers are recorded once, one per
//! direction of the position buffers' ping-pong; each frame one system stages the frame's program
//! on the `Sim` lane (a typed label, also the set its systems run in), behind the previous frame's
//! work on the device, and asks for positions and velocities back as `Readback<f32, Positions>`
//! and `Readback<f32, Velocities>`. When a frame's state arrives (without blocking), the host
//! mirror steps the frame before's state and every component must agree within
//! `nbody::TOLERANCE` (the kernel fuses multiply-adds and takes 1/sqrt from `v_rsq_f32`).
//!
//! The plugin keeps at most `--frames-in-flight` frames in flight, so the loop never runs ahead of
//! the device by more than that: the example checks that the frame timeline never trails the
//! app's frame by more, and that every read-back arrives within that many frames. Its compute
//! systems run only if `aqueduct_available`; with a device that cannot open (`--device amdgpu` on
//! a machine without a GPU) the app still runs, says why, and exits with an error. Frame times,
//! the lag, the read-back lateness and the total energy's drift are printed at the end.
//!
//! `cargo run --release --example bevy_frame_compute -- [FRAMES] [--bodies N] [--frames-in-flight N] [--device SPEC]`

use std::collections::{BTreeMap, VecDeque};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aqueduct::prelude::*;
use aqueduct_bevy::{
    AqueductDevice, AqueductFrame, AqueductPlugin, FrameStalled, Lane, QueueFailed, Readback, SubmitRefused,
    aqueduct_available,
};
use aqueduct_cli::nbody::{self, Body, NBODY_CODE_OBJECTS, SOFTENING2, WORKGROUP};
use bevy_app::{App, AppExit, Update};
use bevy_ecs::prelude::*;
use bevy_internal::MinimalPlugins;
use clap::Parser;

const DT: f32 = 1.0 / 240.0;

/// An n-body simulation stepped on the GPU in a Bevy app's own frame.
#[derive(Parser)]
struct Args {
    /// Frames to simulate.
    #[arg(default_value_t = 240, value_parser = clap::value_parser!(u64).range(1..))]
    frames: u64,
    /// Bodies (every body pulls every other: the work grows with its square).
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(2..=65536))]
    bodies: u32,
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

/// The tags of the read-backs of the bodies' positions and velocities.
struct Positions;
struct Velocities;

/// A frame's state as read back: positions (with masses) and velocities, `float4` each.
#[derive(Default)]
struct State {
    positions: Option<Vec<f32>>,
    velocities: Option<Vec<f32>>,
}

#[derive(Resource)]
struct Simulation {
    /// The ping-pong pair: frame k reads `positions[(k - 1) % 2]` and writes the other.
    positions: [Buffer<f32>; 2],
    velocities: Buffer<f32>,
    /// `steps[i]` reads `positions[i]`, writes `positions[1 - i]`.
    steps: [Arc<CommandBuffer>; 2],
    /// The last frame checked against the mirror, and its state.
    checked_frame: u64,
    checked_state: (Vec<Body>, Vec<[f32; 4]>),
    /// Read-backs arrived and not yet checked, by frame.
    arrived: BTreeMap<u64, State>,
    /// Frames submitted whose state has not been checked yet.
    pending: VecDeque<u64>,
    initial_energy: f64,
    frames: u64,
    worst_error: f32,
    /// The most frames the timeline trailed the frame being recorded, and the most frames a
    /// read-back arrived after the frame that asked for it.
    worst_lag: u64,
    latest_readback: u64,
    frame_times: Vec<Duration>,
    last_frame: Instant,
}

fn setup(world: &mut World, frames: u64, bodies: u32) -> Result<(), Box<dyn std::error::Error>> {
    let device = world.resource::<AqueductDevice>().device()?.clone();
    let executable = device.load_executable(device.select_code_object(&NBODY_CODE_OBJECTS)?)?;
    let kernel = executable.kernel("nbody_step")?;
    let (positions, velocities) = nbody::initial_state(bodies);
    let flat = nbody::flatten;
    let position_buffers = [
        device.buffer_from(MemoryKind::HostVisible, &flat(&positions))?,
        device.buffer_from(MemoryKind::HostVisible, &flat(&positions))?,
    ];
    let velocity_buffer = device.buffer_from(MemoryKind::HostVisible, &flat(&velocities))?;
    // Recorded once each, executed every other frame.
    let record = |from: usize| -> Result<Arc<CommandBuffer>, aqueduct::EngineError> {
        let mut step = device.create_command_buffer(CommandBufferUsage::Reusable)?;
        let bindings = [
            BufferRef::from(position_buffers[1 - from].whole()),
            BufferRef::from(velocity_buffer.whole()),
            BufferRef::from(position_buffers[from].whole()),
        ];
        let constants = [bodies, DT.to_bits(), SOFTENING2.to_bits()];
        let grid = [bodies.div_ceil(u32::from(WORKGROUP)) * u32::from(WORKGROUP), 1, 1];
        let dispatch = Dispatch::grid(grid).workgroup([WORKGROUP, 1, 1]).bindings(&bindings).constants(&constants);
        step.dispatch(&kernel, &dispatch)?;
        step.finish()?;
        Ok(Arc::new(step))
    };
    let steps = [record(0)?, record(1)?];
    world.insert_resource(Simulation {
        positions: position_buffers,
        velocities: velocity_buffer,
        steps,
        checked_frame: 0,
        initial_energy: energy(&positions, &velocities),
        checked_state: (positions, velocities),
        arrived: BTreeMap::new(),
        pending: VecDeque::new(),
        frames,
        worst_error: 0.0,
        worst_lag: 0,
        latest_readback: 0,
        frame_times: Vec::new(),
        last_frame: Instant::now(),
    });
    Ok(())
}

/// Kinetic plus potential energy (softened as the kernel's force is), in f64.
fn energy(bodies: &[Body], velocities: &[[f32; 4]]) -> f64 {
    let kinetic: f64 = bodies
        .iter()
        .zip(velocities)
        .map(|(body, v)| 0.5 * f64::from(body[3]) * v[..3].iter().map(|&c| f64::from(c) * f64::from(c)).sum::<f64>())
        .sum();
    let mut potential = 0.0;
    for (i, a) in bodies.iter().enumerate() {
        for b in &bodies[i + 1..] {
            let r2: f64 = (0..3).map(|axis| f64::from(a[axis] - b[axis]).powi(2)).sum();
            potential -= f64::from(a[3]) * f64::from(b[3]) / (r2 + f64::from(SOFTENING2)).sqrt();
        }
    }
    kinetic + potential
}

/// Checks each arrived frame against the mirror's step from the frame before.
fn react(
    frame: Res<AqueductFrame>,
    mut simulation: ResMut<Simulation>,
    mut positions: MessageReader<Readback<f32, Positions>>,
    mut velocities: MessageReader<Readback<f32, Velocities>>,
    mut exit: MessageWriter<AppExit>,
) {
    let limit = u64::from(frame.frames_in_flight().get());
    let simulation = &mut *simulation;
    let arrivals = positions
        .read()
        .map(|readback| (readback.frame, true, readback.data.clone()))
        .chain(velocities.read().map(|readback| (readback.frame, false, readback.data.clone())));
    for (number, is_positions, data) in arrivals {
        let late = frame.frame() - number;
        simulation.latest_readback = simulation.latest_readback.max(late);
        if late > limit {
            eprintln!("frame {number}'s state arrived {late} frames late, beyond the limit");
            exit.write(AppExit::error());
            return;
        }
        let state = simulation.arrived.entry(number).or_default();
        if is_positions { state.positions = Some(data) } else { state.velocities = Some(data) }
    }
    // Frames complete in order: check each against the mirror's step from the one before.
    while let Some(entry) = simulation.arrived.first_entry() {
        if *entry.key() != simulation.checked_frame + 1 {
            break;
        }
        let State { positions: Some(positions), velocities: Some(velocities) } = entry.get() else { break };
        let (number, positions, velocities) = (*entry.key(), positions.clone(), velocities.clone());
        entry.remove();
        let (bodies, body_velocities) = &simulation.checked_state;
        let (want_positions, want_velocities) = nbody::step_host(bodies, body_velocities, DT);
        let flat = nbody::flatten;
        for (what, got, want) in
            [("position", &positions, flat(&want_positions)), ("velocity", &velocities, flat(&want_velocities))]
        {
            if let Some((index, got, want)) = nbody::first_difference(got, &want) {
                eprintln!("frame {number}: body {} {what}[{}] is {got}, the mirror says {want}", index / 4, index % 4);
                exit.write(AppExit::error());
                return;
            }
            let error =
                got.iter().zip(&want).map(|(got, want)| (got - want).abs() / (1.0 + want.abs())).fold(0.0, f32::max);
            simulation.worst_error = simulation.worst_error.max(error);
        }
        simulation.checked_frame = number;
        simulation.checked_state = (nbody::unflatten(&positions), nbody::unflatten(&velocities));
        simulation.pending.retain(|pending| *pending != number);
    }
}

/// Stages this frame's step and asks for its positions and velocities back.
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
        if simulation.pending.is_empty() {
            report(&simulation, frame.frames_in_flight());
            exit.write(AppExit::Success);
        }
        return;
    }
    if number > 1 {
        simulation.frame_times.push(elapsed);
    }
    let from = ((number - 1) % 2) as usize;
    let program = simulation.steps[from].clone();
    let table = aqueduct::BindingTable::default();
    simulation.pending.push_back(number);
    let submitted =
        frame.submit(Sim, move |batch, context| batch.execute(&program, &table).wait(context.previous()).submit());
    let result = submitted
        .and_then(|()| frame.read_back(Sim, &simulation.positions[1 - from], .., Positions))
        .and_then(|()| frame.read_back(Sim, &simulation.velocities, .., Velocities));
    if let Err(error) = result {
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
    let bodies = simulation.checked_state.0.len();
    println!(
        "bevy_frame_compute: {} frames of {bodies} bodies (n-body, {} pulls a frame); frame time avg {:.3} ms, min {:.3} ms, max {:.3} ms",
        simulation.frames,
        bodies * bodies,
        total.as_secs_f64() * 1e3 / times.len().max(1) as f64,
        min.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3,
    );
    let final_energy = energy(&simulation.checked_state.0, &simulation.checked_state.1);
    println!(
        "  {} frames' positions and velocities equal to the host mirror's step within {} (largest {:.1e}); energy drift {:.2e}",
        simulation.checked_frame,
        nbody::TOLERANCE,
        simulation.worst_error,
        (final_energy - simulation.initial_energy) / simulation.initial_energy.abs(),
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
        .readback::<f32, Positions>()
        .readback::<f32, Velocities>();
    plugin.config.device = args.device;
    let mut app = App::new();
    app.add_plugins(MinimalPlugins).add_plugins(plugin);
    if app.world().resource::<AqueductDevice>().is_available() {
        setup(app.world_mut(), args.frames, args.bodies)?;
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
