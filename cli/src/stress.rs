//! `aqueduct stress`: threads submit every kind of operation to several queues with random
//! cross-queue waits, host-signalled gates and injected failures, then every result and every
//! semaphore is checked.
//!
//! The work is split into *chains*, as many as the larger of threads and queues: chain `l` runs on
//! queue `l % queues`, driven by thread `l % threads`, so threads can share a queue and a thread
//! can drive several. Step `v` of chain `l` owns one word of the chain's log and one semaphore of
//! its own, and (unless it is doomed, below) signals the chain's timeline to `v`.
//!
//! What makes a result checkable: every step leaves a value the submitting thread knew when it
//! submitted, `expected[l][v]`. A step that reads another chain's word (a dispatch that waits on
//! it) adds the difference between that word's expected value and its own, so its result is right
//! only if the step it read really finished first. Barriers leave their word at 0.
//!
//! Failures: a *doomed* step also waits on a semaphore that fails, from the host or (on the soft
//! runtime) from a kernel fault injected on a queue of its own. It must not run, and its
//! semaphore must carry the original failure record. It signals only that semaphore, and
//! nothing waits on it, so the failure stays contained. A chain's last step is never doomed, so
//! every timeline reaches its end.

use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use aqueduct_engine::{
    BindingTable, Buffer, BufferRef, CommandBuffer, CommandBufferUsage, Device, Dispatch, Engine, EngineConfig,
    EngineError, Kernel, MAX_SEMAPHORES, MemoryKind, Queue, Semaphore, SemaphorePoint, WaitStrategy, wait_all,
};
use aqueduct_soft_hsa::{ExecutionMode, Fault};
use serde::Serialize;

use crate::bench::kernels::bench_code_object;

/// The status an injected kernel fault fails its queue with (HSA_STATUS_ERROR_EXCEPTION).
const KERNEL_FAULT_STATUS: u32 = 0x1016;
/// How long the end of a round waits for the work to finish before it calls the rest lost.
/// Only a hang reaches it.
const FINISH_TIMEOUT: Duration = Duration::from_secs(300);
/// How long the check waits for the last step's semaphore, whose submission's timeline signal
/// it already saw.
const SIGNAL_GRACE: Duration = Duration::from_secs(1);
/// Descriptions of lost results kept for the report (all are counted).
const LOST_SHOWN: usize = 20;
/// A chain's steps must fit below its chain bits in a log word.
const MAX_STEPS_PER_CHAIN: u64 = 1 << 24;

/// What a stress run does: its shape, its length and its failure rate.
#[derive(Clone, Debug)]
pub struct StressOptions {
    /// Submitting threads.
    pub threads: usize,
    /// Queues the chains run on.
    pub queues: usize,
    /// Submissions per round, over all chains.
    pub submissions: u64,
    /// Seed of the first round's random choices.
    pub seed: u64,
    /// Repeat rounds (seed, seed + 1, ...) until this much time has passed; one round if `None`.
    pub duration: Option<Duration>,
    /// Wait strategies to run, each in turn on a device of its own.
    pub strategies: Vec<WaitStrategy>,
    /// One step in this many is doomed; 0 injects no failures.
    pub failure_every: u64,
    /// Steps a chain may run ahead of its own completed work (0: unbounded). Unbounded, the
    /// submitters outrun the device and nearly everything parks behind parked producers; a
    /// window keeps most waits resolvable on the device.
    pub window: u64,
    /// The device spec (`auto`, `soft`, `amdgpu`, ...), as [`DeviceSpec`](aqueduct_engine::DeviceSpec) parses it.
    pub device: String,
    /// A soak: each round draws its own shape (threads, queues, window, failure rate, and up to
    /// `submissions`), and a device keeps queues across rounds, dropping some and making new
    /// ones; strategies take turns by device, and `duration` bounds the whole run.
    pub soak: bool,
}

impl Default for StressOptions {
    fn default() -> Self {
        Self {
            threads: 4,
            queues: 4,
            submissions: 100_000,
            seed: 1,
            duration: None,
            strategies: vec![WaitStrategy::BarrierValue, WaitStrategy::BarrierAnd],
            failure_every: 500,
            window: 16,
            device: "auto".into(),
            soak: false,
        }
    }
}

/// Operations submitted, by kind.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct OperationCounts {
    /// A dispatch reading another chain's word, after waiting for it.
    pub cross_dispatch: u64,
    /// A dispatch reading the chain's previous word (queue order alone orders it).
    pub chained_dispatch: u64,
    /// A dispatch storing the step's value, reading nothing the chain wrote.
    pub store_dispatch: u64,
    /// A fill of the step's word.
    pub fill: u64,
    /// An update of the step's word from the host.
    pub update: u64,
    /// A copy into the step's word.
    pub copy: u64,
    /// A command-buffer execution copying into the step's word through a binding table.
    pub command_buffer: u64,
    /// A barrier (the step's word stays 0).
    pub barrier: u64,
}

impl OperationCounts {
    fn add(&mut self, other: &Self) {
        self.cross_dispatch += other.cross_dispatch;
        self.chained_dispatch += other.chained_dispatch;
        self.store_dispatch += other.store_dispatch;
        self.fill += other.fill;
        self.update += other.update;
        self.copy += other.copy;
        self.command_buffer += other.command_buffer;
        self.barrier += other.barrier;
    }
}

