//! aqueduct-bevy: AMD compute submitted and flushed in a Bevy app's own frame.
//!
//! [`AqueductPlugin`] opens an engine (default device `auto`), makes one queue per *lane*, and
//! inserts the resources [`AqueductDevice`], [`AqueductQueues`] and [`AqueductFrame`]. User
//! systems submit work for a lane through [`AqueductFrame`]; in [`PostUpdate`],
//! [`AqueductSystems::Flush`] publishes each lane's work for the frame as one batch, so one
//! frame's work reaches each queue with one doorbell. The engine's stages are ECS systems too,
//! but not the app's: each lane's batch ([`Queue::batch`]) runs them at its flush
//! ([`Batch::flush`]) as that queue's own schedule, in the queue's own World, on the flushing
//! thread. Work that retires later is drained by a later pass or by the queue's completion
//! thread.
//!
//! - **Lanes are labels.** A lane is a type that is a [`SystemSet`] and implements [`Lane`]:
//!   `#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)] struct Physics;` and
//!   `impl Lane for Physics {}` (an enum gives one lane per variant). [`AqueductPlugin::lane`]
//!   registers it with its [`QueueConfig`], priority included; systems that feed it go in that
//!   set (`step.in_set(Physics)`), which the plugin places in [`AqueductSystems::Record`]. Work
//!   or a read-back for a lane that was never registered is refused where it is asked for, with
//!   [`AqueductError::UnknownLane`]; a lane registered twice makes the plugin unavailable, with
//!   that reason.
//! - **Frame timeline.** Frame `N`'s work on every lane raises [`AqueductFrame::timeline`] to
//!   `N`; work of frame `N + 1` waits on [`FrameContext::previous`] on the device, with no host
//!   stall.
//! - **Frames in flight.** [`AqueductPlugin::frames_in_flight`] sets a limit `L` (default
//!   [`DEFAULT_FRAMES_IN_FLIGHT`], 2). After frame `N`'s flush has published its work, it waits
//!   on the host until frame `N + 1 - L` finished on the frame timeline. So at most `L` frames
//!   are ever in flight, and outside the flush [`AqueductFrame::frame`] minus
//!   [`AqueductFrame::completed`] is at most `L`. With `L = 1` every frame waits for its own work.
//!   The wait takes [`AqueductPlugin::frame_timeout`]; when it runs out the flush sends
//!   [`FrameStalled`] and the app goes on.
//! - **Read-backs.** [`AqueductFrame::read_back`] asks for elements of a `Buffer<T>` as they are
//!   once the lane's work of this frame is done. [`AqueductSystems::Begin`] (in [`PreUpdate`])
//!   polls, never blocks, and delivers each as a [`Readback<T, Tag>`](Readback) message with the
//!   caller's tag: a read-back asked for in frame `F` arrives in frame `F + 1` at the earliest and
//!   `F + L` at the latest, readable by that frame's [`Update`] systems. Each `Readback<T, Tag>`
//!   type is registered with [`AqueductPlugin::readback`], as Bevy messages are; asking for one
//!   that was not is [`AqueductError::ReadbackNotRegistered`].
//! - **Failures.** A lane whose queue failed sends one [`QueueFailed`] message and logs the
//!   failure record; an operation refused at the flush sends [`SubmitRefused`].
//! - **No device.** If the engine cannot open, the plugin logs why and the app runs on without
//!   compute: every resource still exists, [`aqueduct_available`] is false (gate systems with
//!   `run_if(aqueduct_available)`), and work or read-backs asked for return
//!   [`AqueductError::Unavailable`] with the reason. Nothing panics.
//!
//! ```
//! use aqueduct_bevy::{AqueductDevice, AqueductFrame, AqueductPlugin, Lane, Readback, aqueduct_available};
//! use aqueduct_engine::prelude::*;
//! use bevy_app::{App, Update};
//! use bevy_ecs::prelude::*;
//!
//! #[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
//! struct Physics;
//! impl Lane for Physics {}
//!
//! /// The read-back's tag: which data it is.
//! struct Heights;
//!
//! #[derive(Resource)]
//! struct Terrain(Buffer<f32>);
//!
//! fn step(mut frame: ResMut<AqueductFrame>, terrain: Res<Terrain>) {
//!     let heights = terrain.0.clone();
//!     let value = frame.frame() as f32;
//!     let submitted = frame.submit(Physics, move |batch, context| {
//!         batch.fill(heights.whole(), &value.to_le_bytes()).wait(context.previous()).submit()
//!     });
//!     let asked = frame.read_back(Physics, &terrain.0, .., Heights);
//!     if let Err(error) = submitted.and(asked) {
//!         eprintln!("{error}");
//!     }
//! }
//!
//! fn land(mut readbacks: MessageReader<Readback<f32, Heights>>) {
//!     for readback in readbacks.read() {
//!         assert!(readback.data.iter().all(|height| *height == readback.frame as f32));
//!     }
//! }
//!
//! let mut app = App::new();
//! app.add_plugins(
//!     AqueductPlugin::new("soft")?
//!         .lane(Physics, QueueConfig::new().priority(QueuePriority::High))
//!         .readback::<f32, Heights>(),
//! );
//! let heights = app.world().resource::<AqueductDevice>().device()?.allocate_typed(MemoryKind::DeviceLocal, 64)?;
//! app.insert_resource(Terrain(heights))
//!     .add_systems(Update, (land, step.in_set(Physics)).chain().run_if(aqueduct_available));
//! for _ in 0..4 {
//!     app.update();
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

