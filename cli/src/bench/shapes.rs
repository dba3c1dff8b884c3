//! The benchmark shapes. Each runs one repetition and returns its times; each checks its own
//! results (semaphores reached, and for end-to-end shapes the bytes the kernels wrote), so a
//! shape that measures something broken fails instead of reporting a number.

use std::time::{Duration, Instant};

use aqueduct_engine::{Buffer, Device, Dispatch, EngineError, Kernel, MemoryKind, Queue, thread_cpu_time};
use aqueduct_soft_hsa::ExecutionMode;

use super::kernels::{BINDING_COUNTS, bench_code_object};
use super::measure::Sample;

pub(crate) const WAIT: Duration = Duration::from_secs(60);
/// Handoff counts of the dependency shapes.
pub const HANDOFFS: [u64; 4] = [2, 32, 512, 2048];
/// Submissions per repetition of the direct-dispatch and scaling shapes.
pub const SUBMITS: u64 = 512;
/// Packets per repetition of the physical-limit baseline.
pub const LIMIT_PACKETS: u64 = 4096;

/// Queues, kernels and memory shared by every shape.
pub struct Rig {
    /// The device the shapes run on.
    pub device: Device,
    /// Retire-only on the soft runtime: host cost without kernels competing for the cores.
    pub(crate) host: Vec<Queue>,
    /// Normal execution, for end-to-end shapes.
    pub(crate) e2e: Vec<Queue>,
    noop: Kernel,
    pub(crate) tiny: Kernel,
    bindings: Vec<(usize, Kernel)>,
    scratch: Buffer,
}

/// The most queues `scale/queues=Q` submits on, one thread each: the rig's retire-only queues.
pub const SCALE_QUEUES: usize = 8;

/// Where the edge shapes' payloads live in `scratch`.
const COPY_SOURCE: u64 = 0;
const COPY_TARGET: u64 = 64;
const FILL_TARGET: u64 = 128;
const TINY_IN: u64 = 192;
const TINY_OUT: u64 = 256;
/// Binding `i` of a bindings shape is the word at `BINDINGS_BASE + 64 * i`.
const BINDINGS_BASE: u64 = 4096;

impl Rig {
    /// Makes [`SCALE_QUEUES`] retire-only and 4 executing queues, loads the bench kernels and
    /// writes the scratch buffer's inputs.
    pub fn new(device: Device) -> Result<Self, EngineError> {
        let make = |mode: ExecutionMode, count: usize| -> Result<Vec<Queue>, EngineError> {
            (0..count)
                .map(|_| {
                    let queue = device.create_queue()?;
                    super::set_soft_mode(&queue, mode)?;
                    Ok(queue)
                })
                .collect()
        };
        let executable = device.load_executable(bench_code_object(&device)?)?;
        let bindings = BINDING_COUNTS
            .iter()
            .filter(|count| **count > 0)
            .map(|count| Ok((*count, executable.kernel(&format!("bindings_{count}"))?)))
            .collect::<Result<Vec<_>, EngineError>>()?;
        let scratch = device.allocate(MemoryKind::HostVisible, BINDINGS_BASE + 64 * 256)?;
        scratch.write(0, &vec![0; scratch.size() as usize])?;
        scratch.write(COPY_SOURCE, &[9, 8, 7, 6])?;
        scratch.write(TINY_IN, &5u32.to_le_bytes())?;
        Ok(Self {
            host: make(ExecutionMode::RetireOnly, SCALE_QUEUES)?,
            e2e: make(ExecutionMode::Strict, 4)?,
            noop: executable.kernel("noop")?,
            tiny: executable.kernel("tiny")?,
            bindings,
            scratch,
            device,
        })
    }

    fn queues(&self, e2e: bool) -> &[Queue] {
        if e2e { &self.e2e } else { &self.host }
    }

    /// One barrier through every queue, waited for: wakes packet processors that parked while
    /// the shape was not running (a profiled repetition begins and ends a capture around itself,
    /// a gap in which they park; the unprofiled rows' repetitions follow each other at once).
    pub fn wake_queues(&self) -> Result<(), EngineError> {
        let done = self.device.create_semaphore(0)?;
        // A chain, so the last value means every queue ran its barrier.
        for (value, queue) in (1u64..).zip(self.host.iter().chain(&self.e2e)) {
            let waits: &[_] = if value == 1 { &[] } else { &[done.at(value - 1)] };
            queue.barrier().waits(waits).signal(done.at(value)).submit()?;
        }
        done.wait((self.host.len() + self.e2e.len()) as u64, std::time::Duration::from_secs(10))
    }
}

