//! The command-buffer shapes: recording, static replay, the extra cost of recording per
//! execution, and the CLIP-shaped program at several concurrencies. All run on retire-only soft
//! queues (host cost) and check that every execution's semaphore was reached.
//!
//! The workloads are public so the criterion benches measure exactly the same programs.

use std::time::{Duration, Instant};

use aqueduct_engine::{
    BindingTable, Buffer, BufferRef, CommandBuffer, CommandBufferUsage, Device, Dispatch, EngineError, Kernel,
    MemoryKind, Queue, Semaphore, thread_cpu_time,
};
use aqueduct_hsa::soft::ExecutionMode;

use super::kernels::BENCH_CODE_OBJECT;
use super::measure::Sample;

const WAIT: Duration = Duration::from_secs(60);
/// Dispatch-chain lengths of the `cb/…` shapes.
pub const CHAIN_LENGTHS: [u64; 4] = [1, 16, 512, 5000];
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
    /// Retire-only queues, one per CLIP concurrency lane.
    queues: Vec<Queue>,
    /// Prebuilt static chains, by length.
    chains: Vec<(u64, CommandBuffer)>,
    clip: CommandBuffer,
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
        let tiny = (0..CLIP_EXECUTABLES)
            .map(|_| device.load_executable(BENCH_CODE_OBJECT)?.kernel("tiny"))
            .collect::<Result<Vec<_>, _>>()?;
        let weights = device.allocate(MemoryKind::DeviceLocal, 64 * 1024)?;
        let activations = device.allocate(MemoryKind::DeviceLocal, 4 * 1024 * 1024)?;
        let materials = Materials { device, tiny, weights, activations };
        let chains = CHAIN_LENGTHS
            .iter()
            .map(|&length| Ok((length, materials.record_chain(length, CommandBufferUsage::Reusable)?)))
            .collect::<Result<_, EngineError>>()?;
        let clip = materials.record_clip()?;
        Ok(Self { materials, queues, chains, clip })
    }

    fn chain(&self, length: u64) -> Result<&CommandBuffer, EngineError> {
        self.chains
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
    pub fn record_chain(&self, length: u64, usage: CommandBufferUsage) -> Result<CommandBuffer, EngineError> {
        let mut cb = self.device.create_command_buffer(usage)?;
        let bindings = [BufferRef::Static(self.activations.range(0, 4)), BufferRef::Static(self.weights.range(0, 4))];
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
    pub fn record_clip(&self) -> Result<CommandBuffer, EngineError> {
        let mut cb = self.device.create_command_buffer(CommandBufferUsage::Reusable)?;
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
    let cb = rig.materials.record_chain(length, CommandBufferUsage::Reusable)?;
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

/// `cb/static/N`: replaying a prebuilt N-dispatch chain (host cost of `execute`).
pub fn replay_static(rig: &CommandBufferRig, length: u64) -> Result<Sample, EngineError> {
    let done = rig.materials.device.create_semaphore(0)?;
    timed_execute(&rig.queues[0], rig.chain(length)?, &BindingTable::default(), &done, 1)
}

/// Executions of the prebuilt chain `dynamic_extra` subtracts the fastest of.
const PREBUILT_BASELINES: u64 = 3;

/// `cb/dynamic_extra/N`: recording, finishing and executing a fresh one-shot chain, minus
/// replaying the prebuilt one, both in this repetition. The prebuilt replay is the fastest of
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
    let cb = rig.materials.record_chain(length, CommandBufferUsage::OneShot)?;
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
pub fn clip(rig: &CommandBufferRig, concurrency: usize, items: u64) -> Result<Sample, EngineError> {
    let start = std::sync::Barrier::new(concurrency);
    type Lane = Result<(Instant, Instant, Duration), EngineError>;
    let results: Vec<Lane> = std::thread::scope(|scope| {
        let workers: Vec<_> = rig.queues[..concurrency]
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
                        queue.execute(&rig.clip, &tables[item as usize % CLIP_DEPTH]).signal(done.at(item)).submit()?;
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
