//! [`CacheLine`]: a value alone on its 64-byte cache line.

/// Holds `T` on a cache line of its own, so a counter one thread writes does not share a line
/// with data another thread writes or reads on every call (false sharing). 64 bytes is the line
/// size of the x86-64 and AArch64 hosts the engine runs on.
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub struct CacheLine<T>(pub T);

impl<T> core::ops::Deref for CacheLine<T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use core::sync::atomic::AtomicU64;

    use super::CacheLine;

    #[test]
    fn two_padded_counters_never_share_a_line() {
        struct Pair {
            first: CacheLine<AtomicU64>,
            second: CacheLine<AtomicU64>,
        }
        let pair = Pair { first: CacheLine::default(), second: CacheLine::default() };
        let (first, second) = (&pair.first.0 as *const _ as usize, &pair.second.0 as *const _ as usize);
        assert_ne!(first / 64, second / 64);
        assert_eq!(size_of::<CacheLine<AtomicU64>>(), 64);
    }
}
