//! Shared setup for the engine tests: soft engines in relaxed mode, the test kernels and their
//! CPU twins (from the hsa crate's fixtures).
#![allow(dead_code)]

use std::time::Duration;

use aqueduct_engine::{Dispatch, Engine, EngineConfig, Executable, Kernel, SemaphorePoint, WaitStrategy};
use aqueduct_soft_hsa::{ExecutionMode, SoftConfig};

pub mod profile;

#[path = "../../../soft-hsa/tests/common/mod.rs"]
mod hsa_common;

#[allow(unused_imports)]
pub use hsa_common::{TEST_KERNELS, TEST_KERNELS_GFX90A, TEST_KERNELS_GFX1100};

/// How long a test waits before it calls the wait a hang. Generous: it detects hangs only, also
/// under valgrind's serialized threads. Latency is measured by the fault matrix and the bench.
pub const TIMEOUT: Duration = Duration::from_secs(120);

/// The engine tests' `EngineConfig::completion_fallback`: far past [`TIMEOUT`], so a completion
/// thread that misses a wake-up leaves its waiter hanging (and the test failing) instead of
/// catching up 100 ms later unnoticed.
pub const COMPLETION_FALLBACK: Duration = Duration::from_secs(3600);

/// A soft engine whose queues run in relaxed mode, so a missing barrier bit shows.
pub fn engine(strategy: WaitStrategy) -> Engine {
    engine_with(EngineConfig { wait_strategy: strategy, ..EngineConfig::default() })
}

/// The device the engine tests open: the embedded soft runtime, unless `AQUEDUCT_TEST_DEVICE`
/// names another (`amdgpu` with `AQUEDUCT_LIBHSA_PATH` at the soft runtime's drop-in runs the
/// tests through the ROCr provider, as scripts/test.sh does).
pub fn test_device() -> String {
    std::env::var("AQUEDUCT_TEST_DEVICE").unwrap_or_else(|_| "soft".into())
}

/// The soft runtime's test controls for `queue`: the embedded runtime's, or the drop-in's when
/// the tests run through the ROCr provider on it.
pub fn controls(queue: &aqueduct_engine::Queue) -> aqueduct_soft_hsa::SoftControls {
    queue.soft_controls().expect("the tests run on the soft runtime, embedded or as the drop-in")
}

/// Where command buffers made without a choice of their own process their blocks:
/// `AQUEDUCT_TEST_BLOCK_PROCESSING` = `host` or `device` runs the suites on one path (CI runs
/// the command-buffer suites on both); unset, the engine's model picks.
pub fn block_processing() -> aqueduct_engine::BlockProcessing {
    match std::env::var("AQUEDUCT_TEST_BLOCK_PROCESSING").as_deref() {
        Ok("host") => aqueduct_engine::BlockProcessing::Host,
        Ok("device") => aqueduct_engine::BlockProcessing::Device,
        _ => aqueduct_engine::BlockProcessing::Auto,
    }
}

pub fn engine_with(config: EngineConfig) -> Engine {
    hsa_common::register_test_kernels();
    let block_processing = match config.block_processing {
        aqueduct_engine::BlockProcessing::Auto => block_processing(),
        chosen => chosen,
    };
    let engine = open_engine(EngineConfig {
        block_processing,
        // Tiny rings (4 to 16 packets) make backpressure easy to reach; ROCr's minimum is 64.
        soft: SoftConfig { default_mode: ExecutionMode::Relaxed, queue_min_packets: 4, ..config.soft.clone() },
        completion_fallback: COMPLETION_FALLBACK,
        ..config
    })
    .expect("test engine");
    // Through a loaded drop-in, its registry is not this process's embedded one.
    for code_object in [TEST_KERNELS_GFX1100, TEST_KERNELS_GFX90A] {
        engine.device().register_host_builds(code_object, &hsa_common::TEST_KERNELS).expect("test kernels");
    }
    engine
}

/// Opens `config` on [`test_device`]. The engine hands `config.soft` to the embedded runtime;
/// through the drop-in, this hands it over first, so either runtime starts configured alike.
pub fn open_engine(config: EngineConfig) -> Result<Engine, aqueduct_engine::EngineError> {
    let device = test_device();
    if device != "soft" {
        let controls = aqueduct_soft_hsa::SoftControls::drop_in().expect("AQUEDUCT_LIBHSA_PATH names the drop-in");
        controls.configure(&config.soft).expect("the drop-in takes the configuration");
    }
    Engine::with_config(EngineConfig { device: device.parse().expect("AQUEDUCT_TEST_DEVICE"), ..config })
}

/// `store_value(out, value, count)`: out[i] = value + i. `add_from(out, in, addend, count)`:
/// out[i] = in[i] + addend. `accumulate(out, in, scale, count)`: out[i] += in[i] * scale, serially
/// in work-item 0 (it reads no implicit arguments).
pub struct TestKernels {
    pub executable: Executable,
    pub store_value: Kernel,
    pub add_from: Kernel,
    pub accumulate: Kernel,
}

pub fn test_kernels(engine: &Engine) -> TestKernels {
    let executable = engine.device().load_executable(TEST_KERNELS_GFX1100).expect("load test kernels");
    TestKernels {
        store_value: executable.kernel("store_value").unwrap(),
        add_from: executable.kernel("add_from").unwrap(),
        accumulate: executable.kernel("accumulate").unwrap(),
        executable,
    }
}

