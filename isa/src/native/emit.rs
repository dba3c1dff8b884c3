//! The emitter the translations share: the layout compiled code reads, the exits, the EXEC
//! masks, and the interpreter's step for what has no translation.

use core::mem::offset_of;

use dynasmrt::x64::Assembler;
use dynasmrt::{DynamicLabel, DynasmApi, DynasmLabelApi, dynasm};

use super::frame::{CACHED_RANGES, Exit, Frame, MatrixScratch, Part, RangeCache, RowShape};
use crate::interp::decoded_kernel::Decoded;
use crate::interp::wave::{EXEC, LANES, NULL, Wave};
use crate::interp::{DecodedKernel, HostRange};

/// Byte offsets compiled code reads the wave and the frame at.
pub(super) const SGPR: i32 = offset_of!(Wave, sgpr) as i32;
pub(super) const SCC: i32 = offset_of!(Wave, scc) as i32;
pub(super) const PC: i32 = offset_of!(Wave, pc) as i32;
pub(super) const MODE: i32 = offset_of!(Wave, mode) as i32;
pub(super) const EXECUTED: i32 = offset_of!(Wave, executed) as i32;
pub(super) const LANE_BITS: i32 = offset_of!(Frame, lane_bits) as i32;
pub(super) const RAMP: i32 = offset_of!(Frame, ramp) as i32;
pub(super) const SCRATCH: i32 = offset_of!(Frame, scratch) as i32;
const INACTIVE: i32 = offset_of!(Frame, inactive) as i32;
pub(super) const MATRIX_A: i32 = (offset_of!(Frame, matrix) + offset_of!(MatrixScratch, a)) as i32;
pub(super) const MATRIX_B: i32 = (offset_of!(Frame, matrix) + offset_of!(MatrixScratch, b)) as i32;
pub(super) const MATRIX_D: i32 = (offset_of!(Frame, matrix) + offset_of!(MatrixScratch, d)) as i32;
/// The byte offset of row-shape slot `slot` in the frame ([`super::frame::RowShape`]), and of
/// its fields from it.
pub(super) const fn row_shape(slot: usize) -> i32 {
    (offset_of!(Frame, row_shapes) + slot * core::mem::size_of::<RowShape>()) as i32
}
pub(super) const SHAPE_ROW: i32 = offset_of!(RowShape, row) as i32;
pub(super) const SHAPE_HIGHEST: i32 = offset_of!(RowShape, highest) as i32;
pub(super) const SHAPE_KIND: i32 = offset_of!(RowShape, kind) as i32;
pub(super) const FRAME_WAVE: i32 = offset_of!(Frame, wave) as i32;
pub(super) const FRAME_VGPR: i32 = offset_of!(Frame, vgpr) as i32;
pub(super) const FRAME_LDS: i32 = offset_of!(Frame, lds) as i32;
pub(super) const FRAME_LDS_LEN: i32 = offset_of!(Frame, lds_len) as i32;
pub(super) const YIELD_AT: i32 = offset_of!(Frame, yield_at) as i32;
pub(super) const FRAME_VGPR_HIGH: i32 = offset_of!(Frame, vgpr_high) as i32;
const FALLBACK: i32 = offset_of!(Frame, fallback) as i32;
const RANGE: i32 = offset_of!(Frame, range) as i32;
const CACHE: i32 = (offset_of!(Frame, cache) + offset_of!(RangeCache, ranges)) as i32;
const RANGE_BYTES: i32 = core::mem::size_of::<HostRange>() as i32;

/// Bytes of one VGPR row.
pub(super) const ROW: i32 = (LANES * 4) as i32;

/// The offset of SGPR `field` in the wave.
pub(super) const fn sgpr(field: u32) -> i32 {
    SGPR + 4 * field as i32
}

