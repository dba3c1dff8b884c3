//! Memory shared with other processes is a `memfd` mapped over the same addresses: the backing
//! an allocation moves onto when it is exported (`ipc`), and what its pages become again when it
//! is freed (`memory`).

use core::ffi::c_void;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::{FileExt, MetadataExt};

use aqueduct_hsa::sys::status;

/// A `memfd` backing shared memory, open for as long as the memory is shared.
pub(crate) struct SharedFile {
    pub(crate) file: std::fs::File,
    pub inode: u64,
}

impl SharedFile {
    pub fn descriptor(&self) -> i32 {
        self.file.as_raw_fd()
    }

    pub(crate) fn create(size: usize) -> Result<SharedFile, u32> {
        // SAFETY: a NUL-terminated name and valid flags; the result is checked.
        let fd = unsafe { libc::memfd_create(c"aqueduct-ipc".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(status::ERROR_OUT_OF_RESOURCES);
        }
        // SAFETY: a descriptor just opened and owned by nothing else.
        let file = unsafe { std::fs::File::from_raw_fd(fd) };
        file.set_len(size as u64).map_err(|_| status::ERROR_OUT_OF_RESOURCES)?;
        let inode = file.metadata().map_err(|_| status::ERROR_OUT_OF_RESOURCES)?.ino();
        Ok(SharedFile { file, inode })
    }
}

/// Maps `size` bytes of `fd` read-write and shared, at `at` exactly (MAP_FIXED) or anywhere.
pub(crate) fn map_shared(fd: i32, size: usize, at: Option<usize>) -> Result<usize, u32> {
    let (address, flags) = match at {
        Some(address) => (address as *mut c_void, libc::MAP_SHARED | libc::MAP_FIXED),
        None => (core::ptr::null_mut(), libc::MAP_SHARED),
    };
    // SAFETY: a file mapping of an open descriptor; at a fixed address it replaces pages the
    // runtime owns (an allocation it is sharing), which the caller vouches for.
    let mapped = unsafe { libc::mmap(address, size, libc::PROT_READ | libc::PROT_WRITE, flags, fd, 0) };
    if mapped == libc::MAP_FAILED {
        return Err(status::ERROR_OUT_OF_RESOURCES);
    }
    Ok(mapped as usize)
}

/// Moves the allocation at `[base, base + size)` onto a new shared file: its bytes are copied
/// to the file, which is then mapped over the same addresses, so every pointer into it stays
/// valid and the contents are unchanged.
pub(crate) fn back_with_shared_file(base: usize, size: usize) -> Result<SharedFile, u32> {
    let shared = SharedFile::create(size)?;
    // SAFETY: the allocation holds `size` readable bytes at `base`.
    let bytes = unsafe { core::slice::from_raw_parts(base as *const u8, size) };
    shared.file.write_all_at(bytes, 0).map_err(|_| status::ERROR_OUT_OF_RESOURCES)?;
    map_shared(shared.descriptor(), size, Some(base))?;
    Ok(shared)
}

/// Gives `[base, base + size)` private anonymous memory again (before the allocator takes an
/// allocation that was shared back).
pub(crate) fn make_private(base: usize, size: usize) {
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED;
    // SAFETY: the range is an allocation of this runtime being freed; replacing its pages with
    // fresh private ones is what the allocator expects of freed memory.
    unsafe { libc::mmap(base as *mut c_void, size, libc::PROT_READ | libc::PROT_WRITE, flags, -1, 0) };
}
