//! GPU memory faults reach the engine the way ROCr delivers them (a system event, not the queue
//! callback): the engine's handler fails every queue of the faulting agent, their semaphores
//! carry the fault, and the process lives on. Per-epoch signals are GPU-only, so queues do not
//! use up KFD's 4096 events.

mod common;

use std::sync::Mutex;

use aqueduct_engine::{EngineError, MemoryKind, WaitStrategy};
use aqueduct_soft_hsa::{self as soft, Fault};
use common::*;

/// A memory fault fails every queue of the agent in the process, the other tests' too (the soft
/// runtime is process-wide, as ROCr is): the tests of this file take turns.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poison| poison.into_inner())
}

#[test]
fn a_memory_fault_fails_every_queue_of_the_agent_and_names_the_address() {
    let _serial = serial();
    let engine = engine(WaitStrategy::BarrierValue);
    let device = engine.device();
    let (faulting, sibling) = (queue(device), queue(device));
    let buffer = device.allocate(MemoryKind::HostVisible, 256).expect("buffer");
    let (done, sibling_done) =
        (device.create_semaphore(0).expect("semaphore"), device.create_semaphore(0).expect("semaphore"));
    fault_next(&faulting, Fault::MemoryFault { address: 0xbad_f000 });
    faulting.fill(buffer.range(0, 128), &1u32.to_le_bytes()).signal(done.at(1)).submit().expect("submitted");
    let error = done.wait(1, TIMEOUT).expect_err("the fill faulted");
    let EngineError::SemaphoreFailed(record) = &error else { panic!("{error:?}") };
    assert!(record.message.contains("GPU memory fault at 0xbadf000"), "{}", record.message);
    // The handler cannot tell which queue faulted: every queue of the agent fails with it. A
    // fill submitted before the sibling's completion thread has heard of the fault runs, so
    // each attempt signals the next value.
    let mut attempt = 0;
    let failure = loop {
        attempt += 1;
        match sibling.fill(buffer.range(128, 128), &2u32.to_le_bytes()).signal(sibling_done.at(attempt)).submit() {
            Err(EngineError::QueueFailed(record)) => break record,
            Ok(_) => {
                if let Err(EngineError::SemaphoreFailed(record)) = sibling_done.wait(attempt, TIMEOUT) {
                    break record;
                }
            }
            Err(other) => panic!("{other:?}"),
        }
    };
    assert!(failure.message.contains("GPU memory fault"), "{}", failure.message);
}

#[test]
fn queues_use_gpu_only_signals_for_their_epochs() {
    let _serial = serial();
    let engine = engine(WaitStrategy::BarrierAnd);
    let device = engine.device();
    let (before, overflowed) = soft::interrupt_events();
    // Each BarrierAnd queue has 2048 per-epoch signals; as interrupt signals, two queues would
    // pass KFD's 4096 events. Other tests may create interrupt signals concurrently, so the
    // bound is loose, but far below one queue's epochs.
    let queues: Vec<_> = (0..3).map(|_| queue(device)).collect();
    let (after, overflowed_after) = soft::interrupt_events();
    assert!(after.saturating_sub(before) < 64, "{before} -> {after} events for 3 queues");
    assert_eq!(overflowed_after, overflowed, "no signal went without an event");
    drop(queues);
}

/// A queue failed by another queue's memory fault keeps running its packets (only the faulting
/// hardware queue stops), so what its in-flight work names must stay allocated until its HSA
/// queue is destroyed: freeing it at the failure let a late fill write into freed memory (heap
/// corruption, seen when this file's tests overlapped).
#[test]
fn a_failed_queue_keeps_what_its_running_packets_name_until_it_is_destroyed() {
    let _serial = serial();
    let engine = engine(WaitStrategy::BarrierValue);
    let device = engine.device();
    let (faulting, running) = (queue(device), queue(device));
    let victim = device.allocate(MemoryKind::HostVisible, 4096).expect("buffer");
    let witness = device.allocate(MemoryKind::HostVisible, 64).expect("buffer");
    let other = device.allocate(MemoryKind::HostVisible, 64).expect("buffer");
    let done = device.create_semaphore(0).expect("semaphore");
    // The running queue's fill of `victim` stalls on its processor; a fill of `witness` follows.
    stall_next(&running);
    running.fill(victim.whole(), &[0xab]).signal(done.at(1)).submit().expect("submitted");
    running.fill(witness.whole(), &[0xcd]).signal(done.at(2)).submit().expect("submitted");
    fault_next(&faulting, Fault::MemoryFault { address: 0xbad_f000 });
    faulting.fill(other.whole(), &[1]).submit().expect("submitted");
    let error = done.wait(2, TIMEOUT).expect_err("the fault fails the running queue's work");
    assert!(matches!(error, EngineError::SemaphoreFailed(_)), "{error:?}");

    let (_, _, allocations) = device.live_objects();
    drop(victim);
    assert_eq!(device.live_objects().2, allocations, "the stalled fill still names the victim's memory");
    // The failed queue's processor runs on: the fill writes the victim (still allocated), then
    // the witness.
    release(&running, || witness.to_vec().unwrap()[0] == 0xcd);
    // Every queue's rows enqueued before the drop must settle: the faulting queue's (destroyed
    // first), then the running queue's, which settle only once its HSA queue is destroyed.
    drop(faulting);
    assert_eq!(device.live_objects().2, allocations, "kept until the running queue is destroyed");
    drop(running);
    assert!(
        eventually(TIMEOUT, || device.live_objects().2 == allocations - 1),
        "freed once no packet can run: {:?}",
        device.live_objects()
    );
}
