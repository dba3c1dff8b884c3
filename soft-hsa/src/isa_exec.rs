//! Running a dispatch's machine code with the gfx1100 interpreter (`aqueduct-isa`), the
//! alternative to a kernel's host build (`SoftConfig::kernel_execution`). A gfx10.3 agent's
//! kernels run through the interpreter's gfx10.3 path (each instruction translated to gfx11's);
//! other ISAs are refused.
//!
//! The interpreter sees the agent's memory as a GPU does: an access outside every allocation
//! mapped for the queue's agent is a memory fault, recorded for delivery as ROCr delivers one
//! (`check_access`). Besides allocations, a kernel may read its own loaded code object (its
//! descriptor, code and read-only data) and the dispatch packet its dispatch pointer names.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use aqueduct_isa::interp::{
    DecodedKernel, Dispatch, ExecError, HostMemory, HostRange, Interrupt, Isa, MemoryFault, Ran, Rounds, RunFrom,
    SavedWorkgroup, Topology,
};
use aqueduct_isa::native::Tier;

use super::executable::LoadedKernel;
use super::queue::SoftQueue;
use super::runtime::Runtime;
use super::scheduling::SAVE_SLICE;
use super::workgroups::{Pace, PacketResult, check_beyond_allocations, for_each_workgroup, run_linear};
use aqueduct_abi::KernelDispatchPacket;

use aqueduct_hsa::sys::{hsa_status_t, status};

/// The most workgroups of one dispatch saved at once; past it a workgroup keeps its thread. It
/// bounds what saved state can hold (a workgroup of 1,024 work-items holds about 1 MiB of
/// registers), as a GPU's registers and LDS bound how many workgroups are resident. A grid-wide
/// barrier across more workgroups than this and the pool's threads waits for the watchdog.
const RESIDENT_WORKGROUPS: usize = 256;

/// A range this thread last found granted to an agent of a runtime (its allocations' address
/// and the agent's index), while the process's count of removals was `revocations`
/// (`memory::revocations`): its agent addresses `[start, end)` and what turns them into host
/// addresses (0 for an allocation).
#[derive(Clone, Copy)]
struct Granted {
    allocations: usize,
    agent: usize,
    revocations: u64,
    start: u64,
    end: u64,
    delta: u64,
}

/// Ranges a thread keeps: a kernel reads and writes a few buffers at once (saxpy's x and y, a
/// GEMM's A, B and C), and one entry made every other access take the maps' locks.
const GRANTED_RANGES: usize = 4;

thread_local! {
    /// Whether the workgroup this thread runs is counted in its dispatch's threads holding a
    /// workgroup past its first round (`dispatch`'s `holding`).
    static COUNTED: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
    /// The ranges last found on this thread (a cell each, so that a lookup reads only the
    /// entries it looks at, and a hit writes nothing: reordering them on every hit stalled the
    /// loads that followed).
    static GRANTED: [core::cell::Cell<Granted>; GRANTED_RANGES] = const {
        [const {
            core::cell::Cell::new(Granted { allocations: 0, agent: 0, revocations: 0, start: 0, end: 0, delta: 0 })
        }; GRANTED_RANGES]
    };
    /// The entry the next range found replaces (round robin).
    static NEXT_GRANTED: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
}

/// Numbers interpreted dispatches, from 1: a native workgroup's frame keeps the ranges it found
/// for one dispatch (`Dispatch::serial`).
static NEXT_DISPATCH: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(1);

/// The agent's memory as the interpreter reaches it.
struct AgentMemory<'a> {
    /// This dispatch's number (`NEXT_DISPATCH`).
    dispatch: u64,
    queue: &'a SoftQueue,
    runtime: &'a Runtime,
    kernel: &'a LoadedKernel,
    packet: core::ops::Range<u64>,
}

