//! The plugin driven frame by frame: frames flush in order and raise the frame timeline, typed
//! read-backs carry exactly what their frame produced (whole buffers and ranges, plain numbers and
//! `Pod` structs) and never block, a failed queue is reported once with its record and does not
//! stall the other lanes, refused operations are reported, typed lanes take their queues'
//! settings, and a lane that was never registered is an error at the call.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use aqueduct_bevy::{
    AqueductDevice, AqueductError, AqueductFrame, AqueductPlugin, AqueductQueues, DefaultLane, FrameStalled, Lane,
    QueueFailed, Readback, SubmitRefused,
};
use aqueduct_engine::{Buffer, MemoryKind, QueueConfig, QueuePriority};
use bevy_app::{App, Update};
use bevy_ecs::prelude::*;

/// Long enough to only catch hangs.
const TIMEOUT: Duration = Duration::from_secs(60);

/// A read-back's tag: the frame that asked, as the system saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp(u64);

#[derive(Resource)]
struct Target(Buffer<u32>);

#[derive(Resource, Default)]
struct Seen {
    readbacks: Vec<Readback<u32, Stamp>>,
    failures: Vec<QueueFailed>,
    refused: Vec<SubmitRefused>,
    stalled: Vec<FrameStalled>,
    /// Errors returned where work or a read-back was asked for.
    call_errors: Vec<AqueductError>,
}

fn collect(
    mut seen: ResMut<Seen>,
    mut readbacks: MessageReader<Readback<u32, Stamp>>,
    mut failures: MessageReader<QueueFailed>,
    mut refused: MessageReader<SubmitRefused>,
    mut stalled: MessageReader<FrameStalled>,
) {
    seen.readbacks.extend(readbacks.read().cloned());
    seen.failures.extend(failures.read().cloned());
    seen.refused.extend(refused.read().cloned());
    seen.stalled.extend(stalled.read().cloned());
}

/// Each frame fills the target with the frame number (after the previous frame's work), then
/// asks for it back.
fn write_frame_number(mut frame: ResMut<AqueductFrame>, target: Res<Target>, mut seen: ResMut<Seen>) {
    let number = frame.frame();
    let buffer = target.0.clone();
    let submitted = frame.submit(DefaultLane, move |batch, context| {
        batch.fill(buffer.whole(), &(number as u32).to_le_bytes()).wait(context.previous()).submit()
    });
    let asked = frame.read_back(DefaultLane, &target.0, .., Stamp(number));
    seen.call_errors.extend(submitted.err().into_iter().chain(asked.err()));
}

fn app(plugin: AqueductPlugin) -> App {
    let mut app = App::new();
    app.add_plugins(plugin.readback::<u32, Stamp>()).init_resource::<Seen>().add_systems(Update, collect);
    app
}

fn device(app: &App) -> aqueduct_engine::Device {
    app.world().resource::<AqueductDevice>().device().expect("the soft device opens").clone()
}

/// Updates until `done` holds (the frames keep flushing meanwhile); bounded by [`TIMEOUT`].
fn update_until(app: &mut App, mut done: impl FnMut(&mut App) -> bool) {
    let deadline = Instant::now() + TIMEOUT;
    while !done(app) {
        assert!(Instant::now() < deadline, "the app never got there");
        std::thread::sleep(Duration::from_millis(1));
        app.update();
    }
}

