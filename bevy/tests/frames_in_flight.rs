//! The frames-in-flight limit in an uncapped `MinimalPlugins` loop (no frame pacing, the device
//! slower than the host): the frame timeline never trails the app's frame by more than the limit,
//! and each read-back arrives between 1 and `limit` frames after the frame that asked for it. The
//! test counts frames, never time.

use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};

use aqueduct_bevy::{
    AqueductDevice, AqueductFrame, AqueductPlugin, FrameStalled, Lane, QueueFailed, Readback, SubmitRefused,
};
use aqueduct_engine::{Buffer, MemoryKind, QueueConfig};
use bevy_app::{App, AppExit, Update};
use bevy_ecs::prelude::*;
use bevy_internal::MinimalPlugins;

#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Sim;
impl Lane for Sim {}

/// A read-back's tag: the frame that asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp(u64);

/// Bytes each frame fills before its stamp: enough that the device falls behind an uncapped host.
const LOAD_BYTES: u64 = 1 << 20;

#[derive(Resource)]
struct Rig {
    frames: u64,
    load: Buffer,
    stamp: Buffer<u32>,
}

/// Shared with the test: `App::run` hands the app to the runner, which keeps it.
#[derive(Resource, Clone, Default)]
struct Shared(Arc<Mutex<Log>>);

#[derive(Default)]
struct Log {
    /// `frame() - completed()` in every frame's `Update`.
    lags: Vec<u64>,
    /// For each read-back: the frame it asked in and the frame it arrived in.
    arrivals: Vec<(u64, u64)>,
    wrong: Vec<String>,
}

fn record(mut frame: ResMut<AqueductFrame>, rig: Res<Rig>, log: Res<Shared>) {
    let mut log = log.0.lock().unwrap();
    let number = frame.frame();
    log.lags.push(number - frame.completed());
    if number > rig.frames {
        return;
    }
    let (load, stamp) = (rig.load.clone(), rig.stamp.clone());
    let submitted = frame.submit(Sim, move |batch, context| {
        batch.fill(load.whole(), &(number as u32).to_le_bytes()).wait(context.previous()).submit()?;
        batch.fill(stamp.whole(), &(number as u32).to_le_bytes()).submit()
    });
    let asked = frame.read_back(Sim, &rig.stamp, .., Stamp(number));
    if let Err(error) = submitted.and(asked) {
        log.wrong.push(error.to_string());
    }
}

fn failures(
    log: Res<Shared>,
    mut failures: MessageReader<QueueFailed>,
    mut refused: MessageReader<SubmitRefused>,
    mut stalled: MessageReader<FrameStalled>,
) {
    let mut log = log.0.lock().unwrap();
    log.wrong.extend(failures.read().map(|failure| format!("{failure:?}")));
    log.wrong.extend(refused.read().map(|refused| format!("{refused:?}")));
    log.wrong.extend(stalled.read().map(|stalled| format!("{stalled:?}")));
}

fn receive(
    frame: Res<AqueductFrame>,
    rig: Res<Rig>,
    log: Res<Shared>,
    mut readbacks: MessageReader<Readback<u32, Stamp>>,
    mut exit: MessageWriter<AppExit>,
) {
    let mut log = log.0.lock().unwrap();
    for readback in readbacks.read() {
        if readback.tag != Stamp(readback.frame) || readback.data.iter().any(|word| u64::from(*word) != readback.frame)
        {
            log.wrong.push(format!("frame {}: {:?} {:?}", readback.frame, readback.tag, &readback.data[..2]));
        }
        log.arrivals.push((readback.frame, frame.frame()));
    }
    // Every read-back is due `limit` frames after its own; a few more frames catch one that is not.
    let last_due = rig.frames + u64::from(frame.frames_in_flight().get()) + 2;
    if log.arrivals.len() as u64 == rig.frames || frame.frame() > last_due || !log.wrong.is_empty() {
        exit.write(AppExit::Success);
    }
}

/// Runs `frames` frames (and the few after, until the read-backs are in) with the plugin's
/// limit, or the default.
fn run(frames: u64, limit: Option<NonZeroU32>) -> (Log, u32) {
    let mut plugin = AqueductPlugin::new("soft").unwrap().lane(Sim, QueueConfig::new()).readback::<u32, Stamp>();
    if let Some(limit) = limit {
        plugin = plugin.frames_in_flight(limit);
    }
    let limit = plugin.frames_in_flight.get();
    let mut app = App::new();
    app.add_plugins(MinimalPlugins).add_plugins(plugin);
    let device = app.world().resource::<AqueductDevice>().device().unwrap().clone();
    let rig = Rig {
        frames,
        load: device.allocate(MemoryKind::DeviceLocal, LOAD_BYTES).unwrap(),
        stamp: device.allocate_typed(MemoryKind::HostVisible, 4).unwrap(),
    };
    let log = Shared::default();
    app.insert_resource(rig)
        .insert_resource(log.clone())
        .add_systems(Update, (failures, receive, record.in_set(Sim)).chain());
    assert!(app.run().is_success());
    let log = std::mem::take(&mut *log.0.lock().unwrap());
    (log, limit)
}

/// The lag and arrival bounds, checked; returns how often each lag and each lateness occurred.
fn check(frames: u64, log: &Log, limit: u32) -> (Vec<usize>, Vec<usize>) {
    let limit = u64::from(limit);
    assert!(log.wrong.is_empty(), "{:?}", log.wrong);
    let worst = log.lags.iter().max().copied().unwrap();
    assert!(worst <= limit, "the timeline trailed the app by {worst} frames, more than the limit {limit}");
    assert_eq!(log.arrivals.len() as u64, frames, "every read-back arrived");
    for (index, (asked, arrived)) in log.arrivals.iter().enumerate() {
        assert_eq!(*asked, index as u64 + 1, "read-backs arrive in frame order");
        assert!(
            (1..=limit).contains(&(arrived - asked)),
            "frame {asked}'s read-back arrived in frame {arrived}, not within 1..={limit} frames"
        );
    }
    let mut lags = vec![0; limit as usize + 1];
    for lag in &log.lags {
        lags[*lag as usize] += 1;
    }
    let mut lateness = vec![0; limit as usize + 1];
    for (asked, arrived) in &log.arrivals {
        lateness[(arrived - asked) as usize] += 1;
    }
    eprintln!("limit {limit}: frames by lag {lags:?}, read-backs by frames late {lateness:?}");
    (lags, lateness)
}

#[test]
fn an_uncapped_loop_stays_within_the_default_limit() {
    const FRAMES: u64 = 3000;
    let (log, limit) = run(FRAMES, None);
    assert_eq!(limit, 2, "the default limit");
    let (lags, _) = check(FRAMES, &log, limit);
    // The device is the slower side, so the host met the limit and was held back there.
    assert!(lags[2] > 0, "the lag never reached the limit: the test did not exercise it ({lags:?})");
}

#[test]
fn the_limit_is_configurable() {
    const FRAMES: u64 = 400;
    for limit in [1, 4] {
        let (log, limit) = run(FRAMES, NonZeroU32::new(limit));
        let (lags, lateness) = check(FRAMES, &log, limit);
        if limit == 1 {
            // Every frame waited for its own work: the next frame always sees it done.
            assert_eq!(lags[1] as u64, FRAMES + 1, "{lags:?}");
            assert_eq!(lateness[1] as u64, FRAMES, "{lateness:?}");
        }
    }
}
