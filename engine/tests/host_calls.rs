//! Host calls in queue order: they run after earlier work and before later work on their queue,
//! after their waits; an `Err`, a panic or a failed wait fails their signals and nothing else;
//! a blocked call holds back only what its queue orders after it; a dropped queue ends them.

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use aqueduct_engine::{EngineError, SemaphorePoint, WaitStrategy};
use common::{COUNT, KernelRig, TIMEOUT, controls, eventually, queue, release, words};

const STRATEGIES: [WaitStrategy; 2] = [WaitStrategy::BarrierValue, WaitStrategy::BarrierAnd];

/// Submits a host call that counts its runs; returns the count.
fn counting_call(
    queue: &aqueduct_engine::Queue,
    waits: &[SemaphorePoint],
    signals: &[SemaphorePoint],
) -> Arc<AtomicU32> {
    let ran = Arc::new(AtomicU32::new(0));
    let counter = ran.clone();
    let call = move || {
        counter.fetch_add(1, Ordering::SeqCst);
        Ok(())
    };
    queue.host_call(call).waits(waits).signals(signals).submit().unwrap();
    ran
}

#[test]
fn a_host_call_runs_between_the_work_before_and_after_it() {
    for strategy in STRATEGIES {
        let rig = KernelRig::new(strategy);
        let device = rig.device();
        let a = queue(device);
        let (x, y, z) = (rig.buffer(), rig.buffer(), rig.buffer());
        let done = device.create_semaphore(0).unwrap();
        rig.store(&a, &x, 10, &[], &[]);
        // The call reads what the dispatch before it wrote and writes what the one after reads.
        let seen = Arc::new(Mutex::new(Vec::new()));
        {
            let (x, y, seen) = (x.clone(), y.clone(), seen.clone());
            a.host_call(move || {
                let before = words(&x.to_vec()?);
                let doubled: Vec<u8> = before.iter().flat_map(|word| (word * 2).to_le_bytes()).collect();
                y.write(0, &doubled)?;
                *seen.lock().unwrap() = before;
                Ok(())
            })
            .signal(done.at(1))
            .submit()
            .unwrap();
        }
        rig.add(&a, &z, &y, 1, &[], &[done.at(2)]);
        done.wait(2, TIMEOUT).unwrap();
        let expected: Vec<u32> = (0..COUNT).map(|i| 10 + i).collect();
        assert_eq!(*seen.lock().unwrap(), expected, "{strategy:?}: the call ran after the store");
        let after: Vec<u32> = (0..COUNT).map(|i| 2 * (10 + i) + 1).collect();
        assert_eq!(words(&z.to_vec().unwrap()), after, "{strategy:?}: the add ran after the call");
    }
}

#[test]
fn host_calls_on_one_queue_run_in_order_after_their_waits() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let (a, b) = (queue(device), queue(device));
    let (from_b, done) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
    let order = Arc::new(Mutex::new(Vec::new()));
    // The first call waits on B, which is stalled: the second waits behind it.
    controls(&b).inject_fault(b.hsa_queue(), 0, aqueduct_soft_hsa::Fault::Stall).unwrap();
    b.barrier().signal(from_b.at(1)).submit().unwrap();
    for (call, waits) in [(1u32, vec![from_b.at(1)]), (2, vec![])] {
        let order = order.clone();
        let record = move || {
            order.lock().unwrap().push(call);
            Ok(())
        };
        a.host_call(record).waits(&waits).signal(done.at(u64::from(call))).submit().unwrap();
    }
    std::thread::sleep(Duration::from_millis(20));
    assert!(order.lock().unwrap().is_empty(), "nothing runs before its wait");
    release(&b, || from_b.value() == 1);
    done.wait(2, TIMEOUT).unwrap();
    assert_eq!(*order.lock().unwrap(), [1, 2]);
}

