//! Host-side choice of kernel, kernargs and grid for fills, copies, updates, timestamps and
//! indirect-dispatch patches.
//!
//! Pure functions: they validate, then describe a dispatch; nothing is allocated on a device and
//! nothing is written. Grids are one-dimensional and capped at [`MAX_GRID_SIZE`] work-items; the
//! kernels' grid-stride loops cover the rest. A zero-length request is a valid no-op plan: a real
//! 1×1 dispatch whose element count is 0, so a caller that needs a packet (for its completion
//! signal or barrier) can still submit one, and one that does not can skip it
//! ([`DispatchPlan::is_noop`]).

use crate::layout::{
    Builtin, CopyArgs, FillArgs, PatchIndirectArgs, TimestampArgs, UPDATE_INLINE_MAX_BYTES, UpdateInlineArgs,
};

/// Work-items per workgroup: one wave64 or two wave32 waves.
pub const WORKGROUP_SIZE: u16 = 64;

/// The most work-items a builtin dispatch asks for (1024 workgroups of 64), enough to fill any
/// current GPU several times over; longer ranges are covered by the grid-stride loops.
pub const MAX_GRID_SIZE: u32 = 1024 * WORKGROUP_SIZE as u32;

/// Copies at least this long that no aligned block kernel can take use the unaligned 16-byte
/// block kernel; shorter ones go bytewise.
pub const UNALIGNED_BLOCK_MIN_BYTES: u64 = 128;

/// Why a request has no plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("fill pattern width {width} is not 1, 2, 4 or 8 bytes")]
    UnsupportedPatternWidth { width: u8 },
    #[error("fill pattern {pattern:#x} has bits above its {width}-byte width")]
    PatternWiderThanWidth { pattern: u64, width: u8 },
    #[error("length {length} is not a multiple of the {width}-byte pattern")]
    LengthNotMultipleOfPattern { length: u64, width: u8 },
    #[error("null address for a {length}-byte range")]
    NullAddress { length: u64 },
    #[error("range at {address:#x} of {length} bytes wraps around the address space")]
    RangeOverflow { address: u64, length: u64 },
    #[error("address {address:#x} is not {required}-byte aligned")]
    Misaligned { address: u64, required: u64 },
    // Not `source`: thiserror reserves that field name for the underlying error.
    #[error("copy ranges overlap: source {from:#x}, target {to:#x}, {length} bytes")]
    OverlappingCopy { from: u64, to: u64, length: u64 },
    #[error("inline update of {length} bytes exceeds the {max}-byte limit; place it in memory and copy it")]
    InlineUpdateTooLarge { length: usize, max: usize },
}

/// The kernarg segment of a planned dispatch, as the kernel's C parameters lay it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernargs {
    Fill(FillArgs),
    Copy(CopyArgs),
    UpdateInline(UpdateInlineArgs),
    Timestamp(TimestampArgs),
    PatchIndirect(PatchIndirectArgs),
    BlockProcessor(crate::BlockProcessorArgs),
}

impl Kernargs {
    /// The bytes to place at the packet's `kernarg_address` (the kernels read no hidden arguments).
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Kernargs::Fill(args) => bytemuck::bytes_of(args),
            Kernargs::Copy(args) => bytemuck::bytes_of(args),
            Kernargs::UpdateInline(args) => bytemuck::bytes_of(args),
            Kernargs::Timestamp(args) => bytemuck::bytes_of(args),
            Kernargs::PatchIndirect(args) => bytemuck::bytes_of(args),
            Kernargs::BlockProcessor(args) => bytemuck::bytes_of(args),
        }
    }

    fn element_count(&self) -> u64 {
        match self {
            Kernargs::Fill(args) => args.element_count,
            Kernargs::Copy(args) => args.element_count,
            Kernargs::UpdateInline(args) => u64::from(args.byte_length),
            // Never a no-op: it must publish the target packet's header, or the target's packets.
            Kernargs::Timestamp(_) | Kernargs::PatchIndirect(_) | Kernargs::BlockProcessor(_) => 1,
        }
    }
}

