//! How soft queues share the CPU's cores: queue priority and CU masks.
//!
//! On a GPU, `hsa_amd_queue_set_priority` sets the command processor's dispatch and wavefront
//! scheduling priority (`hsa_ext_amd.h`), and `hsa_amd_queue_cu_set_mask` restricts which compute
//! units a queue's waves may occupy. The soft runtime runs every queue's workgroups on one shared
//! pool of CPU threads (rayon's), so both become rules over that pool:
//!
//! - **Priority.** Workgroups run in chunks. Before each chunk, a dispatch yields while a dispatch
//!   of a higher priority is running anywhere in the runtime (all agents share the cores), for at
//!   most [`MAX_YIELD`] per chunk, so lower-priority work is delayed but never starved (a GPU
//!   keeps giving free CUs to low-priority waves, too). Barrier packets waiting on a signal do not
//!   count as running: a high-priority queue waiting on a low one cannot stall it.
//! - **CU mask.** The share of the agent's CUs the mask enables is the share of the pool's threads
//!   the queue's dispatches may occupy at once (at least one): the queue's processor thread and
//!   that many pool threads less one (`claims.rs`). It does not pin threads to cores.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// `hsa_amd_queue_priority_t` (`hsa_ext_amd.h`): LOW = 0, NORMAL = 1 (the default), HIGH = 2.
pub(crate) const PRIORITY_LEVELS: usize = 3;
pub(crate) const PRIORITY_NORMAL: u8 = 1;

/// Workgroups a dispatch runs between two priority checks, per pool thread.
const CHUNK_PER_THREAD: u64 = 32;

/// The longest a dispatch defers one chunk to higher-priority work.
pub(crate) const MAX_YIELD: Duration = Duration::from_millis(2);

/// How long a workgroup runs before it is saved where other work wants its thread (another
/// dispatch where its own holds more than its share of the pool, a saved workgroup of its own
/// dispatch, one not yet begun; `isa_exec.rs`): long enough that a save and a resume (moving the
/// waves' and the LDS's buffers) cost nothing beside it, short enough that a dispatch beside a
/// kernel that never ends waits a few milliseconds for threads.
pub(crate) const SAVE_SLICE: Duration = Duration::from_millis(10);

/// Runtime-wide: how many dispatches of each priority are running workgroups.
#[derive(Default)]
pub(crate) struct Arbiter {
    running: [AtomicU32; PRIORITY_LEVELS],
}

/// A dispatch counted as running at its priority until dropped.
pub(crate) struct Running<'a> {
    arbiter: &'a Arbiter,
    priority: usize,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.arbiter.running[self.priority].fetch_sub(1, Ordering::AcqRel);
    }
}

impl Arbiter {
    pub fn enter(&self, priority: u8) -> Running<'_> {
        let priority = usize::from(priority).min(PRIORITY_LEVELS - 1);
        self.running[priority].fetch_add(1, Ordering::AcqRel);
        Running { arbiter: self, priority }
    }

    /// Dispatches running workgroups now, at every priority (each holds its queue's processor
    /// thread).
    pub fn running(&self) -> usize {
        self.running.iter().map(|count| count.load(Ordering::Acquire) as usize).sum()
    }

    /// The threads of a pool of `threads` a running dispatch may hold while others run: an
    /// equal share among the running dispatches (no bound where it runs alone). Saved
    /// workgroups give their pool threads back down to it (`isa_exec.rs`), so a kernel that
    /// never ends leaves a dispatch beside it half the pool or more, and no queue's dispatch
    /// takes every thread while another's runs. Equal rather than new work first: two queues
    /// that both submit long work back to back then progress alike.
    pub fn share(&self, threads: usize) -> usize {
        let running = self.running();
        if running <= 1 { usize::MAX } else { (threads / running).max(1) }
    }

    fn higher_running(&self, priority: usize) -> bool {
        self.running[priority + 1..].iter().any(|count| count.load(Ordering::Acquire) > 0)
    }

    /// Waits while higher-priority work runs, up to [`MAX_YIELD`] or until `stopped`; says
    /// whether it deferred at all.
    pub fn yield_to_higher(&self, running: &Running<'_>, stopped: impl Fn() -> bool) -> bool {
        if !self.higher_running(running.priority) {
            return false;
        }
        let deadline = Instant::now() + MAX_YIELD;
        while self.higher_running(running.priority) && Instant::now() < deadline && !stopped() {
            std::thread::sleep(Duration::from_micros(20));
        }
        true
    }
}

