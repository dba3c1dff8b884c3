//! What the wrappers and the soft runtime must agree on about ROCr beyond the C ABI in `sys.rs`:
//! one place for each fact, below both, so neither reaches into the other for it.

/// `HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED`: in ROCm 6.x's hsa_ext_amd.h,
/// absent from ROCr 5.2.3's, so it is not in `sys.rs` (whose constants are checked against
/// 5.2.3's headers).
pub const GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED: u32 = 8;

/// A CU mask as ROCr's `AqlQueue::SetCUMasking` applies it: one bit per CU, 32 per word, for the
/// agent's `compute_units` CUs; an empty mask means every CU, and bits past the last CU are
/// dropped. One function, so the engine's check of a mask and the soft runtime's model agree.
pub fn clip_cu_mask(mask: &[u32], compute_units: u32) -> Vec<u32> {
    let words = compute_units.div_ceil(32) as usize;
    let mut clipped: Vec<u32> = if mask.is_empty() { vec![u32::MAX; words] } else { mask.to_vec() };
    clipped.resize(words, 0);
    if !compute_units.is_multiple_of(32)
        && let Some(last) = clipped.last_mut()
    {
        *last &= (1u32 << (compute_units % 32)) - 1;
    }
    clipped
}