mod flush;

use std::any::TypeId;
use std::num::NonZeroU32;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;
use std::time::Duration;

use aqueduct_engine::{
    Batch, Buffer, Device, Engine, EngineConfig, EngineResult, FailureRecord, MemoryKind, PoolConfig, Queue,
    QueueConfig, Semaphore, SemaphorePoint,
};
use bevy_app::{App, Plugin, PostUpdate, PreUpdate, Update};
use bevy_ecs::intern::Interned;
use bevy_ecs::message::Message;
use bevy_ecs::prelude::*;
use bytemuck::Pod;
use smallbox::space::S8;
use smallbox::{SmallBox, smallbox};

/// How many frames may be in flight unless [`AqueductPlugin::frames_in_flight`] says otherwise.
pub const DEFAULT_FRAMES_IN_FLIGHT: NonZeroU32 = NonZeroU32::new(2).expect("2 is not 0");

/// How long a flush waits for an earlier frame unless [`AqueductPlugin::frame_timeout`] says
/// otherwise. Long: it only catches a stalled device.
pub const DEFAULT_FRAME_TIMEOUT: Duration = Duration::from_secs(10);

/// A lane: a queue of its own, named by a label type that is also the [`SystemSet`] of the
/// systems feeding it.
///
/// ```
/// use aqueduct_bevy::Lane;
/// use bevy_ecs::prelude::*;
///
/// #[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
/// struct Physics;
/// impl Lane for Physics {}
///
/// #[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
/// enum Streaming {
///     Textures,
///     Meshes,
/// }
/// impl Lane for Streaming {}
/// ```
pub trait Lane: SystemSet {}

/// A lane, whatever its type: what resources and messages name lanes by. Equal to the label it
/// was made from, and shown as that label's `Debug`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaneId(Interned<dyn SystemSet>);

impl LaneId {
    /// The id of `lane`.
    pub fn of(lane: impl Lane) -> Self {
        Self(lane.intern())
    }

    /// Whether this is `lane`.
    pub fn is(&self, lane: impl Lane) -> bool {
        self.0 == lane.intern()
    }
}

impl std::fmt::Debug for LaneId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl std::fmt::Display for LaneId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// The lane a plugin without [`AqueductPlugin::lane`] calls makes.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DefaultLane;

impl Lane for DefaultLane {}

