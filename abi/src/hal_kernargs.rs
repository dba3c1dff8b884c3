//! The HAL dispatch convention every path that builds a dispatch shares: how many dimensions a
//! dispatch packet says, and the one writer of a HAL-layout kernarg segment.
//!
//! A HAL-layout segment is the binding pointers (8 bytes each, from offset 0), then the 32-bit
//! constants, then, when the kernel reads any, the implicit block ([`ImplicitKernargs`]) at the
//! offset of the first hidden argument the code object's metadata lists. Direct dispatches
//! (written into the kernarg ring at publication), recorded dispatch templates and pointer
//! scatter at execution all go through [`write_hal_kernargs`], so a kernel sees the same bytes
//! however it was submitted.

use core::convert::Infallible;

use crate::implicit_kernargs::ImplicitKernargs;

/// Writes a whole HAL-layout kernarg segment into `segment` (the kernel's kernarg segment, as
/// long as its metadata says): `bindings` at 0, 8, 16, ..., the little-endian u32 `constants`
/// right after them, `implicit`'s block at its offset, and zeros in every other byte. What
/// would pass the segment's end is cut off there: a kernel's segment may end before the 256-byte
/// implicit block does, when the kernel reads only its first fields.
///
/// The caller checked the layout against the kernel (binding and constant counts, an implicit
/// offset at or after the constants); nothing here panics whatever the input. Allocation-free.
#[inline]
pub fn write_hal_kernargs(
    segment: &mut [u8],
    bindings: impl IntoIterator<Item = u64>,
    constants: &[u8],
    implicit: Option<(u32, &ImplicitKernargs)>,
) {
    let written = try_write_hal_kernargs(segment, bindings.into_iter().map(Ok::<u64, Infallible>), constants, implicit);
    match written {
        Ok(()) => {}
        Err(never) => match never {},
    }
}

/// [`write_hal_kernargs`] with bindings that may fail to resolve: the first `Err` stops the
/// write and is returned, leaving the segment partly written (the caller must not publish it).
#[inline]
pub fn try_write_hal_kernargs<E>(
    segment: &mut [u8],
    bindings: impl IntoIterator<Item = Result<u64, E>>,
    constants: &[u8],
    implicit: Option<(u32, &ImplicitKernargs)>,
) -> Result<(), E> {
    let mut at = 0;
    for pointer in bindings {
        at = put(segment, at, &pointer?.to_le_bytes());
    }
    at = put(segment, at, constants);
    if let Some((offset, block)) = implicit {
        let start = (offset as usize).min(segment.len());
        if start > at {
            segment[at..start].fill(0);
        }
        at = put(segment, start, bytemuck::bytes_of(block)).max(at);
    }
    if let Some(tail) = segment.get_mut(at..) {
        tail.fill(0);
    }
    Ok(())
}

/// Copies as much of `bytes` as fits at `at` (at most `segment.len()`) and returns where it ended.
#[inline]
fn put(segment: &mut [u8], at: usize, bytes: &[u8]) -> usize {
    let end = at.saturating_add(bytes.len()).min(segment.len());
    if at < end {
        segment[at..end].copy_from_slice(&bytes[..end - at]);
    }
    end.max(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn implicit() -> ImplicitKernargs {
        ImplicitKernargs::for_grid([100, 8, 1], [32, 4, 1])
    }

    #[test]
    fn a_segment_is_bindings_constants_implicit_block_and_zeros() {
        let block = implicit();
        // 2 bindings + 3 constants end at 28; the implicit block starts at 32 and is cut at 32 + 80.
        let mut segment = [0xAAu8; 112];
        let constants: [u32; 3] = [7, 8, 9];
        write_hal_kernargs(&mut segment, [0x1000, 0x2000], bytemuck::cast_slice(&constants), Some((32, &block)));
        assert_eq!(segment[0..8], 0x1000u64.to_le_bytes());
        assert_eq!(segment[8..16], 0x2000u64.to_le_bytes());
        assert_eq!(segment[16..28], *bytemuck::cast_slice::<u32, u8>(&constants));
        assert_eq!(segment[28..32], [0; 4], "the gap before the implicit block is zeroed");
        assert_eq!(segment[32..112], bytemuck::bytes_of(&block)[..80]);
        assert_eq!(u16::from_le_bytes([segment[32 + 64], segment[32 + 65]]), crate::DISPATCH_DIMENSIONS);
    }

    #[test]
    fn without_an_implicit_block_the_rest_is_zeroed() {
        let mut segment = [0xAAu8; 48];
        write_hal_kernargs(&mut segment, [0x1000], bytemuck::cast_slice(&[5u32]), None);
        assert_eq!(segment[0..8], 0x1000u64.to_le_bytes());
        assert_eq!(segment[8..12], 5u32.to_le_bytes());
        assert!(segment[12..].iter().all(|&byte| byte == 0));
    }

    #[test]
    fn nothing_is_written_past_the_segment() {
        let block = implicit();
        let mut segment = [0xAAu8; 10];
        write_hal_kernargs(&mut segment, [u64::MAX, u64::MAX], &[1, 2, 3, 4], Some((400, &block)));
        assert_eq!(segment[..8], [0xFF; 8]);
        assert_eq!(segment[8..], [0xFF; 2]);
        let mut empty = [];
        write_hal_kernargs(&mut empty, [1], &[1], Some((0, &block)));
    }

    #[test]
    fn a_failed_binding_stops_the_write() {
        let mut segment = [0xAAu8; 32];
        let bindings = [Ok(0x1000), Err("unresolved"), Ok(0x3000)];
        assert_eq!(try_write_hal_kernargs(&mut segment, bindings, &[], None), Err("unresolved"));
        assert_eq!(segment[0..8], 0x1000u64.to_le_bytes());
        assert_eq!(segment[8..], [0xAA; 24]);
    }
}
