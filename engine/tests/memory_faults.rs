//! GPU memory faults reach the engine the way ROCr delivers them (a system event, not the queue
//! callback): the engine's handler fails every queue of the faulting agent, their semaphores
//! carry the fault, and the process lives on. Per-epoch signals are GPU-only, so queues do not
//! use up KFD's 4096 events.

mod common;

use aqueduct_engine::{EngineError, MemoryKind, WaitStrategy};
use aqueduct_hsa::soft::{self, Fault};
use common::*;

#[test]
fn a_memory_fault_fails_every_queue_of_the_agent_and_names_the_address() {
    let engine = engine(WaitStrategy::BarrierValue);
    let device = engine.device();
    let (faulting, sibling) = (queue(device), queue(device));
    let buffer = device.allocate(MemoryKind::HostVisible, 256).expect("buffer");
    let (done, sibling_done) =
        (device.create_semaphore(0).expect("semaphore"), device.create_semaphore(0).expect("semaphore"));
    fault_next(&faulting, Fault::MemoryFault { address: 0xbad_f000 });
    faulting.fill(buffer.range(0, 128), &1u32.to_le_bytes(), &[], &[done.at(1)]).expect("submitted");
    let error = done.wait(1, TIMEOUT).expect_err("the fill faulted");
    let EngineError::SemaphoreFailed(record) = &error else { panic!("{error:?}") };
    assert!(record.message.contains("GPU memory fault at 0xbadf000"), "{}", record.message);
    // The handler cannot tell which queue faulted: every queue of the agent fails with it. A
    // fill submitted before the sibling's completion thread has heard of the fault runs, so
    // each attempt signals the next value.
    let mut attempt = 0;
    let failure = loop {
        attempt += 1;
        match sibling.fill(buffer.range(128, 128), &2u32.to_le_bytes(), &[], &[sibling_done.at(attempt)]) {
            Err(EngineError::QueueFailed(record)) => break record,
            Ok(()) => {
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
