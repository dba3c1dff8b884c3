//! The compiler's skeleton: a label per instruction, the prologue and the exit, the EXEC masks,
//! and the interpreter's step for what has no translation.

use core::mem::offset_of;
use std::time::Instant;

use dynasmrt::x64::Assembler;
use dynasmrt::{DynamicLabel, DynasmApi, DynasmLabelApi, dynasm};

use super::NativeCode;
use super::frame::{Exit, Frame};
use crate::interp::Program;
use crate::interp::program::{Decoded, Plan};
use crate::interp::wave::{EXEC, LANES, Wave};

/// Byte offsets compiled code reads the wave and the frame at.
pub(super) const SGPR: i32 = offset_of!(Wave, sgpr) as i32;
pub(super) const SCC: i32 = offset_of!(Wave, scc) as i32;
pub(super) const PC: i32 = offset_of!(Wave, pc) as i32;
pub(super) const MODE: i32 = offset_of!(Wave, mode) as i32;
pub(super) const EXECUTED: i32 = offset_of!(Wave, executed) as i32;
pub(super) const LANE_BITS: i32 = offset_of!(Frame, lane_bits) as i32;
const FRAME_WAVE: i32 = offset_of!(Frame, wave) as i32;
const FRAME_VGPR: i32 = offset_of!(Frame, vgpr) as i32;
const FRAME_LDS: i32 = offset_of!(Frame, lds) as i32;
const FRAME_LDS_LEN: i32 = offset_of!(Frame, lds_len) as i32;
pub(super) const YIELD_AT: i32 = offset_of!(Frame, yield_at) as i32;
const FALLBACK: i32 = offset_of!(Frame, fallback) as i32;

/// Bytes of one VGPR row.
pub(super) const ROW: i32 = (LANES * 4) as i32;

/// The offset of SGPR `field` in the wave.
pub(super) const fn sgpr(field: u32) -> i32 {
    SGPR + 4 * field as i32
}

/// One compilation in progress.
pub(super) struct Emitter<'p> {
    pub ops: Assembler,
    pub program: &'p Program,
    /// Per word of the code: the label of the instruction starting there; the last is the end.
    labels: Vec<Option<DynamicLabel>>,
    pub exit: DynamicLabel,
    /// Slow paths, emitted after the code: (their label, the instruction, where to go on).
    cold: Vec<(DynamicLabel, u32, DynamicLabel)>,
    /// VGPR rows each wave holds: compiled code touches no row past them.
    pub vgprs: u32,
}

