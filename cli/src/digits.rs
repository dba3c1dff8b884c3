//! A trained model served through the engine: the digits MLP (`cli/models/digits`, 64 → 64 ReLU →
//! 10, trained by `cli/models/digits/regen.sh` on scikit-learn's handwritten digits), its inference
//! kernels in HIP (`cli/kernels/mlp.hip`), and its forward pass recorded once as a command buffer
//! whose binding slots name one batch's buffers.
//!
//! The kernels have no host build: on the soft runtime they run from their machine code.

use aqueduct_engine::{
    Buffer, BufferRef, CommandBuffer, CommandBufferUsage, Device, Dispatch, EngineError, Kernel, MemoryKind, Queue,
};

/// The MLP's kernels (`dense`, `softmax`, `argmax`), built from `cli/kernels/mlp.hip` by
/// `kernels/regen.sh` for each of its targets ([`crate::WORKLOAD_TARGETS`]).
pub const MLP_CODE_OBJECTS: [&[u8]; crate::WORKLOAD_TARGETS] = workload_code_objects!("mlp");

/// Features per item (8 × 8 pixels, scaled to [0, 1]).
pub const INPUTS: u32 = 64;
/// Hidden units (ReLU).
pub const HIDDEN: u32 = 64;
/// Classes (the digits 0 to 9).
pub const CLASSES: u32 = 10;
/// How far a logit may be from numpy's: the kernels sum the same products in another order (and
/// fuse each multiply-add), so they differ in the last bits.
pub const LOGIT_TOLERANCE: f32 = 1e-4;

/// The trained weights, the held-out test split and numpy's float32 forward pass over it.
pub struct DigitsModel {
    /// `INPUTS × HIDDEN`, row-major.
    pub w1: Vec<f32>,
    /// `HIDDEN`.
    pub b1: Vec<f32>,
    /// `HIDDEN × CLASSES`, row-major.
    pub w2: Vec<f32>,
    /// `CLASSES`.
    pub b2: Vec<f32>,
    /// `items × INPUTS`, row-major.
    pub test_inputs: Vec<f32>,
    /// One label per test item.
    pub test_labels: Vec<u32>,
    /// `items × CLASSES`: numpy's logits.
    pub reference_logits: Vec<f32>,
}

/// Little-endian 4-byte values (a trailing partial value is dropped), copied out of bytes that
/// `include_bytes!` need not align.
fn values<T: bytemuck::Pod + Default>(bytes: &[u8]) -> Vec<T> {
    let count = bytes.len() / 4;
    let mut values = vec![T::default(); count];
    bytemuck::cast_slice_mut::<T, u8>(&mut values).copy_from_slice(&bytes[..count * 4]);
    values
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    values(bytes)
}

impl DigitsModel {
    /// The model as `cli/models/digits/regen.sh` wrote it, embedded in the binary.
    pub fn embedded() -> Self {
        Self {
            w1: floats(include_bytes!("../models/digits/w1.f32")),
            b1: floats(include_bytes!("../models/digits/b1.f32")),
            w2: floats(include_bytes!("../models/digits/w2.f32")),
            b2: floats(include_bytes!("../models/digits/b2.f32")),
            test_inputs: floats(include_bytes!("../models/digits/test_inputs.f32")),
            test_labels: values(include_bytes!("../models/digits/test_labels.u32")),
            reference_logits: floats(include_bytes!("../models/digits/reference_logits.f32")),
        }
    }

    /// Test items.
    pub fn items(&self) -> u32 {
        self.test_labels.len() as u32
    }

    /// Item `index`'s inputs.
    pub fn input(&self, index: u32) -> &[f32] {
        let start = (index * INPUTS) as usize;
        &self.test_inputs[start..start + INPUTS as usize]
    }

    /// Item `index`'s reference logits.
    pub fn reference(&self, index: u32) -> &[f32] {
        let start = (index * CLASSES) as usize;
        &self.reference_logits[start..start + CLASSES as usize]
    }

    /// The reference's class for item `index`: the first largest logit, as `argmax` picks it.
    pub fn reference_class(&self, index: u32) -> u32 {
        first_largest(self.reference(index))
    }