#[test]
fn frames_flush_in_order_and_read_backs_carry_their_frame() {
    let mut app = app(AqueductPlugin::new("soft").unwrap());
    let target = device(&app).allocate_typed::<u32>(MemoryKind::DeviceLocal, 64).unwrap();
    app.insert_resource(Target(target)).add_systems(Update, write_frame_number.in_set(DefaultLane));
    const FRAMES: u64 = 12;
    for _ in 0..FRAMES {
        app.update();
    }
    // Frames keep running while the last read-backs arrive; each carries its own frame.
    update_until(&mut app, |app| app.world().resource::<Seen>().readbacks.len() as u64 >= FRAMES);
    let seen = app.world().resource::<Seen>();
    for (index, readback) in seen.readbacks.iter().take(FRAMES as usize).enumerate() {
        let frame = index as u64 + 1;
        assert_eq!((readback.tag, readback.frame), (Stamp(frame), frame), "read-backs arrive in frame order");
        assert_eq!(readback.data, vec![frame as u32; 64], "frame {frame}");
    }
    assert!(seen.failures.is_empty() && seen.refused.is_empty() && seen.stalled.is_empty());
    assert!(seen.call_errors.is_empty(), "{:?}", seen.call_errors);
    let frame = app.world().resource::<AqueductFrame>();
    frame.timeline().unwrap().wait(frame.frame() - 1, TIMEOUT).unwrap();
    assert_eq!(frame.completed(), frame.frame() - 1, "the timeline counts flushed frames");
}

/// A particle as a shader would lay it out: read back as itself, not as bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
struct Particle {
    position: [f32; 2],
    velocity: [f32; 2],
    id: u32,
    flags: u32,
}

/// Which read-back a `Readback<Particle, _>` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ParticleView {
    All,
    /// Particles 3..7.
    Window,
}

#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Physics;
impl Lane for Physics {}

#[derive(Resource)]
struct Particles(Buffer<Particle>);

const PARTICLES: u64 = 10;

/// Frame `n`'s particles: every field depends on the frame and the index.
fn particles_of(frame: u64) -> Vec<Particle> {
    (0..PARTICLES)
        .map(|index| Particle {
            position: [frame as f32 + index as f32 * 0.5, -(index as f32)],
            velocity: [index as f32 * 0.25, frame as f32 * 2.0],
            id: index as u32 * 1000 + frame as u32,
            flags: (frame as u32) << 16 | index as u32,
        })
        .collect()
}

#[test]
fn typed_read_backs_round_trip_pod_structs_and_ranges() {
    fn upload(mut frame: ResMut<AqueductFrame>, particles: Res<Particles>) {
        let number = frame.frame();
        let buffer = particles.0.clone();
        frame
            .submit(Physics, move |batch, context| {
                batch
                    .update(buffer.bytes(), 0, bytemuck::cast_slice(&particles_of(number)))
                    .wait(context.previous())
                    .submit()
            })
            .unwrap();
        frame.read_back(Physics, &particles.0, .., ParticleView::All).unwrap();
        frame.read_back(Physics, &particles.0, 3..7, ParticleView::Window).unwrap();
    }
    #[derive(Resource, Default)]
    struct Arrived(Vec<Readback<Particle, ParticleView>>);
    fn arrive(mut arrived: ResMut<Arrived>, mut readbacks: MessageReader<Readback<Particle, ParticleView>>) {
        arrived.0.extend(readbacks.read().cloned());
    }
    let mut app = app(AqueductPlugin::new("soft")
        .unwrap()
        .lane(Physics, QueueConfig::new())
        .readback::<Particle, ParticleView>());
    let buffer = device(&app).allocate_typed::<Particle>(MemoryKind::DeviceLocal, PARTICLES).unwrap();
    app.insert_resource(Particles(buffer))
        .init_resource::<Arrived>()
        .add_systems(Update, (arrive, upload.in_set(Physics)).chain());
    const FRAMES: u64 = 6;
    for _ in 0..FRAMES {
        app.update();
    }
    update_until(&mut app, |app| app.world().resource::<Arrived>().0.len() as u64 >= 2 * FRAMES);
    let arrived = &app.world().resource::<Arrived>().0;
    for frame in 1..=FRAMES {
        let of = |view| arrived.iter().filter(move |readback| readback.frame == frame && readback.tag == view);
        let all: Vec<_> = of(ParticleView::All).collect();
        let window: Vec<_> = of(ParticleView::Window).collect();
        assert_eq!((all.len(), window.len()), (1, 1), "frame {frame}: one of each");
        assert_eq!(all[0].data, particles_of(frame), "frame {frame}: every particle");
        assert_eq!(window[0].data, particles_of(frame)[3..7], "frame {frame}: particles 3..7");
    }
    assert!(app.world().resource::<Seen>().refused.is_empty());
}

