//! aqueduct-bevy: AMD compute in a Bevy app's own frame.
//!
//! [`AqueductPlugin`] opens an engine (default device `auto`), makes one queue per *lane*, and
//! inserts them as resources: [`AqueductDevice`] and [`AqueductQueues`]. User systems stage work
//! for a lane through [`AqueductFrame`]; in [`PostUpdate`], [`AqueductSystems::Flush`] publishes
//! each lane's work for the frame as one batch, so one frame's work reaches each queue with one
//! doorbell. The engine's stages are ECS systems too; here they run inside the app's frame.
//!
//! - **Frame timeline.** Frame `N`'s work on every lane raises [`AqueductFrame::timeline`] to
//!   `N`; work of frame `N + 1` waits on [`FrameContext::previous`] on the device, with no host
//!   stall.
//! - **Read-backs.** [`AqueductFrame::read_back`] asks for a buffer range once the lane's work of
//!   this frame is done. [`AqueductSystems::Begin`] (in [`PreUpdate`]) polls, never blocks, and
//!   delivers each as a [`Readback`] message a frame or more later.
//! - **Failures.** A lane whose queue failed sends one [`QueueFailed`] message and logs the
//!   failure record; an operation refused at flush sends [`SubmitRefused`].
//! - **No device.** If the engine cannot open, the plugin logs why and inserts
//!   [`AqueductUnavailable`] instead of the device resources; nothing panics.
//! - **Lanes and priorities.** [`AqueductPlugin::lane`] names a lane and its [`QueueConfig`],
//!   priority included; the [`Lane`] system set with that name lets systems say which lane they
//!   feed.
//!
//! ```no_run
//! use aqueduct_bevy::{AqueductFrame, AqueductPlugin, Lane};
//! use aqueduct_engine::{QueueConfig, QueuePriority};
//! use bevy_app::{App, Update};
//! use bevy_ecs::prelude::*;
//!
//! fn step(mut frame: ResMut<AqueductFrame>) {
//!     frame.submit("physics", |batch, context| {
//!         batch.barrier().wait(context.previous()).submit()
//!     });
//! }
//!
//! App::new()
//!     .add_plugins(AqueductPlugin::new("soft")?.lane("physics", QueueConfig::new().priority(QueuePriority::High)))
//!     .add_systems(Update, step.in_set(Lane("physics")))
//!     .update();
//! # Ok::<(), aqueduct_engine::EngineError>(())
//! ```

#![deny(missing_docs)]

use std::sync::Arc;

use aqueduct_engine::{
    Batch, Binding, Buffer, Device, Engine, EngineConfig, EngineResult, FailureRecord, MemoryKind, Pool, PoolConfig,
    Queue, QueueConfig, Semaphore, SemaphorePoint,
};
use bevy_app::{App, Plugin, PostUpdate, PreUpdate, Update};
use bevy_ecs::prelude::*;

/// The plugin: which device, and which lanes (queues) with which settings.
#[derive(Clone, Debug, Default)]
pub struct AqueductPlugin {
    /// The engine's settings; `device` defaults to `auto`.
    pub config: EngineConfig,
    /// Lanes in order: a name and its queue's settings. None given: one lane, [`DEFAULT_LANE`].
    pub lanes: Vec<(&'static str, QueueConfig)>,
}

/// The lane a plugin without [`AqueductPlugin::lane`] calls makes.
pub const DEFAULT_LANE: &str = "compute";

impl AqueductPlugin {
    /// On the device `spec` names (`auto`, `soft`, `amdgpu`, ...); a spec that does not parse
    /// is the engine's `InvalidDeviceSpec`.
    pub fn new(spec: &str) -> EngineResult<Self> {
        let mut plugin = Self::default();
        plugin.config.device = spec.parse()?;
        Ok(plugin)
    }

    /// With these engine settings.
    pub fn config(mut self, config: EngineConfig) -> Self {
        self.config = config;
        self
    }

