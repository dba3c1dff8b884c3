//! A dispatch's waves: their initial state and the loop that runs a workgroup.
//!
//! Initial state: AMDGPUUsage, "Initial Kernel Execution State" (GFX6–GFX12). User SGPRs come
//! first, in this order, each only if `kernel_code_properties` enables it: private segment
//! buffer (4), dispatch pointer (2), queue pointer (2), kernarg segment pointer (2), dispatch id
//! (2), flat scratch init (2), private segment size (1). System SGPRs start at `USER_SGPR_COUNT`
//! (compute_pgm_rsrc2 bits 5:1), each only if rsrc2 enables it: workgroup id X (bit 7), Y
//! (bit 8), Z (bit 9), workgroup info (bit 10), private segment wavefront offset (bit 0). On
//! GFX11 the work-item ids arrive packed in v0: X in bits 9:0, Y in 19:10, Z in 29:20; on
//! gfx10.3 each in its own VGPR, X in v0, Y in v1, Z in v2 (LLVM's `FeaturePackedTID`, which
//! gfx90a and GFX11 have and GFX10 does not; AMDGPUUsage, "Initial Kernel Execution State").

use super::decoded_kernel::{Decoded, DecodedKernel, Plan};
use super::memory_ops::Operation;
use super::site::{Topology, WaveSite};
use super::wave::{EXEC, Flow, LANES, Wave};
use super::{ExecError, Memory, memory_ops, scalar, valu};
use crate::compiled::Tier;

/// What one dispatch packet asks for, as the interpreter needs it.
#[derive(Clone, Copy)]
pub struct Dispatch<'a> {
    pub kernel: &'a DecodedKernel,
    /// The dispatch packet's address (the dispatch pointer SGPRs).
    pub packet_address: u64,
    /// The queue's `hsa_queue_t` address (the queue pointer SGPRs).
    pub queue_address: u64,
    pub kernarg_address: u64,
    pub dispatch_id: u64,
    /// The grid and workgroup sizes, in work-items.
    pub grid: [u32; 3],
    pub workgroup: [u16; 3],
    /// LDS bytes per workgroup and scratch bytes per work-item, as the packet asks.
    pub group_segment_size: u32,
    pub private_segment_size: u32,
    /// Instructions one wave may execute before it is deemed hung.
    pub instruction_limit: u64,
    /// The clock `s_sendmsg_rtn_b64 MSG_RTN_GET_REALTIME` reads (the agent's timestamp clock).
    pub realtime: fn() -> u64,
    /// Which tier runs the waves: the interpreter, compiled code, or compiled code where it can.
    pub tier: Tier,
    /// The agent's compute units, engines and arrays, which `s_getreg_b32`'s wave identity
    /// registers report places in (`hw_registers.rs`).
    pub topology: Topology,
    /// A number no other dispatch in the process has, or 0 for none: under one, a thread's
    /// native workgroups keep the host ranges the memory granted ([`crate::interp::Memory::host_range`],
    /// valid for the rest of the dispatch) from one workgroup to the next.
    pub serial: u64,
    /// Asked between a workgroup's rounds of turns, so at most every `LONE_SLICE` (65,536) instructions
    /// of a wave that runs alone and every round of a workgroup's waves, with the time
    /// ([`Rounds`]). [`Interrupt::Stop`] stops the workgroup there with
    /// [`ExecError::Interrupted`] (the soft runtime's queue destroyed or inactivated, its watchdog
    /// expired, another workgroup failed); [`Interrupt::Save`] saves it for later
    /// ([`Ran::Saved`]). `None`: never asked.
    pub interrupt: Option<&'a InterruptFn<'a>>,
}

impl<'a> Dispatch<'a> {
    /// Instructions a wave of [`Dispatch::new`] (and of the soft runtime's dispatches) may execute
    /// before it is deemed hung: 2³², minutes of work on one core.
    pub const DEFAULT_INSTRUCTION_LIMIT: u64 = 1 << 32;

    /// A dispatch of `kernel` over `grid` work-items in workgroups of `workgroup`, asking nothing
    /// else: no packet, queue or kernarg address (their SGPRs read 0), dispatch id 0, no LDS or
    /// scratch past what the descriptor fixes (a run takes the larger of the two),
    /// [`Dispatch::DEFAULT_INSTRUCTION_LIMIT`], a clock that reads 0, the interpreter, one compute
    /// unit, never interrupted. Set what differs with struct update syntax:
    /// `Dispatch { tier: Tier::Native, ..Dispatch::new(&kernel, grid, workgroup) }`.
    pub fn new(kernel: &'a DecodedKernel, grid: [u32; 3], workgroup: [u16; 3]) -> Dispatch<'a> {
        Dispatch {
            kernel,
            packet_address: 0,
            queue_address: 0,
            kernarg_address: 0,
            dispatch_id: 0,
            grid,
            workgroup,
            group_segment_size: 0,
            private_segment_size: 0,
            instruction_limit: Self::DEFAULT_INSTRUCTION_LIMIT,
            topology: Topology::default(),
            realtime: || 0,
            tier: Tier::Interpreter,
            serial: 0,
            interrupt: None,
        }
    }
}

/// [`Dispatch::interrupt`]'s function.
pub type InterruptFn<'a> = dyn Fn(&Rounds) -> Option<Interrupt> + Sync + 'a;

/// What [`Dispatch::interrupt`] does to a workgroup between its rounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interrupt {
    /// The workgroup fails with [`ExecError::Interrupted`] for this reason.
    Stop(String),
    /// The workgroup's state is saved and its thread given back: the run returns
    /// [`Ran::Saved`], which resumes on any thread ([`RunFrom::Resume`]). The soft runtime's
    /// context save, as a GPU's scheduler saves a queue's waves to give their compute units to
    /// another queue.
    Save,
}