/// What one wait strategy held, over its rounds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StrategyReport {
    /// The wait strategy's name.
    pub strategy: String,
    /// Rounds run.
    pub rounds: u64,
    /// Submissions over every round.
    pub submissions: u64,
    /// From the first submission of each round to the completion of its last, summed.
    pub seconds: f64,
    /// `submissions / seconds`.
    pub submissions_per_second: f64,
    /// Submissions by kind.
    pub operations: OperationCounts,
    /// Waits on other chains and the chain's own earlier steps.
    pub waits: u64,
    /// Submissions that waited on a gate the host signalled after submitting them.
    pub host_gated: u64,
    /// Device-side wait barriers the queues published.
    pub device_waits: u64,
    /// Submissions that parked before they could be admitted.
    pub parked: u64,
    /// The most submissions parked on one queue at once.
    pub max_parked: u64,
    /// Doomed steps whose extra wait the host failed.
    pub host_failures_injected: u64,
    /// Doomed steps whose extra wait a kernel fault failed (injected on a queue of its own, on
    /// the soft runtime).
    pub kernel_faults_injected: u64,
    /// Injected failures that reached the doomed step's semaphore with their original record.
    pub failures_surfaced: u64,
    /// Doomed steps already published behind a device-side wait on the faulting queue: the
    /// fault releases such a wait, so they ran, and their semaphores failed all the same.
    pub doomed_ran: u64,
    /// Results, semaphores, failures or objects that were not what they must be: must be 0.
    pub lost: u64,
    /// Descriptions of the first lost results (at most 20).
    pub lost_examples: Vec<String>,
}

/// What a stress run found, per wait strategy.
#[derive(Clone, Debug, Serialize)]
pub struct StressReport {
    /// The HSA provider the run used (`soft` or `rocr`).
    pub provider: String,
    /// Submitting threads.
    pub threads: usize,
    /// Queues the chains ran on.
    pub queues: usize,
    /// Chains: the larger of threads and queues.
    pub chains: usize,
    /// Seed of the first round.
    pub seed: u64,
    /// Whether rounds drew their own shapes (a soak); `threads` and `queues` are then unused.
    pub soak: bool,
    /// One report per wait strategy, in the order run.
    pub strategies: Vec<StrategyReport>,
}

impl StressReport {
    /// Lost results over every strategy: must be 0.
    pub fn lost(&self) -> u64 {
        self.strategies.iter().map(|strategy| strategy.lost).sum()
    }
}

/// One round's shape: the options' own, or, in a soak, drawn afresh each round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RoundShape {
    /// Submitting threads.
    pub threads: usize,
    /// Queues the chains run on.
    pub queues: usize,
    /// Submissions over all chains.
    pub submissions: u64,
    /// Steps a chain may run ahead of its own completed work (0: unbounded).
    pub window: u64,
    /// One step in this many is doomed; 0 injects no failures.
    pub failure_every: u64,
}

/// The most threads and queues a soak round draws.
const SOAK_MAX_CHAINS: u64 = 8;
/// The most submissions a short soak round draws.
const SOAK_SHORT_ROUND: u64 = 400;
/// Failure rates a soak round draws from (0: none).
const SOAK_FAILURE_RATES: [u64; 10] = [0, 1, 2, 3, 4, 5, 7, 10, 50, 500];
/// Queue indices a soak device hands out before the soak opens another (a device has 64, never
/// reused; kernel faults take the rest as victims, and fall back to host failures when none is
/// left).
const SOAK_QUEUE_BUDGET: usize = 40;

impl RoundShape {
    fn of(options: &StressOptions) -> Self {
        Self {
            threads: options.threads,
            queues: options.queues,
            submissions: options.submissions,
            window: options.window,
            failure_every: options.failure_every,
        }
    }

    /// A soak round's shape: 1 to 8 threads and queues, a window of 0 to 8, a failure rate from
    /// [`SOAK_FAILURE_RATES`], and from 2 steps a chain up to `max_submissions`.
    fn draw(rng: &mut Xorshift, max_submissions: u64) -> Self {
        let threads = 1 + rng.below(SOAK_MAX_CHAINS) as usize;
        let queues = 1 + rng.below(SOAK_MAX_CHAINS) as usize;
        let least = 2 * threads.max(queues) as u64;
        // Short rounds half the time: the losses rounds in quick succession found (issue 29)
        // need many of them.
        let most = if rng.below(2) == 0 { max_submissions.min(SOAK_SHORT_ROUND) } else { max_submissions };
        Self {
            threads,
            queues,
            submissions: least + rng.below(most.saturating_sub(least).max(1)),
            window: rng.below(9),
            failure_every: SOAK_FAILURE_RATES[rng.below(SOAK_FAILURE_RATES.len() as u64) as usize],
        }
    }

    fn chains(&self) -> usize {
        self.threads.max(self.queues)
    }

    fn steps(&self) -> u64 {
        self.submissions / self.chains() as u64
    }

