//! Randomized plan-vs-reference checks on host memory: the planner's choice, run through the CPU
//! twins exactly as the soft runtime would (one call per workgroup, capped grid), must equal a
//! straightforward reference fill or copy, and leave every byte outside the range alone.

mod common;

use aqueduct_builtins::{Builtin, MAX_GRID_SIZE, PlanError, plan_copy, plan_fill};
use common::{SENTINEL, run_on_cpu, source_byte};
use proptest::prelude::*;

const GUARD: usize = 32;

/// A 64-byte-aligned host buffer, so offsets choose the alignment.
fn aligned_buffer(bytes: usize) -> Vec<u128> {
    vec![u128::from_ne_bytes([SENTINEL; 16]); bytes.div_ceil(16) + 4]
}

fn bytes_of(buffer: &mut [u128]) -> &mut [u8] {
    let offset = buffer.as_ptr().align_offset(64);
    &mut bytemuck::cast_slice_mut(buffer)[offset * 16..]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn fill_plans_match_the_reference(
        offset in 0usize..48,
        width_log2 in 0u32..4,
        elements in 0usize..5000,
        pattern in any::<u64>(),
    ) {
        let width = 1usize << width_log2;
        let pattern = if width == 8 { pattern } else { pattern & ((1u64 << (8 * width)) - 1) };
        let length = elements * width;
        let mut storage = aligned_buffer(2 * GUARD + 48 + length);
        let memory = bytes_of(&mut storage);
        let mut reference = memory.to_vec();
        for k in 0..length {
            reference[GUARD + offset + k] = pattern.to_le_bytes()[k % width];
        }
        let target = memory[GUARD + offset..].as_mut_ptr() as u64;
        let plan = plan_fill(target, length as u64, pattern, width as u8).expect("valid fill");
        prop_assert!(plan.grid_size <= MAX_GRID_SIZE);
        // SAFETY: the plan covers [target, target + length) inside `memory`.
        unsafe { run_on_cpu(&plan) };
        prop_assert_eq!(&memory[..], &reference[..], "via {}", plan.kernel);
    }

    #[test]
    fn copy_plans_match_the_reference(
        from in 0usize..48,
        to in 0usize..48,
        length in 0usize..5000,
        seed in any::<usize>(),
    ) {
        let mut source_storage = aligned_buffer(GUARD + 48 + length);
        let source = bytes_of(&mut source_storage);
        for (index, byte) in source.iter_mut().enumerate() {
            *byte = source_byte(seed, index);
        }
        let mut target_storage = aligned_buffer(2 * GUARD + 48 + length);
        let target = bytes_of(&mut target_storage);
        let mut reference = target.to_vec();
        reference[GUARD + to..][..length].copy_from_slice(&source[GUARD + from..][..length]);
        let plan = plan_copy(source[GUARD + from..].as_ptr() as u64, target[GUARD + to..].as_mut_ptr() as u64, length as u64)
            .expect("valid copy");
        // SAFETY: both ranges lie inside their buffers, which do not overlap.
        unsafe { run_on_cpu(&plan) };
        prop_assert_eq!(&target[..], &reference[..], "via {}", plan.kernel);
    }

    /// Bad fill requests are rejected with a typed error and no plan, never a panic.
    #[test]
    fn bad_fill_requests_are_rejected(
        target in any::<u64>(),
        length in any::<u64>(),
        pattern in any::<u64>(),
        width in any::<u8>(),
    ) {
        match plan_fill(target, length, pattern, width) {
            Ok(plan) => {
                prop_assert!(matches!(width, 1 | 2 | 4 | 8));
                prop_assert!(length % u64::from(width) == 0);
                prop_assert!(plan.grid_size >= 1 && plan.grid_size <= MAX_GRID_SIZE);
                prop_assert!(matches!(
                    plan.kernel,
                    Builtin::FillX1 | Builtin::FillX2 | Builtin::FillX4 | Builtin::FillX8 | Builtin::FillBlockX16
                ));
            }
            Err(PlanError::UnsupportedPatternWidth { .. }) => prop_assert!(!matches!(width, 1 | 2 | 4 | 8)),
            Err(PlanError::PatternWiderThanWidth { .. }) => prop_assert!(width < 8 && pattern >> (8 * width) != 0),
            Err(PlanError::LengthNotMultipleOfPattern { .. }) => prop_assert!(length % u64::from(width) != 0),
            Err(PlanError::NullAddress { .. }) => prop_assert_eq!(target, 0),
            Err(PlanError::RangeOverflow { .. }) => prop_assert!(target.checked_add(length).is_none()),
            Err(other) => prop_assert!(false, "unexpected {other:?}"),
        }
    }
}
