//! Kernarg patching: copy the admitted rows' kernarg segments, serialised at staging, into the
//! kernarg space admission reserved, and fix the addresses that depend on where they landed.

use aqueduct_components::submission::{KernargRecipe, Reservation};

use crate::QueueState;

/// Writes `bytes` at device address `address`.
///
/// # Safety
/// `[address, address + bytes.len())` must lie in a kernarg span reserved for this submission.
#[inline]
unsafe fn write(address: u64, bytes: &[u8]) {
    // SAFETY: the caller's span is host-writable kernarg memory that no packet reads yet.
    unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), address as *mut u8, bytes.len()) };
}

/// Copies one row's segment (and staged bytes) to its reserved kernarg space.
#[inline]
fn patch_row(bytes: &aqueduct_components::submission::Arena<u8>, kernargs: &KernargRecipe, reserved: &Reservation) {
    let base = reserved.kernarg_address;
    // SAFETY (every write below): admission reserved `kernargs.ring_bytes()` from `base`: the
    // segment first (host-writable, read by no packet until publication), then the staged bytes
    // at `staging_offset()`; the engine validated that the staging pointer's offset lies inside
    // the segment.
    unsafe {
        write(base, bytes.get(kernargs.segment));
        if !kernargs.staging.is_empty() {
            let staging_address = base + kernargs.staging_offset();
            write(staging_address, bytes.get(kernargs.staging));
            write(base + u64::from(kernargs.staging_pointer_offset), &staging_address.to_le_bytes());
        }
    }
}

/// Kernarg patching for the range of rows the pass admitted: one loop, skipped when none has
/// kernargs (a pass of barriers).
pub fn patch_admitted(queue: &mut QueueState) {
    crate::stage_span!("kernarg_patching");
    let rows = &queue.rows;
    if rows.pass.patches == 0 {
        return;
    }
    let columns = &rows.columns;
    for row in rows.pass.admitted() {
        let slot = rows.slot(row);
        let kernargs = &columns.kernargs[slot];
        if !kernargs.is_empty() {
            patch_row(&rows.kernarg_bytes, kernargs, &columns.reservation[slot]);
        }
    }
}