    /// Each step's semaphore, each chain's timeline and gate, each doomed step's extra one.
    fn semaphores(&self) -> u64 {
        let doomed = self.submissions.checked_div(self.failure_every).unwrap_or(0);
        (self.submissions + 3 * self.chains() as u64 + doomed + 64).next_power_of_two()
    }

    fn check(&self) -> Result<(), EngineError> {
        let invalid = |reason: String| EngineError::InvalidArgument { what: "stress options", reason };
        if self.threads == 0 || self.queues == 0 {
            return Err(invalid("threads and queues must be at least 1".into()));
        }
        if !(2..MAX_STEPS_PER_CHAIN).contains(&self.steps()) {
            return Err(invalid(format!(
                "{} submissions over {} chains: each chain needs 2 to {} steps",
                self.submissions,
                self.chains(),
                MAX_STEPS_PER_CHAIN - 1
            )));
        }
        if self.semaphores() > MAX_SEMAPHORES as u64 {
            return Err(invalid(format!(
                "{} submissions need {} semaphores, above the device's {MAX_SEMAPHORES}: run fewer per round, \
                 and --minutes for longer",
                self.submissions,
                self.semaphores()
            )));
        }
        Ok(())
    }
}

/// A device the rounds run on, with the queues a soak keeps between rounds.
struct RoundDevice {
    device: Device,
    strategy: WaitStrategy,
    /// Queues kept from the last round, to be reused or dropped.
    queues: Vec<Queue>,
    /// Queue indices handed out so far (a device never reuses one).
    queues_made: usize,
}

impl RoundDevice {
    fn open(options: &StressOptions, strategy: WaitStrategy, semaphores: u64) -> Result<Self, EngineError> {
        let engine = Engine::with_config(EngineConfig {
            device: options.device.parse()?,
            wait_strategy: strategy,
            semaphore_capacity: semaphores as usize,
            ..EngineConfig::default()
        })?;
        let device = engine.device().clone();
        bench_code_object(&device)?;
        Ok(Self { device, strategy, queues: Vec::new(), queues_made: 0 })
    }

    /// The round's queues: some of the kept ones (the rest are dropped), then new ones.
    fn queues_for(&mut self, shape: &RoundShape, rng: &mut Xorshift) -> Result<Vec<Queue>, EngineError> {
        let keep = (rng.below(shape.queues as u64 + 1) as usize).min(self.queues.len());
        self.queues.truncate(keep);
        while self.queues.len() < shape.queues {
            self.queues.push(stress_queue(&self.device)?);
            self.queues_made += 1;
        }
        Ok(self.queues.clone())
    }
}

/// Runs the stress: every strategy in turn, each for one round or for `options.duration`; or,
/// with `options.soak`, rounds of drawn shapes for `options.duration` in all, each device's
/// strategy taken in turn. `progress(strategy, round, submissions so far)` is called after each
/// round.
pub fn run(options: &StressOptions, mut progress: impl FnMut(&str, u64, u64)) -> Result<StressReport, EngineError> {
    let given = RoundShape::of(options);
    // A soak draws up to `options.submissions` over at most 8 chains, at any failure rate.
    let widest = if options.soak {
        RoundShape { threads: SOAK_MAX_CHAINS as usize, queues: 1, failure_every: 1, ..given }
    } else {
        given
    };
    widest.check()?;
    if options.strategies.is_empty() {
        return Err(EngineError::InvalidArgument { what: "stress options", reason: "no wait strategy".into() });
    }
    let mut report = StressReport {
        provider: String::new(),
        threads: options.threads,
        queues: options.queues,
        chains: given.chains(),
        seed: options.seed,
        soak: options.soak,
        strategies: options
            .strategies
            .iter()
            .map(|strategy| StrategyReport { strategy: format!("{strategy:?}"), ..StrategyReport::default() })
            .collect(),
    };
    let mut rng = Xorshift::new(options.seed);
    let start = Instant::now();
    let mut devices_opened = 0;
    let mut current: Option<RoundDevice> = None;
    let mut rounds = 0u64;
    loop {
        let shape = if options.soak { RoundShape::draw(&mut rng, options.submissions) } else { given };
        // A device per round, except in a soak, which keeps one while it has queue indices left
        // (a device hands out 64, and every kernel fault takes a victim queue of its own).
        let reuse =
            options.soak && current.as_ref().is_some_and(|open| open.queues_made + shape.queues <= SOAK_QUEUE_BUDGET);
        if !reuse {
            drop(current.take()); // the previous device goes first
            let strategy = if options.soak {
                options.strategies[devices_opened % options.strategies.len()]
            } else {
                options.strategies[(rounds as usize) % options.strategies.len()]
            };
            current = Some(RoundDevice::open(options, strategy, widest.semaphores())?);
            devices_opened += 1;
        }
        let open = current.as_mut().expect("a device was just opened");
        report.provider = open.device.provider().to_string();
        let queues = open.queues_for(&shape, &mut rng)?;
        let seed = options.seed.wrapping_add(rounds);
        let mut round = Round::new(&open.device, queues, shape)?.run(seed);
        open.queues_made += round.kernel_faults_injected as usize;
        // Everything the round made went away with its handles, but the queues kept.
        let expected = (open.queues.len(), 0, 0);
        let deadline = Instant::now() + FINISH_TIMEOUT;
        while open.device.live_objects() != expected && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        if open.device.live_objects() != expected {
            round.lose(format!(
                "live objects after the round ended: {:?}, expected {expected:?} ({shape:?})",
                open.device.live_objects()
            ));
        }
        let strategy = open.strategy;
        let total = report
            .strategies
            .iter_mut()
            .find(|total| total.strategy == format!("{strategy:?}"))
            .expect("every strategy has its report");
        total.add(round);
        total.rounds += 1;
        progress(&total.strategy, total.rounds, total.submissions);
        rounds += 1;
        let strategies_done = rounds >= options.strategies.len() as u64;
        let done = match options.duration {
            None => !options.soak && strategies_done,
            Some(duration) => start.elapsed() >= duration && (options.soak || strategies_done),
        };
        if done || (options.soak && options.duration.is_none() && rounds >= SOAK_ROUNDS_WITHOUT_DURATION) {
            break;
        }
    }
    for total in &mut report.strategies {
        total.submissions_per_second = total.submissions as f64 / total.seconds.max(1e-9);
    }
    report.strategies.retain(|total| total.rounds > 0);
    Ok(report)
}