/// The time as [`Dispatch::interrupt`] is asked: when this run of the workgroup (from its begin
/// or its last resume) first finished a round, and now. Read only where an interrupt is asked.
#[derive(Debug, Clone, Copy)]
pub struct Rounds {
    pub began: std::time::Instant,
    pub now: std::time::Instant,
}

/// Where a run of a workgroup starts.
pub enum RunFrom {
    /// The workgroup's beginning, by its id.
    Begin([u32; 3]),
    /// Where [`Interrupt::Save`] left it.
    Resume(SavedWorkgroup),
}

/// How a run of a workgroup ended.
#[derive(Debug)]
pub enum Ran {
    /// Every wave ended, after executing this many instructions.
    Ended(u64),
    /// [`Interrupt::Save`] saved it: resume it with [`RunFrom::Resume`], on any thread.
    Saved(SavedWorkgroup),
}

/// A workgroup's state between rounds: its waves and its LDS. It belongs to one dispatch (the
/// same `Dispatch` must resume it) and owns everything it holds, so it may move between threads.
pub struct SavedWorkgroup {
    workgroup_id: [u32; 3],
    waves: Vec<Wave>,
    lds: Vec<u8>,
}

impl core::fmt::Debug for SavedWorkgroup {
    fn fmt(&self, formatter: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        formatter
            .debug_struct("SavedWorkgroup")
            .field("workgroup_id", &self.workgroup_id)
            .field("waves", &self.waves.len())
            .field("pc", &self.pc())
            .field("lds_bytes", &self.lds.len())
            .finish()
    }
}

impl SavedWorkgroup {
    pub fn workgroup_id(&self) -> [u32; 3] {
        self.workgroup_id
    }

    /// Where its first wave that has not ended stands.
    pub fn pc(&self) -> u64 {
        first_live_pc(&self.waves)
    }
}

/// The PC of the first of `waves` that has not ended (0 if all have): where a stopped or saved
/// workgroup stands.
fn first_live_pc(waves: &[Wave]) -> u64 {
    waves.iter().find(|wave| !wave.ended).map_or(0, |wave| wave.pc)
}

/// Runs a workgroup of `dispatch` (from its beginning or where it was saved) on the interpreter,
/// whatever tier the dispatch names (`crate::run_or_save` honours it), to its end or until
/// [`Dispatch::interrupt`] saves it; `lds` is reused between calls.
///
/// The wave loop is compiled twice: for x86-64's baseline, and for the AVX2/FMA hosts nearly
/// every x86-64 machine of the last decade is, picked once per call by what the CPU has. Rows of
/// 32 lanes are four AVX2 vectors; on the baseline's SSE2 several lane operations (unsigned
/// min and max, 32-bit multiplies, FMA) are scalar. The result is the same either way.
///
/// The instruction steps are inlined into the wave loop in optimized builds only
/// (`cfg_attr(not(debug_assertions), inline(always))`): unoptimized, the one frame would hold
/// every inlined operation's rows at once, and it overflowed 2 MiB thread stacks. The vector
/// ALU's general path is the exception, out of line in both instruction sets (`valu::general`):
/// inlined, it made the loop too large to compile in reasonable time.
pub(crate) fn run_workgroup_interpreted<M: Memory + ?Sized>(
    dispatch: &Dispatch<'_>,
    memory: &M,
    from: RunFrom,
    lds: &mut Vec<u8>,
) -> Result<Ran, ExecError> {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::compiled::wide_vectors() {
            // SAFETY: the CPU has every feature the function is compiled for (`wide_vectors`).
            return unsafe { run_workgroup_avx2(dispatch, memory, from, lds) };
        }
    }
    run_workgroup_turns(dispatch, from, lds, |wave, lds, shares| {
        run_wave::<M, false>(dispatch, memory, wave, lds, shares)
    })
}

/// The AVX2 instantiation of the interpreter's wave loop, which only this function makes (its
/// callees may use the features it is compiled for).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
fn run_workgroup_avx2<M: Memory + ?Sized>(
    dispatch: &Dispatch<'_>,
    memory: &M,
    from: RunFrom,
    lds: &mut Vec<u8>,
) -> Result<Ran, ExecError> {
    run_workgroup_turns(dispatch, from, lds, |wave, lds, shares| {
        run_wave::<M, true>(dispatch, memory, wave, lds, shares)
    })
}

/// One wave's turn in the interpreter, in the build a dispatch's workgroups run
/// ([`run_workgroup_interpreted`]: the AVX2 one where the host has it), so that a lone wave
/// (`run::run_code`) computes exactly what the same wave computes in a dispatch.
pub(crate) fn run_wave_interpreted(
    dispatch: &Dispatch<'_>,
    memory: &dyn Memory,
    wave: &mut Wave,
    lds: &mut [u8],
    shares: bool,
) -> Result<(), ExecError> {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::compiled::wide_vectors() {
            // SAFETY: the CPU has every feature the function is compiled for (`wide_vectors`).
            return unsafe { run_wave_avx2(dispatch, memory, wave, lds, shares) };
        }
    }
    run_wave::<dyn Memory, false>(dispatch, memory, wave, lds, shares)
}

/// The AVX2 instantiation of [`run_wave_interpreted`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
fn run_wave_avx2(
    dispatch: &Dispatch<'_>,
    memory: &dyn Memory,
    wave: &mut Wave,
    lds: &mut [u8],
    shares: bool,
) -> Result<(), ExecError> {
    run_wave::<dyn Memory, true>(dispatch, memory, wave, lds, shares)
}

