//! Memory rows, eight lanes at a time: what LDS and global accesses share once their whole span
//! is known to be in range.
//!
//! A chunk of eight lanes addresses memory as `base + index`, one 32-bit index per lane (the
//! lane's VGPR address, or its low half). Loads: one vector load where the eight are active and
//! consecutive (a row of a tile), one broadcast where they share an address, a gather into the old
//! row otherwise (inactive lanes keep it). Stores of one dword per lane: one masked vector store
//! where the active lanes are consecutive, lane by lane in lane order otherwise. Chunks go in lane
//! order, so the last of two lanes writing one word wins, as in the interpreter.
//!
//! Register use: `ymm3` is all ones and `ymm2` the sign bit (the caller sets both, [`Chunks::setup`]);
//! `ymm4` holds the chunk's indices; `ymm0`, `ymm1`, `rax`, `rcx`, `rdx`, `esi` are scratch.

use dynasmrt::{DynasmApi, DynasmLabelApi, dynasm};

use super::emit::{Emitter, RAMP, ROW, SHAPE_KIND};
use super::frame::{SHAPE_BROADCAST, SHAPE_CONSECUTIVE, SHAPE_GENERAL};

/// How a row's lanes reach memory.
#[derive(Clone, Copy)]
pub(super) struct Chunks {
    /// The byte offset (from `r13`) of the VGPR row holding each lane's 32-bit address.
    pub addresses: i32,
    /// Whether indices are the addresses with the sign bit flipped, against a base 2^31 higher
    /// (global memory: its unsigned 32-bit offsets then fit a gather's signed index), or the
    /// addresses themselves (the LDS, whose offsets are below 2^31).
    pub biased: bool,
    /// The register holding the base gathers and vector accesses add the index to.
    pub base: u8,
    /// The register holding the base a lane's plain 32-bit address adds to.
    pub lane_base: u8,
}

impl Chunks {
    /// Sets `ymm3` to all ones and `ymm2` to the sign bit.
    pub fn setup(e: &mut Emitter<'_>) {
        dynasm!(e.ops
            ; .arch x64
            ; vpcmpeqd ymm3, ymm3, ymm3
            ; vpslld ymm2, ymm3, 31
        );
    }

    /// Loads chunk `k`'s indices into `ymm4`.
    fn indices(&self, e: &mut Emitter<'_>, k: i32) {
        dynasm!(e.ops ; .arch x64 ; vmovdqu ymm4, [r13 + self.addresses + 32 * k]);
        if self.biased {
            dynasm!(e.ops ; .arch x64 ; vpxor ymm4, ymm4, ymm2);
        }
    }

    /// Emits `rax` = the chunk's first index, sign-extended, and jumps to `otherwise` unless the
    /// eight indices are consecutive dwords (`ymm0`: the lanes that are, among those `ymm1`
    /// does not exclude) without passing 2^31 (so `base + rax` spans the eight).
    fn consecutive(&self, e: &mut Emitter<'_>, otherwise: dynasmrt::DynamicLabel) {
        dynasm!(e.ops
            ; .arch x64
            ; vpbroadcastd ymm0, xmm4
            ; vpaddd ymm0, ymm0, [r14 + RAMP]
            ; vpcmpeqd ymm0, ymm0, ymm4
            ; vmovd eax, xmm4
            ; cmp eax, 0x7FFF_FFE3
            ; jg =>otherwise
            ; movsxd rax, eax
        );
    }

