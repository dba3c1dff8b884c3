//! The native tier: a kernel's planned program compiled to x86-64 AVX2 code at run time, which
//! runs the same waves over the same state as the interpreter.
//!
//! - `frame.rs`: what compiled code and the Rust side share (the `Frame`), the
//!   register conventions, the exit codes, and the trampoline into the interpreter's step.
//! - `emit.rs`: the compiler's skeleton: one label per instruction, the prologue, the exits, the
//!   EXEC masks and the calls into the interpreter for what has no translation.
//! - `vector.rs`, `scalar.rs`, `lds.rs`: the translations, by instruction class.
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
//! What runs natively is listed by each translation file; everything else is the interpreter's
//! step. Wave64 kernels and hosts without AVX2 and FMA run in the interpreter (`Tier::Auto`), or
//! fail as [`ExecError::NativeUnavailable`](crate::interp::ExecError) when the native tier is
//! forced.

mod emit;
mod frame;
mod lds;
mod run;
mod scalar;
mod vector;

use std::sync::Arc;

use dynasmrt::ExecutableBuffer;

use crate::interp::Program;

pub(crate) use run::run_wave;

/// Which tier runs a dispatch's waves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Tier {
    /// The interpreter (`interp`), the reference.
    Interpreter,
    /// Compiled code; a kernel the native tier cannot compile fails.
    Native,
    /// Compiled code where the kernel and the host allow it, the interpreter otherwise. The
    /// default.
    #[default]
    Auto,
}

/// A kernel compiled for this host: its code, and the code offset of each instruction's start.
pub struct NativeCode {
    buffer: ExecutableBuffer,
    /// Per 4-byte word of the program: the offset of the instruction starting there, or
    /// `u32::MAX` inside a multi-dword instruction and past the code.
    entries: Vec<u32>,
    /// The offset of the prologue, which takes the frame and the entry to jump to.
    prologue: usize,
    /// Instructions with a translation, and all instructions (for the profile and the docs).
    pub translated: usize,
    pub instructions: usize,
    /// The instructions that run as the interpreter's step, by mnemonic, with their counts in
    /// the code.
    pub untranslated: std::collections::BTreeMap<&'static str, usize>,
    /// How long compiling took.
    pub compile_time: std::time::Duration,
}

impl core::fmt::Debug for NativeCode {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("NativeCode")
            .field("bytes", &self.buffer.len())
            .field("translated", &self.translated)
            .field("instructions", &self.instructions)
            .field("compile_time", &self.compile_time)
            .finish()
    }
}

impl NativeCode {
    /// Bytes of machine code.
    pub fn code_bytes(&self) -> usize {
        self.buffer.len()
    }
}

/// Whether this host runs the native tier: x86-64 with AVX2 and FMA (checked once, cached by the
/// standard library).
pub fn host_supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("fma")
            && std::is_x86_feature_detected!("bmi1")
            && std::is_x86_feature_detected!("bmi2")
            && std::is_x86_feature_detected!("lzcnt")
            && std::is_x86_feature_detected!("popcnt")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Why a program does not run natively, or `None` where it may.
pub fn unavailable(program: &Program) -> Option<&'static str> {
    if !host_supported() {
        return Some("the native tier needs an x86-64 host with AVX2 and FMA");
    }
    if !program.descriptor.wave32() {
        return Some("the native tier runs wave32 kernels; wave64 runs in the interpreter");
    }
    None
}

/// The program's native code, compiled at its first native dispatch and kept with the program
/// (so with its executable, and freed with it). `Err` names why it cannot run natively.
pub fn compiled(program: &Program) -> Result<Arc<NativeCode>, &'static str> {
    program
        .native
        .get_or_init(|| {
            if let Some(reason) = unavailable(program) {
                return Err(reason);
            }
            emit::compile(program).map(Arc::new)
        })
        .clone()
}