/// The workgroup loop of both tiers: sets up the workgroup's waves and the LDS (or takes a saved
/// workgroup's back), and gives the waves turns through `turn` (a tier's wave loop:
/// `turn(wave, lds, shares)` runs the wave until it ends, reaches a barrier or, when it `shares`
/// the workgroup, yields) until every wave has ended, releasing barriers as the hardware does,
/// or until [`Dispatch::interrupt`] stops or saves it. Returns the instructions the waves
/// executed, or the saved workgroup.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn run_workgroup_turns(
    dispatch: &Dispatch<'_>,
    from: RunFrom,
    lds: &mut Vec<u8>,
    mut turn: impl FnMut(&mut Wave, &mut [u8], bool) -> Result<(), ExecError>,
) -> Result<Ran, ExecError> {
    let (workgroup_id, mut waves) = match from {
        RunFrom::Begin(workgroup_id) => (workgroup_id, begin_workgroup(dispatch, workgroup_id, lds)?),
        RunFrom::Resume(saved) => {
            // The thread's own buffer goes: a resume is rare (a slice of milliseconds each).
            *lds = saved.lds;
            (saved.workgroup_id, saved.waves)
        }
    };
    // The waves take turns: each runs until it ends, reaches `s_barrier` or yields (a backward
    // branch after a slice, `s_sleep`), so they progress together, as on the hardware, and a wave
    // that spins on what a later wave writes sees it. A wave alone yields every `LONE_SLICE`
    // instructions, so that `Dispatch::interrupt` is asked.
    let shared = waves.len() > 1;
    // When this run first finished a round: read only where an interrupt is asked.
    let mut began = None;
    loop {
        for wave in waves.iter_mut().filter(|wave| !wave.ended && !wave.at_barrier) {
            turn(wave, lds, shared)?;
        }
        if waves.iter().all(|wave| wave.ended) {
            break;
        }
        // Every live wave is at the barrier (a wave that ended no longer counts): release them
        // together.
        if waves.iter().all(|wave| wave.ended || wave.at_barrier) {
            for wave in &mut waves {
                wave.at_barrier = false;
            }
        }
        // Between rounds only: a workgroup that ends in its first round is never asked.
        let Some(interrupt) = dispatch.interrupt else { continue };
        let now = std::time::Instant::now();
        let rounds = Rounds { began: *began.get_or_insert(now), now };
        match interrupt(&rounds) {
            None => {}
            Some(Interrupt::Stop(reason)) => {
                let pc = first_live_pc(&waves);
                // The waves' allocations are kept for the next workgroup, as on the way out below.
                SPARE_WAVES.set(waves);
                return Err(ExecError::Interrupted { pc, reason });
            }
            Some(Interrupt::Save) => {
                return Ok(Ran::Saved(SavedWorkgroup { workgroup_id, waves, lds: core::mem::take(lds) }));
            }
        }
    }
    let executed = waves.iter().map(|wave| wave.executed).sum();
    SPARE_WAVES.set(waves);
    Ok(Ran::Ended(executed))
}

/// Workgroup `workgroup_id`'s waves, started, and its LDS in `lds`, zeroed.
#[cfg_attr(not(debug_assertions), inline(always))]
fn begin_workgroup(dispatch: &Dispatch<'_>, workgroup_id: [u32; 3], lds: &mut Vec<u8>) -> Result<Vec<Wave>, ExecError> {
    let kernel = dispatch.kernel;
    let descriptor = &kernel.descriptor;
    lds.clear();
    let group_bytes = dispatch.group_segment_size.max(descriptor.group_segment_fixed_size) as usize;
    lds.try_reserve_exact(group_bytes)
        .map_err(|_| ExecError::OutOfResources(format!("the host could not allocate {group_bytes} bytes of LDS")))?;
    lds.resize(group_bytes, 0);
    // A workgroup at the grid's edge holds only the work-items inside the grid.
    let size: [u32; 3] = core::array::from_fn(|axis| {
        let full = dispatch.workgroup[axis] as u32;
        full.min(dispatch.grid[axis].saturating_sub(workgroup_id[axis].saturating_mul(full)))
    });
    // The hardware's limit; the packet processor refuses more before it gets here.
    let items = size.iter().map(|&axis| u64::from(axis)).product::<u64>();
    if items > 1024 {
        return Err(ExecError::Descriptor(format!("a workgroup of {items} work-items; the most is 1024")));
    }
    let items = items as u32;
    let private_bytes = dispatch.private_segment_size.max(descriptor.private_segment_fixed_size) as usize;
    let wave_size = if descriptor.wave32() { LANES } else { 2 * LANES } as u32;
    // The last workgroup's waves on this thread, started again in place: allocating, moving and
    // freeing a wave per wave was a tenth of a short kernel's time.
    let count = items.div_ceil(wave_size) as usize;
    let start = WaveStart::new(dispatch, workgroup_id, size, items, private_bytes)?;
    let mut waves = SPARE_WAVES.take();
    waves.truncate(count);
    waves.resize_with(count, unstarted_wave);
    for (index, wave) in waves.iter_mut().enumerate() {
        start.reserve(wave)?;
        start.start(wave, index as u32);
    }
    Ok(waves)
}

thread_local! {
    /// The waves of the last workgroup this thread ran, whose register files and scratch the
    /// next workgroup's waves reuse (cleared).
    static SPARE_WAVES: core::cell::Cell<Vec<Wave>> = const { core::cell::Cell::new(Vec::new()) };
}

