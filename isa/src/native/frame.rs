//! What compiled code and the Rust side share while a wave runs natively.
//!
//! Compiled code is `extern "sysv64" fn(frame: *mut Frame, entry: *const u8) -> u32`: the
//! prologue loads the frame's pointers into callee-saved registers and jumps to `entry`, the
//! instruction at the wave's PC. It returns an exit code ([`Exit`]) with the wave's PC stored.
//!
//! Registers while compiled code runs:
//! - `r12`: the `Wave`; `r13`: its VGPR rows (`Wave::vgpr`, which no step reallocates), or a
//!   wave64 wave's high half's while that half's code runs ([`Part::High`]);
//!   `r14`: the [`Frame`]; `r15`: the LDS;
//! - `rbx`: the running half of a wave64 per-half instruction whose code runs once per half
//!   ([`Part::Running`]): 0 for the low half, 1 for the high; 0 everywhere else, so that an
//!   address of the running half's part of a lane mask, `[r12 + rbx * 4 + low half's slot]`,
//!   is the low half's (or the fixed part's) outside such code;
//! - `rbp`: the wave's executed-instruction count (`Wave::executed`), stored back at every exit;
//! - `ymm12`–`ymm15`: the inactive lanes of EXEC, 8 per register (all ones where a lane's EXEC
//!   bit is clear), valid at every instruction boundary: recomputed after anything that may
//!   write EXEC;
//! - everything else is scratch within one instruction's code.

use crate::interp::decoded_kernel::Plan;
use crate::interp::launch::{per_half, step};
use crate::interp::wave::{Flow, LANES, Wave};
use crate::interp::{DecodedKernel, ExecError, HostRange, Memory};

/// Why compiled code returned; the wave's PC is stored in each case.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Exit {
    /// The instruction's step went on (only the trampoline returns it; compiled code continues).
    Next = 0,
    /// A backward branch found the turn's budget spent ([`Frame::yield_at`]); PC is its target.
    Yield = 1,
    /// A jump compiled code does not follow itself (the step's, or to a PC with no instruction).
    Jump = 2,
    End = 3,
    /// `s_barrier`; PC is the next instruction.
    Barrier = 4,
    /// `s_sleep`; PC is the next instruction.
    Sleep = 5,
    /// The step failed; the error is in the [`Trampoline`].
    Error = 6,
}

/// What of an instruction a piece of compiled code runs, and so what its interpreter step runs
/// (the trampoline's `part`, [`fallback`]).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Part {
    /// The instruction: for a wave64 wave's per-half instruction, both halves, low first (as
    /// `interp::launch::run_wave` runs it).
    Whole = 0,
    /// A wave64 wave's lanes 0–31.
    Low = 1,
    /// A wave64 wave's lanes 32–63: `r13` holds their rows and `ymm12`–`ymm15` their masks.
    High = 2,
    /// Either half of a wave64 wave's per-half instruction, as `rbx` says at run time (0: low,
    /// 1: high): code emitted once and run once per half (`compile::translate_parts`); the
    /// trampoline gets `rbx + 1`, [`Part::Low`] or [`Part::High`]. Never passed as itself.
    Running = 3,
}

/// The frame compiled code runs against. `repr(C)`: compiled code reads its fields at their
/// `offset_of!` offsets.
#[repr(C, align(32))]
pub(super) struct Frame {
    /// Lane `i`'s EXEC bit, `1 << i`: what the EXEC masks are made from.
    pub lane_bits: [u32; LANES],
    /// 0, 4, …, 28: eight consecutive dwords' byte offsets (an LDS row's contiguous addresses).
    pub ramp: [u32; 8],
    /// Rows compiled code builds within an instruction: a DPP source after its permutation
    /// (row 0, `vector::permute`), sources with float modifiers (rows 1–3, `vector::prepare`),
    /// results before their test (row 0, `vector::checked_rows`).
    pub scratch: [[u32; LANES]; 4],
    /// A wave64 wave's inactive-lane masks per half (low, then high; four chunks of eight lanes
    /// each), as `ymm12`–`ymm15` hold the running half's: made whenever they are
    /// (`Emitter::masks`), so that a switch of halves loads them.
    pub inactive: [[[u32; 8]; 4]; 2],
    pub wave: *mut Wave,
    pub vgpr: *mut [u32; LANES],
    /// A wave64 wave's high half's rows (`Half::vgpr`, which no step reallocates either); null
    /// for wave32.
    pub vgpr_high: *mut [u32; LANES],
    pub lds: *mut u8,
    pub lds_len: u64,
    /// A backward branch leaves compiled code once `Wave::executed` reaches this.
    pub yield_at: u64,
    /// The interpreter's step for a part ([`Part`]) of instruction `index` (a word index from
    /// the entry).
    pub fallback: unsafe extern "sysv64" fn(*mut Frame, u32, u32) -> u32,
    /// Where a global access range lies in host memory ([`range`]).
    pub range: unsafe extern "sysv64" fn(*mut Frame, u64, u64, u32) -> u64,
    /// The [`Trampoline`] the fallback runs against.
    pub trampoline: *mut (),
    /// Host ranges found so far, which compiled code tests before calling [`range`].
    pub cache: RangeCache,
    /// A WMMA's operands as f64 matrices and its result rows (`matrix.rs`).
    pub matrix: MatrixScratch,
    /// The shapes of LDS address rows last classified (`lds.rs`, `Chunks::load_whole`), one slot
    /// per address VGPR modulo [`ROW_SHAPES`], and as many again for a wave64 wave's high half
    /// (whose rows differ from the low half's: sharing slots, each half would find the other's
    /// row there and classify its own again at every load).
    pub row_shapes: [RowShape; 2 * ROW_SHAPES],
    /// The dispatch whose ranges `cache` holds (`Dispatch::serial`; 0: none).
    pub serial: u64,
}