/// Why the plugin refused what a system asked of it. Returned where it was asked, so a typo'd
/// lane or a missing registration fails at the call, not later in a log.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AqueductError {
    /// The engine could not open (or the plugin's settings were refused): nothing runs.
    #[error("aqueduct is unavailable: {reason}")]
    Unavailable {
        /// Why, as the plugin logged it when it was built.
        reason: String,
    },
    /// The lane was never registered with [`AqueductPlugin::lane`].
    #[error("lane {lane} was never registered with AqueductPlugin::lane")]
    UnknownLane {
        /// The lane asked for.
        lane: LaneId,
    },
    /// The read-back's message type was never registered with [`AqueductPlugin::readback`].
    #[error("{message} was never registered with AqueductPlugin::readback")]
    ReadbackNotRegistered {
        /// The message type's name.
        message: &'static str,
    },
    /// The elements asked for are empty, outside the buffer, or of a zero-sized type.
    #[error("read-back of elements {start}..{end} of a {length}-element buffer of {element}")]
    InvalidReadback {
        /// The first element asked for.
        start: u64,
        /// One past the last element asked for.
        end: u64,
        /// The buffer's length in elements.
        length: u64,
        /// The element type's name.
        element: &'static str,
    },
}

/// A `Readback<T, Tag>` message type the plugin registers.
#[derive(Clone, Debug)]
struct ReadbackRegistration {
    message: TypeId,
    register: fn(&mut App),
}

/// The plugin: which device, which lanes (queues) with which settings, how many frames may be in
/// flight, and which read-back messages it delivers.
#[derive(Clone, Debug)]
pub struct AqueductPlugin {
    /// The engine's settings; `device` defaults to `auto`.
    pub config: EngineConfig,
    /// Lanes in order, each with its queue's settings. None given: one lane, [`DefaultLane`].
    pub lanes: Vec<(LaneId, QueueConfig)>,
    /// The most frames in flight (see the crate documentation for what that bounds).
    pub frames_in_flight: NonZeroU32,
    /// How long a flush waits for the frame `frames_in_flight` before it.
    pub frame_timeout: Duration,
    /// Whether the flush publishes the lanes in parallel (one task per lane on Bevy's compute
    /// task pool, where it has more than one thread) or one by one. Default: in parallel.
    pub parallel_flush: bool,
    readbacks: Vec<ReadbackRegistration>,
}

impl Default for AqueductPlugin {
    fn default() -> Self {
        Self {
            config: EngineConfig::default(),
            lanes: Vec::new(),
            frames_in_flight: DEFAULT_FRAMES_IN_FLIGHT,
            frame_timeout: DEFAULT_FRAME_TIMEOUT,
            parallel_flush: true,
            readbacks: Vec::new(),
        }
    }
}

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

    /// Adds a lane: a queue made with `queue`, fed by systems in the set `lane`.
    pub fn lane(mut self, lane: impl Lane, queue: QueueConfig) -> Self {
        self.lanes.push((LaneId::of(lane), queue));
        self
    }

    /// At most `limit` frames in flight: frame `N`'s flush waits for frame `N + 1 - limit`.
    pub fn frames_in_flight(mut self, limit: NonZeroU32) -> Self {
        self.frames_in_flight = limit;
        self
    }

    /// How long a flush waits for an earlier frame before it sends [`FrameStalled`].
    pub fn frame_timeout(mut self, timeout: Duration) -> Self {
        self.frame_timeout = timeout;
        self
    }

    /// Whether the flush publishes the lanes in parallel (the default) or one by one. One by
    /// one keeps the flush on the thread that runs it; in parallel, each lane's batch is a task
    /// of Bevy's compute task pool, so a frame's flush costs about its largest lane's.
    pub fn parallel_flush(mut self, parallel: bool) -> Self {
        self.parallel_flush = parallel;
        self
    }

    /// Registers the message [`Readback<T, Tag>`](Readback), which
    /// [`AqueductFrame::read_back`] then delivers.
    pub fn readback<T: Pod + Send + Sync, Tag: Send + Sync + 'static>(mut self) -> Self {
        fn register<M: Message>(app: &mut App) {
            app.add_message::<M>();
        }
        self.readbacks.push(ReadbackRegistration {
            message: TypeId::of::<Readback<T, Tag>>(),
            register: register::<Readback<T, Tag>>,
        });
        self
    }

    /// The lanes to make: the ones named, or [`DefaultLane`]; a lane named twice is refused.
    fn lanes_to_make(&self) -> Result<Vec<(LaneId, QueueConfig)>, String> {
        if self.lanes.is_empty() {
            return Ok(vec![(LaneId::of(DefaultLane), QueueConfig::new())]);
        }
        for (index, (lane, _)) in self.lanes.iter().enumerate() {
            if self.lanes[..index].iter().any(|(earlier, _)| earlier == lane) {
                return Err(format!("lane {lane} is registered twice"));
            }
        }
        Ok(self.lanes.clone())
    }
}