/// A wave with nothing allocated, for [`start_wave`] to start.
fn unstarted_wave() -> Wave {
    Wave {
        sgpr: [0; 128],
        vgpr: Vec::new(),
        scc: false,
        pc: 0,
        ended: true,
        at_barrier: false,
        scratch: Vec::new(),
        private_bytes: 0,
        executed: 0,
        realtime: || 0,
        mode: 0,
        wide: false,
        half: 0,
        other: Default::default(),
        site: Default::default(),
    }
}

/// What every wave of one workgroup starts with, worked out once per workgroup: its SGPRs but
/// EXEC (the user SGPRs, then the system SGPRs), MODE, and its shape. A wave of it starts with
/// [`WaveStart::start`]; working the SGPRs out per wave was most of a short kernel's wave start.
struct WaveStart {
    /// SGPRs from s0; every later one starts at 0.
    sgpr: [u32; STARTED_SGPRS],
    entry: u64,
    /// VGPR rows per half, and scratch bytes per lane.
    registers: usize,
    private_bytes: usize,
    mode: u32,
    wide: bool,
    realtime: fn() -> u64,
    /// The workgroup's size in work-items, inside the grid, and its work-item count.
    size: [u32; 3],
    items: u32,
    wave_size: u32,
    /// `ENABLE_VGPR_WORKITEM_ID` (rsrc2 bits 12:11) and whether the ids are packed into v0.
    dimensions: u32,
    packed: bool,
    /// gfx12's `ttmp9` and `ttmp7` (`Isa::architected_workgroup_ids`), if the ISA has them.
    architected: Option<[u32; 2]>,
    /// The workgroup's place and allocation; each wave adds its index.
    site: WaveSite,
}

/// The SGPRs a wave's start may set: at most 31 user SGPRs (`USER_SGPR_COUNT` is 5 bits) and
/// 5 system SGPRs after them.
const STARTED_SGPRS: usize = 48;

impl WaveStart {
    /// The start of workgroup `workgroup_id`'s waves, whose `size` (work-items inside the grid)
    /// holds `items` (at most 1024); `Err` where the descriptor's user SGPRs do not fit its
    /// `USER_SGPR_COUNT`.
    fn new(
        dispatch: &Dispatch<'_>,
        workgroup_id: [u32; 3],
        size: [u32; 3],
        items: u32,
        private_bytes: usize,
    ) -> Result<WaveStart, ExecError> {
        let descriptor = &dispatch.kernel.descriptor;
        let wide = !descriptor.wave32();
        let wave_size = if wide { 2 * LANES } else { LANES } as u32;
        let mut sgpr = [0u32; STARTED_SGPRS];
        let properties = descriptor.kernel_code_properties;
        let mut next = 0usize;
        let mut put = |values: &[u32]| {
            for value in values {
                if let Some(register) = sgpr.get_mut(next) {
                    *register = *value;
                }
                next += 1;
            }
        };
        let pair = |value: u64| [value as u32, (value >> 32) as u32];
        if properties & 1 != 0 {
            // The private segment buffer: MUBUF accesses through it (gfx10's scratch) reach the
            // lane's scratch in the interpreter's per-lane model (`memory_ops::buffer`), so it
            // carries a marker base, ADD_TID_ENABLE as the hardware's does, and the size.
            let base = super::wave::SCRATCH_RESOURCE_BASE;
            put(&[base as u32, (base >> 32) as u32, private_bytes as u32, super::wave::ADD_TID_ENABLE]);
        }
        if properties & 2 != 0 {
            put(&pair(dispatch.packet_address));
        }
        if properties & 4 != 0 {
            put(&pair(dispatch.queue_address));
        }
        if properties & 8 != 0 {
            put(&pair(dispatch.kernarg_address));
        }
        if properties & 16 != 0 {
            put(&pair(dispatch.dispatch_id));
        }
        if properties & 32 != 0 {
            put(&[0, private_bytes as u32]);
        }
        if properties & 64 != 0 {
            put(&[private_bytes as u32]);
        }
        let user = descriptor.user_sgpr_count();
        if next > user as usize {
            return Err(ExecError::Descriptor(format!(
                "the enabled user SGPRs need {next} registers but USER_SGPR_COUNT is {user}"
            )));
        }
        let rsrc2 = descriptor.compute_pgm_rsrc2;
        let mut system = user as usize;
        let mut put_system = |value: u32| {
            if let Some(register) = sgpr.get_mut(system) {
                *register = value;
            }
            system += 1;
        };
        for (bit, value) in [(7, workgroup_id[0]), (8, workgroup_id[1]), (9, workgroup_id[2])] {
            if rsrc2 >> bit & 1 == 1 {
                put_system(value);
            }
        }
        if rsrc2 >> 10 & 1 == 1 {
            // Workgroup info: the wave count in bits 5:0 and whether the group is partial in bit 6
            // … the kernels here do not read it; record the wave count.
            put_system(items.div_ceil(wave_size));
        }
        if rsrc2 & 1 == 1 {
            // The private segment wavefront offset: every wave's scratch starts at 0 here.
            put_system(0);
        }
        Ok(WaveStart {
            sgpr,
            entry: dispatch.kernel.entry,
            registers: descriptor.vgprs() + dispatch.kernel.extra_vgprs,
            private_bytes,
            mode: initial_mode(descriptor.compute_pgm_rsrc1),
            wide,
            realtime: dispatch.realtime,
            size,
            items,
            wave_size,
            dimensions: (rsrc2 >> 11) & 3,
            packed: dispatch.kernel.isa.packed_work_item_ids(),
            architected: dispatch
                .kernel
                .isa
                .architected_workgroup_ids()
                .then(|| [workgroup_id[0], (workgroup_id[1] & 0xFFFF) | workgroup_id[2] << 16]),
            site: WaveSite {
                cu: placed_cu(dispatch, workgroup_id),
                wave: 0,
                waves: items.div_ceil(wave_size),
                topology: dispatch.topology,
                rsrc1: descriptor.compute_pgm_rsrc1,
                wave32: !wide,
                lds_bytes: dispatch.group_segment_size.max(descriptor.group_segment_fixed_size),
            },
        })
    }