/// A soft engine on one wait strategy with the test kernels, dispatching them over `COUNT`-word
/// buffers: the setup the wait and frontier tests share.
pub struct KernelRig {
    pub engine: Engine,
    pub kernels: TestKernels,
}

/// Words in a [`KernelRig`] buffer.
pub const COUNT: u32 = 256;

impl KernelRig {
    pub fn new(strategy: WaitStrategy) -> Self {
        let engine = engine(strategy);
        let kernels = test_kernels(&engine);
        Self { engine, kernels }
    }

    pub fn device(&self) -> &aqueduct_engine::Device {
        self.engine.device()
    }

    pub fn buffer(&self) -> aqueduct_engine::Buffer {
        self.device().allocate(aqueduct_engine::MemoryKind::HostVisible, u64::from(COUNT) * 4).unwrap()
    }

    /// out[i] = value + i.
    pub fn store(
        &self,
        queue: &aqueduct_engine::Queue,
        out: &aqueduct_engine::Buffer,
        value: u32,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) {
        self.run(queue, &self.kernels.store_value, [COUNT, 1, 1], &[out.whole()], &[value, COUNT], waits, signals);
    }

    /// out[i] = input[i] + addend.
    pub fn add(
        &self,
        queue: &aqueduct_engine::Queue,
        out: &aqueduct_engine::Buffer,
        input: &aqueduct_engine::Buffer,
        addend: u32,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) {
        let bindings = [out.whole(), input.whole()];
        self.run(queue, &self.kernels.add_from, [COUNT, 1, 1], &bindings, &[addend, COUNT], waits, signals);
    }

    /// out[i] += input[i] * scale, serially in one work-item.
    pub fn accumulate(
        &self,
        queue: &aqueduct_engine::Queue,
        out: &aqueduct_engine::Buffer,
        input: &aqueduct_engine::Buffer,
        scale: u32,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) {
        let bindings = [out.whole(), input.whole()];
        self.run(queue, &self.kernels.accumulate, [1, 1, 1], &bindings, &[scale, COUNT], waits, signals);
    }

    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        queue: &aqueduct_engine::Queue,
        kernel: &Kernel,
        grid: [u32; 3],
        bindings: &[aqueduct_engine::Binding],
        constants: &[u32],
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) {
        let workgroup = if grid[0] == 1 { [1, 1, 1] } else { [64, 1, 1] };
        let dispatch = Dispatch::grid(grid).workgroup(workgroup).bindings(bindings).constants(constants);
        queue.dispatch(kernel, &dispatch).waits(waits).signals(signals).submit().unwrap();
    }
}

pub fn words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|chunk| u32::from_le_bytes(chunk.try_into().unwrap())).collect()
}

/// A queue on agent 0, forced into relaxed mode (the soft runtime is process-wide, so the
/// configured default only applies to whichever engine initialized it first).
pub fn queue(device: &aqueduct_engine::Device) -> aqueduct_engine::Queue {
    let queue = device.create_queue().expect("queue");
    controls(&queue).set_queue_mode(queue.hsa_queue(), ExecutionMode::Relaxed).expect("relaxed mode");
    queue
}

/// Polls `condition` until it holds or `timeout` passes; returns whether it held.
pub fn eventually(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if condition() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// A small deterministic generator (xorshift64*), so seeded tests replay exactly.
#[derive(Clone, Debug)]
pub struct Xorshift(u64);

impl Xorshift {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish in `0..bound` (`bound` > 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }

    pub fn bytes(&mut self, length: usize) -> Vec<u8> {
        (0..length).map(|_| self.next_u64() as u8).collect()
    }
}

/// A host-visible buffer holding `contents`.
pub fn host_buffer(device: &aqueduct_engine::Device, contents: &[u8]) -> aqueduct_engine::Buffer {
    let buffer = device.allocate(aqueduct_engine::MemoryKind::HostVisible, contents.len() as u64).expect("allocation");
    buffer.write(0, contents).expect("host write");
    buffer
}

/// Arms a stall on the next packet `queue` publishes: its next submission (and everything after
/// it on the queue) waits until [`release`].
pub fn stall_next(queue: &aqueduct_engine::Queue) {
    controls(queue)
        .inject_fault(queue.hsa_queue(), queue.stats().packets, aqueduct_soft_hsa::Fault::Stall)
        .expect("inject stall");
}

/// Arms `fault` on the next packet `queue` publishes.
pub fn fault_next(queue: &aqueduct_engine::Queue, fault: aqueduct_soft_hsa::Fault) {
    controls(queue).inject_fault(queue.hsa_queue(), queue.stats().packets, fault).expect("inject fault");
}

/// Releases a stalled packet on `queue` and waits until `done` holds. A release only frees
/// packets already stalled, so it is repeated in case the processor had not reached it yet.
pub fn release(queue: &aqueduct_engine::Queue, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + TIMEOUT;
    loop {
        controls(queue).release_stall(queue.hsa_queue()).expect("release stall");
        if eventually(Duration::from_millis(50), &mut done) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "the stalled queue never progressed");
    }
}