/// One dispatch of a builtin kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DispatchPlan {
    pub kernel: Builtin,
    pub kernargs: Kernargs,
    /// Work-items along X (Y and Z are 1).
    pub grid_size: u32,
    /// Work-items per workgroup along X (Y and Z are 1).
    pub workgroup_size: u16,
}

impl DispatchPlan {
    /// The plan's launch of `kernel_object`, with no group or private memory beyond the
    /// kernel's own (for running the plan outside a queue, as the interpreter's tests and bench
    /// do; a queue's launch takes the segment sizes from the loaded builtin).
    pub fn template(&self, kernel_object: u64) -> aqueduct_abi::DispatchTemplate {
        aqueduct_abi::DispatchTemplate::linear(kernel_object, self.grid_size, self.workgroup_size, 0, 0)
    }

    pub fn kernel_symbol(&self) -> &'static str {
        self.kernel.symbol()
    }

    pub fn kernarg_bytes(&self) -> &[u8] {
        self.kernargs.as_bytes()
    }

    /// True when the dispatch would touch no memory.
    pub fn is_noop(&self) -> bool {
        self.kernargs.element_count() == 0
    }

    fn new(kernel: Builtin, kernargs: Kernargs, work_items: u64) -> Self {
        if work_items == 0 {
            return Self { kernel, kernargs, grid_size: 1, workgroup_size: 1 };
        }
        // Lossless: the value is at most MAX_GRID_SIZE.
        let grid_size = work_items.min(u64::from(MAX_GRID_SIZE)) as u32;
        Self { kernel, kernargs, grid_size, workgroup_size: WORKGROUP_SIZE }
    }
}

/// Checks that `[address, address + length)` is a plausible device range.
fn check_range(address: u64, length: u64) -> Result<(), PlanError> {
    if length == 0 {
        return Ok(());
    }
    if address == 0 {
        return Err(PlanError::NullAddress { length });
    }
    match address.checked_add(length) {
        Some(_) => Ok(()),
        None => Err(PlanError::RangeOverflow { address, length }),
    }
}

/// Repeats a `width`-byte pattern across 64 bits (little-endian: byte k gets pattern byte k % width).
fn widen_pattern(pattern: u64, width: u64) -> u64 {
    let mut widened = pattern;
    let mut filled = width * 8;
    while filled < 64 {
        widened |= widened << filled;
        filled *= 2;
    }
    widened
}

/// Plans filling `byte_length` bytes at `target` with a `pattern_width`-byte `pattern`.
///
/// The kernel is the widest element (16, 8, 4, 2 or 1 bytes) to which both `target` and
/// `byte_length` are aligned; every fill kernel takes the pattern widened to 64 bits, so the choice
/// depends on alignment only, never on the pattern width.
pub fn plan_fill(target: u64, byte_length: u64, pattern: u64, pattern_width: u8) -> Result<DispatchPlan, PlanError> {
    let width = u64::from(pattern_width);
    if !matches!(pattern_width, 1 | 2 | 4 | 8) {
        return Err(PlanError::UnsupportedPatternWidth { width: pattern_width });
    }
    if width < 8 && pattern >> (width * 8) != 0 {
        return Err(PlanError::PatternWiderThanWidth { pattern, width: pattern_width });
    }
    if !byte_length.is_multiple_of(width) {
        return Err(PlanError::LengthNotMultipleOfPattern { length: byte_length, width: pattern_width });
    }
    check_range(target, byte_length)?;
    let kernel = [Builtin::FillBlockX16, Builtin::FillX8, Builtin::FillX4, Builtin::FillX2]
        .into_iter()
        .find(|kernel| (target | byte_length).is_multiple_of(kernel.element_bytes()))
        .unwrap_or(Builtin::FillX1);
    let element_count = byte_length / kernel.element_bytes();
    let args = FillArgs { target, element_count, pattern: widen_pattern(pattern, width) };
    Ok(DispatchPlan::new(kernel, Kernargs::Fill(args), element_count))
}

