//! The native tier: a kernel's decoded and planned code compiled to x86-64 AVX2 at run time, which
//! runs the same waves over the same state as the interpreter.
//!
//! - `frame.rs`: what compiled code and the Rust side share (the `Frame`), the
//!   register conventions, the exit codes, and the trampoline into the interpreter's step.
//! - `emit.rs`: the emitter: the layout compiled code reads, the exits, the EXEC masks and the
//!   calls into the interpreter for what has no translation.
//! - `compile.rs`: the compiler: the prologue, one label per instruction, each instruction's
//!   translation or the interpreter's step.
//! - `vector.rs`, `scalar.rs`, `lds.rs`, `global.rs`: the translations, by instruction class;
//!   the VALU's in parts: `sources.rs` (where sources are), `lanes.rs` (DPP, modifiers,
//!   `v_permlane`), `compare.rs`, `checked.rs` (results the interpreter may own), `matrix.rs`
//!   (WMMA); `rows.rs`: the eight-lane loads and stores the two memory classes share.
//! - `reach.rs`: what control reaches (only that is compiled) and where branches land;
//!   `known_rows.rs`: the LDS loads that find their address row already in its shape slot.
//! - `perf_map.rs`: Linux perf's symbols for compiled code (`AQUEDUCT_PERF_MAP=1`).
//! - `run.rs`: the wave loop of the native tier, which enters compiled code at a wave's PC and acts
//!   on why it came back.
//!
//! Why this shape:
//! - **One wave state for both tiers.** Compiled code reads and writes the interpreter's own
//!   `Wave` (SGPRs, VGPR rows of 32 lanes, SCC, MODE), so an instruction without a translation
//!   is the interpreter's own step on that state, called from compiled code: the native tier runs
//!   every kernel the interpreter runs, and an error names the same mnemonic and PC.
//! - **Whole rows with the host's SIMD.** A row of 32 lanes is four 256-bit vectors; EXEC applies
//!   as a blend against the register's old value, with the four inactive-lane masks kept in
//!   `ymm12`–`ymm15` while EXEC does not change.
//! - **Scalar branches are native branches**; a backward one checks the wave's turn budget, so the
//!   waves of a workgroup still take turns (`interp::launch`), and a hung wave still stops at the
//!   instruction limit.
//! - **dynasm-rs, not Cranelift** (issue 54, item 5): a runtime assembler with full AVX2, which
//!   adds about 20 s to a cold build (Cranelift's code generator alone is several times that on
//!   two cores, and its SIMD is 128-bit). The instruction selection is ours, per class.
//!
//! - **Wave64 as two halves, as the interpreter runs it** (`interp::wave`): a per-half VALU or
//!   memory instruction's translation is emitted once and run twice, `rbx` naming the running
//!   half (`emit::Part::Running`: the high half's rows in `r13`, its EXEC masks, its part of
//!   each lane mask at `[r12 + rbx * 4 + slot]`); `v_mbcnt` and lane masks at `s[125]` or
//!   `exec_hi` are emitted once per half (`compile::runs_once_per_half`); the lane-crossing
//!   instructions that see all 64 lanes are the interpreter's step, run once.
//!
//! What runs natively is listed by each translation file; everything else is the interpreter's
//! step. Hosts without AVX2 and FMA run the interpreter (`Tier::Auto`), or fail as
//! [`ExecError::NativeUnavailable`](crate::interp::ExecError) when the native tier is forced.

mod checked;
mod compare;
mod compile;
mod emit;
mod frame;
mod global;
mod known_rows;
mod lanes;
mod lds;
mod matrix;
mod perf_map;
mod reach;
mod rows;
mod run;
mod scalar;
mod sources;
mod vector;

use crate::interp::DecodedKernel;

pub use crate::compiled::{NativeCode, Tier};
pub(crate) use run::{Workgroup, run_wave};

/// Whether this host runs the native tier: x86-64 with AVX2, FMA and BMI (the features the
/// interpreter's wide build uses too, `compiled::wide_vectors`).
pub fn host_supported() -> bool {
    crate::compiled::wide_vectors()
}

/// Why nothing runs natively on this host, or `None` where every kernel may (wave32 and
/// wave64, gfx11 and gfx10.3).
pub fn unavailable() -> Option<&'static str> {
    (!host_supported()).then_some("the native tier needs an x86-64 host with AVX2 and FMA")
}

/// The kernel's native code, compiled at its first native dispatch and kept with the kernel
/// (so with its executable, and freed with it). `Err` names why it cannot run natively.
/// Borrowed, not shared: a reference count touched per workgroup was a contended cache line
/// across the pool's threads.
pub fn compiled(kernel: &DecodedKernel) -> Result<&NativeCode, &'static str> {
    kernel
        .native
        .get_or_init(|| {
            if let Some(reason) = unavailable() {
                return Err(reason);
            }
            // A Tracy zone where the engine enables Tracy (tracing-tracy), and an event with
            // what was compiled.
            let _span = tracing::info_span!("native compile", kernel_object = kernel.kernel_object).entered();
            let code = compile::compile(kernel)?;
            tracing::debug!(
                kernel_object = kernel.kernel_object,
                translated = code.translated,
                instructions = code.instructions,
                bytes = code.code_bytes(),
                micros = code.compile_time.as_micros() as u64,
                "native tier compiled a kernel"
            );
            perf_map::record(kernel, &code);
            Ok(code)
        })
        .as_ref()
        .map_err(|reason| *reason)
}
