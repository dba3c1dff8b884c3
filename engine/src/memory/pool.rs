//! Memory pools and queue-ordered allocation: [`Pool`], made by `Device::create_pool`, hands out
//! buffers through `Queue::alloca` and takes them back through `Queue::dealloca`, in queue order
//! and without a host round trip.
//!
//! A pool is an entity of the device World ([`PoolEntity`]); its slabs are ordinary device
//! allocations (so trimming and dropping go through deferred release); each allocation is an
//! entity of the pool's own World with [`PoolRange`], [`OwningQueue`] and [`FreeAt`]. Entities
//! are recycled, not despawned, so a steady alloca/dealloca stream spawns nothing.
//!
//! Reuse rules, in the order `reserve` tries them:
//! 1. memory a dealloca on *this* queue returned, still in flight: at once (and warm), because
//!    every packet carries the barrier bit, so later work on the queue runs after the dealloca,
//!    which waited for every use its caller named;
//! 2. free memory: its dealloca's point was reached (its queue drained that dealloca), or the
//!    rows that could use it settled: anyone, at once;
//! 3. a new slab, within `max_size`;
//! 4. memory another queue's dealloca returned, still in flight: the alloca waits (device-side)
//!    on that queue's memory timeline at the dealloca's value, so its signals, which every user
//!    of the buffer waits on, come after the memory is dead. Only once the pool cannot grow: the
//!    wait ties this queue to the other's progress, a dependency the caller never asked for;
//! 5. otherwise [`Exhaustion`]: a typed error, or a wait (with a timeout) for in-flight deallocas
//!    to retire and coalesce, or for one not yet submitted.
//!
//! Lock order: the pool's lock is never held while enqueueing (a queue's lock), while allocating a
//! slab or while waiting. Under it only the device World is taken (a trimmed slab's deferred
//! release), and nothing that holds the device World takes a pool's lock.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use aqueduct_components::device_entities::{MemoryKind, PoolEntity};
use aqueduct_components::pool::{FreeAt, FreeRanges, OwningQueue, PoolRange};
use bevy_ecs::prelude::*;

use super::Buffer;
use crate::clock::deadline_after;
use crate::device::DeviceShared;
use crate::device::release::has_settled;
use crate::error::{EngineError, EngineResult};
use crate::replay_capture::names::{self, Named};
use crate::semaphore::Semaphore;

/// What a pool does with free slabs beyond its reserve.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TrimPolicy {
    /// Keep every slab until [`Pool::trim`] is called (a frame or batch loop that allocates
    /// the same sizes again pays no provider allocation).
    #[default]
    Manual,
    /// Give a slab back as soon as it is wholly free, while the pool holds more than its
    /// reserve.
    KeepReserve,
}

impl Named for TrimPolicy {
    const WHAT: &'static str = "trim policy";
    const NAMES: &'static [(Self, &'static str)] =
        &[(TrimPolicy::Manual, "manual"), (TrimPolicy::KeepReserve, "keep-reserve")];
}

/// What an alloca does when the pool cannot serve it and may not grow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Exhaustion {
    /// Fail with [`EngineError::PoolExhausted`].
    #[default]
    Fail,
    /// Wait up to this long for in-flight deallocas to retire (memory they return coalesces), or
    /// for a dealloca or drop on another thread, then fail.
    Wait(Duration),
}

impl Exhaustion {
    /// As the replay file names it: `fail` or `wait:<ns>`.
    pub(crate) fn replay_name(self) -> String {
        match self {
            Exhaustion::Fail => "fail".into(),
            Exhaustion::Wait(timeout) => format!("wait:{}", timeout.as_nanos()),
        }
    }

    /// The policy the replay file names `text`.
    pub(crate) fn parse_replay_name(text: &str) -> EngineResult<Self> {
        if text == "fail" {
            return Ok(Exhaustion::Fail);
        }
        text.strip_prefix("wait:")
            .and_then(|ns| ns.parse().ok())
            .map(|ns| Exhaustion::Wait(Duration::from_nanos(ns)))
            .ok_or_else(|| EngineError::InvalidArgument {
                what: "exhaustion",
                reason: format!("`{text}` is not fail or wait:<ns>"),
            })
    }
}