/// Rounds a soak without `--minutes` runs.
pub const SOAK_ROUNDS_WITHOUT_DURATION: u64 = 20;

impl StrategyReport {
    fn add(&mut self, round: StrategyReport) {
        self.submissions += round.submissions;
        self.seconds += round.seconds;
        self.operations.add(&round.operations);
        self.waits += round.waits;
        self.host_gated += round.host_gated;
        self.device_waits += round.device_waits;
        self.parked += round.parked;
        self.max_parked = self.max_parked.max(round.max_parked);
        self.host_failures_injected += round.host_failures_injected;
        self.kernel_faults_injected += round.kernel_faults_injected;
        self.failures_surfaced += round.failures_surfaced;
        self.doomed_ran += round.doomed_ran;
        self.lost += round.lost;
        for example in round.lost_examples {
            if self.lost_examples.len() < LOST_SHOWN {
                self.lost_examples.push(example);
            }
        }
    }

    fn lose(&mut self, what: String) {
        self.lost += 1;
        if self.lost_examples.len() < LOST_SHOWN {
            self.lost_examples.push(what);
        }
    }
}

/// How a doomed step's extra wait fails.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Doom {
    None = 0,
    Host = 1,
    KernelFault = 2,
}

struct Chain {
    queue: Queue,
    timeline: Semaphore,
    /// Host-signalled: a gated step waits on it at a value signalled after it was submitted.
    gate: Semaphore,
    /// `steps[v]` is signalled to 1 by step `v` alone (index 0 unused).
    steps: Vec<Semaphore>,
    /// Word `v` is step `v`'s result.
    log: Buffer,
    /// Word `v` holds `value(chain, v)`, the source of copies.
    source: Buffer,
    expected: Vec<AtomicU32>,
    doomed: Vec<AtomicU8>,
    /// The last step whose submission returned.
    submitted: AtomicU64,
}

/// The value step `v` of chain `chain` leaves: distinct across chains and steps.
fn value(chain: usize, step: u64) -> u32 {
    ((chain as u32) << 24) | step as u32
}

fn word(buffer: &Buffer, index: u64) -> aqueduct_engine::Binding<'_> {
    buffer.range(index * 4, 4)
}

/// A queue of the stress in relaxed mode on the soft runtime, so a missing barrier bit shows.
fn stress_queue(device: &Device) -> Result<Queue, EngineError> {
    let queue = device.create_queue()?;
    crate::bench::set_soft_mode(&queue, ExecutionMode::Relaxed)?;
    Ok(queue)
}

struct Round<'d> {
    device: &'d Device,
    shape: RoundShape,
    chains: Vec<Chain>,
    steps: u64,
    /// `add(out, in, addend, 0)` on one word: `out = in + addend`.
    add: Kernel,
    /// A zero word, the input of a store (`out = 0 + value`).
    zero: Buffer,
    /// Copies binding slot 1 to slot 0: one word.
    copy_slot: CommandBuffer,
}

/// What a worker thread counted.
#[derive(Default)]
struct WorkerCounts {
    operations: OperationCounts,
    waits: u64,
    host_gated: u64,
    host_failures: u64,
    kernel_faults: u64,
    /// Victim queues of kernel faults, with the semaphore each fails: a victim is dropped only
    /// once its fault surfaced, so its teardown never races the fault it carries.
    victims: Vec<(Queue, Semaphore)>,
    /// Submission errors where none was expected.
    errors: Vec<String>,
}

