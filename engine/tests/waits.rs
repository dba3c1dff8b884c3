//! Wait resolution, tier by tier, observed through queue statistics (packets published, barrier
//! packets, parked submissions) and proved by data; deferred waits (wait-before-signal and
//! host-signalled); and host-side waits with timeouts.

mod common;

use std::time::{Duration, Instant};

use aqueduct_engine::{Buffer, EngineError, Queue, QueueStats, WaitStrategy, wait_all, wait_any};
use common::*;

const STRATEGIES: [WaitStrategy; 2] = [WaitStrategy::BarrierValue, WaitStrategy::BarrierAnd];

type Rig = KernelRig;

/// Asserts `buffer[i] == base + i`.
fn assert_ramp(buffer: &Buffer, base: u32, what: &str) {
    for (index, value) in words(&buffer.to_vec().unwrap()).iter().enumerate() {
        assert_eq!(*value, base + index as u32, "{what}: element {index}");
    }
}

/// Stats change since `before`: (packets, device_waits, deferred, submissions).
fn delta(queue: &Queue, before: QueueStats) -> (u64, u64, u64, u64) {
    let now = queue.stats();
    (
        now.packets - before.packets,
        now.device_waits - before.device_waits,
        now.deferred - before.deferred,
        now.submissions - before.submissions,
    )
}

#[test]
fn tier_1_a_satisfied_wait_publishes_only_the_payload() {
    for strategy in STRATEGIES {
        let rig = Rig::new(strategy);
        let device = rig.device();
        let (a, b) = (queue(device), queue(device));
        let host = device.create_semaphore(0).unwrap();
        let preset = device.create_semaphore(9).unwrap();
        let done = device.create_semaphore(0).unwrap();
        let x = rig.buffer();
        host.signal(2).unwrap();
        let before = b.stats();
        rig.store(&b, &x, 10, &[host.at(2), host.at(1), preset.at(9), preset.at(0)], &[done.at(1)]);
        assert_eq!(delta(&b, before), (1, 0, 0, 1), "{strategy:?}: no barrier, nothing parked");
        // A producer on another queue that already finished and drained.
        let produced = device.create_semaphore(0).unwrap();
        rig.store(&a, &x, 20, &[done.at(1)], &[produced.at(1)]);
        produced.wait(1, TIMEOUT).unwrap();
        let before = b.stats();
        rig.add(&b, &x, &x, 1, &[produced.at(1)], &[done.at(2)]);
        assert_eq!(delta(&b, before), (1, 0, 0, 1), "{strategy:?}: a retired producer needs no barrier");
        done.wait(2, TIMEOUT).unwrap();
        assert_ramp(&x, 21, "store then add");
    }
}

#[test]
fn tier_2_a_same_queue_wait_is_dropped() {
    for strategy in STRATEGIES {
        let rig = Rig::new(strategy);
        let device = rig.device();
        let a = queue(device);
        let (s, t) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
        let (x, y) = (rig.buffer(), rig.buffer());
        stall_next(&a);
        rig.store(&a, &x, 100, &[], &[s.at(1)]);
        let before = a.stats();
        // s is not reached yet (the producer is stalled), but queue order covers it.
        rig.add(&a, &y, &x, 5, &[s.at(1)], &[t.at(1)]);
        assert_eq!(delta(&a, before), (1, 0, 0, 1), "{strategy:?}");
        assert_eq!((s.value(), t.value()), (0, 0));
        release(&a, || s.value() == 1);
        t.wait(1, TIMEOUT).unwrap();
        assert_ramp(&y, 105, "same-queue consumer");
    }
}

