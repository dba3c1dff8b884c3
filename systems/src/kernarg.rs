//! Kernarg patching: copy the admitted rows' kernarg segments, serialised at enqueueing, into the
//! kernarg space admission reserved, and fix the addresses that depend on where they landed.
//!
//! Enqueueing lays each row's bytes out in the kernarg arena as they will lie in the ring (a
//! segment starts at a multiple of `KERNARG_GRANULE` in both, its update bytes at the same offset
//! from it), so consecutive rows whose ring spans follow each other as their arena spans do form
//! one run, copied with one `memcpy`. A run ends where the ring wraps, or at a row whose span
//! does not follow (a program leg's kernargs in between, a wider alignment): usually a range
//! is one or two copies.
//!
//! **Contract.** The caller holds the queue's lock. It writes only the kernarg ring spans admission
//! reserved for this pass's rows (and the arena copies of their segments); it cannot fail. Once the
//! headers are published, those bytes are the device's to read until the epoch is drained.

use aqueduct_components::submission::{Arena, KernargRecipe};

use aqueduct_components::submission::SubmissionRows;

/// Rows of the range whose arena bytes go to the ring with one copy.
struct Run {
    /// Arena positions of the run's first byte and one past its last.
    start: u64,
    end: u64,
    /// Where the first byte goes.
    address: u64,
}

impl Run {
    /// Whether a segment at arena position `start` going to `address` lies where this run puts it.
    #[inline]
    fn continues(&self, start: u64, address: u64) -> bool {
        start >= self.end && self.address + (start - self.start) == address
    }

    /// Copies the run's bytes to the ring.
    #[inline]
    fn copy(&self, bytes: &Arena<u8>) {
        let bytes = bytes.bytes(self.start, self.end);
        // SAFETY: admission reserved each row's span of the run in the kernarg ring, and the spans
        // lie from `address` exactly as the rows' bytes lie from `start` (checked as the run
        // grew), so the copy writes those spans and the gaps between them, which lie between two
        // reservations of this pass and so belong to no other row. Host-writable kernarg memory
        // that no packet reads until publication.
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), self.address as *mut u8, bytes.len()) };
    }
}

/// Where a row's update bytes land: written into its segment in the arena, so the copy carries it.
#[inline]
fn point_at_update_bytes(bytes: &mut Arena<u8>, kernargs: &KernargRecipe, address: u64) {
    let pointer = kernargs.segment.start + u64::from(kernargs.update_pointer_offset);
    let update_address = address + kernargs.update_offset();
    debug_assert_eq!(kernargs.update_bytes.start - kernargs.segment.start, kernargs.update_offset());
    bytes.bytes_mut(pointer, pointer + 8).copy_from_slice(&update_address.to_le_bytes());
}

/// Kernarg patching for the range of rows the pass admitted: one loop that gathers runs and
/// copies each, skipped when no row has kernargs (a pass of barriers).
#[inline]
pub fn patch_admitted(rows: &mut SubmissionRows) {
    crate::stage_span!("kernarg_patching");
    if rows.pass.patches != 0 {
        patch_rows(rows);
    }
}

/// [`patch_admitted`]'s loop, out of line so a pass of barriers only pays the check.
fn patch_rows(rows: &mut SubmissionRows) {
    let mut run: Option<Run> = None;
    for row in rows.pass.admitted() {
        let slot = rows.slot(row);
        let kernargs = rows.columns.kernargs[slot];
        if kernargs.is_empty() {
            continue;
        }
        let address = rows.columns.reservation[slot].kernarg_address;
        if !kernargs.update_bytes.is_empty() {
            point_at_update_bytes(&mut rows.kernarg_bytes, &kernargs, address);
        }
        let (start, end) = (kernargs.segment.start, kernargs.update_bytes.end().max(kernargs.segment.end()));
        match &mut run {
            Some(run) if run.continues(start, address) => run.end = end,
            _ => {
                if let Some(done) = run.replace(Run { start, end, address }) {
                    done.copy(&rows.kernarg_bytes);
                }
            }
        }
    }
    if let Some(run) = run {
        run.copy(&rows.kernarg_bytes);
    }
}