/// Address rows whose shape compiled code remembers.
pub(crate) const ROW_SHAPES: usize = 4;

/// An address row's shape, as a whole-row load found it: valid for any row equal to `row`, as
/// the shape is a function of the row's values alone (so a slot needs no invalidation when a
/// wave writes the VGPR, another wave runs, or a new dispatch reuses the frame: a row that
/// differs is classified again).
#[repr(C, align(32))]
#[derive(Clone, Copy)]
pub(crate) struct RowShape {
    pub row: [u32; LANES],
    /// The highest address in the row.
    pub highest: u32,
    /// [`SHAPE_UNKNOWN`] until classified, then [`SHAPE_BROADCAST`], [`SHAPE_CONSECUTIVE`] or
    /// [`SHAPE_GENERAL`].
    pub kind: u32,
}

/// Not classified yet: the row's equality with the slot says nothing.
pub(crate) const SHAPE_UNKNOWN: u32 = 0;
/// Each chunk of eight lanes shares one address.
pub(crate) const SHAPE_BROADCAST: u32 = 1;
/// Each chunk's eight addresses are consecutive dwords.
pub(crate) const SHAPE_CONSECUTIVE: u32 = 2;
/// Neither: eight lanes at a time by the general path.
pub(crate) const SHAPE_GENERAL: u32 = 3;

impl RowShape {
    pub(crate) const UNKNOWN: RowShape = RowShape { row: [0; LANES], highest: 0, kind: SHAPE_UNKNOWN };
}

/// Where `matrix.rs` works: A and B as f64, element (k, x) at `16 k + x` (x: A's row or B's
/// column, which is the lane holding it), and D's eight result rows before they are tested and
/// written.
#[repr(C)]
pub(crate) struct MatrixScratch {
    pub a: [f64; 256],
    pub b: [f64; 256],
    pub d: [[u32; LANES]; 8],
}

/// Host ranges to test inline, in the order they were found.
pub(crate) const CACHED_RANGES: usize = 4;

/// The host ranges a workgroup's accesses have found ([`Memory::host_range`]): compiled code
/// tests an access against them before it calls out. Kept across the workgroup's turns and
/// waves, and across a thread's workgroups of one dispatch, for which the memory promises each
/// range stays valid.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct RangeCache {
    pub ranges: [HostRange; CACHED_RANGES],
    /// The slot the next range found replaces (round robin).
    pub next: u64,
}

/// What the interpreter's step needs besides the wave, and where its error goes.
pub(super) struct Trampoline<'a, M: Memory + ?Sized> {
    pub kernel: &'a DecodedKernel,
    pub memory: &'a M,
    pub error: Option<ExecError>,
    /// Whether the step's last jump went backward (the wave loop's turn ends at one).
    pub backward: bool,
}

