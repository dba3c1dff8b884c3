//! The compiler: the prologue and the exit, one label per instruction control reaches from the
//! entry (`reach.rs`), and each such instruction's translation (`vector.rs`, `scalar.rs`,
//! `lds.rs`, `global.rs`) or the interpreter's step.

use std::time::Instant;

use dynasmrt::x64::Assembler;
use dynasmrt::{DynamicLabel, DynasmApi, DynasmLabelApi, dynasm};

use super::NativeCode;
use super::emit::{EXECUTED, Emitter, FRAME_LDS, FRAME_VGPR, FRAME_WAVE};
use super::frame::{Exit, Part};
use crate::gfx11::Encoding;
use crate::interp::DecodedKernel;
use crate::interp::decoded_kernel::{Decoded, Plan};
use crate::interp::launch::per_half;

/// Compiles `kernel` (a wave32 kernel, on a host with AVX2 and FMA: the caller checks).
pub(super) fn compile(kernel: &DecodedKernel) -> Result<NativeCode, &'static str> {
    let started = Instant::now();
    let mut ops = Assembler::new().map_err(|_| "the native tier could not map memory for code")?;
    let words = kernel.words();
    let reach = super::reach::reachable(kernel);
    let reached = &reach.reached;
    let labels: Vec<Option<DynamicLabel>> =
        (0..=words).map(|index| (index == words || reached[index]).then(|| ops.new_dynamic_label())).collect();
    let exit = ops.new_dynamic_label();
    let vgprs = (kernel.descriptor.vgprs() + kernel.extra_vgprs) as u32;
    let wide = !kernel.descriptor.wave32();
    let known_rows = super::known_rows::known_rows(kernel, &reach, vgprs);
    let mut e = Emitter {
        ops,
        kernel,
        labels,
        exit,
        out_of_line: Vec::new(),
        index: 0,
        vgprs,
        constants: Vec::new(),
        wide,
        part: Part::Whole,
        part_end: None,
        every_lane: false,
        zero_inactive: false,
        chain_end: 0,
        known_rows,
    };

    // The prologue: callee-saved registers, the frame's pointers, the masks, and the entry.
    let prologue = e.ops.offset().0;
    dynasm!(e.ops
        ; .arch x64
        ; push rbp
        ; push rbx
        ; push r12
        ; push r13
        ; push r14
        ; push r15
        ; sub rsp, 8
        ; mov r14, rdi
        ; mov r12, [r14 + FRAME_WAVE]
        ; mov r13, [r14 + FRAME_VGPR]
        ; mov r15, [r14 + FRAME_LDS]
        ; xor ebx, ebx
        ; mov rbp, [r12 + EXECUTED]
    );
    e.masks();
    dynasm!(e.ops
        ; .arch x64
        ; jmp rsi
        ; =>exit
        ; mov [r12 + EXECUTED], rbp
        ; vzeroupper
        ; add rsp, 8
        ; pop r15
        ; pop r14
        ; pop r13
        ; pop r12
        ; pop rbx
        ; pop rbp
        ; ret
    );

    let mut translated = 0;
    let mut instructions = 0;
    let mut untranslated = std::collections::BTreeMap::new();
    for index in (0..words).filter(|&index| reached[index]) {
        let Some(decoded) = kernel.at(index) else { continue };
        instructions += 1;
        let label = e.labels[index].expect("every instruction has a label");
        dynasm!(e.ops
            ; .arch x64
            ; =>label
            ; add rbp, 1
        );
        let index = index as u32;
        e.index = index;
        if translate_parts(&mut e, index, decoded) {
            translated += 1;
        } else {
            *untranslated.entry(decoded.mnemonic()).or_insert(0) += 1;
            e.step(index);
        }
    }
    // Past the last instruction: the wave loop's fetch names why there is nothing there.
    let end = e.labels.last().unwrap().unwrap();
    dynasm!(e.ops ; .arch x64 ; =>end);
    e.leave(kernel.entry + words as u64 * 4, Exit::Jump);

    // Out-of-line paths, slow paths among them (a body may ask for more).
    let body_end = e.ops.offset().0;
    let mut out_of_line = Vec::new();
    while !e.out_of_line.is_empty() {
        for super::emit::OutOfLine { label, index, state, body } in core::mem::take(&mut e.out_of_line) {
            let start = e.ops.offset().0;
            e.restore(state);
            e.index = index;
            dynasm!(e.ops ; .arch x64 ; =>label);
            body(&mut e);
            out_of_line.push((start as u32, e.ops.offset().0 as u32, index));
        }
    }

    for (label, values) in core::mem::take(&mut e.constants) {
        dynasm!(e.ops ; .arch x64 ; .align 32 ; =>label);
        for value in values {
            dynasm!(e.ops ; .arch x64 ; .u32 value);
        }
    }

    let mut entries = vec![u32::MAX; words];
    for (index, label) in e.labels.iter().enumerate().take(words) {
        if let Some(label) = label {
            let offset = e.ops.labels().resolve_dynamic(*label).map_err(|_| "the native tier lost a label")?;
            entries[index] = offset.0 as u32;
        }
    }
    let buffer = e.ops.finalize().map_err(|_| "the native tier could not finish its code")?;
    Ok(NativeCode {
        buffer,
        entries,
        prologue,
        body_end,
        out_of_line,
        translated,
        instructions,
        untranslated,
        compile_time: started.elapsed(),
    })
}

