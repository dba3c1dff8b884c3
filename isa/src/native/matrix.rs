//! WMMA: `v_wmma_f32_16x16x16_f16`, D = A × B + C on one wave's 16 × 16 tiles, as
//! `interp::valu::wmma` computes it: each element of D starts from C's in f64 and adds the 16
//! products A[r][k] × B[k][c] in k's order, each exact in f64 (two f16s), so each step is one
//! f64 rounding (`vfmadd231pd`, whose single rounding is the same: `Emitter::vfmadd231pd_frame`,
//! since dynasm-rs misencodes it), then rounds once to f32.
//! The register layout is that module's: A's lane `l` holds row `l % 16`, B's column `l % 16`,
//! their 16 k packed two f16 to a VGPR; C's and D's VGPR `v` hold rows 2v (lanes 0–15) and
//! 2v + 1 (lanes 16–31). WMMA ignores EXEC.
//!
//! A and B go to the frame's f64 matrices first (`Frame::matrix`), then each pair of rows of D
//! takes 16 steps of two broadcasts of A and eight FMAs against B's rows, into the frame's D
//! rows. A NaN anywhere in D (whose payload the interpreter picks its own way) is the
//! interpreter's step, before anything is written; otherwise D's rows are copied to their
//! VGPRs. The other WMMA forms, and modifiers, run as the step.

use dynasmrt::{DynasmApi, DynasmLabelApi, dynasm};

use super::emit::{Emitter, MATRIX_A, MATRIX_B, MATRIX_D, ROW};
use crate::gfx11::Opcode;
use crate::interp::decoded_kernel::Decoded;
use crate::interp::operands::Source;
use crate::interp::valu::VOp;

/// Translates `v_wmma_f32_16x16x16_f16` in wave32 (false, nothing emitted, for anything else:
/// the interpreter refuses wave64's layout by name, and so does its step here).
pub(super) fn translate(e: &mut Emitter<'_>, index: u32, decoded: &Decoded, op: &VOp) -> bool {
    let operands = &op.operands;
    if e.wide
        || op.opcode != Opcode::VWmmaF3216x16x16F16
        || operands.neg | operands.abs | operands.op_sel | operands.omod != 0
        || operands.clamp
        || operands.dpp.is_some()
    {
        return false;
    }
    let rows = |source: Source| match source {
        Source::Vgpr(first) if first as u32 + 8 <= e.vgprs => Some(first as i32 * ROW),
        _ => None,
    };
    let (Some(a), Some(b), Some(c)) = (rows(operands.src[0]), rows(operands.src[1]), rows(operands.src[2])) else {
        return false;
    };
    if operands.vdst as u32 + 8 > e.vgprs {
        return false;
    }
    let vdst = operands.vdst as i32 * ROW;
    let resume = e.next_label(index, decoded);
    let slow = e.slow_path(index, resume);
    widen(e, a, MATRIX_A);
    widen(e, b, MATRIX_B);

    // Pairs of rows of D, 2p and 2p + 1: rdi = &A[0][2p], rdx = C's VGPR p (from r13),
    // r8 = D's row p in the frame; ecx counts the pairs down.
    let pair = e.ops.new_dynamic_label();
    dynasm!(e.ops
        ; .arch x64
        ; lea rdi, [r14 + MATRIX_A]
        ; mov edx, c
        ; lea r8, [r14 + MATRIX_D]
        ; mov ecx, 8
        ; =>pair
        // C's two rows, as f64: ymm0–3 row 2p, ymm4–7 row 2p + 1, four columns each.
        ; vcvtps2pd ymm0, [r13 + rdx]
        ; vcvtps2pd ymm1, [r13 + rdx + 16]
        ; vcvtps2pd ymm2, [r13 + rdx + 32]
        ; vcvtps2pd ymm3, [r13 + rdx + 48]
        ; vcvtps2pd ymm4, [r13 + rdx + 64]
        ; vcvtps2pd ymm5, [r13 + rdx + 80]
        ; vcvtps2pd ymm6, [r13 + rdx + 96]
        ; vcvtps2pd ymm7, [r13 + rdx + 112]
    );
    for k in 0..16 {
        let (a_row, b_row) = (k * 128, MATRIX_B + k * 128);
        dynasm!(e.ops
            ; .arch x64
            ; vbroadcastsd ymm8, QWORD [rdi + a_row]
            ; vbroadcastsd ymm9, QWORD [rdi + a_row + 8]
        );
        for column in 0..4u8 {
            e.vfmadd231pd_frame(column, 8, b_row + 32 * column as i32);
            e.vfmadd231pd_frame(4 + column, 9, b_row + 32 * column as i32);
        }
    }
    for (q, acc) in (0..8).enumerate() {
        dynasm!(e.ops
            ; .arch x64
            ; vcvtpd2ps Rx(acc), Ry(acc)
            ; vmovups [r8 + 16 * q as i32], Rx(acc)
        );
    }
    dynasm!(e.ops
        ; .arch x64
        ; add rdi, 16
        ; add rdx, ROW
        ; add r8, ROW
        ; sub ecx, 1
        ; jnz =>pair
        ; vpxor xmm1, xmm1, xmm1
    );
    // A NaN in any element: the interpreter's step.
    for row in 0..8 {
        for k in 0..4 {
            dynasm!(e.ops ; .arch x64 ; vmovups ymm0, [r14 + MATRIX_D + row * ROW + 32 * k]);
            e.vcmpps(0, 0, 0, 3);
            dynasm!(e.ops ; .arch x64 ; vpor ymm1, ymm1, ymm0);
        }
    }
    dynasm!(e.ops
        ; .arch x64
        ; vptest ymm1, ymm1
        ; jnz =>slow
    );
    for row in 0..8 {
        for k in 0..4 {
            dynasm!(e.ops
                ; .arch x64
                ; vmovups ymm0, [r14 + MATRIX_D + row * ROW + 32 * k]
                ; vmovdqu [r13 + vdst + row * ROW + 32 * k], ymm0
            );
        }
    }
    // The FMAs used the EXEC masks' registers.
    e.masks();
    true
}

