//! loom model of a dispatch's workgroups claimed by the queue's processor and pool helpers
//! (`soft-hsa/src/claims.rs`).
#![cfg(loom)]

#[allow(dead_code)]
#[path = "../../soft-hsa/src/claims.rs"]
mod claims;

use aqueduct_loom_models::{Exploration, check};
use claims::{Claims, Panic};
use loom::sync::Arc;
use loom::sync::atomic::{AtomicU32, Ordering};
use loom::thread;

/// What the model's threads share: the claims, each workgroup's run count, helpers inside the
/// range, whether the processor has returned, and whether a helper claimed anything.
struct Model {
    claims: Claims,
    runs: [AtomicU32; 3],
    inside: AtomicU32,
    returned: AtomicU32,
    helper_claimed: AtomicU32,
}

impl Model {
    fn new() -> Arc<Self> {
        Arc::new(Model {
            claims: Claims::new(0..3),
            runs: Default::default(),
            inside: AtomicU32::new(0),
            returned: AtomicU32::new(0),
            helper_claimed: AtomicU32::new(0),
        })
    }

    /// A helper: enters unless closed, runs what it claims (panicking, `panics`, at its first),
    /// leaves.
    fn helper(&self, panics: bool) {
        if !self.claims.enter() {
            return;
        }
        assert_eq!(self.returned.load(Ordering::SeqCst), 0, "a helper entered after the processor returned");
        self.inside.fetch_add(1, Ordering::SeqCst);
        let mut panic: Option<Panic> = None;
        while let Some(linear) = self.claims.claim() {
            self.helper_claimed.store(1, Ordering::SeqCst);
            self.runs[linear as usize].fetch_add(1, Ordering::SeqCst);
            if panics {
                panic = Some(Box::new("a helper's workgroup"));
                self.claims.abandon();
                break;
            }
        }
        self.inside.fetch_sub(1, Ordering::SeqCst);
        self.claims.leave(panic);
    }

    /// The processor: claims until none is left, closes and waits; returns the helper's panic.
    fn processor(&self) -> Option<Panic> {
        while let Some(linear) = self.claims.claim() {
            self.runs[linear as usize].fetch_add(1, Ordering::SeqCst);
        }
        let panic = self.claims.close_and_wait();
        assert_eq!(self.inside.load(Ordering::SeqCst), 0, "a helper is still inside the range");
        self.returned.store(1, Ordering::SeqCst);
        panic
    }

    fn counts(&self) -> Vec<u32> {
        self.runs.iter().map(|count| count.load(Ordering::SeqCst)).collect()
    }
}

/// Invariants: when the processor's `close_and_wait` returns, every workgroup has run exactly
/// once, whoever claimed it, no helper is inside the range, and none enters it afterwards (what
/// lets helpers borrow the processor's stack). A processor and two helpers, three workgroups.
#[test]
fn every_workgroup_runs_once_before_the_processor_returns() {
    check("workgroup claims (processor, 2 helpers, 3 workgroups)", Exploration::Preemptions(3), || {
        let model = Model::new();
        let helpers: Vec<_> = (0..2)
            .map(|_| {
                let model = model.clone();
                thread::spawn(move || model.helper(false))
            })
            .collect();
        assert!(model.processor().is_none());
        assert_eq!(model.counts(), [1, 1, 1], "each workgroup once, all before the processor returns");
        for helper in helpers {
            helper.join().unwrap();
        }
        assert_eq!(model.counts(), [1, 1, 1]);
    });
}

/// Invariant: a helper's panic reaches the processor whenever the helper ran a workgroup, and no
/// workgroup runs twice. A processor and one helper that panics at its first workgroup.
#[test]
fn a_helpers_panic_reaches_the_processor() {
    check("workgroup claims (processor, a panicking helper)", Exploration::Exhaustive, || {
        let model = Model::new();
        let helper = {
            let model = model.clone();
            thread::spawn(move || model.helper(true))
        };
        let panic = model.processor();
        let claimed = model.helper_claimed.load(Ordering::SeqCst) == 1;
        assert_eq!(panic.is_some(), claimed, "the panic is reported exactly when the helper ran a workgroup");
        if let Some(panic) = panic {
            assert_eq!(panic.downcast_ref::<&str>(), Some(&"a helper's workgroup"));
        }
        assert!(model.counts().iter().all(|&count| count <= 1), "no workgroup twice: {:?}", model.counts());
        helper.join().unwrap();
    });
}