#[test]
fn tier_3_the_frontier_covers_older_epochs_of_a_producer() {
    for strategy in STRATEGIES {
        let rig = Rig::new(strategy);
        let device = rig.device();
        let (a, b, c) = (queue(device), queue(device), queue(device));
        let first = device.create_semaphore(0).unwrap();
        let second = device.create_semaphore(0).unwrap();
        let third = device.create_semaphore(0).unwrap();
        let done = device.create_semaphore(0).unwrap();
        let (x1, x2, x3) = (rig.buffer(), rig.buffer(), rig.buffer());
        let (y1, y2, y3, z) = (rig.buffer(), rig.buffer(), rig.buffer(), rig.buffer());
        stall_next(&a);
        rig.store(&a, &x1, 1000, &[], &[first.at(1)]);
        rig.store(&a, &x2, 2000, &[], &[second.at(1)]);

        // Waiting on A's second epoch costs one barrier...
        let before = b.stats();
        rig.add(&b, &y2, &x2, 1, &[second.at(1)], &[]);
        assert_eq!(delta(&b, before), (2, 1, 0, 1), "{strategy:?}: one barrier, then the payload");
        // ...after which A's first epoch is covered by B's frontier: no new barrier.
        let before = b.stats();
        rig.add(&b, &y1, &x1, 1, &[first.at(1)], &[]);
        assert_eq!(delta(&b, before), (1, 0, 0, 1), "{strategy:?}: covered by the frontier");
        // A later epoch of the same producer is not covered.
        rig.store(&a, &x3, 3000, &[], &[third.at(1)]);
        let before = b.stats();
        rig.add(&b, &y3, &x3, 1, &[third.at(1), first.at(1)], &[done.at(1)]);
        assert_eq!(delta(&b, before), (2, 1, 0, 1), "{strategy:?}: a newer epoch needs a barrier");

        // Several waits on one producer in one submission: one barrier, on its latest epoch.
        let before = c.stats();
        let c_done = device.create_semaphore(0).unwrap();
        rig.add(&c, &z, &x3, 7, &[first.at(1), third.at(1), second.at(1)], &[c_done.at(1)]);
        assert_eq!(delta(&c, before), (2, 1, 0, 1), "{strategy:?}: one barrier per producer queue");

        // Nothing ran yet: everything hangs off A's stalled first packet.
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!((done.value(), c_done.value()), (0, 0));
        release(&a, || first.value() == 1);
        wait_all(&[done.at(1), c_done.at(1)], TIMEOUT).unwrap();
        assert_ramp(&y1, 1001, "y1");
        assert_ramp(&y2, 2001, "y2");
        assert_ramp(&y3, 3001, "y3");
        assert_ramp(&z, 3007, "z");
        assert_eq!(b.stats().device_waits, 2);
    }
}

#[test]
fn tier_4_a_cross_queue_wait_is_one_device_barrier() {
    for strategy in STRATEGIES {
        let rig = Rig::new(strategy);
        let device = rig.device();
        let (a, b, c) = (queue(device), queue(device), queue(device));
        let (s, t, done) = (
            device.create_semaphore(0).unwrap(),
            device.create_semaphore(0).unwrap(),
            device.create_semaphore(0).unwrap(),
        );
        let (x, y, z) = (rig.buffer(), rig.buffer(), rig.buffer());
        let (d, u, v) = (queue(device), device.create_semaphore(0).unwrap(), rig.buffer());
        stall_next(&a);
        rig.store(&a, &x, 40, &[], &[s.at(1)]);
        let before = b.stats();
        rig.add(&b, &y, &x, 2, &[s.at(1)], &[t.at(1)]);
        assert_eq!(delta(&b, before), (2, 1, 0, 1), "{strategy:?}");
        // An independent producer on D (a wait on both A and B would cost one barrier: B's
        // producer already waited on A, see tests/frontiers.rs).
        stall_next(&d);
        rig.store(&d, &v, 1, &[], &[u.at(1)]);
        // Two producer queues: two device waits. BARRIER_VALUE needs a packet each; one
        // BARRIER_AND names up to five signals.
        let before = c.stats();
        rig.add(&c, &z, &x, 3, &[s.at(1), u.at(1)], &[done.at(1)]);
        let packets = match strategy {
            WaitStrategy::BarrierAnd => 2,
            _ => 3,
        };
        assert_eq!(delta(&c, before), (packets, 2, 0, 1), "{strategy:?}");
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!((t.value(), done.value()), (0, 0), "{strategy:?}: consumers wait for the stalled producer");
        release(&a, || s.value() == 1);
        t.wait(1, TIMEOUT).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(done.value(), 0, "{strategy:?}: and for the other stalled producer");
        release(&d, || u.value() == 1);
        done.wait(1, TIMEOUT).unwrap();
        assert_ramp(&y, 42, "y");
        assert_ramp(&z, 43, "z");
    }
}

