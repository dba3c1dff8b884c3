//! Transitive wait elision through cross-queue frontiers: a wait on a producer that an earlier
//! barrier's producer had already waited on needs no barrier of its own. Observed through
//! `Queue::stats().device_waits`, proved by data (queues run in relaxed mode and the first
//! producer is stalled, so anything that ran too early reads zeros), on both wait strategies.

mod common;

use aqueduct_engine::{Buffer, EngineError, Queue, QueueStats, WaitStrategy, wait_all};
use common::*;

const STRATEGIES: [WaitStrategy; 2] = [WaitStrategy::BarrierValue, WaitStrategy::BarrierAnd];

type Rig = KernelRig;

/// Asserts `buffer[i] == base + step * i`.
fn assert_line(buffer: &Buffer, base: u32, step: u32, what: &str) {
    for (index, value) in words(&buffer.to_vec().unwrap()).iter().enumerate() {
        assert_eq!(*value, base + step * index as u32, "{what}: element {index}");
    }
}

/// Barrier packets and submissions since `before`.
fn delta(queue: &Queue, before: QueueStats) -> (u64, u64) {
    let now = queue.stats();
    (now.device_waits - before.device_waits, now.submissions - before.submissions)
}

#[test]
fn a_diamond_waits_on_its_source_through_either_branch() {
    // A → B, A → C, then D waits on B, C and A: A is covered by B's producer record (B's epoch
    // waited on A's), so D emits two barriers, not three.
    for strategy in STRATEGIES {
        let rig = Rig::new(strategy);
        let device = rig.device();
        let [a, b, c, d] = [(); 4].map(|_| queue(device));
        let [sa, sb, sc, sd] = [(); 4].map(|_| device.create_semaphore(0).unwrap());
        let (x, y, z) = (rig.buffer(), rig.buffer(), rig.buffer());
        stall_next(&a);
        rig.store(&a, &x, 100, &[], &[sa.at(1)]);
        rig.add(&b, &y, &x, 1, &[sa.at(1)], &[sb.at(1)]);
        rig.add(&c, &z, &x, 2, &[sa.at(1)], &[sc.at(1)]);
        assert_eq!((b.stats().device_waits, c.stats().device_waits), (1, 1), "{strategy:?}");
        // z += y: needs B's y and C's z, and through them A's x.
        let before = d.stats();
        rig.accumulate(&d, &z, &y, 1, &[sb.at(1), sc.at(1), sa.at(1)], &[sd.at(1)]);
        assert_eq!(delta(&d, before), (2, 1), "{strategy:?}: the wait on A is covered through B");
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(sd.value(), 0, "{strategy:?}: everything hangs off A's stalled packet");
        release(&a, || sa.value() == 1);
        sd.wait(1, TIMEOUT).unwrap();
        assert_line(&y, 101, 1, "B");
        assert_line(&z, 203, 2, "D after B and C, both after A");
        assert!(sd.failure().is_none());
    }
}

#[test]
fn a_chain_covers_its_first_producer_in_the_same_submission_and_in_later_ones() {
    // A → B → C: C waits on A and B together (one barrier), and later on A alone (none), while A
    // is still stalled, so only the chain through B orders C's reads of A's output.
    for strategy in STRATEGIES {
        let rig = Rig::new(strategy);
        let device = rig.device();
        let [a, b, c] = [(); 3].map(|_| queue(device));
        let [sa, sb, sc] = [(); 3].map(|_| device.create_semaphore(0).unwrap());
        let (x, y, z, w) = (rig.buffer(), rig.buffer(), rig.buffer(), rig.buffer());
        stall_next(&a);
        rig.store(&a, &x, 1000, &[], &[sa.at(1)]);
        rig.add(&b, &y, &x, 10, &[sa.at(1)], &[sb.at(1)]);

        let before = c.stats();
        rig.add(&c, &z, &y, 1, &[sa.at(1), sb.at(1)], &[sc.at(1)]);
        assert_eq!(delta(&c, before), (1, 1), "{strategy:?}: one barrier, on B");
        let before = c.stats();
        rig.add(&c, &w, &x, 5, &[sa.at(1)], &[sc.at(2)]);
        assert_eq!(delta(&c, before), (0, 1), "{strategy:?}: A is covered through C's wait on B");

        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(sc.value(), 0, "{strategy:?}: nothing ran before A");
        release(&a, || sa.value() == 1);
        sc.wait(2, TIMEOUT).unwrap();
        assert_line(&z, 1011, 1, "C after B");
        assert_line(&w, 1005, 1, "C's covered wait still ran after A");
        assert!(sc.failure().is_none());
    }
}