impl Emitter<'_> {
    /// The label of the instruction at `pc`, if one starts there.
    pub fn label_at(&self, pc: u64) -> Option<DynamicLabel> {
        let offset = pc.checked_sub(self.program.entry)?;
        if !offset.is_multiple_of(4) {
            return None;
        }
        self.labels.get((offset / 4) as usize).copied().flatten()
    }

    /// The label of the instruction after the one at word `index` (or the end's).
    pub fn next_label(&self, index: u32, decoded: &Decoded) -> DynamicLabel {
        let next = index as usize + decoded.len as usize / 4;
        self.labels.get(next).copied().flatten().unwrap_or_else(|| self.labels.last().unwrap().unwrap())
    }

    /// The PC of word `index`.
    pub fn pc(&self, index: u32) -> u64 {
        self.program.entry + index as u64 * 4
    }

    /// Recomputes the inactive-lane masks in `ymm12`–`ymm15` from EXEC.
    pub fn masks(&mut self) {
        dynasm!(self.ops
            ; .arch x64
            ; vpbroadcastd ymm11, [r12 + sgpr(EXEC)]
            ; vpxor xmm10, xmm10, xmm10
        );
        for k in 0..4 {
            let bits = LANE_BITS + 32 * k;
            let mask = 12 + k as u8;
            dynasm!(self.ops
                ; .arch x64
                ; vpand Ry(mask), ymm11, [r14 + bits]
                ; vpcmpeqd Ry(mask), Ry(mask), ymm10
            );
        }
    }

    /// Stores `pc` as the wave's and leaves with `exit`.
    pub fn leave(&mut self, pc: u64, exit: Exit) {
        dynasm!(self.ops
            ; .arch x64
            ; mov rax, QWORD pc as i64
            ; mov [r12 + PC], rax
            ; mov eax, exit as i32
            ; jmp =>self.exit
        );
    }

    /// The interpreter's step for instruction `index`, inline: on unless it left.
    pub fn step(&mut self, index: u32) {
        dynasm!(self.ops
            ; .arch x64
            ; mov rdi, r14
            ; mov esi, index as i32
            ; call QWORD [r14 + FALLBACK]
            ; test eax, eax
            ; jnz =>self.exit
        );
        self.masks();
    }

    /// A label whose code runs instruction `index` through the interpreter's step and goes on at
    /// `resume`: the slow path of a translation whose fast path's assumptions fail at run time.
    pub fn slow_path(&mut self, index: u32, resume: DynamicLabel) -> DynamicLabel {
        let label = self.ops.new_dynamic_label();
        self.cold.push((label, index, resume));
        label
    }

    /// `vcmpps ymm(dst), ymm(a), ymm(b), predicate`: dst = a (predicate) b. (dynasm-rs 3.2 encodes
    /// this instruction's operands wrongly: it swaps the sources and drops a memory operand.)
    /// VEX.256.0F.WIG C2 /r ib.
    pub fn vcmpps(&mut self, dst: u8, a: u8, b: u8, predicate: u8) {
        let r = if dst >= 8 { 0 } else { 0x80 };
        let x_b = if b >= 8 { 0x40 } else { 0x60 };
        let vvvv = (!a & 15) << 3;
        let modrm = 0xC0 | (dst & 7) << 3 | (b & 7);
        dynasm!(self.ops
            ; .arch x64
            ; .bytes [0xC4, r | x_b | 0x01, vvvv | 0x04, 0xC2, modrm, predicate]
        );
    }

    /// `vmovmskps r32, ymm` (dynasm-rs 3.2 refuses its operand sizes): VEX.256.0F.WIG 50 /r.
    pub fn movmsk(&mut self, gpr: u8, ymm: u8) {
        let r = if gpr >= 8 { 0 } else { 0x80 };
        let b = if ymm >= 8 { 0 } else { 0x20 };
        let modrm = 0xC0 | (gpr & 7) << 3 | (ymm & 7);
        dynasm!(self.ops
            ; .arch x64
            ; .bytes [0xC4, r | 0x40 | b | 0x01, 0x7C, 0x50, modrm]
        );
    }
}

/// Compiles `program` (a wave32 program, on a host with AVX2 and FMA: the caller checks).
pub(super) fn compile(program: &Program) -> Result<NativeCode, &'static str> {
    let started = Instant::now();
    let mut ops = Assembler::new().map_err(|_| "the native tier could not map memory for code")?;
    let words = program.words();
    let labels: Vec<Option<DynamicLabel>> = (0..=words)
        .map(|index| (index == words || program.at(index).is_some()).then(|| ops.new_dynamic_label()))
        .collect();
    let exit = ops.new_dynamic_label();
    let vgprs = (program.descriptor.vgprs() + program.extra_vgprs) as u32;
    let mut e = Emitter { ops, program, labels, exit, cold: Vec::new(), vgprs };

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
        ; mov rbx, [r14 + FRAME_LDS_LEN]
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
    for index in 0..words {
        let Some(decoded) = program.at(index) else { continue };
        instructions += 1;
        let label = e.labels[index].expect("every instruction has a label");
        dynasm!(e.ops
            ; .arch x64
            ; =>label
            ; add rbp, 1
        );
        let index = index as u32;
        if translate(&mut e, index, decoded) {
            translated += 1;
        } else {
            *untranslated.entry(decoded.mnemonic()).or_insert(0) += 1;
            e.step(index);
        }
    }
    // Past the last instruction: the wave loop's fetch names why there is nothing there.
    let end = e.labels.last().unwrap().unwrap();
    dynasm!(e.ops ; .arch x64 ; =>end);
    e.leave(program.entry + words as u64 * 4, Exit::Jump);

    for (label, index, resume) in core::mem::take(&mut e.cold) {
        dynasm!(e.ops ; .arch x64 ; =>label);
        e.step(index);
        dynasm!(e.ops ; .arch x64 ; jmp =>resume);
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
        translated,
        instructions,
        untranslated,
        compile_time: started.elapsed(),
    })
}

/// Emits instruction `index`'s translation; false (nothing emitted) where it has none.
fn translate(e: &mut Emitter<'_>, index: u32, decoded: &Decoded) -> bool {
    match &decoded.plan {
        Plan::Vector(op) => super::vector::translate(e, index, decoded, op),
        Plan::Dual(pair) => super::vector::translate_dual(e, index, decoded, &pair.0, &pair.1),
        Plan::Scalar => super::scalar::translate(e, index, decoded),
        Plan::Memory(access) => super::lds::translate(e, index, decoded, access),
        _ => false,
    }
}