#[test]
fn an_error_a_panic_or_a_failed_wait_fails_only_the_calls_signals() {
    for strategy in STRATEGIES {
        let rig = KernelRig::new(strategy);
        let device = rig.device();
        let (a, b) = (queue(device), queue(device));
        let signal = device.create_semaphore(0).unwrap();
        a.host_call(|| Err("the model file is missing".into())).signal(signal.at(1)).submit().unwrap();
        let failure = signal.wait(1, TIMEOUT).unwrap_err();
        assert!(failure.to_string().contains("host call failed: the model file is missing"), "{failure}");
        // Work that depends on it fails as on a failed dependency; other work runs.
        let (out, downstream, later) =
            (rig.buffer(), device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
        let _ = b.barrier().wait(signal.at(1)).signal(downstream.at(1)).submit();
        assert!(matches!(downstream.wait(1, TIMEOUT), Err(EngineError::SemaphoreFailed(_))));
        rig.store(&a, &out, 3, &[], &[later.at(1)]);
        later.wait(1, TIMEOUT).unwrap();
        assert_eq!(words(&out.to_vec().unwrap())[0], 3, "{strategy:?}: the queue goes on");

        let panicked = device.create_semaphore(0).unwrap();
        a.host_call(|| panic!("deliberately")).signal(panicked.at(1)).submit().unwrap();
        assert!(panicked.wait(1, TIMEOUT).unwrap_err().to_string().contains("host call panicked"));

        let (failed, skipped) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
        let ran = counting_call(&a, &[failed.at(1)], &[skipped.at(1)]);
        failed.fail("the input never arrived");
        let error = skipped.wait(1, TIMEOUT).unwrap_err();
        assert!(error.to_string().contains("the input never arrived"), "{error}");
        assert_eq!(ran.load(Ordering::SeqCst), 0, "{strategy:?}: a call whose wait failed does not run");
    }
}

#[test]
fn a_blocked_host_call_holds_back_only_its_own_queues_later_work() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let (a, b) = (queue(device), queue(device));
    let (x, y, z) = (rig.buffer(), rig.buffer(), rig.buffer());
    let (before, after, other) =
        (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
    let (unblock, blocked) = mpsc::channel::<()>();
    rig.store(&a, &x, 1, &[], &[before.at(1)]);
    a.host_call(move || Ok(blocked.recv()?)).submit().unwrap();
    rig.store(&a, &y, 2, &[], &[after.at(1)]);
    rig.store(&b, &z, 3, &[], &[other.at(1)]);
    before.wait(1, TIMEOUT).unwrap();
    other.wait(1, TIMEOUT).unwrap();
    std::thread::sleep(Duration::from_millis(10));
    assert_eq!(after.value(), 0, "later work on the call's queue waits for it");
    unblock.send(()).unwrap();
    after.wait(1, TIMEOUT).unwrap();
    assert_eq!(words(&y.to_vec().unwrap())[0], 2);
}

#[test]
fn a_host_call_waiting_on_a_dropped_semaphore_fails_and_its_queue_goes() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let a = queue(device);
    let (never, signal) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
    let ran = counting_call(&a, &[never.at(1)], &[signal.at(1)]);
    // The queue outlives its handle while the call waits; once nothing can raise the call's
    // semaphore, the call fails, and the queue, with nothing left to do, goes.
    drop(a);
    assert_eq!(device.live_objects().0, 1, "the call still waits");
    drop(never);
    let Err(EngineError::SemaphoreFailed(record)) = signal.wait(1, TIMEOUT) else { panic!("the call fails") };
    assert!(record.message.contains("was dropped at value 0"), "{}", record.message);
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert!(eventually(TIMEOUT, || device.live_objects().0 == 0), "the queue is gone");
}

#[test]
fn bad_host_call_input_is_refused_and_changes_nothing() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let a = queue(device);
    let signal = device.create_semaphore(4).unwrap();
    let before = a.stats();
    let result = a.host_call(|| Ok(())).signal(signal.at(4)).submit();
    assert!(matches!(result, Err(EngineError::SemaphoreNotIncreasing { .. })), "{result:?}");
    let other = common::engine(WaitStrategy::BarrierValue);
    let foreign = other.device().create_semaphore(0).unwrap();
    assert!(matches!(a.host_call(|| Ok(())).wait(foreign.at(1)).submit(), Err(EngineError::ForeignObject { .. })));
    // From inside a batch on the same queue: refused, not a wait for its own lock.
    let inside = a.batch(|_| Ok::<_, EngineError>(a.host_call(|| Ok(())).submit()));
    assert!(matches!(inside, Ok(Err(EngineError::InvalidArgument { .. }))), "{inside:?}");
    assert_eq!(a.stats(), before);
    assert_eq!(signal.value(), 4);
}