    /// Makes room in `wave` for what [`WaveStart::start`] sets up (VGPR rows and scratch, both
    /// halves of a wave64 wave), so that the start allocates nothing. `Err`, with the wave as it
    /// was, where the host cannot allocate it: a failed allocation is the dispatch's
    /// OUT_OF_RESOURCES, never an abort of the process.
    fn reserve(&self, wave: &mut Wave) -> Result<(), ExecError> {
        let scratch = self.private_bytes.checked_mul(LANES);
        let fits = |rows: &mut Vec<[u32; LANES]>, bytes: &mut Vec<u8>| {
            let scratch = scratch.ok_or(())?;
            rows.try_reserve_exact(self.registers.saturating_sub(rows.len())).map_err(|_| ())?;
            bytes.try_reserve_exact(scratch.saturating_sub(bytes.len())).map_err(|_| ())
        };
        let mut result = fits(&mut wave.vgpr, &mut wave.scratch);
        if self.wide && result.is_ok() {
            result = fits(&mut wave.other.vgpr, &mut wave.other.scratch);
        }
        result.map_err(|()| {
            ExecError::OutOfResources(format!(
                "the host could not allocate a wave's {} VGPRs and {} bytes of scratch per lane",
                self.registers, self.private_bytes
            ))
        })
    }

    /// Starts `wave` as wave `index` of the workgroup, as the hardware starts it: every register
    /// and scratch byte cleared but what the start sets, the allocations it holds reused.
    /// Inlined, so that a caller compiled for AVX2 clears and writes rows in 256-bit vectors.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn start(&self, wave: &mut Wave, index: u32) {
        let (registers, private_bytes) = (self.registers, self.private_bytes);
        let cleared = |rows: &mut Vec<[u32; LANES]>, bytes: &mut Vec<u8>, wanted: bool| {
            rows.clear();
            bytes.clear();
            if wanted {
                rows.resize(registers, [0; LANES]);
                bytes.resize(private_bytes * LANES, 0);
            }
        };
        cleared(&mut wave.vgpr, &mut wave.scratch, true);
        cleared(&mut wave.other.vgpr, &mut wave.other.scratch, self.wide);
        // Two fixed-size writes, inlined, where a copy of all 128 was a call to `memcpy`.
        wave.sgpr[..STARTED_SGPRS].copy_from_slice(&self.sgpr);
        wave.sgpr[STARTED_SGPRS..].fill(0);
        if let Some([ttmp9, ttmp7]) = self.architected {
            // ttmp0 is operand 108 (RDNA3 and RDNA4 ISA guides, the SSRC table).
            wave.sgpr[108 + 9] = ttmp9;
            wave.sgpr[108 + 7] = ttmp7;
        }
        wave.scc = false;
        wave.pc = self.entry;
        wave.ended = false;
        wave.at_barrier = false;
        wave.private_bytes = private_bytes;
        wave.executed = 0;
        wave.realtime = self.realtime;
        wave.mode = self.mode;
        wave.wide = self.wide;
        wave.half = 0;
        wave.site = WaveSite { wave: index, ..self.site };
        // The wave's lanes are work-items `first ..`, X fastest; the last wave may be partial.
        let first = index * self.wave_size;
        let lanes = self.items.saturating_sub(first).min(self.wave_size);
        let exec = if lanes >= 64 { u64::MAX } else { (1u64 << lanes) - 1 };
        wave.sgpr[EXEC as usize] = exec as u32;
        if self.wide {
            wave.sgpr[EXEC as usize + 1] = (exec >> 32) as u32;
        }
        let size = self.size;
        if size[1] == 1 && size[2] == 1 {
            // A one-dimensional workgroup: x is the lane's work-item index, y and z are 0 (their
            // rows are already clear), in either ISA's layout. Written in place, lane by index,
            // so that it compiles to vectors.
            let ids = |row: &mut [u32; LANES], start: u32| {
                for (lane, id) in row.iter_mut().enumerate() {
                    let lane = start + lane as u32;
                    *id = if lane < lanes { first + lane } else { 0 };
                }
            };
            if let Some(row) = wave.vgpr.get_mut(0) {
                ids(row, 0);
            }
            if let Some(row) = wave.other.vgpr.get_mut(0).filter(|_| self.wide) {
                ids(row, LANES as u32);
            }
            return;
        }
        self.multi_dimensional_ids(wave, first, lanes as usize);
    }

    /// Writes the work-item ids of wave lanes `first ..` (`lanes` of them) of a workgroup of
    /// more than one dimension into its cleared rows. Out of line, so that the common
    /// one-dimensional start stays short.
    #[inline(never)]
    fn multi_dimensional_ids(&self, wave: &mut Wave, first: u32, lanes: usize) {
        let size = self.size;
        // Each lane's (x, y, z): one step along X per lane from the first lane's (no division per
        // lane: three of them per lane were a tenth of a tiled GEMM's time), written straight into
        // the cleared rows (a write per lane through the wave's accessors was a fifth of a fill; an
        // array of every lane's three ids, packed and copied, was most of a 2D workgroup's start).
        let (mut x, mut y, mut z) = (first % size[0], first / size[0] % size[1], first / (size[0] * size[1]));
        // gfx11's packed v0 holds y and z only where they are enabled.
        let dimensions = self.dimensions;
        let (y_mask, z_mask) = (if dimensions >= 1 { u32::MAX } else { 0 }, if dimensions >= 2 { u32::MAX } else { 0 });
        let axes = dimensions.min(2) as usize + 1;
        for (half, rows) in [&mut wave.vgpr, &mut wave.other.vgpr].into_iter().enumerate() {
            let count = lanes.saturating_sub(half * LANES).min(LANES);
            if count == 0 {
                break;
            }
            // Every wave holds at least eight rows (a granule), so the three are there.
            let [row_x, row_y, row_z, ..] = &mut rows[..] else { break };
            for slot in 0..count {
                if self.packed {
                    row_x[slot] = x | (y << 10) & y_mask | (z << 20) & z_mask;
                } else {
                    row_x[slot] = x;
                    if axes > 1 {
                        row_y[slot] = y;
                    }
                    if axes > 2 {
                        row_z[slot] = z;
                    }
                }
                x += 1;
                if x == size[0] {
                    x = 0;
                    y += 1;
                    if y == size[1] {
                        y = 0;
                        z += 1;
                    }
                }
            }
        }
    }
}