    /// Adds a lane: a queue made with `queue`, fed by systems in [`Lane`]`(name)`.
    pub fn lane(mut self, name: &'static str, queue: QueueConfig) -> Self {
        self.lanes.push((name, queue));
        self
    }
}

/// The system sets of a frame, in order: [`Self::Begin`] in [`PreUpdate`], [`Self::Record`] in
/// [`Update`] (every [`Lane`] is inside it), [`Self::Flush`] in [`PostUpdate`].
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AqueductSystems {
    /// Advances the frame, delivers finished read-backs, reports failed queues.
    Begin,
    /// Where user systems stage compute work.
    Record,
    /// Publishes each lane's staged work: one batch, one doorbell per queue.
    Flush,
}

/// The systems feeding one lane (by name); inside [`AqueductSystems::Record`].
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Lane(pub &'static str);

/// Inserted instead of the device resources when the engine could not open (no GPU for an
/// `amdgpu` spec, a bad setting): the app runs on, without compute, and says why.
#[derive(Resource, Clone, Debug)]
pub struct AqueductUnavailable(pub String);

/// The engine, and so its device.
#[derive(Resource)]
pub struct AqueductDevice(pub Engine);

impl AqueductDevice {
    /// The device.
    pub fn device(&self) -> &Device {
        self.0.device()
    }
}

/// The lanes' queues, in the order the plugin named them.
#[derive(Resource, Clone)]
pub struct AqueductQueues {
    lanes: Vec<(&'static str, Queue)>,
}

impl AqueductQueues {
    /// The queue of lane `name`.
    pub fn get(&self, name: &str) -> Option<&Queue> {
        self.lanes.iter().find(|(lane, _)| *lane == name).map(|(_, queue)| queue)
    }

    /// Every lane's name and queue.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &Queue)> {
        self.lanes.iter().map(|(name, queue)| (*name, queue))
    }
}

/// What a staged operation sees: the frame and its timeline.
pub struct FrameContext<'a> {
    /// The frame being flushed (the first is 1).
    pub frame: u64,
    /// The frame timeline ([`AqueductFrame::timeline`]).
    pub timeline: &'a Semaphore,
}

impl FrameContext<'_> {
    /// The point where every lane finished the previous frame's work.
    pub fn previous(&self) -> SemaphorePoint<'_> {
        self.timeline.at(self.frame - 1)
    }
}

type Staged = Box<dyn FnOnce(&mut Batch<'_>, &FrameContext<'_>) -> EngineResult<()> + Send + Sync>;

struct LaneState {
    name: &'static str,
    queue: Queue,
    /// Raised to `N` when the lane's work of frame `N` is done.
    done: Semaphore,
    staged: Vec<Staged>,
    reported: bool,
    /// Host-visible memory read-backs are copied into, taken in queue order at each flush.
    staging: Pool,
}

struct PendingReadback {
    lane: usize,
    frame: u64,
    tag: u64,
    /// The range asked for.
    source: Buffer,
    offset: u64,
    length: u64,
    /// The copy the flush made of it in the lane's frame: host-visible, read once the frame is done.
    snapshot: Option<Buffer>,
}

/// This frame's staged work and the frame timeline.
#[derive(Resource)]
pub struct AqueductFrame {
    frame: u64,
    timeline: Semaphore,
    lanes: Vec<LaneState>,
    readbacks: Vec<PendingReadback>,
    refused: Vec<(&'static str, String)>,
}

impl AqueductFrame {
    /// The frame now being recorded (the first is 1).
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// Raised to `N` once every lane finished frame `N`'s work.
    pub fn timeline(&self) -> &Semaphore {
        &self.timeline
    }

    fn lane_index(&self, lane: &str) -> Option<usize> {
        self.lanes.iter().position(|state| state.name == lane)
    }

    /// Stages `operation` on lane `lane` for this frame: it runs at the flush, on the lane's
    /// batch, after what earlier systems staged there. An unknown lane, or an `Err` at the flush,
    /// is reported as [`SubmitRefused`].
    pub fn submit(
        &mut self,
        lane: &'static str,
        operation: impl FnOnce(&mut Batch<'_>, &FrameContext<'_>) -> EngineResult<()> + Send + Sync + 'static,
    ) {
        match self.lane_index(lane) {
            Some(index) => self.lanes[index].staged.push(Box::new(operation)),
            None => self.refused.push((lane, format!("no lane named `{lane}`"))),
        }
    }

