//! The rig the systems' integration tests drive the stages on: one soft queue with its own
//! directory, semaphore table and kernarg ring, and the queue state built over them.

#![allow(dead_code)] // each test file uses its part

use std::sync::Arc;
use std::time::{Duration, Instant};

use aqueduct_components::directory::{CrossQueueWait, EPOCH_BASE, QueueDirectory, QueueEndpoint};
use aqueduct_components::kernarg_ring::KernargRing;
use aqueduct_components::semaphore_table::SemaphoreTable;
use aqueduct_hsa::ring::AqlRing;
use aqueduct_hsa::sys::hsa_queue_t;
use aqueduct_hsa::{Hsa, PoolKindInfo};
use aqueduct_soft_hsa::SoftConfig;
use aqueduct_systems::strategy::{BarrierValue, CrossQueueStrategy};
use aqueduct_systems::sync::SemaphoreSync;
use aqueduct_systems::{DeviceLink, QueueState, build_queue_state, reclaim};

pub struct Rig {
    pub hsa: Hsa,
    /// The soft queue behind `state`'s ring (for fault injection).
    pub queue: *mut hsa_queue_t,
    pub state: QueueState,
    pub semaphores: Arc<SemaphoreTable>,
    pub kernarg_base: u64,
}

/// A BarrierValue rig with a 64 KiB kernarg ring.
pub fn rig() -> Rig {
    rig_with(CrossQueueWait::BarrierValue)
}

pub fn rig_with(strategy: CrossQueueWait) -> Rig {
    rig_sized(strategy, 1 << 16)
}

/// A rig whose kernarg ring holds `kernarg_bytes`.
pub fn rig_sized(strategy: CrossQueueWait, kernarg_bytes: u64) -> Rig {
    let hsa = aqueduct_soft_hsa::open(SoftConfig::default()).expect("soft runtime");
    let agent = hsa.gpu_agents().expect("agents")[0].agent;
    let kernarg_pool = hsa.host_pool(PoolKindInfo::Kernarg).expect("kernarg pool").pool;
    // SAFETY: no callback, so the null data pointer is never used; the queue outlives the rig's use.
    let queue = unsafe { hsa.queue_create(agent, 64, None, core::ptr::null_mut()) }.expect("queue");
    let endpoint = Arc::new(QueueEndpoint::new(
        0,
        hsa.signal_create(EPOCH_BASE).expect("signal").handle,
        hsa.signal_create(0).expect("signal").handle,
        match strategy {
            CrossQueueWait::BarrierValue => Box::new([]),
            CrossQueueWait::BarrierAnd => (0..16).map(|_| hsa.signal_create(0).expect("signal").handle).collect(),
        },
    ));
    let directory = Arc::new(QueueDirectory::default());
    directory.reserve_index();
    directory.register(endpoint.clone());
    let semaphores = Arc::new(SemaphoreTable::new(16));
    let link = DeviceLink { api: hsa.api(), semaphores: semaphores.clone(), directory, host_writes: None };
    let kernarg_base = hsa.allocate(kernarg_pool, kernarg_bytes as usize).expect("kernarg ring") as u64;
    hsa.allow_access(&[agent], kernarg_base as *const u8).expect("kernargs mapped");
    let kernargs = KernargRing::new(kernarg_base, kernarg_bytes);
    // SAFETY: the queue is never destroyed while the ring is used.
    let ring = unsafe { AqlRing::new(queue, hsa.api()) };
    let (state, _) = build_queue_state(0, ring, kernargs, endpoint, link, 16, strategy);
    Rig { hsa, queue, state, semaphores, kernarg_base }
}

impl Rig {
    /// Drains until `semaphore` has failed or reached a value, and returns its failure message.
    pub fn drained_failure(&mut self, semaphore: u32) -> Option<String> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let queue = &mut self.state;
            let retired = BarrierValue::device_retired(&queue.handles.endpoint);
            reclaim::drain::<BarrierValue>(&mut queue.reclaim(), retired, reclaim::DrainOrder::Causal);
            if let Some(failure) = self.semaphores.failure(semaphore) {
                return self.semaphores.failure_record(failure).map(|record| record.message.clone());
            }
            if self.semaphores.value(semaphore) > 0 {
                return None;
            }
            assert!(Instant::now() < deadline, "the epoch never retired: its reserved packets stalled the queue");
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
