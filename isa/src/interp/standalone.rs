//! Running a kernel without an HSA runtime: a code object's segments in owned memory, and a
//! [`Memory`] made of the ranges the caller names. Tests and benchmarks use it to run a kernel
//! through the interpreter beside another implementation and compare the bytes.

use aqueduct_codeobject::CodeObject;

use super::{AtomicOp, Memory, MemoryFault, host_atomic32, host_atomic64};

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

/// Memory made of host ranges (start address, length) that outlive the dispatch; an access
/// outside all of them is a [`MemoryFault`].
pub struct Regions(pub Vec<(u64, u64)>);

impl Regions {
    fn check(&self, address: u64, length: u64, write: bool) -> Result<(), MemoryFault> {
        let end = address.checked_add(length).ok_or(MemoryFault { address, length, write })?;
        if self.0.iter().any(|&(start, size)| start <= address && end <= start + size) {
            Ok(())
        } else {
            Err(MemoryFault { address, length, write })
        }
    }
}

impl Memory for Regions {
    fn read(&self, address: u64, out: &mut [u8]) -> Result<(), MemoryFault> {
        self.check(address, out.len() as u64, false)?;
        // SAFETY: the range lies in one the caller named live for the dispatch.
        unsafe { core::ptr::copy_nonoverlapping(address as *const u8, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    fn write(&self, address: u64, data: &[u8]) -> Result<(), MemoryFault> {
        self.check(address, data.len() as u64, true)?;
        // SAFETY: as for `read`.
        unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), address as *mut u8, data.len()) };
        Ok(())
    }

    fn atomic32(&self, address: u64, op: AtomicOp, value: u32, compare: u32) -> Result<u32, MemoryFault> {
        if !address.is_multiple_of(4) {
            return Err(MemoryFault { address, length: 4, write: true });
        }
        self.check(address, 4, true)?;
        // SAFETY: a 4-aligned word in a live range.
        Ok(unsafe { host_atomic32(address, op, value, compare) })
    }

    fn atomic64(&self, address: u64, op: AtomicOp, value: u64, compare: u64) -> Result<u64, MemoryFault> {
        if !address.is_multiple_of(8) {
            return Err(MemoryFault { address, length: 8, write: true });
        }
        self.check(address, 8, true)?;
        // SAFETY: an 8-aligned word in a live range.
        Ok(unsafe { host_atomic64(address, op, value, compare) })
    }
}
