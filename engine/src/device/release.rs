//! Deferred release: freeing a device object once no queue can still read it.
//!
//! Submissions keep no reference to what they use. When the last handle of a semaphore, buffer,
//! executable or finished command buffer drops, its device-World entity gets a [`ReleaseAfter`]
//! with the rows every queue had enqueued by then ([`DeviceShared::defer_release`]); no later row
//! can name the object, because no handle is left to enqueue one with.
//! [`DeviceShared::release_settled`] frees every such entity once each queue's settled mark
//! (`aqueduct_systems::settle`) has passed its snapshot: the semaphore slot goes back to the
//! table, memory to its provider or pool, and the entity is despawned.
//!
//! It runs when objects are created and dropped, from a completion thread after it lets go of its
//! queue, from `Device::live_objects`, after a queue is destroyed, and when the device drops
//! (every queue is gone then, so everything is freed). Reclaim never runs it under a queue lock;
//! only a handle dropped inside a batch's closure takes the device World's lock while that
//! queue's is held, and nothing takes the two in the other order.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use aqueduct_components::MAX_QUEUES;
use aqueduct_components::device_entities::{
    Allocation, CommandBufferEntity, ExecutableEntity, ReleaseAfter, SemaphoreEntity,
};
use aqueduct_hsa::sys::hsa_executable_t;
use aqueduct_systems::sync::SemaphoreSync;
use bevy_ecs::prelude::*;

use crate::device::DeviceShared;

impl DeviceShared {
    /// The last handle of the object `entity` stands for dropped: free it once every queue has
    /// settled the rows enqueued so far (perhaps at once).
    pub(crate) fn defer_release(&self, entity: Entity) {
        let after = self.enqueued_snapshot();
        if let Ok(mut object) = self.world().get_entity_mut(entity) {
            object.insert(after);
            self.pending_releases.fetch_add(1, Ordering::Release);
        }
        self.release_settled();
    }

    /// Every existing queue's enqueued-row count: rows enqueued after it cannot name an object whose
    /// last handle is gone.
    pub(crate) fn enqueued_snapshot(&self) -> ReleaseAfter {
        let mut rows = [0u64; MAX_QUEUES];
        let mut queues = 0;
        for (index, enqueued) in rows.iter_mut().enumerate() {
            if let Some(endpoint) = self.queues.directory.get(index as u16) {
                *enqueued = endpoint.enqueued_rows.load(Ordering::Acquire);
                queues = index + 1;
            }
        }
        ReleaseAfter { rows: rows[..queues].into() }
    }

    /// Every queue's settled mark. Read before the snapshots it is compared with: a mark read
    /// now covers every snapshot it passes.
    pub(crate) fn settled_marks(&self) -> [u64; MAX_QUEUES] {
        let mut settled = [0u64; MAX_QUEUES];
        for (index, mark) in settled.iter_mut().enumerate() {
            if let Some(endpoint) = self.queues.directory.get(index as u16) {
                *mark = endpoint.settled_rows.load(Ordering::Acquire);
            }
        }
        settled
    }

    /// Frees every released object whose rows every queue has settled.
    pub(crate) fn release_settled(&self) {
        if self.pending_releases.load(Ordering::Acquire) == 0 {
            return;
        }
        let settled = self.settled_marks();
        self.release_where(|after| has_settled(after, &settled));
    }

    /// Frees every released object; only when the device drops, after its last queue.
    pub(crate) fn release_all(&self) {
        self.release_where(|_| true);
    }

    fn release_where(&self, ready: impl Fn(&ReleaseAfter) -> bool) {
        let mut world = self.world();
        let freed: Vec<Entity> = {
            let mut released = self.released.lock().unwrap_or_else(|poison| poison.into_inner());
            released.iter(&world).filter(|(_, after)| ready(after)).map(|(entity, _)| entity).collect()
        };
        for entity in freed {
            if let Ok(mut object) = world.get_entity_mut(entity) {
                self.free(&mut object);
            }
            world.despawn(entity);
            self.pending_releases.fetch_sub(1, Ordering::Release);
        }
    }

    /// Gives back what the entity's components say the object holds.
    fn free(&self, object: &mut EntityWorldMut) {
        if let Some(semaphore) = object.get::<SemaphoreEntity>() {
            self.semaphores.release(semaphore.slot);
        }
        if let Some(allocation) = object.get::<Allocation>() {
            if let Some(replay) = self.replay_capture() {
                replay.allocation_freed(allocation.address);
            }
            // SAFETY: the allocation was the buffer's alone; its handles are gone and every row
            // that could name its memory has settled, so nothing reads or writes it any more.
            if let Err(error) = unsafe { self.hsa.free(allocation.address as *mut u8) } {
                tracing::warn!(%error, "freeing a buffer failed");
            }
        }
        if let Some(executable) = object.get::<ExecutableEntity>() {
            for &handle in &executable.handles {
                // SAFETY: the handle was loaded for this executable alone and is destroyed once
                // (the entity is despawned next); no settled row's packet names its kernels.
                unsafe { (self.hsa.api().hsa_executable_destroy)(hsa_executable_t { handle }) };
            }
        }
        if let Some(command_buffer) = object.take::<CommandBufferEntity>() {
            let device_program = command_buffer.program.built_device_program().map(|built| built.memory);
            for memory in [command_buffer.image, device_program].into_iter().flatten() {
                self.programs.give_image(&self.hsa, memory);
            }
            // The last reference: the program dropped its own before it was released.
            if let Some(program) = Arc::into_inner(command_buffer.program) {
                self.programs.give_blocks(program.blocks);
            }
        }
    }
}

/// Whether every queue has settled the rows `after` counted.
pub(crate) fn has_settled(after: &ReleaseAfter, settled: &[u64; MAX_QUEUES]) -> bool {
    after.rows.iter().zip(settled).all(|(&enqueued, &settled)| settled >= enqueued)
}
