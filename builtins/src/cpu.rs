//! CPU twins of the device library for the soft HSA runtime.
//!
//! Each reads the kernarg struct from `layout.rs` (the layout the code objects declare, checked
//! by the `kernarg_layout` test) and walks the same grid-stride loop as its C kernel in
//! `device/blit.c`, so a capped grid covers the whole range here exactly as on a GPU; the
//! single-shot kernels (`timestamp`, `patch_indirect`) act in work-item 0 only, as theirs do.
//! Memory is written little-endian whatever the host, as a GPU would.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use aqueduct_abi::{KernelFault, SoftKernel, WorkgroupContext};

use crate::layout::{
    Builtin, CopyArgs, FillArgs, PatchIndirectArgs, TimestampArgs, UpdateInlineArgs,
};

/// HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: what a GPU reports for a store through null.
const APERTURE_VIOLATION: u32 = 41;

/// Every builtin's CPU implementation, keyed by descriptor symbol, for
/// `aqueduct_hsa::soft::register_kernels`.
pub const CPU_KERNELS: &[SoftKernel] = &[
    SoftKernel {
        symbol: Builtin::FillX1.symbol(),
        function: fill_x1,
    },
    SoftKernel {
        symbol: Builtin::FillX2.symbol(),
        function: fill_x2,
    },
    SoftKernel {
        symbol: Builtin::FillX4.symbol(),
        function: fill_x4,
    },
    SoftKernel {
        symbol: Builtin::FillX8.symbol(),
        function: fill_x8,
    },
    SoftKernel {
        symbol: Builtin::FillBlockX16.symbol(),
        function: fill_block_x16,
    },
    SoftKernel {
        symbol: Builtin::CopyX1.symbol(),
        function: copy_x1,
    },
    SoftKernel {
        symbol: Builtin::CopyBlockX4.symbol(),
        function: copy_block_x4,
    },
    SoftKernel {
        symbol: Builtin::CopyBlockX8.symbol(),
        function: copy_block_x8,
    },
    SoftKernel {
        symbol: Builtin::CopyBlockX16.symbol(),
        function: copy_block_x16,
    },
    SoftKernel {
        symbol: Builtin::CopyBlockUnalignedX16.symbol(),
        function: copy_block_unaligned_x16,
    },
    SoftKernel {
        symbol: Builtin::UpdateInline.symbol(),
        function: update_inline,
    },
    SoftKernel {
        symbol: Builtin::Timestamp.symbol(),
        function: timestamp,
    },
    SoftKernel {
        symbol: Builtin::PatchIndirect.symbol(),
        function: patch_indirect,
    },
];