impl PoolConfig {
    /// The settings as the replay file names them.
    pub(crate) fn replay_settings(&self) -> aqueduct_profile::replay::PoolSettings {
        aqueduct_profile::replay::PoolSettings {
            kind: names::name(self.kind),
            agent: self.agent as u32,
            slab_size: self.slab_size,
            granule: self.granule,
            reserve: self.reserve,
            max_size: self.max_size,
            trim: names::name(self.trim),
            exhaustion: self.exhaustion.replay_name(),
        }
    }
}

/// How to make a pool. `PoolConfig::new(kind)` gives the defaults; the builder methods change
/// one field each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolConfig {
    /// The kind of memory the pool hands out.
    pub kind: MemoryKind,
    /// The agent (within the device) whose memory of `kind` the pool draws from.
    pub agent: usize,
    /// Bytes the pool allocates at a time; a larger alloca gets a slab of its own size.
    pub slab_size: u64,
    /// Allocation sizes and offsets are multiples of this (a power of two, at least 16).
    pub granule: u64,
    /// Bytes allocated when the pool is made and kept through trims.
    pub reserve: u64,
    /// The most bytes the pool's slabs may hold together.
    pub max_size: u64,
    /// What the pool does with free slabs beyond its reserve.
    pub trim: TrimPolicy,
    /// What an alloca does when the pool cannot serve it and may not grow.
    pub exhaustion: Exhaustion,
}

impl PoolConfig {
    /// The default `slab_size`: 16 MiB.
    pub const DEFAULT_SLAB_SIZE: u64 = 16 << 20;
    /// The old name of [`Self::DEFAULT_SLAB_SIZE`].
    #[deprecated(note = "a pool's provider allocation is a slab: use DEFAULT_SLAB_SIZE")]
    pub const DEFAULT_BLOCK_SIZE: u64 = Self::DEFAULT_SLAB_SIZE;
    /// IREE's and HIP's allocators align to 256 bytes, enough for every kernel argument type.
    pub const DEFAULT_GRANULE: u64 = 256;

    /// A pool of `kind` memory on agent 0: default slab size and granule, no reserve, no size
    /// limit, [`TrimPolicy::Manual`], [`Exhaustion::Fail`].
    pub fn new(kind: MemoryKind) -> Self {
        Self {
            kind,
            agent: 0,
            slab_size: Self::DEFAULT_SLAB_SIZE,
            granule: Self::DEFAULT_GRANULE,
            reserve: 0,
            max_size: u64::MAX,
            trim: TrimPolicy::default(),
            exhaustion: Exhaustion::default(),
        }
    }

    /// Sets the `agent` field.
    pub fn agent(self, agent: usize) -> Self {
        Self { agent, ..self }
    }

    /// Sets the `slab_size` field.
    pub fn slab_size(self, slab_size: u64) -> Self {
        Self { slab_size, ..self }
    }

    /// The old name of [`Self::slab_size`].
    #[deprecated(note = "a pool's provider allocation is a slab: use slab_size")]
    pub fn block_size(self, slab_size: u64) -> Self {
        self.slab_size(slab_size)
    }

    /// Sets the `granule` field.
    pub fn granule(self, granule: u64) -> Self {
        Self { granule, ..self }
    }

    /// Sets the `reserve` field.
    pub fn reserve(self, reserve: u64) -> Self {
        Self { reserve, ..self }
    }

    /// Sets the `max_size` field.
    pub fn max_size(self, max_size: u64) -> Self {
        Self { max_size, ..self }
    }

    /// Sets the `trim` field.
    pub fn trim(self, trim: TrimPolicy) -> Self {
        Self { trim, ..self }
    }

    /// Sets the `exhaustion` field.
    pub fn exhaustion(self, exhaustion: Exhaustion) -> Self {
        Self { exhaustion, ..self }
    }

