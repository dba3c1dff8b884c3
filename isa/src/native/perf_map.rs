//! Linux `perf`'s map of JIT code (`/tmp/perf-PID.map`, one `START SIZE NAME` line per symbol),
//! written when `AQUEDUCT_PERF_MAP` is set: `perf report` then names each sample by the kernel
//! and the GPU instruction whose translation it fell in, instead of a bare address.

use std::io::Write;
use std::sync::Mutex;

use crate::compiled::NativeCode;
use crate::interp::DecodedKernel;

/// Whether the map is wanted (read once per process).
fn wanted() -> bool {
    static WANTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WANTED.get_or_init(|| std::env::var_os("AQUEDUCT_PERF_MAP").is_some_and(|value| value != "0"))
}

/// Appends `code`'s symbols to the process's map: one per instruction (its translation, or its
/// call into the interpreter's step), named `aqueduct KERNEL_OBJECT+OFFSET MNEMONIC`, one per
/// out-of-line path, slow paths included (the same name, marked `(out of line)`), and one for
/// the prologue. A write failure is logged and otherwise ignored: the map is a profiling aid,
/// and the code runs the same without it.
pub(super) fn record(kernel: &DecodedKernel, code: &NativeCode) {
    if !wanted() {
        return;
    }
    // One writer at a time, so that two compiles' lines do not interleave.
    static FILE: Mutex<()> = Mutex::new(());
    let _guard = FILE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let base = code.buffer.ptr(dynasmrt::AssemblyOffset(0)) as u64;
    let mut lines = String::new();
    let mut starts: Vec<(usize, usize)> = (code.entries.iter().enumerate())
        .filter(|&(_, &offset)| offset != u32::MAX)
        .map(|(index, &offset)| (offset as usize, index))
        .collect();
    starts.sort_unstable();
    let object = kernel.kernel_object;
    let first = starts.first().map_or(code.buffer.len(), |&(offset, _)| offset);
    lines.push_str(&format!("{:x} {:x} aqueduct {object:#x} prologue\n", base, first));
    for (n, &(offset, index)) in starts.iter().enumerate() {
        let end = starts.get(n + 1).map_or(code.body_end, |&(next, _)| next);
        let mnemonic = kernel.at(index).map_or("?", |decoded| decoded.mnemonic());
        lines.push_str(&format!(
            "{:x} {:x} aqueduct {object:#x}+{:#x} {mnemonic}\n",
            base + offset as u64,
            end.saturating_sub(offset),
            index * 4
        ));
    }
    for &(start, end, index) in &code.out_of_line {
        let mnemonic = kernel.at(index as usize).map_or("?", |decoded| decoded.mnemonic());
        lines.push_str(&format!(
            "{:x} {:x} aqueduct {object:#x}+{:#x} {mnemonic} (out of line)\n",
            base + u64::from(start),
            end - start,
            index * 4
        ));
    }
    let path = format!("/tmp/perf-{}.map", std::process::id());
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(lines.as_bytes()));
    if let Err(error) = written {
        tracing::warn!(%path, %error, "the native tier could not write perf's map");
    }
}
