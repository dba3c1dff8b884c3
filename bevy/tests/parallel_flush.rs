//! The per-frame flush over eight lanes' queue entities: in parallel, the lanes' batches are
//! recorded at the same time on the compute task pool (every lane's submitted operation meets every
//! other's inside one flush); one by one, on one thread and never two at once. Either way each
//! lane's read-backs carry exactly its own frame's data, in the order they were asked for, and
//! the frame timeline counts every frame. Its own binary: it sizes the process's compute task pool.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use aqueduct_bevy::{AqueductDevice, AqueductFrame, AqueductPlugin, FrameStalled, Readback, SubmitRefused};
use aqueduct_engine::{Buffer, MemoryKind, QueueConfig};
use bevy_app::{App, Update};
use bevy_ecs::prelude::*;
use bevy_tasks::{ComputeTaskPool, TaskPoolBuilder};
use common::lanes::{LANES, Lanes};

mod common;

const TIMEOUT: Duration = Duration::from_secs(60);

/// A read-back's tag: the lane and the frame that asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    lane: usize,
    frame: u64,
}

/// What lane `lane` writes in frame `frame`.
fn value(lane: usize, frame: u64) -> u32 {
    (lane as u32) << 24 | frame as u32
}

/// Each lane's operations of one flush check in here: how many are inside at once, the most
/// ever, and on which threads.
#[derive(Default)]
struct Meeting {
    inside: AtomicUsize,
    most: AtomicUsize,
    threads: Mutex<Vec<ThreadId>>,
}

impl Meeting {
    /// Enters, then waits up to `patience` for `expected` operations to be inside at once.
    fn meet(&self, expected: usize, patience: Duration) {
        let inside = self.inside.fetch_add(1, Ordering::AcqRel) + 1;
        self.most.fetch_max(inside, Ordering::AcqRel);
        self.threads.lock().unwrap().push(std::thread::current().id());
        let deadline = Instant::now() + patience;
        while self.most.load(Ordering::Acquire) < expected && Instant::now() < deadline {
            std::thread::yield_now();
        }
        self.inside.fetch_sub(1, Ordering::AcqRel);
    }
}

#[derive(Resource)]
struct Rig {
    buffers: Vec<Buffer<u32>>,
    meeting: Arc<Meeting>,
    /// How long an operation waits for the others in the first frame.
    patience: Duration,
}

#[derive(Resource, Default)]
struct Seen {
    readbacks: Vec<Readback<u32, Stamp>>,
    refused: Vec<SubmitRefused>,
    stalled: Vec<FrameStalled>,
}

/// Every lane fills its buffer with its value of the frame and asks for it back; in the first
/// frame its operation also waits until two lanes' operations were inside at once.
fn record(mut frame: ResMut<AqueductFrame>, rig: Res<Rig>) {
    let number = frame.frame();
    for (lane, buffer) in rig.buffers.iter().enumerate() {
        let (buffer_for_fill, meeting, patience) = (buffer.clone(), rig.meeting.clone(), rig.patience);
        frame
            .submit(LANES[lane], move |batch, context| {
                if number == 1 {
                    meeting.meet(2, patience);
                }
                batch
                    .fill(buffer_for_fill.whole(), &value(lane, number).to_le_bytes())
                    .wait(context.previous())
                    .submit()
            })
            .unwrap();
        frame.read_back(LANES[lane], buffer, .., Stamp { lane, frame: number }).unwrap();
    }
}

fn collect(
    mut seen: ResMut<Seen>,
    mut readbacks: MessageReader<Readback<u32, Stamp>>,
    mut refused: MessageReader<SubmitRefused>,
    mut stalled: MessageReader<FrameStalled>,
) {
    seen.readbacks.extend(readbacks.read().cloned());
    seen.refused.extend(refused.read().cloned());
    seen.stalled.extend(stalled.read().cloned());
}

