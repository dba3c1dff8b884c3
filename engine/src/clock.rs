//! The calling thread's CPU time: what benchmarks report as host cost, unaffected by time the
//! thread spends descheduled while other threads (completion, the soft runtime) hold the cores.

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