    fn validate(&self) -> EngineResult<()> {
        let invalid = |reason: String| Err(EngineError::InvalidArgument { what: "pool config", reason });
        if !self.granule.is_power_of_two() || self.granule < 16 {
            return invalid(format!("granule {} is not a power of two of at least 16", self.granule));
        }
        if self.slab_size < self.granule || !self.slab_size.is_multiple_of(self.granule) {
            return invalid(format!("slab size {} is not a positive multiple of the granule", self.slab_size));
        }
        if self.slab_size > self.max_size || self.reserve > self.max_size {
            return invalid(format!(
                "slab size {} and reserve {} must not exceed the max size {}",
                self.slab_size, self.reserve, self.max_size
            ));
        }
        Ok(())
    }
}

/// A pool's state, as [`Pool::stats`] reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PoolStats {
    /// Bytes handed out by allocas and not yet returned.
    pub bytes_in_use: u64,
    /// The most bytes in use at once.
    pub high_water: u64,
    /// Bytes the pool's slabs hold.
    pub bytes_reserved: u64,
    /// Returned by deallocas still in flight.
    pub bytes_pending: u64,
    /// Waiting for every queue to settle (dropped without a dealloca, or a failed dealloca).
    pub bytes_held: u64,
    /// Free and reusable by anyone.
    pub bytes_free: u64,
    /// Slabs the pool holds.
    pub slabs: usize,
    /// Allocations handed out by allocas and not yet returned.
    pub live_allocations: usize,
    /// Entities of the pool's World (every allocation record, recycled): bounded by the most
    /// allocations live, in flight or held at once, not by how many were made.
    pub allocation_entities: usize,
    /// `1 - largest free range / min(free bytes, largest slab)`: 0 when the free memory is as
    /// contiguous as the slabs allow.
    pub fragmentation: f64,
}

/// A pool of device memory for queue-ordered allocation. Cloning shares it. Dropping the last
/// handle while allocations live is allowed: their buffers keep the pool, and its slabs are
/// freed, once every handle is gone, after the rows that used them settle.
#[derive(Clone)]
pub struct Pool(pub(crate) Arc<PoolShared>);

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("config", &self.0.config).field("stats", &self.stats()).finish()
    }
}

pub(crate) struct PoolShared {
    pub device: Arc<DeviceShared>,
    pub config: PoolConfig,
    entity: Entity,
    state: Mutex<PoolState>,
    /// Rung when memory comes back (a dealloca or a drop): an alloca waiting for memory retries.
    returned: Condvar,
    /// Allocas waiting on `returned`: a return rings it only then (a notify is a system call).
    waiting: AtomicUsize,
    /// Its id in the replay capture (0: not captured).
    pub replay_id: crate::replay_capture::ReplayId,
}

struct Slab {
    memory: Buffer,
    size: u64,
}

/// In-flight deallocas of one queue's memory timeline, in value order.
struct PendingList {
    queue: u16,
    timeline: Semaphore,
    entries: VecDeque<Entity>,
}

struct PoolState {
    world: World,
    vacant: Vec<Entity>,
    slabs: Vec<Option<Slab>>,
    free: FreeRanges,
    pending: Vec<PendingList>,
    /// Entities whose `FreeAt` is `AfterRows`.
    held: Vec<Entity>,
    in_use: u64,
    high_water: u64,
    reserved: u64,
    pending_bytes: u64,
    held_bytes: u64,
    live: usize,
}

/// What an alloca took, before its submission decides whether it keeps it.
pub(crate) struct Reservation {
    pub entity: Entity,
    pub range: PoolRange,
    pub address: u64,
    /// The memory timeline point the alloca must wait on (another queue's dealloca in flight).
    pub wait: Option<(Semaphore, u64)>,
    /// Where the memory came from, to put it back exactly if the submission is refused.
    origin: FreeAt,
}

impl Drop for PoolShared {
    fn drop(&mut self) {
        // Its slabs (ordinary allocations) drop with the state: deferred release frees them once
        // every row enqueued until now has settled.
        self.device.defer_release(self.entity);
    }
}