/// Emits instruction `index`'s translation, with `e.part` whole; false (nothing emitted, the
/// part whole again) where it has none.
///
/// A wave64 wave's per-half instruction (`interp::launch::per_half`) runs once per half, as the
/// interpreter steps it: the low half, then the high half with its rows and masks, then back to
/// the low half's. Its code is emitted once where every half-dependent address can be made at
/// run time ([`runs_once_per_half`]) and run twice, `rbx` naming the half; otherwise once per
/// half. One that runs once (scalar, and the lane-crossing ones that see all 64 lanes) has no
/// wave64 translation except the scalar ones.
fn translate_parts(e: &mut Emitter<'_>, index: u32, decoded: &Decoded) -> bool {
    if !e.wide {
        return translate(e, index, decoded);
    }
    // A `BothHalves` guard whose halves do not in fact meet (`vector::halves_apart`) runs as
    // its inner instruction, half by half.
    let decoded = match &decoded.plan {
        Plan::BothHalves(guarded) if super::vector::halves_apart(e, &guarded.0, guarded.1) => &guarded.0,
        _ => decoded,
    };
    if !per_half(&decoded.plan) {
        return matches!(decoded.plan, Plan::Scalar) && translate(e, index, decoded);
    }
    if runs_once_per_half(decoded) {
        return translate_looped(e, index, decoded);
    }
    // Each half's slow paths and early exits go on at the end of that half's code.
    let (low_end, high_end) = (e.ops.new_dynamic_label(), e.ops.new_dynamic_label());
    e.part = Part::Low;
    e.part_end = Some(low_end);
    if !translate(e, index, decoded) {
        e.part = Part::Whole;
        e.part_end = None;
        return false;
    }
    dynasm!(e.ops ; .arch x64 ; =>low_end);
    e.enter_high_half();
    e.part_end = Some(high_end);
    if !translate(e, index, decoded) {
        // Not reached (a translation depends on the instruction alone), but the half's step
        // would serve.
        e.step(index);
    }
    dynasm!(e.ops ; .arch x64 ; =>high_end);
    e.part_end = None;
    e.leave_halves();
    true
}

/// Emits a per-half instruction's translation once, as [`Part::Running`], in a loop of two
/// turns: the low half (`rbx` = 0), then the high half (`rbx` = 1, its rows and masks), then
/// back to the low half's. Both halves' slow paths and early exits go on at the end of the
/// body, where `rbx` says which turn ends. Doubled, a wave64 GEMM's hot code had outgrown the
/// host's 32 KiB instruction cache (docs/BENCHMARKS.md, issue 57). False (nothing emitted)
/// where the instruction has no translation.
fn translate_looped(e: &mut Emitter<'_>, index: u32, decoded: &Decoded) -> bool {
    let (body, end) = (e.ops.new_dynamic_label(), e.ops.new_dynamic_label());
    dynasm!(e.ops ; .arch x64 ; =>body);
    e.part = Part::Running;
    e.part_end = Some(end);
    if !translate(e, index, decoded) {
        e.part = Part::Whole;
        e.part_end = None;
        return false;
    }
    // The other half's turn: after the low half's, the high half's from the body's start;
    // after the high half's, on with the low half's rows and masks.
    let high_done = e.ops.new_dynamic_label();
    dynasm!(e.ops
        ; .arch x64
        ; =>end
        ; test ebx, ebx
        ; jnz =>high_done
    );
    e.enter_running_high_half();
    dynasm!(e.ops
        ; .arch x64
        ; jmp =>body
        ; =>high_done
    );
    e.part_end = None;
    e.leave_halves();
    true
}

/// Whether a per-half instruction's code can be emitted once for both halves: each
/// half-dependent address it makes is one `rbx` (the running half) gives at run time. The VALU
/// (every lane mask it reads or writes one whose high part is the next SGPR,
/// `Emitter::mask_moves_by_one`, and not `v_mbcnt`, whose constants differ by half) and LDS and
/// global memory accesses.
fn runs_once_per_half(decoded: &Decoded) -> bool {
    use crate::gfx11::Opcode::{VMbcntHiU32B32, VMbcntLoU32B32};
    use crate::interp::operands::Source;
    match &decoded.plan {
        Plan::Vector(op) => {
            !matches!(op.opcode, VMbcntLoU32B32 | VMbcntHiU32B32)
                && Emitter::mask_moves_by_one(u32::from(op.operands.sdst))
                && op.operands.src.iter().all(|source| match *source {
                    Source::Mask(field) => Emitter::mask_moves_by_one(u32::from(field)),
                    _ => true,
                })
        }
        Plan::Memory(_) => true,
        _ => false,
    }
}

/// Emits instruction `index`'s translation for `e.part`; false (nothing emitted) where it has
/// none.
fn translate(e: &mut Emitter<'_>, index: u32, decoded: &Decoded) -> bool {
    match &decoded.plan {
        Plan::Vector(op) => super::vector::translate(e, index, decoded, op),
        Plan::Dual(pair) => super::vector::translate_dual(e, index, decoded, &pair.0, &pair.1),
        Plan::Scalar => super::scalar::translate(e, index, decoded),
        Plan::Memory(access) if matches!(decoded.instruction.encoding, Encoding::Global | Encoding::Flat) => {
            super::global::translate(e, index, decoded, access)
        }
        Plan::Memory(access) => super::lds::translate(e, index, decoded, access),
        _ => false,
    }
}