#[test]
fn tier_5_wait_before_signal_defers_until_the_producer_is_submitted() {
    for strategy in STRATEGIES {
        let rig = Rig::new(strategy);
        let device = rig.device();
        let (a, b) = (queue(device), queue(device));
        let (s, t) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
        let (x, y) = (rig.buffer(), rig.buffer());
        // No producer of s exists yet: B parks the wait, and the submission behind it too.
        let before = b.stats();
        rig.add(&b, &y, &x, 1, &[s.at(1)], &[t.at(1)]);
        rig.add(&b, &y, &y, 10, &[], &[t.at(2)]);
        assert_eq!(delta(&b, before), (0, 0, 2, 2), "{strategy:?}: both parked, nothing published");
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(t.value(), 0);
        // The producer, slowed so it is still running when B admits its wait.
        fault_next(&a, aqueduct_soft_hsa::Fault::Slow(Duration::from_millis(30)));
        rig.store(&a, &x, 500, &[], &[s.at(1)]);
        t.wait(2, TIMEOUT).unwrap();
        assert_ramp(&y, 511, "consumer ran after the producer, in queue order");
        let stats = b.stats();
        assert_eq!((stats.packets - stats.device_waits, stats.deferred), (2, 2), "{strategy:?}: {stats:?}");
        assert!(stats.device_waits <= 1, "{strategy:?}: {stats:?}");
        // Later work on B is no longer parked.
        let before = b.stats();
        rig.add(&b, &y, &y, 1, &[], &[t.at(3)]);
        assert_eq!(delta(&b, before), (1, 0, 0, 1), "{strategy:?}");
        t.wait(3, TIMEOUT).unwrap();
        assert_ramp(&y, 512, "after the parked work drained");
    }
}

#[test]
fn a_wait_on_a_value_older_than_the_producer_record_defers_and_still_orders() {
    // The semaphore's record names only its latest queued producer; a wait on an earlier value
    // from another queue cannot be turned into a barrier and waits for the value on the host side.
    for strategy in STRATEGIES {
        let rig = Rig::new(strategy);
        let device = rig.device();
        let (a, b) = (queue(device), queue(device));
        let (s, t) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
        let (x, y) = (rig.buffer(), rig.buffer());
        stall_next(&a);
        rig.store(&a, &x, 70, &[], &[s.at(1)]);
        a.barrier().signal(s.at(2)).submit().unwrap();
        let before = b.stats();
        rig.add(&b, &y, &x, 1, &[s.at(1)], &[t.at(1)]);
        assert_eq!(delta(&b, before), (0, 0, 1, 1), "{strategy:?}: parked");
        release(&a, || s.value() >= 1);
        t.wait(1, TIMEOUT).unwrap();
        assert_ramp(&y, 71, "y");
    }
}

#[test]
fn host_signalled_waits_release_parked_work_in_order() {
    for strategy in STRATEGIES {
        let rig = Rig::new(strategy);
        let device = rig.device();
        let (a, b) = (queue(device), queue(device));
        let host = device.create_semaphore(0).unwrap();
        let (t, u) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
        let (x, y) = (rig.buffer(), rig.buffer());
        rig.store(&a, &x, 0, &[host.at(5)], &[t.at(1)]);
        rig.add(&a, &x, &x, 3, &[], &[t.at(2)]);
        rig.add(&b, &y, &x, 100, &[host.at(3), t.at(2)], &[u.at(1)]);
        assert_eq!((a.stats().deferred, b.stats().deferred, a.stats().packets, b.stats().packets), (2, 1, 0, 0));
        host.signal(3).unwrap();
        // 3 < 5: A stays parked, and B still waits on A's t.
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!((t.value(), u.value()), (0, 0), "{strategy:?}");
        host.signal(5).unwrap();
        u.wait(1, TIMEOUT).unwrap();
        assert_ramp(&x, 3, "x");
        assert_ramp(&y, 103, "y");
        assert_eq!(t.value(), 2);
    }
}

