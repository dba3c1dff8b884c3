//! The command-buffer shapes: recording, executing a prebuilt chain, the extra cost of recording per
//! execution, and the CLIP-shaped program at several concurrencies. All run on retire-only soft
//! queues (host cost) and check that every execution's semaphore was reached.
//!
//! The workloads are public so the criterion benches measure exactly the same programs.

use std::time::{Duration, Instant};

use aqueduct_engine::{
    BindingTable, BlockProcessing, Buffer, BufferRef, CommandBuffer, CommandBufferUsage, Device, Dispatch, EngineError,
    Kernel, MemoryKind, Queue, Semaphore, thread_cpu_time,
};
use aqueduct_soft_hsa::ExecutionMode;

use super::kernels::bench_code_object;
use super::measure::Sample;

const WAIT: Duration = Duration::from_secs(60);
/// Dispatch-chain lengths of the `cb/…` shapes.
pub const CHAIN_LENGTHS: [u64; 7] = [1, 16, 64, 128, 256, 512, 5000];
/// Chain lengths of the `cb/device/…` shapes (processed on the device).
pub const DEVICE_CHAIN_LENGTHS: [u64; 6] = [16, 64, 128, 256, 512, 5000];
/// Chain lengths of the `cb/e2e/{host,device}/…` shapes: around the rule that sends a program of
/// `DEVICE_MIN_PACKETS` (256) or more to the device, to measure where the two paths cross.
pub const END_TO_END_LENGTHS: [u64; 5] = [16, 64, 128, 256, 512];
/// The CLIP-shaped program: dispatches per item.
pub const CLIP_DISPATCHES: usize = 792;
/// The CLIP-shaped program: distinct executables (loads of the bench code object).
pub const CLIP_EXECUTABLES: usize = 28;
/// Executions each queue keeps in flight.
pub const CLIP_DEPTH: usize = 16;
/// Queues that run the CLIP-shaped program at once, one `clip/…` shape each.
pub const CLIP_CONCURRENCY: [usize; 4] = [1, 2, 4, 8];
/// Binding-table slots an item's activations use.
const CLIP_SLOTS: u32 = 4;

/// What the programs are recorded from.
pub struct Materials {
    /// The device everything is made on.
    pub device: Device,
    /// `tiny` from each of the [`CLIP_EXECUTABLES`] loads of the bench code object.
    tiny: Vec<Kernel>,
    weights: Buffer,
    activations: Buffer,
}

/// Queues, kernels and programs of the command-buffer shapes.
pub struct CommandBufferRig {
    /// What the programs are recorded from.
    pub materials: Materials,
    /// Retire-only queues, one per CLIP concurrency lane (host processing: a retire-only queue
    /// runs no kernel, the block processor included).
    queues: Vec<Queue>,
    /// Queues that run kernels (the soft runtime's default mode), one per CLIP lane: where
    /// executions are processed on the device, and the end-to-end shapes.
    running_queues: Vec<Queue>,
    /// Prebuilt static chains, by length, processed by the host and by the device.
    chains: Vec<(u64, CommandBuffer)>,
    device_chains: Vec<(u64, CommandBuffer)>,
    clip: CommandBuffer,
    clip_device: CommandBuffer,
    /// The 512-dispatch chain processed on the device, every dispatch writing binding slot 0.
    bound_chain: CommandBuffer,
    /// Two tables for slot 0: `cb/device/new-table/512` alternates them, `same-table` keeps the first.
    bound_tables: [BindingTable; 2],
    /// Executions of `cb/device/new-table/512` so far (which table is next).
    bound_turn: std::sync::atomic::AtomicUsize,
}

fn mismatch(what: &str, expected: impl std::fmt::Debug, found: impl std::fmt::Debug) -> EngineError {
    EngineError::InvalidArgument {
        what: "benchmark result",
        reason: format!("{what}: expected {expected:?}, found {found:?}"),
    }
}

