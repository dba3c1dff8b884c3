//! A logical device of several soft agents: queues, buffers and kernels on each agent, and
//! cross-agent waits. The soft runtime is process-wide and reads its agent list when it starts,
//! so every test here holds one lock for its whole run: each starts the runtime with its own
//! agents and shuts it down (drops every engine) before the next.

mod common;

use std::sync::{Mutex, MutexGuard};

use aqueduct_engine::{Dispatch, Engine, EngineConfig, EngineError, MemoryKind, WaitStrategy};
use aqueduct_hsa::ExecutableError;
use aqueduct_soft_hsa::{SoftAgentConfig, SoftConfig};
use common::*;

static RUNTIME: Mutex<()> = Mutex::new(());

fn exclusive() -> MutexGuard<'static, ()> {
    RUNTIME.lock().unwrap_or_else(|poison| poison.into_inner())
}

fn engine_on(agents: Vec<SoftAgentConfig>, strategy: WaitStrategy) -> Engine {
    let engine = engine_with(EngineConfig {
        wait_strategy: strategy,
        soft: SoftConfig { agents, ..SoftConfig::default() },
        ..EngineConfig::default()
    });
    assert_eq!(
        engine.device().agents().len(),
        engine.device().config().soft.agents.len(),
        "the runtime started with this test's agents"
    );
    engine
}

fn second_gfx1100() -> SoftAgentConfig {
    SoftAgentConfig { name: "gfx1100 (second)".into(), ..SoftAgentConfig::gfx1100() }
}

#[test]
fn kernels_run_on_every_agent_and_wait_across_agents() {
    let _exclusive = exclusive();
    for strategy in [WaitStrategy::BarrierValue, WaitStrategy::BarrierAnd] {
        let engine = engine_on(vec![SoftAgentConfig::gfx1100(), second_gfx1100()], strategy);
        let device = engine.device();
        let agents = device.agents();
        assert_eq!(agents.len(), 2);
        assert_ne!(agents[0].uuid, agents[1].uuid);
        let kernels = test_kernels(&engine);
        let first = queue(device);
        let second = device.create_queue_on(1).unwrap();
        common::controls(&second)
            .set_queue_mode(second.hsa_queue(), aqueduct_soft_hsa::ExecutionMode::Relaxed)
            .unwrap();
        assert_eq!((first.agent(), second.agent()), (0, 1));
        const COUNT: u32 = 500;
        let on_first = device.allocate_on(0, MemoryKind::HostVisible, u64::from(COUNT) * 4).unwrap();
        let on_second = device.allocate_on(1, MemoryKind::HostVisible, u64::from(COUNT) * 4).unwrap();
        let local_second = device.allocate_on(1, MemoryKind::DeviceLocal, u64::from(COUNT) * 4).unwrap();
        let chain = device.create_semaphore(0).unwrap();
        // Agent 1 stores, agent 0 adds, agent 1 copies through its local memory and adds again:
        // each step waits on the other agent's queue from the device.
        stall_next(&second);
        let bindings = [on_second.whole()];
        second
            .dispatch(&kernels.store_value, &Dispatch::grid([COUNT, 1, 1]).bindings(&bindings).constants(&[10, COUNT]))
            .signal(chain.at(1))
            .submit()
            .unwrap();
        let bindings = [on_first.whole(), on_second.whole()];
        first
            .dispatch(
                &kernels.add_from,
                &Dispatch::grid([COUNT, 1, 1]).workgroup([64, 1, 1]).bindings(&bindings).constants(&[5, COUNT]),
            )
            .wait(chain.at(1))
            .signal(chain.at(2))
            .submit()
            .unwrap();
        second.copy(on_first.whole(), local_second.whole()).wait(chain.at(2)).signal(chain.at(3)).submit().unwrap();
        let bindings = [on_second.whole(), local_second.whole()];
        second
            .dispatch(&kernels.add_from, &Dispatch::grid([COUNT, 1, 1]).bindings(&bindings).constants(&[100, COUNT]))
            .wait(chain.at(3))
            .signal(chain.at(4))
            .submit()
            .unwrap();
        first.fill(on_first.range(0, 8), &[0xFF]).wait(chain.at(4)).signal(chain.at(5)).submit().unwrap();
        assert_eq!(first.stats().device_waits + second.stats().device_waits, 3, "{strategy:?}");
        release(&second, || chain.value() >= 1);
        chain.wait(5, TIMEOUT).unwrap();
        let second_words = words(&on_second.to_vec().unwrap());
        let first_words = words(&on_first.to_vec().unwrap());
        for index in 0..COUNT as usize {
            assert_eq!(second_words[index], 115 + index as u32, "{strategy:?}: element {index}");
            let expected = if index < 2 { u32::MAX } else { 15 + index as u32 };
            assert_eq!(first_words[index], expected, "{strategy:?}: element {index}");
        }
        // A fault on one agent's queue fails only that queue.
        let (bad, good) = (device.create_semaphore(0).unwrap(), device.create_semaphore(0).unwrap());
        fault_next(&second, aqueduct_soft_hsa::Fault::KernelFault { status: 0x1016 });
        second.barrier().signal(bad.at(1)).submit().unwrap();
        first.fill(on_first.whole(), &[1]).signal(good.at(1)).submit().unwrap();
        assert!(matches!(bad.wait(1, TIMEOUT), Err(EngineError::SemaphoreFailed(_))));
        good.wait(1, TIMEOUT).unwrap();
    }
}

#[test]
fn builtins_on_agents_of_different_targets_and_executables_that_fit_only_one() {
    let _exclusive = exclusive();
    let engine = engine_on(
        vec![SoftAgentConfig::gfx1100(), SoftAgentConfig::with_isa("amdgcn-amd-amdhsa--gfx90a", 64)],
        WaitStrategy::Auto,
    );
    let device = engine.device();
    let agents = device.agents();
    assert_eq!((agents[0].wavefront_size, agents[1].wavefront_size), (32, 64));
    assert_ne!(agents[0].library_target, agents[1].library_target, "each agent gets its own device library");
    // A code object must run on every agent of the device.
    for code_object in [TEST_KERNELS_GFX1100, TEST_KERNELS_GFX90A] {
        assert!(matches!(
            device.load_executable(code_object),
            Err(EngineError::Executable(ExecutableError::Incompatible(_)))
        ));
    }
    let queues = [queue(device), device.create_queue_on(1).unwrap()];
    let mut rng = Xorshift::new(12);
    let source = host_buffer(device, &rng.bytes(10_000));
    let middle = device.allocate_on(1, MemoryKind::DeviceLocal, 10_000).unwrap();
    let target = device.allocate_on(0, MemoryKind::HostVisible, 10_000).unwrap();
    let step = device.create_semaphore(0).unwrap();
    queues[1].copy(source.whole(), middle.whole()).signal(step.at(1)).submit().unwrap();
    queues[0].fill(target.whole(), &[7, 7]).signal(step.at(2)).submit().unwrap();
    queues[1].update(&middle, 5000, &[9; 3000]).wait(step.at(2)).signal(step.at(3)).submit().unwrap();
    queues[0]
        .copy(middle.range(1, 9_998), target.range(1, 9_998))
        .wait(step.at(3))
        .signal(step.at(4))
        .submit()
        .unwrap();
    step.wait(4, TIMEOUT).unwrap();
    let mut expected = source.to_vec().unwrap();
    expected[5000..8000].fill(9);
    expected[0] = 7;
    expected[9_999] = 7;
    assert!(target.to_vec().unwrap() == expected);
}
