//! Buffers: provider allocations of the device, or ranges of a memory pool (`Queue::alloca`),
//! with host access where the memory kind allows it.

pub(crate) mod pool;

/// Largest `update` (a queue's or a command buffer's): bigger writes belong in a bounce buffer
/// and a copy.
pub const MAX_UPDATE_BYTES: usize = 64 * 1024;

use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use aqueduct_components::device_entities::{Allocation, MemoryKind};
use bevy_ecs::entity::Entity;
use bytemuck::Pod;

use crate::device::DeviceShared;
use crate::error::{EngineError, EngineResult};
use pool::Pooled;

pub(crate) struct BufferInner {
    pub device: Arc<DeviceShared>,
    pub address: u64,
    pub size: u64,
    pub kind: MemoryKind,
    /// The agent whose pool it came from.
    pub agent: usize,
    origin: Origin,
    /// Set by `Queue::dealloca`: every later use is refused.
    pub deallocated: AtomicBool,
    /// Its id in the replay capture (0: not captured).
    pub replay_id: crate::replay_capture::ReplayId,
}

/// Who owns a buffer's memory.
enum Origin {
    /// Its own allocation: an entity of the device World.
    Device(Entity),
    /// A range of a pool, handed out by `Queue::alloca`.
    Pool(Pooled),
}

impl Drop for BufferInner {
    fn drop(&mut self) {
        if let Some(replay) = self.device.replay_capture()
            && self.replay_id.get() != 0
        {
            let own_memory = matches!(self.origin, Origin::Device(_));
            replay.buffer_freed(
                self.replay_id.get(),
                self.address,
                own_memory && self.kind.host_accessible(),
                self.size,
            );
        }
        match &self.origin {
            // Queued work may still read or write the memory: it is freed once those rows settle.
            Origin::Device(entity) => self.device.defer_release(*entity),
            // After its dealloca the pool has it back; without one, it waits for the rows too.
            Origin::Pool(pooled) if !self.deallocated.load(Ordering::Acquire) => pooled.pool.abandon(pooled.entity),
            Origin::Pool(_) => {}
        }
    }
}

/// Device memory holding elements of `T` (bytes by default). Cloning is cheap and shares the
/// allocation; it is freed once the last clone is gone and every submission enqueued before then
/// has settled. A buffer from `Queue::alloca` goes back to its pool with `Queue::dealloca` (in
/// queue order), or, if its last clone drops first, once every submission enqueued until then has
/// settled.
///
/// Offsets and lengths of a `Buffer<T>` count elements; a `Buffer` (of `u8`) counts bytes, so the
/// two read the same. [`Buffer::bytes`] views any buffer as bytes, which is what bindings,
/// updates and deallocas take.
///
/// ```
/// use aqueduct_engine::{Engine, MemoryKind};
///
/// let engine = Engine::new("soft")?;
/// let weights = engine.device().buffer_from(MemoryKind::HostVisible, &[0.5f32, 1.5, 2.5])?;
/// assert_eq!(weights.len(), 3);
/// assert_eq!(weights.range(1, 2).length, 8, "bindings are in bytes");
/// assert_eq!(weights.to_vec()?, [0.5, 1.5, 2.5]);
/// # Ok::<(), aqueduct_engine::EngineError>(())
/// ```
#[repr(transparent)]
pub struct Buffer<T: Pod = u8>(pub(crate) Arc<BufferInner>, PhantomData<fn() -> T>);

impl<T: Pod> Clone for Buffer<T> {
    fn clone(&self) -> Self {
        Self(self.0.clone(), PhantomData)
    }
}

impl<T: Pod> std::fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer")
            .field("element", &std::any::type_name::<T>())
            .field("address", &format_args!("{:#x}", self.0.address))
            .field("size", &self.0.size)
            .field("kind", &self.0.kind)
            .finish()
    }
}

impl<T: Pod> Buffer<T> {
    const ELEMENT: u64 = size_of::<T>() as u64;

    /// The same memory as bytes.
    pub fn bytes(&self) -> &Buffer {
        // SAFETY: `Buffer<T>` is `repr(transparent)` over the `Arc`, whatever `T` is, so
        // `Buffer<T>` and `Buffer<u8>` have one layout; `T` only changes how methods count.
        unsafe { &*(self as *const Self).cast::<Buffer>() }
    }