/// The system sets of a frame, in order: [`Self::Begin`] in [`PreUpdate`], [`Self::Record`] in
/// [`Update`] (every lane's set is inside it), [`Self::Flush`] then [`Self::Pace`] in [`PostUpdate`].
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AqueductSystems {
    /// Delivers finished read-backs, reports failed queues.
    Begin,
    /// Where user systems submit compute work.
    Record,
    /// Publishes each lane's submitted work (one batch, one doorbell per queue): one run over every
    /// lane's queue entity, in parallel across lanes (see [`AqueductPlugin::parallel_flush`]).
    Flush,
    /// After [`Self::Flush`]: waits until frame `N + 1 - limit` is done, so that the next frame
    /// makes at most `limit` in flight, and sends what the flush refused. Systems placed between
    /// the two run on the host while the frame's work runs on the device.
    Pace,
}

/// A run condition: whether the engine opened. Systems that need compute run with
/// `run_if(aqueduct_available)`; false without the plugin too.
pub fn aqueduct_available(device: Option<Res<AqueductDevice>>) -> bool {
    device.is_some_and(|device| device.is_available())
}

/// The engine, and so its device; or why it could not open.
#[derive(Resource)]
pub struct AqueductDevice(Result<Engine, AqueductError>);

impl AqueductDevice {
    /// Whether the engine opened.
    pub fn is_available(&self) -> bool {
        self.0.is_ok()
    }

    /// The engine, or [`AqueductError::Unavailable`].
    pub fn engine(&self) -> Result<&Engine, AqueductError> {
        self.0.as_ref().map_err(Clone::clone)
    }

    /// The device, or [`AqueductError::Unavailable`].
    pub fn device(&self) -> Result<&Device, AqueductError> {
        self.engine().map(Engine::device)
    }
}

/// The lanes' queues, in the order the plugin registered them (none when unavailable).
#[derive(Resource, Clone)]
pub struct AqueductQueues {
    lanes: Vec<(LaneId, Queue)>,
    unavailable: Option<AqueductError>,
}

impl AqueductQueues {
    /// The queue of `lane`.
    pub fn get(&self, lane: impl Lane) -> Result<&Queue, AqueductError> {
        if let Some(unavailable) = &self.unavailable {
            return Err(unavailable.clone());
        }
        let lane = LaneId::of(lane);
        self.lanes.iter().find(|(id, _)| *id == lane).map(|(_, queue)| queue).ok_or(AqueductError::UnknownLane { lane })
    }

    /// Every lane and its queue.
    pub fn iter(&self) -> impl Iterator<Item = (LaneId, &Queue)> {
        self.lanes.iter().map(|(lane, queue)| (*lane, queue))
    }
}

/// What a submitted operation sees: the frame and its timeline.
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

/// A submitted operation, run once by its lane's flush.
trait FrameOperation: Send + Sync {
    /// Runs the operation; it is called once.
    fn run(&mut self, batch: &mut Batch<'_>, context: &FrameContext<'_>) -> EngineResult<()>;
}

/// A submitted closure, taken out when it runs so that its box outlives the call.
struct RunOnce<F>(Option<F>);

impl<F> FrameOperation for RunOnce<F>
where
    F: FnOnce(&mut Batch<'_>, &FrameContext<'_>) -> EngineResult<()> + Send + Sync,
{
    fn run(&mut self, batch: &mut Batch<'_>, context: &FrameContext<'_>) -> EngineResult<()> {
        self.0.take().map_or(Ok(()), |operation| operation(batch, context))
    }
}

