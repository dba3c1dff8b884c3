//! Failure: an injected (or real) kernel fault fails its queue for good, every semaphore its
//! in-flight and later work would signal, and work elsewhere that waits on them; host waiters get
//! the error instead of hanging. Dropping queues and engines with work in flight returns promptly
//! and fails what was abandoned; live objects go away with their handles.

mod common;

use std::time::{Duration, Instant};

use aqueduct_engine::{
    Buffer, Device, Dispatch, Engine, EngineError, MemoryKind, Queue, RawDispatch, Semaphore, WaitStrategy, wait_all,
    wait_any,
};
use aqueduct_soft_hsa::Fault;
use common::*;

const COUNT: u32 = 128;
const STRATEGIES: [WaitStrategy; 2] = [WaitStrategy::BarrierValue, WaitStrategy::BarrierAnd];
/// HSA_STATUS_ERROR_EXCEPTION.
const FAULT_STATUS: u32 = 0x1016;
/// What "promptly" means for a failure or a teardown to reach a waiter: well short of a hang
/// ([`TIMEOUT`]); generous enough for valgrind. Latency is the fault matrix's to measure.
const PROMPTLY: Duration = Duration::from_secs(30);

struct Rig {
    engine: Engine,
    kernels: TestKernels,
}

impl Rig {
    fn new(strategy: WaitStrategy) -> Self {
        Self::with(engine(strategy))
    }

    fn with(engine: Engine) -> Self {
        let kernels = test_kernels(&engine);
        Self { engine, kernels }
    }

    fn device(&self) -> &Device {
        self.engine.device()
    }

    fn semaphore(&self) -> Semaphore {
        self.device().create_semaphore(0).unwrap()
    }

    fn buffer(&self, fill: u8) -> Buffer {
        host_buffer(self.device(), &vec![fill; COUNT as usize * 4])
    }

    fn store(
        &self,
        queue: &Queue,
        out: &Buffer,
        value: u32,
        waits: &[aqueduct_engine::SemaphorePoint],
        signals: &[aqueduct_engine::SemaphorePoint],
    ) -> Result<aqueduct_engine::Submitted, EngineError> {
        let bindings = [out.whole()];
        queue
            .dispatch(
                &self.kernels.store_value,
                &Dispatch::grid([COUNT, 1, 1]).bindings(&bindings).constants(&[value, COUNT]),
            )
            .waits(waits)
            .signals(signals)
            .submit()
    }
}

/// The failure a semaphore reports through a host wait, which must come promptly.
fn wait_failure(semaphore: &Semaphore, value: u64) -> std::sync::Arc<aqueduct_engine::FailureRecord> {
    let start = Instant::now();
    let result = semaphore.wait(value, TIMEOUT);
    assert!(start.elapsed() < PROMPTLY, "the failure took {:?} to reach the waiter", start.elapsed());
    match result {
        Err(EngineError::SemaphoreFailed(record)) => {
            assert_eq!(semaphore.failure().as_deref(), Some(&*record));
            assert!(matches!(semaphore.query(), Err(EngineError::SemaphoreFailed(_))));
            record
        }
        other => panic!("expected the semaphore to fail, got {other:?}"),
    }
}

fn untouched(buffer: &Buffer, fill: u8) -> bool {
    buffer.to_vec().unwrap().iter().all(|&byte| byte == fill)
}

