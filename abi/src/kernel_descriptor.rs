//! The 64-byte AMDHSA kernel descriptor (`<kernel>.kd` symbol), as LLVM's AMDGPUUsage defines it.
//!
//! A dispatch packet's `kernel_object` is the address of this descriptor in loaded code memory.

use bytemuck::{Pod, Zeroable};

use crate::{assert_layout, assert_offset};

#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Pod, Zeroable, PartialEq, Eq)]
pub struct KernelDescriptor {
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub kernarg_size: u32,
    pub reserved0: [u8; 4],
    /// Byte offset from this descriptor to the kernel's entry point.
    pub kernel_code_entry_byte_offset: i64,
    pub reserved1: [u8; 20],
    pub compute_pgm_rsrc3: u32,
    pub compute_pgm_rsrc1: u32,
    pub compute_pgm_rsrc2: u32,
    pub kernel_code_properties: u16,
    pub kernarg_preload: u16,
    pub reserved3: [u8; 4],
}
assert_layout!(KernelDescriptor, size = 64, align = 64);
assert_offset!(KernelDescriptor, private_segment_fixed_size, 4);
assert_offset!(KernelDescriptor, kernarg_size, 8);
assert_offset!(KernelDescriptor, kernel_code_entry_byte_offset, 16);
assert_offset!(KernelDescriptor, compute_pgm_rsrc3, 44);
assert_offset!(KernelDescriptor, compute_pgm_rsrc1, 48);
assert_offset!(KernelDescriptor, compute_pgm_rsrc2, 52);
assert_offset!(KernelDescriptor, kernel_code_properties, 56);
assert_offset!(KernelDescriptor, kernarg_preload, 58);

/// Bits of `kernel_code_properties`.
pub mod kernel_code_properties {
    pub const ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER: u16 = 1 << 0;
    pub const ENABLE_SGPR_DISPATCH_PTR: u16 = 1 << 1;
    pub const ENABLE_SGPR_QUEUE_PTR: u16 = 1 << 2;
    pub const ENABLE_SGPR_KERNARG_SEGMENT_PTR: u16 = 1 << 3;
    pub const ENABLE_SGPR_DISPATCH_ID: u16 = 1 << 4;
    pub const ENABLE_SGPR_FLAT_SCRATCH_INIT: u16 = 1 << 5;
    pub const ENABLE_SGPR_PRIVATE_SEGMENT_SIZE: u16 = 1 << 6;
    pub const ENABLE_WAVEFRONT_SIZE32: u16 = 1 << 10;
    pub const USES_DYNAMIC_STACK: u16 = 1 << 11;
}

impl KernelDescriptor {
    pub const fn is_wave32(&self) -> bool {
        self.kernel_code_properties & kernel_code_properties::ENABLE_WAVEFRONT_SIZE32 != 0
    }
}