    /// Loads chunk `k` into each `(row, displacement)` of `rows`: lane `i` of the row gets the
    /// dword at its address plus the displacement.
    pub fn load(&self, e: &mut Emitter<'_>, k: i32, rows: &[(i32, i32)]) {
        let inactive = 12 + k as u8;
        let base = self.base;
        let (gather, broadcast, next) =
            (e.ops.new_dynamic_label(), e.ops.new_dynamic_label(), e.ops.new_dynamic_label());
        skip_empty(e, k, next);
        self.indices(e, k);
        dynasm!(e.ops
            ; .arch x64
            ; vptest Ry(inactive), Ry(inactive)
            ; jnz =>gather
            ; vpbroadcastd ymm1, xmm4
            ; vpcmpeqd ymm1, ymm1, ymm4
        );
        self.consecutive(e, gather);
        dynasm!(e.ops
            ; .arch x64
            ; vptest ymm1, ymm3
            ; jc =>broadcast
            ; vptest ymm0, ymm3
            ; jnc =>gather
        );
        for &(row, displacement) in rows {
            dynasm!(e.ops
                ; .arch x64
                ; vmovdqu ymm0, [Rq(base) + rax + displacement]
                ; vmovdqu [r13 + row + 32 * k], ymm0
            );
        }
        dynasm!(e.ops ; .arch x64 ; jmp =>next ; =>broadcast);
        for &(row, displacement) in rows {
            dynasm!(e.ops
                ; .arch x64
                ; vpbroadcastd ymm0, [Rq(base) + rax + displacement]
                ; vmovdqu [r13 + row + 32 * k], ymm0
            );
        }
        dynasm!(e.ops ; .arch x64 ; jmp =>next ; =>gather);
        for &(row, displacement) in rows {
            dynasm!(e.ops
                ; .arch x64
                ; vmovdqu ymm0, [r13 + row + 32 * k]
                ; vpxor ymm1, Ry(inactive), ymm3
                ; vpgatherdd ymm0, [Rq(base) + ymm4 * 1 + displacement], ymm1
                ; vmovdqu [r13 + row + 32 * k], ymm0
            );
        }
        dynasm!(e.ops ; .arch x64 ; =>next);
    }

    /// Emits the classification of the address row at `addresses`: `ymm4`, the lanes
    /// consecutive with their chunk's first; `ymm5`, the lanes equal to it (each ANDed over the
    /// four chunks).
    fn classify(e: &mut Emitter<'_>, addresses: i32) {
        for k in 0..4 {
            let (equal, ramp) = if k == 0 { (5, 4) } else { (1, 0) };
            dynasm!(e.ops
                ; .arch x64
                ; vpbroadcastd ymm0, [r13 + addresses + 32 * k]
                ; vpcmpeqd Ry(equal), ymm0, [r13 + addresses + 32 * k]
                ; vpaddd ymm0, ymm0, [r14 + RAMP]
                ; vpcmpeqd Ry(ramp), ymm0, [r13 + addresses + 32 * k]
            );
            if k > 0 {
                dynasm!(e.ops ; .arch x64 ; vpand ymm5, ymm5, ymm1 ; vpand ymm4, ymm4, ymm0);
            }
        }
    }

