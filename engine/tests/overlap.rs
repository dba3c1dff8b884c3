//! Independent dispatches overlap on the soft runtime's default (concurrent) packet processor:
//! a recorded program whose dispatches have no barriers between them runs them at the same
//! time, and the same program with a barrier between each pair runs them one after another, in
//! order. Observed through timestamps: each dispatch is a Rust host build of `store_value` that
//! notes when it started and ended (on the steady clock) and takes long enough to be seen.

mod common;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use aqueduct_engine::host_build::{DevicePtr, HostBuild, HostKernel, Workgroup, kernel_args};
use aqueduct_engine::{BindingTable, CommandBufferUsage, Dispatch, EngineConfig, MemoryKind};
use common::{TEST_KERNELS_GFX1100, TIMEOUT};

kernel_args! {
    /// `store_value(u32 *out, u32 value, u32 count)`.
    struct StoreValueArgs {
        out: DevicePtr<u32>,
        value: u32,
        count: u32,
    }
}

/// How long each dispatch takes: long beside the processor's own cost, short for a test.
const DISPATCH_TIME: Duration = Duration::from_millis(40);

/// (value, start, end) of every dispatch that ran.
static RUNS: Mutex<Vec<(u32, Instant, Instant)>> = Mutex::new(Vec::new());

/// Stores `value` into `out[0]` after `DISPATCH_TIME`, noting when it ran.
struct SlowStore;

impl HostKernel for SlowStore {
    const SYMBOL: &'static str = "store_value.kd";
    type Args = StoreValueArgs;

    fn workgroup(group: &mut Workgroup<'_, StoreValueArgs>) {
        let start = Instant::now();
        std::thread::sleep(DISPATCH_TIME);
        let StoreValueArgs { out, value, .. } = *group.args();
        // SAFETY: the dispatch binds `out` to a buffer of at least one u32.
        unsafe { out.write(0, value) };
        RUNS.lock().unwrap().push((value, start, Instant::now()));
    }
}

/// Runs a program of `count` dispatches, with or without a barrier between each pair; returns
/// their (start, end) in recording order.
fn run_program(barriers: bool, count: u32) -> Vec<(Instant, Instant)> {
    let engine = common::open_engine(EngineConfig::default()).expect("engine");
    let device = engine.device();
    // A copy of the fixture with one extra byte: an identity no other test registers for.
    let mut bytes = TEST_KERNELS_GFX1100.to_vec();
    bytes.push(0x0f);
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    device.register_host_builds(bytes, &[HostBuild::of::<SlowStore>()]).expect("registered");
    let kernel = device.load_executable(bytes).expect("loads").kernel("store_value").expect("kernel");
    let outputs: Vec<_> = (0..count).map(|_| device.buffer_from(MemoryKind::HostVisible, &[0u32]).unwrap()).collect();
    let mut cb = device.create_command_buffer(CommandBufferUsage::Reusable).unwrap();
    let base = if barriers { 100 } else { 200 };
    for (index, out) in outputs.iter().enumerate() {
        if barriers && index > 0 {
            cb.barrier().unwrap();
        }
        let constants = [base + index as u32, 1];
        let bindings = [out.whole().into()];
        let dispatch = Dispatch::grid([1, 1, 1]).workgroup([1, 1, 1]).bindings(&bindings).constants(&constants);
        cb.dispatch(&kernel, &dispatch).unwrap();
    }
    cb.finish().unwrap();
    let queue = device.create_queue().unwrap();
    let done = device.create_semaphore(0).unwrap();
    queue.execute(&cb, &BindingTable::default()).signal(done.at(1)).submit().expect("execute");
    done.wait(1, TIMEOUT).expect("the execution completes");
    for (index, out) in outputs.iter().enumerate() {
        assert_eq!(out.to_vec().unwrap(), vec![base + index as u32], "dispatch {index} stored its value");
    }
    let runs = RUNS.lock().unwrap();
    (0..count)
        .map(|index| {
            let (_, start, end) = *runs.iter().find(|(value, ..)| *value == base + index).expect("it ran");
            (start, end)
        })
        .collect()
}

#[test]
fn dispatches_without_barriers_overlap_and_with_barriers_run_in_order() {
    // One test, so the two programs do not compete for the worker pool.
    let free = run_program(false, 4);
    // The worker pool may be as small as 2 threads, so only pairs are sure to run together: at
    // least one pair's intervals intersect.
    let overlapping =
        (0..free.len()).any(|a| (a + 1..free.len()).any(|b| free[a].0 < free[b].1 && free[b].0 < free[a].1));
    assert!(overlapping, "barrier-free dispatches overlap: {free:?}");

    let ordered = run_program(true, 4);
    for pair in ordered.windows(2) {
        assert!(pair[0].1 <= pair[1].0, "with barriers each dispatch starts after the one before ends: {ordered:?}");
    }
}
