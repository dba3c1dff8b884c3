//! VALU compares: i32, u32 and f32 rows, and 64-bit integers in halves, to an SGPR, VCC or EXEC
//! (`v_cmpx`), 0 in inactive lanes.

use dynasmrt::{DynasmApi, dynasm};

use super::emit::{Emitter, ROW, sgpr};
use super::sources::{Src, broadcast_constant, broadcast_scc, load};
use crate::interp::operands::Source;
use crate::interp::valu::{CompareType, Condition, Form, VOp};
use crate::interp::wave::{EXEC, NULL};

/// A compare: the lanes where it holds, in EXEC, to the SGPR (or VCC or EXEC) it names.
pub(super) fn compare(e: &mut Emitter<'_>, op: &VOp, condition: Condition, ty: CompareType, a: Src, b: Src) {
    let Form::Compare { into_exec, .. } = op.form else { unreachable!("a compare's form") };
    let target = if into_exec { EXEC } else { op.operands.sdst as u32 };
    dynasm!(e.ops ; .arch x64 ; xor r8d, r8d ; xor r9d, r9d);
    if ty == CompareType::U32 {
        // Unsigned order is signed order with the sign bits flipped.
        dynasm!(e.ops
            ; .arch x64
            ; mov eax, 0x8000_0000u32 as i32
            ; vmovd xmm11, eax
            ; vpbroadcastd ymm11, xmm11
        );
    }
    for k in 0..4 {
        load(e, 0, a, k);
        if ty == CompareType::F32 {
            let predicate = float_predicate(condition);
            load(e, 1, b, k);
            e.vcmpps(0, 0, 1, predicate);
            e.movmsk(1, 0); // ecx
            dynasm!(e.ops
                ; .arch x64
                ; shl ecx, (8 * k) as i8
                ; or r8d, ecx
            );
            continue;
        }
        load(e, 1, b, k);
        if ty == CompareType::U32 {
            dynasm!(e.ops
                ; .arch x64
                ; vpxor ymm0, ymm0, ymm11
                ; vpxor ymm1, ymm1, ymm11
            );
        }
        dynasm!(e.ops
            ; .arch x64
            ; vpcmpeqd ymm2, ymm0, ymm1
            ; vpcmpgtd ymm3, ymm0, ymm1
        );
        lane_bits(e, k, 2, 3);
    }
    if ty != CompareType::F32 {
        holds(e, condition);
    }
    write_lanes(e, target);
}

/// Adds chunk `k`'s lanes to `r8d` (where `ymm(equal)` is all ones) and `r9d` (`ymm(greater)`).
fn lane_bits(e: &mut Emitter<'_>, k: i32, equal: u8, greater: u8) {
    e.movmsk(1, equal); // ecx
    e.movmsk(2, greater); // edx
    dynasm!(e.ops
        ; .arch x64
        ; shl ecx, (8 * k) as i8
        ; shl edx, (8 * k) as i8
        ; or r8d, ecx
        ; or r9d, edx
    );
}

/// `r8d` = the lanes where integer `condition` holds, from `r8d` (equal lanes) and `r9d`
/// (greater lanes).
fn holds(e: &mut Emitter<'_>, condition: Condition) {
    match condition {
        Condition::Eq => dynasm!(e.ops ; .arch x64 ; mov eax, r8d),
        Condition::Ne => dynasm!(e.ops ; .arch x64 ; mov eax, r8d ; not eax),
        Condition::Gt => dynasm!(e.ops ; .arch x64 ; mov eax, r9d),
        Condition::Ge => dynasm!(e.ops ; .arch x64 ; mov eax, r9d ; or eax, r8d),
        Condition::Lt => dynasm!(e.ops ; .arch x64 ; mov eax, r9d ; or eax, r8d ; not eax),
        Condition::Le => dynasm!(e.ops ; .arch x64 ; mov eax, r9d ; not eax),
        Condition::True => dynasm!(e.ops ; .arch x64 ; mov eax, -1),
        // Ordered, unordered and the negated forms do not exist for integers; false.
        _ => dynasm!(e.ops ; .arch x64 ; xor eax, eax),
    }
    dynasm!(e.ops ; .arch x64 ; mov r8d, eax);
}