#[test]
fn a_kernel_fault_fails_its_queue_and_whatever_waits_on_it() {
    for strategy in STRATEGIES {
        let rig = Rig::new(strategy);
        let device = rig.device();
        let (a, b) = (queue(device), queue(device));
        let (s1, s2, s3) = (rig.semaphore(), rig.semaphore(), rig.semaphore());
        let (t1, t2) = (rig.semaphore(), rig.semaphore());
        let (x1, x2, x3, y1, y2) =
            (rig.buffer(0xAA), rig.buffer(0xAA), rig.buffer(0xAA), rig.buffer(0xAA), rig.buffer(0xAA));

        // A: a stalled first submission, then the faulting one, then one more in flight.
        stall_next(&a);
        rig.store(&a, &x1, 1, &[], &[s1.at(1)]).unwrap();
        fault_next(&a, Fault::KernelFault { status: FAULT_STATUS });
        rig.store(&a, &x2, 2, &[], &[s2.at(1)]).unwrap();
        rig.store(&a, &x3, 3, &[], &[s3.at(1)]).unwrap();
        // B: a device-side wait on A's last submission, then independent work.
        rig.store(&b, &y1, 4, &[s3.at(1)], &[t1.at(1)]).unwrap();
        assert_eq!(b.stats().device_waits, 1, "{strategy:?}");
        rig.store(&b, &y2, 5, &[], &[t2.at(1)]).unwrap();

        std::thread::scope(|scope| {
            // Host waiters blocked before the fault happens.
            let waiters: Vec<_> =
                [&s3, &t1].into_iter().map(|semaphore| scope.spawn(move || wait_failure(semaphore, 1))).collect();
            std::thread::sleep(Duration::from_millis(20));
            release(&a, || s1.value() == 1 || s1.failure().is_some());
            for waiter in waiters {
                let record = waiter.join().unwrap();
                assert_eq!(record.status, Some(FAULT_STATUS), "{strategy:?}: {}", record.message);
            }
        });

        // The work before the fault completed; the faulting one and everything after failed.
        s1.wait(1, TIMEOUT).unwrap();
        assert_eq!(words(&x1.to_vec().unwrap())[..3], [1, 2, 3]);
        let record = wait_failure(&s2, 1);
        assert!(record.message.contains("injected kernel fault"), "{}", record.message);
        assert_eq!(record.status, Some(FAULT_STATUS));
        assert_eq!(wait_failure(&s3, 1).status, Some(FAULT_STATUS));
        assert!(untouched(&x2, 0xAA), "{strategy:?}: the faulting dispatch did not run");
        assert!(untouched(&x3, 0xAA), "{strategy:?}: nothing after the fault ran on A");
        // B's dependent submission failed with A's error; its independent one completed.
        assert_eq!(wait_failure(&t1, 1).status, Some(FAULT_STATUS));
        t2.wait(1, TIMEOUT).unwrap();
        assert_eq!(words(&y2.to_vec().unwrap())[..2], [5, 6]);

        // The failure is sticky: later submissions on A are refused and fail their semaphores.
        let (late, late_barrier) = (rig.semaphore(), rig.semaphore());
        let before = a.stats();
        match rig.store(&a, &x3, 9, &[], &[late.at(1)]) {
            Err(EngineError::QueueFailed(record)) => assert_eq!(record.status, Some(FAULT_STATUS)),
            other => panic!("{strategy:?}: expected QueueFailed, got {other:?}"),
        }
        assert!(matches!(a.barrier().signal(late_barrier.at(1)).submit(), Err(EngineError::QueueFailed(_))));
        assert_eq!(wait_failure(&late, 1).status, Some(FAULT_STATUS));
        wait_failure(&late_barrier, 1);
        assert_eq!(a.stats().packets, before.packets, "{strategy:?}: nothing reaches a failed ring");
        assert!(untouched(&x3, 0xAA));

        // Work on B that waits on a failed semaphore now is refused with the dependency's error.
        let refused = rig.semaphore();
        match rig.store(&b, &y1, 6, &[t2.at(1), s2.at(1)], &[refused.at(1)]) {
            Err(EngineError::DependencyFailed(record)) => assert_eq!(record.status, Some(FAULT_STATUS)),
            other => panic!("{strategy:?}: expected DependencyFailed, got {other:?}"),
        }
        wait_failure(&refused, 1);
        // B itself stays healthy.
        let healthy = rig.semaphore();
        rig.store(&b, &y2, 50, &[t2.at(1)], &[healthy.at(1)]).unwrap();
        healthy.wait(1, TIMEOUT).unwrap();
        assert_eq!(words(&y2.to_vec().unwrap())[..2], [50, 51]);
    }
}

