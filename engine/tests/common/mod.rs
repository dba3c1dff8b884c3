//! Shared setup for the engine tests: soft engines in relaxed mode, the test kernels and their
//! CPU twins (from the hsa crate's fixtures).
#![allow(dead_code)]

use std::time::Duration;

use aqueduct_engine::{Engine, EngineConfig, Executable, Kernel, WaitStrategy};
use aqueduct_hsa::soft::{ExecutionMode, SoftConfig};

#[path = "../../../hsa/tests/common/mod.rs"]
mod hsa_common;

pub use hsa_common::{TEST_KERNELS, TEST_KERNELS_GFX1100};

pub const TIMEOUT: Duration = Duration::from_secs(20);

/// A soft engine whose queues run in relaxed mode, so a missing barrier bit shows.
pub fn engine(strategy: WaitStrategy) -> Engine {
    engine_with(EngineConfig { wait_strategy: strategy, ..EngineConfig::default() })
}

pub fn engine_with(config: EngineConfig) -> Engine {
    aqueduct_hsa::soft::register_kernels(&TEST_KERNELS);
    Engine::with_config(EngineConfig {
        device: "soft".parse().unwrap(),
        soft: SoftConfig { default_mode: ExecutionMode::Relaxed, ..config.soft.clone() },
        ..config
    })
    .expect("soft engine")
}

/// `store_value(out, value, count)`: out[i] = value + i. `add_from(out, in, addend, count)`:
/// out[i] = in[i] + addend.
pub struct TestKernels {
    pub executable: Executable,
    pub store_value: Kernel,
    pub add_from: Kernel,
}

pub fn test_kernels(engine: &Engine) -> TestKernels {
    let executable = engine.device().load_executable(TEST_KERNELS_GFX1100).expect("load test kernels");
    TestKernels {
        store_value: executable.kernel("store_value").unwrap(),
        add_from: executable.kernel("add_from").unwrap(),
        executable,
    }
}

pub fn words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|chunk| u32::from_le_bytes(chunk.try_into().unwrap())).collect()
}

/// A queue on agent 0, forced into relaxed mode (the soft runtime is process-wide, so the
/// configured default only applies to whichever engine initialized it first).
pub fn queue(device: &aqueduct_engine::Device) -> aqueduct_engine::Queue {
    let queue = device.create_queue().expect("queue");
    aqueduct_hsa::soft::set_queue_mode(queue.hsa_queue(), ExecutionMode::Relaxed).expect("relaxed mode");
    queue
}
