//! What the interpreter and the native tier both name: which tier runs a dispatch
//! ([`Tier`]), whether the host has the vector features both use, and a kernel's native code
//! ([`NativeCode`]), which the decoded kernel keeps
//! (`interp::DecodedKernel`) and the native tier makes (`native`) and runs. Below both, so neither
//! names the other for them.

use dynasmrt::ExecutableBuffer;

/// Whether the CPU has AVX2, FMA, BMI1/2, LZCNT and POPCNT: what the interpreter's wide build
/// (`interp::launch::run_workgroup_avx2`) is compiled for and what native code uses (cached by
/// the standard library). False on other architectures.
pub(crate) fn wide_vectors() -> bool {
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
    pub(crate) buffer: ExecutableBuffer,
    /// Per 4-byte word of the kernel: the offset of the compiled instruction starting there,
    /// or `u32::MAX` inside a multi-dword instruction, past the code, and where control does not
    /// reach from the entry by fall-through or a static branch (`native/reach.rs`).
    pub(crate) entries: Vec<u32>,
    /// The offset of the prologue, which takes the frame and the entry to jump to.
    pub(crate) prologue: usize,
    /// The offset where every instruction's code ends, and their out-of-line paths begin.
    pub(crate) body_end: usize,
    /// The out-of-line paths, slow paths among them: (start, end, word index of their
    /// instruction), in order.
    pub(crate) out_of_line: Vec<(u32, u32, u32)>,
    /// Instructions compiled with a translation, and all instructions compiled (those control
    /// reaches), for the profile and the docs.
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