/// Plans copying `byte_length` bytes from `source` to `target` (non-overlapping).
///
/// 16-, 8- or 4-byte alignment of both addresses and the length picks the matching block kernel;
/// otherwise copies of at least [`UNALIGNED_BLOCK_MIN_BYTES`] use the unaligned 16-byte block
/// kernel and shorter ones the bytewise kernel.
pub fn plan_copy(source: u64, target: u64, byte_length: u64) -> Result<DispatchPlan, PlanError> {
    check_range(source, byte_length)?;
    check_range(target, byte_length)?;
    // Both ends are known not to wrap, so the comparisons below are exact.
    if byte_length != 0 && source < target + byte_length && target < source + byte_length {
        return Err(PlanError::OverlappingCopy { from: source, to: target, length: byte_length });
    }
    let aligned_to = |bytes: u64| (source | target | byte_length).is_multiple_of(bytes);
    let block = [Builtin::CopyBlockX16, Builtin::CopyBlockX8, Builtin::CopyBlockX4]
        .into_iter()
        .find(|kernel| aligned_to(kernel.element_bytes()));
    let (kernel, work_items) = match block {
        Some(kernel) => (kernel, byte_length / kernel.element_bytes()),
        None if byte_length >= UNALIGNED_BLOCK_MIN_BYTES => (Builtin::CopyBlockUnalignedX16, byte_length.div_ceil(16)),
        None => (Builtin::CopyX1, byte_length),
    };
    let element_count = byte_length / kernel.element_bytes();
    let args = CopyArgs { source, target, element_count };
    Ok(DispatchPlan::new(kernel, Kernargs::Copy(args), work_items))
}

/// Plans writing `data` (at most [`UPDATE_INLINE_MAX_BYTES`]) to `target`, carried in the
/// kernarg segment so no separate source memory is needed.
pub fn plan_update_inline(target: u64, data: &[u8]) -> Result<DispatchPlan, PlanError> {
    if data.len() > UPDATE_INLINE_MAX_BYTES {
        return Err(PlanError::InlineUpdateTooLarge { length: data.len(), max: UPDATE_INLINE_MAX_BYTES });
    }
    let length = data.len() as u64; // ≤ 192
    check_range(target, length)?;
    let mut payload = [0u8; UPDATE_INLINE_MAX_BYTES];
    payload[..data.len()].copy_from_slice(data);
    let args = UpdateInlineArgs { target, byte_length: data.len() as u32, reserved: 0, payload };
    Ok(DispatchPlan::new(Builtin::UpdateInline, Kernargs::UpdateInline(args), length))
}

/// Plans an update whose bytes the caller already placed in device-visible memory: a
/// plain copy from `source_area` to `target` (updates larger than the inline limit go this way).
pub fn plan_update_copied(source_area: u64, target: u64, byte_length: u64) -> Result<DispatchPlan, PlanError> {
    plan_copy(source_area, target, byte_length)
}

/// Plans writing one device timestamp (a u64) to the 8-byte-aligned `target`.
pub fn plan_timestamp(target: u64) -> Result<DispatchPlan, PlanError> {
    check_range(target, 8)?;
    if !target.is_multiple_of(8) {
        return Err(PlanError::Misaligned { address: target, required: 8 });
    }
    let plan = DispatchPlan::new(Builtin::Timestamp, Kernargs::Timestamp(TimestampArgs { target }), 1);
    Ok(DispatchPlan { workgroup_size: 1, ..plan })
}

/// Checks that a `length`-byte object at the non-null `address` does not wrap and is `required`-byte
/// aligned.
fn check_object(address: u64, length: u64, required: u64) -> Result<(), PlanError> {
    check_range(address, length)?;
    if !address.is_multiple_of(required) {
        return Err(PlanError::Misaligned { address, required });
    }
    Ok(())
}

