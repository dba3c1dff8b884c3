//! The device World: one entity per queue (its endpoint), semaphore, provider allocation, memory pool, executable and
//! finished command buffer, holding what the engine needs to free it.
//!
//! It sits off the hot path (creation, destruction, statistics) behind the device's lock; the
//! hot state of the same objects lives in the queue states and the shared atomic tables.
//!
//! Submissions keep nothing alive. When an object's last handle drops, its entity gets a
//! [`ReleaseAfter`]: the rows each queue had enqueued by then. The object is freed (and the entity
//! despawned) once every queue has settled those rows, so no parked, pending or in-flight row can
//! still read it.
//!
//! **Contract.** These components are read and written only under the device World's mutex, never
//! while a queue's lock is held. An entity with `ReleaseAfter` owns what freeing it takes until the
//! device's deferred release frees it and despawns the entity.

use std::sync::Arc;

use bevy_ecs::prelude::*;

use crate::program::{ProgramImage, ProgramMemory};

/// An object the device World shares with the rest of the engine, as an entity's component: a
/// queue's entity holds its [`QueueEndpoint`](crate::directory::QueueEndpoint), the one its
/// stages and other queues read, and `Device::live_queues` reports.
#[derive(Component, Debug)]
pub struct Shared<T: Send + Sync + 'static>(pub Arc<T>);

/// A timeline semaphore of the device.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub struct SemaphoreEntity {
    pub slot: u32,
    pub initial_value: u64,
}

/// Which pool an allocation came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryKind {
    /// Coarse-grained device memory: fastest for kernels, not host-accessible.
    DeviceLocal,
    /// Fine-grained system memory every agent and the host can access.
    HostVisible,
    /// Coarse-grained device memory the host maps too (through the PCIe BAR): the host writes
    /// it directly, and the writes pass the GPU's HDP, which the queue flushes before the packets
    /// that read them (`crate::host_writes`). Where the host can never reach the GPU's memory,
    /// asking for it is an error.
    HostVisibleDevice,
}

impl MemoryKind {
    /// Whether the host reads and writes it directly.
    pub fn host_accessible(self) -> bool {
        matches!(self, MemoryKind::HostVisible | MemoryKind::HostVisibleDevice)
    }
}

/// A live provider allocation (`hsa_amd_memory_pool_allocate`) backing a buffer or a memory
/// pool's block.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allocation {
    pub address: u64,
    pub size: u64,
    pub kind: MemoryKind,
    pub agent: usize,
}

/// A memory pool for queue-ordered allocation: what `Device::live_pools` reports of it. Its
/// slabs are [`Allocation`]s; its allocations are entities of the pool's own World
/// (`crate::pool`).
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolEntity {
    /// The memory it hands out.
    pub kind: MemoryKind,
    /// Index of the physical agent within the logical device.
    pub agent: usize,
    /// Bytes it allocates at a time.
    pub slab_size: u64,
    /// The most bytes its slabs may hold together.
    pub max_size: u64,
}

/// A code object loaded on every agent of the device.
#[derive(Component, Clone, Debug, PartialEq, Eq)]
pub struct ExecutableEntity {
    /// The `hsa_executable_t` handle on each agent, in the device's agent order.
    pub handles: Box<[u64]>,
}

/// A finished command buffer.
#[derive(Component)]
pub struct CommandBufferEntity {
    pub agent: usize,
    /// Its program: executions name it by address ([`crate::program::ProgramImageRef`]), so it
    /// lives here until the command buffer is released and its executions have settled.
    pub program: Arc<ProgramImage>,
    /// The device copy of its image, when something reads the image from device memory. Its
    /// device program's memory, if one was built, is the program's (`ProgramImage::device`).
    pub image: Option<ProgramMemory>,
}

/// The object's last handle is gone: free it once every queue has settled the rows it had enqueued
/// then. `rows[q]` is queue `q`'s enqueued-row count at that moment (queues created later cannot
/// reference the object: no handle is left to enqueue it with). Sparse-set storage: adding it moves
/// no entity between tables.
#[derive(Component, Clone, Debug, PartialEq, Eq)]
#[component(storage = "SparseSet")]
pub struct ReleaseAfter {
    pub rows: Box<[u64]>,
}