    /// Reads `range` back as it is when lane `lane` finished this frame's work, delivered as a
    /// [`Readback`] with `tag` a frame or more later. The flush copies the range, in the lane's
    /// queue order, into host-visible memory from the lane's staging pool, so later frames may
    /// overwrite it at once.
    pub fn read_back(&mut self, lane: &'static str, range: Binding<'_>, tag: u64) {
        let Some(index) = self.lane_index(lane) else {
            self.refused.push((lane, format!("no lane named `{lane}`")));
            return;
        };
        self.readbacks.push(PendingReadback {
            lane: index,
            frame: self.frame,
            tag,
            source: range.buffer.clone(),
            offset: range.offset,
            length: range.length,
            snapshot: None,
        });
    }
}

/// A read-back's bytes, delivered in [`AqueductSystems::Begin`] once its frame is done.
#[derive(Message, Clone, Debug)]
pub struct Readback {
    /// The tag [`AqueductFrame::read_back`] was given.
    pub tag: u64,
    /// The frame whose work produced the bytes.
    pub frame: u64,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// A lane's queue failed: its work of this and later frames will not run.
#[derive(Message, Clone, Debug)]
pub struct QueueFailed {
    /// The lane.
    pub lane: &'static str,
    /// What failed, as the engine recorded it.
    pub record: Arc<FailureRecord>,
}

/// An operation a system staged was refused (bad input, an unknown lane): it staged nothing.
#[derive(Message, Clone, Debug)]
pub struct SubmitRefused {
    /// The lane it was staged for.
    pub lane: &'static str,
    /// The engine's error.
    pub error: String,
}

impl Plugin for AqueductPlugin {
    fn build(&self, app: &mut App) {
        app.add_message::<Readback>().add_message::<QueueFailed>().add_message::<SubmitRefused>();
        let opened = open(self);
        let (engine, frame, queues) = match opened {
            Ok(opened) => opened,
            Err(error) => {
                tracing::error!(%error, "aqueduct could not open; the app runs without compute");
                app.insert_resource(AqueductUnavailable(error.to_string()));
                return;
            }
        };
        for (name, _) in &queues.lanes {
            app.configure_sets(Update, Lane(name).in_set(AqueductSystems::Record));
        }
        app.insert_resource(queues)
            .insert_resource(frame)
            .insert_resource(AqueductDevice(engine))
            .add_systems(PreUpdate, begin_frame.in_set(AqueductSystems::Begin))
            .add_systems(PostUpdate, flush_frame.in_set(AqueductSystems::Flush));
    }
}

/// The engine, the frame state with its lanes, and the queues resource.
fn open(plugin: &AqueductPlugin) -> EngineResult<(Engine, AqueductFrame, AqueductQueues)> {
    let engine = Engine::with_config(plugin.config.clone())?;
    let lanes = if plugin.lanes.is_empty() { vec![(DEFAULT_LANE, QueueConfig::new())] } else { plugin.lanes.clone() };
    let device = engine.device();
    let lanes = lanes
        .into_iter()
        .map(|(name, config)| {
            Ok(LaneState {
                name,
                queue: device.create_queue_with(config)?,
                done: device.create_semaphore(0)?,
                staged: Vec::new(),
                reported: false,
                staging: device.create_pool(PoolConfig::new(MemoryKind::HostVisible).block_size(1 << 20))?,
            })
        })
        .collect::<EngineResult<Vec<LaneState>>>()?;
    let queues = AqueductQueues { lanes: lanes.iter().map(|lane| (lane.name, lane.queue.clone())).collect() };
    let frame = AqueductFrame {
        frame: 1,
        timeline: device.create_semaphore(0)?,
        lanes,
        readbacks: Vec::new(),
        refused: Vec::new(),
    };
    Ok((engine, frame, queues))
}

/// Delivers finished read-backs and reports failed queues; never blocks.
fn begin_frame(
    mut frame: ResMut<AqueductFrame>,
    mut readbacks: MessageWriter<Readback>,
    mut failures: MessageWriter<QueueFailed>,
) {
    let frame = &mut *frame;
    let lanes = &mut frame.lanes;
    frame.readbacks.retain(|pending| {
        let lane = &lanes[pending.lane];
        if lane.done.failure().is_some() {
            return false;
        }
        if lane.done.value() < pending.frame {
            return true;
        }
        let Some(snapshot) = &pending.snapshot else { return false };
        let mut bytes = vec![0; pending.length as usize];
        match snapshot.read(0, &mut bytes) {
            Ok(()) => {
                readbacks.write(Readback { tag: pending.tag, frame: pending.frame, bytes });
            }
            Err(error) => tracing::error!(lane = lane.name, %error, "aqueduct read-back failed"),
        }
        false
    });
    for lane in lanes.iter_mut().filter(|lane| !lane.reported) {
        if let Some(record) = lane.done.failure() {
            lane.reported = true;
            tracing::error!(lane = lane.name, status = ?record.status, message = %record.message, "aqueduct queue failed");
            failures.write(QueueFailed { lane: lane.name, record });
        }
    }
}

/// Publishes every lane's staged work as one batch (one doorbell), ending with a barrier that
/// raises the lane's frame point; the first lane, flushed last, also waits on the others and
/// raises the frame timeline.
fn flush_frame(mut frame: ResMut<AqueductFrame>, mut refused: MessageWriter<SubmitRefused>) {
    let frame = &mut *frame;
    let number = frame.frame;
    let context = FrameContext { frame: number, timeline: &frame.timeline };
    let order = (1..frame.lanes.len()).chain(0..1);
    let others: Vec<Semaphore> = frame.lanes[1..].iter().map(|lane| lane.done.clone()).collect();
    for index in order {
        let lane = &mut frame.lanes[index];
        let staged = std::mem::take(&mut lane.staged);
        // Snapshots are taken before the batch: an alloca is the queue's own call.
        for pending in frame.readbacks.iter_mut().filter(|pending| pending.lane == index && pending.frame == number) {
            match lane.queue.alloca(&lane.staging, pending.length.max(1)).submit() {
                Ok(snapshot) => pending.snapshot = Some(snapshot),
                Err(error) => frame.refused.push((lane.name, format!("read-back staging: {error}"))),
            }
        }
        let snapshots: Vec<(usize, &PendingReadback)> = frame
            .readbacks
            .iter()
            .enumerate()
            .filter(|(_, pending)| pending.lane == index && pending.frame == number && pending.snapshot.is_some())
            .collect();
        let mut failed_copies = Vec::new();
        let flushed = lane.queue.batch(|batch| {
            for operation in staged {
                if let Err(error) = operation(batch, &context) {
                    frame.refused.push((lane.name, error.to_string()));
                }
            }
            for (position, pending) in &snapshots {
                let snapshot = pending.snapshot.as_ref().expect("filtered");
                let range = pending.source.range(pending.offset, pending.length);
                if let Err(error) = batch.copy(range, snapshot.range(0, pending.length)).submit() {
                    frame.refused.push((lane.name, format!("read-back copy: {error}")));
                    failed_copies.push(*position);
                }
            }
            let end = batch.barrier().signal(lane.done.at(number));
            if index == 0 {
                let waits: Vec<SemaphorePoint<'_>> = others.iter().map(|done| done.at(number)).collect();
                end.waits(&waits).signal(frame.timeline.at(number)).submit()
            } else {
                end.submit()
            }
        });
        if let Err(error) = flushed {
            // The queue refuses work once it failed; `begin_frame` reports that with its record.
            tracing::debug!(lane = lane.name, %error, "aqueduct flush");
        }
        // A refused copy delivers nothing rather than stale bytes.
        for position in failed_copies {
            frame.readbacks[position].snapshot = None;
        }
    }
    for (lane, error) in frame.refused.drain(..) {
        tracing::warn!(lane, %error, "aqueduct operation refused");
        refused.write(SubmitRefused { lane, error });
    }
    frame.frame += 1;
}