#[test]
fn a_kernel_the_soft_runtime_cannot_run_faults_the_queue_with_a_reason() {
    let rig = Rig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let a = queue(device);
    // No host build, and an instruction the interpreter does not execute (`s_sethalt`, for a debugger).
    let kernel = rig.kernels.executable.kernel("no_way_to_run").unwrap();
    let (first, second) = (rig.semaphore(), rig.semaphore());
    let kernargs = vec![0u8; kernel.kernarg_size() as usize];
    a.dispatch_raw(&kernel, &RawDispatch { grid: [1, 1, 1], workgroup: None, kernargs: &kernargs })
        .signal(first.at(1))
        .submit()
        .unwrap();
    a.barrier().signal(second.at(1)).submit().unwrap();
    let record = wait_failure(&first, 1);
    // Which reason depends on `AQUEDUCT_SOFT_EXEC`: `host` has no CPU implementation to run,
    // `auto` (the default) and `isa` reach the instruction.
    let reason = ["no CPU implementation", "`s_sethalt`"];
    assert!(record.message.contains("no_way_to_run"), "{}", record.message);
    assert!(reason.iter().any(|part| record.message.contains(part)), "{}", record.message);
    assert!(record.status.is_some());
    wait_failure(&second, 1);
    assert!(matches!(a.barrier().submit(), Err(EngineError::QueueFailed(_))));
}

#[test]
fn a_host_failed_semaphore_fails_device_side_and_parked_waiters() {
    for strategy in STRATEGIES {
        let rig = Rig::new(strategy);
        let device = rig.device();
        let (a, b, c) = (queue(device), queue(device), queue(device));
        let (s, host) = (rig.semaphore(), rig.semaphore());
        let (t, u, v) = (rig.semaphore(), rig.semaphore(), rig.semaphore());
        let (x, y) = (rig.buffer(0), rig.buffer(0));
        stall_next(&a);
        rig.store(&a, &x, 1, &[], &[s.at(1)]).unwrap();
        rig.store(&b, &y, 2, &[s.at(1)], &[t.at(1)]).unwrap(); // a device-side barrier on A
        rig.store(&c, &y, 3, &[host.at(1)], &[u.at(1)]).unwrap(); // parked on the host semaphore
        rig.store(&c, &y, 4, &[], &[v.at(1)]).unwrap(); // parked behind it
        assert_eq!((b.stats().device_waits, c.stats().deferred), (1, 2));
        s.fail("producer cancelled");
        host.fail("host cancelled");
        assert_eq!(wait_failure(&u, 1).message, "host cancelled");
        // Queue order holds: C's second submission runs after the failed one is dropped.
        v.wait(1, TIMEOUT).unwrap();
        // B's barrier still waits for A's epoch; once A runs, B's submission fails with s.
        release(&a, || a.stats().epochs_drained == 1);
        assert_eq!(wait_failure(&t, 1).message, "producer cancelled", "{strategy:?}");
        // A itself ran fine, but its signal cannot revive a failed semaphore.
        assert_eq!(words(&x.to_vec().unwrap())[0], 1);
        assert!(s.failure().is_some());
    }
}

#[test]
fn cancelling_a_queue_with_a_stalled_packet_returns_promptly_and_fails_its_work() {
    let rig = Rig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let a = queue(device);
    let (s, t) = (rig.semaphore(), rig.semaphore());
    let x = rig.buffer(0);
    stall_next(&a);
    rig.store(&a, &x, 1, &[], &[s.at(1)]).unwrap();
    rig.store(&a, &x, 2, &[], &[s.at(2), t.at(1)]).unwrap();
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| wait_failure(&t, 1));
        std::thread::sleep(Duration::from_millis(20));
        let start = Instant::now();
        a.cancel();
        assert!(start.elapsed() < PROMPTLY, "queue cancel took {:?}", start.elapsed());
        let record = waiter.join().unwrap();
        assert_eq!(record.message, "queue 0 was cancelled");
    });
    wait_failure(&s, 1);
}