    /// Loads every lane into each `(row, displacement)` of `rows` where EXEC holds all 32 lanes
    /// and each chunk's eight addresses are consecutive dwords (a row of a tile) or all one
    /// address (a value the chunk shares): one classification of the whole row, then one vector
    /// load or broadcast per chunk and row, without the per-chunk tests of [`Chunks::load`].
    /// Jumps to `otherwise`, having written nothing, for any other pattern. The caller has
    /// checked every lane's access against memory, and `ymm3` is all ones.
    ///
    /// With `shape` (a register and the offset from it of a [`super::frame::RowShape`] slot
    /// whose `row` the caller has found equal to the address row, its kind reset where it was
    /// not), a known
    /// kind skips the classification, and a new one is recorded there. Only unbiased (LDS)
    /// rows: a global row's shape also depends on where its chunks wrap.
    pub fn load_whole(
        &self,
        e: &mut Emitter<'_>,
        rows: &[(i32, i32)],
        otherwise: dynasmrt::DynamicLabel,
        shape: Option<(u8, i32)>,
    ) {
        assert!(shape.is_none() || !self.biased, "shapes of unbiased rows only");
        let (addresses, lane_base) = (self.addresses, self.lane_base);
        let (consecutive, done) = (e.ops.new_dynamic_label(), e.ops.new_dynamic_label());
        let broadcast = e.ops.new_dynamic_label();
        match shape {
            None => {
                Self::classify(e, addresses);
                dynasm!(e.ops
                    ; .arch x64
                    ; vptest ymm4, ymm3
                    ; jc =>consecutive
                    ; vptest ymm5, ymm3
                    ; jnc =>otherwise
                );
            }
            Some((base, slot)) => {
                // A kind recorded for this row: straight to its loads. A new row is classified
                // out of line, the decision recorded first.
                let kind = slot + SHAPE_KIND;
                let classified = e.out_of_line(move |e| {
                    dynasm!(e.ops
                        ; .arch x64
                        ; cmp ecx, SHAPE_GENERAL as i32
                        ; je =>otherwise
                    );
                    Self::classify(e, addresses);
                    let (found_consecutive, neither) = (e.ops.new_dynamic_label(), e.ops.new_dynamic_label());
                    dynasm!(e.ops
                        ; .arch x64
                        ; vptest ymm4, ymm3
                        ; jc =>found_consecutive
                        ; vptest ymm5, ymm3
                        ; jnc =>neither
                        ; mov DWORD [Rq(base) + kind], SHAPE_BROADCAST as i32
                        ; jmp =>broadcast
                        ; =>neither
                        ; mov DWORD [Rq(base) + kind], SHAPE_GENERAL as i32
                        ; jmp =>otherwise
                        ; =>found_consecutive
                        ; mov DWORD [Rq(base) + kind], SHAPE_CONSECUTIVE as i32
                        ; jmp =>consecutive
                    );
                });
                dynasm!(e.ops
                    ; .arch x64
                    ; mov ecx, [Rq(base) + kind]
                    ; cmp ecx, SHAPE_CONSECUTIVE as i32
                    ; je =>consecutive
                    ; cmp ecx, SHAPE_BROADCAST as i32
                    ; jne =>classified
                );
            }
        }
        dynasm!(e.ops ; .arch x64 ; =>broadcast);
        // Each chunk's rows from its first lane's address: broadcast, or eight consecutive dwords.
        let chunk_rows = |e: &mut Emitter<'_>, broadcast: bool| {
            for k in 0..4 {
                dynasm!(e.ops ; .arch x64 ; mov eax, [r13 + addresses + 32 * k]);
                for &(row, displacement) in rows {
                    if broadcast {
                        dynasm!(e.ops ; .arch x64 ; vpbroadcastd ymm0, [Rq(lane_base) + rax + displacement]);
                    } else {
                        dynasm!(e.ops ; .arch x64 ; vmovdqu ymm0, [Rq(lane_base) + rax + displacement]);
                    }
                    dynasm!(e.ops ; .arch x64 ; vmovdqu [r13 + row + 32 * k], ymm0);
                }
            }
        };
        chunk_rows(e, true);
        dynasm!(e.ops ; .arch x64 ; jmp =>done ; =>consecutive);
        if self.biased {
            // Global memory's 32-bit offsets may wrap within a chunk (the span check covers
            // each lane, not a vector read past 2^32): such a chunk takes the general path.
            for k in 0..4 {
                dynasm!(e.ops
                    ; .arch x64
                    ; cmp DWORD [r13 + addresses + 32 * k], 0xFFFF_FFE3_u32 as i32
                    ; ja =>otherwise
                );
            }
        }
        chunk_rows(e, false);
        dynasm!(e.ops ; .arch x64 ; =>done);
    }

    /// Stores `dwords` (2 or 4) rows from `first_row` on, each lane's dwords side by side,
    /// where EXEC holds all 32 lanes and each chunk's eight addresses are consecutive elements
    /// (`4 × dwords` bytes apart, as a b64 or b128 store of a tile row has them): the chunk's
    /// rows interleaved in registers and written as whole vectors. Lanes' elements do not
    /// overlap, so the order of the writes is immaterial. Jumps to `otherwise`, having written
    /// nothing, for any other pattern. The caller has checked every lane's access against
    /// memory, and `ymm3` is all ones.
    pub fn store_interleaved_whole(
        &self,
        e: &mut Emitter<'_>,
        first_row: i32,
        dwords: u32,
        otherwise: dynasmrt::DynamicLabel,
    ) {
        assert!(matches!(dwords, 2 | 4), "pairs or quads of dwords");
        let (addresses, lane_base) = (self.addresses, self.lane_base);
        let element = 4 * dwords;
        // ymm1: the lanes' offsets from the chunk's first (the frame's ramp of 4s, scaled).
        dynasm!(e.ops
            ; .arch x64
            ; vmovdqa ymm1, [r14 + RAMP]
            ; vpslld ymm1, ymm1, if dwords == 2 { 1 } else { 2 }
        );
        for k in 0..4 {
            dynasm!(e.ops
                ; .arch x64
                ; vpbroadcastd ymm0, [r13 + addresses + 32 * k]
                ; vpaddd ymm0, ymm0, ymm1
                ; vpcmpeqd ymm0, ymm0, [r13 + addresses + 32 * k]
                ; vptest ymm0, ymm3
                ; jnc =>otherwise
                // A chunk whose elements would pass 2^32 (the span check covers each lane, not
                // a vector write past it) takes the general path.
                ; cmp DWORD [r13 + addresses + 32 * k], (u32::MAX - 8 * element + 1) as i32
                ; ja =>otherwise
            );
        }
        for k in 0..4 {
            let row = |n: i32| first_row + n * ROW + 32 * k;
            dynasm!(e.ops
                ; .arch x64
                ; mov eax, [r13 + addresses + 32 * k]
                ; vmovdqu ymm4, [r13 + row(0)]
                ; vmovdqu ymm5, [r13 + row(1)]
            );
            if dwords == 2 {
                // (a0 b0 a1 b1 | a4 b4 a5 b5) and (a2 b2 a3 b3 | a6 b6 a7 b7): lanes 0–3, 4–7.
                dynasm!(e.ops
                    ; .arch x64
                    ; vpunpckldq ymm0, ymm4, ymm5
                    ; vpunpckhdq ymm1, ymm4, ymm5
                    ; vperm2i128 ymm4, ymm0, ymm1, 0x20
                    ; vperm2i128 ymm5, ymm0, ymm1, 0x31
                    ; vmovdqu [Rq(lane_base) + rax], ymm4
                    ; vmovdqu [Rq(lane_base) + rax + 32], ymm5
                );
                continue;
            }
            // A 4 × 8 transpose: pairs of dwords, then of pairs, then the 128-bit halves.
            dynasm!(e.ops
                ; .arch x64
                ; vmovdqu ymm6, [r13 + row(2)]
                ; vmovdqu ymm7, [r13 + row(3)]
                ; vpunpckldq ymm0, ymm4, ymm5
                ; vpunpckhdq ymm1, ymm4, ymm5
                ; vpunpckldq ymm8, ymm6, ymm7
                ; vpunpckhdq ymm9, ymm6, ymm7
                ; vpunpcklqdq ymm4, ymm0, ymm8
                ; vpunpckhqdq ymm5, ymm0, ymm8
                ; vpunpcklqdq ymm6, ymm1, ymm9
                ; vpunpckhqdq ymm7, ymm1, ymm9
                ; vperm2i128 ymm0, ymm4, ymm5, 0x20
                ; vmovdqu [Rq(lane_base) + rax], ymm0
                ; vperm2i128 ymm0, ymm6, ymm7, 0x20
                ; vmovdqu [Rq(lane_base) + rax + 32], ymm0
                ; vperm2i128 ymm0, ymm4, ymm5, 0x31
                ; vmovdqu [Rq(lane_base) + rax + 64], ymm0
                ; vperm2i128 ymm0, ymm6, ymm7, 0x31
                ; vmovdqu [Rq(lane_base) + rax + 96], ymm0
            );
        }
    }

    /// Stores row `row` of chunk `k`, one dword per lane, at each active lane's address plus
    /// `displacement`, in lane order: nothing where no lane is active, one masked vector store
    /// where the addresses are consecutive dwords, one store where they are all one (the last
    /// active lane's value), else lane by lane. `ymm3` is all ones.
    pub fn store(&self, e: &mut Emitter<'_>, k: i32, row: i32, displacement: i32) {
        let (inactive, exec) = (12 + k as u8, e.exec());
        let (base, lane_base) = (self.base, self.lane_base);
        let next = e.ops.new_dynamic_label();
        let addresses = self.addresses;
        // Not consecutive (out of line): nothing where no lane is active, one store where every
        // active lane has one address, else lane by lane.
        let lanes = e.out_of_line(move |e| {
            let lane = e.ops.new_dynamic_label();
            if e.by_half() {
                dynasm!(e.ops ; .arch x64 ; movzx edx, BYTE [r12 + rbx * 4 + exec + k]);
            } else {
                dynasm!(e.ops ; .arch x64 ; movzx edx, BYTE [r12 + exec + k]);
            }
            dynasm!(e.ops
                ; .arch x64
                ; test edx, edx
                ; jz =>next
                // Every active lane at one address (a wave's result, which every lane holds,
                // stored from all of them): the last lane's write is the one that stays.
                ; bsr ecx, edx
                ; mov eax, [r13 + rcx * 4 + addresses + 32 * k]
                ; vmovd xmm0, eax
                ; vpbroadcastd ymm0, xmm0
                ; vpcmpeqd ymm0, ymm0, [r13 + addresses + 32 * k]
                ; vpor ymm0, ymm0, Ry(inactive)
                ; vptest ymm0, ymm3
                ; jnc =>lane
                ; mov esi, [r13 + rcx * 4 + row + 32 * k]
                ; mov [Rq(lane_base) + rax + displacement], esi
                ; jmp =>next
                ; =>lane
                ; bsf ecx, edx
                ; mov eax, [r13 + rcx * 4 + addresses + 32 * k]
                ; mov esi, [r13 + rcx * 4 + row + 32 * k]
                ; mov [Rq(lane_base) + rax + displacement], esi
                ; blsr edx, edx
                ; jnz =>lane
                ; jmp =>next
            );
        });
        skip_empty(e, k, next);
        self.indices(e, k);
        self.consecutive(e, lanes);
        dynasm!(e.ops
            ; .arch x64
            ; vpor ymm0, ymm0, Ry(inactive)
            ; vptest ymm0, ymm3
            ; jnc =>lanes
            ; vpxor ymm1, Ry(inactive), ymm3
            ; vmovdqu ymm0, [r13 + row + 32 * k]
            ; vpmaskmovd [Rq(base) + rax + displacement], ymm1, ymm0
            ; =>next
        );
    }
}

/// Jumps to `skip` where chunk `k` has no active lane: such a chunk loads and stores nothing. A
/// masked store of no lanes whose stale addresses reach an unmapped page is a microcode assist
/// of hundreds of cycles (the MLP's softmax stores ten lanes of 32, and its two empty chunks'
/// stores were a twentieth of its time). `ymm3` is all ones.
fn skip_empty(e: &mut Emitter<'_>, k: i32, skip: dynasmrt::DynamicLabel) {
    dynasm!(e.ops
        ; .arch x64
        ; vptest Ry(12 + k as u8), ymm3
        ; jc =>skip
    );
}