impl Pool {
    pub(crate) fn create(device: &Arc<DeviceShared>, config: PoolConfig) -> EngineResult<Self> {
        config.validate()?;
        device.agent(config.agent)?;
        let entity = device
            .world()
            .spawn(PoolEntity {
                kind: config.kind,
                agent: config.agent,
                slab_size: config.slab_size,
                max_size: config.max_size,
            })
            .id();
        let shared = PoolShared {
            device: device.clone(),
            config,
            entity,
            state: Mutex::new(PoolState {
                world: World::new(),
                vacant: Vec::new(),
                slabs: Vec::new(),
                free: FreeRanges::default(),
                pending: Vec::new(),
                held: Vec::new(),
                in_use: 0,
                high_water: 0,
                reserved: 0,
                pending_bytes: 0,
                held_bytes: 0,
                live: 0,
            }),
            returned: Condvar::new(),
            waiting: AtomicUsize::new(0),
            replay_id: Default::default(),
        };
        let pool = Self(Arc::new(shared));
        let mut reserved = 0;
        while reserved < config.reserve {
            let size = config.slab_size.min(round_up(config.reserve - reserved, config.granule));
            let slab = pool.0.allocate_slab(size)?;
            pool.0.lock().add_slab(slab);
            reserved += size;
        }
        Ok(pool)
    }

    /// The configuration the pool was made with.
    pub fn config(&self) -> &PoolConfig {
        &self.0.config
    }

    /// What the pool holds now. Retires what deallocas have returned first.
    pub fn stats(&self) -> PoolStats {
        let mut state = self.0.lock();
        state.retire(&self.0.device, &self.0.config);
        state.stats()
    }

    /// Gives wholly free slabs back (down to the reserve); returns the bytes released. Their
    /// memory is freed once every row enqueued until now has settled.
    pub fn trim(&self) -> u64 {
        let trimmed = {
            let mut state = self.0.lock();
            state.retire(&self.0.device, &self.0.config);
            state.trim(self.0.config.reserve)
        };
        trimmed.iter().map(|slab| slab.size).sum()
    }
}

impl PoolShared {
    fn lock(&self) -> MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    fn allocate_slab(&self, size: u64) -> EngineResult<Slab> {
        let memory = Buffer::allocate(&self.device, self.config.kind, size, self.config.agent)?;
        Ok(Slab { memory, size })
    }

    /// Takes `size` bytes for an alloca on `queue` (see the module's reuse rules).
    pub fn reserve(&self, queue: u16, size: u64) -> EngineResult<Reservation> {
        let config = &self.config;
        let rounded = match size.checked_add(config.granule - 1) {
            Some(_) if size > 0 && size <= config.max_size => round_up(size, config.granule),
            _ => {
                return Err(EngineError::InvalidArgument {
                    what: "alloca size",
                    reason: format!("{size} bytes: must be 1 to the pool's max size ({})", config.max_size),
                });
            }
        };
        let deadline = match config.exhaustion {
            Exhaustion::Wait(timeout) => Some(deadline_after(Instant::now(), timeout)),
            Exhaustion::Fail => None,
        };
        let mut state = self.lock();
        loop {
            // Not `retire`: a slab grown for this alloca is wholly free until it is taken from.
            state.retire_points(&self.device);
            if let Some(reservation) = state.take(queue, rounded) {
                if config.trim == TrimPolicy::KeepReserve {
                    drop(state.trim(config.reserve));
                }
                return Ok(reservation);
            }
            let slab_size = config.slab_size.max(rounded);
            if state.reserved.checked_add(slab_size).is_some_and(|total| total <= config.max_size) {
                drop(state);
                let slab = self.allocate_slab(slab_size)?;
                state = self.lock();
                state.add_slab(slab);
                continue;
            }
            if let Some(reservation) = state.take_behind_wait(queue, rounded) {
                return Ok(reservation);
            }
            let Some(deadline) = deadline.filter(|&deadline| Instant::now() < deadline) else {
                return Err(EngineError::PoolExhausted {
                    requested: rounded,
                    in_use: state.in_use,
                    reserved: state.reserved,
                    max_size: config.max_size,
                });
            };
            // The earliest in-flight dealloca: once it retires its memory coalesces.
            let earliest = state
                .pending
                .iter()
                .filter_map(|list| list.entries.front().map(|&entity| (list, entity)))
                .filter_map(|(list, entity)| match state.world.get::<FreeAt>(entity) {
                    Some(&FreeAt::Point { value, .. }) => Some((list.timeline.clone(), value)),
                    _ => None,
                })
                .next();
            let remaining = deadline.saturating_duration_since(Instant::now());
            match earliest {
                Some((timeline, value)) => {
                    drop(state);
                    // A failure or a timeout here only ends this round: the loop decides.
                    let _ = timeline.wait(value, remaining.min(Duration::from_millis(10)));
                    state = self.lock();
                }
                None => {
                    self.waiting.fetch_add(1, Ordering::SeqCst);
                    state = self.returned.wait_timeout(state, remaining).unwrap_or_else(|poison| poison.into_inner()).0;
                    self.waiting.fetch_sub(1, Ordering::SeqCst);
                }
            }
        }
    }

