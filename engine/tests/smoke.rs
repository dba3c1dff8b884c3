use std::time::Duration;

mod common;

use aqueduct_engine::{EngineConfig, MemoryKind};
use aqueduct_soft_hsa::{ExecutionMode, SoftConfig};

#[test]
fn fill_then_wait() {
    let engine = common::open_engine(EngineConfig {
        soft: SoftConfig { default_mode: ExecutionMode::Relaxed, ..SoftConfig::default() },
        ..EngineConfig::default()
    })
    .unwrap();
    let device = engine.device();
    let queue = device.create_queue().unwrap();
    let done = device.create_semaphore(0).unwrap();
    let buffer = device.allocate(MemoryKind::HostVisible, 4096).unwrap();
    queue.fill(buffer.whole(), &7u32.to_le_bytes()).signal(done.at(1)).submit().unwrap();
    done.wait(1, Duration::from_secs(5)).unwrap();
    let bytes = buffer.to_vec().unwrap();
    assert!(bytes.chunks(4).all(|word| word == 7u32.to_le_bytes()));
}