    /// The host's float32 forward pass over item `index` (the same arithmetic as numpy's), for
    /// checking the model files against each other.
    pub fn host_logits(&self, index: u32) -> Vec<f32> {
        self.host_logits_in(Precision::F32, index)
    }
}

/// The index of the first largest value (the `argmax` kernel's rule).
pub fn first_largest(values: &[f32]) -> u32 {
    let mut best = 0;
    for (index, value) in values.iter().enumerate() {
        if *value > values[best] {
            best = index;
        }
    }
    best as u32
}

/// The binding slots of one batch, in the forward program's order.
pub mod slot {
    /// `batch × INPUTS` f32: the items.
    pub const INPUT: u32 = 0;
    /// `batch × HIDDEN` f32: the hidden layer (scratch).
    pub const HIDDEN: u32 = 1;
    /// `batch × CLASSES` f32: the logits.
    pub const LOGITS: u32 = 2;
    /// `batch × CLASSES` f32: the softmax of the logits.
    pub const PROBABILITIES: u32 = 3;
    /// `batch` u32: each item's class.
    pub const CLASSES: u32 = 4;
    /// Slots a binding table for the program names.
    pub const COUNT: usize = 5;
}

/// The forward pass over batches of `batch` items, recorded once: `dense` (ReLU), `dense`,
/// then `softmax` and `argmax` over the logits, with a barrier between dependent steps. The
/// weights live in device-local buffers the program names directly; each execution's binding
/// table names its batch's buffers ([`slot`]).
pub struct ForwardPass {
    /// The recorded program.
    pub program: CommandBuffer,
    /// Items per execution.
    pub batch: u32,
    /// Its arithmetic.
    pub precision: Precision,
    /// The weights' buffers, kept alive as long as the program that names them.
    _weights: [Buffer; 4],
}

/// The forward pass's arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
    /// f32 throughout (`dense`).
    F32,
    /// f16 weights, inputs and hidden layer, f32 accumulation and logits, by packed math:
    /// `v_dot2_f32_f16` over half pairs (`dense_h_*`), on every target.
    F16,
    /// The same model with the products by WMMA (`dense_wmma_*`, `v_wmma_f32_16x16x16_f16`):
    /// RDNA3 only; elsewhere the kernels' absence is a typed error.
    F16Wmma,
}

impl Precision {
    /// Every precision, in the CLI's order.
    pub const ALL: [Precision; 3] = [Precision::F32, Precision::F16, Precision::F16Wmma];

    /// Its CLI name: `f32`, `f16` or `f16-wmma`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F16 => "f16",
            Precision::F16Wmma => "f16-wmma",
        }
    }

    /// Bytes of one input or hidden value.
    pub fn activation_bytes(self) -> u32 {
        if self == Precision::F32 { 4 } else { 2 }
    }

    /// How far a logit may be from its reference (numpy's for f32, the host's pass over the same
    /// f16 model otherwise, [`DigitsModel::host_logits_in`]): the sums run in another order, and
    /// in f16 a hidden value that lands on the other side of an f16 rounding moves by one f16
    /// step (2^-11 relative, hidden values below 16) times a weight (below 1): 5e-3 allows a
    /// few of those.
    pub fn logit_tolerance(self) -> f32 {
        if self == Precision::F32 { LOGIT_TOLERANCE } else { 5e-3 }
    }
}

impl std::str::FromStr for Precision {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        Precision::ALL
            .into_iter()
            .find(|precision| precision.name() == name)
            .ok_or_else(|| format!("`{name}` is not a precision (f32, f16, f16-wmma)"))
    }
}

/// f32 values as f16 bits, rounded to nearest even.
pub fn to_f16_bits(values: &[f32]) -> Vec<u16> {
    values.iter().map(|&value| half::f16::from_f32(value).to_bits()).collect()
}

/// A `rows × columns` row-major matrix transposed, as f16 bits (the f16 kernels read each
/// output column's weights contiguously).
fn transposed_f16(values: &[f32], rows: u32, columns: u32) -> Vec<u16> {
    let (rows, columns) = (rows as usize, columns as usize);
    to_f16_bits(&(0..columns * rows).map(|index| values[(index % rows) * columns + index / rows]).collect::<Vec<_>>())
}