    /// Puts back what a refused alloca took.
    pub fn unreserve(&self, reservation: Reservation) {
        let mut state = self.lock();
        state.put_back(reservation, &self.device);
        drop(state);
        self.wake_waiting();
    }

    /// A dealloca on `queue` was enqueued: the memory is free once `timeline` reaches `value`.
    pub fn deallocated(&self, entity: Entity, queue: u16, timeline: &Semaphore, value: u64) {
        let mut state = self.lock();
        state.pend(entity, queue, timeline, value);
        drop(state);
        self.wake_waiting();
    }

    /// The buffer's handle dropped without a dealloca, or its dealloca failed: free once every
    /// queue settles the rows enqueued so far.
    pub fn abandon(&self, entity: Entity) {
        let after = self.device.enqueued_snapshot();
        let mut state = self.lock();
        state.hold(entity, after);
        state.retire(&self.device, &self.config);
        drop(state);
        self.wake_waiting();
    }

    /// Wakes allocas waiting for memory. A waiter counts itself under the lock before it
    /// sleeps, and a returner reads the count after unlocking, so none is missed.
    fn wake_waiting(&self) {
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.returned.notify_all();
        }
    }

    /// The device address of a slab.
    fn slab_address(state: &PoolState, slab: u32) -> u64 {
        state.slabs[slab as usize].as_ref().map_or(0, |slab| slab.memory.device_address())
    }
}

impl PoolState {
    fn add_slab(&mut self, slab: Slab) {
        let index = match self.slabs.iter().position(Option::is_none) {
            Some(index) => index,
            None => {
                self.slabs.push(None);
                self.slabs.len() - 1
            }
        };
        self.free.add_slab(index as u32, slab.size);
        self.reserved += slab.size;
        self.slabs[index] = Some(slab);
    }

    fn spawn(&mut self) -> Entity {
        self.vacant
            .pop()
            .unwrap_or_else(|| self.world.spawn((PoolRange::default(), OwningQueue(0), FreeAt::Vacant)).id())
    }

    fn range(&self, entity: Entity) -> PoolRange {
        self.world.get::<PoolRange>(entity).copied().unwrap_or_default()
    }

    /// Takes memory that needs no wait (the module's rules 1 and 2): this queue's own in-flight
    /// deallocas (the memory is warm), then free memory.
    fn take(&mut self, queue: u16, size: u64) -> Option<Reservation> {
        let own = self.pending.iter().position(|list| list.queue == queue);
        if let Some(reservation) = own.and_then(|list| self.take_pending(list, queue, size)) {
            return Some(reservation);
        }
        let (slab, offset) = self.free.take(size)?;
        Some(self.hand_out(queue, PoolRange { slab, offset, size }, None, FreeAt::Vacant))
    }

    /// Takes memory another queue's dealloca returned, still in flight (rule 4): the alloca will
    /// wait for it.
    fn take_behind_wait(&mut self, queue: u16, size: u64) -> Option<Reservation> {
        (0..self.pending.len()).find_map(|list| {
            if self.pending[list].queue == queue { None } else { self.take_pending(list, queue, size) }
        })
    }