#[test]
fn a_signal_seen_on_the_host_implies_its_submissions_other_signals_and_their_causes() {
    // B's barrier passes as soon as A's work has run on the device; A's queue publishes `t` and
    // `s` (one submission's two signals) only when it drains. A batch holds A's queue lock, so A
    // cannot drain while B runs. B's drain then waits for A's: publishing `u` (or raising `t` on
    // A's behalf, as it once did) would show a host `u` and `t` while `s` still read 0 (issue
    // 29, finding 1: the stress's "semaphore Ok(0)" losses).
    for strategy in STRATEGIES {
        let rig = Rig::new(strategy);
        let device = rig.device();
        let (a, b) = (queue(device), queue(device));
        let [t, s, u] = [0; 3].map(|_| device.create_semaphore(0).unwrap());
        let (x, y) = (rig.buffer(), rig.buffer());
        stall_next(&a);
        rig.store(&a, &x, 40, &[], &[t.at(2), s.at(1)]);
        rig.add(&b, &y, &x, 2, &[t.at(2)], &[u.at(1)]);
        assert_eq!(b.stats().device_waits, 1, "{strategy:?}: a device barrier on A");
        a.batch(|_| {
            // B's dispatch runs once A's store has: its result shows it.
            release(&a, || words(&y.to_vec().unwrap())[0] == 42);
            // Time for B's completion thread to drain, which it did before the fix.
            let published = eventually(Duration::from_millis(100), || u.value() == 1);
            assert_eq!(
                (u.value(), t.value(), s.value()),
                (0, 0, 0),
                "{strategy:?}: B ran, but nothing is published before A drains (u seen: {published})"
            );
            Ok(())
        })
        .unwrap();
        u.wait(1, TIMEOUT).unwrap();
        assert_eq!((t.value(), s.value()), (2, 1), "{strategy:?}: u is visible, so are t and s");
        assert_ramp(&y, 42, "y");
    }
}

#[test]
fn a_parked_wait_keeps_its_semaphore_alive() {
    // Dropping the only handle of a semaphore that parked work waits on must not let a new
    // semaphore take over its slot (and satisfy the wait with an unrelated value).
    let rig = Rig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let a = queue(device);
    let gate = device.create_semaphore(0).unwrap();
    let done = device.create_semaphore(0).unwrap();
    let x = rig.buffer();
    let (_, semaphores_before, _) = device.live_objects();
    // Queue B promises the gate 1 (parked behind a host semaphore), so A's wait on the gate can
    // still be met after the gate's handle goes: it stays parked, on the same slot.
    let b = queue(device);
    let host = device.create_semaphore(0).unwrap();
    let y = rig.buffer();
    rig.store(&b, &y, 2, &[host.at(1)], &[gate.at(1)]);
    rig.store(&a, &x, 1, &[gate.at(1)], &[done.at(1)]);
    drop(gate);
    assert_eq!(device.live_objects().1, semaphores_before + 1, "the parked wait holds the semaphore");
    let newcomers: Vec<_> = (0..4).map(|_| device.create_semaphore(1_000).unwrap()).collect();
    // Any semaphore moving makes parked work retry its waits.
    newcomers[0].signal(1_001).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(done.value(), 0, "the wait must stay on the dropped semaphore");
    assert!(done.failure().is_none());
    assert_eq!(a.stats().packets, 0);
    // B keeps its promise: the orphaned gate reaches 1 and A's work runs.
    host.signal(1).unwrap();
    done.wait(1, TIMEOUT).unwrap();
    assert_eq!(words(&x.to_vec().unwrap())[0], 1);
}

