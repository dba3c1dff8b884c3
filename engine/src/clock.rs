//! The engine's clocks: the calling thread's CPU time (what benchmarks report as host cost,
//! unaffected by time the thread spends descheduled while other threads hold the cores),
//! deadlines, and the one conversion between the provider's timestamp ticks and nanoseconds.

use std::time::{Duration, Instant};

/// CPU time consumed by the calling thread so far.
pub fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid out-pointer; CLOCK_THREAD_CPUTIME_ID is supported on every Linux.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    if status != 0 {
        return Duration::ZERO;
    }
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// `start + timeout`, or a deadline decades away when that sum does not fit an `Instant`
/// (`Duration::MAX` is how a caller asks for no timeout; adding it to an `Instant` panics).
pub(crate) fn deadline_after(start: Instant, timeout: Duration) -> Instant {
    const NO_DEADLINE: Duration = Duration::from_secs(30 * 365 * 24 * 60 * 60);
    start.checked_add(timeout).unwrap_or_else(|| start + NO_DEADLINE)
}

/// `ticks` of a clock running at `frequency_hz` (0 is taken as 1), in nanoseconds, in integers:
/// exact to the nanosecond below, saturating at `u64::MAX`.
pub(crate) fn ticks_to_ns(ticks: u64, frequency_hz: u64) -> u64 {
    (u128::from(ticks) * 1_000_000_000 / u128::from(frequency_hz.max(1))).min(u128::from(u64::MAX)) as u64
}

/// `ns` nanoseconds as ticks of a clock running at `frequency_hz`, rounded up (a timeout never
/// shortens), saturating at `u64::MAX`.
pub(crate) fn ns_to_ticks(ns: u64, frequency_hz: u64) -> u64 {
    (u128::from(ns) * u128::from(frequency_hz)).div_ceil(1_000_000_000).min(u128::from(u64::MAX)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_and_nanoseconds_convert_in_integers() {
        assert_eq!(ticks_to_ns(100, 100_000_000), 1_000, "ROCr's 100 MHz: 10 ns a tick");
        assert_eq!(ns_to_ticks(1_000, 100_000_000), 100);
        assert_eq!(ns_to_ticks(1, 100_000_000), 1, "rounded up");
        assert_eq!(ticks_to_ns(7, 1_000_000_000), 7);
        assert_eq!(ns_to_ticks(u64::MAX, 1_000_000_000_000), u64::MAX, "saturates");
        assert_eq!(ticks_to_ns(u64::MAX, 1), u64::MAX, "saturates");
        assert_eq!(ticks_to_ns(5, 0), 5_000_000_000, "a zero frequency is taken as 1 Hz");
    }
}