impl<'d> Round<'d> {
    fn new(device: &'d Device, queues: Vec<Queue>, shape: RoundShape) -> Result<Self, EngineError> {
        let steps = shape.steps();
        let chains = (0..shape.chains())
            .map(|chain| {
                let words = (steps + 1) as usize;
                let source = device.allocate(MemoryKind::HostVisible, words as u64 * 4)?;
                let values: Vec<u32> = (0..words as u64).map(|step| value(chain, step)).collect();
                source.write(0, bytemuck::cast_slice(&values))?;
                let log = device.allocate(MemoryKind::HostVisible, words as u64 * 4)?;
                log.write(0, &vec![0; words * 4])?;
                Ok(Chain {
                    queue: queues[chain % queues.len()].clone(),
                    timeline: device.create_semaphore(0)?,
                    gate: device.create_semaphore(0)?,
                    steps: (0..words).map(|_| device.create_semaphore(0)).collect::<Result<_, _>>()?,
                    log,
                    source,
                    expected: (0..words).map(|_| AtomicU32::new(0)).collect(),
                    doomed: (0..words).map(|_| AtomicU8::new(Doom::None as u8)).collect(),
                    submitted: AtomicU64::new(0),
                })
            })
            .collect::<Result<Vec<_>, EngineError>>()?;
        let add = device.load_executable(bench_code_object(device)?)?.kernel("tiny")?;
        let zero = device.allocate(MemoryKind::HostVisible, 4)?;
        zero.write(0, &[0; 4])?;
        let mut copy_slot = device.create_command_buffer(CommandBufferUsage::Reusable)?;
        copy_slot.copy(BufferRef::slot(1, 0, 4), BufferRef::slot(0, 0, 4))?;
        copy_slot.finish()?;
        Ok(Self { device, shape, chains, steps, add, zero, copy_slot })
    }