/// The compute unit workgroup `workgroup_id` runs on: its linear id (X fastest) modulo the
/// agent's compute units, as the dispatcher deals workgroups out to CUs in turn.
fn placed_cu(dispatch: &Dispatch<'_>, workgroup_id: [u32; 3]) -> u32 {
    let counts: [u64; 3] = core::array::from_fn(|axis| {
        u64::from(dispatch.grid[axis]).div_ceil(u64::from(dispatch.workgroup[axis].max(1)))
    });
    let linear =
        u64::from(workgroup_id[0]) + counts[0] * (u64::from(workgroup_id[1]) + counts[1] * u64::from(workgroup_id[2]));
    (linear % u64::from(dispatch.topology.compute_units.max(1))) as u32
}

/// MODE at a wave's start, from COMPUTE_PGM_RSRC1 (AMDGPUUsage): FLOAT_ROUND_MODE_32 (bits
/// 13:12), FLOAT_ROUND_MODE_16_64 (15:14), FLOAT_DENORM_MODE_32 (17:16) and _16_64 (19:18) are
/// MODE's bits 7:0; ENABLE_DX10_CLAMP (bit 21) and ENABLE_IEEE_MODE (bit 23) its bits 8 and 9.
fn initial_mode(rsrc1: u32) -> u32 {
    (rsrc1 >> 12) & 0xFF | ((rsrc1 >> 21) & 1) << 8 | ((rsrc1 >> 23) & 1) << 9
}

/// Instructions a wave of a several-wave workgroup runs before it yields at a backward branch:
/// long enough that switching costs nothing measurable, short enough that a wave spinning on a
/// flag another wave sets hands over within a few microseconds.
pub(crate) const SLICE: u64 = 256;

/// Instructions a wave that runs alone in its workgroup runs before it leaves its turn at a
/// backward branch, so that [`Dispatch::interrupt`] is asked: a wave spinning forever stops
/// within a fraction of a millisecond of its queue's destruction, and a loop pays one turn's
/// return per 65,536 instructions.
pub(crate) const LONE_SLICE: u64 = 1 << 16;

/// The instructions a wave runs before it yields at a backward branch: [`SLICE`] where it
/// `shares` its workgroup, [`LONE_SLICE`] where it runs alone.
#[inline(always)]
pub(crate) const fn slice(shares: bool) -> u64 {
    if shares { SLICE } else { LONE_SLICE }
}

/// Runs `wave` until it ends or reaches a barrier, or until it yields: at a backward branch once
/// it has run [`slice`] instructions this turn, and, when it `shares` its workgroup with other
/// waves, at `s_sleep`.
///
/// A wave64 wave runs a per-half instruction twice: the low half, then, on the loop's next turn
/// at the same PC, the high half with its own lanes and mask halves. The step has one call site,
/// so it is inlined once: a second copy (a loop of its own for wave64, or two passes per turn)
/// made one function that took the optimizer several times as long to compile.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn run_wave<M: Memory + ?Sized, const WIDE: bool>(
    dispatch: &Dispatch<'_>,
    memory: &M,
    wave: &mut Wave,
    lds: &mut [u8],
    shares: bool,
) -> Result<(), ExecError> {
    let kernel = dispatch.kernel;
    let turn_start = wave.executed;
    loop {
        let pc = wave.pc;
        let decoded = kernel.fetch(pc)?;
        wave.executed += 1;
        if wave.executed > dispatch.instruction_limit {
            return Err(ExecError::InstructionLimit { pc, limit: dispatch.instruction_limit });
        }
        let flow = step::<M, WIDE>(memory, wave, decoded, lds)?;
        if wave.wide && high_half_next(wave, &decoded.plan) {
            continue;
        }
        // Per-half instructions all go on to the next: the high half's flow is the wave's.
        match flow {
            Flow::Next => wave.pc = pc + decoded.len as u64,
            Flow::Jump(target) => {
                wave.pc = target;
                if target <= pc && wave.executed - turn_start >= slice(shares) {
                    return Ok(());
                }
            }
            Flow::Sleep => {
                wave.pc = pc + decoded.len as u64;
                if shares {
                    return Ok(());
                }
            }
            Flow::End => {
                wave.ended = true;
                return Ok(());
            }
            Flow::Barrier => {
                wave.pc = pc + decoded.len as u64;
                wave.at_barrier = true;
                return Ok(());
            }
        }
    }
}