/// A rarely taken path of instruction `index`, emitted out of line after every instruction's
/// code (`Emitter::out_of_line`), with the emitter's state as it was where it was asked for.
pub(super) struct OutOfLine {
    pub label: DynamicLabel,
    pub index: u32,
    pub state: EmitState,
    pub body: Box<dyn FnOnce(&mut Emitter<'_>)>,
}

/// What code emitted for one instruction depends on besides the instruction: restored for its
/// out-of-line paths.
#[derive(Clone, Copy)]
pub(super) struct EmitState {
    pub part: Part,
    pub part_end: Option<DynamicLabel>,
    pub every_lane: bool,
    pub zero_inactive: bool,
}

/// One compilation in progress.
pub(super) struct Emitter<'p> {
    pub ops: Assembler,
    pub kernel: &'p DecodedKernel,
    /// Per word of the code: the label of the instruction starting there; the last is the end.
    pub labels: Vec<Option<DynamicLabel>>,
    pub exit: DynamicLabel,
    /// Rarely taken paths (slow paths among them), emitted after the code: a translation's hot
    /// path stays short (a tiled GEMM's inner loop had outgrown the host's instruction cache
    /// with the general paths inline).
    pub out_of_line: Vec<OutOfLine>,
    /// The word index of the instruction being translated.
    pub index: u32,
    /// VGPR rows each wave holds: compiled code touches no row past them.
    pub vgprs: u32,
    /// Eight-lane constants code reads (`[=>label]`), emitted after the out-of-line paths.
    pub constants: Vec<(DynamicLabel, [u32; 8])>,
    /// Whether the kernel is wave64's: its per-half instructions are emitted once per half
    /// (`compile.rs`).
    pub wide: bool,
    /// What the code being emitted runs: [`Part::Whole`] (a wave32 instruction, or a wave64
    /// instruction that runs once), or one half of a wave64 wave's per-half instruction.
    pub part: Part,
    /// Where a half's code ends (the other half's code, or the return to the low half's rows
    /// after the high half), while a half is emitted: what [`Emitter::next_label`] gives then.
    pub part_end: Option<DynamicLabel>,
    /// Whether the code being emitted runs only where the running half's EXEC holds all 32
    /// lanes (tested just before it): a result is stored whole, without the blend that keeps
    /// inactive lanes.
    pub every_lane: bool,
    /// Whether a float operation's sources are read with their inactive lanes zeroed
    /// (`sources::load`, and the memory operands of `vector.rs`): an inactive lane's stale
    /// denormal made the host's multiply or FMA of its whole chunk a microcode assist, some
    /// 150 cycles (the MLP's softmax, ten lanes of 32 active, ran at a third of its speed).
    pub zero_inactive: bool,
    /// The word index past the last accumulator chain emitted (`vector::accumulator_chain`):
    /// an instruction before it is a later member of that run, and starts no chain of its own.
    pub chain_end: usize,
    /// Per word: whether the whole-row LDS load there finds its address row in its shape slot
    /// (`known_rows.rs`).
    pub known_rows: Vec<bool>,
}