impl DigitsModel {
    /// The host's forward pass over item `index` as the kernels of `precision` compute it: f32,
    /// or the f16 model's quantized weights, inputs and hidden layer with f32 sums.
    pub fn host_logits_in(&self, precision: Precision, index: u32) -> Vec<f32> {
        // As the kernels sum: products fused into an accumulator from zero, then the bias; f16
        // rounds the inputs, the weights and the hidden layer.
        let quantize = |value: f32| {
            if precision == Precision::F32 { value } else { half::f16::from_f32(value).to_f32() }
        };
        let dot = |left: &dyn Fn(usize) -> f32, right: &dyn Fn(usize) -> f32, count: u32| {
            (0..count as usize).fold(0.0f32, |sum, i| left(i).mul_add(right(i), sum))
        };
        let input: Vec<f32> = self.input(index).iter().map(|&value| quantize(value)).collect();
        let hidden: Vec<f32> = (0..HIDDEN as usize)
            .map(|unit| {
                let sum = dot(&|i| input[i], &|i| quantize(self.w1[i * HIDDEN as usize + unit]), INPUTS);
                quantize((sum + self.b1[unit]).max(0.0))
            })
            .collect();
        (0..CLASSES as usize)
            .map(|class| {
                dot(&|unit| hidden[unit], &|unit| quantize(self.w2[unit * CLASSES as usize + class]), HIDDEN)
                    + self.b2[class]
            })
            .collect()
    }
}

impl ForwardPass {
    /// Loads the kernels (the code object the device's agents run), uploads the weights in
    /// `precision` through `queue` and records the program.
    pub fn record(
        device: &Device,
        queue: &Queue,
        model: &DigitsModel,
        batch: u32,
        precision: Precision,
    ) -> Result<Self, EngineError> {
        if batch == 0 {
            return Err(EngineError::InvalidArgument {
                what: "batch",
                reason: "a batch holds at least one item".into(),
            });
        }
        let executable = device.load_executable(device.select_code_object(&MLP_CODE_OBJECTS)?)?;
        let (softmax, argmax) = (executable.kernel("softmax")?, executable.kernel("argmax")?);
        let (hidden_kernel, logits_kernel) = match precision {
            Precision::F32 => (executable.kernel("dense")?, executable.kernel("dense")?),
            Precision::F16 => (executable.kernel("dense_h_hidden")?, executable.kernel("dense_h_logits")?),
            Precision::F16Wmma => (executable.kernel("dense_wmma_hidden")?, executable.kernel("dense_wmma_logits")?),
        };
        let weights = match precision {
            Precision::F32 => upload(
                device,
                queue,
                [
                    bytemuck::cast_slice(&model.w1),
                    bytemuck::cast_slice(&model.b1),
                    bytemuck::cast_slice(&model.w2),
                    bytemuck::cast_slice(&model.b2),
                ],
            )?,
            Precision::F16 | Precision::F16Wmma => {
                let (w1t, w2t) =
                    (transposed_f16(&model.w1, INPUTS, HIDDEN), transposed_f16(&model.w2, HIDDEN, CLASSES));
                upload(
                    device,
                    queue,
                    [
                        bytemuck::cast_slice(&w1t),
                        bytemuck::cast_slice(&model.b1),
                        bytemuck::cast_slice(&w2t),
                        bytemuck::cast_slice(&model.b2),
                    ],
                )?
            }
        };
        let activation = |index: u32, per_item: u32| {
            BufferRef::slot(index, 0, u64::from(batch * per_item * precision.activation_bytes()))
        };
        let (input, hidden, logits, probabilities, classes) = (
            activation(slot::INPUT, INPUTS),
            activation(slot::HIDDEN, HIDDEN),
            BufferRef::slot_of::<f32>(slot::LOGITS, 0, u64::from(batch * CLASSES)),
            BufferRef::slot_of::<f32>(slot::PROBABILITIES, 0, u64::from(batch * CLASSES)),
            BufferRef::slot_of::<u32>(slot::CLASSES, 0, u64::from(batch)),
        );
        let mut program = device.create_command_buffer(CommandBufferUsage::Reusable)?;
        let layers = [
            (&hidden_kernel, [hidden, input], [&weights[0], &weights[1]], [batch, INPUTS, HIDDEN], true),
            (&logits_kernel, [logits, hidden], [&weights[2], &weights[3]], [batch, HIDDEN, CLASSES], false),
        ];
        for (kernel, activations, layer_weights, shape, relu) in layers {
            record_dense(&mut program, kernel, precision, activations, layer_weights, shape, relu)?;
            program.barrier()?;
        }
        // One 32-lane workgroup per row.
        let softmax_bindings = [probabilities, logits];
        let rows = [batch, CLASSES];
        let softmax_dispatch =
            Dispatch::grid([32 * batch, 1, 1]).workgroup([32, 1, 1]).bindings(&softmax_bindings).constants(&rows);
        program.dispatch(&softmax, &softmax_dispatch)?;
        let argmax_bindings = [classes, logits];
        let argmax_dispatch =
            Dispatch::grid([batch, 1, 1]).workgroup([64, 1, 1]).bindings(&argmax_bindings).constants(&rows);
        program.dispatch(&argmax, &argmax_dispatch)?;
        program.finish()?;
        Ok(Self { program, batch, precision, _weights: weights })
    }
}

