//! Host-visible device memory: the GPU's coarse-grained pool granted to the host. Host writes
//! into it are published through the agent's HDP by the queue, once, before the next packet
//! headers; writes into fine-grained host memory, and submissions with no write since the last
//! flush, flush nothing.

mod common;

use aqueduct_engine::{MemoryKind, PoolConfig, WaitStrategy};
use common::{COUNT, KernelRig, TIMEOUT, queue, words};

const BYTES: u64 = COUNT as u64 * 4;

fn ramp(start: u32) -> Vec<u8> {
    (0..COUNT).flat_map(|i| (start + i).to_le_bytes()).collect()
}

#[test]
fn host_writes_into_device_memory_are_flushed_once_before_the_packets_that_read_them() {
    for strategy in [WaitStrategy::BarrierValue, WaitStrategy::BarrierAnd] {
        let rig = KernelRig::new(strategy);
        let device = rig.device();
        let a = queue(device);
        let input = device.allocate(MemoryKind::HostVisibleDevice, BYTES).unwrap();
        let out = rig.buffer();
        let done = device.create_semaphore(0).unwrap();
        input.write(0, &ramp(1000)).unwrap();
        let before = device.hdp_flushes(0);
        rig.add(&a, &out, &input, 5, &[], &[done.at(1)]);
        assert_eq!(device.hdp_flushes(0), before + 1, "{strategy:?}: the write is published by the next submission");
        rig.add(&a, &out, &input, 6, &[done.at(1)], &[done.at(2)]);
        assert_eq!(device.hdp_flushes(0), before + 1, "{strategy:?}: nothing new to publish");
        done.wait(2, TIMEOUT).unwrap();
        assert_eq!(words(&out.to_vec().unwrap()), (0..COUNT).map(|i| 1006 + i).collect::<Vec<_>>());
        // The host reads it back directly too.
        assert_eq!(input.to_vec().unwrap(), ramp(1000));
        // Fine-grained host memory needs no flush.
        let fine = rig.buffer();
        fine.write(0, &ramp(1)).unwrap();
        rig.add(&a, &out, &fine, 0, &[done.at(2)], &[done.at(3)]);
        done.wait(3, TIMEOUT).unwrap();
        assert_eq!(device.hdp_flushes(0), before + 1, "{strategy:?}");
    }
}

#[test]
fn pools_and_file_reads_serve_host_visible_device_memory() {
    let rig = KernelRig::new(WaitStrategy::BarrierValue);
    let device = rig.device();
    let a = queue(device);
    let pool = device.create_pool(PoolConfig::new(MemoryKind::HostVisibleDevice).slab_size(BYTES)).unwrap();
    let buffer = a.alloca(&pool, BYTES).submit().unwrap();
    assert_eq!(buffer.kind(), MemoryKind::HostVisibleDevice);
    let path = std::env::temp_dir().join(format!("aqueduct-{}-kinds", std::process::id()));
    std::fs::write(&path, ramp(70)).unwrap();
    let (out, done) = (rig.buffer(), device.create_semaphore(0).unwrap());
    let before = device.hdp_flushes(0);
    // A file read is a host write into the buffer: published before the add reads it.
    a.read_file(&std::fs::File::open(&path).unwrap(), 0, buffer.whole()).submit().unwrap();
    rig.add(&a, &out, &buffer, 1, &[], &[done.at(1)]);
    done.wait(1, TIMEOUT).unwrap();
    let _ = std::fs::remove_file(&path);
    assert_eq!(words(&out.to_vec().unwrap()), (0..COUNT).map(|i| 71 + i).collect::<Vec<_>>());
    assert!(device.hdp_flushes(0) > before);
    a.dealloca(&buffer).submit().unwrap();
}