/// Writes a compare's lanes (`r8d`) to `target`, 0 in inactive lanes
/// (a lane mask: the running half's part of it, `Emitter::mask_slot`).
pub(super) fn write_lanes(e: &mut Emitter<'_>, target: u32) {
    let (exec, slot) = (e.exec(), e.mask_slot(target));
    if e.by_half() {
        dynasm!(e.ops ; .arch x64 ; and r8d, [r12 + rbx * 4 + exec]);
    } else {
        dynasm!(e.ops ; .arch x64 ; and r8d, [r12 + exec]);
    }
    if target != NULL && slot < 128 {
        if e.by_half() {
            dynasm!(e.ops ; .arch x64 ; mov [r12 + rbx * 4 + sgpr(slot)], r8d);
        } else {
            dynasm!(e.ops ; .arch x64 ; mov [r12 + sgpr(slot)], r8d);
        }
        if sgpr(slot) == exec {
            e.masks();
        }
    }
}

/// A compare of 64-bit integers, as `valu`'s on `row64` sources, in 32-bit halves: equal where
/// both halves are, greater where the high half is (signed for i64) or the high halves are
/// equal and the low half is (unsigned).
pub(super) fn compare64(e: &mut Emitter<'_>, op: &VOp, condition: Condition, signed: bool) {
    let Form::Compare { into_exec, .. } = op.form else { unreachable!("a compare's form") };
    let target = if into_exec { EXEC } else { op.operands.sdst as u32 };
    // Source `index`'s low and high halves: rows, or broadcasts into `low` and `low + 1`.
    let halves = |e: &mut Emitter<'_>, index: usize, low: u8| -> (Src, Src) {
        let high = low + 1;
        match op.operands.src[index] {
            Source::Vgpr(v) => return (Src::Row(v as i32 * ROW), Src::Row((v as i32 + 1) * ROW)),
            Source::Sgpr(s) => dynasm!(e.ops
                ; .arch x64
                ; vpbroadcastd Ry(low), [r12 + sgpr(s as u32)]
                ; vpbroadcastd Ry(high), [r12 + sgpr(s as u32 + 1)]
            ),
            Source::Scc => {
                broadcast_scc(e, low);
                broadcast_constant(e, high, 0);
            }
            Source::Constant(value) => {
                broadcast_constant(e, low, value as u32);
                broadcast_constant(e, high, (value >> 32) as u32);
            }
            Source::Mask(_) | Source::ConstantMask(_) => unreachable!("no mask sources (`translatable`)"),
        }
        (Src::Reg(low), Src::Reg(high))
    };
    let (a_low, a_high) = halves(e, 0, 8);
    let (b_low, b_high) = halves(e, 1, 10);
    dynasm!(e.ops
        ; .arch x64
        ; xor r8d, r8d
        ; xor r9d, r9d
        ; vpcmpeqd ymm7, ymm7, ymm7
        ; vpslld ymm7, ymm7, 31
    );
    for k in 0..4 {
        load(e, 0, a_low, k);
        load(e, 1, a_high, k);
        load(e, 2, b_low, k);
        load(e, 3, b_high, k);
        dynasm!(e.ops
            ; .arch x64
            ; vpcmpeqd ymm4, ymm1, ymm3
            ; vpcmpeqd ymm5, ymm0, ymm2
            // The low halves compare unsigned: sign bits flipped, then signed.
            ; vpxor ymm0, ymm0, ymm7
            ; vpxor ymm2, ymm2, ymm7
            ; vpcmpgtd ymm6, ymm0, ymm2
        );
        if !signed {
            dynasm!(e.ops
                ; .arch x64
                ; vpxor ymm1, ymm1, ymm7
                ; vpxor ymm3, ymm3, ymm7
            );
        }
        dynasm!(e.ops
            ; .arch x64
            ; vpcmpgtd ymm0, ymm1, ymm3
            ; vpand ymm6, ymm6, ymm4
            ; vpor ymm0, ymm0, ymm6
            ; vpand ymm5, ymm5, ymm4
        );
        lane_bits(e, k, 5, 0);
    }
    holds(e, condition);
    write_lanes(e, target);
}

/// AVX's `vcmpps` predicate for a compare's condition (ordered conditions false on NaN, the
/// negated ones true), as `valu::compare::holds` decides from the order.
fn float_predicate(condition: Condition) -> u8 {
    match condition {
        Condition::Eq => 0x00,
        Condition::Lt => 0x01,
        Condition::Le => 0x02,
        Condition::Unordered => 0x03,
        Condition::Ne => 0x04,
        Condition::Nlt => 0x05,
        Condition::Nle => 0x06,
        Condition::Ordered => 0x07,
        Condition::Nlg => 0x08,
        Condition::Nge => 0x09,
        Condition::Ngt => 0x0A,
        Condition::False | Condition::Class => 0x0B,
        Condition::Lg => 0x0C,
        Condition::Ge => 0x0D,
        Condition::Gt => 0x0E,
        Condition::True => 0x0F,
    }
}
