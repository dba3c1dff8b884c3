//! The device World: one entity per queue, semaphore and pool allocation.
//!
//! It sits off the hot path (creation, destruction, statistics) behind the device's lock; the
//! hot state of the same objects lives in the queue Worlds and the shared atomic tables.

use bevy_ecs::prelude::*;

/// A queue of the device.
#[derive(Component, Clone, Debug, PartialEq, Eq)]
pub struct QueueEntity {
    pub index: u16,
    /// Index of the physical agent within the logical device.
    pub agent: usize,
    pub ring_packets: u32,
    pub kernarg_bytes: u64,
}

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
}

/// A live pool allocation backing a buffer.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allocation {
    pub address: u64,
    pub size: u64,
    pub kind: MemoryKind,
    pub agent: usize,
}