/// A [`FrameOperation`] stored inline when it fits in 64 bytes (a closure capturing a few buffers
/// and values), on the heap otherwise. Inline, a frame's operations take no allocation: boxed, the
/// flush's lanes freed on their tasks boxes made on one thread, contending for that thread's heap
/// (a glibc arena and its lock), which cost the parallel flush of 8 lanes half its time on 16 cores.
type BoxedOperation = SmallBox<dyn FrameOperation, S8>;

/// Reads a finished snapshot and writes its typed message.
type Deliver = Box<dyn FnOnce(&Buffer, u64, &mut Commands) -> EngineResult<()> + Send + Sync>;

/// What the frame keeps of a lane; its queue is its entity's [`flush::LaneQueue`].
struct LaneState {
    lane: LaneId,
    /// The lane's queue entity.
    entity: Entity,
    /// Raised to `N` when the lane's work of frame `N` is done; fails only with the lane's queue.
    done: Semaphore,
    /// Operations submitted for this frame, moved to the lane's entity at the flush.
    operations: Vec<BoxedOperation>,
    reported: bool,
}

struct PendingReadback {
    lane: usize,
    frame: u64,
    /// The byte range asked for.
    source: Buffer,
    offset: u64,
    length: u64,
    /// The copy the flush made of it in the lane's frame: host-visible, read once the frame is done.
    snapshot: Option<Buffer>,
    deliver: Deliver,
}

/// This frame's submitted work and the frame timeline. Exists whether or not the engine opened.
#[derive(Resource)]
pub struct AqueductFrame {
    frame: u64,
    /// The frame timeline, or why there is none.
    timeline: Result<Semaphore, AqueductError>,
    frames_in_flight: NonZeroU32,
    frame_timeout: Duration,
    /// Whether the flush runs lanes in parallel where the compute task pool has threads.
    parallel: bool,
    lanes: Vec<LaneState>,
    readbacks: Vec<PendingReadback>,
    /// The `Readback<T, Tag>` types the plugin registered.
    readback_messages: Vec<TypeId>,
    refused: Vec<(LaneId, String)>,
}

impl AqueductFrame {
    /// The frame now being recorded (the first is 1).
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// Raised to `N` once every lane finished frame `N`'s work; [`AqueductError::Unavailable`]
    /// without a device.
    pub fn timeline(&self) -> Result<&Semaphore, AqueductError> {
        self.timeline.as_ref().map_err(Clone::clone)
    }

    /// The last frame every lane finished (the timeline's value; 0 before any, and without a
    /// device). Outside the flush, `frame() - completed()` is at most the frames-in-flight limit.
    pub fn completed(&self) -> u64 {
        self.timeline.as_ref().map_or(0, Semaphore::value)
    }

    /// The most frames in flight.
    pub fn frames_in_flight(&self) -> NonZeroU32 {
        self.frames_in_flight
    }

    fn lane_index(&self, lane: impl Lane) -> Result<usize, AqueductError> {
        if let Err(unavailable) = &self.timeline {
            return Err(unavailable.clone());
        }
        let lane = LaneId::of(lane);
        self.lanes.iter().position(|state| state.lane == lane).ok_or(AqueductError::UnknownLane { lane })
    }

    /// Stages `operation` on `lane` for this frame: it runs at the flush, on the lane's batch,
    /// after what earlier systems submitted there. Refused here if the lane is unknown or the
    /// device unavailable; an `Err` from `operation` at the flush is sent as [`SubmitRefused`].
    pub fn submit(
        &mut self,
        lane: impl Lane,
        operation: impl FnOnce(&mut Batch<'_>, &FrameContext<'_>) -> EngineResult<()> + Send + Sync + 'static,
    ) -> Result<(), AqueductError> {
        let index = self.lane_index(lane)?;
        self.lanes[index].operations.push(smallbox!(RunOnce(Some(operation))));
        Ok(())
    }