/// What an edge carries besides its cross-queue wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Payload {
    /// Nothing: the edge is a barrier.
    Edge,
    /// A 4-byte copy.
    Copy4,
    /// A 4-byte fill.
    Fill4,
    /// A dispatch of `tiny` (two bindings, checked end to end).
    Dispatch,
    /// A dispatch of `noop` (no bindings).
    Noop,
}

impl Payload {
    /// Every payload, in report order.
    pub const ALL: [Payload; 5] = [Payload::Edge, Payload::Copy4, Payload::Fill4, Payload::Dispatch, Payload::Noop];

    /// The shape-name prefix (`edge`, `edge+copy4`, ...).
    pub fn prefix(self) -> &'static str {
        match self {
            Payload::Edge => "edge",
            Payload::Copy4 => "edge+copy4",
            Payload::Fill4 => "edge+fill4",
            Payload::Dispatch => "edge+dispatch",
            Payload::Noop => "edge+noop",
        }
    }
}

pub(crate) fn mismatch(what: &str, expected: impl std::fmt::Debug, found: impl std::fmt::Debug) -> EngineError {
    EngineError::InvalidArgument {
        what: "benchmark result",
        reason: format!("{what}: expected {expected:?}, found {found:?}"),
    }
}

/// Times `submit` (submission only) and then everything until `finish` returns.
pub(crate) fn timed<T>(
    submit: impl FnOnce() -> Result<T, EngineError>,
    finish: impl FnOnce() -> Result<(), EngineError>,
    e2e: bool,
) -> Result<Sample, EngineError> {
    let (wall, cpu) = (Instant::now(), thread_cpu_time());
    submit()?;
    let submitted = Sample { wall: wall.elapsed(), host_cpu: thread_cpu_time() - cpu };
    finish()?;
    let finished = Sample { wall: wall.elapsed(), host_cpu: thread_cpu_time() - cpu };
    Ok(if e2e { finished } else { submitted })
}

/// `handoffs` operations alternating between two queues, each waiting on the previous one.
pub fn edges(rig: &Rig, payload: Payload, handoffs: u64, e2e: bool) -> Result<Sample, EngineError> {
    let queues = rig.queues(e2e);
    let chain = rig.device.create_semaphore(0)?;
    let scratch = &rig.scratch;
    if e2e {
        // Earlier repetitions finished (their semaphores were waited on); clear their results so
        // this one's are checked afresh.
        for offset in [COPY_TARGET, FILL_TARGET, TINY_OUT] {
            scratch.write(offset, &[0; 4])?;
        }
    }
    let tiny_bindings = [scratch.range(TINY_OUT, 4), scratch.range(TINY_IN, 4)];
    let tiny = Dispatch::grid([1, 1, 1]).workgroup([1, 1, 1]).bindings(&tiny_bindings).constants(&[1, 2]);
    let noop = Dispatch::grid([1, 1, 1]).workgroup([1, 1, 1]);
    let sample = timed(
        || {
            for step in 0..handoffs {
                let queue = &queues[(step & 1) as usize];
                let (waits, signals) = ([chain.at(step)], [chain.at(step + 1)]);
                match payload {
                    Payload::Edge => queue.barrier().waits(&waits).signals(&signals).submit(),
                    Payload::Copy4 => queue
                        .copy(scratch.range(COPY_SOURCE, 4), scratch.range(COPY_TARGET, 4))
                        .waits(&waits)
                        .signals(&signals)
                        .submit(),
                    Payload::Fill4 => queue
                        .fill(scratch.range(FILL_TARGET, 4), &[1, 2, 3, 4])
                        .waits(&waits)
                        .signals(&signals)
                        .submit(),
                    Payload::Dispatch => queue.dispatch(&rig.tiny, &tiny).waits(&waits).signals(&signals).submit(),
                    Payload::Noop => queue.dispatch(&rig.noop, &noop).waits(&waits).signals(&signals).submit(),
                }?;
            }
            Ok(())
        },
        || chain.wait(handoffs, WAIT),
        e2e,
    )?;
    if chain.value() != handoffs {
        return Err(mismatch("chain semaphore", handoffs, chain.value()));
    }
    if e2e {
        verify_payload(rig, payload)?;
    }
    Ok(sample)
}