/// One queue's scheduling settings.
pub(crate) struct QueueScheduling {
    pub priority: AtomicU8,
    /// The mask as set, clipped to the agent's CUs (`AqlQueue::SetCUMasking` clips it the same
    /// way); empty until set, which means every CU.
    cu_mask: Mutex<Vec<u32>>,
    /// CUs the mask enables; `u32::MAX` (every CU) when no mask is set.
    enabled_cus: AtomicU32,
}

impl QueueScheduling {
    pub fn new() -> Self {
        Self {
            priority: AtomicU8::new(PRIORITY_NORMAL),
            cu_mask: Mutex::new(Vec::new()),
            enabled_cus: AtomicU32::new(u32::MAX),
        }
    }

    /// Stores `mask` (0 words: every CU), clipped to `compute_units` bits.
    pub fn set_cu_mask(&self, mask: &[u32], compute_units: u32) {
        let clipped = aqueduct_hsa::rocr_facts::clip_cu_mask(mask, compute_units);
        self.enabled_cus.store(clipped.iter().map(|word| word.count_ones()).sum(), Ordering::Release);
        *self.cu_mask.lock().unwrap_or_else(|poison| poison.into_inner()) = clipped;
    }

    /// The first `out.len()` words of the mask, zero past the agent's CUs.
    pub fn cu_mask(&self, out: &mut [u32], compute_units: u32) {
        let stored = self.cu_mask.lock().unwrap_or_else(|poison| poison.into_inner());
        let every;
        let mask = if stored.is_empty() {
            every = aqueduct_hsa::rocr_facts::clip_cu_mask(&[], compute_units);
            &every
        } else {
            &*stored
        };
        for (index, word) in out.iter_mut().enumerate() {
            *word = mask.get(index).copied().unwrap_or(0);
        }
    }

    /// How many workgroups of one dispatch may run at once, out of `threads` pool threads.
    pub fn lanes(&self, threads: usize, compute_units: u32) -> usize {
        let enabled = self.enabled_cus.load(Ordering::Acquire).min(compute_units) as usize;
        (threads * enabled).div_ceil(compute_units.max(1) as usize).clamp(1, threads.max(1))
    }

    /// Workgroups between two priority checks.
    pub fn chunk(lanes: usize) -> u64 {
        lanes as u64 * CHUNK_PER_THREAD
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_are_clipped_to_the_agent_and_read_back() {
        let scheduling = QueueScheduling::new();
        let mut out = [0u32; 3];
        scheduling.cu_mask(&mut out, 40);
        assert_eq!(out, [u32::MAX, 0xFF, 0], "no mask set: every CU");
        scheduling.set_cu_mask(&[0x0000_FFFF, u32::MAX, u32::MAX], 40);
        scheduling.cu_mask(&mut out, 40);
        assert_eq!(out, [0x0000_FFFF, 0xFF, 0], "bits past CU 39 dropped");
        assert_eq!(scheduling.lanes(16, 40), 10, "24 of 40 CUs: 16 * 24 / 40 threads, rounded up");
        scheduling.set_cu_mask(&[1], 40);
        assert_eq!(scheduling.lanes(16, 40), 1);
        scheduling.set_cu_mask(&[], 40);
        assert_eq!(scheduling.lanes(16, 40), 16, "an empty mask resets to every CU");
    }

    #[test]
    fn a_dispatch_yields_only_to_higher_priorities_and_only_for_a_while() {
        let arbiter = Arbiter::default();
        let low = arbiter.enter(0);
        let high = arbiter.enter(2);
        assert!(!arbiter.yield_to_higher(&high, || false), "nothing outranks HIGH");
        let started = Instant::now();
        assert!(arbiter.yield_to_higher(&low, || false));
        assert!(started.elapsed() >= MAX_YIELD, "LOW waits out its bound while HIGH runs");
        assert!(arbiter.yield_to_higher(&low, || true), "a stopped queue stops waiting");
        drop(high);
        assert!(!arbiter.yield_to_higher(&low, || false));
    }

    #[test]
    fn a_running_dispatch_may_hold_an_equal_share_of_the_pool_and_all_of_it_alone() {
        let arbiter = Arbiter::default();
        let first = arbiter.enter(1);
        assert_eq!(arbiter.share(16), usize::MAX, "alone: no bound");
        let second = arbiter.enter(0);
        assert_eq!(arbiter.share(16), 8);
        let third = arbiter.enter(2);
        assert_eq!(arbiter.share(16), 5);
        assert_eq!(arbiter.share(2), 1, "one thread at least");
        drop((first, second, third));
        assert_eq!(arbiter.share(16), usize::MAX);
    }
}