#[test]
fn cancelling_a_queue_with_parked_work_fails_its_semaphores() {
    let rig = Rig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let a = queue(device);
    let (never, t) = (rig.semaphore(), rig.semaphore());
    let x = rig.buffer(0);
    rig.store(&a, &x, 1, &[never.at(1)], &[t.at(1)]).unwrap();
    rig.store(&a, &x, 2, &[], &[t.at(2)]).unwrap();
    assert_eq!(a.stats().deferred, 2);
    let start = Instant::now();
    a.cancel();
    assert!(start.elapsed() < PROMPTLY);
    assert!(wait_failure(&t, 1).message.ends_with("was cancelled"));
    assert!(untouched(&x, 0));
    // The wait's semaphore is still usable.
    never.signal(1).unwrap();
}

#[test]
fn cancelling_queues_on_either_side_of_a_device_wait() {
    for strategy in STRATEGIES {
        // The consumer goes first: its barrier is abandoned mid-wait.
        let rig = Rig::new(strategy);
        let device = rig.device();
        let (a, b) = (queue(device), queue(device));
        let (s, t) = (rig.semaphore(), rig.semaphore());
        let (x, y) = (rig.buffer(0), rig.buffer(0));
        stall_next(&a);
        rig.store(&a, &x, 1, &[], &[s.at(1)]).unwrap();
        rig.store(&b, &y, 2, &[s.at(1)], &[t.at(1)]).unwrap();
        let start = Instant::now();
        b.cancel();
        assert!(start.elapsed() < PROMPTLY, "{strategy:?}: consumer cancel took {:?}", start.elapsed());
        wait_failure(&t, 1);
        release(&a, || s.value() == 1);
        assert_eq!(words(&x.to_vec().unwrap())[0], 1);
        assert!(untouched(&y, 0));

        // The producer goes first: its epochs are failed and force-retired, so the consumer's
        // barrier passes and the consumer's submission fails with the producer's error.
        let (c, d) = (queue(device), queue(device));
        let (p, q, r) = (rig.semaphore(), rig.semaphore(), rig.semaphore());
        stall_next(&c);
        rig.store(&c, &x, 10, &[], &[p.at(1)]).unwrap();
        rig.store(&d, &y, 20, &[p.at(1)], &[q.at(1)]).unwrap();
        rig.store(&d, &y, 30, &[], &[r.at(1)]).unwrap();
        let start = Instant::now();
        c.cancel();
        assert!(start.elapsed() < PROMPTLY, "{strategy:?}: producer cancel took {:?}", start.elapsed());
        assert!(wait_failure(&p, 1).message.ends_with("was cancelled"));
        assert!(wait_failure(&q, 1).message.ends_with("was cancelled"), "{strategy:?}");
        // D is healthy: the submission behind the failed one completes.
        r.wait(1, TIMEOUT).unwrap();
        assert_eq!(words(&y.to_vec().unwrap())[0], 30);
    }
}

#[test]
fn cancelling_queues_and_dropping_the_engine_with_work_in_flight() {
    let engine = engine(WaitStrategy::BarrierValue);
    let device = engine.device().clone();
    let kernels = test_kernels(&engine);
    let queues: Vec<_> = (0..3).map(|_| queue(&device)).collect();
    let semaphores: Vec<_> = (0..3).map(|_| device.create_semaphore(0).unwrap()).collect();
    let gate = device.create_semaphore(0).unwrap();
    let buffer = device.allocate(MemoryKind::HostVisible, 4096).unwrap();
    // Queue 0 stalls, queue 1 waits on it from the device, queue 2 waits on the host.
    stall_next(&queues[0]);
    let bindings = [buffer.range(0, 256)];
    let dispatch = Dispatch::grid([64, 1, 1]).bindings(&bindings).constants(&[1, 64]);
    queues[0].dispatch(&kernels.store_value, &dispatch).signal(semaphores[0].at(1)).submit().unwrap();
    queues[1]
        .dispatch(&kernels.store_value, &dispatch)
        .wait(semaphores[0].at(1))
        .signal(semaphores[1].at(1))
        .submit()
        .unwrap();
    queues[2].dispatch(&kernels.store_value, &dispatch).wait(gate.at(1)).signal(semaphores[2].at(1)).submit().unwrap();
    let (live_queues, _, live_buffers) = device.live_objects();
    assert_eq!((live_queues, live_buffers), (3, 1));
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| {
            let start = Instant::now();
            let points: Vec<_> = semaphores.iter().map(|semaphore| semaphore.at(1)).collect();
            let any = wait_any(&points, TIMEOUT);
            let all = wait_all(&points, TIMEOUT);
            (any, all, start.elapsed())
        });
        std::thread::sleep(Duration::from_millis(20));
        let start = Instant::now();
        queues.into_iter().for_each(Queue::cancel);
        drop(kernels);
        drop(engine);
        assert!(start.elapsed() < PROMPTLY, "teardown took {:?}", start.elapsed());
        let (any, all, waited) = waiter.join().unwrap();
        assert!(matches!(any, Err(EngineError::SemaphoreFailed(_))), "{any:?}");
        assert!(matches!(all, Err(EngineError::SemaphoreFailed(_))), "{all:?}");
        assert!(waited < PROMPTLY);
    });
    for semaphore in &semaphores {
        wait_failure(semaphore, 1);
    }
    assert_eq!(device.live_objects().0, 0, "every queue is gone");
    drop(buffer);
    assert_eq!(device.live_objects().2, 0);
}