    /// Reads `elements` of `source` back as they are when `lane` finished this frame's work,
    /// delivered as a [`Readback<T, Tag>`](Readback) carrying `tag` (see the crate documentation
    /// for when). The flush copies the range, in the lane's queue order, into host-visible memory
    /// from the lane's read-back pool, so later frames may overwrite `source` at once. Refused here
    /// if the lane is unknown, the device unavailable, the message type unregistered, or the
    /// range empty or out of bounds.
    pub fn read_back<T: Pod + Send + Sync, Tag: Send + Sync + 'static>(
        &mut self,
        lane: impl Lane,
        source: &Buffer<T>,
        elements: impl RangeBounds<u64>,
        tag: Tag,
    ) -> Result<(), AqueductError> {
        let index = self.lane_index(lane)?;
        if !self.readback_messages.contains(&TypeId::of::<Readback<T, Tag>>()) {
            return Err(AqueductError::ReadbackNotRegistered { message: std::any::type_name::<Readback<T, Tag>>() });
        }
        let start = match elements.start_bound() {
            Bound::Included(start) => *start,
            Bound::Excluded(start) => start.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let end = match elements.end_bound() {
            Bound::Included(end) => end.saturating_add(1),
            Bound::Excluded(end) => *end,
            Bound::Unbounded => source.len(),
        };
        let element = size_of::<T>() as u64;
        if element == 0 || start >= end || end > source.len() {
            return Err(AqueductError::InvalidReadback {
                start,
                end,
                length: source.len(),
                element: std::any::type_name::<T>(),
            });
        }
        let count = (end - start) as usize;
        self.readbacks.push(PendingReadback {
            lane: index,
            frame: self.frame,
            source: source.bytes().clone(),
            offset: start * element,
            length: (end - start) * element,
            snapshot: None,
            deliver: Box::new(move |snapshot, frame, commands| {
                let mut data = vec![T::zeroed(); count];
                snapshot.read(0, bytemuck::cast_slice_mut(&mut data))?;
                commands.write_message(Readback { tag, frame, data });
                Ok(())
            }),
        });
        Ok(())
    }
}

/// Elements read back, delivered in [`AqueductSystems::Begin`] once their frame is done.
/// Registered per type with [`AqueductPlugin::readback`].
#[derive(Clone, Debug)]
pub struct Readback<T, Tag> {
    /// The tag [`AqueductFrame::read_back`] was given.
    pub tag: Tag,
    /// The frame whose work produced the data.
    pub frame: u64,
    /// The elements, in order.
    pub data: Vec<T>,
}

impl<T: Pod + Send + Sync, Tag: Send + Sync + 'static> Message for Readback<T, Tag> {}

/// A lane's queue failed: its work of this and later frames will not run.
#[derive(Message, Clone, Debug)]
pub struct QueueFailed {
    /// The lane.
    pub lane: LaneId,
    /// What failed, as the engine recorded it.
    pub record: Arc<FailureRecord>,
}

/// Something a system asked for was refused when it was flushed (bad input the engine caught,
/// a read-back that could not be submitted or read): it did not happen.
#[derive(Message, Clone, Debug)]
pub struct SubmitRefused {
    /// The lane it was submitted for.
    pub lane: LaneId,
    /// The engine's error.
    pub error: String,
}

/// A flush waited [`AqueductPlugin::frame_timeout`] for an earlier frame and went on without
/// it: the device is stalled or far behind, and more frames than the limit are in flight until
/// it catches up.
#[derive(Message, Clone, Debug)]
pub struct FrameStalled {
    /// The frame whose flush waited.
    pub frame: u64,
    /// The frame it waited for.
    pub waited_for: u64,
    /// The engine's error (its timeout).
    pub error: String,
}

