//! The profile's one clock, and how device timestamps are put on it.
//!
//! Every timestamp of a bundle is host `CLOCK_MONOTONIC` nanoseconds: the engine reads it for
//! host events (a vDSO call, no system call), and device timestamps come from the provider in
//! HSA's system domain (`hsa_amd_profiling_get_dispatch_time` returns system ticks; on ROCr the
//! system domain is KFD's clock counter, on the soft runtime a monotonic origin of its own). A
//! capture maps system ticks onto the host clock once, when it begins: it reads the two clocks
//! in turn and keeps the tightest bracket. The mapping is an offset and the system frequency
//! (`HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY`); drift between the two domains during a capture is
//! not corrected.

use aqueduct_hsa::Hsa;

use crate::error::EngineResult;

/// Host `CLOCK_MONOTONIC` now, in nanoseconds.
pub(crate) fn host_now_ns() -> u64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid out-pointer; CLOCK_MONOTONIC is supported on every Linux.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    if status != 0 {
        return 0;
    }
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

/// Maps HSA system-domain ticks onto the host clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SystemClockMap {
    pub frequency_hz: u64,
    /// Host nanoseconds at system tick 0 (may be negative).
    offset_ns: i128,
}

/// Bracketing reads tried when calibrating; the tightest wins.
const CALIBRATION_READS: usize = 16;

impl SystemClockMap {
    /// Reads the host clock, the system timestamp and the host clock again, several times, and
    /// takes the read whose bracket was tightest: its system tick happened at the bracket's
    /// middle, within half its width.
    pub fn calibrate(hsa: &Hsa) -> EngineResult<Self> {
        let frequency_hz = hsa.timestamp_frequency()?.max(1);
        let mut best: Option<(u64, u64, u64)> = None;
        for _ in 0..CALIBRATION_READS {
            let before = host_now_ns();
            let tick = hsa.system_timestamp()?;
            let after = host_now_ns();
            let width = after.saturating_sub(before);
            if best.is_none_or(|(best_width, _, _)| width < best_width) {
                best = Some((width, before + width / 2, tick));
            }
        }
        let (_, host_ns, tick) = best.unwrap_or((0, host_now_ns(), 0));
        let mut map = Self { frequency_hz, offset_ns: 0 };
        map.offset_ns = i128::from(host_ns) - i128::from(map.ticks_to_ns(tick));
        Ok(map)
    }

    fn ticks_to_ns(self, ticks: u64) -> u64 {
        crate::clock::ticks_to_ns(ticks, self.frequency_hz)
    }

    /// A system-domain tick as host nanoseconds (0 if it lands before the host clock's origin).
    pub fn to_host_ns(self, ticks: u64) -> u64 {
        (i128::from(self.ticks_to_ns(ticks)) + self.offset_ns).clamp(0, i128::from(u64::MAX)) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_system_clock_lands_between_host_reads() {
        let hsa = aqueduct_soft_hsa::open(Default::default()).unwrap();
        let map = SystemClockMap::calibrate(&hsa).unwrap();
        assert_eq!(map.frequency_hz, 1_000_000_000, "the soft runtime's system domain is 1 GHz");
        let before = host_now_ns();
        let tick = hsa.system_timestamp().unwrap();
        let after = host_now_ns();
        let mapped = map.to_host_ns(tick);
        // The calibration's own error is half a bracket: allow a few microseconds either side.
        let slack = 20_000;
        assert!(mapped + slack >= before && mapped <= after + slack, "{before} <= {mapped} <= {after}");
    }
}
