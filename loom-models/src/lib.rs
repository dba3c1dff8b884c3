//! loom models of aqueduct's lock-free structures.
//!
//! The models are the integration tests in `tests/`, one file per structure. Each includes the
//! product's own protocol module by path (never a copy) and runs only under `--cfg loom`:
//! `scripts/loom.sh` runs them all. Without that flag this crate and its tests are empty.
//!
//! - `tests/semaphore_table.rs`: `components/src/semaphore_slot.rs` (value, failure, seqlocked
//!   producer record);
//! - `tests/host_parking.rs`: `components/src/host_waiters.rs` (host threads parked on the table);
//! - `tests/queue_directory.rs`: `components/src/endpoint_scan.rs` (an endpoint's retirement read
//!   by other queues);
//! - `tests/soft_signals.rs`: `soft-hsa/src/waiters.rs` (soft signal wait and wake, and the
//!   doorbell handoff to the queue processor);
//! - `tests/parked_queues.rs`: `components/src/parked_queues.rs` (parked work woken when a
//!   semaphore advances);
//! - `tests/drain_order.rs`: `components/src/drain_order.rs` (a drain held on a producer's
//!   drain, woken when it advances);
//! - `tests/workgroup_claims.rs`: `soft-hsa/src/claims.rs` (a dispatch's workgroups claimed by
//!   the queue's processor and pool helpers).

#[cfg(loom)]
mod run {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Instant;

    /// How loom explores a model.
    #[derive(Clone, Copy, Debug)]
    pub enum Exploration {
        /// Every interleaving.
        Exhaustive,
        /// Every interleaving with at most this many preemptions (loom's `preemption_bound`).
        Preemptions(usize),
    }

    /// Runs `model` under loom with the stated exploration, set here in the builder (a
    /// `LOOM_MAX_PREEMPTIONS` in the environment does not change it), and prints how many
    /// interleavings it explored and how long that took.
    pub fn check<F>(name: &str, exploration: Exploration, model: F)
    where
        F: Fn() + Sync + Send + 'static,
    {
        // A std atomic, outside loom's view, counts the executions loom runs; leaked so the
        // model closure ('static) can hold it.
        let counter: &'static AtomicUsize = Box::leak(Box::new(AtomicUsize::new(0)));
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = match exploration {
            Exploration::Exhaustive => None,
            Exploration::Preemptions(bound) => Some(bound),
        };
        let start = Instant::now();
        builder.check(move || {
            counter.fetch_add(1, Ordering::Relaxed);
            model();
        });
        println!(
            "loom model {name}: {} interleavings explored ({}), {:.2} s",
            counter.load(Ordering::Relaxed),
            match exploration {
                Exploration::Exhaustive => "exhaustive".to_string(),
                Exploration::Preemptions(bound) => format!("preemption bound {bound}"),
            },
            start.elapsed().as_secs_f64()
        );
    }
}

#[cfg(loom)]
mod control {
    use loom::sync::{Condvar, Mutex};

    /// A queue's control signal as its completion thread uses it: pokes bump a counter, and the
    /// thread sleeps until it differs from a value read before looking at the state
    /// (`hsa_amd_signal_wait_any` on NE). No timeout, so a poke nobody sends is a deadlock loom
    /// reports.
    #[derive(Default)]
    pub struct Control {
        value: Mutex<u64>,
        changed: Condvar,
    }

    impl Control {
        pub fn read(&self) -> u64 {
            *self.value.lock().unwrap()
        }

        pub fn poke(&self) {
            *self.value.lock().unwrap() += 1;
            self.changed.notify_all();
        }

        pub fn wait_change(&self, seen: u64) {
            let mut value = self.value.lock().unwrap();
            while *value == seen {
                value = self.changed.wait(value).unwrap();
            }
        }
    }
}

#[cfg(loom)]
pub use control::Control;
#[cfg(loom)]
pub use run::{Exploration, check};