impl Plugin for AqueductPlugin {
    fn build(&self, app: &mut App) {
        app.add_message::<QueueFailed>().add_message::<SubmitRefused>().add_message::<FrameStalled>();
        for registration in &self.readbacks {
            (registration.register)(app);
        }
        app.configure_sets(PostUpdate, (AqueductSystems::Flush, AqueductSystems::Pace).chain()).add_systems(
            PostUpdate,
            (flush::flush_frame.in_set(AqueductSystems::Flush), flush::pace_frame.in_set(AqueductSystems::Pace)),
        );
        let opened =
            self.lanes_to_make().and_then(|lanes| open(&self.config, lanes).map_err(|error| error.to_string()));
        let (engine, timeline, queues) = match opened {
            Ok(opened) => opened,
            Err(reason) => {
                tracing::error!(%reason, "aqueduct could not open; the app runs without compute");
                let unavailable = AqueductError::Unavailable { reason };
                app.insert_resource(AqueductQueues { lanes: Vec::new(), unavailable: Some(unavailable.clone()) })
                    .insert_resource(self.frame(Err(unavailable.clone()), Vec::new()))
                    .insert_resource(AqueductDevice(Err(unavailable)));
                return;
            }
        };
        let mut lanes = Vec::with_capacity(queues.len());
        let named = queues.iter().map(|queue| (queue.lane, queue.queue.clone())).collect();
        for queue in queues {
            app.configure_sets(Update, queue.lane.0.in_set(AqueductSystems::Record));
            let (lane, done) = (queue.lane, queue.done.clone());
            let entity = app.world_mut().spawn(queue).id();
            lanes.push(LaneState { lane, entity, done, operations: Vec::new(), reported: false });
        }
        app.insert_resource(AqueductQueues { lanes: named, unavailable: None })
            .insert_resource(self.frame(Ok(timeline), lanes))
            .insert_resource(AqueductDevice(Ok(engine)))
            .add_systems(PreUpdate, begin_frame.in_set(AqueductSystems::Begin));
    }
}

impl AqueductPlugin {
    /// The frame state before frame 1.
    fn frame(&self, timeline: Result<Semaphore, AqueductError>, lanes: Vec<LaneState>) -> AqueductFrame {
        AqueductFrame {
            frame: 1,
            timeline,
            frames_in_flight: self.frames_in_flight,
            frame_timeout: self.frame_timeout,
            parallel: self.parallel_flush,
            lanes,
            readbacks: Vec::new(),
            readback_messages: self.readbacks.iter().map(|registration| registration.message).collect(),
            refused: Vec::new(),
        }
    }
}

/// The engine, the frame timeline and the lanes' queues, in the order given.
fn open(
    config: &EngineConfig,
    lanes: Vec<(LaneId, QueueConfig)>,
) -> EngineResult<(Engine, Semaphore, Vec<flush::LaneQueue>)> {
    let engine = Engine::with_config(config.clone())?;
    let device = engine.device();
    let queues = lanes
        .into_iter()
        .map(|(lane, config)| {
            Ok(flush::LaneQueue::new(
                lane,
                device.create_queue_with(config)?,
                device.create_semaphore(0)?,
                device.create_pool(PoolConfig::new(MemoryKind::HostVisible).slab_size(1 << 20))?,
            ))
        })
        .collect::<EngineResult<Vec<_>>>()?;
    let timeline = device.create_semaphore(0)?;
    Ok((engine, timeline, queues))
}

/// Delivers finished read-backs and reports failed queues; never blocks.
fn begin_frame(mut frame: ResMut<AqueductFrame>, mut commands: Commands, mut failures: MessageWriter<QueueFailed>) {
    let frame = &mut *frame;
    // The timeline covers every lane; a lane's own point covers it even once another failed.
    let completed = frame.timeline.as_ref().map_or(0, Semaphore::value);
    for pending in std::mem::take(&mut frame.readbacks) {
        let lane = &frame.lanes[pending.lane];
        if lane.done.failure().is_some() {
            // Its frame will never finish; `QueueFailed` says why.
            continue;
        }
        if completed < pending.frame && lane.done.value() < pending.frame {
            frame.readbacks.push(pending);
            continue;
        }
        // No snapshot: its alloca or copy was refused, and `SubmitRefused` said so.
        let Some(snapshot) = &pending.snapshot else { continue };
        if let Err(error) = (pending.deliver)(snapshot, pending.frame, &mut commands) {
            tracing::error!(lane = %lane.lane, %error, "aqueduct read-back failed");
            frame.refused.push((lane.lane, format!("read-back: {error}")));
        }
    }
    for lane in frame.lanes.iter_mut().filter(|lane| !lane.reported) {
        if let Some(record) = lane.done.failure() {
            lane.reported = true;
            tracing::error!(lane = %lane.lane, status = ?record.status, message = %record.message, "aqueduct queue failed");
            failures.write(QueueFailed { lane: lane.lane, record });
        }
    }
}

/// The README's examples, compiled and run as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
