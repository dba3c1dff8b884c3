//! What finished programs give back for the next ones to reuse: block Worlds whose entities
//! keep their capacity, and published images (kernarg-pool memory).
//!
//! Finishing a program of the same shape again (a game's per-frame buffer, a one-shot chain)
//! then takes no trip into the provider's allocator for its device image; on ROCr a kernarg-pool
//! allocation is a driver call. Recorders are kept by the command-buffer module itself, as a
//! resource of the device World (`command_buffer/pool.rs`).

use std::sync::Mutex;

use aqueduct_components::program::ProgramBlocks;
use aqueduct_components::program::ProgramMemory;
use aqueduct_hsa::Hsa;
use aqueduct_hsa::sys::hsa_amd_memory_pool_t;

/// Block Worlds kept for reuse, at most.
const KEPT_BLOCK_WORLDS: usize = 4;
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
pub(crate) struct ProgramPools {
    // Boxed in the list too: a program takes the box itself, so neither taking nor giving back
    // moves the block World (large) or allocates.
    #[allow(clippy::vec_box)]
    blocks: Mutex<Vec<Box<ProgramBlocks>>>,
    images: Mutex<Vec<ProgramMemory>>,
}

impl ProgramPools {
    /// A block World for a program being finished: a kept one (its block entities and their
    /// vectors reused), or a new one.
    pub fn take_blocks(&self) -> Box<ProgramBlocks> {
        lock(&self.blocks).pop().unwrap_or_default()
    }

    /// Keeps a dropped program's block World for the next, unless enough are kept.
    pub fn give_blocks(&self, blocks: Box<ProgramBlocks>) {
        let mut kept = lock(&self.blocks);
        if kept.len() < KEPT_BLOCK_WORLDS {
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