#[test]
fn host_waits_time_out() {
    let rig = Rig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let s = device.create_semaphore(0).unwrap();
    let start = Instant::now();
    match s.wait(1, Duration::from_millis(30)) {
        Err(error @ EngineError::Timeout { .. }) => {
            let EngineError::Timeout { waited, unmet } = &error else { unreachable!() };
            assert!(*waited >= Duration::from_millis(30), "{waited:?}");
            assert_eq!(unmet, &[aqueduct_engine::UnmetPoint { semaphore: s.id(), value: 1, reached: 0 }]);
            let message = error.to_string();
            assert!(message.ends_with(&format!(": semaphore {} waited for 1, reached 0", s.id())), "{message}");
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(start.elapsed() >= Duration::from_millis(30));
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(matches!(s.wait(1, Duration::ZERO), Err(EngineError::Timeout { .. })));
    assert!(s.wait(0, Duration::ZERO).is_ok(), "already reached");
    assert_eq!(s.query().unwrap(), 0);
}

#[test]
fn wait_all_and_wait_any() {
    let rig = Rig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let a = queue(device);
    let (p, q, r) =
        (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
    assert!(wait_all(&[], Duration::ZERO).is_ok(), "nothing to wait for");
    assert!(matches!(wait_any(&[], Duration::ZERO), Err(EngineError::InvalidArgument { .. })));
    p.signal(1).unwrap();
    match wait_all(&[p.at(1), q.at(1)], Duration::from_millis(20)) {
        Err(EngineError::Timeout { unmet, .. }) => {
            assert_eq!(
                unmet,
                [aqueduct_engine::UnmetPoint { semaphore: q.id(), value: 1, reached: 0 }],
                "only q is unmet"
            )
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert_eq!(wait_any(&[q.at(1), p.at(1)], Duration::from_millis(20)).unwrap(), 1);
    assert!(matches!(wait_any(&[q.at(1), r.at(1)], Duration::from_millis(20)), Err(EngineError::Timeout { .. })));

    // Woken by another thread's host signal and by a queue signal.
    std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(30));
            r.signal(4).unwrap();
        });
        assert_eq!(wait_any(&[q.at(1), r.at(4)], TIMEOUT).unwrap(), 1);
    });
    let gate = device.create_semaphore(0).unwrap();
    a.barrier().wait(gate.at(1)).signal(q.at(2)).submit().unwrap();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(30));
            gate.signal(1).unwrap();
        });
        wait_all(&[p.at(1), q.at(2), r.at(3)], TIMEOUT).unwrap();
    });
    assert_eq!((p.value(), q.value(), r.value()), (1, 2, 4));

    // A failed semaphore ends the wait at once with its error.
    let failing = device.create_semaphore(0).unwrap();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(30));
            failing.fail("host gave up");
        });
        let start = Instant::now();
        match wait_all(&[p.at(1), failing.at(1)], TIMEOUT) {
            Err(EngineError::SemaphoreFailed(record)) => assert_eq!(record.message, "host gave up"),
            other => panic!("expected the failure, got {other:?}"),
        }
        assert!(start.elapsed() < Duration::from_secs(5));
    });
    assert!(matches!(wait_any(&[q.at(100), failing.at(1)], TIMEOUT), Err(EngineError::SemaphoreFailed(_))));
    assert!(matches!(failing.query(), Err(EngineError::SemaphoreFailed(_))));
    assert_eq!(failing.failure().unwrap().message, "host gave up");
}

#[test]
fn many_host_waiters_wake_on_one_queue_signal() {
    let rig = Rig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let a = queue(device);
    let (gate, done) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
    a.barrier().wait(gate.at(1)).signal(done.at(7)).submit().unwrap();
    std::thread::scope(|scope| {
        let waiters: Vec<_> = (0..8).map(|_| scope.spawn(|| done.wait(7, TIMEOUT))).collect();
        std::thread::sleep(Duration::from_millis(20));
        gate.signal(1).unwrap();
        for waiter in waiters {
            waiter.join().unwrap().unwrap();
        }
    });
}

#[test]
fn waits_on_seven_producer_queues() {
    // BARRIER_VALUE takes a packet per producer; BARRIER_AND names five signals per packet.
    for strategy in STRATEGIES {
        let rig = Rig::new(strategy);
        let device = rig.device();
        let producers: Vec<_> = (0..7).map(|_| queue(device)).collect();
        let consumer = queue(device);
        let produced: Vec<_> = (0..7).map(|_| device.create_semaphore(0).unwrap()).collect();
        let outputs: Vec<_> = (0..7).map(|_| rig.buffer()).collect();
        for (index, (queue, semaphore)) in producers.iter().zip(&produced).enumerate() {
            stall_next(queue);
            rig.store(queue, &outputs[index], 1000 * index as u32, &[], &[semaphore.at(1)]);
        }
        let done = device.create_semaphore(0).unwrap();
        let result = rig.buffer();
        let waits: Vec<_> = produced.iter().map(|semaphore| semaphore.at(1)).collect();
        // Reads the last producer's output; every producer must have finished before.
        rig.add(&consumer, &result, &outputs[6], 1, &waits, &[done.at(1)]);
        let packets = match strategy {
            WaitStrategy::BarrierAnd => 3,
            _ => 8,
        };
        assert_eq!((consumer.stats().packets, consumer.stats().device_waits), (packets, 7), "{strategy:?}");
        for (queue, semaphore) in producers.iter().zip(&produced).take(6) {
            release(queue, || semaphore.value() == 1);
        }
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(done.value(), 0, "{strategy:?}: one producer is still stalled");
        release(&producers[6], || produced[6].value() == 1);
        done.wait(1, TIMEOUT).unwrap();
        assert_ramp(&result, 6001, "consumer");
    }
}