// SAFETY: `check_range` answers `Ok` only for allocations and locked ranges mapped for the agent
// (a locked range at the host memory behind its agent addresses, page offset kept), the
// kernel's loaded image and the packet copy (reads), and the queues' and signals' memory, all of
// which outlive the dispatch (the client keeps what a running kernel uses alive, as on a GPU),
// each answered whole (`check_range`) only where all of it is granted alike.
unsafe impl HostMemory for AgentMemory<'_> {
    fn check(&self, address: u64, length: u64, write: bool) -> Result<u64, MemoryFault> {
        self.check_range(address, length, write).map(|range| address.wrapping_add(range.delta))
    }

    /// The whole range an access falls in: the packet copy or the kernel's image (read-only),
    /// the allocation or locked range (readable and writable), or, for the queues' and signals'
    /// memory, the access alone.
    fn check_range(&self, address: u64, length: u64, write: bool) -> Result<HostRange, MemoryFault> {
        let end = address.checked_add(length).ok_or(MemoryFault { address, length, write })?;
        // The kernel's image and the packet copy first (reads only; every wave reads the packet
        // at its start): two comparisons, where a miss in the allocations below takes locks.
        let image = self.kernel.image.load_base()..self.kernel.image.load_base() + self.kernel.image.load_size();
        let inside = |range: &core::ops::Range<u64>| range.start <= address && end <= range.end;
        for range in [&self.packet, &image] {
            if !write && inside(range) {
                return Ok(HostRange { start: range.start, end: range.end, delta: 0, writable: false });
            }
        }
        // Then allocations and locked ranges: nearly every other access is to one. The ranges last
        // found on this thread answer without the maps' locks while nothing was removed since
        // (the client keeps what a running kernel uses alive, as on a GPU).
        let (allocations, agent) = (&self.runtime.allocations as *const _ as usize, self.queue.agent_index);
        let revocations = crate::memory::revocations();
        let holds = |range: &Granted| {
            range.revocations == revocations
                && range.allocations == allocations
                && range.agent == agent
                && range.start <= address
                && end <= range.end
        };
        let hit = GRANTED.with(|cached| cached.iter().map(core::cell::Cell::get).find(holds));
        if let Some(Granted { start, end, delta, .. }) = hit {
            return Ok(HostRange { start, end, delta, writable: true });
        }
        if let Some((start, stop, delta)) = self.runtime.allocations.granted_range(agent, address, length) {
            let slot = NEXT_GRANTED.replace((NEXT_GRANTED.get() + 1) % GRANTED_RANGES);
            let found = Granted { allocations, agent, revocations, start, end: stop, delta };
            GRANTED.with(|cached| cached[slot].set(found));
            return Ok(HostRange { start, end: stop, delta, writable: true });
        }
        check_beyond_allocations(self.queue, self.runtime, address, length)
            .map(|host| HostRange { start: address, end, delta: host.wrapping_sub(address), writable: write })
            .map_err(|_| MemoryFault { address, length, write })
    }
}

/// The kernel's code decoded, at its first interpreted dispatch, and kept with the kernel (a
/// kernel is loaded for one agent, so for one ISA).
fn decoded(kernel: &LoadedKernel, memory: &AgentMemory<'_>, isa: Isa) -> Result<Arc<DecodedKernel>, String> {
    kernel
        .isa_kernel
        .get_or_init(|| {
            DecodedKernel::load_for(memory, kernel.kernel_object(), isa)
                .map(Arc::new)
                .map_err(|error| error.to_string())
        })
        .clone()
}

/// The interpreter's instruction set for an agent's ISA name (`amdgcn-amd-amdhsa--gfx1100`):
/// gfx11, gfx10.3 (`gfx1030` to `gfx1036`), gfx12 (`gfx1200`, `gfx1201`, `gfx12-generic`), or
/// gfx9's gfx900, gfx906, gfx908, gfx90a and gfx942 (target features after a `:` aside); `None`
/// for any other.
fn interpreted_isa(name: &str) -> Option<Isa> {
    let processor = name.rsplit("--").next().unwrap_or(name);
    if name.contains("gfx11") {
        Some(Isa::Gfx11)
    } else if name.contains("gfx103") {
        Some(Isa::Gfx10_3)
    } else if matches!(processor.split(':').next(), Some("gfx1200" | "gfx1201" | "gfx12-generic")) {
        Some(Isa::Gfx12)
    } else {
        aqueduct_isa::gfx9::Processor::from_name(processor).map(Isa::Gfx9)
    }
}

