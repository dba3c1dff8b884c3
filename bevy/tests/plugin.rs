//! The plugin driven frame by frame: frames flush in order and raise the frame timeline,
//! read-backs carry exactly what their frame produced and never block, a failed queue is reported
//! once with its record, refused operations are reported, and lanes take their queues' settings.

use std::time::{Duration, Instant};

use aqueduct_bevy::{
    AqueductFrame, AqueductPlugin, AqueductQueues, DEFAULT_LANE, Lane, QueueFailed, Readback, SubmitRefused,
};
use aqueduct_engine::{Buffer, MemoryKind, QueueConfig, QueuePriority};
use bevy_app::{App, Update};
use bevy_ecs::prelude::*;

/// Long enough to only catch hangs.
const TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Resource)]
struct Target(Buffer);

#[derive(Resource, Default)]
struct Seen {
    readbacks: Vec<Readback>,
    failures: Vec<QueueFailed>,
    refused: Vec<SubmitRefused>,
}

fn collect(
    mut seen: ResMut<Seen>,
    mut readbacks: MessageReader<Readback>,
    mut failures: MessageReader<QueueFailed>,
    mut refused: MessageReader<SubmitRefused>,
) {
    seen.readbacks.extend(readbacks.read().cloned());
    seen.failures.extend(failures.read().cloned());
    seen.refused.extend(refused.read().cloned());
}

/// Each frame fills the target with the frame number (after the previous frame's work), then
/// asks for it back.
fn write_frame_number(mut frame: ResMut<AqueductFrame>, target: Res<Target>) {
    let number = frame.frame();
    let buffer = target.0.clone();
    frame.submit(DEFAULT_LANE, move |batch, context| {
        batch.fill(buffer.whole(), &(number as u32).to_le_bytes()).wait(context.previous()).submit()
    });
    frame.read_back(DEFAULT_LANE, target.0.whole(), number);
}

fn app(plugin: AqueductPlugin) -> App {
    let mut app = App::new();
    app.add_plugins(plugin).init_resource::<Seen>().add_systems(Update, collect);
    app
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
    let target = app
        .world()
        .resource::<aqueduct_bevy::AqueductDevice>()
        .device()
        .allocate(MemoryKind::DeviceLocal, 256)
        .unwrap();
    app.insert_resource(Target(target)).add_systems(Update, write_frame_number.in_set(Lane(DEFAULT_LANE)));
    const FRAMES: u64 = 12;
    for _ in 0..FRAMES {
        app.update();
    }
    // Frames keep running while the last read-backs arrive; each carries its own frame.
    update_until(&mut app, |app| app.world().resource::<Seen>().readbacks.len() as u64 >= FRAMES);
    let seen = app.world().resource::<Seen>();
    for (index, readback) in seen.readbacks.iter().enumerate() {
        let frame = index as u64 + 1;
        assert_eq!((readback.tag, readback.frame), (frame, frame), "read-backs arrive in frame order");
        assert!(
            readback.bytes.chunks(4).all(|word| word == (frame as u32).to_le_bytes()),
            "frame {frame}: {:?}",
            &readback.bytes[..8]
        );
    }
    assert!(seen.failures.is_empty() && seen.refused.is_empty());
    let frame = app.world().resource::<AqueductFrame>();
    frame.timeline().wait(frame.frame() - 1, TIMEOUT).unwrap();
    assert_eq!(frame.timeline().value(), frame.frame() - 1, "the timeline counts flushed frames");
}

#[test]
fn a_failed_queue_is_reported_once_with_its_record() {
    let mut app = app(AqueductPlugin::new("soft").unwrap());
    let target =
        app.world().resource::<aqueduct_bevy::AqueductDevice>().device().allocate(MemoryKind::HostVisible, 64).unwrap();
    app.insert_resource(Target(target)).add_systems(Update, write_frame_number.in_set(Lane(DEFAULT_LANE)));
    app.update();
    let queue = app.world().resource::<AqueductQueues>().get(DEFAULT_LANE).unwrap().clone();
    let status = aqueduct_hsa::sys::status::ERROR_ILLEGAL_INSTRUCTION;
    queue
        .soft_controls()
        .expect("a soft queue")
        .inject_fault(queue.hsa_queue(), queue.stats().packets, aqueduct_hsa::soft::Fault::KernelFault { status })
        .unwrap();
    update_until(&mut app, |app| !app.world().resource::<Seen>().failures.is_empty());
    for _ in 0..5 {
        app.update();
    }
    let seen = app.world().resource::<Seen>();
    assert_eq!(seen.failures.len(), 1, "reported once");
    assert_eq!(seen.failures[0].lane, DEFAULT_LANE);
    assert_eq!(seen.failures[0].record.status, Some(status), "{}", seen.failures[0].record.message);
}

#[test]
fn refused_operations_are_reported_and_the_frame_goes_on() {
    fn bad(mut frame: ResMut<AqueductFrame>, target: Res<Target>) {
        let buffer = target.0.clone();
        frame.submit(DEFAULT_LANE, move |batch, _| batch.fill(buffer.whole(), &[1, 2, 3]).submit());
        frame.submit("nowhere", |batch, _| batch.barrier().submit());
    }
    let mut app = app(AqueductPlugin::new("soft").unwrap());
    let target =
        app.world().resource::<aqueduct_bevy::AqueductDevice>().device().allocate(MemoryKind::HostVisible, 64).unwrap();
    app.insert_resource(Target(target)).add_systems(Update, bad);
    app.update();
    app.update();
    let seen = app.world().resource::<Seen>();
    assert_eq!(seen.refused.len(), 2, "{:?}", seen.refused);
    assert!(seen.refused.iter().any(|refused| refused.lane == "nowhere"));
    assert!(seen.refused.iter().any(|refused| refused.error.contains("pattern")), "{:?}", seen.refused);
    let frame = app.world().resource::<AqueductFrame>();
    frame.timeline().wait(1, TIMEOUT).unwrap();
}

#[test]
fn lanes_take_their_queue_settings() {
    let plugin = AqueductPlugin::new("soft")
        .unwrap()
        .lane("frame", QueueConfig::new().priority(QueuePriority::High))
        .lane("background", QueueConfig::new().priority(QueuePriority::Low));
    let mut app = app(plugin);
    app.update();
    let queues = app.world().resource::<AqueductQueues>();
    assert_eq!(queues.get("frame").unwrap().priority(), QueuePriority::High);
    assert_eq!(queues.get("background").unwrap().priority(), QueuePriority::Low);
    assert!(queues.get(DEFAULT_LANE).is_none(), "named lanes replace the default one");
    let frame = app.world().resource::<AqueductFrame>();
    frame.timeline().wait(1, TIMEOUT).unwrap();
}

#[test]
fn a_bad_spec_is_a_typed_error_and_a_missing_device_leaves_the_app_running() {
    assert!(matches!(AqueductPlugin::new("gpu please"), Err(aqueduct_engine::EngineError::InvalidDeviceSpec { .. })));
    // No lane may be made on an agent the device does not have: the engine does not open.
    let plugin = AqueductPlugin::new("soft").unwrap().lane("nowhere", QueueConfig::new().agent(99));
    let mut app = app(plugin);
    app.update();
    app.update();
    let unavailable = app.world().get_resource::<aqueduct_bevy::AqueductUnavailable>().expect("says why");
    assert!(unavailable.0.contains("99") || unavailable.0.contains("agent"), "{}", unavailable.0);
    assert!(app.world().get_resource::<AqueductFrame>().is_none());
}