#[test]
fn live_objects_follow_their_handles() {
    let rig = Rig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    assert_eq!(device.live_objects(), (0, 0, 0));
    let queues: Vec<_> = (0..3).map(|_| queue(device)).collect();
    let mut semaphores: Vec<_> = (0..5).map(|_| rig.semaphore()).collect();
    let mut buffers: Vec<_> = (0..4).map(|_| rig.buffer(0)).collect();
    let local = device.allocate(MemoryKind::DeviceLocal, 1 << 20).unwrap();
    assert_eq!(device.live_objects(), (3, 5, 5));
    drop(local);
    drop(semaphores.pop());
    let clone = buffers[0].clone();
    drop(buffers.remove(0));
    assert_eq!(device.live_objects(), (3, 4, 4), "a clone keeps its buffer");
    drop(clone);
    assert_eq!(device.live_objects(), (3, 4, 3));

    // What a stalled submission uses is not freed after the handles are gone, until it settles.
    stall_next(&queues[0]);
    let (gate, done) = (semaphores.pop().unwrap(), semaphores.pop().unwrap());
    rig.store(&queues[0], &buffers.pop().unwrap(), 1, &[gate.at(0)], &[done.at(1)]).unwrap();
    drop((gate, done));
    // Two semaphores and two buffers still have handles; the rest is held by the submission.
    assert_eq!(device.live_objects(), (3, 4, 3), "held until the stalled submission settles");
    let keep_queue = queues[0].clone();
    drop(queues);
    assert_eq!(device.live_objects(), (1, 4, 3), "a cloned queue handle keeps the queue");
    keep_queue.cancel();
    assert_eq!(device.live_objects(), (0, 2, 2), "cancelled work let go of what it held");
    drop((semaphores, buffers));
    assert_eq!(device.live_objects(), (0, 0, 0));
}

