//! A range of a dispatch's workgroups, claimed one at a time by the queue's processor thread and
//! by whichever pool threads come to help.
//!
//! Why: handing the range to the pool (`into_par_iter` from the processor thread) parks the
//! processor until pool threads wake, take the job and finish it: a futex round trip and two
//! context switches per dispatch, which on a small dispatch (the digits MLP's are 1–32
//! workgroups) cost more than its workgroups. Here the processor starts on the workgroups at
//! once, pool threads join as they become free, and at the end the processor waits only for
//! helpers that are still running a workgroup; a helper that starts after the range is closed
//! returns without touching it.
//!
//! The protocol ([`Claims`]) is modelled under loom (`loom-models/tests/workgroup_claims.rs`);
//! [`run_range`] drives it with the pool.

#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(loom)]
use loom::sync::{Condvar, Mutex};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
use std::sync::{Condvar, Mutex};

/// Set in [`Claims::state`] once the processor has stopped claiming: no helper may enter.
const CLOSED: u64 = 1 << 63;

/// A panic's payload, carried from a helper to the processor.
pub(crate) type Panic = Box<dyn std::any::Any + Send>;

/// One range's claims, shared by the processor and its helpers (behind an `Arc`: a helper may
/// start after the processor has returned).
pub(crate) struct Claims {
    /// The next workgroup to claim (linear index).
    next: AtomicU64,
    end: u64,
    /// Helpers inside the range (low bits), and [`CLOSED`].
    state: AtomicU64,
    /// A helper's panic, for the processor to resume; its lock also orders the last helper's
    /// leaving against the processor's wait.
    panic: Mutex<Option<Panic>>,
    /// Notified when the last helper leaves a closed range.
    left: Condvar,
}

impl Claims {
    pub fn new(range: core::ops::Range<u64>) -> Self {
        Claims {
            next: AtomicU64::new(range.start),
            end: range.end,
            state: AtomicU64::new(0),
            panic: Mutex::new(None),
            left: Condvar::new(),
        }
    }

    /// The next unclaimed workgroup, now claimed by the caller; `None` when none is left.
    pub fn claim(&self) -> Option<u64> {
        let linear = self.next.fetch_add(1, Ordering::AcqRel);
        (linear < self.end).then_some(linear)
    }

    /// Workgroups not yet claimed.
    pub fn unclaimed(&self) -> u64 {
        self.end.saturating_sub(self.next.load(Ordering::Acquire))
    }

    /// Leaves nothing to claim (after a panic: the others stop at their next claim).
    pub fn abandon(&self) {
        self.next.store(self.end, Ordering::Release);
    }

    /// Counts a helper in unless the range is closed; says whether it may claim.
    pub fn enter(&self) -> bool {
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            if state & CLOSED != 0 {
                return false;
            }
            match self.state.compare_exchange_weak(state, state + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return true,
                Err(now) => state = now,
            }
        }
    }

    /// Counts an entered helper out, with its panic if it had one, waking the processor if it
    /// was the last of a closed range.
    pub fn leave(&self, panic: Option<Panic>) {
        let mut guard = self.panic.lock().unwrap_or_else(|poison| poison.into_inner());
        if panic.is_some() {
            *guard = panic;
        }
        if self.state.fetch_sub(1, Ordering::AcqRel) == CLOSED | 1 {
            self.left.notify_all();
        }
    }

    /// Closes the range to helpers not yet in it and waits for those in it to leave (each is
    /// within one workgroup, which ends: a wave's instruction limit bounds it); returns a
    /// helper's panic. Afterwards no helper touches what the workgroups borrow.
    pub fn close_and_wait(&self) -> Option<Panic> {
        let mut guard = self.panic.lock().unwrap_or_else(|poison| poison.into_inner());
        self.state.fetch_or(CLOSED, Ordering::AcqRel);
        while self.state.load(Ordering::Acquire) != CLOSED {
            guard = self.left.wait(guard).unwrap_or_else(|poison| poison.into_inner());
        }
        guard.take()
    }
}