/// Runs `packet`'s workgroups through the interpreter. An `Err` names the first failure (the
/// agent's ISA, the kernel's code, or a workgroup's); the workgroups run before it keep their
/// writes, and a memory fault is left recorded on the queue for delivery (`check_access`).
pub(crate) fn dispatch(
    queue: &SoftQueue,
    runtime: &Runtime,
    id: u64,
    packet: &KernelDispatchPacket,
    kernel: &LoadedKernel,
) -> PacketResult {
    let named = |error: String| format!("packet {id}: kernel `{}` of {}: {error}", kernel.symbol, kernel.code_object);
    let isa = agent_isa(queue, runtime).map_err(|error| (status::ERROR_INVALID_ISA, named(error)))?;
    let packet_address = packet as *const KernelDispatchPacket as u64;
    let memory = AgentMemory {
        dispatch: NEXT_DISPATCH.fetch_add(1, core::sync::atomic::Ordering::Relaxed),
        queue,
        runtime,
        kernel,
        packet: packet_address..packet_address + core::mem::size_of::<KernelDispatchPacket>() as u64,
    };
    let decoded = decoded(kernel, &memory, isa).map_err(|error| (status::ERROR_INVALID_CODE_OBJECT, named(error)))?;
    let turns = Turns::new(queue, runtime);
    let interrupt = |rounds: &Rounds| turns.interrupt(rounds);
    let dispatch = Dispatch {
        kernel: &decoded,
        packet_address,
        queue_address: queue.address() as u64,
        kernarg_address: packet.kernarg_address,
        dispatch_id: id,
        grid: packet.grid(),
        workgroup: packet.workgroup(),
        group_segment_size: packet.group_segment_size,
        private_segment_size: packet.private_segment_size,
        // Far beyond any kernel here, and a bound on a kernel that loops forever (which on a GPU
        // would need a queue reset).
        instruction_limit: Dispatch::DEFAULT_INSTRUCTION_LIMIT,
        topology: agent_topology(queue, runtime),
        realtime: super::clock::device_ticks,
        serial: memory.dispatch,
        interrupt: Some(&interrupt),
        tier: match runtime.config.kernel_execution {
            crate::KernelExecution::Isa => Tier::Interpreter,
            crate::KernelExecution::Native => Tier::Native,
            crate::KernelExecution::Host | crate::KernelExecution::Auto => Tier::Auto,
        },
    };
    for_each_workgroup(queue, runtime, packet, |lds, workgroup_id| {
        turns.run(&dispatch, &memory, lds, RunFrom::Begin(workgroup_id))
    });
    // Every workgroup has been claimed: none not yet begun wants a thread now.
    turns.first_pass.store(false, Ordering::Relaxed);
    turns.resume_saved(&dispatch, &memory);
    turns.outcome().map_err(|(code, error)| (code, named(error)))
}

/// The queue's agent's compute units (its configured count, which it reports and schedules by)
/// and its model's shader engines and arrays, as `hsa_agent_get_info` reports them (`entry.rs`).
fn agent_topology(queue: &SoftQueue, runtime: &Runtime) -> Topology {
    let model = runtime.gpu(queue.agent_index).map(|agent| super::gpu_models::reported(&agent.isa_name));
    Topology {
        compute_units: runtime.compute_units(queue.agent_index),
        shader_engines: model.map_or(1, |model| model.shader_engines),
        shader_arrays_per_engine: model.map_or(1, |model| model.shader_arrays_per_engine),
    }
}

/// The interpreter's instruction set for the queue's agent, or why it has none (the agent's
/// ISA, for ERROR_INVALID_ISA). Reads only.
fn agent_isa(queue: &SoftQueue, runtime: &Runtime) -> Result<Isa, String> {
    let name = runtime.gpu(queue.agent_index).map(|agent| agent.isa_name.as_str());
    name.and_then(interpreted_isa).ok_or_else(|| {
        let agent = name.unwrap_or("unknown");
        format!(
            "the interpreter runs gfx11, gfx12, gfx10.3 and gfx9 (gfx900, gfx906, gfx908, gfx90a, gfx942) machine code and this agent is {agent}; nothing else runs it"
        )
    })
}