/// The bytes an end-to-end edge payload must have left behind.
fn verify_payload(rig: &Rig, payload: Payload) -> Result<(), EngineError> {
    let (offset, expected) = match payload {
        Payload::Copy4 => (COPY_TARGET, [9, 8, 7, 6]),
        Payload::Fill4 => (FILL_TARGET, [1, 2, 3, 4]),
        Payload::Dispatch => (TINY_OUT, 8u32.to_le_bytes()),
        Payload::Edge | Payload::Noop => return Ok(()),
    };
    let mut found = [0; 4];
    rig.scratch.read(offset, &mut found)?;
    if found == expected { Ok(()) } else { Err(mismatch(payload.prefix(), expected, found)) }
}

/// `ops` operations of `payload` enqueued on one queue's batch and published by one flush, each
/// waiting on the previous one's signal (resolved by queue order) and signalling the next.
pub fn batched(rig: &Rig, payload: Payload, ops: u64) -> Result<Sample, EngineError> {
    let queue = &rig.host[0];
    let chain = rig.device.create_semaphore(0)?;
    let tiny_bindings = [rig.scratch.range(TINY_OUT, 4), rig.scratch.range(TINY_IN, 4)];
    let tiny = Dispatch::grid([1, 1, 1]).workgroup([1, 1, 1]).bindings(&tiny_bindings).constants(&[1, 2]);
    let sample = timed(
        || {
            queue.batch(|batch| {
                for step in 0..ops {
                    let (waits, signals) = ([chain.at(step)], [chain.at(step + 1)]);
                    match payload {
                        Payload::Dispatch => batch.dispatch(&rig.tiny, &tiny).waits(&waits).signals(&signals).submit(),
                        _ => batch.barrier().waits(&waits).signals(&signals).submit(),
                    }?;
                }
                Ok(())
            })
        },
        || chain.wait(ops, WAIT),
        false,
    )?;
    if chain.value() != ops {
        return Err(mismatch("batch chain semaphore", ops, chain.value()));
    }
    Ok(sample)
}

/// `length` barriers on one queue, each waiting on the previous one (elided by queue order).
pub fn chain(rig: &Rig, length: u64, e2e: bool) -> Result<Sample, EngineError> {
    let queue = &rig.queues(e2e)[0];
    let chain = rig.device.create_semaphore(0)?;
    let sample = timed(
        || {
            (0..length)
                .try_for_each(|step| queue.barrier().wait(chain.at(step)).signal(chain.at(step + 1)).submit().map(drop))
        },
        || chain.wait(length, WAIT),
        e2e,
    )?;
    if chain.value() != length {
        return Err(mismatch("chain semaphore", length, chain.value()));
    }
    Ok(sample)
}

/// [`SUBMITS`] direct dispatches with `count` bindings, each signalling once.
pub fn dispatches(rig: &Rig, count: usize) -> Result<Sample, EngineError> {
    let queue = &rig.host[0];
    let done = rig.device.create_semaphore(0)?;
    let bindings: Vec<_> = (0..count as u64).map(|index| rig.scratch.range(BINDINGS_BASE + 64 * index, 4)).collect();
    let (kernel, dispatch) = match rig.bindings.iter().find(|(n, _)| *n == count) {
        Some((_, kernel)) => (kernel, Dispatch::grid([1, 1, 1]).workgroup([1, 1, 1]).bindings(&bindings)),
        None => (&rig.noop, Dispatch::grid([1, 1, 1]).workgroup([1, 1, 1])),
    };
    let sample = timed(
        || {
            (1..=SUBMITS)
                .try_for_each(|value| queue.dispatch(kernel, &dispatch).signal(done.at(value)).submit().map(drop))
        },
        || done.wait(SUBMITS, WAIT),
        false,
    )?;
    if done.value() != SUBMITS {
        return Err(mismatch("dispatch semaphore", SUBMITS, done.value()));
    }
    Ok(sample)
}

/// Dispatches each `scale/queues=Q` thread submits per repetition: long enough (about a
/// millisecond) that the threads' start-up skew does not decide the span. At 512 a thread's work
/// was 150 µs on the device machine, and with 8 threads the span was 3.8 times that.
pub const SCALE_SUBMITS: u64 = 4096;