#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Audio;
impl Lane for Audio {}

#[test]
fn an_unknown_lane_or_unregistered_read_back_is_an_error_at_the_call() {
    struct Unregistered;
    #[derive(Resource, Default)]
    struct Errors(Vec<AqueductError>);
    // Asks in the first frame only: the frames `update_until` runs while the read-back is in
    // flight must not submit more of them (on a loaded machine a second one arrived with it).
    fn ask(mut frame: ResMut<AqueductFrame>, target: Res<Target>, mut errors: ResMut<Errors>, mut asked: Local<bool>) {
        if std::mem::replace(&mut *asked, true) {
            return;
        }
        let number = frame.frame();
        let results = [
            frame.submit(Audio, |batch, _| batch.barrier().submit()),
            frame.read_back(Audio, &target.0, .., Stamp(0)),
            frame.read_back(Physics, &target.0, .., Unregistered),
            frame.read_back(Physics, &target.0, 60..65, Stamp(0)),
            frame.read_back(Physics, &target.0, 4..4, Stamp(0)),
            frame.read_back(Physics, &target.0, 0..=63, Stamp(number)),
        ];
        errors.0.extend(results.into_iter().filter_map(Result::err));
    }
    let mut app = app(AqueductPlugin::new("soft").unwrap().lane(Physics, QueueConfig::new()));
    let target = device(&app).allocate_typed::<u32>(MemoryKind::HostVisible, 64).unwrap();
    app.insert_resource(Target(target)).init_resource::<Errors>().add_systems(Update, ask.in_set(Physics));
    app.update();
    let errors = &app.world().resource::<Errors>().0;
    assert_eq!(errors.len(), 5, "{errors:?}");
    for error in &errors[..2] {
        assert!(matches!(error, AqueductError::UnknownLane { lane } if lane.is(Audio) && !lane.is(Physics)), "{error}");
        assert!(error.to_string().contains("Audio"), "the message names the lane: {error}");
    }
    assert!(
        matches!(&errors[2], AqueductError::ReadbackNotRegistered { message } if message.contains("Unregistered")),
        "{}",
        errors[2]
    );
    assert!(
        matches!(errors[3], AqueductError::InvalidReadback { start: 60, end: 65, length: 64, .. }),
        "{}",
        errors[3]
    );
    assert!(matches!(errors[4], AqueductError::InvalidReadback { start: 4, end: 4, .. }), "{}", errors[4]);
    // Only the valid read-back (an inclusive range of the whole buffer) was submitted.
    update_until(&mut app, |app| !app.world().resource::<Seen>().readbacks.is_empty());
    let seen = app.world().resource::<Seen>();
    assert_eq!((seen.readbacks.len(), seen.readbacks[0].data.len(), seen.readbacks[0].tag), (1, 64, Stamp(1)));
}