/// Plans completing an indirect dispatch: a 1×1×1 `patch_indirect` dispatch that reads three u32
/// workgroup counts at `counts_address`, writes the grid sizes of the 64-byte-aligned dispatch
/// packet at `packet_address` (and, if `implicit_args_address` is not 0, that dispatch's hidden
/// block counts and remainders), then stores `header_word` (`header | setup << 16`) to the
/// packet's first 4 bytes with a system-scope release. A count whose grid would overflow u32 is
/// clamped to the largest count that fits (see [`PatchIndirectArgs`]).
///
/// The packet must already hold its workgroup sizes and an INVALID header; `counts` must be
/// 4-byte aligned, and so must a non-zero `implicit_args_address` (24 bytes are written there).
pub fn plan_patch_indirect(
    packet_address: u64,
    counts_address: u64,
    implicit_args_address: u64,
    header_word: u32,
) -> Result<DispatchPlan, PlanError> {
    check_object(packet_address, 64, 64)?;
    check_object(counts_address, 12, 4)?;
    if implicit_args_address != 0 {
        check_object(implicit_args_address, 24, 4)?;
    }
    let args = PatchIndirectArgs {
        packet: packet_address,
        counts: counts_address,
        implicit_args: implicit_args_address,
        header: header_word,
        reserved: 0,
    };
    Ok(DispatchPlan {
        kernel: Builtin::PatchIndirect,
        kernargs: Kernargs::PatchIndirect(args),
        grid_size: 1,
        workgroup_size: 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill_args(plan: &DispatchPlan) -> FillArgs {
        match plan.kernargs {
            Kernargs::Fill(args) => args,
            other => panic!("not a fill: {other:?}"),
        }
    }

    #[test]
    fn fill_picks_the_widest_element_the_alignment_allows() {
        let cases = [
            (0x1000, 64, 1, Builtin::FillBlockX16, 4),
            (0x1000, 72, 1, Builtin::FillX8, 9),
            (0x1008, 64, 8, Builtin::FillX8, 8),
            (0x1004, 64, 4, Builtin::FillX4, 16),
            (0x1000, 12, 4, Builtin::FillX4, 3),
            (0x1002, 64, 2, Builtin::FillX2, 32),
            (0x1001, 64, 1, Builtin::FillX1, 64),
            (0x1000, 3, 1, Builtin::FillX1, 3),
            // A wide pattern at a narrowly aligned address still works, element by element.
            (0x1002, 16, 8, Builtin::FillX2, 8),
        ];
        for (target, length, width, kernel, count) in cases {
            let plan = plan_fill(target, length, 0xAB, width).expect("valid fill");
            assert_eq!((plan.kernel, fill_args(&plan).element_count), (kernel, count), "{target:#x}+{length} w{width}");
            assert_eq!(plan.kernarg_bytes().len(), 24);
            assert_eq!(plan.workgroup_size, WORKGROUP_SIZE);
            assert_eq!(u64::from(plan.grid_size), count);
        }
    }

    #[test]
    fn patterns_are_widened_to_64_bits() {
        assert_eq!(widen_pattern(0xAB, 1), 0xABAB_ABAB_ABAB_ABAB);
        assert_eq!(widen_pattern(0xBEEF, 2), 0xBEEF_BEEF_BEEF_BEEF);
        assert_eq!(widen_pattern(0xDEAD_BEEF, 4), 0xDEAD_BEEF_DEAD_BEEF);
        assert_eq!(widen_pattern(0x0123_4567_89AB_CDEF, 8), 0x0123_4567_89AB_CDEF);
        let plan = plan_fill(0x1000, 16, 0x1234, 2).expect("valid");
        assert_eq!(fill_args(&plan).pattern, 0x1234_1234_1234_1234);
    }

    #[test]
    fn bad_fills_are_typed_errors() {
        assert_eq!(plan_fill(0x1000, 16, 0, 3), Err(PlanError::UnsupportedPatternWidth { width: 3 }));
        assert_eq!(plan_fill(0x1000, 16, 0, 0), Err(PlanError::UnsupportedPatternWidth { width: 0 }));
        assert_eq!(plan_fill(0x1000, 16, 0, 16), Err(PlanError::UnsupportedPatternWidth { width: 16 }));
        assert_eq!(plan_fill(0x1000, 16, 0x100, 1), Err(PlanError::PatternWiderThanWidth { pattern: 0x100, width: 1 }));
        assert_eq!(
            plan_fill(0x1000, 16, 0x1_0000_0000, 4),
            Err(PlanError::PatternWiderThanWidth { pattern: 0x1_0000_0000, width: 4 })
        );
        assert_eq!(plan_fill(0x1000, 6, 0, 4), Err(PlanError::LengthNotMultipleOfPattern { length: 6, width: 4 }));
        assert_eq!(plan_fill(0, 16, 0, 1), Err(PlanError::NullAddress { length: 16 }));
        assert_eq!(
            plan_fill(u64::MAX - 3, 8, 0, 1),
            Err(PlanError::RangeOverflow { address: u64::MAX - 3, length: 8 })
        );
        // Width is checked before the length, and the pattern before either.
        assert_eq!(
            plan_fill(0x1000, 3, 0x1_0000, 2),
            Err(PlanError::PatternWiderThanWidth { pattern: 0x1_0000, width: 2 })
        );
    }

    #[test]
    fn zero_length_is_a_noop_dispatch() {
        for plan in [
            plan_fill(0x1000, 0, 0xFF, 1).expect("valid"),
            plan_fill(0, 0, 0xFFFF_FFFF, 4).expect("null is fine for nothing"),
            plan_copy(0x1001, 0x2003, 0).expect("valid"),
            plan_update_inline(0x1000, &[]).expect("valid"),
        ] {
            assert!(plan.is_noop(), "{plan:?}");
            assert_eq!((plan.grid_size, plan.workgroup_size), (1, 1));
        }
        assert!(!plan_fill(0x1000, 1, 0, 1).expect("valid").is_noop());
    }

    #[test]
    fn copy_choice() {
        let cases = [
            (0x1000, 0x20000, 4096, Builtin::CopyBlockX16, 256, 256),
            (0x1008, 0x20000, 4096, Builtin::CopyBlockX8, 512, 512),
            (0x1000, 0x20000, 4104, Builtin::CopyBlockX8, 513, 513),
            (0x1004, 0x20000, 4096, Builtin::CopyBlockX4, 1024, 1024),
            (0x1001, 0x20000, 128, Builtin::CopyBlockUnalignedX16, 128, 8),
            (0x1000, 0x20000, 131, Builtin::CopyBlockUnalignedX16, 131, 9),
            (0x1001, 0x20000, 127, Builtin::CopyX1, 127, 127),
            (0x1000, 0x20000, 2, Builtin::CopyX1, 2, 2),
        ];
        for (source, target, length, kernel, count, grid) in cases {
            let plan = plan_copy(source, target, length).expect("valid copy");
            let Kernargs::Copy(args) = plan.kernargs else { panic!("not a copy") };
            assert_eq!(
                (plan.kernel, args.element_count, plan.grid_size),
                (kernel, count, grid),
                "{source:#x}->{target:#x} {length}"
            );
            assert_eq!((args.source, args.target), (source, target));
        }
    }

    #[test]
    fn bad_copies_are_typed_errors() {
        assert_eq!(
            plan_copy(0x1000, 0x1010, 32),
            Err(PlanError::OverlappingCopy { from: 0x1000, to: 0x1010, length: 32 })
        );
        assert_eq!(
            plan_copy(0x1010, 0x1000, 32),
            Err(PlanError::OverlappingCopy { from: 0x1010, to: 0x1000, length: 32 })
        );
        assert!(plan_copy(0x1000, 0x1020, 32).is_ok(), "adjacent ranges do not overlap");
        assert_eq!(plan_copy(0, 0x1000, 1), Err(PlanError::NullAddress { length: 1 }));
        assert_eq!(plan_copy(0x1000, u64::MAX, 2), Err(PlanError::RangeOverflow { address: u64::MAX, length: 2 }));
    }

    #[test]
    fn grids_are_capped() {
        let plan = plan_fill(0x1001, 10 << 20, 7, 1).expect("valid");
        assert_eq!((plan.kernel, plan.grid_size), (Builtin::FillX1, MAX_GRID_SIZE));
        let plan = plan_copy(0x1001, 0x1000_0000, 10 << 20).expect("valid");
        assert_eq!((plan.kernel, plan.grid_size), (Builtin::CopyBlockUnalignedX16, MAX_GRID_SIZE));
    }

    #[test]
    fn updates() {
        let data: Vec<u8> = (0..192).map(|i| i as u8).collect();
        let plan = plan_update_inline(0x1000, &data).expect("fits");
        let Kernargs::UpdateInline(args) = plan.kernargs else { panic!("not inline") };
        assert_eq!((args.byte_length, &args.payload[..]), (192, &data[..]));
        assert_eq!(plan.kernarg_bytes().len(), 208);
        assert_eq!(
            plan_update_inline(0x1000, &[0; 193]),
            Err(PlanError::InlineUpdateTooLarge { length: 193, max: 192 })
        );
        let copied = plan_update_copied(0x8000, 0x1000, 4096).expect("valid");
        assert_eq!(copied, plan_copy(0x8000, 0x1000, 4096).expect("valid"));
    }

    #[test]
    fn timestamps() {
        let plan = plan_timestamp(0x1008).expect("valid");
        assert_eq!((plan.kernel, plan.grid_size, plan.workgroup_size), (Builtin::Timestamp, 1, 1));
        assert_eq!(plan_timestamp(0x1004), Err(PlanError::Misaligned { address: 0x1004, required: 8 }));
        assert_eq!(plan_timestamp(0), Err(PlanError::NullAddress { length: 8 }));
    }

    #[test]
    fn patch_indirect_plans() {
        let plan = plan_patch_indirect(0x1_0040, 0x2004, 0x3008, 0x0003_1502).expect("valid");
        assert_eq!((plan.kernel, plan.grid_size, plan.workgroup_size), (Builtin::PatchIndirect, 1, 1));
        assert!(!plan.is_noop());
        assert_eq!(
            plan.kernargs,
            Kernargs::PatchIndirect(PatchIndirectArgs {
                packet: 0x1_0040,
                counts: 0x2004,
                implicit_args: 0x3008,
                header: 0x0003_1502,
                reserved: 0,
            })
        );
        assert_eq!(plan.kernarg_bytes().len(), 32);
        assert_eq!(&plan.kernarg_bytes()[24..28], &0x0003_1502u32.to_le_bytes());
        let without_hidden = plan_patch_indirect(0x1_0040, 0x2004, 0, 7).expect("valid");
        let Kernargs::PatchIndirect(args) = without_hidden.kernargs else { panic!("not a patch") };
        assert_eq!(args.implicit_args, 0);
    }

    #[test]
    fn bad_patch_indirect_requests_are_typed_errors() {
        assert_eq!(plan_patch_indirect(0, 0x2000, 0, 0), Err(PlanError::NullAddress { length: 64 }));
        assert_eq!(plan_patch_indirect(0x1000, 0, 0, 0), Err(PlanError::NullAddress { length: 12 }));
        assert_eq!(
            plan_patch_indirect(0x1020, 0x2000, 0, 0),
            Err(PlanError::Misaligned { address: 0x1020, required: 64 })
        );
        assert_eq!(
            plan_patch_indirect(0x1000, 0x2002, 0, 0),
            Err(PlanError::Misaligned { address: 0x2002, required: 4 })
        );
        assert_eq!(
            plan_patch_indirect(0x1000, 0x2000, 0x3006, 0),
            Err(PlanError::Misaligned { address: 0x3006, required: 4 })
        );
        assert_eq!(
            plan_patch_indirect(u64::MAX - 63, 0x2000, 0, 0),
            Err(PlanError::RangeOverflow { address: u64::MAX - 63, length: 64 })
        );
        // The packet is checked before the counts.
        assert_eq!(plan_patch_indirect(0, 0, 0, 0), Err(PlanError::NullAddress { length: 64 }));
    }
}