#[test]
fn records_carry_only_unconditional_entries_so_a_second_hop_is_not_covered_in_flight() {
    // A → B → C → D. C learns A through B's record at once, but that entry is conditional on C's
    // epoch until it is reclaimed, and records carry only unconditional entries: D, waiting on C
    // and A while A is still stalled, needs a barrier on each.
    for strategy in STRATEGIES {
        let rig = Rig::new(strategy);
        let device = rig.device();
        let [a, b, c, d, e] = [(); 5].map(|_| queue(device));
        let [sa, sb, sc, sd, se] = [(); 5].map(|_| device.create_semaphore(0).unwrap());
        let (x, y, z, w, v) = (rig.buffer(), rig.buffer(), rig.buffer(), rig.buffer(), rig.buffer());
        stall_next(&a);
        rig.store(&a, &x, 7, &[], &[sa.at(1)]);
        rig.add(&b, &y, &x, 1, &[sa.at(1)], &[sb.at(1)]);
        rig.add(&c, &z, &y, 1, &[sb.at(1)], &[sc.at(1)]);
        let before = d.stats();
        rig.add(&d, &w, &z, 1, &[sc.at(1), sa.at(1)], &[sd.at(1)]);
        assert_eq!(delta(&d, before), (2, 1), "{strategy:?}: A is two hops away");
        // Naming the middle link brings its record in: B is covered by C's record (C's own
        // barrier), A by B's, so one barrier on C does for all three.
        let before = e.stats();
        rig.add(&e, &v, &z, 2, &[sc.at(1), sa.at(1), sb.at(1)], &[se.at(1)]);
        assert_eq!(delta(&e, before), (1, 1), "{strategy:?}: B through C, A through B");
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!((sd.value(), se.value()), (0, 0), "{strategy:?}");
        release(&a, || sa.value() == 1);
        wait_all(&[sd.at(1), se.at(1)], TIMEOUT).unwrap();
        assert_line(&w, 10, 1, "D after C after B after A");
        assert_line(&v, 11, 1, "E after C after B after A");
    }
}

#[test]
fn a_force_retired_link_fails_the_waits_it_covered() {
    // C waits on B (a barrier) and then on A (covered through B's record). B's queue is dropped
    // while its epoch still waits for the stalled A: B's semaphore fails and its epochs are
    // force-retired so C's barrier passes. C's covered wait on A ran before A, so it must fail
    // too, not report success with data A never wrote.
    for strategy in STRATEGIES {
        let rig = Rig::new(strategy);
        let device = rig.device();
        let [a, b, c] = [(); 3].map(|_| queue(device));
        let [sa, sb, sc, late] = [(); 4].map(|_| device.create_semaphore(0).unwrap());
        let (x, y, z, w) = (rig.buffer(), rig.buffer(), rig.buffer(), rig.buffer());
        stall_next(&a);
        rig.store(&a, &x, 300, &[], &[sa.at(1)]);
        rig.add(&b, &y, &x, 1, &[sa.at(1)], &[sb.at(1)]);
        rig.add(&c, &z, &y, 1, &[sb.at(1)], &[sc.at(1)]);
        let before = c.stats();
        rig.add(&c, &w, &x, 1, &[sa.at(1)], &[late.at(1)]);
        assert_eq!(delta(&c, before), (0, 1), "{strategy:?}: covered through B");

        b.cancel();
        assert!(matches!(sb.wait(1, TIMEOUT), Err(EngineError::SemaphoreFailed(_))), "{strategy:?}");
        assert!(matches!(sc.wait(1, TIMEOUT), Err(EngineError::SemaphoreFailed(_))), "{strategy:?}");
        assert!(
            matches!(late.wait(1, TIMEOUT), Err(EngineError::SemaphoreFailed(_))),
            "{strategy:?}: the covered wait lost its cover with B, so it fails"
        );
        assert_eq!(sa.value(), 0, "A is still stalled");

        // A itself is healthy, and C keeps working: with B's cover gone, a wait on A is a barrier.
        let before = c.stats();
        rig.add(&c, &w, &x, 2, &[sa.at(1)], &[late.at(2)]);
        assert_eq!(delta(&c, before), (1, 1), "{strategy:?}");
        release(&a, || sa.value() == 1);
        assert!(matches!(late.wait(2, TIMEOUT), Err(EngineError::SemaphoreFailed(_))), "late stays failed");
        assert_line(&x, 300, 1, "A");
        let done = device.create_semaphore(0).unwrap();
        rig.add(&c, &w, &x, 3, &[sa.at(1)], &[done.at(1)]);
        done.wait(1, TIMEOUT).unwrap();
        assert_line(&w, 303, 1, "C after A");
    }
}