/// `queues` threads, each submitting [`SCALE_SUBMITS`] dispatches to its own queue. Wall time
/// runs from the first thread's first submit to the last thread's last; CPU time is summed over
/// the threads. The threads start together: each spins until all are ready and the start flag
/// is raised (a blocking barrier wakes them one by one, tens of microseconds apart).
pub fn scaling(rig: &Rig, queues: usize) -> Result<Sample, EngineError> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let (ready, go) = (AtomicUsize::new(0), AtomicBool::new(false));
    let noop = Dispatch::grid([1, 1, 1]).workgroup([1, 1, 1]);
    let results: Vec<Result<(Instant, Instant, Duration), EngineError>> = std::thread::scope(|scope| {
        let workers: Vec<_> = rig.host[..queues]
            .iter()
            .map(|queue| {
                let (ready, go, noop, kernel, device) = (&ready, &go, &noop, &rig.noop, &rig.device);
                scope.spawn(move || {
                    let done = device.create_semaphore(0);
                    ready.fetch_add(1, Ordering::AcqRel);
                    spin_until(|| go.load(Ordering::Acquire));
                    let done = done?;
                    let (began, cpu) = (Instant::now(), thread_cpu_time());
                    for value in 1..=SCALE_SUBMITS {
                        queue.dispatch(kernel, noop).signal(done.at(value)).submit()?;
                    }
                    let (ended, cpu) = (Instant::now(), thread_cpu_time() - cpu);
                    done.wait(SCALE_SUBMITS, WAIT)?;
                    Ok((began, ended, cpu))
                })
            })
            .collect();
        // Every worker counts itself ready before it spins, whatever its semaphore came to.
        spin_until(|| ready.load(Ordering::Acquire) == workers.len());
        go.store(true, Ordering::Release);
        workers
            .into_iter()
            .map(|worker| worker.join().unwrap_or_else(|_| Err(mismatch("worker", "no panic", "panic"))))
            .collect()
    });
    let results = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let began = results.iter().map(|result| result.0).min().unwrap_or_else(Instant::now);
    let ended = results.iter().map(|result| result.1).max().unwrap_or(began);
    Ok(Sample { wall: ended - began, host_cpu: results.iter().map(|result| result.2).sum() })
}

/// Spins until `done`, yielding now and then so that on a machine with fewer cores than spinning
/// threads the one they wait for still runs.
fn spin_until(done: impl Fn() -> bool) {
    let mut spins = 0u32;
    while !done() {
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(256) {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Diamonds per repetition of `diamond/waits`.
pub const DIAMONDS: u64 = 128;

/// Cross-queue waits `diamond/waits` asked for and device-side barriers its queues emitted,
/// summed over every repetition (warm-up included).
#[derive(Debug, Default)]
pub struct WaitCounts {
    /// Cross-queue waits asked for.
    pub requested: std::cell::Cell<u64>,
    /// Device-side wait barriers emitted.
    pub emitted: std::cell::Cell<u64>,
}

/// [`DIAMONDS`] diamonds of barrier submissions over the first 4 retire-only queues: A (waiting on the
/// previous diamond's D) → B and C (each waiting on A) → D (waiting on B, C and A). D's wait on A
/// is covered through B's producer record (B's epoch waited on A's), so it needs no barrier.
/// One operation is one submission; `counts` records what the waits cost in barriers.
pub fn diamonds(rig: &Rig, counts: &WaitCounts) -> Result<Sample, EngineError> {
    let queues = &rig.host[..4];
    let [a, b, c, d] = [(); 4].map(|_| rig.device.create_semaphore(0));
    let (a, b, c, d) = (a?, b?, c?, d?);
    let emitted = || queues.iter().map(|queue| queue.stats().device_waits).sum::<u64>();
    let before = emitted();
    let sample = timed(
        || {
            for step in 1..=DIAMONDS {
                let previous = [d.at(step - 1)];
                queues[0].barrier().waits(&previous[..usize::from(step > 1)]).signal(a.at(step)).submit()?;
                queues[1].barrier().wait(a.at(step)).signal(b.at(step)).submit()?;
                queues[2].barrier().wait(a.at(step)).signal(c.at(step)).submit()?;
                queues[3].barrier().wait(b.at(step)).wait(c.at(step)).wait(a.at(step)).signal(d.at(step)).submit()?;
            }
            Ok(())
        },
        || d.wait(DIAMONDS, WAIT),
        false,
    )?;
    if d.value() != DIAMONDS {
        return Err(mismatch("diamond semaphore", DIAMONDS, d.value()));
    }
    counts.requested.set(counts.requested.get() + 6 * DIAMONDS - 1);
    counts.emitted.set(counts.emitted.get() + emitted() - before);
    Ok(sample)
}

/// The physical-limit baseline: [`LIMIT_PACKETS`] packets written and release-published.
pub fn limit(ring: &mut aqueduct_hsa::ring::BaselineRing) -> Sample {
    let (wall, cpu) = (Instant::now(), thread_cpu_time());
    ring.write_release(LIMIT_PACKETS);
    Sample { wall: wall.elapsed(), host_cpu: thread_cpu_time() - cpu }
}