/// One interpreted dispatch's workgroups taking turns on the pool: what its workgroups share
/// between their rounds (why to stop, who is saved, how many threads it holds) and its first
/// failure. Lives on `dispatch`'s stack for the dispatch; nothing of it outlives it.
struct Turns<'a> {
    queue: &'a SoftQueue,
    runtime: &'a Runtime,
    /// The watchdog (`SoftConfig::dispatch_timeout`) and when it fires (`None`: never).
    timeout: std::time::Duration,
    deadline: Option<std::time::Instant>,
    /// Whether a workgroup has failed: the others stop at their next round, and those not begun
    /// do not begin (a GPU's queue error ends the dispatch's every wave).
    failed: AtomicBool,
    /// Workgroups saved, waiting to resume (with their count, read between rounds without the
    /// lock), and whether workgroups not yet begun may remain (until every one has been claimed).
    saved: std::sync::Mutex<Vec<SavedWorkgroup>>,
    waiting: AtomicUsize,
    first_pass: AtomicBool,
    /// Threads running a workgroup of this dispatch that has finished a round (a workgroup that
    /// ends in its first round is never counted: no shared counter is touched per workgroup,
    /// which with short workgroups on 16 threads would be a contended line per workgroup).
    holding: AtomicUsize,
    /// The first workgroup's failure.
    failure: std::sync::Mutex<Option<ExecError>>,
}

impl<'a> Turns<'a> {
    /// A dispatch's turns before its first workgroup: the watchdog's deadline read from the
    /// clock now, nothing saved or failed.
    fn new(queue: &'a SoftQueue, runtime: &'a Runtime) -> Self {
        let timeout = runtime.config.dispatch_timeout;
        let deadline = (!timeout.is_zero()).then(|| std::time::Instant::now().checked_add(timeout)).flatten();
        Turns {
            queue,
            runtime,
            timeout,
            deadline,
            failed: AtomicBool::new(false),
            saved: std::sync::Mutex::new(Vec::new()),
            waiting: AtomicUsize::new(0),
            first_pass: AtomicBool::new(true),
            holding: AtomicUsize::new(0),
            failure: std::sync::Mutex::new(None),
        }
    }

    /// Why the dispatch must stop, without reading the clock: asked before every workgroup.
    #[inline]
    fn stopped(&self) -> Option<String> {
        if self.queue.stop.load(Ordering::Acquire) {
            Some("the queue was destroyed or inactivated".to_string())
        } else if self.failed.load(Ordering::Relaxed) {
            Some("another workgroup of the dispatch failed".to_string())
        } else {
            None
        }
    }

    /// Other dispatches are running and this one holds more than its share of the pool's threads
    /// (`Arbiter::share`): a workgroup saved then gives its pool thread back.
    #[inline]
    fn over_share(&self) -> bool {
        self.holding.load(Ordering::Relaxed) > self.runtime.arbiter.share(rayon::current_num_threads())
    }

    /// Between a workgroup's rounds (`Dispatch::interrupt`): stop it (the queue's teardown, a
    /// failed workgroup, the watchdog), or save it once it has run a slice while other work wants
    /// its thread: another dispatch (where this one holds more than its share), a saved workgroup
    /// of this one, or one of this one's not yet begun. So a kernel that never ends holds the pool
    /// for a slice at most while other queues want it, and workgroups that wait on each other (a
    /// spin on a flag another sets, a grid-wide barrier) each get turns, as the resident
    /// workgroups of a GPU all do. Counts this thread in `holding` at its first round.
    #[inline]
    fn interrupt(&self, rounds: &Rounds) -> Option<Interrupt> {
        if let Some(reason) = self.stopped() {
            return Some(Interrupt::Stop(reason));
        }
        if self.deadline.is_some_and(|deadline| rounds.now >= deadline) {
            return Some(Interrupt::Stop(format!(
                "the dispatch ran past the soft runtime's watchdog of {:?} (SoftConfig::dispatch_timeout)",
                self.timeout
            )));
        }
        if rounds.now == rounds.began && !COUNTED.replace(true) {
            self.holding.fetch_add(1, Ordering::Relaxed);
        }
        if rounds.now.duration_since(rounds.began) < SAVE_SLICE {
            return None;
        }
        let waiting = self.waiting.load(Ordering::Relaxed);
        let wanted = waiting > 0 || self.first_pass.load(Ordering::Relaxed) || self.over_share();
        (wanted && waiting < RESIDENT_WORKGROUPS).then_some(Interrupt::Save)
    }

