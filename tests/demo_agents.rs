//! The demo and the digits model on soft agents of other ISAs, from machine code. The soft runtime reads its
//! configuration at its first `hsa_init` (as ROCr reads its environment once), so these tests run
//! one at a time, each on an engine of its own.

use std::sync::Mutex;

static ONE_ENGINE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn demo_options(handoffs: u32, queues: u32) -> aqueduct_cli::demo::DemoOptions {
    aqueduct_cli::demo::DemoOptions { handoffs, queues, model: true }
}

/// One soft agent of `isa`, wave64 for gfx9 (GCN5 and CDNA have no wave32) and wave32 after,
/// running every kernel from its machine code.
fn soft_engine_with(isa: &str) -> aqueduct::EngineConfig {
    use aqueduct::soft_hsa::{KernelExecution, SoftAgentConfig, SoftConfig};
    let wavefront = if isa.contains("--gfx9") { 64 } else { 32 };
    let soft = SoftConfig {
        agents: vec![SoftAgentConfig::with_isa(isa, wavefront)],
        kernel_execution: KernelExecution::Isa,
        ..SoftConfig::default()
    };
    aqueduct::EngineConfig { device: aqueduct::DeviceSpec::Soft, soft, ..aqueduct::EngineConfig::default() }
}

/// An RDNA2 agent gets the demo's gfx10-3-generic code object, and its machine code runs (the
/// interpreter's gfx10.3 path, every kernel, no host build) with every element checked.
#[test]
fn the_demo_runs_from_its_gfx10_3_machine_code_on_a_gfx1030_agent() {
    let _serial = ONE_ENGINE_AT_A_TIME.lock().unwrap_or_else(|poison| poison.into_inner());
    let report = aqueduct_cli::demo::run_with(soft_engine_with("amdgcn-amd-amdhsa--gfx1030"), demo_options(70, 3))
        .expect("demo succeeds");
    assert_eq!(report.agent, "amdgcn-amd-amdhsa--gfx1030");
    assert_eq!(report.dispatches, 71);
    let model = report.model.expect("the model was served");
    assert_eq!((model.items, model.correct), (360, 349));
    assert_eq!(report.verified_elements, 3 * aqueduct_cli::demo::ELEMENTS as usize);
}

/// CDNA2 and CDNA3 agents get the demo's gfx90a and gfx942 code objects, whose wave64 machine
/// code runs (the interpreter's gfx9 path), and an RDNA4 agent its gfx12-generic object (the
/// gfx12 path): every kernel, the device library's too, with every element and every model
/// item checked.
#[test]
fn the_demo_runs_from_its_machine_code_on_gfx90a_gfx942_and_gfx1201_agents() {
    let _serial = ONE_ENGINE_AT_A_TIME.lock().unwrap_or_else(|poison| poison.into_inner());
    for isa in [
        "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-",
        "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
        "amdgcn-amd-amdhsa--gfx1201",
    ] {
        let report = aqueduct_cli::demo::run_with(soft_engine_with(isa), demo_options(70, 3)).expect("demo succeeds");
        assert_eq!(report.agent, isa);
        assert_eq!(report.dispatches, 71);
        let model = report.model.expect("the model was served");
        assert_eq!((model.items, model.correct), (360, 349), "{isa}");
        assert_eq!(report.verified_elements, 3 * aqueduct_cli::demo::ELEMENTS as usize);
    }
}

/// An agent none of the demo's code objects runs on (GCN5's gfx906, which the device library's
/// gfx9-generic object serves, but gfx90a code does not run on) is a typed error naming each
/// candidate's reason, before anything is loaded.
#[test]
fn an_agent_no_demo_code_object_runs_on_is_a_typed_error() {
    let _serial = ONE_ENGINE_AT_A_TIME.lock().unwrap_or_else(|poison| poison.into_inner());
    let error =
        aqueduct_cli::demo::run_with(soft_engine_with("amdgcn-amd-amdhsa--gfx906:sramecc+:xnack-"), demo_options(4, 2))
            .expect_err("no gfx906 code object is built");
    let aqueduct_cli::demo::DemoError::Engine(aqueduct::EngineError::NoCodeObjectForAgents { agents, rejected }) =
        &error
    else {
        panic!("{error:?}");
    };
    assert_eq!(agents, "amdgcn-amd-amdhsa--gfx906:sramecc+:xnack-");
    assert_eq!(rejected.len(), aqueduct_cli::demo::DEMO_CODE_OBJECTS.len(), "{rejected:?}");
    for (rejected, target) in
        rejected.iter().zip(["gfx11-generic", "gfx10-3-generic", "gfx12-generic", "gfx90a", "gfx942"])
    {
        assert!(rejected.contains(target), "{rejected}");
    }
}

/// The digits MLP's gfx10-3-generic kernels on a gfx1030 agent, from machine code: every test
/// item within tolerance of numpy's logits, and numpy's accuracy.
#[test]
fn the_digits_model_serves_from_its_gfx10_3_machine_code_on_a_gfx1030_agent() {
    use aqueduct_cli::digits::{DigitsModel, ForwardPass, Precision, ServeConfig, serve};
    let _serial = ONE_ENGINE_AT_A_TIME.lock().unwrap_or_else(|poison| poison.into_inner());
    let engine = aqueduct::Engine::with_config(soft_engine_with("amdgcn-amd-amdhsa--gfx1030")).expect("engine");
    let device = engine.device();
    assert_eq!(device.agents()[0].isa, "amdgcn-amd-amdhsa--gfx1030");
    let model = DigitsModel::embedded();
    let queues: Vec<_> = (0..3).map(|_| device.create_queue().expect("queue")).collect();
    let pass = ForwardPass::record(device, &queues[0], &model, 45, Precision::F32).expect("recorded");
    let report = serve(device, &queues, &model, &pass, ServeConfig { in_flight: 2, passes: 1 }).expect("served");
    assert_eq!((report.items, report.correct), (360, 349));
    // The f16 model by packed math runs there too; WMMA is RDNA3's, so its kernels are absent
    // from the gfx10.3 object: a typed error naming them.
    let pass = ForwardPass::record(device, &queues[0], &model, 45, Precision::F16).expect("recorded");
    let report = serve(device, &queues, &model, &pass, ServeConfig { in_flight: 2, passes: 1 }).expect("served");
    assert_eq!((report.items, report.correct), (360, 349));
    match ForwardPass::record(device, &queues[0], &model, 45, Precision::F16Wmma) {
        Err(aqueduct::EngineError::UnknownKernel(unknown)) => assert_eq!(unknown.requested, "dense_wmma_hidden"),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("WMMA kernels on gfx1030"),
    }
}