#[test]
fn waits_without_a_deadline() {
    // Duration::MAX means "no timeout": it must not overflow the deadline arithmetic.
    let rig = Rig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let a = queue(device);
    let (s, t) = (device.create_semaphore(1).unwrap(), device.create_semaphore(0).unwrap());
    s.wait(1, Duration::MAX).unwrap();
    wait_all(&[s.at(1)], Duration::MAX).unwrap();
    assert_eq!(wait_any(&[t.at(1), s.at(1)], Duration::MAX).unwrap(), 1);
    let gate = device.create_semaphore(0).unwrap();
    a.barrier().wait(gate.at(1)).signal(t.at(1)).submit().unwrap();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(20));
            gate.signal(1).unwrap();
        });
        t.wait(1, Duration::MAX).unwrap();
    });
    let failing = device.create_semaphore(0).unwrap();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(20));
            failing.fail("gone");
        });
        assert!(matches!(failing.wait(1, Duration::MAX), Err(EngineError::SemaphoreFailed(_))));
    });
}

#[test]
fn tier_3_a_producer_epoch_that_already_ran_never_parks_and_costs_at_most_a_passing_barrier() {
    // A's first submission runs; its second stalls. Admission treats a producer epoch as retired
    // once A's completion thread has drained it: then the wait costs nothing. Between running on
    // the device and being drained, the wait may still take a barrier (which passes at once),
    // but it never parks and never waits for A's stalled work.
    for strategy in STRATEGIES {
        let rig = Rig::new(strategy);
        let device = rig.device();
        let (a, b) = (queue(device), queue(device));
        let (first, second, done) = (
            device.create_semaphore(0).unwrap(),
            device.create_semaphore(0).unwrap(),
            device.create_semaphore(0).unwrap(),
        );
        let (x, y, z) = (rig.buffer(), rig.buffer(), rig.buffer());
        controls(&a).inject_fault(a.hsa_queue(), 1, aqueduct_soft_hsa::Fault::Stall).unwrap();
        rig.store(&a, &x, 300, &[], &[first.at(1)]);
        rig.store(&a, &z, 400, &[], &[second.at(1)]);
        // The first dispatch ran once its last element is written.
        assert!(eventually(TIMEOUT, || words(&x.to_vec().unwrap())[COUNT as usize - 1] == 300 + COUNT - 1));
        std::thread::sleep(Duration::from_millis(5));
        let drained = first.value() == 1;
        let before = b.stats();
        rig.add(&b, &y, &x, 1, &[first.at(1)], &[done.at(1)]);
        let (packets, barriers, deferred, submissions) = delta(&b, before);
        assert_eq!((deferred, submissions, packets), (0, 1, 1 + barriers), "{strategy:?}");
        assert!(
            barriers <= if drained { 0 } else { 1 },
            "{strategy:?}: {barriers} barriers (drained before the wait: {drained})"
        );
        // Completes while A is still stalled.
        done.wait(1, TIMEOUT).unwrap();
        assert_eq!(second.value(), 0);
        assert_ramp(&y, 301, "consumer of the epoch that ran");
        // Once drained, the same wait is free.
        first.wait(1, TIMEOUT).unwrap();
        let before = b.stats();
        rig.add(&b, &y, &x, 2, &[first.at(1)], &[done.at(2)]);
        assert_eq!(delta(&b, before), (1, 0, 0, 1), "{strategy:?}");
        // The stalled epoch needs a barrier.
        let before = b.stats();
        rig.add(&b, &y, &z, 1, &[second.at(1)], &[done.at(3)]);
        assert_eq!(delta(&b, before), (2, 1, 0, 1), "{strategy:?}");
        release(&a, || second.value() == 1);
        done.wait(3, TIMEOUT).unwrap();
        assert_ramp(&y, 401, "consumer of the stalled epoch");
    }
}