impl Emitter<'_> {
    /// The label of the instruction at `pc`, if one starts there.
    pub fn label_at(&self, pc: u64) -> Option<DynamicLabel> {
        let offset = pc.checked_sub(self.kernel.entry)?;
        if !offset.is_multiple_of(4) {
            return None;
        }
        self.labels.get((offset / 4) as usize).copied().flatten()
    }

    /// Where compiled code goes on after instruction `index`'s code for the running part: the
    /// next instruction's label (or the end's), or the end of the half being emitted.
    pub fn next_label(&self, index: u32, decoded: &Decoded) -> DynamicLabel {
        if let Some(end) = self.part_end {
            return end;
        }
        let next = index as usize + decoded.len as usize / 4;
        self.labels.get(next).copied().flatten().unwrap_or_else(|| self.labels.last().unwrap().unwrap())
    }

    /// The PC of word `index`.
    pub fn pc(&self, index: u32) -> u64 {
        self.kernel.entry + index as u64 * 4
    }

    /// The SGPR slot of the running half's part of the lane mask at `field`
    /// (`Wave::mask_register`: `s[n+1]` for the high half; `null` stays, and EXEC is the
    /// running half's). The interpreter's high half finds that register where
    /// `Wave::swap_halves` put it (`exec_lo` and `exec_hi` trade places); compiled code, which
    /// swaps nothing, reads the register that is there then. A slot of 128 or more reads as 0
    /// and drops writes, as `Wave` does.
    ///
    /// [`Part::Running`] code addresses the slot as `[r12 + rbx * 4 + sgpr(slot)]`: this
    /// is the low half's slot, and `rbx` (the running half) adds the high half's 4 bytes at run
    /// time, which only a field [`Emitter::mask_moves_by_one`] accepts has.
    pub fn mask_slot(&self, field: u32) -> u32 {
        if self.part == Part::Running {
            assert!(Self::mask_moves_by_one(field), "a mask at s{field} is emitted per half (`compile.rs`)");
            return field;
        }
        let high = self.part == Part::High;
        let slot = if field == NULL || field == EXEC { field } else { field + high as u32 };
        if high && (slot | 1) == EXEC + 1 { slot ^ 1 } else { slot }
    }

    /// Whether the high half's part of the lane mask at `field` is the SGPR after the low
    /// half's, or the same special case in both halves (`null`, and slots of 128 or more, which
    /// every use tests for before addressing it): all but `s[125]` (whose high part is
    /// `exec_hi` once the halves swap) and `exec_hi` (whose high part, slot 128, reads 0).
    pub fn mask_moves_by_one(field: u32) -> bool {
        field != EXEC - 1 && field != EXEC + 1
    }

    /// Whether lane-mask slots are addressed with the running half in `rbx`
    /// ([`Part::Running`]); elsewhere without it (an indexed operand costs a micro-op of a
    /// load-and-operate instruction on many hosts, and wave32 code needs none).
    pub fn by_half(&self) -> bool {
        self.part == Part::Running
    }

    /// `vpbroadcastd ymm(dst)`, the lane-mask slot at byte offset `slot` in the wave (from
    /// [`Emitter::mask_slot`] or [`Emitter::exec`]): the running half's.
    pub fn broadcast_mask(&mut self, dst: u8, slot: i32) {
        if self.by_half() {
            dynasm!(self.ops ; .arch x64 ; vpbroadcastd Ry(dst), [r12 + rbx * 4 + slot]);
        } else {
            dynasm!(self.ops ; .arch x64 ; vpbroadcastd Ry(dst), [r12 + slot]);
        }
    }

    /// `mov r32(dst)`, the lane-mask slot at byte offset `slot` (as [`Emitter::broadcast_mask`]).
    pub fn load_mask(&mut self, dst: u8, slot: i32) {
        if self.by_half() {
            dynasm!(self.ops ; .arch x64 ; mov Rd(dst), [r12 + rbx * 4 + slot]);
        } else {
            dynasm!(self.ops ; .arch x64 ; mov Rd(dst), [r12 + slot]);
        }
    }

    /// The byte offset of the running half's EXEC in the wave.
    pub fn exec(&self) -> i32 {
        sgpr(self.mask_slot(EXEC))
    }

    /// Recomputes the inactive-lane masks in `ymm12`–`ymm15` from the running half's EXEC;
    /// in a wave64 kernel, both halves' into the frame too (`Frame::inactive`), from which a
    /// switch of halves loads them. Clobbers `ymm10` and `ymm11`.
    pub fn masks(&mut self) {
        if self.wide {
            // The halves not known to be running, through ymm10 and ymm11 alone: the other one,
            // or both where the running half is `rbx`'s.
            let others: &[i32] = match self.part {
                Part::High => &[0],
                Part::Running => &[0, 1],
                Part::Whole | Part::Low => &[1],
            };
            let zero = self.constant([0; 8]);
            for &other in others {
                dynasm!(self.ops ; .arch x64 ; vpbroadcastd ymm11, [r12 + sgpr(EXEC + other as u32)]);
                for k in 0..4 {
                    let (bits, stored) = (LANE_BITS + 32 * k, INACTIVE + 128 * other + 32 * k);
                    dynasm!(self.ops
                        ; .arch x64
                        ; vpand ymm10, ymm11, [r14 + bits]
                        ; vpcmpeqd ymm10, ymm10, [=>zero]
                        ; vmovdqu [r14 + stored], ymm10
                    );
                }
            }
        }
        let exec = self.exec();
        self.broadcast_mask(11, exec);
        dynasm!(self.ops ; .arch x64 ; vpxor xmm10, xmm10, xmm10);
        for k in 0..4 {
            let bits = LANE_BITS + 32 * k;
            let mask = 12 + k as u8;
            dynasm!(self.ops
                ; .arch x64
                ; vpand Ry(mask), ymm11, [r14 + bits]
                ; vpcmpeqd Ry(mask), Ry(mask), ymm10
            );
            let running = match self.part {
                Part::High => Some(1),
                Part::Running => None,
                Part::Whole | Part::Low => Some(0),
            };
            if let (true, Some(running)) = (self.wide, running) {
                let stored = INACTIVE + 128 * running + 32 * k;
                dynasm!(self.ops ; .arch x64 ; vmovdqu [r14 + stored], Ry(mask));
            }
        }
    }

    /// Loads half `half`'s inactive-lane masks (0 low, 1 high) into `ymm12`–`ymm15` from the
    /// frame, where [`Emitter::masks`] keeps them for a wave64 kernel.
    fn load_masks(&mut self, half: i32) {
        for k in 0..4 {
            let stored = INACTIVE + 128 * half + 32 * k;
            dynasm!(self.ops ; .arch x64 ; vmovdqu Ry(12 + k as u8), [r14 + stored]);
        }
    }

    /// Jumps to `otherwise` unless EXEC holds all 32 lanes: the test before a path for whole
    /// rows (`rows.rs`).
    pub fn unless_every_lane(&mut self, otherwise: DynamicLabel) {
        let exec = self.exec();
        if self.by_half() {
            dynasm!(self.ops ; .arch x64 ; cmp DWORD [r12 + rbx * 4 + exec], -1);
        } else {
            dynasm!(self.ops ; .arch x64 ; cmp DWORD [r12 + exec], -1);
        }
        dynasm!(self.ops ; .arch x64 ; jne =>otherwise);
    }

    /// A label for `values`, 32-byte aligned after the code, for compiled code to read; one
    /// label per distinct eight values in a kernel.
    pub fn constant(&mut self, values: [u32; 8]) -> DynamicLabel {
        if let Some(&(label, _)) = self.constants.iter().find(|(_, existing)| *existing == values) {
            return label;
        }
        let label = self.ops.new_dynamic_label();
        self.constants.push((label, values));
        label
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

    /// Writes the frame's scratch row `row` to the VGPR row at byte offset `vdst`, in the active
    /// lanes: the last step of an operation that builds its result before writing it.
    pub fn write_scratch_row(&mut self, row: u8, vdst: i32) {
        let scratch = SCRATCH + row as i32 * ROW;
        for k in 0..4 {
            dynasm!(self.ops
                ; .arch x64
                ; vmovdqa ymm0, [r14 + scratch + 32 * k]
                ; vblendvps ymm0, ymm0, [r13 + vdst + 32 * k], Ry(12 + k as u8)
                ; vmovdqu [r13 + vdst + 32 * k], ymm0
            );
        }
    }

    /// Writes `ymm{value}` as chunk `k` of the VGPR row at byte offset `row`, its inactive lanes
    /// keeping the row's old value (a blend, unless every lane is known active).
    pub fn write_chunk(&mut self, value: u8, row: i32, k: i32) {
        if !self.every_lane {
            dynasm!(self.ops ; .arch x64 ; vblendvps Ry(value), Ry(value), [r13 + row + 32 * k], Ry(12 + k as u8));
        }
        dynasm!(self.ops ; .arch x64 ; vmovdqu [r13 + row + 32 * k], Ry(value));
    }

    /// `rax` = the host address of agent address `r8`, where `[r8, r9)` is host memory for
    /// plain loads (or, `write`, stores): a range in the frame's cache that holds it, tested
    /// inline, or else the memory's answer (`frame::range`, which caches it); jumps to `slow`
    /// where the memory grants no such range. The call path clobbers every caller-saved
    /// register and restores the EXEC masks; the cached path touches only `rax`.
    pub fn host_address(&mut self, write: bool, slow: DynamicLabel) {
        let found = self.ops.new_dynamic_label();
        for slot in 0..CACHED_RANGES as i32 {
            let (range, next) = (CACHE + slot * RANGE_BYTES, self.ops.new_dynamic_label());
            dynasm!(self.ops
                ; .arch x64
                ; cmp r8, [r14 + range + offset_of!(HostRange, start) as i32]
                ; jb =>next
                ; cmp r9, [r14 + range + offset_of!(HostRange, end) as i32]
                ; ja =>next
            );
            if write {
                dynasm!(self.ops
                    ; .arch x64
                    ; cmp BYTE [r14 + range + offset_of!(HostRange, writable) as i32], 0
                    ; je =>next
                );
            }
            dynasm!(self.ops
                ; .arch x64
                ; mov rax, [r14 + range + offset_of!(HostRange, delta) as i32]
                ; add rax, r8
                ; jmp =>found
                ; =>next
            );
        }
        dynasm!(self.ops
            ; .arch x64
            ; mov rdi, r14
            ; mov rsi, r8
            ; mov rdx, r9
            ; sub rdx, r8
            ; mov ecx, write as i32
            // Nothing in vector registers lives across a call; clean upper halves spare the
            // callee's SSE code the penalties of dirty ones.
            ; vzeroupper
            ; call QWORD [r14 + RANGE]
            ; test rax, rax
            ; jz =>slow
        );
        self.masks();
        dynasm!(self.ops ; .arch x64 ; =>found);
    }

    /// The interpreter's step for instruction `index` (the running part of it), inline: on
    /// unless it left.
    pub fn step(&mut self, index: u32) {
        if self.part == Part::Running {
            // Part::Low or Part::High, as the running half is.
            dynasm!(self.ops ; .arch x64 ; lea edx, [rbx + Part::Low as i32]);
        } else {
            dynasm!(self.ops ; .arch x64 ; mov edx, self.part as i32);
        }
        dynasm!(self.ops
            ; .arch x64
            ; mov rdi, r14
            ; mov esi, index as i32
            ; vzeroupper
            ; call QWORD [r14 + FALLBACK]
            ; test eax, eax
            ; jnz =>self.exit
        );
        self.masks();
    }

    /// A label whose code runs instruction `index` (the running part of it) through the
    /// interpreter's step and goes on at `resume`: the slow path of a translation whose fast
    /// path's assumptions fail at run time.
    pub fn slow_path(&mut self, index: u32, resume: DynamicLabel) -> DynamicLabel {
        self.out_of_line(move |e| {
            e.step(index);
            dynasm!(e.ops ; .arch x64 ; jmp =>resume);
        })
    }

    /// A label whose code is `body`, emitted out of line with the emitter's present state, for
    /// a path the running instruction rarely takes; `body` ends by jumping back (or away).
    pub fn out_of_line(&mut self, body: impl FnOnce(&mut Emitter<'_>) + 'static) -> DynamicLabel {
        let label = self.ops.new_dynamic_label();
        let state = self.state();
        self.out_of_line.push(OutOfLine { label, index: self.index, state, body: Box::new(body) });
        label
    }

    /// The state code emitted now depends on.
    pub fn state(&self) -> EmitState {
        EmitState {
            part: self.part,
            part_end: self.part_end,
            every_lane: self.every_lane,
            zero_inactive: self.zero_inactive,
        }
    }

    /// Restores `state` (for an out-of-line path).
    pub fn restore(&mut self, state: EmitState) {
        EmitState {
            part: self.part,
            part_end: self.part_end,
            every_lane: self.every_lane,
            zero_inactive: self.zero_inactive,
        } = state;
    }

    /// Goes on as a wave64 wave's high half: its rows in `r13`, its masks in `ymm12`–`ymm15`.
    pub fn enter_high_half(&mut self) {
        self.part = Part::High;
        dynasm!(self.ops ; .arch x64 ; mov r13, [r14 + FRAME_VGPR_HIGH]);
        self.load_masks(1);
    }

    /// Goes on as the high half of a per-half instruction whose code runs once per half
    /// ([`Part::Running`]): `rbx` = 1, the high half's rows and masks. Inline: shared
    /// subroutines for the switches made the code smaller but a wave64 GEMM slower (their
    /// calls and returns cost more than the instruction cache saved).
    pub fn enter_running_high_half(&mut self) {
        dynasm!(self.ops
            ; .arch x64
            ; mov ebx, 1
            ; mov r13, [r14 + FRAME_VGPR_HIGH]
        );
        self.load_masks(1);
    }

    /// Back to the whole wave after a per-half instruction: the low half's rows and masks (and
    /// `rbx` = 0, after code that ran once per half).
    pub fn leave_halves(&mut self) {
        if self.part == Part::Running {
            dynasm!(self.ops ; .arch x64 ; xor ebx, ebx);
        }
        self.part = Part::Whole;
        dynasm!(self.ops ; .arch x64 ; mov r13, [r14 + FRAME_VGPR]);
        self.load_masks(0);
    }

    /// Emits `body` once for each lane EXEC holds, in lane order, with the lane's index in `ecx`
    /// (`body` keeps `edx`, the lanes still to go).
    pub fn each_active_lane(&mut self, body: impl FnOnce(&mut Self)) {
        let (lane, done) = (self.ops.new_dynamic_label(), self.ops.new_dynamic_label());
        let exec = self.exec();
        self.load_mask(2, exec);
        dynasm!(self.ops
            ; .arch x64
            ; test edx, edx
            ; jz =>done
            ; =>lane
            ; bsf ecx, edx
        );
        body(self);
        dynasm!(self.ops
            ; .arch x64
            ; blsr edx, edx
            ; jnz =>lane
            ; =>done
        );
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

    /// `vpblendd ymm(dst), ymm(a), ymm(b), mask`: dword `i` from `b` where bit `i` of `mask` is
    /// set, from `a` otherwise. (dynasm-rs 3.2 swaps this instruction's sources too.)
    /// VEX.256.66.0F3A.W0 02 /r ib.
    pub fn vpblendd(&mut self, dst: u8, a: u8, b: u8, mask: u8) {
        let r = if dst >= 8 { 0 } else { 0x80 };
        let x_b = if b >= 8 { 0x40 } else { 0x60 };
        let vvvv = (!a & 15) << 3;
        let modrm = 0xC0 | (dst & 7) << 3 | (b & 7);
        dynasm!(self.ops
            ; .arch x64
            ; .bytes [0xC4, r | x_b | 0x03, vvvv | 0x05, 0x02, modrm, mask]
        );
    }

    /// `vfmadd231pd ymm(dst), ymm(a), [r14 + displacement]`: dst += a × the frame's four f64 at
    /// `displacement`, one rounding. (dynasm-rs 3.2 encodes this instruction as `vfmadd231ps`:
    /// its W bit clear.) VEX.256.66.0F38.W1 B8 /r, `r14` as the base with a 32-bit displacement.
    pub fn vfmadd231pd_frame(&mut self, dst: u8, a: u8, displacement: i32) {
        let r = if dst >= 8 { 0 } else { 0x80 };
        let [d0, d1, d2, d3] = displacement.to_le_bytes();
        let modrm = 0x80 | (dst & 7) << 3 | (14 & 7);
        dynasm!(self.ops
            ; .arch x64
            ; .bytes [0xC4, r | 0x40 | 0x02, 0x80 | (!a & 15) << 3 | 0x05, 0xB8, modrm, d0, d1, d2, d3]
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