    /// Takes `size` bytes from an in-flight dealloca of pending list `list_index`: the oldest
    /// that is large enough, among the first 16 (the oldest retire first).
    fn take_pending(&mut self, list_index: usize, queue: u16, size: u64) -> Option<Reservation> {
        let list = &self.pending[list_index];
        if list.timeline.has_failed() {
            return None; // retire_points holds what a failed timeline returned
        }
        let position = list.entries.iter().take(16).position(|&entity| self.range(entity).size >= size)?;
        let entity = list.entries[position];
        let origin = self.world.get::<FreeAt>(entity).cloned().unwrap_or_default();
        let FreeAt::Point { value, .. } = origin else { return None };
        // Another queue's return: the alloca waits for its point.
        let wait = (list.queue != queue).then(|| (list.timeline.clone(), value));
        let found = self.range(entity);
        if found.size == size {
            self.pending[list_index].entries.remove(position);
            self.vacate(entity);
        } else if let Some(mut rest) = self.world.get_mut::<PoolRange>(entity) {
            rest.offset += size;
            rest.size -= size;
        }
        self.pending_bytes -= size;
        Some(self.hand_out(queue, PoolRange { size, ..found }, wait, origin))
    }

    fn hand_out(
        &mut self,
        queue: u16,
        range: PoolRange,
        wait: Option<(Semaphore, u64)>,
        origin: FreeAt,
    ) -> Reservation {
        let entity = self.spawn();
        // A recycled entity keeps its components: overwrite them in place (an insert would
        // look the bundle's archetype up again).
        let mut record = self.world.entity_mut(entity);
        if let Some(mut place) = record.get_mut::<PoolRange>() {
            *place = range;
        }
        if let Some(mut owner) = record.get_mut::<OwningQueue>() {
            *owner = OwningQueue(queue);
        }
        if let Some(mut free_at) = record.get_mut::<FreeAt>() {
            *free_at = FreeAt::Live;
        }
        self.in_use += range.size;
        self.high_water = self.high_water.max(self.in_use);
        self.live += 1;
        let address = PoolShared::slab_address(self, range.slab) + range.offset;
        Reservation { entity, range, address, wait, origin }
    }

    fn vacate(&mut self, entity: Entity) {
        if let Some(mut free_at) = self.world.get_mut::<FreeAt>(entity) {
            *free_at = FreeAt::Vacant;
        }
        self.vacant.push(entity);
    }

    fn put_back(&mut self, reservation: Reservation, device: &DeviceShared) {
        let Reservation { entity, range, origin, .. } = reservation;
        if let FreeAt::Point { timeline, value, .. } = origin {
            let Some(list) = self.pending.iter_mut().find(|list| list.timeline.0.slot == timeline) else {
                // Its list went away (the timeline failed): held like a failed dealloca's.
                self.hold(entity, device.enqueued_snapshot());
                return;
            };
            // Back among its queue's in-flight deallocas, at its place in value order.
            let world = &self.world;
            let position = list.entries.partition_point(|&other| match world.get::<FreeAt>(other) {
                Some(&FreeAt::Point { value: earlier, .. }) => earlier <= value,
                _ => true,
            });
            list.entries.insert(position, entity);
            if let Some(mut free_at) = self.world.get_mut::<FreeAt>(entity) {
                *free_at = origin;
            }
            self.in_use -= range.size;
            self.live -= 1;
            self.pending_bytes += range.size;
            return;
        }
        self.in_use -= range.size;
        self.live -= 1;
        self.free.give(range.slab, range.offset, range.size);
        self.vacate(entity);
    }

    fn pend(&mut self, entity: Entity, queue: u16, timeline: &Semaphore, value: u64) {
        let slot = timeline.0.slot;
        let size = self.range(entity).size;
        if let Some(mut free_at) = self.world.get_mut::<FreeAt>(entity) {
            *free_at = FreeAt::Point { queue, timeline: slot, value };
        }
        self.in_use -= size;
        self.live -= 1;
        self.pending_bytes += size;
        match self.pending.iter_mut().find(|list| list.timeline.0.slot == slot) {
            Some(list) => list.entries.push_back(entity),
            None => {
                self.pending.push(PendingList { queue, timeline: timeline.clone(), entries: VecDeque::from([entity]) })
            }
        }
    }

