//! Queues wrapped by a tool (ROCr's `InterceptQueue`, as rocprofiler installs) hand out a USER
//! doorbell signal, whose `hardware_doorbell_ptr` union member is its value, not a pointer. The
//! engine must ring those through `hsa_signal_store_screlease`; storing through the "pointer"
//! would write to a wild address. Its own process: the soft runtime reads this at init.

mod common;

use aqueduct_abi::{AmdSignal, SignalKind};
use aqueduct_engine::{EngineConfig, MemoryKind, WaitStrategy};
use aqueduct_soft_hsa::SoftConfig;
use common::*;

#[test]
fn intercepted_queues_are_rung_through_the_signal() {
    let engine = engine_with(EngineConfig {
        wait_strategy: WaitStrategy::BarrierValue,
        soft: SoftConfig { intercepted_doorbells: true, ..SoftConfig::default() },
        ..EngineConfig::default()
    });
    let device = engine.device();
    let (a, b) = (queue(device), queue(device));
    for queue in [&a, &b] {
        // SAFETY: the queue is live while its handle is, and the provider's queues are
        // `amd_queue_t`s whose doorbell signal is an `amd_signal_t`.
        let kind = unsafe { (*((*queue.hsa_queue()).doorbell_signal as *const AmdSignal)).kind };
        assert_eq!(kind, SignalKind::USER, "the runtime started with intercepted doorbells");
    }
    let buffer = device.allocate(MemoryKind::HostVisible, 4096).expect("buffer");
    let done = device.create_semaphore(0).expect("semaphore");
    // Rounds alternate queues; each waits on the previous round from the device, and the copy
    // (after the fill by queue order) hands the chain on.
    for round in 0..50u64 {
        let queue = if round % 2 == 0 { &a } else { &b };
        queue.fill(buffer.range(0, 2048), &(round as u32).to_le_bytes()).wait(done.at(round)).submit().expect("fill");
        queue.copy(buffer.range(0, 2048), buffer.range(2048, 2048)).signal(done.at(round + 1)).submit().expect("copy");
    }
    done.wait(50, TIMEOUT).expect("every submission ran");
    let host = buffer.to_vec().expect("read back");
    assert!(words(&host[2048..]).iter().all(|word| *word == 49), "the last round's copy landed");
}