impl CommandBufferRig {
    /// Makes the retire-only queues and the materials, and records the static chains and the
    /// CLIP-shaped program.
    pub fn new(device: Device) -> Result<Self, EngineError> {
        let queues = (0..CLIP_CONCURRENCY[CLIP_CONCURRENCY.len() - 1])
            .map(|_| {
                let queue = device.create_queue()?;
                super::set_soft_mode(&queue, ExecutionMode::RetireOnly)?;
                Ok(queue)
            })
            .collect::<Result<Vec<_>, EngineError>>()?;
        let running_queues = (0..CLIP_CONCURRENCY[CLIP_CONCURRENCY.len() - 1])
            .map(|_| device.create_queue())
            .collect::<Result<_, _>>()?;
        let code_object = bench_code_object(&device)?;
        let tiny = (0..CLIP_EXECUTABLES)
            .map(|_| device.load_executable(code_object)?.kernel("tiny"))
            .collect::<Result<Vec<_>, _>>()?;
        let weights = device.allocate(MemoryKind::DeviceLocal, 64 * 1024)?;
        let activations = device.allocate(MemoryKind::DeviceLocal, 4 * 1024 * 1024)?;
        let materials = Materials { device, tiny, weights, activations };
        let chains = |lengths: &[u64], processing| {
            lengths
                .iter()
                .map(|&length| Ok((length, materials.record_chain(length, CommandBufferUsage::Reusable, processing)?)))
                .collect::<Result<Vec<_>, EngineError>>()
        };
        let (chains, device_chains) =
            (chains(&CHAIN_LENGTHS, BlockProcessing::Host)?, chains(&DEVICE_CHAIN_LENGTHS, BlockProcessing::Device)?);
        let clip = materials.record_clip(BlockProcessing::Host)?;
        let clip_device = materials.record_clip(BlockProcessing::Device)?;
        let bound_chain = materials.record_bound_chain(BOUND_CHAIN_LENGTH)?;
        let table = |offset| BindingTable::from_bindings(&[materials.activations.range(offset, 64)]);
        let bound_tables = [table(0)?, table(64)?];
        Ok(Self {
            materials,
            queues,
            running_queues,
            chains,
            device_chains,
            clip,
            clip_device,
            bound_chain,
            bound_tables,
            bound_turn: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    fn chain(&self, length: u64) -> Result<&CommandBuffer, EngineError> {
        Self::find(&self.chains, length)
    }

    fn find(chains: &[(u64, CommandBuffer)], length: u64) -> Result<&CommandBuffer, EngineError> {
        chains
            .iter()
            .find(|(n, _)| *n == length)
            .map(|(_, cb)| cb)
            .ok_or_else(|| mismatch("prebuilt chain", CHAIN_LENGTHS, length))
    }

    /// One binding table per in-flight item: distinct activation ranges.
    fn clip_tables(&self, lane: usize) -> Result<Vec<BindingTable>, EngineError> {
        (0..CLIP_DEPTH)
            .map(|item| {
                let base = 64 * 1024 + ((lane * CLIP_DEPTH + item) as u64) * 64 * u64::from(CLIP_SLOTS);
                let bindings: Vec<_> = (0..u64::from(CLIP_SLOTS))
                    .map(|slot| self.materials.activations.range(base + 64 * slot, 64))
                    .collect();
                BindingTable::from_bindings(&bindings)
            })
            .collect()
    }
}

impl Materials {
    /// `length` tiny dispatches with static bindings, each behind a barrier: every dispatch is
    /// prepublished when reusable.
    ///
    /// Never inlined: `scripts/stage-instructions.sh` counts `cb/record/N` from this frame.
    #[inline(never)]
    pub fn record_chain(
        &self,
        length: u64,
        usage: CommandBufferUsage,
        processing: BlockProcessing,
    ) -> Result<CommandBuffer, EngineError> {
        self.chain_writing(BufferRef::Static(self.activations.range(0, 4)), length, usage, processing)
    }

    /// `length` tiny dispatches processed on the device, each writing binding slot 0: the
    /// execution's binding table has one slot.
    pub fn record_bound_chain(&self, length: u64) -> Result<CommandBuffer, EngineError> {
        let out = BufferRef::slot(0, 0, 4);
        self.chain_writing(out, length, CommandBufferUsage::Reusable, BlockProcessing::Device)
    }

    /// `length` tiny dispatches writing `out` and reading static weights, each behind a barrier.
    fn chain_writing(
        &self,
        out: BufferRef,
        length: u64,
        usage: CommandBufferUsage,
        processing: BlockProcessing,
    ) -> Result<CommandBuffer, EngineError> {
        let mut cb = self.device.create_command_buffer(usage)?;
        cb.set_processing(processing);
        let bindings = [out, BufferRef::Static(self.weights.range(0, 4))];
        let dispatch = Dispatch::grid([1, 1, 1]).workgroup([1, 1, 1]).bindings(&bindings).constants(&[1, 2]);
        for _ in 0..length {
            cb.dispatch(&self.tiny[0], &dispatch)?;
            cb.barrier()?;
        }
        cb.finish()?;
        Ok(cb)
    }

    /// 792 dispatches over 28 executables, layer after layer: three of four read static weights
    /// and write a dynamic activation slot (patched template), every fourth is all static
    /// (prepublished).
    pub fn record_clip(&self, processing: BlockProcessing) -> Result<CommandBuffer, EngineError> {
        let mut cb = self.device.create_command_buffer(CommandBufferUsage::Reusable)?;
        cb.set_processing(processing);
        for index in 0..CLIP_DISPATCHES {
            let slot = index as u32 % CLIP_SLOTS;
            let weights = BufferRef::Static(self.weights.range(64 * (index as u64 % 256), 4));
            let out = if index % 4 == 3 {
                BufferRef::Static(self.activations.range(64 * index as u64, 4))
            } else {
                BufferRef::slot(slot, 0, 4)
            };
            let bindings = [out, weights];
            let constants = [index as u32, 1];
            let dispatch = Dispatch::grid([1, 1, 1]).workgroup([1, 1, 1]).bindings(&bindings).constants(&constants);
            cb.dispatch(&self.tiny[index % CLIP_EXECUTABLES], &dispatch)?;
            cb.barrier()?;
        }
        cb.finish()?;
        Ok(cb)
    }
}

/// `cb/record/N`: recording N dispatches and finishing the program.
pub fn record(rig: &CommandBufferRig, length: u64) -> Result<Sample, EngineError> {
    let (wall, cpu) = (Instant::now(), thread_cpu_time());
    let cb = rig.materials.record_chain(length, CommandBufferUsage::Reusable, BlockProcessing::Host)?;
    let sample = Sample { wall: wall.elapsed(), host_cpu: thread_cpu_time() - cpu };
    let dispatches = cb.facts().map_or(0, |facts| u64::from(facts.dispatches));
    if dispatches != length {
        return Err(mismatch("recorded dispatches", length, dispatches));
    }
    Ok(sample)
}

/// Executes `cb` once on `queue`, timing the submission, then waits for it.
fn timed_execute(
    queue: &Queue,
    cb: &CommandBuffer,
    table: &BindingTable,
    done: &Semaphore,
    value: u64,
) -> Result<Sample, EngineError> {
    let (wall, cpu) = (Instant::now(), thread_cpu_time());
    queue.execute(cb, table).signal(done.at(value)).submit()?;
    let sample = Sample { wall: wall.elapsed(), host_cpu: thread_cpu_time() - cpu };
    done.wait(value, WAIT)?;
    Ok(sample)
}

/// `cb/static/N`: executing a prebuilt N-dispatch chain (host cost of `execute`).
pub fn execute_static(rig: &CommandBufferRig, length: u64) -> Result<Sample, EngineError> {
    let done = rig.materials.device.create_semaphore(0)?;
    timed_execute(&rig.queues[0], rig.chain(length)?, &BindingTable::default(), &done, 1)
}

/// `cb/device/N`: executing a prebuilt N-dispatch chain processed on the device: the host's cost
/// per execution (one dispatch and the binding table), whatever N.
pub fn device_static(rig: &CommandBufferRig, length: u64) -> Result<Sample, EngineError> {
    let done = rig.materials.device.create_semaphore(0)?;
    let cb = CommandBufferRig::find(&rig.device_chains, length)?;
    timed_execute(&rig.running_queues[0], cb, &BindingTable::default(), &done, 1)
}

/// Dispatches of the chain the `cb/device/{same,new}-table/…` shapes execute.
pub const BOUND_CHAIN_LENGTH: u64 = 512;

/// `cb/device/same-table/512` and `cb/device/new-table/512`: the host's cost per execution of a
/// device-processed chain whose dispatches write binding slot 0, executed with the same table
/// each time (the target's newest table is reused, nothing written) or with one of two tables
/// in turn (a new table written each time).
pub fn device_bound(rig: &CommandBufferRig, new_table: bool) -> Result<Sample, EngineError> {
    let done = rig.materials.device.create_semaphore(0)?;
    let turn = if new_table { rig.bound_turn.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 2 } else { 0 };
    timed_execute(&rig.running_queues[0], &rig.bound_chain, &rig.bound_tables[turn], &done, 1)
}

/// `cb/e2e/{host,device}/N`: one execution of the N-dispatch chain, submitted and waited for, on
/// a queue that runs the kernels: wall time is the end-to-end latency.
pub fn end_to_end(rig: &CommandBufferRig, length: u64, device: bool) -> Result<Sample, EngineError> {
    let done = rig.materials.device.create_semaphore(0)?;
    let cb = if device { CommandBufferRig::find(&rig.device_chains, length)? } else { rig.chain(length)? };
    let (wall, cpu) = (Instant::now(), thread_cpu_time());
    rig.running_queues[0].execute(cb, &BindingTable::default()).signal(done.at(1)).submit()?;
    done.wait(1, WAIT)?;
    Ok(Sample { wall: wall.elapsed(), host_cpu: thread_cpu_time() - cpu })
}

/// Executions of the prebuilt chain `dynamic_extra` subtracts the fastest of.
const PREBUILT_BASELINES: u64 = 3;

/// `cb/dynamic_extra/N`: recording, finishing and executing a fresh one-shot chain, minus
/// executing the prebuilt one, both in this repetition. The prebuilt execution is the fastest of
/// `PREBUILT_BASELINES`: one preempted baseline made the difference 0 (a quick run in CI
/// reported `cb/dynamic_extra/1` at 0 ns).
pub fn dynamic_extra(rig: &CommandBufferRig, length: u64) -> Result<Sample, EngineError> {
    let done = rig.materials.device.create_semaphore(0)?;
    let table = BindingTable::default();
    let mut prebuilt = Sample { wall: Duration::MAX, host_cpu: Duration::MAX };
    for value in 1..=PREBUILT_BASELINES {
        let sample = timed_execute(&rig.queues[0], rig.chain(length)?, &table, &done, value)?;
        prebuilt = Sample { wall: prebuilt.wall.min(sample.wall), host_cpu: prebuilt.host_cpu.min(sample.host_cpu) };
    }
    let (wall, cpu) = (Instant::now(), thread_cpu_time());
    let cb = rig.materials.record_chain(length, CommandBufferUsage::OneShot, BlockProcessing::Host)?;
    let last = PREBUILT_BASELINES + 1;
    rig.queues[0].execute(&cb, &table).signal(done.at(last)).submit()?;
    let dynamic = Sample { wall: wall.elapsed(), host_cpu: thread_cpu_time() - cpu };
    done.wait(last, WAIT)?;
    Ok(Sample {
        wall: dynamic.wall.saturating_sub(prebuilt.wall),
        host_cpu: dynamic.host_cpu.saturating_sub(prebuilt.host_cpu),
    })
}

/// `clip/cCdD`: `concurrency` threads, each on its own queue, each keeping [`CLIP_DEPTH`]
/// executions of the CLIP-shaped program in flight for `items` items. Wall time runs from the
/// common start to the last submission; CPU time is what submission costs: summed over the
/// submitting threads, without the CPU their host waits for a free slot spent (a wait spins
/// before it parks, and that is not submission).
///
/// With `device`, the executions are processed on the device, on queues that run kernels.
pub fn clip(rig: &CommandBufferRig, concurrency: usize, items: u64, device: bool) -> Result<Sample, EngineError> {
    let start = std::sync::Barrier::new(concurrency);
    let (queues, program) = if device { (&rig.running_queues, &rig.clip_device) } else { (&rig.queues, &rig.clip) };
    type Lane = Result<(Instant, Instant, Duration), EngineError>;
    let results: Vec<Lane> = std::thread::scope(|scope| {
        let workers: Vec<_> = queues[..concurrency]
            .iter()
            .enumerate()
            .map(|(lane, queue)| {
                let start = &start;
                scope.spawn(move || -> Lane {
                    let tables = rig.clip_tables(lane)?;
                    let done = rig.materials.device.create_semaphore(0)?;
                    start.wait();
                    let (began, cpu) = (Instant::now(), thread_cpu_time());
                    let mut waiting = Duration::ZERO;
                    for item in 1..=items {
                        if item > CLIP_DEPTH as u64 {
                            let before = thread_cpu_time();
                            done.wait(item - CLIP_DEPTH as u64, WAIT)?;
                            waiting += thread_cpu_time().saturating_sub(before);
                        }
                        queue.execute(program, &tables[item as usize % CLIP_DEPTH]).signal(done.at(item)).submit()?;
                    }
                    let (ended, cpu) = (Instant::now(), (thread_cpu_time() - cpu).saturating_sub(waiting));
                    done.wait(items, WAIT)?;
                    Ok((began, ended, cpu))
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().unwrap_or_else(|_| Err(mismatch("clip worker", "no panic", "panic"))))
            .collect()
    });
    let results = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let began = results.iter().map(|result| result.0).min().unwrap_or_else(Instant::now);
    let ended = results.iter().map(|result| result.1).max().unwrap_or(began);
    Ok(Sample { wall: ended - began, host_cpu: results.iter().map(|result| result.2).sum() })
}
