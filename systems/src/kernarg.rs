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
    // segment first (`kernarg_size` bytes) and the staging bytes at `plan.staging_address`; the
    // engine validated that every offset written here lies inside `kernarg_size`.
    unsafe {
        match &staged.layout {
            KernargLayout::None => {}
            KernargLayout::Raw => write(base, &staged.raw),
            KernargLayout::Hal { implicit_offset, implicit } => {
                write(base, bytemuck::cast_slice(&staged.bindings));
                write(base + 8 * staged.bindings.len() as u64, bytemuck::cast_slice(&staged.constants));
                if let Some(offset) = implicit_offset {
                    let room = (staged.kernarg_size - offset) as usize;
                    let bytes = bytemuck::bytes_of(implicit);
                    write(base + u64::from(*offset), &bytes[..room.min(bytes.len())]);
                }
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

/// Kernarg patching for every row the pass admitted.
pub fn patch_admitted(rows: &SubmissionRows, query: &SubmissionRowQuery) {
    for &entity in &rows.pass.admitted {
        if let Ok((staged, plan)) = query.get(entity) {
            patch_kernargs(staged, plan);
        }
    }
}
