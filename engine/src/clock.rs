//! The calling thread's CPU time: what benchmarks report as host cost, unaffected by time the
//! thread spends descheduled while other threads (completion, the soft runtime) hold the cores.

use std::time::Duration;

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