    /// The same memory seen as elements of `U`: refused unless the size is a whole number of
    /// them (the address is aligned for any `U` the device allocates).
    pub fn cast<U: Pod>(self) -> EngineResult<Buffer<U>> {
        let element = size_of::<U>() as u64;
        if element == 0
            || !self.0.size.is_multiple_of(element)
            || !self.0.address.is_multiple_of(align_of::<U>() as u64)
        {
            return Err(EngineError::InvalidArgument {
                what: "buffer cast",
                reason: format!("{} bytes are no whole number of {}", self.0.size, std::any::type_name::<U>()),
            });
        }
        Ok(Buffer(self.0, PhantomData))
    }

    /// Its size in bytes.
    pub fn size(&self) -> u64 {
        self.0.size
    }

    /// Its length in elements.
    pub fn len(&self) -> u64 {
        self.0.size / Self::ELEMENT.max(1)
    }

    /// Whether it holds no whole element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Its memory kind.
    pub fn kind(&self) -> MemoryKind {
        self.0.kind
    }

    /// The device address of byte 0.
    pub fn device_address(&self) -> u64 {
        self.0.address
    }

    /// A binding of `count` elements from element `first`, checked when it is used. (A
    /// [`Binding`] itself counts bytes, as everything untyped does.)
    pub fn range(&self, first: u64, count: u64) -> Binding<'_> {
        // Saturated: an overflowing range is out of bounds when it is checked.
        let (offset, length) = (first.saturating_mul(Self::ELEMENT), count.saturating_mul(Self::ELEMENT));
        Binding { buffer: self.bytes(), offset, length }
    }

    /// A binding of the whole buffer.
    pub fn whole(&self) -> Binding<'_> {
        Binding { buffer: self.bytes(), offset: 0, length: self.0.size }
    }

    /// Copies `data` into the buffer from element `first`.
    ///
    /// The caller orders this against queued work that uses the range (wait on the semaphore
    /// that work signals first), as with any memory a GPU shares with the host.
    pub fn write(&self, first: u64, data: &[T]) -> EngineResult<()> {
        self.bytes().write_bytes(first.saturating_mul(Self::ELEMENT), bytemuck::cast_slice(data))
    }

    /// Copies elements from element `first` out of the buffer into `out`; ordering as for
    /// [`Self::write`].
    pub fn read(&self, first: u64, out: &mut [T]) -> EngineResult<()> {
        self.bytes().read_bytes(first.saturating_mul(Self::ELEMENT), bytemuck::cast_slice_mut(out))
    }

    /// The whole buffer as a vector (host-visible buffers).
    pub fn to_vec(&self) -> EngineResult<Vec<T>> {
        let mut elements = vec![T::zeroed(); self.len() as usize];
        self.read(0, &mut elements)?;
        Ok(elements)
    }
}

impl Buffer {
    pub(crate) fn allocate(
        device: &Arc<DeviceShared>,
        kind: MemoryKind,
        size: u64,
        agent: usize,
    ) -> EngineResult<Self> {
        if size == 0 {
            return Err(EngineError::InvalidArgument { what: "buffer size", reason: "must be at least 1 byte".into() });
        }
        let state = device.agent(agent)?;
        let bytes = usize::try_from(size).map_err(|_| EngineError::InvalidArgument {
            what: "buffer size",
            reason: format!("{size} does not fit the address space"),
        })?;
        let pool = state.pool(kind)?;
        device.release_settled();
        let host = (kind == MemoryKind::HostVisibleDevice)
            .then_some(aqueduct_hsa::sys::hsa_agent_t { handle: state.topology.host_agent });
        let address = device.allocate_granted_to(pool, bytes, host)? as u64;
        let entity = device.world().spawn(Allocation { address, size, kind, agent }).id();
        Ok(Self(
            Arc::new(BufferInner {
                device: device.clone(),
                address,
                size,
                kind,
                agent,
                origin: Origin::Device(entity),
                deallocated: AtomicBool::new(false),
                replay_id: Default::default(),
            }),
            PhantomData,
        ))
    }

    /// [`Self::allocate`] for the program: the replay capture records it.
    pub(crate) fn allocate_captured(
        device: &Arc<DeviceShared>,
        kind: MemoryKind,
        size: u64,
        agent: usize,
    ) -> EngineResult<Self> {
        let buffer = Self::allocate(device, kind, size, agent)?;
        if let Some(replay) = device.replay_capture() {
            let id = replay.next_id();
            buffer.0.replay_id.set(id);
            replay.buffer_live(id, buffer.0.address, size);
            replay.push(aqueduct_profile::replay::ReplayRecord::Allocation {
                id,
                agent: agent as u32,
                kind: crate::replay_capture::names::name(kind),
                size,
            });
        }
        Ok(buffer)
    }

