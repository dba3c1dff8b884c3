//! Kernarg patching: build the segment in the kernarg space admission reserved.

use aqueduct_components::submission::{AdmissionPlan, KernargLayout, StagedSubmission, SubmissionRows};

use crate::SubmissionRowQuery;

/// Writes `bytes` at device address `address`.
///
/// # Safety
/// `[address, address + bytes.len())` must lie in a kernarg span reserved for this submission.
#[inline]
unsafe fn write(address: u64, bytes: &[u8]) {
    // SAFETY: the caller's span is host-writable kernarg memory that no packet reads yet.
    unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), address as *mut u8, bytes.len()) };
}

/// Writes the staged submission's kernarg segment (and staged bytes) at the plan's addresses.
pub fn patch_kernargs(staged: &StagedSubmission, plan: &AdmissionPlan) {
    crate::stage_span!("kernarg_patching");
    let base = plan.kernarg_address;
    // SAFETY (every write below): admission reserved `staged.kernarg_bytes()` from `base`, the
    // segment first (`kernarg_size` bytes, host-writable, read by no packet until publication)
    // and the staging bytes at `plan.staging_address`; the engine validated that every offset
    // written here lies inside `kernarg_size` (and the HAL writer cuts anything at its end).
    unsafe {
        match &staged.layout {
            KernargLayout::None => {}
            KernargLayout::Raw => write(base, &staged.raw),
            KernargLayout::Hal { implicit_offset, implicit } => {
                // The one HAL writer, shared with the recorder's templates and replay's pointer
                // scatter: the whole segment, gaps zeroed, the implicit block cut at its end.
                let segment = core::slice::from_raw_parts_mut(base as *mut u8, staged.kernarg_size as usize);
                aqueduct_abi::write_hal_kernargs(
                    segment,
                    staged.bindings.iter().copied(),
                    bytemuck::cast_slice(&staged.constants),
                    implicit_offset.map(|offset| (offset, implicit)),
                );
            }
        }
        if !staged.staging.is_empty() {
            write(plan.staging_address, &staged.staging);
            if let Some(offset) = staged.staging_pointer_offset {
                write(base + u64::from(offset), &plan.staging_address.to_le_bytes());
            }
        }
    }
}

/// Kernarg patching for every row the pass admitted (none looked up when none has kernargs).
pub fn patch_admitted(rows: &SubmissionRows, query: &SubmissionRowQuery) {
    if rows.pass.patches == 0 {
        return;
    }
    for &entity in &rows.pass.admitted {
        if let Ok((staged, plan)) = query.get(entity) {
            patch_kernargs(staged, plan);
        }
    }
}