/// Runs `frames` frames of eight lanes with the flush in parallel or not, until every read-back
/// arrived; returns what was seen and the meeting.
fn run(parallel: bool, frames: u64, patience: Duration) -> (App, Arc<Meeting>) {
    // Four threads whatever the host has, so that the parallel flush has threads to run on.
    ComputeTaskPool::get_or_init(|| TaskPoolBuilder::new().num_threads(4).build());
    let mut plugin = AqueductPlugin::new("soft").unwrap().parallel_flush(parallel).readback::<u32, Stamp>();
    for lane in LANES {
        plugin = plugin.lane(lane, QueueConfig::new());
    }
    let mut app = App::new();
    app.add_plugins(plugin);
    let device = app.world().resource::<AqueductDevice>().device().unwrap().clone();
    let buffers =
        (0..LANES.len()).map(|_| device.allocate_typed::<u32>(MemoryKind::DeviceLocal, 16).unwrap()).collect();
    let meeting = Arc::new(Meeting::default());
    app.insert_resource(Rig { buffers, meeting: meeting.clone(), patience })
        .init_resource::<Seen>()
        .add_systems(Update, (collect, record.in_set(Lanes::L0)).chain());
    let expected = frames as usize * LANES.len();
    let deadline = Instant::now() + TIMEOUT;
    while app.world().resource::<AqueductFrame>().frame() <= frames
        || app.world().resource::<Seen>().readbacks.len() < expected
    {
        assert!(Instant::now() < deadline, "the read-backs never all arrived");
        if app.world().resource::<AqueductFrame>().frame() > frames {
            // Only deliver from here on: stop submitting new frames' work.
            app.world_mut().resource_mut::<Rig>().buffers.clear();
        }
        app.update();
    }
    (app, meeting)
}

/// Every lane's read-backs carry its own value of their frame, arrive in frame order, and the
/// timeline counts every frame.
fn check(app: &App, frames: u64) {
    let seen = app.world().resource::<Seen>();
    assert!(seen.refused.is_empty() && seen.stalled.is_empty(), "{:?} {:?}", seen.refused, seen.stalled);
    for lane in 0..LANES.len() {
        let mine: Vec<&Readback<u32, Stamp>> =
            seen.readbacks.iter().filter(|readback| readback.tag.lane == lane).collect();
        assert_eq!(mine.len() as u64, frames, "lane {lane}");
        for (index, readback) in mine.iter().enumerate() {
            let frame = index as u64 + 1;
            assert_eq!((readback.tag.frame, readback.frame), (frame, frame), "lane {lane}: in frame order");
            assert_eq!(readback.data, vec![value(lane, frame); 16], "lane {lane}, frame {frame}");
        }
    }
    let frame = app.world().resource::<AqueductFrame>();
    frame.timeline().unwrap().wait(frame.frame() - 1, TIMEOUT).unwrap();
    assert_eq!(frame.completed(), frame.frame() - 1, "the timeline counts every flushed frame");
}

#[test]
fn eight_lanes_flush_at_once_in_parallel_and_one_by_one_otherwise() {
    const FRAMES: u64 = 6;
    let (app, meeting) = run(true, FRAMES, Duration::from_secs(10));
    check(&app, FRAMES);
    // Two lanes' operations were inside the first flush at once: they waited for each other,
    // which a flush one lane at a time could not let them do (it waits out the patience).
    assert!(meeting.most.load(Ordering::Acquire) >= 2, "at most {} lane at once", meeting.most.load(Ordering::Acquire));
    assert_eq!(meeting.threads.lock().unwrap().len(), LANES.len());

    // One by one: never two at once, all on the thread that runs the flush.
    let (app, meeting) = run(false, FRAMES, Duration::from_millis(20));
    check(&app, FRAMES);
    assert_eq!(meeting.most.load(Ordering::Acquire), 1);
    let threads = meeting.threads.lock().unwrap();
    assert_eq!(threads.len(), LANES.len());
    assert!(threads.iter().all(|thread| *thread == threads[0]), "{threads:?}");
}