#[test]
fn a_fault_also_fails_parked_work_and_a_submitter_blocked_on_a_full_ring() {
    let rig = Rig::with(engine_with(aqueduct_engine::EngineConfig {
        queue_packets: 4,
        epochs_in_flight: 4,
        kernarg_ring_bytes: 4096,
        ..aqueduct_engine::EngineConfig::default()
    }));
    let device = rig.device();
    let a = queue(device);
    let x = host_buffer(device, &[0; 512]);
    let semaphores: Vec<_> = (0..12).map(|_| device.create_semaphore(0).unwrap()).collect();
    // Packet 0 is slow, packet 1 faults; the ring fills behind them, so a submitter blocks.
    fault_next(&a, Fault::Slow(Duration::from_millis(100)));
    rig.store(&a, &x, 1, &[], &[semaphores[0].at(1)]).unwrap();
    fault_next(&a, Fault::KernelFault { status: FAULT_STATUS });
    rig.store(&a, &x, 2, &[], &[semaphores[1].at(1)]).unwrap();
    let mut outcomes = Vec::new();
    let start = Instant::now();
    for semaphore in &semaphores[2..10] {
        outcomes.push(rig.store(&a, &x, 3, &[], &[semaphore.at(1)]));
    }
    assert!(start.elapsed() < PROMPTLY, "blocked submitters were released by the fault");
    // Some went in before the ring filled; the submitter blocked on the full ring got the
    // queue's error, as did every one after it.
    let first_refused = outcomes.iter().position(Result::is_err).expect("the ring cannot hold eight more");
    assert!(first_refused >= 1, "at least one fit in the ring");
    for outcome in &outcomes[first_refused..] {
        assert!(
            matches!(outcome, Err(EngineError::QueueFailed(record)) if record.status == Some(FAULT_STATUS)),
            "{outcome:?}"
        );
    }
    // Parked work is failed too (submitted after the failure, so refused outright).
    let gate = device.create_semaphore(0).unwrap();
    assert!(matches!(rig.store(&a, &x, 4, &[gate.at(1)], &[semaphores[10].at(1)]), Err(EngineError::QueueFailed(_))));
    semaphores[0].wait(1, TIMEOUT).unwrap();
    for semaphore in &semaphores[1..11] {
        assert_eq!(wait_failure(semaphore, 1).status, Some(FAULT_STATUS));
    }
    assert_eq!(words(&x.to_vec().unwrap())[..2], [1, 2], "only the slow first dispatch ran");
}

#[test]
fn a_fault_fails_submissions_parked_on_the_faulting_queue() {
    let rig = Rig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let a = queue(device);
    let (s, parked, behind, gate) = (rig.semaphore(), rig.semaphore(), rig.semaphore(), rig.semaphore());
    let x = rig.buffer(0);
    stall_next(&a);
    rig.store(&a, &x, 1, &[], &[s.at(1)]).unwrap();
    fault_next(&a, Fault::KernelFault { status: FAULT_STATUS });
    rig.store(&a, &x, 2, &[], &[s.at(2)]).unwrap();
    rig.store(&a, &x, 3, &[gate.at(1)], &[parked.at(1)]).unwrap();
    rig.store(&a, &x, 4, &[], &[behind.at(1)]).unwrap();
    assert_eq!(a.stats().deferred, 2);
    release(&a, || s.value() == 1 || s.failure().is_some());
    assert_eq!(wait_failure(&parked, 1).status, Some(FAULT_STATUS));
    assert_eq!(wait_failure(&behind, 1).status, Some(FAULT_STATUS));
    // Signalling the gate afterwards changes nothing: the parked work is gone.
    gate.signal(1).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(words(&x.to_vec().unwrap())[..2], [1, 2], "only the first dispatch ran");
}

#[test]
fn a_failure_crosses_a_chain_of_parked_queues_promptly() {
    // Each queue parks on the previous queue's parked submission. Success and failure must both
    // travel the chain on wake-ups: the tests' completion threads never wake on their own
    // (`COMPLETION_FALLBACK`), so a hop that misses one hangs the chain.
    let rig = Rig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let queues: Vec<_> = (0..8).map(|_| queue(device)).collect();
    for fail in [false, true] {
        let host = rig.semaphore();
        let links: Vec<_> = (0..queues.len()).map(|_| rig.semaphore()).collect();
        queues[0].barrier().wait(host.at(1)).signal(links[0].at(1)).submit().unwrap();
        for index in 1..queues.len() {
            queues[index].barrier().wait(links[index - 1].at(1)).signal(links[index].at(1)).submit().unwrap();
        }
        assert!(queues.iter().all(|queue| queue.stats().deferred >= 1));
        // Let every completion thread go idle first.
        std::thread::sleep(Duration::from_millis(250));
        let last = links.last().unwrap();
        if fail {
            host.fail("cancelled at the head of the chain");
            assert_eq!(wait_failure(last, 1).message, "cancelled at the head of the chain");
        } else {
            host.signal(1).unwrap();
            last.wait(1, TIMEOUT).unwrap();
        }
    }
}
