//! What a device keeps for the command buffers it records: recorders whose buffers keep their
//! capacity, block Worlds whose entities keep theirs, and published images (kernarg-pool memory)
//! that finished programs gave back.
//!
//! Recording a program of the same shape again (a game's per-frame buffer, a one-shot chain)
//! then allocates nothing for the commands and takes no trip into the provider's allocator for
//! its device image; on ROCr a kernarg-pool allocation is a driver call.

use std::sync::Mutex;

use aqueduct_hsa::Hsa;
use aqueduct_hsa::sys::hsa_amd_memory_pool_t;

use aqueduct_components::device_entities::ProgramMemory;
use aqueduct_components::program::ProgramBlocks;

use super::recorder::Recorder;

/// Recorders kept for reuse, at most.
const KEPT_RECORDERS: usize = 4;
/// A recorder whose buffers grew past this many bytes is dropped rather than kept.
const KEPT_RECORDER_BYTES: usize = 64 << 20;
/// Published images kept for reuse, at most, and their total bytes.
const KEPT_IMAGES: usize = 32;
const KEPT_IMAGE_BYTES: usize = 64 << 20;
/// The smallest published-image size class (one page: what the providers hand out anyway).
const MIN_IMAGE_CLASS: usize = 4096;

/// The size class an image of `bytes` bytes is allocated in: a power of two, at least
/// [`MIN_IMAGE_CLASS`].
pub(crate) fn image_class(bytes: usize) -> Option<usize> {
    bytes.max(MIN_IMAGE_CLASS).checked_next_power_of_two()
}

#[derive(Default)]
pub(crate) struct CommandBufferPools {
    /// Boxed as a command buffer holds them, so handing one out allocates nothing.
    #[allow(clippy::vec_box)]
    recorders: Mutex<Vec<Box<Recorder>>>,
    blocks: Mutex<Vec<ProgramBlocks>>,
    images: Mutex<Vec<ProgramMemory>>,
}

impl CommandBufferPools {
    /// A recorder with empty buffers (that may keep the capacity of earlier recordings).
    pub fn take_recorder(&self) -> Option<Box<Recorder>> {
        lock(&self.recorders).pop()
    }

    /// Keeps `recorder`'s buffers for the next command buffer, unless enough are kept.
    pub fn give_recorder(&self, mut recorder: Box<Recorder>) {
        if recorder.capacity_bytes() > KEPT_RECORDER_BYTES {
            return;
        }
        let mut kept = lock(&self.recorders);
        if kept.len() < KEPT_RECORDERS {
            recorder.clear();
            kept.push(recorder);
        }
    }

    /// A block World for a program being finished: a kept one (its block entities and their
    /// vectors reused), or a new one.
    pub fn take_blocks(&self) -> ProgramBlocks {
        lock(&self.blocks).pop().unwrap_or_default()
    }

    /// Keeps a dropped program's block World for the next, unless enough are kept.
    pub fn give_blocks(&self, blocks: ProgramBlocks) {
        let mut kept = lock(&self.blocks);
        if kept.len() < KEPT_RECORDERS {
            kept.push(blocks);
        }
    }

    /// Kept memory of exactly `capacity` bytes from `pool`, if any.
    pub fn take_image(&self, pool: hsa_amd_memory_pool_t, capacity: usize) -> Option<ProgramMemory> {
        let mut kept = lock(&self.images);
        let index = kept.iter().position(|memory| memory.pool == pool.handle && memory.capacity == capacity)?;
        Some(kept.swap_remove(index))
    }

    /// Keeps `memory` for another image, or frees it when enough is kept.
    pub fn give_image(&self, hsa: &Hsa, memory: ProgramMemory) {
        {
            let mut kept = lock(&self.images);
            let bytes: usize = kept.iter().map(|memory| memory.capacity).sum();
            if kept.len() < KEPT_IMAGES && bytes + memory.capacity <= KEPT_IMAGE_BYTES {
                kept.push(memory);
                return;
            }
        }
        free(hsa, memory);
    }

    /// Frees every kept image; the device calls it while its provider is still open.
    pub fn free_images(&self, hsa: &Hsa) {
        for memory in std::mem::take(&mut *lock(&self.images)) {
            free(hsa, memory);
        }
    }
}

fn free(hsa: &Hsa, memory: ProgramMemory) {
    // SAFETY: the allocation is the pool's alone: its program was released only after every row
    // that could execute it settled, and kept memory is handed to one program at a time.
    if let Err(error) = unsafe { hsa.free(memory.address as *mut u8) } {
        tracing::warn!(%error, "freeing a command buffer's published image failed");
    }
}

/// The lists hold plain data, so a panic elsewhere while one was locked leaves nothing broken.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}