#[test]
fn a_failed_queue_is_reported_once_with_its_record_and_other_lanes_go_on() {
    fn other_lane(mut frame: ResMut<AqueductFrame>, target: Res<Target>, mut seen: ResMut<Seen>) {
        // No wait on the timeline: the failed lane fails it, and this lane keeps its own order.
        let number = frame.frame();
        let buffer = target.0.clone();
        let submitted =
            frame.submit(Physics, move |batch, _| batch.fill(buffer.whole(), &(number as u32).to_le_bytes()).submit());
        let asked = frame.read_back(Physics, &target.0, .., Stamp(number));
        seen.call_errors.extend(submitted.err().into_iter().chain(asked.err()));
    }
    let plugin = AqueductPlugin::new("soft").unwrap().lane(Physics, QueueConfig::new()).lane(Audio, QueueConfig::new());
    let mut app = app(plugin);
    let target = device(&app).allocate_typed::<u32>(MemoryKind::HostVisible, 16).unwrap();
    app.insert_resource(Target(target)).add_systems(Update, other_lane.in_set(Physics));
    app.update();
    let queue = app.world().resource::<AqueductQueues>().get(Audio).unwrap().clone();
    let status = aqueduct_hsa::sys::status::ERROR_ILLEGAL_INSTRUCTION;
    queue
        .soft_controls()
        .expect("a soft queue")
        .inject_fault(queue.hsa_queue(), queue.stats().packets, aqueduct_soft_hsa::Fault::KernelFault { status })
        .unwrap();
    update_until(&mut app, |app| !app.world().resource::<Seen>().failures.is_empty());
    let failed_at = app.world().resource::<AqueductFrame>().frame();
    for _ in 0..5 {
        app.update();
    }
    let seen = app.world().resource::<Seen>();
    assert_eq!(seen.failures.len(), 1, "reported once, and only for its lane: {:?}", seen.failures);
    assert!(seen.failures[0].lane.is(Audio));
    assert_eq!(seen.failures[0].record.status, Some(status), "{}", seen.failures[0].record.message);
    assert!(seen.stalled.is_empty(), "the frame wait goes on with the lanes still running: {:?}", seen.stalled);
    // The other lane's read-backs keep arriving, each with its own frame's data.
    let after: Vec<_> = seen.readbacks.iter().filter(|readback| readback.frame >= failed_at).collect();
    assert!(!after.is_empty(), "no read-back of the healthy lane arrived after the failure");
    for readback in seen.readbacks.iter() {
        assert_eq!(readback.data, vec![readback.frame as u32; 16], "frame {}", readback.frame);
    }
}

#[test]
fn refused_operations_are_reported_and_the_frame_goes_on() {
    fn bad(mut frame: ResMut<AqueductFrame>, target: Res<Target>) {
        let buffer = target.0.clone();
        frame.submit(DefaultLane, move |batch, _| batch.fill(buffer.whole(), &[1, 2, 3]).submit()).unwrap();
    }
    let mut app = app(AqueductPlugin::new("soft").unwrap());
    let target = device(&app).allocate_typed::<u32>(MemoryKind::HostVisible, 16).unwrap();
    app.insert_resource(Target(target)).add_systems(Update, bad);
    for _ in 0..3 {
        app.update();
    }
    // Sent at each flush, so the third frame's comes after the last `collect`.
    let seen = app.world().resource::<Seen>();
    assert_eq!(seen.refused.len(), 2, "one a frame: {:?}", seen.refused);
    assert!(seen.refused.iter().all(|refused| refused.lane.is(DefaultLane) && refused.error.contains("pattern")));
    let frame = app.world().resource::<AqueductFrame>();
    frame.timeline().unwrap().wait(3, TIMEOUT).unwrap();
}

/// Counts its drops: a submitted operation's captures are dropped once, after it ran.
struct DropCounter(Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }
}

/// The flush keeps small operations inline and large ones on the heap: both kinds run once, in the
/// frame they were submitted in, and their captures are dropped once, by the end of that flush.
#[test]
fn small_and_large_operations_run_once_and_drop_their_captures_once() {
    #[derive(Resource)]
    struct Probe {
        buffers: [Buffer<u32>; 2],
        runs: Arc<AtomicUsize>,
        drops: Arc<AtomicUsize>,
    }
    fn submit_two(mut frame: ResMut<AqueductFrame>, probe: Res<Probe>) {
        if frame.frame() != 1 {
            return;
        }
        let (small_target, runs, guard) =
            (probe.buffers[0].clone(), probe.runs.clone(), DropCounter(probe.drops.clone()));
        frame
            .submit(DefaultLane, move |batch, _| {
                let _guard = &guard;
                runs.fetch_add(1, Ordering::AcqRel);
                batch.fill(small_target.whole(), &7u32.to_le_bytes()).submit()
            })
            .unwrap();
        // 256 bytes of captures: more than an inline operation holds.
        let weights: [u32; 64] = std::array::from_fn(|index| index as u32);
        let (large_target, runs, guard) =
            (probe.buffers[1].clone(), probe.runs.clone(), DropCounter(probe.drops.clone()));
        frame
            .submit(DefaultLane, move |batch, _| {
                let _guard = &guard;
                runs.fetch_add(1, Ordering::AcqRel);
                batch.fill(large_target.whole(), &weights.iter().sum::<u32>().to_le_bytes()).submit()
            })
            .unwrap();
        for (index, buffer) in probe.buffers.iter().enumerate() {
            frame.read_back(DefaultLane, buffer, .., Stamp(index as u64)).unwrap();
        }
    }
    let mut app = app(AqueductPlugin::new("soft").unwrap());
    let device = device(&app);
    let buffers = [0, 1].map(|_| device.allocate_typed::<u32>(MemoryKind::DeviceLocal, 8).unwrap());
    let (runs, drops) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    app.insert_resource(Probe { buffers, runs: runs.clone(), drops: drops.clone() })
        .add_systems(Update, submit_two.in_set(DefaultLane));
    app.update();
    assert_eq!((runs.load(Ordering::Acquire), drops.load(Ordering::Acquire)), (2, 2), "ran and dropped in frame 1");
    update_until(&mut app, |app| app.world().resource::<Seen>().readbacks.len() >= 2);
    let seen = app.world().resource::<Seen>();
    let data =
        |stamp| seen.readbacks.iter().find(|readback| readback.tag == Stamp(stamp)).map(|readback| &readback.data);
    assert_eq!(data(0), Some(&vec![7; 8]), "the inline operation's fill");
    assert_eq!(data(1), Some(&vec![(0..64).sum::<u32>(); 8]), "the heap operation's fill");
    assert_eq!((runs.load(Ordering::Acquire), drops.load(Ordering::Acquire)), (2, 2), "never again");
}