/// The eight VGPRs from `first` (lanes 0–15: 16 k, two f16 a VGPR) as the f64 matrix at
/// `matrix` in the frame, element (k, lane) at `16 k + lane`.
fn widen(e: &mut Emitter<'_>, first: i32, matrix: i32) {
    dynasm!(e.ops
        ; .arch x64
        ; vpcmpeqd ymm15, ymm15, ymm15
        ; vpsrld ymm15, ymm15, 16
    );
    for j in 0..8 {
        let row = first + j * ROW;
        dynasm!(e.ops
            ; .arch x64
            ; vmovdqu ymm0, [r13 + row]
            ; vmovdqu ymm1, [r13 + row + 32]
            // Low halves (k = 2j) and high halves (k = 2j + 1) of lanes 0–15, as 16 words in
            // lane order (`vpackusdw` packs within 128-bit halves; `vpermq` restores the order).
            ; vpand ymm2, ymm0, ymm15
            ; vpand ymm3, ymm1, ymm15
            ; vpackusdw ymm2, ymm2, ymm3
            ; vpermq ymm2, ymm2, 0xD8_u8 as i8
            ; vpsrld ymm4, ymm0, 16
            ; vpsrld ymm5, ymm1, 16
            ; vpackusdw ymm4, ymm4, ymm5
            ; vpermq ymm4, ymm4, 0xD8_u8 as i8
        );
        for (words, k) in [(2u8, 2 * j), (4u8, 2 * j + 1)] {
            let at = matrix + k * 128;
            dynasm!(e.ops
                ; .arch x64
                ; vcvtph2ps ymm6, Rx(words)
                ; vextracti128 xmm7, Ry(words), 1
                ; vcvtph2ps ymm7, xmm7
                ; vcvtps2pd ymm8, xmm6
                ; vextractf128 xmm6, ymm6, 1
                ; vcvtps2pd ymm9, xmm6
                ; vcvtps2pd ymm10, xmm7
                ; vextractf128 xmm7, ymm7, 1
                ; vcvtps2pd ymm11, xmm7
                ; vmovupd [r14 + at], ymm8
                ; vmovupd [r14 + at + 32], ymm9
                ; vmovupd [r14 + at + 64], ymm10
                ; vmovupd [r14 + at + 96], ymm11
            );
        }
    }
}