/// Runs one instruction's plan.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn step<M: Memory + ?Sized, const WIDE: bool>(
    memory: &M,
    wave: &mut Wave,
    decoded: &Decoded,
    lds: &mut [u8],
) -> Result<Flow, ExecError> {
    let instruction = &decoded.instruction;
    Ok(match &decoded.plan {
        Plan::Vector(op) => valu::step::<WIDE>(wave, op).ok_or_else(|| refused(wave, decoded))?,
        Plan::Scalar => scalar::step(wave, instruction, memory).map_err(|error| decoded.named(error))?,
        Plan::HwReg(read) => {
            super::hw_registers::step(wave, read)?;
            Flow::Next
        }
        Plan::Memory(access) => {
            memory_ops::step(wave, instruction, access, memory, lds).map_err(|error| decoded.named(error))?
        }
        Plan::Dual(pair) => valu::step_dual::<WIDE>(wave, &pair.0, &pair.1).ok_or_else(|| refused(wave, decoded))?,
        Plan::Dot2x16(dot) => super::decoded_kernel::from_gfx10::dot2_16(wave, &dot.0, dot.1),
        Plan::Sdwa(sdwa) => {
            super::decoded_kernel::from_gfx10::sdwa_step::<WIDE>(wave, sdwa).ok_or_else(|| refused(wave, decoded))?
        }
        Plan::ZeroHigh(op) => {
            let flow = valu::step::<WIDE>(wave, op).ok_or_else(|| refused(wave, decoded))?;
            super::decoded_kernel::from_gfx9::zero_high(wave, op);
            flow
        }
        Plan::CmpxMask(op) => {
            let flow = valu::step::<WIDE>(wave, op).ok_or_else(|| refused(wave, decoded))?;
            super::decoded_kernel::from_gfx9::mask_to_exec(wave, op);
            flow
        }
        Plan::ShiftAdd64(pair) => {
            super::decoded_kernel::from_gfx9::shift_add_step(wave, &pair.0, &pair.1);
            Flow::Next
        }
        Plan::PkMov(mov) => {
            super::decoded_kernel::from_gfx9::pk_mov(wave, &mov.0, mov.1);
            Flow::Next
        }
        Plan::Gfx12(own) => super::decoded_kernel::from_gfx12::step(wave, own, instruction, memory, lds)
            .map_err(|error| decoded.named(error))?,
        Plan::Unfused(mad) => valu::step_unfused(wave, &mad.0, mad.1).ok_or_else(|| refused(wave, decoded))?,
        Plan::WaveDpp(dpp) => {
            super::decoded_kernel::from_gfx9::wave_dpp_step::<WIDE>(wave, dpp).ok_or_else(|| refused(wave, decoded))?
        }
        Plan::Mfma(mfma) => {
            if !super::mfma::step(wave, mfma) {
                return Err(refused(wave, decoded));
            }
            Flow::Next
        }
        Plan::AgprMemory(agprs) => {
            if !agprs.exchange(wave) {
                return Err(refused(wave, decoded));
            }
            let flow = memory_ops::step(wave, instruction, &agprs.access, memory, lds);
            agprs.exchange(wave);
            flow.map_err(|error| decoded.named(error))?
        }
        Plan::BothHalves(guarded) => both_halves::<M, WIDE>(memory, wave, &guarded.0, guarded.1, lds)?,
        Plan::Unsupported => return Err(refused(wave, decoded)),
    })
}

/// Runs a `Plan::BothHalves` (`decoded_kernel/both_halves.rs`): `inner`'s plan for both halves
/// of a wave64 wave in one step: the low half, then the high half with `register` (the low
/// half's mask word) holding its value from before the instruction, then the low half's word
/// written. The wave's halves are as they were on return, also on error.
#[inline(never)]
fn both_halves<M: Memory + ?Sized, const WIDE: bool>(
    memory: &M,
    wave: &mut Wave,
    inner: &Decoded,
    register: u8,
    lds: &mut [u8],
) -> Result<Flow, ExecError> {
    let register = u32::from(register);
    let before = wave.read_sgpr(register);
    let flow = step::<M, WIDE>(memory, wave, inner, lds)?;
    let low = wave.read_sgpr(register);
    wave.write_sgpr(register, before);
    wave.swap_halves();
    let high = step::<M, WIDE>(memory, wave, inner, lds);
    wave.swap_halves();
    high?;
    wave.write_sgpr(register, low);
    Ok(flow)
}

/// After a wave64 wave's step: whether the high half's turn at the same instruction comes next
/// (swapped in, the instruction counted once), or the low half is back for the next. Out of
/// line, so that wave32's loop carries only the test of `wide`.
#[inline(never)]
fn high_half_next(wave: &mut Wave, plan: &Plan) -> bool {
    if wave.half == 0 && per_half(plan) {
        wave.executed -= 1;
        wave.swap_halves();
        return true;
    }
    if wave.half == 1 {
        wave.swap_halves();
    }
    false
}

