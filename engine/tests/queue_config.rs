//! Queue priorities and CU masks (`QueueConfig`), on the soft runtime: a high-priority queue's
//! dispatch overtakes a low-priority one that started first, a CU mask still runs every
//! workgroup, and bad settings are refused with nothing made.

mod common;

use aqueduct_engine::{EngineError, MemoryKind, QueueConfig, QueuePriority, Semaphore, WaitStrategy, wait_any};
use common::*;

/// Words each contending dispatch stores: enough workgroups that the two overlap for a while.
const WORDS: u32 = 1 << 22;

#[test]
fn a_high_priority_queue_finishes_first_under_contention() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let low = device.create_queue_with(QueueConfig::new().priority(QueuePriority::Low)).unwrap();
    let high = device.create_queue_with(QueueConfig::new().priority(QueuePriority::High)).unwrap();
    assert_eq!((low.priority(), high.priority()), (QueuePriority::Low, QueuePriority::High));
    let bytes = u64::from(WORDS) * 4;
    let (low_out, high_out) = (
        device.allocate(MemoryKind::HostVisible, bytes).unwrap(),
        device.allocate(MemoryKind::HostVisible, bytes).unwrap(),
    );
    let store = |queue: &aqueduct_engine::Queue, out: &aqueduct_engine::Buffer, value: u32, done: &Semaphore| {
        let (bindings, constants) = ([out.whole()], [value, WORDS]);
        let dispatch = aqueduct_engine::Dispatch::grid([WORDS, 1, 1])
            .workgroup([64, 1, 1])
            .bindings(&bindings)
            .constants(&constants);
        queue.dispatch(&rig.kernels.store_value, &dispatch).signal(done.at(1)).submit().unwrap();
    };
    for round in 1..=3u64 {
        let (low_done, high_done) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
        // The low-priority dispatch starts first; the high one, submitted after it, still ends first.
        store(&low, &low_out, 1000, &low_done);
        store(&high, &high_out, 2000, &high_done);
        let first = wait_any(&[low_done.at(1), high_done.at(1)], TIMEOUT).unwrap();
        assert_eq!(first, 1, "round {round}: the high-priority queue finished first");
        low_done.wait(1, TIMEOUT).unwrap();
    }
    for (out, base) in [(&low_out, 1000), (&high_out, 2000)] {
        let words = words(&out.to_vec().unwrap());
        assert!(words.iter().enumerate().all(|(index, word)| *word == base + index as u32), "every workgroup ran");
    }
}

#[test]
fn a_cu_mask_narrows_the_queue_and_still_runs_every_workgroup() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let narrow = device.create_queue_with(QueueConfig::new().cu_mask([0b1])).unwrap();
    assert_eq!(narrow.cu_mask().unwrap()[0], 0b1, "the provider holds the narrowed mask");
    let compute_units = device.agents()[0].compute_units;
    let every = aqueduct_hsa::clip_cu_mask(&[], compute_units);
    assert_eq!(device.create_queue().unwrap().cu_mask().unwrap(), every, "a new queue has every CU");
    let out = rig.buffer();
    let done = device.create_semaphore(0).unwrap();
    rig.store(&narrow, &out, 7, &[], &[done.at(1)]);
    done.wait(1, TIMEOUT).unwrap();
    assert!(words(&out.to_vec().unwrap()).iter().enumerate().all(|(index, word)| *word == 7 + index as u32));
    // Bits past the agent's CUs are dropped, not refused.
    let mut wide = vec![0u32; compute_units.div_ceil(32) as usize + 1];
    *wide.last_mut().unwrap() = u32::MAX;
    wide[0] = 1;
    let trimmed = device.create_queue_with(QueueConfig::new().cu_mask(wide)).unwrap();
    let mut expected = vec![0u32; every.len()];
    expected[0] = 1;
    assert_eq!(trimmed.cu_mask().unwrap(), expected, "bits past CU {} are gone", compute_units - 1);
}

#[test]
fn bad_queue_settings_are_refused_and_make_nothing() {
    let engine = engine(WaitStrategy::BarrierValue);
    let device = engine.device();
    let before = device.live_objects();
    let compute_units = device.agents()[0].compute_units;
    let past_the_agent =
        if compute_units.is_multiple_of(32) { vec![0, 1] } else { vec![!0u32 << (compute_units % 32)] };
    for mask in [vec![], vec![0], past_the_agent] {
        let refused = device.create_queue_with(QueueConfig::new().cu_mask(mask.clone()));
        assert!(
            matches!(refused, Err(EngineError::InvalidArgument { what: "cu_mask", .. })),
            "{mask:?}: {:?}",
            refused.err()
        );
    }
    let refused = device.create_queue_with(QueueConfig::new().agent(99));
    assert!(refused.is_err(), "no agent 99");
    assert_eq!(device.live_objects(), before);
}

#[test]
fn the_device_lists_its_live_queues_and_pools_as_made() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let before = device.live_queues().len();
    let queue = device.create_queue_with(QueueConfig::new()).unwrap();
    let listed = device.live_queues();
    assert_eq!(listed.len(), before + 1);
    let entity = listed.iter().find(|entity| entity.index == queue.index()).expect("the new queue is listed");
    let config = device.config();
    assert_eq!(
        (entity.agent, entity.ring_packets, entity.kernarg_bytes),
        (0, config.queue_packets, config.kernarg_ring_bytes)
    );
    assert!(listed.windows(2).all(|pair| pair[0].index < pair[1].index), "by index");
    let pool = device
        .create_pool(aqueduct_engine::PoolConfig::new(MemoryKind::HostVisible).slab_size(1 << 20).max_size(4 << 20))
        .unwrap();
    let made = (MemoryKind::HostVisible, 0, 1 << 20, 4 << 20);
    let listed = |device: &aqueduct_engine::Device| {
        device.live_pools().iter().filter(|pool| (pool.kind, pool.agent, pool.slab_size, pool.max_size) == made).count()
    };
    assert_eq!(listed(device), 1, "the pool is listed as made");
    drop((queue, pool));
    assert_eq!(device.live_queues().len(), before, "a dropped queue leaves the list");
    assert!(eventually(std::time::Duration::from_secs(5), || listed(device) == 0), "a dropped pool leaves the list");
}