#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Streaming {
    Textures,
    Meshes,
}
impl Lane for Streaming {}

#[test]
fn lanes_take_their_queue_settings() {
    let plugin = AqueductPlugin::new("soft")
        .unwrap()
        .lane(Physics, QueueConfig::new().priority(QueuePriority::High))
        .lane(Streaming::Textures, QueueConfig::new().priority(QueuePriority::Low))
        .lane(Streaming::Meshes, QueueConfig::new());
    let mut app = app(plugin);
    app.update();
    let queues = app.world().resource::<AqueductQueues>();
    assert_eq!(queues.get(Physics).unwrap().priority(), QueuePriority::High);
    assert_eq!(queues.get(Streaming::Textures).unwrap().priority(), QueuePriority::Low);
    assert_eq!(queues.get(Streaming::Meshes).unwrap().priority(), QueuePriority::Normal);
    let lanes: Vec<_> = queues.iter().map(|(lane, _)| lane.to_string()).collect();
    assert_eq!(lanes, ["Physics", "Textures", "Meshes"], "in order, each variant its own lane");
    assert!(
        matches!(queues.get(DefaultLane), Err(AqueductError::UnknownLane { lane }) if lane.is(DefaultLane)),
        "named lanes replace the default one"
    );
    let frame = app.world().resource::<AqueductFrame>();
    frame.timeline().unwrap().wait(1, TIMEOUT).unwrap();
}

#[test]
fn a_bad_spec_is_a_typed_error_and_a_bad_lane_leaves_the_app_running_without_compute() {
    assert!(matches!(AqueductPlugin::new("gpu please"), Err(aqueduct_engine::EngineError::InvalidDeviceSpec { .. })));
    // No lane may be made on an agent the device does not have: the engine does not open.
    let on_no_agent = AqueductPlugin::new("soft").unwrap().lane(Physics, QueueConfig::new().agent(99));
    // A lane registered twice is refused when the plugin is built.
    let twice =
        AqueductPlugin::new("soft").unwrap().lane(Physics, QueueConfig::new()).lane(Physics, QueueConfig::new());
    for (plugin, why) in [(on_no_agent, "agent"), (twice, "lane Physics is registered twice")] {
        let mut app = app(plugin);
        app.update();
        app.update();
        let error = app.world().resource::<AqueductDevice>().device().err().expect("unavailable");
        assert!(matches!(&error, AqueductError::Unavailable { reason } if reason.contains(why)), "{error}");
        let frame = app.world().resource::<AqueductFrame>();
        assert_eq!((frame.frame(), frame.completed()), (3, 0), "frames are counted, none run");
    }
}