/// Whether a wave64 wave runs `plan` once per half. Scalar instructions run once; so do the
/// lane-crossing ones that reach across the halves (`v_readlane`, `v_readfirstlane`,
/// `v_writelane`, `v_permlane64`, `ds_bpermute`, `ds_permute`), which see all 64 lanes, and
/// `ds_append`/`ds_consume`, which count them all. DPP,
/// `v_permlane16/x16` and `ds_swizzle` stay within 32 lanes and run per half (RDNA ISA guides:
/// rows of 16, `ds_swizzle`'s 32-lane groups).
pub(crate) fn per_half(plan: &Plan) -> bool {
    use crate::gfx11::Opcode::*;
    match plan {
        // An MFMA reads and writes all 64 lanes at once (`interp/mfma.rs`).
        // Both halves of a `BothHalves` plan run inside its one step.
        // gfx9's whole-wave DPP runs its halves inside its one step (`from_gfx9/dpp.rs`).
        Plan::Scalar | Plan::HwReg(_) | Plan::Unsupported | Plan::BothHalves(_) | Plan::Mfma(_) | Plan::WaveDpp(_) => {
            false
        }
        // gfx12's own steps: scalar, but for its vector memory accesses.
        Plan::Gfx12(own) => own.per_half(),
        Plan::Vector(op) => !matches!(op.opcode, VReadfirstlaneB32 | VReadlaneB32 | VWritelaneB32 | VPermlane64B32),
        Plan::Memory(access) => {
            !matches!(access.operation, Operation::Bpermute | Operation::Permute | Operation::Append { .. })
        }
        Plan::Dual(_)
        | Plan::Dot2x16(_)
        | Plan::Sdwa(_)
        | Plan::ZeroHigh(_)
        | Plan::PkMov(_)
        | Plan::ShiftAdd64(_)
        | Plan::CmpxMask(_)
        | Plan::AgprMemory(_)
        | Plan::Unfused(_) => true,
    }
}

/// The error for a planned instruction the interpreter does not execute, naming the code as
/// written (a gfx10 instruction's own mnemonic).
#[cold]
fn refused(wave: &Wave, decoded: &Decoded) -> ExecError {
    ExecError::Unsupported { pc: wave.pc, mnemonic: decoded.mnemonic() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::Regions;
    use crate::interp::decoded_kernel::Isa;

    /// A wave32 kernel descriptor (the code 64 bytes on, then `s_endpgm`) enabling the dispatch
    /// and kernarg pointers (4 user SGPRs) and workgroup id X, with `USER_SGPR_COUNT` `user`.
    fn kernel(image: &mut Vec<u32>, user: u32) -> DecodedKernel {
        image.clear();
        image.resize(16, 0);
        image[4] = 64;
        // COMPUTE_PGM_RSRC2: USER_SGPR_COUNT (bits 5:1), ENABLE_SGPR_WORKGROUP_ID_X (bit 7).
        image[13] = user << 1 | 1 << 7;
        // kernel_code_properties: the dispatch pointer (bit 1), the kernarg pointer (bit 3),
        // wave32 (bit 10).
        image[14] = 1 << 1 | 1 << 3 | 1 << 10;
        image.push(0xBFB0_0000);
        let memory = Regions(vec![(image.as_ptr() as u64, image.len() as u64 * 4)]);
        DecodedKernel::load_for(&memory, image.as_ptr() as u64, Isa::Gfx11).expect("the kernel decodes")
    }

    fn dispatch(kernel: &DecodedKernel) -> Dispatch<'_> {
        Dispatch {
            packet_address: 0x1111_2222_3333_4444,
            kernarg_address: 0x5555_6666_7777_8888,
            instruction_limit: 100,
            ..Dispatch::new(kernel, [96, 1, 1], [64, 1, 1])
        }
    }

    #[test]
    fn every_wave_of_a_workgroup_starts_with_its_user_and_system_sgprs_and_its_own_lanes() {
        let mut image = Vec::new();
        let kernel = kernel(&mut image, 4);
        let mut started = Vec::new();
        let executed =
            run_workgroup_turns(&dispatch(&kernel), RunFrom::Begin([1, 0, 0]), &mut Vec::new(), |wave, _, _| {
                started.push((wave.sgpr[..5].to_vec(), wave.sgpr[EXEC as usize], wave.vgpr[0]));
                wave.ended = true;
                Ok(())
            });
        assert!(matches!(executed, Ok(Ran::Ended(0))));
        // Workgroup 1 of a 96-item grid in groups of 64 holds items 64..96: one partial wave.
        let sgprs = vec![0x3333_4444, 0x1111_2222, 0x7777_8888, 0x5555_6666, 1];
        assert_eq!(started.len(), 1);
        assert_eq!(started[0].0, sgprs);
        assert_eq!(started[0].1, u32::MAX, "32 items: every lane");
        assert_eq!(started[0].2[..3], [0, 1, 2]);
        // Workgroup 0: two full waves, the second's ids from 32.
        started.clear();
        run_workgroup_turns(&dispatch(&kernel), RunFrom::Begin([0, 0, 0]), &mut Vec::new(), |wave, _, _| {
            started.push((wave.sgpr[..5].to_vec(), wave.sgpr[EXEC as usize], wave.vgpr[0]));
            wave.ended = true;
            Ok(())
        })
        .expect("the workgroup runs");
        assert_eq!(started.len(), 2);
        assert!(started.iter().all(|(sgpr, exec, _)| sgpr[..4] == sgprs[..4] && sgpr[4] == 0 && *exec == u32::MAX));
        assert_eq!(started[1].2[31], 63);
    }

    #[test]
    fn user_sgprs_past_the_descriptors_count_fail_the_workgroup_before_any_wave_runs() {
        let mut image = Vec::new();
        let kernel = kernel(&mut image, 3);
        let mut turns = 0;
        let result = run_workgroup_turns(&dispatch(&kernel), RunFrom::Begin([0, 0, 0]), &mut Vec::new(), |_, _, _| {
            turns += 1;
            Ok(())
        });
        match result {
            Err(ExecError::Descriptor(reason)) => assert!(reason.contains("USER_SGPR_COUNT is 3"), "{reason}"),
            other => panic!("expected a descriptor error, got {other:?}"),
        }
        assert_eq!(turns, 0);
    }
}