/// Device-local buffers holding `arrays`, written through a queue's updates (device-local
/// memory need not be host-visible), uploaded before this returns.
fn upload(device: &Device, queue: &Queue, arrays: [&[u8]; 4]) -> Result<[Buffer; 4], EngineError> {
    let uploaded = device.create_semaphore(0)?;
    let mut buffers = Vec::with_capacity(arrays.len());
    for (index, bytes) in arrays.into_iter().enumerate() {
        let buffer = device.allocate(MemoryKind::DeviceLocal, bytes.len() as u64)?;
        queue.update(&buffer, 0, bytes).signal(uploaded.at(index as u64 + 1)).submit()?;
        buffers.push(buffer);
    }
    uploaded.wait(arrays.len() as u64, std::time::Duration::from_secs(60))?;
    buffers.try_into().map_err(|_| EngineError::InvalidArgument { what: "weights", reason: "four arrays".into() })
}

/// One layer's dispatch: `[out, in]` slots, `[w, b]` weights, `[rows, k, n]`. The f32 and packed
/// f16 kernels take a 16 × 16 workgroup per 16 × 16 block of `out`; the WMMA kernels one wave.
fn record_dense(
    program: &mut CommandBuffer,
    kernel: &Kernel,
    precision: Precision,
    [out, input]: [BufferRef<'_>; 2],
    [w, b]: [&Buffer; 2],
    shape: [u32; 3],
    relu: bool,
) -> Result<(), EngineError> {
    let [rows, k, n] = shape;
    let bindings = [out, input, w.whole().into(), b.whole().into()];
    let f32_constants = [rows, k, n, u32::from(relu)];
    let (grid, workgroup, constants): ([u32; 3], [u16; 3], &[u32]) = match precision {
        Precision::F32 => ([n.div_ceil(16) * 16, rows.div_ceil(16) * 16, 1], [16, 16, 1], &f32_constants),
        Precision::F16 => ([n.div_ceil(16) * 16, rows.div_ceil(16) * 16, 1], [16, 16, 1], &shape),
        Precision::F16Wmma => ([n.div_ceil(16) * 32, rows.div_ceil(16), 1], [32, 1, 1], &shape),
    };
    program.dispatch(kernel, &Dispatch::grid(grid).workgroup(workgroup).bindings(&bindings).constants(constants))
}

/// How [`serve`] runs the test split (the batch size is the [`ForwardPass`]'s).
#[derive(Clone, Copy, Debug)]
pub struct ServeConfig {
    /// Batches in flight per queue.
    pub in_flight: u32,
    /// Passes over the whole test split (each item checked every time).
    pub passes: u32,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self { in_flight: 4, passes: 1 }
    }
}