    /// Its id in the replay capture (0 when it is not captured).
    pub(crate) fn replay_id(&self) -> u64 {
        self.0.replay_id.get()
    }

    /// A buffer over `size` bytes of a pool at `address` (an alloca's).
    pub(crate) fn pooled(pooled: Pooled, address: u64, size: u64) -> Self {
        let (device, kind, agent) = (pooled.pool.device.clone(), pooled.pool.config.kind, pooled.pool.config.agent);
        Self(
            Arc::new(BufferInner {
                device,
                address,
                size,
                kind,
                agent,
                origin: Origin::Pool(pooled),
                deallocated: AtomicBool::new(false),
                replay_id: Default::default(),
            }),
            PhantomData,
        )
    }

    /// Its place in a pool, when it came from `Queue::alloca`.
    pub(crate) fn pool_origin(&self) -> Option<&Pooled> {
        match &self.0.origin {
            Origin::Pool(pooled) => Some(pooled),
            Origin::Device(_) => None,
        }
    }

    /// Refuses a buffer that was deallocated.
    pub(crate) fn check_live(&self) -> EngineResult<()> {
        if self.0.deallocated.load(Ordering::Relaxed) { Err(EngineError::BufferDeallocated) } else { Ok(()) }
    }

    pub(crate) fn check_range(&self, what: &'static str, offset: u64, length: u64) -> EngineResult<u64> {
        self.check_live()?;
        match offset.checked_add(length) {
            Some(end) if end <= self.0.size => Ok(self.0.address + offset),
            _ => Err(EngineError::OutOfBounds { what, offset, length, size: self.0.size }),
        }
    }

    fn host_accessible(&self) -> EngineResult<()> {
        match self.0.kind {
            kind if kind.host_accessible() => Ok(()),
            kind => Err(EngineError::NotHostAccessible { kind }),
        }
    }

    /// The host wrote the buffer: in host-visible device memory the queue must publish that
    /// through the agent's HDP before a packet reads it.
    pub(crate) fn note_host_write(&self) {
        if self.0.kind == MemoryKind::HostVisibleDevice
            && let Some(host_writes) = &self.0.device.agents[self.0.agent].host_writes
        {
            host_writes.note_write();
        }
    }

    fn write_bytes(&self, offset: u64, data: &[u8]) -> EngineResult<()> {
        self.host_accessible()?;
        let address = self.check_range("buffer write", offset, data.len() as u64)?;
        // SAFETY: the range lies inside this live host-visible allocation.
        unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), address as *mut u8, data.len()) };
        self.note_host_write();
        if let Some(replay) = self.0.device.replay_capture().filter(|_| self.replay_id() != 0) {
            replay.push(aqueduct_profile::replay::ReplayRecord::HostWrite {
                buffer: self.replay_id(),
                offset,
                data: data.to_vec(),
            });
        }
        Ok(())
    }

    fn read_bytes(&self, offset: u64, out: &mut [u8]) -> EngineResult<()> {
        self.host_accessible()?;
        let address = self.check_range("buffer read", offset, out.len() as u64)?;
        // SAFETY: the range lies inside this live host-visible allocation.
        unsafe { core::ptr::copy_nonoverlapping(address as *const u8, out.as_mut_ptr(), out.len()) };
        if let Some(replay) = self.0.device.replay_capture()
            && self.replay_id() != 0
        {
            replay.push(aqueduct_profile::replay::ReplayRecord::HostRead {
                range: self.range(offset, out.len() as u64).replay_range(),
                checksum: aqueduct_profile::replay::checksum(out),
            });
        }
        Ok(())
    }

    pub(crate) fn belongs_to(&self, device: &DeviceShared) -> EngineResult<()> {
        if self.0.device.id == device.id { Ok(()) } else { Err(EngineError::ForeignObject { what: "buffer" }) }
    }
}

/// A range of a buffer bound to a kernel argument or used by a transfer.
#[derive(Clone, Copy, Debug)]
pub struct Binding<'a> {
    /// The buffer.
    pub buffer: &'a Buffer,
    /// Where the range starts, in bytes.
    pub offset: u64,
    /// Its length in bytes.
    pub length: u64,
}

impl Binding<'_> {
    /// The range as the replay file names it.
    pub(crate) fn replay_range(&self) -> aqueduct_profile::replay::BufferRange {
        aqueduct_profile::replay::BufferRange {
            buffer: self.buffer.replay_id(),
            offset: self.offset,
            length: self.length,
        }
    }
}

impl<'a> From<&'a Buffer> for Binding<'a> {
    fn from(buffer: &'a Buffer) -> Self {
        buffer.whole()
    }
}
