//! The implicit ("hidden") kernel arguments of code-object v5+, placed after the explicit ones.
//!
//! Kernels find their grid shape here (`__builtin_amdgcn_implicitarg_ptr`). The metadata's hidden
//! argument offsets say where this block starts; its internal layout is fixed by LLVM.

use bytemuck::{Pod, Zeroable};

use crate::{assert_layout, assert_offset};

/// Every kernel dispatch packet the engine publishes says three dimensions (unused axes are 1),
/// and so does every implicit block's `grid_dims`. HIP's module launch does the same (ROCclr
/// builds a 3-D NDRange whatever the launch's shape), and so does IREE's HAL. One rule for every
/// path means a kernel that reads its work dimension (`hidden_grid_dims`, or the packet's setup
/// through `dispatch_ptr`) sees the same value in a direct dispatch, a command-buffer execution and
/// an indirect dispatch (whose patch kernel rewrites the grid, never the dimension count), and a
/// prebuilt packet's setup field is a constant.
pub const DISPATCH_DIMENSIONS: u16 = 3;

#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable, PartialEq, Eq)]
pub struct ImplicitKernargs {
    pub block_count: [u32; 3],
    pub group_size: [u16; 3],
    pub remainder: [u16; 3],
    pub reserved0: [u8; 16],
    pub global_offset: [u64; 3],
    pub grid_dims: u16,
    pub reserved1: [u8; 6],
    pub printf_buffer: u64,
    pub hostcall_buffer: u64,
    pub multigrid_sync_arg: u64,
    pub heap_v1: u64,
    pub default_queue: u64,
    pub completion_action: u64,
    pub dynamic_lds_size: u32,
    pub reserved2: [u8; 68],
    pub private_base: u32,
    pub shared_base: u32,
    pub queue_ptr: u64,
    pub reserved3: [u8; 48],
}
assert_layout!(ImplicitKernargs, size = 256, align = 8);
assert_offset!(ImplicitKernargs, group_size, 12);
assert_offset!(ImplicitKernargs, remainder, 18);
assert_offset!(ImplicitKernargs, global_offset, 40);
assert_offset!(ImplicitKernargs, grid_dims, 64);
assert_offset!(ImplicitKernargs, printf_buffer, 72);
assert_offset!(ImplicitKernargs, hostcall_buffer, 80);
assert_offset!(ImplicitKernargs, multigrid_sync_arg, 88);
assert_offset!(ImplicitKernargs, heap_v1, 96);
assert_offset!(ImplicitKernargs, default_queue, 104);
assert_offset!(ImplicitKernargs, completion_action, 112);
assert_offset!(ImplicitKernargs, dynamic_lds_size, 120);
assert_offset!(ImplicitKernargs, private_base, 192);
assert_offset!(ImplicitKernargs, shared_base, 196);
assert_offset!(ImplicitKernargs, queue_ptr, 200);

impl ImplicitKernargs {
    /// The bytes of the block that code-object v5 kernels may read (through `dynamic_lds_size`).
    pub const USED_SIZE: usize = 124;

    /// Fills the grid-shape fields from a dispatch's grid and workgroup sizes; `grid_dims` is
    /// always [`crate::DISPATCH_DIMENSIONS`], the rule every dispatch packet follows.
    pub fn for_grid(grid: [u32; 3], workgroup: [u16; 3]) -> Self {
        let mut args = Self::zeroed();
        for axis in 0..3 {
            let group = u32::from(workgroup[axis].max(1));
            args.block_count[axis] = grid[axis] / group;
            args.group_size[axis] = workgroup[axis];
            args.remainder[axis] = (grid[axis] % group) as u16;
        }
        args.grid_dims = DISPATCH_DIMENSIONS;
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_shape_splits_into_full_blocks_and_remainder() {
        let args = ImplicitKernargs::for_grid([100, 8, 1], [32, 4, 1]);
        assert_eq!(args.block_count, [3, 2, 1]);
        assert_eq!(args.remainder, [4, 0, 0]);
        assert_eq!(args.group_size, [32, 4, 1]);
        assert_eq!(args.grid_dims, 3, "every dispatch says three dimensions");
    }
}