/// What [`serve`] measured; every item's outputs were checked.
#[derive(Clone, Debug)]
pub struct ServeReport {
    /// Items served (test items × passes).
    pub items: u64,
    /// Items whose class equals their label.
    pub correct: u64,
    /// `correct / items`.
    pub accuracy: f64,
    /// numpy's accuracy on the same items.
    pub reference_accuracy: f64,
    /// The largest distance of a logit from numpy's.
    pub max_logit_error: f32,
    /// Wall time from the first submission to the last batch checked.
    pub elapsed: std::time::Duration,
    /// Host CPU time of the serving thread (writing inputs, submitting, reading back, checking).
    pub host_cpu: std::time::Duration,
    /// Each batch's time from its submission until its semaphore was seen signalled, sorted.
    pub batch_latencies: Vec<std::time::Duration>,
}

impl ServeReport {
    /// Items per second of wall time.
    pub fn items_per_second(&self) -> f64 {
        self.items as f64 / self.elapsed.as_secs_f64()
    }

    /// Host CPU microseconds per item.
    pub fn host_us_per_item(&self) -> f64 {
        self.host_cpu.as_secs_f64() * 1e6 / self.items as f64
    }

    /// The batch latency at `quantile` (0 to 1).
    pub fn latency(&self, quantile: f64) -> std::time::Duration {
        let last = self.batch_latencies.len().saturating_sub(1);
        self.batch_latencies.get((quantile * last as f64).round() as usize).copied().unwrap_or_default()
    }
}

/// Why serving failed: the engine refused, or an output differs from the reference.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// An engine call failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// An item's output is not the reference's.
    #[error("item {item}: {what}")]
    Mismatch {
        /// The test item.
        item: u32,
        /// What differs.
        what: String,
    },
}

/// A batch's buffers on the host-visible heap, and the timeline its executions signal.
struct BatchSlot {
    /// The items and the hidden layer, in the pass's precision.
    activations: [Buffer; 2],
    /// Logits and probabilities.
    outputs: [Buffer<f32>; 2],
    classes: Buffer<u32>,
    done: aqueduct_engine::Semaphore,
    executions: u64,
    /// The first test item of the batch in flight, and when it was submitted.
    in_flight: Option<(u32, std::time::Instant)>,
}