/// Nanoseconds on a monotonic host clock (since its first use in this process): what the CPU
/// twin of `timestamp` writes.
pub fn host_timestamp_ns() -> u64 {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    // Saturates after ~584 years of uptime.
    u64::try_from(ORIGIN.get_or_init(Instant::now).elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Runs `body` for every index this workgroup visits, in the C kernels' order: work-item
/// `first = workgroup_id * workgroup_size + lane` takes `first`, `first + grid`, ... below `count`.
fn for_each_index(context: &WorkgroupContext, count: u64, mut body: impl FnMut(u64)) {
    let stride = u64::from(context.grid_size[0]);
    if stride == 0 {
        return; // An empty grid launches no work-items.
    }
    let group_start = u64::from(context.workgroup_id[0]) * u64::from(context.workgroup_size[0]);
    for lane in 0..u64::from(context.active_size()[0]) {
        let mut index = group_start + lane;
        while index < count {
            body(index);
            index += stride;
        }
    }
}

fn null_fault(kernel: &'static str) -> KernelFault {
    KernelFault {
        status: APERTURE_VIOLATION,
        reason: kernel,
    }
}

/// Fills `element_count` elements of `BYTES` bytes: element i gets pattern lane `i % (8 / BYTES)`
/// (16-byte blocks get the pattern twice), so byte k of the range is pattern byte `k % 8`.
///
/// # Safety
/// The context's kernarg segment holds a [`FillArgs`] whose target is valid for the range.
unsafe fn fill<const BYTES: usize>(
    context: &WorkgroupContext,
    name: &'static str,
) -> Result<(), KernelFault> {
    // SAFETY: per this function's contract the segment holds a FillArgs at offset 0.
    let args: FillArgs = unsafe { context.kernarg(0) };
    if args.target == 0 && args.element_count != 0 {
        return Err(null_fault(name));
    }
    let pattern = args.pattern.to_le_bytes();
    let target = args.target as *mut u8;
    for_each_index(context, args.element_count, |index| {
        let start = index as usize * BYTES;
        let phase = start % 8;
        let mut element = [0u8; BYTES];
        for (k, byte) in element.iter_mut().enumerate() {
            *byte = pattern[(phase + k) % 8];
        }
        // SAFETY: the dispatcher vouches that [target, target + count * BYTES) is writable, and
        // work-items write disjoint elements; `write_unaligned` tolerates any address.
        unsafe {
            target
                .add(start)
                .cast::<[u8; BYTES]>()
                .write_unaligned(element)
        };
    });
    Ok(())
}

unsafe fn fill_x1(context: &WorkgroupContext) -> Result<(), KernelFault> {
    // SAFETY: the soft runtime passes this kernel's kernarg segment (SoftKernelFn contract).
    unsafe { fill::<1>(context, "fill_x1: null target") }
}

unsafe fn fill_x2(context: &WorkgroupContext) -> Result<(), KernelFault> {
    // SAFETY: as for fill_x1.
    unsafe { fill::<2>(context, "fill_x2: null target") }
}

unsafe fn fill_x4(context: &WorkgroupContext) -> Result<(), KernelFault> {
    // SAFETY: as for fill_x1.
    unsafe { fill::<4>(context, "fill_x4: null target") }
}

unsafe fn fill_x8(context: &WorkgroupContext) -> Result<(), KernelFault> {
    // SAFETY: as for fill_x1.
    unsafe { fill::<8>(context, "fill_x8: null target") }
}

unsafe fn fill_block_x16(context: &WorkgroupContext) -> Result<(), KernelFault> {
    // SAFETY: as for fill_x1.
    unsafe { fill::<16>(context, "fill_block_x16: null target") }
}

/// Copies `element_count` elements of `BYTES` bytes.
///
/// # Safety
/// The context's kernarg segment holds a [`CopyArgs`] whose ranges are valid and disjoint.
unsafe fn copy<const BYTES: usize>(
    context: &WorkgroupContext,
    name: &'static str,
) -> Result<(), KernelFault> {
    // SAFETY: per this function's contract the segment holds a CopyArgs at offset 0.
    let args: CopyArgs = unsafe { context.kernarg(0) };
    if (args.source == 0 || args.target == 0) && args.element_count != 0 {
        return Err(null_fault(name));
    }
    let (source, target) = (args.source as *const u8, args.target as *mut u8);
    for_each_index(context, args.element_count, |index| {
        let start = index as usize * BYTES;
        // SAFETY: the dispatcher vouches for both ranges and that they do not overlap;
        // work-items touch disjoint elements.
        unsafe { core::ptr::copy_nonoverlapping(source.add(start), target.add(start), BYTES) };
    });
    Ok(())
}

unsafe fn copy_x1(context: &WorkgroupContext) -> Result<(), KernelFault> {
    // SAFETY: the soft runtime passes this kernel's kernarg segment (SoftKernelFn contract).
    unsafe { copy::<1>(context, "copy_x1: null pointer") }
}

unsafe fn copy_block_x4(context: &WorkgroupContext) -> Result<(), KernelFault> {
    // SAFETY: as for copy_x1.
    unsafe { copy::<4>(context, "copy_block_x4: null pointer") }
}

unsafe fn copy_block_x8(context: &WorkgroupContext) -> Result<(), KernelFault> {
    // SAFETY: as for copy_x1.
    unsafe { copy::<8>(context, "copy_block_x8: null pointer") }
}

unsafe fn copy_block_x16(context: &WorkgroupContext) -> Result<(), KernelFault> {
    // SAFETY: as for copy_x1.
    unsafe { copy::<16>(context, "copy_block_x16: null pointer") }
}

/// `element_count` is in bytes; work-item i moves bytes [16i, 16i + 16) clipped to the length.
unsafe fn copy_block_unaligned_x16(context: &WorkgroupContext) -> Result<(), KernelFault> {
    // SAFETY: the soft runtime passes this kernel's kernarg segment, which holds a CopyArgs.
    let args: CopyArgs = unsafe { context.kernarg(0) };
    if (args.source == 0 || args.target == 0) && args.element_count != 0 {
        return Err(null_fault("copy_block_unaligned_x16: null pointer"));
    }
    let (source, target) = (args.source as *const u8, args.target as *mut u8);
    let length = args.element_count;
    for_each_index(context, length.div_ceil(16), |block| {
        let start = block * 16;
        let bytes = (length - start).min(16) as usize;
        // SAFETY: as in `copy`; the block lies inside [0, length).
        unsafe {
            core::ptr::copy_nonoverlapping(
                source.add(start as usize),
                target.add(start as usize),
                bytes,
            )
        };
    });
    Ok(())
}

unsafe fn update_inline(context: &WorkgroupContext) -> Result<(), KernelFault> {
    // SAFETY: the soft runtime passes this kernel's kernarg segment, which holds an
    // UpdateInlineArgs (the planner always provides the full 208 bytes the metadata declares).
    let args: UpdateInlineArgs = unsafe { context.kernarg(0) };
    if args.target == 0 && args.byte_length != 0 {
        return Err(null_fault("update_inline: null target"));
    }
    let target = args.target as *mut u8;
    // A GPU would read past the payload for a bogus length; clamp instead of faulting the host.
    let length = args.byte_length.min(args.payload.len() as u32);
    for_each_index(context, u64::from(length), |index| {
        let index = index as usize;
        // SAFETY: the dispatcher vouches that [target, target + byte_length) is writable.
        unsafe { target.add(index).write(args.payload[index]) };
    });
    Ok(())
}

unsafe fn timestamp(context: &WorkgroupContext) -> Result<(), KernelFault> {
    // SAFETY: the soft runtime passes this kernel's kernarg segment, which holds a TimestampArgs.
    let args: TimestampArgs = unsafe { context.kernarg(0) };
    if args.target == 0 {
        return Err(null_fault("timestamp: null target"));
    }
    // Work-item 0 alone writes, as in the C kernel.
    let first_work_item = context.workgroup_id[0] == 0 && context.active_size()[0] > 0;
    if first_work_item {
        let now = host_timestamp_ns().to_le_bytes();
        // SAFETY: the dispatcher vouches that 8 bytes at `target` are writable.
        unsafe { (args.target as *mut [u8; 8]).write_unaligned(now) };
    }
    Ok(())
}

/// The clamp rule, identical in `device/blit.c`: a workgroup count whose grid (`count * group`)
/// fits in u32 is kept; otherwise it becomes the largest count that fits, `u32::MAX / group`. No
/// error is raised. A zero workgroup size never overflows (grid 0, count kept).
fn effective_count(count: u32, group: u16) -> u32 {
    let group = u32::from(group);
    if u64::from(count) * u64::from(group) > u64::from(u32::MAX) {
        u32::MAX / group // group != 0 here: a zero group makes the product 0.
    } else {
        count
    }
}

/// Completes the indirect dispatch packet at `packet` (see [`PatchIndirectArgs`]): grid sizes from
/// the workgroup counts and the packet's workgroup sizes, optionally the target's hidden block
/// counts and remainders, and last the header word with a release store. Only work-item 0 of
/// workgroup 0 acts, as in the C kernel.
unsafe fn patch_indirect(context: &WorkgroupContext) -> Result<(), KernelFault> {
    // SAFETY: the soft runtime passes this kernel's kernarg segment, which holds a
    // PatchIndirectArgs (32 bytes, as the metadata declares).
    let args: PatchIndirectArgs = unsafe { context.kernarg(0) };
    if args.packet == 0 || args.counts == 0 {
        return Err(null_fault("patch_indirect: null packet or counts"));
    }
    // The header store is atomic, and `AtomicU32` needs 4-byte alignment (the planner asks for
    // 64). On a GPU a misaligned header store would not be single-copy atomic; here it is refused.
    if !args.packet.is_multiple_of(4) {
        return Err(KernelFault {
            status: APERTURE_VIOLATION,
            reason: "patch_indirect: misaligned packet",
        });
    }
    let active = context.active_size();
    let first_work_item = context.workgroup_id == [0, 0, 0] && active.iter().all(|&n| n > 0);
    if !first_work_item {
        return Ok(());
    }
    let packet = args.packet as *mut u8;
    // SAFETY: the dispatcher vouches that 12 bytes at `counts` are readable; `read_unaligned`
    // tolerates any address.
    let counts: [[u8; 4]; 3] = unsafe { (args.counts as *const [[u8; 4]; 3]).read_unaligned() };
    // SAFETY: the dispatcher vouches that `packet` is a 64-byte dispatch packet: bytes 4..10 hold
    // the workgroup sizes and are readable.
    let groups: [[u8; 2]; 3] = unsafe { packet.add(4).cast::<[[u8; 2]; 3]>().read_unaligned() };
    let mut blocks = [0u32; 3];
    let mut grid = [[0u8; 4]; 3];
    for axis in 0..3 {
        let group = u16::from_le_bytes(groups[axis]);
        blocks[axis] = effective_count(u32::from_le_bytes(counts[axis]), group);
        // Cannot overflow: the effective count keeps the product within u32.
        grid[axis] = (blocks[axis] * u32::from(group)).to_le_bytes();
    }
    // SAFETY: bytes 12..24 of the packet are its grid sizes, writable per the dispatcher; nothing
    // reads them until the header below makes the packet valid.
    unsafe { packet.add(12).cast::<[[u8; 4]; 3]>().write_unaligned(grid) };
    if args.implicit_args != 0 {
        let implicit = args.implicit_args as *mut u8;
        let block_counts = blocks.map(u32::to_le_bytes);
        // SAFETY: a non-null `implicit_args` is the target dispatch's hidden-argument block,
        // which the dispatcher vouches is writable for at least 24 bytes (block counts at +0..12,
        // remainders at +18..24); `write_unaligned` tolerates any address.
        unsafe {
            implicit
                .cast::<[[u8; 4]; 3]>()
                .write_unaligned(block_counts);
            implicit.add(18).cast::<[u8; 6]>().write_unaligned([0; 6]);
        }
    }
    // SAFETY: `packet` is non-null and 4-byte aligned (checked above), and its first 4 bytes are
    // the header word, which for the rest of the dispatch is only accessed atomically (the packet
    // processor polls it with acquire loads; the host wrote it before submitting this dispatch).
    let header_word = unsafe { AtomicU32::from_ptr(packet.cast::<u32>()) };
    // Release: the grid and hidden-argument writes above are visible to whoever acquires the
    // header. The word is stored little-endian, as a GPU would.
    header_word.store(args.header.to_le(), Ordering::Release);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_has_exactly_one_cpu_kernel() {
        let symbols: Vec<&str> = CPU_KERNELS.iter().map(|kernel| kernel.symbol).collect();
        let expected: Vec<&str> = Builtin::ALL
            .iter()
            .map(|builtin| builtin.symbol())
            .collect();
        assert_eq!(symbols, expected);
    }

    #[test]
    fn effective_count_clamps_to_the_largest_fitting_multiple() {
        assert_eq!(effective_count(0, 64), 0);
        assert_eq!(effective_count(7, 64), 7);
        assert_eq!(effective_count(u32::MAX, 1), u32::MAX);
        assert_eq!(effective_count(u32::MAX, 0), u32::MAX);
        assert_eq!(effective_count(1 << 26, 64), (1 << 26) - 1); // 2^32 does not fit
        assert_eq!(effective_count((1 << 26) - 1, 64), (1 << 26) - 1);
        assert_eq!(effective_count(0x1_0001, 0xFFFF), 0x1_0001); // 0xFFFF_FFFF exactly fits
        assert_eq!(effective_count(0x1_0002, 0xFFFF), 0x1_0001);
        for group in [1u16, 3, 64, 100, 1024, 0xFFFF] {
            let count = effective_count(u32::MAX, group);
            let grid = u64::from(count) * u64::from(group);
            assert!(grid <= u64::from(u32::MAX), "{group}");
            assert!(
                grid + u64::from(group) > u64::from(u32::MAX),
                "{group}: largest"
            );
        }
    }

    #[test]
    fn host_time_is_monotonic() {
        let first = host_timestamp_ns();
        let second = host_timestamp_ns();
        assert!(second >= first);
    }
}
