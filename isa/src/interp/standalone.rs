//! Running a kernel without an HSA runtime: a code object's segments in owned memory, and a
//! [`Memory`] made of the ranges the caller names. Tests and benchmarks use it to run a kernel
//! through the interpreter beside another implementation and compare the bytes.

use aqueduct_codeobject::CodeObject;

use super::{HostMemory, HostRange, MemoryFault};

/// A code object loaded as a loader would: each `PT_LOAD` segment at its virtual address
/// relative to one base, the rest zeroed. Relocations are not applied (the kernels this serves
/// have none).
pub struct StandaloneImage {
    memory: Vec<u64>,
    lowest_vaddr: u64,
    code_object: CodeObject,
}

impl StandaloneImage {
    /// Loads `bytes`, an AMDGPU code object.
    pub fn load(bytes: &[u8]) -> Result<StandaloneImage, String> {
        let code_object = CodeObject::parse(bytes).map_err(|error| error.to_string())?;
        let segments = code_object.load_segments();
        let lowest_vaddr = segments.iter().map(|segment| segment.vaddr).min().ok_or("no PT_LOAD segment")?;
        let end = segments.iter().map(|segment| segment.vaddr + segment.memory_size).max().unwrap_or(lowest_vaddr);
        let mut memory = vec![0u64; ((end - lowest_vaddr) as usize).div_ceil(8)];
        for segment in segments {
            // The parser checked each segment against the file.
            let from = &bytes[segment.file_offset as usize..(segment.file_offset + segment.file_size) as usize];
            let at = (segment.vaddr - lowest_vaddr) as usize;
            bytemuck_bytes(&mut memory)[at..at + from.len()].copy_from_slice(from);
        }
        Ok(StandaloneImage { memory, lowest_vaddr, code_object })
    }

    /// The loaded address of kernel `name_or_symbol`'s descriptor (its `kernel_object`).
    pub fn kernel_object(&self, name_or_symbol: &str) -> Option<u64> {
        let index = self.code_object.kernel_index(name_or_symbol).ok()?;
        let symbol = self.code_object.kernel_descriptor(index)?;
        Some(self.base() + (symbol.address - self.lowest_vaddr))
    }

    /// The image's first byte address and length, for [`Regions`].
    pub fn range(&self) -> (u64, u64) {
        (self.base(), self.memory.len() as u64 * 8)
    }

    fn base(&self) -> u64 {
        self.memory.as_ptr() as u64
    }
}

fn bytemuck_bytes(words: &mut [u64]) -> &mut [u8] {
    // SAFETY: u64 has no padding and every byte pattern is a valid u8.
    unsafe { core::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), words.len() * 8) }
}

/// Memory made of host ranges (start address, length), which its maker keeps alive for the
/// dispatch; an access outside all of them is a [`MemoryFault`].
pub struct Regions(pub Vec<(u64, u64)>);

// SAFETY: the ranges are live host memory for the dispatch, as `Regions`' contract asks of its
// maker; `check` answers `Ok` only inside one of them.
unsafe impl HostMemory for Regions {
    fn check(&self, address: u64, length: u64, write: bool) -> Result<u64, MemoryFault> {
        let end = address.checked_add(length).ok_or(MemoryFault { address, length, write })?;
        if self.0.iter().any(|&(start, size)| start <= address && end <= start + size) {
            Ok(address)
        } else {
            Err(MemoryFault { address, length, write })
        }
    }

    /// The whole region an access falls in (regions are host memory at their own addresses).
    fn check_range(&self, address: u64, length: u64, write: bool) -> Result<HostRange, MemoryFault> {
        let end = address.checked_add(length).ok_or(MemoryFault { address, length, write })?;
        (self.0.iter())
            .find(|&&(start, size)| start <= address && end <= start + size)
            .map(|&(start, size)| HostRange { start, end: start + size, delta: 0, writable: true })
            .ok_or(MemoryFault { address, length, write })
    }
}