    /// Runs a workgroup from `from` until it ends, fails or is saved; says whether a pool thread
    /// that ran it may go on (not after a save while the dispatch holds more than its share: the
    /// thread goes back to the pool). A save lands in `saved`, a failure in `failure` (the first
    /// kept) and `failed`.
    #[inline]
    fn run(&self, dispatch: &Dispatch<'_>, memory: &AgentMemory<'_>, lds: &mut Vec<u8>, from: RunFrom) -> bool {
        // A workgroup not begun when the dispatch is stopped does not begin (one of a billion
        // short workgroups is never asked between turns), and a saved one does not resume.
        let result = match self.stopped() {
            Some(reason) => {
                let pc = match &from {
                    RunFrom::Begin(_) => 0,
                    RunFrom::Resume(saved) => saved.pc(),
                };
                Err(ExecError::Interrupted { pc, reason })
            }
            None => aqueduct_isa::run_or_save(dispatch, memory, from, lds),
        };
        // Asked while this thread still counts among those holding the dispatch's workgroups (a
        // saved workgroup was asked between rounds, so it was counted).
        let leave = matches!(result, Ok(Ran::Saved(_))) && self.over_share();
        if COUNTED.replace(false) {
            self.holding.fetch_sub(1, Ordering::Relaxed);
        }
        match result {
            Ok(Ran::Ended(_)) => true,
            Ok(Ran::Saved(workgroup)) => {
                self.saved.lock().unwrap_or_else(|poison| poison.into_inner()).push(workgroup);
                self.waiting.fetch_add(1, Ordering::Relaxed);
                !leave
            }
            Err(error) => {
                self.failed.store(true, Ordering::Relaxed);
                self.failure.lock().unwrap_or_else(|poison| poison.into_inner()).get_or_insert(error);
                true
            }
        }
    }

    /// Resumes the saved workgroups in rounds, oldest first, until none is saved again (after
    /// the first pass has claimed every workgroup). Leaves `saved` empty.
    fn resume_saved(&self, dispatch: &Dispatch<'_>, memory: &AgentMemory<'_>) {
        loop {
            let round: Vec<std::sync::Mutex<Option<SavedWorkgroup>>> =
                core::mem::take(&mut *self.saved.lock().unwrap_or_else(|poison| poison.into_inner()))
                    .into_iter()
                    .map(|workgroup| std::sync::Mutex::new(Some(workgroup)))
                    .collect();
            if round.is_empty() {
                break;
            }
            run_linear(self.queue, self.runtime, round.len() as u64, Pace::Saved, &|lds, index| {
                let taken = round[index as usize].lock().unwrap_or_else(|poison| poison.into_inner()).take();
                let Some(workgroup) = taken else { return true };
                self.waiting.fetch_sub(1, Ordering::Relaxed);
                self.run(dispatch, memory, lds, RunFrom::Resume(workgroup))
            });
        }
    }

    /// The dispatch's result once every workgroup has ended: the first failure, if any, with the
    /// status ROCr's queue error gives its kind, and its text (for the caller to name the kernel).
    fn outcome(self) -> Result<(), (hsa_status_t, String)> {
        let Some(error) = self.failure.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) else {
            return Ok(());
        };
        let code = match error {
            ExecError::Fault { .. } => status::ERROR_MEMORY_FAULT,
            ExecError::Unsupported { .. } | ExecError::Decode(_) | ExecError::PcOutOfRange { .. } => {
                status::ERROR_ILLEGAL_INSTRUCTION
            }
            ExecError::Descriptor(_) => status::ERROR_INVALID_CODE_OBJECT,
            ExecError::Trap { .. } | ExecError::InstructionLimit { .. } => status::ERROR_EXCEPTION,
            ExecError::OutOfResources(_) => status::ERROR_OUT_OF_RESOURCES,
            // Stopped by the queue's teardown (which reports nothing to the client) or by
            // the watchdog, the soft runtime's stand-in for a GPU's hang detection.
            ExecError::Interrupted { .. } if self.queue.stop.load(Ordering::Acquire) => status::ERROR_INVALID_QUEUE,
            ExecError::Interrupted { .. } => status::ERROR_EXCEPTION,
            // The native tier was forced and cannot run this kernel here.
            ExecError::NativeUnavailable(_) => status::ERROR_INVALID_ISA,
        };
        Err((code, error.to_string()))
    }
}
