//! The digits MLP served through the engine: its kernels run from their machine code (they have
//! no host build), and every item of the test split is checked against numpy's logits.

use aqueduct_cli::digits::{self, DigitsModel, ForwardPass, Precision, ServeConfig};

/// The model files agree with each other: the host's float32 forward pass over the weights gives
/// numpy's logits, and numpy's accuracy is the one `model.json` records.
#[test]
fn the_model_files_agree_with_numpy_s_forward_pass() {
    let model = DigitsModel::embedded();
    assert_eq!(model.items(), 360);
    assert_eq!(model.test_inputs.len(), 360 * digits::INPUTS as usize);
    assert_eq!(model.reference_logits.len(), 360 * digits::CLASSES as usize);
    for item in 0..model.items() {
        for (host, numpy) in model.host_logits(item).iter().zip(model.reference(item)) {
            assert!((host - numpy).abs() <= digits::LOGIT_TOLERANCE, "item {item}: host {host}, numpy {numpy}");
        }
    }
    let correct =
        (0..model.items()).filter(|&item| model.reference_class(item) == model.test_labels[item as usize]).count();
    let recorded: serde_json::Value =
        serde_json::from_str(include_str!("../cli/models/digits/model.json")).expect("model.json parses");
    assert_eq!(recorded["correct"], correct, "numpy's correct items");
}

/// Batches of 32 (the last one short) on 2 queues with 4 in flight: every item's logits,
/// probabilities and class are checked inside `serve`, and the accuracy is numpy's.
#[test]
fn the_forward_pass_serves_the_test_split_with_numpy_s_accuracy() {
    let engine = aqueduct::Engine::new("soft").expect("soft engine");
    let device = engine.device();
    let model = DigitsModel::embedded();
    let queues = [device.create_queue().expect("queue"), device.create_queue().expect("queue")];
    let pass = ForwardPass::record(device, &queues[0], &model, 32, Precision::F32).expect("recorded");
    let report = digits::serve(device, &queues, &model, &pass, ServeConfig::default()).expect("served");
    assert_eq!(report.items, 360);
    assert_eq!(report.accuracy, report.reference_accuracy);
    assert_eq!(report.correct, 349, "349 of 360, as cli/models/digits/model.json records");
    assert_eq!(report.batch_latencies.len(), 12, "360 items in batches of 32");
    assert!(report.max_logit_error <= digits::LOGIT_TOLERANCE);
}

/// The f16 model by packed math and by WMMA: every item within tolerance of the host's pass over
/// the same quantized model, and numpy's accuracy still.
#[test]
fn the_f16_model_by_packed_math_and_by_wmma_keeps_numpy_s_accuracy() {
    let engine = aqueduct::Engine::new("soft").expect("soft engine");
    let device = engine.device();
    let model = DigitsModel::embedded();
    let queues = [device.create_queue().expect("queue"), device.create_queue().expect("queue")];
    for precision in [Precision::F16, Precision::F16Wmma] {
        let pass = ForwardPass::record(device, &queues[0], &model, 24, precision).expect("recorded");
        let report = digits::serve(device, &queues, &model, &pass, ServeConfig::default()).expect("served");
        assert_eq!((report.items, report.correct), (360, 349), "{precision:?}");
        assert!(report.max_logit_error <= precision.logit_tolerance(), "{precision:?}: {}", report.max_logit_error);
    }
    // The host's f16 pass is a different model from numpy's f32 one, but close to it.
    let farthest = (0..model.items())
        .flat_map(|item| {
            let f16 = model.host_logits_in(Precision::F16, item);
            f16.iter().zip(model.reference(item)).map(|(a, b)| (a - b).abs()).collect::<Vec<_>>()
        })
        .fold(0.0f32, f32::max);
    assert!(farthest > 0.0 && farthest < 0.1, "f16 quantization moved a logit by {farthest}");
    assert_eq!("f16-wmma".parse::<Precision>(), Ok(Precision::F16Wmma));
    assert!("f8".parse::<Precision>().is_err());
}

#[test]
fn bad_batch_and_serve_shapes_are_typed_errors() {
    let engine = aqueduct::Engine::new("soft").expect("soft engine");
    let device = engine.device();
    let model = DigitsModel::embedded();
    let queue = device.create_queue().expect("queue");
    assert!(matches!(
        ForwardPass::record(device, &queue, &model, 0, Precision::F32),
        Err(aqueduct::EngineError::InvalidArgument { what: "batch", .. })
    ));
    let pass = ForwardPass::record(device, &queue, &model, 7, Precision::F32).expect("recorded");
    let no_queues: &[aqueduct::Queue] = &[];
    for (queues, config) in
        [(no_queues, ServeConfig::default()), (std::slice::from_ref(&queue), ServeConfig { in_flight: 0, passes: 1 })]
    {
        assert!(matches!(
            digits::serve(device, queues, &model, &pass, config),
            Err(digits::ServeError::Engine(aqueduct::EngineError::InvalidArgument { .. }))
        ));
    }
}