/// `run_one` with its lifetime erased, for helper jobs, which the pool requires to be `'static`.
#[cfg(not(loom))]
type ErasedRun = *const (dyn Fn(&mut Vec<u8>, u64) -> bool + Sync + 'static);

/// A raw pointer a helper job may carry to another thread.
#[cfg(not(loom))]
struct SendRun(ErasedRun);
// SAFETY: the pointee is `Sync` (`run_range`'s bound), and a helper dereferences it only between
// `Claims::enter` and `Claims::leave`, which `run_range` waits to see balanced after closing the
// range (`close_and_wait`) before it returns.
#[cfg(not(loom))]
unsafe impl Send for SendRun {}

/// The work each pool thread woken to help a range should find there: a wake costs the
/// processor a futex call and the woken thread tens of microseconds of looking for work
/// (rayon's idle rounds, each a `sched_yield`), wasted when nothing is left by the time it
/// starts, and every helper beside the processor slows its workgroups (shared lines, the claim
/// counter). A range of work `w` calls `w / HELPER_SHARE − 1` helpers, none below twice this.
pub(crate) const HELPER_SHARE: std::time::Duration = std::time::Duration::from_micros(10);

/// Helpers for `work` left in `left` workgroups, at most `helpers`: one per `share` of the work
/// beyond this thread's own, one per workgroup left beyond this thread's next at most.
fn helpers_for(work: u128, share: std::time::Duration, left: u64, helpers: usize) -> usize {
    let by_work = (work / share.as_nanos().max(1)).saturating_sub(1);
    by_work.min(u128::from(left.saturating_sub(1))).min(helpers as u128) as usize
}

/// Runs `run_one(group memory, linear id)` for every linear workgroup id in `range`, on this
/// thread and on up to `helpers` pool threads that are free to help, and returns when all have
/// run. A helper whose `run_one` returns `false` claims no more and gives its pool thread back
/// (this thread claims on, so every id runs). Helpers are called at once where `pace` (the time a workgroup of this kernel took this
/// thread before) says the range holds work for them, a `share` each ([`HELPER_SHARE`]);
/// otherwise once the work left, projected from this thread's pace in this range, does. Each
/// thread reuses one group-memory buffer (`memory` is this thread's). A panic in `run_one` on
/// any thread is resumed here, after every helper has left. Returns this thread's pace in this
/// range, the time its first workgroup took, where it ran that alone (`None` where helpers were
/// called at once or it ran none).
#[cfg(not(loom))]
pub(crate) fn run_range(
    range: core::ops::Range<u64>,
    helpers: usize,
    pace: Option<std::time::Duration>,
    share: std::time::Duration,
    memory: &mut Vec<u8>,
    run_one: &(dyn Fn(&mut Vec<u8>, u64) -> bool + Sync),
) -> Option<std::time::Duration> {
    use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
    let count = range.end.saturating_sub(range.start);
    let claims = std::sync::Arc::new(Claims::new(range));
    // Claims and runs workgroups until none is left (or, for a helper, until `run_one` says to
    // leave), calling `after` after each; a panic stops every thread at its next claim and is
    // returned.
    let claim_all = |claims: &Claims,
                     memory: &mut Vec<u8>,
                     run_one: &(dyn Fn(&mut Vec<u8>, u64) -> bool + Sync),
                     helper: bool,
                     after: &mut dyn FnMut(&Claims)| {
        catch_unwind(AssertUnwindSafe(|| {
            while let Some(linear) = claims.claim() {
                if !run_one(memory, linear) && helper {
                    break;
                }
                after(claims);
            }
        }))
        .inspect_err(|_| claims.abandon())
        .err()
    };
    let call_helpers = |count: usize| {
        for _ in 0..count {
            let claims = std::sync::Arc::clone(&claims);
            // SAFETY: only the lifetime is erased (same layout); see `SendRun`.
            let run = SendRun(unsafe {
                core::mem::transmute::<*const (dyn Fn(&mut Vec<u8>, u64) -> bool + Sync + '_), ErasedRun>(run_one)
            });
            rayon::spawn(move || {
                let run = run;
                if !claims.enter() {
                    return;
                }
                // SAFETY: entered and not yet left (see `SendRun`).
                let run_one = unsafe { &*run.0 };
                let panic = claim_all(&claims, &mut Vec::new(), run_one, true, &mut |_| {});
                claims.leave(panic);
            });
        }
    };
    // Helpers at once where the kernel's pace says the range holds work for them; otherwise
    // this thread alone until the work left, projected, does.
    let mut ran = 0u32;
    let at_once = pace.map_or(0, |pace| helpers_for(pace.as_nanos() * u128::from(count), share, count, helpers));
    if at_once > 0 {
        call_helpers(at_once);
    }
    let mut helped = at_once > 0 || helpers == 0;
    // The pace is this thread's first workgroup where it ran alone: beside helpers a workgroup
    // runs slower (shared lines, the claim counter), and a pace that took that in called
    // helpers at once for the next dispatch too, however short its workgroups (a host build's
    // saxpy chain took 19–23 ms so, against 11 ms alone, on the 16-core device machine).
    let started = std::time::Instant::now();
    let mut first = None;
    let own = claim_all(&claims, memory, run_one, false, &mut |claims| {
        ran += 1;
        if ran == 1 {
            first = Some(started.elapsed());
        }
        if helped {
            return;
        }
        // The next workgroup is this thread's own: helpers for the rest.
        let left = claims.unclaimed();
        let projected = started.elapsed().as_nanos() * u128::from(left) / u128::from(ran);
        let called = helpers_for(projected, share, left, helpers);
        if called > 0 {
            call_helpers(called);
            helped = true;
        }
    });
    let helper = claims.close_and_wait();
    if let Some(panic) = own.or(helper) {
        resume_unwind(panic);
    }
    first.filter(|_| at_once == 0)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::atomic::AtomicU32;
    use std::time::Duration;

    #[test]
    fn every_workgroup_runs_once_whoever_claims_it() {
        for helpers in [0, 1, 3, 16] {
            let runs: Vec<AtomicU32> = (0..1000).map(|_| AtomicU32::new(0)).collect();
            let threads = Mutex::new(std::collections::HashSet::new());
            let caller = std::thread::current().id();
            run_range(100..1000, helpers, None, Duration::ZERO, &mut Vec::new(), &|memory, linear| {
                memory.push(1);
                // A helper's workgroups are slow: where one joins, the caller runs out of work
                // first and waits for it.
                if std::thread::current().id() != caller {
                    std::thread::sleep(std::time::Duration::from_micros(500));
                }
                runs[linear as usize].fetch_add(1, Ordering::Relaxed);
                threads.lock().unwrap().insert(std::thread::current().id());
                true
            });
            for (linear, count) in runs.iter().enumerate() {
                let expected = u32::from(linear >= 100);
                assert_eq!(count.load(Ordering::Relaxed), expected, "workgroup {linear} with {helpers} helpers");
            }
            if helpers == 0 {
                assert_eq!(
                    *threads.lock().unwrap(),
                    [std::thread::current().id()].into(),
                    "no helper: this thread alone"
                );
            }
        }
    }

    #[test]
    fn helpers_are_called_only_when_the_work_left_is_long_enough() {
        // Short work: this thread alone.
        let threads = Mutex::new(std::collections::HashSet::new());
        let pace = run_range(0..64, 3, None, Duration::from_secs(60), &mut Vec::new(), &|_, _| {
            threads.lock().unwrap().insert(std::thread::current().id());
            true
        });
        assert!(pace.is_some(), "the first workgroup ran alone, so it has a pace");
        assert_eq!(*threads.lock().unwrap(), [std::thread::current().id()].into(), "short work: no helper");
        // Long work (projected at 63 x 1 ms after the first workgroup): a helper joins. The
        // caller waits at workgroup 8 until one has run a workgroup (the pool may be busy with
        // other tests for a while; ten seconds is far longer than any of them).
        let caller = std::thread::current().id();
        let helped = (Mutex::new(false), std::sync::Condvar::new());
        run_range(0..64, 3, None, Duration::from_millis(10), &mut Vec::new(), &|_, linear| {
            std::thread::sleep(Duration::from_millis(1));
            if std::thread::current().id() != caller {
                *helped.0.lock().unwrap() = true;
                helped.1.notify_all();
            } else if linear == 8 {
                let guard = helped.0.lock().unwrap();
                let (guard, _) = helped.1.wait_timeout_while(guard, Duration::from_secs(10), |done| !*done).unwrap();
                assert!(*guard, "a helper joined long work");
            }
            true
        });
    }

    #[test]
    fn a_helper_is_called_per_share_of_the_work_beyond_this_threads_own() {
        let share = Duration::from_micros(10);
        let work = |micros: u128| micros * 1000;
        assert_eq!(helpers_for(work(19), share, 100, 15), 0, "under two shares: alone");
        assert_eq!(helpers_for(work(20), share, 100, 15), 1);
        assert_eq!(helpers_for(work(55), share, 100, 15), 4);
        assert_eq!(helpers_for(work(10_000), share, 100, 15), 15, "at most the helpers there are");
        assert_eq!(helpers_for(work(10_000), share, 4, 15), 3, "at most one per workgroup beyond this thread's");
        assert_eq!(helpers_for(work(10_000), share, 0, 15), 0, "nothing left");
    }

    #[test]
    fn a_known_slow_pace_calls_helpers_before_the_first_workgroup_ends() {
        // The caller's first workgroup waits for a helper's: only helpers called at once let
        // it end (within ten seconds: the pool may be busy with other tests for a while).
        let caller = std::thread::current().id();
        let helped = (Mutex::new(false), std::sync::Condvar::new());
        let pace =
            run_range(0..16, 3, Some(Duration::from_secs(1)), Duration::from_millis(10), &mut Vec::new(), &|_, _| {
                if std::thread::current().id() != caller {
                    *helped.0.lock().unwrap() = true;
                    helped.1.notify_all();
                    return true;
                }
                let guard = helped.0.lock().unwrap();
                let (guard, _) = helped.1.wait_timeout_while(guard, Duration::from_secs(10), |done| !*done).unwrap();
                assert!(*guard, "a helper ran while the caller's first workgroup waited");
                true
            });
        assert_eq!(pace, None, "no pace is measured beside helpers called at once");
    }

    #[test]
    fn a_panic_on_any_thread_reaches_the_caller_after_the_helpers_leave() {
        let running = AtomicU32::new(0);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            run_range(0..64, 3, None, Duration::ZERO, &mut Vec::new(), &|_, linear| {
                running.fetch_add(1, Ordering::AcqRel);
                std::thread::sleep(std::time::Duration::from_micros(200));
                running.fetch_sub(1, Ordering::AcqRel);
                assert!(linear != 40, "workgroup 40 fails");
                true
            })
        }));
        let panic = outcome.expect_err("the panic is resumed");
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|text| text.to_string()))
            .unwrap_or_default();
        assert!(message.contains("workgroup 40 fails"), "{message}");
        assert_eq!(running.load(Ordering::Acquire), 0, "no helper still runs a workgroup once it returns");
    }

    #[test]
    fn a_helper_that_is_told_to_leave_claims_no_more_and_every_id_still_runs() {
        // Each helper leaves after its first workgroup; the caller claims the rest. Helpers are
        // called at once (a known slow pace), and the caller's first workgroup waits for one to
        // have run (ten seconds: the pool may be busy with other tests for a while).
        let caller = std::thread::current().id();
        let runs: Vec<AtomicU32> = (0..64).map(|_| AtomicU32::new(0)).collect();
        let by_helpers = Mutex::new(std::collections::HashMap::<std::thread::ThreadId, u32>::new());
        let helped = (Mutex::new(false), std::sync::Condvar::new());
        run_range(0..64, 3, Some(Duration::from_secs(1)), Duration::from_millis(10), &mut Vec::new(), &|_, linear| {
            runs[linear as usize].fetch_add(1, Ordering::Relaxed);
            if std::thread::current().id() != caller {
                *by_helpers.lock().unwrap().entry(std::thread::current().id()).or_default() += 1;
                *helped.0.lock().unwrap() = true;
                helped.1.notify_all();
                return false;
            }
            if linear == 0 {
                let guard = helped.0.lock().unwrap();
                let _ = helped.1.wait_timeout_while(guard, Duration::from_secs(10), |done| !*done).unwrap();
            }
            true
        });
        assert!(runs.iter().all(|count| count.load(Ordering::Relaxed) == 1), "every id ran once");
        let by_helpers = by_helpers.into_inner().unwrap();
        assert!(!by_helpers.is_empty(), "a helper ran");
        // A pool thread may be called as two helpers (it left one job and took the next).
        assert!(by_helpers.values().sum::<u32>() <= 3, "each of the 3 helpers ran one workgroup: {by_helpers:?}");
    }
}
