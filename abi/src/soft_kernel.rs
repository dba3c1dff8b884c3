//! The calling convention between the soft HSA runtime and CPU implementations of kernels.
//!
//! It lives here, below both `hsa` (which calls kernels) and `builtins` (which implements them), so
//! neither depends on the other. A CPU kernel runs one whole workgroup per call: the soft runtime
//! hands it the packet's kernarg pointer exactly as a GPU would see it, plus the workgroup's id and
//! its own group-segment memory.

/// What a CPU kernel sees for one workgroup.
#[derive(Debug)]
pub struct WorkgroupContext {
    /// The packet's `kernarg_address`: the kernel reads its arguments at the offsets its code
    /// object's metadata declares.
    pub kernarg: *const u8,
    /// Group (LDS) memory private to this workgroup, `group_memory_len` bytes, zeroed on entry.
    pub group_memory: *mut u8,
    pub group_memory_len: usize,
    pub workgroup_id: [u32; 3],
    /// The packet's workgroup size (work-items per full workgroup).
    pub workgroup_size: [u16; 3],
    /// The packet's grid size in work-items; the last workgroup on an axis may be partial.
    pub grid_size: [u32; 3],
}

impl WorkgroupContext {
    /// Work-items of this workgroup along each axis, clipped at the grid's edge.
    pub fn active_size(&self) -> [u32; 3] {
        core::array::from_fn(|axis| {
            let group = u32::from(self.workgroup_size[axis]);
            let start = self.workgroup_id[axis].saturating_mul(group);
            self.grid_size[axis].saturating_sub(start).min(group)
        })
    }

    /// Reads a little-endian value of type `T` at `offset` in the kernarg segment.
    ///
    /// # Safety
    /// The kernarg segment must hold at least `offset + size_of::<T>()` readable bytes.
    pub unsafe fn kernarg<T: bytemuck::Pod>(&self, offset: usize) -> T {
        // SAFETY: the caller vouches for the extent; `read_unaligned` tolerates any alignment.
        unsafe { self.kernarg.add(offset).cast::<T>().read_unaligned() }
    }
}

/// A kernel's failure, reported to the queue's error callback as an HSA status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelFault {
    /// An `hsa_status_t`, e.g. HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION (41).
    pub status: u32,
    pub reason: &'static str,
}

/// A CPU kernel body.
///
/// # Safety
/// The caller passes a context whose kernarg pointer is valid for the kernel's declared kernarg
/// size and whose group memory is valid for `group_memory_len` bytes; the kernel trusts the
/// pointers it finds in its kernargs exactly as GPU code would.
pub type SoftKernelFn = unsafe fn(&WorkgroupContext) -> Result<(), KernelFault>;

/// One CPU implementation, keyed by the kernel descriptor's symbol (`name.kd`).
#[derive(Clone, Copy, Debug)]
pub struct SoftKernel {
    pub symbol: &'static str,
    pub function: SoftKernelFn,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_workgroups_are_clipped() {
        let context = WorkgroupContext {
            kernarg: core::ptr::null(),
            group_memory: core::ptr::null_mut(),
            group_memory_len: 0,
            workgroup_id: [3, 0, 0],
            workgroup_size: [32, 1, 1],
            grid_size: [100, 1, 1],
        };
        assert_eq!(context.active_size(), [4, 1, 1]);
    }
}
