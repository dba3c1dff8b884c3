//! The soft runtime's two clocks, related as ROCr relates them on hardware.
//!
//! - The **system domain** (`HSA_SYSTEM_INFO_TIMESTAMP`): 1 GHz, because KFD's
//!   `get_clock_counters` reports boot-time nanoseconds with `system_clock_freq = 1000000000`
//!   (the dump in `soft-hsa/tests/fixtures/rocminfo-gfx1100.txt`: "System Timestamp Freq.:
//!   1000.000000MHz").
//! - The **device domain**: a GPU's steady counter (`s_memrealtime`, `__builtin_readsteadycounter`),
//!   100 MHz on gfx9+ (LLVM AMDGPUUsage; Rust's `core::arch::amdgpu` documents "typically
//!   100 MHz"), with its own origin. Completion-signal `start_ts`/`end_ts` and the timestamp
//!   builtin are in device ticks; `hsa_amd_profiling_get_dispatch_time` and
//!   `hsa_amd_profiling_convert_tick_to_system_domain` return system ticks, as ROCr's do.
//!
//! The device origin is far from the system one on purpose: a device tick read as a system tick
//! (a missing conversion) lands hours away, and a test ordering the two on one axis fails.

use std::sync::OnceLock;
use std::time::Instant;

/// Ticks per second of the system domain.
pub(crate) const SYSTEM_FREQUENCY: u64 = 1_000_000_000;
/// Ticks per second of every soft GPU's steady counter.
pub const DEVICE_FREQUENCY: u64 = 100_000_000;
/// Device ticks at system tick 0 (about 3 hours of device time).
const DEVICE_ORIGIN: u64 = 1 << 40;
const SYSTEM_PER_DEVICE: u64 = SYSTEM_FREQUENCY / DEVICE_FREQUENCY;

/// System-domain ticks since a process-wide origin, so they stay monotonic across
/// re-initialization.
pub(crate) fn system_ticks() -> u64 {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    ORIGIN.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// The GPU steady counter now.
pub fn device_ticks() -> u64 {
    DEVICE_ORIGIN + system_ticks() / SYSTEM_PER_DEVICE
}

/// A device tick in the system domain (ticks before the device origin map to 0).
pub(crate) fn device_to_system(ticks: u64) -> u64 {
    ticks.saturating_sub(DEVICE_ORIGIN).saturating_mul(SYSTEM_PER_DEVICE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_ticks_convert_back_onto_the_system_axis() {
        let before = system_ticks();
        let device = device_ticks();
        let after = system_ticks();
        let converted = device_to_system(device);
        // The device counter is 10x coarser: its conversion may trail by one device tick.
        assert!(converted + SYSTEM_PER_DEVICE > before && converted <= after, "{before} <= {converted} <= {after}");
        assert!(device > after, "the raw device value is not a system time");
        assert_eq!(device_to_system(0), 0);
    }
}