    fn hold(&mut self, entity: Entity, after: aqueduct_components::device_entities::ReleaseAfter) {
        let size = self.range(entity).size;
        if let Some(mut free_at) = self.world.get_mut::<FreeAt>(entity) {
            *free_at = FreeAt::AfterRows(after);
        }
        self.in_use -= size;
        self.live -= 1;
        self.held_bytes += size;
        self.held.push(entity);
    }

    /// Moves memory whose point passed into the free ranges; holds what a failed timeline
    /// returned; frees held memory whose rows settled.
    fn retire(&mut self, device: &DeviceShared, config: &PoolConfig) {
        self.retire_points(device);
        if config.trim == TrimPolicy::KeepReserve {
            // Dropped here: a slab's release defers through the device World, which never
            // takes a pool's lock.
            drop(self.trim(config.reserve));
        }
    }

    fn retire_points(&mut self, device: &DeviceShared) {
        let mut index = 0;
        while index < self.pending.len() {
            let list = &self.pending[index];
            let (reached, failed) = (list.timeline.value(), list.timeline.has_failed());
            while let Some(&entity) = self.pending[index].entries.front() {
                let value = match self.world.get::<FreeAt>(entity) {
                    Some(&FreeAt::Point { value, .. }) => value,
                    _ => 0,
                };
                if value > reached && !failed {
                    break;
                }
                self.pending[index].entries.pop_front();
                let range = self.range(entity);
                self.pending_bytes -= range.size;
                if value <= reached {
                    self.free.give(range.slab, range.offset, range.size);
                    self.vacate(entity);
                } else {
                    // Its dealloca failed: nothing says when its users end.
                    self.in_use += range.size;
                    self.live += 1;
                    self.hold(entity, device.enqueued_snapshot());
                }
            }
            if failed {
                self.pending.swap_remove(index);
            } else {
                index += 1;
            }
        }
        if !self.held.is_empty() {
            let settled = device.settled_marks();
            let mut position = 0;
            while position < self.held.len() {
                let entity = self.held[position];
                let ready = match self.world.get::<FreeAt>(entity) {
                    Some(FreeAt::AfterRows(after)) => has_settled(after, &settled),
                    _ => true,
                };
                if ready {
                    self.held.swap_remove(position);
                    let range = self.range(entity);
                    self.held_bytes -= range.size;
                    self.free.give(range.slab, range.offset, range.size);
                    self.vacate(entity);
                } else {
                    position += 1;
                }
            }
        }
    }

    fn largest_slab(&self) -> u64 {
        self.slabs.iter().flatten().map(|slab| slab.size).max().unwrap_or(0)
    }

    /// Removes wholly free slabs while more than `reserve` bytes stay; returns them.
    fn trim(&mut self, reserve: u64) -> Vec<Slab> {
        let mut trimmed = Vec::new();
        for index in 0..self.slabs.len() {
            let Some(size) = self.slabs[index].as_ref().map(|slab| slab.size) else { continue };
            if self.reserved - size < reserve || !self.free.slab_is_free(index as u32, size) {
                continue;
            }
            self.free.remove_slab(index as u32, size);
            self.reserved -= size;
            trimmed.extend(self.slabs[index].take());
        }
        trimmed
    }

    fn stats(&self) -> PoolStats {
        let free = self.free.bytes();
        PoolStats {
            bytes_in_use: self.in_use,
            high_water: self.high_water,
            bytes_reserved: self.reserved,
            bytes_pending: self.pending_bytes,
            bytes_held: self.held_bytes,
            bytes_free: free,
            slabs: self.slabs.iter().flatten().count(),
            live_allocations: self.live,
            allocation_entities: self.world.entities().len() as usize,
            fragmentation: match free.min(self.largest_slab()) {
                0 => 0.0,
                whole => 1.0 - self.free.largest() as f64 / whole as f64,
            },
        }
    }
}

fn round_up(value: u64, granule: u64) -> u64 {
    value.div_ceil(granule) * granule
}

/// A buffer's place in its pool: what its dealloca and its drop hand back.
pub(crate) struct Pooled {
    pub pool: Arc<PoolShared>,
    pub entity: Entity,
}