/// The host address of `[address, address + length)` for plain loads (`write` 0) or stores (1),
/// as the dispatch's memory grants it whole ([`Memory::host_range`]), whose range joins the
/// frame's cache; 0 where it does not (the instruction then takes the interpreter's step, which
/// reports the fault lane by lane).
///
/// # Safety
/// As for [`fallback`]: `frame`'s trampoline is a live `Trampoline<M>`.
pub(super) unsafe extern "sysv64" fn range<M: Memory + ?Sized>(
    frame: *mut Frame,
    address: u64,
    length: u64,
    write: u32,
) -> u64 {
    // SAFETY: the caller's contract; nothing else refers to the frame during the call.
    let frame = unsafe { &mut *frame };
    let trampoline = unsafe { &*(frame.trampoline as *const Trampoline<'_, M>) };
    let Some(found) = trampoline.memory.host_range(address, length, write != 0) else { return 0 };
    let cache = &mut frame.cache;
    cache.ranges[cache.next as usize % CACHED_RANGES] = found;
    cache.next = cache.next.wrapping_add(1);
    address.wrapping_add(found.delta)
}

/// `dst[i] = function(src[i])` over the lanes of a row of 32 f32 lanes that `lanes` holds (0 in
/// the others): the interpreter's lane function (`valu::lane_function_f32`), which compiled code
/// passes as `function`, so both tiers compute each lane with the same code.
///
/// # Safety
/// `function` is a `fn(f32) -> f32`; `dst` and `src` each point at a row of 32 `u32`s (the
/// frame's scratch rows or the wave's VGPRs), and `dst` at none of `src`'s. The CPU has AVX2
/// and FMA (compiled code runs only there).
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe extern "sysv64" fn map_row(function: usize, dst: *mut u32, src: *const u32, lanes: u32) {
    // SAFETY: the caller's contract: `function` came from a `fn(f32) -> f32`.
    let function: fn(f32) -> f32 = unsafe { core::mem::transmute(function) };
    for lane in 0..LANES {
        // Only the lanes that are written: a libm call per inactive lane was a tenth of the
        // MLP's softmax, where ten lanes of 32 run.
        let value = if lanes >> lane & 1 == 1 {
            // SAFETY: `src` holds 32 lanes.
            function(f32::from_bits(unsafe { src.add(lane).read() })).to_bits()
        } else {
            0
        };
        // SAFETY: `dst` holds 32 lanes, none of them `src`'s.
        unsafe { dst.add(lane).write(value) };
    }
}

/// Runs `part` ([`Part`] as a number) of instruction `index` through the interpreter's step on
/// the frame's wave, and says what compiled code does next ([`Exit::Next`]: go on; otherwise
/// leave, the PC stored). A wave64 wave's whole per-half instruction runs as the interpreter's
/// wave loop runs it: the low half, then the high half swapped in; a half runs alone for a slow
/// path within that half's code. The wave is back in its low half whatever happens.
///
/// # Safety
/// `frame` is the frame compiled code runs with: its wave, LDS and trampoline pointers are live
/// and nothing else refers to them while this runs; its trampoline is a `Trampoline<M>`; `index`
/// is an instruction of the kernel. The CPU has AVX2 and FMA (the step is the AVX2 build).
#[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
pub(super) unsafe extern "sysv64" fn fallback<M: Memory + ?Sized>(frame: *mut Frame, index: u32, part: u32) -> u32 {
    // SAFETY: the caller's contract: the frame's pointers are live and unaliased during the call.
    let frame = unsafe { &mut *frame };
    let trampoline = unsafe { &mut *(frame.trampoline as *mut Trampoline<'_, M>) };
    let wave = unsafe { &mut *frame.wave };
    let lds = unsafe { core::slice::from_raw_parts_mut(frame.lds, frame.lds_len as usize) };
    let kernel = trampoline.kernel;
    let pc = kernel.entry + index as u64 * 4;
    let decoded = match kernel.fetch(pc) {
        Ok(decoded) => decoded,
        Err(error) => {
            trampoline.error = Some(error);
            return Exit::Error as u32;
        }
    };
    // A half of a `BothHalves` plan that the compiler runs half by half (`vector::halves_apart`)
    // steps as its inner instruction.
    let decoded = match &decoded.plan {
        Plan::BothHalves(guarded) if part != Part::Whole as u32 => &guarded.0,
        _ => decoded,
    };
    wave.pc = pc;
    let next = pc + decoded.len as u64;
    let memory = trampoline.memory;
    let stepped = if !wave.wide || !per_half(&decoded.plan) || part == Part::Low as u32 {
        step::<M, true>(memory, wave, decoded, lds)
    } else {
        let low = if part == Part::Whole as u32 { step::<M, true>(memory, wave, decoded, lds) } else { Ok(Flow::Next) };
        low.and_then(|_| {
            wave.swap_halves();
            let high = step::<M, true>(memory, wave, decoded, lds);
            wave.swap_halves();
            high
        })
    };
    let exit = match stepped {
        Ok(Flow::Next) => Exit::Next,
        Ok(Flow::Jump(target)) => {
            wave.pc = target;
            trampoline.backward = target <= pc;
            Exit::Jump
        }
        Ok(Flow::End) => Exit::End,
        Ok(Flow::Barrier) => {
            wave.pc = next;
            Exit::Barrier
        }
        Ok(Flow::Sleep) => {
            wave.pc = next;
            Exit::Sleep
        }
        Err(error) => {
            trampoline.error = Some(error);
            Exit::Error
        }
    };
    exit as u32
}