/// Serves the test split through `pass`, its batches spread over `queues` with
/// [`ServeConfig::in_flight`] on each, checking every item: its logits within [`LOGIT_TOLERANCE`] of numpy's, its class the first
/// largest logit, its probabilities summing to 1. The last batch of a pass may be short: its
/// spare rows repeat the pass's first items and are not counted.
pub fn serve(
    device: &Device,
    queues: &[Queue],
    model: &DigitsModel,
    pass: &ForwardPass,
    config: ServeConfig,
) -> Result<ServeReport, ServeError> {
    use std::time::{Duration, Instant};
    const WAIT: Duration = Duration::from_secs(60);
    if queues.is_empty() || config.in_flight == 0 || config.passes == 0 {
        let reason = format!("{} queues, {config:?}: each must be at least 1", queues.len());
        return Err(EngineError::InvalidArgument { what: "serve config", reason }.into());
    }
    let batch = pass.batch;
    let per_item = |count: u32| u64::from(batch * count);
    let activation_bytes = u64::from(pass.precision.activation_bytes());
    // What each item's logits are checked against: numpy's for f32; for f16 the host's own pass
    // over the same quantized model (numpy's model is f32).
    let references: Vec<f32> = match pass.precision {
        Precision::F32 => model.reference_logits.clone(),
        precision => (0..model.items()).flat_map(|item| model.host_logits_in(precision, item)).collect(),
    };
    let tolerance = pass.precision.logit_tolerance();
    let mut slots = (0..queues.len() as u32 * config.in_flight)
        .map(|_| {
            Ok(BatchSlot {
                activations: [
                    device.allocate(MemoryKind::HostVisible, per_item(INPUTS) * activation_bytes)?,
                    device.allocate(MemoryKind::DeviceLocal, per_item(HIDDEN) * activation_bytes)?,
                ],
                outputs: [
                    device.allocate_typed(MemoryKind::HostVisible, per_item(CLASSES))?,
                    device.allocate_typed(MemoryKind::HostVisible, per_item(CLASSES))?,
                ],
                classes: device.allocate_typed(MemoryKind::HostVisible, u64::from(batch))?,
                done: device.create_semaphore(0)?,
                executions: 0,
                in_flight: None,
            })
        })
        .collect::<Result<Vec<_>, EngineError>>()?;
    let items = model.items();
    let mut report = ServeReport {
        items: 0,
        correct: 0,
        accuracy: 0.0,
        reference_accuracy: 0.0,
        max_logit_error: 0.0,
        elapsed: Duration::ZERO,
        host_cpu: Duration::ZERO,
        batch_latencies: Vec::new(),
    };
    let mut reference_correct = 0u64;
    let mut finish = |slot: &mut BatchSlot, report: &mut ServeReport| -> Result<(), ServeError> {
        let Some((first, submitted)) = slot.in_flight.take() else { return Ok(()) };
        slot.done.wait(slot.executions, WAIT)?;
        report.batch_latencies.push(submitted.elapsed());
        let (logits, probabilities, classes) =
            (slot.outputs[0].to_vec()?, slot.outputs[1].to_vec()?, slot.classes.to_vec()?);
        for row in 0..batch.min(items - first) {
            let item = first + row;
            let range = (row * CLASSES) as usize..((row + 1) * CLASSES) as usize;
            let mismatch = |what: String| ServeError::Mismatch { item, what };
            let want = &references[(item * CLASSES) as usize..((item + 1) * CLASSES) as usize];
            for (got, want) in logits[range.clone()].iter().zip(want) {
                let error = (got - want).abs();
                report.max_logit_error = report.max_logit_error.max(error);
                if error.is_nan() || error > tolerance {
                    return Err(mismatch(format!("logit {got}, the reference's {want} ({})", pass.precision.name())));
                }
            }
            let class = classes[row as usize];
            if class != first_largest(&logits[range.clone()]) {
                return Err(mismatch(format!("class {class} is not the first largest of {:?}", &logits[range])));
            }
            let sum: f32 = probabilities[range].iter().sum();
            if (sum - 1.0).abs() > 1e-5 {
                return Err(mismatch(format!("probabilities sum to {sum}")));
            }
            report.items += 1;
            report.correct += u64::from(class == model.test_labels[item as usize]);
            reference_correct += u64::from(model.reference_class(item) == model.test_labels[item as usize]);
        }
        Ok(())
    };
    let (started, cpu_started) = (Instant::now(), aqueduct_engine::thread_cpu_time());
    let mut next_slot = 0usize;
    for _ in 0..config.passes {
        for first in (0..items).step_by(batch as usize) {
            let index = next_slot % slots.len();
            next_slot += 1;
            let slot = &mut slots[index];
            // The slot's last batch must be checked before its buffers take the next.
            finish(slot, &mut report)?;
            let rows: Vec<f32> =
                (0..batch).flat_map(|row| model.input((first + row) % items).iter().copied()).collect();
            match pass.precision {
                Precision::F32 => slot.activations[0].write(0, bytemuck::cast_slice(&rows))?,
                Precision::F16 | Precision::F16Wmma => {
                    slot.activations[0].write(0, bytemuck::cast_slice(&to_f16_bits(&rows)))?;
                }
            }
            slot.executions += 1;
            let ([input, hidden], [logits, probabilities]) = (&slot.activations, &slot.outputs);
            let table = aqueduct_engine::BindingTable::from_bindings(&[
                input.whole(),
                hidden.whole(),
                logits.whole(),
                probabilities.whole(),
                slot.classes.whole(),
            ])?;
            let queue = &queues[index % queues.len()];
            queue.execute(&pass.program, &table).signal(slot.done.at(slot.executions)).submit()?;
            slot.in_flight = Some((first, Instant::now()));
        }
    }
    for slot in &mut slots {
        finish(slot, &mut report)?;
    }
    report.elapsed = started.elapsed();
    report.host_cpu = aqueduct_engine::thread_cpu_time() - cpu_started;
    report.batch_latencies.sort_unstable();
    report.accuracy = report.correct as f64 / report.items as f64;
    report.reference_accuracy = reference_correct as f64 / report.items as f64;
    Ok(report)
}