    fn run(self, seed: u64) -> StrategyReport {
        let start = Instant::now();
        let workers: Vec<WorkerCounts> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..self.shape.threads)
                .map(|thread| {
                    let round = &self;
                    scope.spawn(move || round.drive(thread, seed))
                })
                .collect();
            handles.into_iter().map(|handle| handle.join().expect("a stress thread panicked")).collect()
        });
        let mut report = StrategyReport { submissions: self.steps * self.chains.len() as u64, ..Default::default() };
        for worker in &workers {
            report.operations.add(&worker.operations);
            report.waits += worker.waits;
            report.host_gated += worker.host_gated;
            report.host_failures_injected += worker.host_failures;
            report.kernel_faults_injected += worker.kernel_faults;
            for error in &worker.errors {
                report.lose(error.clone());
            }
        }
        if self.finish(&mut report) {
            // Submission to completion of the last step; verification is not counted.
            report.seconds = start.elapsed().as_secs_f64();
            self.check(&mut report);
        }
        drop(workers); // the victim queues, after their faults surfaced
        report
    }

    /// Thread `thread`'s chains, step by step in turn.
    fn drive(&self, thread: usize, seed: u64) -> WorkerCounts {
        let mine: Vec<usize> = (thread..self.chains.len()).step_by(self.shape.threads).collect();
        let mut rng = Xorshift::new(seed.wrapping_mul(1000).wrapping_add(thread as u64));
        let mut counts = WorkerCounts::default();
        // Per chain: the gate value a submitted step waits on that the host has not signalled.
        let mut gates: Vec<(u64, Option<u64>)> = vec![(0, None); mine.len()];
        for step in 1..=self.steps {
            // A gate held over one step lets the step behind it park too. All are let go before
            // any step of the round, whose window wait may need them.
            for (slot, &chain) in mine.iter().enumerate() {
                if let Some(value) = gates[slot].1.take() {
                    self.signal_gate(chain, value, &mut counts);
                }
            }
            for (slot, &chain) in mine.iter().enumerate() {
                let (next_gate, pending) = &mut gates[slot];
                let gated = self.step(chain, step, &mut rng, &mut counts, next_gate);
                if let Some(value) = gated {
                    if rng.below(2) == 0 {
                        self.signal_gate(chain, value, &mut counts);
                    } else {
                        *pending = Some(value);
                    }
                }
            }
        }
        for (slot, &chain) in mine.iter().enumerate() {
            if let Some(value) = gates[slot].1.take() {
                self.signal_gate(chain, value, &mut counts);
            }
        }
        counts
    }

    fn signal_gate(&self, chain: usize, value: u64, counts: &mut WorkerCounts) {
        if let Err(error) = self.chains[chain].gate.signal(value) {
            counts.errors.push(format!("chain {chain}: gate signal {value}: {error}"));
        }
    }

    /// Submits step `step` of `chain`; returns the gate value it waits on, if it is gated.
    ///
    /// The random draws come in a fixed order (waits, doom, gate, operation), so a seed replays
    /// the same round. The step's `doomed` and `expected` entries are stored before `submitted`
    /// publishes the step to other chains.
    fn step(
        &self,
        me: usize,
        step: u64,
        rng: &mut Xorshift,
        counts: &mut WorkerCounts,
        next_gate: &mut u64,
    ) -> Option<u64> {
        let chain = &self.chains[me];
        let mine = value(me, step);
        self.wait_window(me, step, counts);
        let (mut waited, mut points) = self.draw_waits(me, step, rng);
        let (doom, doom_semaphore) = self.draw_doom(me, step, rng, counts);
        if let Some(semaphore) = &doom_semaphore {
            // The doomed step waits on nothing else. Had it device waits on other chains, later
            // steps on its queue could be covered through what those barriers taught it, and
            // its failure would fail them too: the engine drops everything a failed epoch's
            // barriers brought (docs/RELIABILITY.md, "Known over-failure").
            waited.clear();
            points.clear();
            points.push(semaphore.at(1));
        }
        counts.waits += waited.len() as u64;
        let gate = (doom == Doom::None && rng.below(32) == 0).then(|| {
            *next_gate += 1;
            *next_gate
        });
        if let Some(value) = gate {
            points.push(chain.gate.at(value));
            counts.host_gated += 1;
        }
        let signals_all = [chain.timeline.at(step), chain.steps[step as usize].at(1)];
        // A doomed step signals only its own semaphore: nothing waits on that.
        let signals: &[SemaphorePoint] = if doom == Doom::None { &signals_all } else { &signals_all[1..] };
        chain.doomed[step as usize].store(doom as u8, Ordering::Relaxed);

        let cross = waited.first().copied().filter(|&(other, _)| other != me);
        let (expected, result) = match cross {
            Some((other, at)) => {
                counts.operations.cross_dispatch += 1;
                let read = self.chains[other].expected[at as usize].load(Ordering::Relaxed);
                let (out, input) = (word(&chain.log, step), word(&self.chains[other].log, at));
                (mine, self.add(chain, out, input, mine.wrapping_sub(read), &points, signals))
            }
            None => self.submit_local(me, step, rng, &points, signals, &mut counts.operations),
        };
        chain.expected[step as usize].store(expected, Ordering::Relaxed);
        match (result, doom) {
            (Ok(_), _) => {}
            // The doom may have failed before the submission: refused, its semaphore failed.
            (Err(EngineError::DependencyFailed(_)), Doom::Host | Doom::KernelFault) => {}
            (Err(error), _) => counts.errors.push(format!("chain {me} step {step}: {error}")),
        }
        chain.submitted.store(step, Ordering::Release);
        if doom == Doom::Host {
            let semaphore = doom_semaphore.as_ref().expect("a doomed step has its semaphore");
            semaphore.fail(host_failure_message(me, step));
            counts.host_failures += 1;
        }
        gate
    }

    /// Blocks until step `step - window` of chain `me` finished (or failed, if it was doomed),
    /// once the chain is a window ahead. Writes only `counts.errors`, when the wait went wrong.
    fn wait_window(&self, me: usize, step: u64, counts: &mut WorkerCounts) {
        let chain = &self.chains[me];
        let window = self.shape.window;
        if window > 0 && step > window {
            // Waits for step `step - window` itself, on its own semaphore, which a doomed step
            // fails: the chain's timeline would not do, since a doomed step leaves its value to
            // the next step that signals it, and a run of doomed steps as long as the window
            // then held that step back behind this very wait (issue 29, finding 2).
            let behind = step - window;
            let doomed = chain.doomed[behind as usize].load(Ordering::Relaxed) != Doom::None as u8;
            match chain.steps[behind as usize].wait(1, FINISH_TIMEOUT) {
                Ok(()) => {}
                Err(EngineError::SemaphoreFailed(_)) if doomed => {}
                Err(error) => counts.errors.push(format!("chain {me} step {step}: waiting for step {behind}: {error}")),
            }
        }
    }

    /// Draws the waits of step `step` of chain `me`: the `(chain, step)` pairs it waits on, and
    /// their semaphore points in the same order. Changes nothing but `rng`.
    fn draw_waits(&self, me: usize, step: u64, rng: &mut Xorshift) -> (Vec<(usize, u64)>, Vec<SemaphorePoint<'_>>) {
        let chain = &self.chains[me];
        // Up to two waits on other chains at steps they submitted, never on a doomed one (its
        // semaphore fails, and its timeline value comes only with a later step that may wait on
        // us), and sometimes one on this chain's own earlier step.
        let mut waited: Vec<(usize, u64)> = Vec::new();
        if self.chains.len() > 1 {
            for _ in 0..rng.below(3) {
                let other = (me + 1 + rng.below(self.chains.len() as u64 - 1) as usize) % self.chains.len();
                let latest = self.chains[other].submitted.load(Ordering::Acquire);
                if latest == 0 {
                    continue;
                }
                let at = if rng.below(2) == 0 { latest } else { 1 + rng.below(latest) };
                if self.chains[other].doomed[at as usize].load(Ordering::Relaxed) == Doom::None as u8 {
                    waited.push((other, at));
                }
            }
        }
        if step > 1 && rng.below(8) == 0 {
            let at = 1 + rng.below(step - 1);
            if chain.doomed[at as usize].load(Ordering::Relaxed) == Doom::None as u8 {
                waited.push((me, at));
            }
        }
        let points: Vec<SemaphorePoint> = waited
            .iter()
            // A step's own semaphore always has its exact producer on record, so the wait
            // resolves on the device; an old timeline value has often lost it and parks.
            .map(|&(other, at)| match rng.below(4) {
                0 => self.chains[other].timeline.at(at),
                _ => self.chains[other].steps[at as usize].at(1),
            })
            .collect();
        (waited, points)
    }

    /// Draws whether step `step` of chain `me` is doomed and how; returns the doom with the
    /// semaphore its extra wait fails on. Writes only `counts` (and arms a victim queue for a
    /// kernel fault): a doom whose semaphore could not be created is dropped with its error
    /// counted, and a kernel fault that could not be armed becomes a host failure.
    fn draw_doom(
        &self,
        me: usize,
        step: u64,
        rng: &mut Xorshift,
        counts: &mut WorkerCounts,
    ) -> (Doom, Option<Semaphore>) {
        // Doomed: a wait that fails. Never the last step, so every timeline reaches its end.
        let failure_every = self.shape.failure_every;
        let doom = if failure_every > 0 && step < self.steps && rng.below(failure_every) == 0 {
            let controls = crate::bench::soft_controls(&self.chains[me].queue);
            if controls.is_some() && rng.below(2) == 0 { Doom::KernelFault } else { Doom::Host }
        } else {
            Doom::None
        };
        let doom_semaphore = match doom {
            Doom::None => None,
            _ => match self.device.create_semaphore(0) {
                Ok(semaphore) => Some(semaphore),
                Err(error) => {
                    counts.errors.push(format!("chain {me} step {step}: doom semaphore: {error}"));
                    None
                }
            },
        };
        let mut doom = if doom_semaphore.is_some() { doom } else { Doom::None };
        if doom == Doom::KernelFault {
            let semaphore = doom_semaphore.as_ref().expect("a doomed step has its semaphore");
            // A device holds 64 queues: with every victim still alive, the host fails it instead.
            if self.arm_kernel_fault(semaphore, counts).is_err() {
                doom = Doom::Host;
            }
        }
        (doom, doom_semaphore)
    }

    /// Submits a step that reads no other chain: a dispatch, transfer, command buffer or barrier
    /// drawn from `rng`, counted in `ops`. Returns the value it leaves in its word, with the
    /// submission's result; the caller records both.
    fn submit_local(
        &self,
        me: usize,
        step: u64,
        rng: &mut Xorshift,
        points: &[SemaphorePoint],
        signals: &[SemaphorePoint],
        ops: &mut OperationCounts,
    ) -> (u32, Result<aqueduct_engine::Submitted, EngineError>) {
        let chain = &self.chains[me];
        let mine = value(me, step);
        let out = word(&chain.log, step);
        match rng.below(8) {
            // A doomed step's word is not settled (see `check`): nothing reads it.
            0 if step > 1 && chain.doomed[step as usize - 1].load(Ordering::Relaxed) == Doom::None as u8 => {
                ops.chained_dispatch += 1;
                let read = chain.expected[step as usize - 1].load(Ordering::Relaxed);
                (mine, self.add(chain, out, word(&chain.log, step - 1), mine.wrapping_sub(read), points, signals))
            }
            0 | 1 => {
                ops.store_dispatch += 1;
                (mine, self.add(chain, out, self.zero.whole(), mine, points, signals))
            }
            2 => {
                ops.fill += 1;
                (mine, chain.queue.fill(out, &mine.to_le_bytes()).waits(points).signals(signals).submit())
            }
            3 => {
                ops.update += 1;
                (
                    mine,
                    chain
                        .queue
                        .update(&chain.log, step * 4, &mine.to_le_bytes())
                        .waits(points)
                        .signals(signals)
                        .submit(),
                )
            }
            4 => {
                ops.copy += 1;
                (mine, chain.queue.copy(word(&chain.source, step), out).waits(points).signals(signals).submit())
            }
            5 | 6 => {
                ops.command_buffer += 1;
                let table = BindingTable::from_bindings(&[out, word(&chain.source, step)]);
                (
                    mine,
                    table.and_then(|table| {
                        chain.queue.execute(&self.copy_slot, &table).waits(points).signals(signals).submit()
                    }),
                )
            }
            _ => {
                ops.barrier += 1;
                (0, chain.queue.barrier().waits(points).signals(signals).submit())
            }
        }
    }

    /// `out = input + addend` on one word.
    fn add(
        &self,
        chain: &Chain,
        out: aqueduct_engine::Binding,
        input: aqueduct_engine::Binding,
        addend: u32,
        waits: &[SemaphorePoint],
        signals: &[SemaphorePoint],
    ) -> Result<aqueduct_engine::Submitted, EngineError> {
        let (bindings, constants) = ([out, input], [addend, 0]);
        let dispatch = Dispatch::grid([1, 1, 1]).workgroup([1, 1, 1]).bindings(&bindings).constants(&constants);
        chain.queue.dispatch(&self.add, &dispatch).waits(waits).signals(signals).submit()
    }

    /// A queue of its own whose next packet faults, signalling `semaphore` (which then fails
    /// with the fault's record). Victims whose fault has surfaced are let go first.
    fn arm_kernel_fault(&self, semaphore: &Semaphore, counts: &mut WorkerCounts) -> Result<(), EngineError> {
        counts.victims.retain(|(_, doom)| doom.failure().is_none());
        let victim = self.device.create_queue()?;
        let (controls, hsa_queue) = crate::bench::soft_controls(&victim).ok_or_else(|| {
            EngineError::InvalidArgument { what: "kernel fault", reason: "the provider is not the soft runtime".into() }
        })?;
        controls
            .inject_fault(hsa_queue, victim.stats().packets, Fault::KernelFault { status: KERNEL_FAULT_STATUS })
            .map_err(|error| EngineError::InvalidArgument { what: "kernel fault", reason: format!("{error:?}") })?;
        victim.barrier().signal(semaphore.at(1)).submit()?;
        counts.kernel_faults += 1;
        counts.victims.push((victim, semaphore.clone()));
        Ok(())
    }

    /// Waits for every timeline to reach its end; false (and lost) if one does not.
    fn finish(&self, report: &mut StrategyReport) -> bool {
        let finals: Vec<SemaphorePoint> = self.chains.iter().map(|chain| chain.timeline.at(self.steps)).collect();
        let Err(error) = wait_all(&finals, FINISH_TIMEOUT) else { return true };
        let values: Vec<u64> = self.chains.iter().map(|chain| chain.timeline.value()).collect();
        report.lose(format!("the timelines did not finish: {error}; they reached {values:?}"));
        false
    }

    /// Checks every word and every semaphore of a finished round.
    fn check(&self, report: &mut StrategyReport) {
        for (index, chain) in self.chains.iter().enumerate() {
            let words: Vec<u32> = match chain.log.to_vec() {
                Ok(bytes) => bytes.chunks_exact(4).map(|chunk| u32::from_le_bytes(chunk.try_into().unwrap())).collect(),
                Err(error) => {
                    report.lose(format!("chain {index}: reading the log: {error}"));
                    continue;
                }
            };
            if chain.timeline.failure().is_some() || chain.timeline.value() != self.steps {
                report.lose(format!(
                    "chain {index}: timeline at {} ({:?})",
                    chain.timeline.value(),
                    chain.timeline.failure()
                ));
            }
            for (step, &word) in words.iter().enumerate().skip(1) {
                let expected = chain.expected[step].load(Ordering::Relaxed);
                let doom = chain.doomed[step].load(Ordering::Relaxed);
                // A doomed step must not run, with one exception the engine's contract allows: a
                // step already on the device behind a barrier on the faulting queue, which the
                // fault releases (its semaphore still fails).
                let ran = word == expected && expected != 0;
                let allowed = if doom == Doom::None as u8 {
                    word == expected
                } else if doom == Doom::KernelFault as u8 && ran {
                    report.doomed_ran += 1;
                    true
                } else {
                    word == 0
                };
                if !allowed {
                    report.lose(format!(
                        "chain {index} step {step}: word {:#x}, expected {expected:#x} (doom {doom})",
                        word
                    ));
                }
                let semaphore = &chain.steps[step];
                if doom == Doom::None as u8 {
                    // One drain publishes a submission's signals, one semaphore after another,
                    // and a queue drains in order: a host that saw the timeline's final value
                    // sees every earlier step's semaphore already, and the last step's a moment
                    // later at most. (A drain that raised the timeline on its producer's behalf
                    // once broke the first: issue 29, finding 1.)
                    let signalled = if step as u64 == self.steps {
                        semaphore.wait(1, SIGNAL_GRACE).map(|()| 1)
                    } else {
                        semaphore.query()
                    };
                    if !matches!(signalled, Ok(1)) {
                        report.lose(format!("chain {index} step {step}: semaphore {signalled:?}"));
                    }
                    continue;
                }
                let surfaced = match semaphore.failure() {
                    Some(record) if doom == Doom::Host as u8 => {
                        record.message == host_failure_message(index, step as u64)
                    }
                    Some(record) => record.status == Some(KERNEL_FAULT_STATUS),
                    None => false,
                };
                if surfaced {
                    report.failures_surfaced += 1;
                } else {
                    report.lose(format!(
                        "chain {index} step {step}: the injected failure did not surface ({:?})",
                        semaphore.failure()
                    ));
                }
            }
        }
        // Every queue drains what it published.
        let deadline = Instant::now() + FINISH_TIMEOUT;
        let drained = |chain: &Chain| chain.queue.stats().epochs_drained == chain.queue.stats().epochs_submitted;
        while !self.chains.iter().all(drained) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        if !self.chains.iter().all(drained) {
            report.lose("a queue did not drain what it published".into());
        }
        let mut seen = Vec::new();
        for chain in &self.chains {
            let stats = chain.queue.stats();
            if seen.contains(&chain.queue.index()) {
                continue;
            }
            seen.push(chain.queue.index());
            report.device_waits += stats.device_waits;
            report.parked += stats.deferred;
            report.max_parked = report.max_parked.max(stats.parked_high_water);
        }
    }
}

fn host_failure_message(chain: usize, step: u64) -> String {
    format!("stress: host failure for chain {chain} step {step}")
}

/// A small deterministic generator (xorshift64*), so a seed replays the same choices.
struct Xorshift(u64);

impl Xorshift {
    fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// In `0..bound` (`bound` > 0).
    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Options that cannot run are refused before a device is opened.
    #[test]
    fn impossible_options_are_refused() {
        let refused = |options: StressOptions| {
            let result = run(&options, |_, _, _| panic!("no round may run"));
            assert!(matches!(result, Err(EngineError::InvalidArgument { what: "stress options", .. })), "{result:?}");
        };
        let defaults = StressOptions { device: "no-such-device".into(), ..StressOptions::default() };
        refused(StressOptions { threads: 0, ..defaults.clone() });
        refused(StressOptions { queues: 0, ..defaults.clone() });
        // One step per chain, and more semaphores than a device holds.
        refused(StressOptions { submissions: 4, ..defaults.clone() });
        refused(StressOptions { submissions: MAX_SEMAPHORES as u64, ..defaults });
    }
}
