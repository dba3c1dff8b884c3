//! Vector ALU translations: the interpreter's plain 32-bit operations (no modifiers, DPP or
//! 16-bit halves, `valu::plain`), and VOPD pairs of them, as whole rows in four AVX2 vectors.
//!
//! Translated: `v_mov_b32`; f32 add, sub, subrev, mul, fma, fmac, fmaak, fmamk; integer add,
//! sub, subrev, and, or, xor, shifts, mul_lo, mul_u32_u24, min/max (signed and unsigned), add3,
//! lshl_add, add_lshl, lshl_or, and_or, or3; `v_add_co_u32` and `v_add_co_ci_u32` (carries to
//! an SGPR or VCC); `v_lshlrev_b64`; `v_cndmask_b32`; `v_cvt_f32_i32`; compares of
//! i32, u32 and f32 (not `class`) to an SGPR, VCC or EXEC (`v_cmpx`).
//!
//! Float operations run natively only while MODE is IEEE round-to-nearest with denormals kept
//! (the host's own arithmetic, as the interpreter's plain path requires): the code tests MODE
//! and takes the interpreter's step otherwise.

use dynasmrt::{DynasmApi, DynasmLabelApi, dynasm};

use super::emit::{Emitter, LANE_BITS, MODE, RAMP, ROW, SCC, SCRATCH, sgpr};
use crate::gfx11::Opcode;
use crate::interp::operands::{DppPlan, INVALID, Source};
use crate::interp::program::Decoded;
use crate::interp::valu::{CompareType, Condition, Form, VOp};
use crate::interp::wave::{EXEC, Kind, MODE_IEEE_FLOAT, NULL, VCC};

/// Where a source's chunk of 8 lanes is: a VGPR row's bytes from `r13`, or a register holding a
/// broadcast scalar.
#[derive(Clone, Copy)]
enum Src {
    Row(i32),
    Reg(u8),
    /// Row `n` of the frame's scratch rows (`Frame::scratch`): src0 after DPP's permutation
    /// (row 0), a source with its float modifiers applied (row 1 + its index).
    Scratch(u8),
}

/// The registers a source's broadcast goes to, by source index.
const BROADCAST: [u8; 3] = [8, 9, 10];

/// The class of an operation: how its chunk is computed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Unary,
    Binary,
    Ternary,
    Fmac,
    Select,
    Compare(Condition, CompareType),
    /// `v_add_co_u32` (`carry_in` false) and `v_add_co_ci_u32`: the sum, and the carries to an
    /// SGPR (or VCC).
    Carry {
        carry_in: bool,
    },
    /// `v_lshlrev_b64`: a VGPR pair shifted left by the first source's low 6 bits, to a pair.
    Shift64,
    /// `v_mad_u64_u32` without a carry-out: a × b (32-bit, unsigned) plus a VGPR pair, to a pair.
    Mad64,
    /// `v_dot2acc_f32_f16`: vdst += a.lo × b.lo + a.hi × b.hi, f16 halves, f32 accumulator.
    Dot2,
    /// `v_max_f32`, `v_min_f32`.
    MinMax,
    /// `v_rndne_f32` and `v_cvt_i32_f32`: one source, NaN and out-of-range lanes the step's.
    Round,
    /// A compare of 64-bit integers (`signed`: i64), as halves: a VGPR pair's two rows, an SGPR
    /// pair's or a constant's two broadcasts.
    Compare64(Condition, bool),
}

fn shape(op: &VOp) -> Option<Shape> {
    use Opcode::*;
    if let Form::Compare { condition, ty, .. } = op.form {
        if condition == Condition::Class {
            return None;
        }
        return match ty {
            CompareType::I32 | CompareType::U32 | CompareType::F32 => Some(Shape::Compare(condition, ty)),
            CompareType::I64 | CompareType::U64 => Some(Shape::Compare64(condition, ty == CompareType::I64)),
            _ => None,
        };
    }
    Some(match op.opcode {
        VMovB32 | VCvtF32I32 => Shape::Unary,
        VAddF32 | VSubF32 | VSubrevF32 | VMulF32 | VAddNcU32 | VSubNcU32 | VSubrevNcU32 | VAndB32 | VOrB32
        | VXorB32 | VLshlrevB32 | VLshrrevB32 | VAshrrevI32 | VMulLoU32 | VMulU32U24 | VMaxU32 | VMinU32 | VMaxI32
        | VMinI32 | VFmamkF32 => Shape::Binary,
        VFmaF32 | VFmaakF32 | VAdd3U32 | VLshlAddU32 | VAddLshlU32 | VLshlOrB32 | VAndOrB32 | VOr3B32 => Shape::Ternary,
        VFmacF32 => Shape::Fmac,
        VCndmaskB32 => Shape::Select,
        VAddCoU32 => Shape::Carry { carry_in: false },
        VAddCoCiU32 => Shape::Carry { carry_in: true },
        VLshlrevB64 => Shape::Shift64,
        VMadU64U32 => Shape::Mad64,
        VBfeU32 | VBfeI32 => Shape::Ternary,
        VDot2accF32F16 => Shape::Dot2,
        VMaxF32 | VMinF32 => Shape::MinMax,
        VRndneF32 | VCvtI32F32 => Shape::Round,
        _ => return None,
    })
}

/// Whether the operation's arithmetic is the host's float arithmetic (so MODE must be IEEE).
fn float(op: &VOp) -> bool {
    use Opcode::*;
    matches!(op.form, Form::Compare { ty: CompareType::F32, .. })
        || matches!(
            op.opcode,
            VAddF32
                | VSubF32
                | VSubrevF32
                | VMulF32
                | VFmaF32
                | VFmacF32
                | VFmaakF32
                | VFmamkF32
                | VCvtF32I32
                | VDot2accF32F16
                | VMaxF32
                | VMinF32
                | VRndneF32
                | VCvtI32F32
        )
}

/// Sources the shape reads.
fn sources(shape: Shape) -> usize {
    match shape {
        Shape::Unary | Shape::Round => 1,
        Shape::Binary
        | Shape::Fmac
        | Shape::Compare(..)
        | Shape::Carry { carry_in: false }
        | Shape::Shift64
        | Shape::Mad64
        | Shape::Dot2
        | Shape::MinMax
        | Shape::Compare64(..) => 2,
        Shape::Ternary | Shape::Select | Shape::Carry { carry_in: true } => 3,
    }
}

/// Whether `op` has a translation in this wave's registers.
fn translatable(e: &Emitter<'_>, op: &VOp) -> Option<Shape> {
    if op.operands.omod | op.operands.op_sel != 0 || op.operands.clamp || op.half != 0 {
        return None;
    }
    let shape = shape(op)?;
    // Float sources' neg and abs (the interpreter's `VOp::read`: f32 sources only), on the
    // shapes that read their sources as rows (`prepare`).
    if op.operands.neg | op.operands.abs != 0 {
        let rows = matches!(
            shape,
            Shape::Unary
                | Shape::Binary
                | Shape::Ternary
                | Shape::Fmac
                | Shape::MinMax
                | Shape::Round
                | Shape::Compare(..)
        );
        if op.kind != Kind::F32 || !rows {
            return None;
        }
    }
    // DPP: the plain shapes, src0 a VGPR row (`permute`).
    if op.operands.dpp.is_some() {
        let row_source = matches!(op.operands.src[0], Source::Vgpr(v) if (v as u32) < e.vgprs);
        if !row_source || !matches!(shape, Shape::Unary | Shape::Binary | Shape::Ternary | Shape::Fmac) {
            return None;
        }
    }
    for (index, source) in op.operands.src.iter().enumerate().take(sources(shape)) {
        let fits = match *source {
            Source::Vgpr(v) => (v as u32) < e.vgprs,
            Source::Sgpr(_) | Source::Scc | Source::Constant(_) => true,
            Source::Mask(_) | Source::ConstantMask(_) => {
                matches!(shape, Shape::Select | Shape::Carry { carry_in: true }) && index == 2
            }
        };
        if !fits {
            return None;
        }
    }
    if let Shape::Compare64(..) = shape {
        // Pairs: VGPRs within the wave's, plain SGPRs or VCC, constants, SCC.
        let pair = |source: Source| match source {
            Source::Vgpr(v) => (v as u32) + 1 < e.vgprs,
            Source::Sgpr(s) => (s as u32) < VCC + 1,
            Source::Constant(_) | Source::Scc => true,
            Source::Mask(_) | Source::ConstantMask(_) => false,
        };
        return (pair(op.operands.src[0]) && pair(op.operands.src[1])).then_some(shape);
    }
    let mask_source = matches!(op.operands.src[2], Source::Mask(_) | Source::ConstantMask(_));
    if matches!(shape, Shape::Select | Shape::Carry { carry_in: true }) && !mask_source {
        return None;
    }
    if shape == Shape::Shift64 {
        // The shifted pair is VGPRs (a 64-bit constant or SGPR pair reads differently), and the
        // result a pair too.
        let pair = matches!(op.operands.src[1], Source::Vgpr(v) if (v as u32) + 1 < e.vgprs);
        if !pair || op.operands.vdst as u32 + 1 >= e.vgprs {
            return None;
        }
    }
    if shape == Shape::Mad64 {
        // The addend a VGPR pair, the result a pair, and no carry-out to write.
        let pair = matches!(op.operands.src[2], Source::Vgpr(v) if (v as u32) + 1 < e.vgprs);
        if !pair || op.operands.sdst as u32 != NULL || op.operands.vdst as u32 + 1 >= e.vgprs {
            return None;
        }
    }
    if !matches!(shape, Shape::Compare(..)) && op.operands.vdst as u32 >= e.vgprs {
        return None;
    }
    Some(shape)
}

/// Puts source `index` where chunks read it: broadcasts a scalar or constant into its register.
/// Mask sources are broadcast as they are (the select expands them per chunk).
fn place(e: &mut Emitter<'_>, op: &VOp, index: usize) -> Src {
    let reg = BROADCAST[index];
    match op.operands.src[index] {
        Source::Vgpr(v) => return Src::Row(v as i32 * ROW),
        Source::Sgpr(s) | Source::Mask(s) if s as u32 == NULL || s >= 128 => {
            dynasm!(e.ops ; .arch x64 ; vpxor Rx(reg), Rx(reg), Rx(reg));
        }
        Source::Sgpr(s) | Source::Mask(s) => {
            dynasm!(e.ops ; .arch x64 ; vpbroadcastd Ry(reg), [r12 + sgpr(s as u32)]);
        }
        Source::Scc => {
            dynasm!(e.ops
                ; .arch x64
                ; movzx eax, BYTE [r12 + SCC]
                ; vmovd Rx(reg), eax
                ; vpbroadcastd Ry(reg), Rx(reg)
            );
        }
        Source::Constant(value) | Source::ConstantMask(value) => {
            dynasm!(e.ops
                ; .arch x64
                ; mov eax, value as u32 as i32
                ; vmovd Rx(reg), eax
                ; vpbroadcastd Ry(reg), Rx(reg)
            );
        }
    }
    Src::Reg(reg)
}

/// Loads chunk `k` of `src` into `ymm(dst)`.
fn load(e: &mut Emitter<'_>, dst: u8, src: Src, k: i32) {
    match src {
        Src::Row(offset) => dynasm!(e.ops ; .arch x64 ; vmovdqu Ry(dst), [r13 + offset + 32 * k]),
        Src::Reg(reg) => dynasm!(e.ops ; .arch x64 ; vmovdqa Ry(dst), Ry(reg)),
        Src::Scratch(n) => dynasm!(e.ops ; .arch x64 ; vmovdqa Ry(dst), [r14 + scratch_row(n) + 32 * k]),
    }
}

/// `ins ymm(dst), ymm(a), <chunk k of b>`: one three-operand AVX instruction whose last operand
/// is a row's chunk in memory or a register.
macro_rules! vex {
    ($e:expr, $ins:ident, $dst:expr, $a:expr, $b:expr, $k:expr) => {
        match $b {
            Src::Row(offset) => {
                let at = offset + 32 * $k;
                dynasm!($e.ops ; .arch x64 ; $ins Ry($dst), Ry($a), [r13 + at])
            }
            Src::Reg(reg) => dynasm!($e.ops ; .arch x64 ; $ins Ry($dst), Ry($a), Ry(reg)),
            Src::Scratch(n) => {
                let at = scratch_row(n) + 32 * $k;
                dynasm!($e.ops ; .arch x64 ; $ins Ry($dst), Ry($a), [r14 + at])
            }
        }
    };
}

/// Translates a plain VALU instruction; false (nothing emitted) for one without a translation.
pub(super) fn translate(e: &mut Emitter<'_>, index: u32, decoded: &Decoded, op: &VOp) -> bool {
    if matches!(op.opcode, Opcode::VPermlane16B32 | Opcode::VPermlanex16B32) {
        return permlane(e, op);
    }
    let Some(shape) = translatable(e, op) else { return false };
    if float(op) {
        guard_mode(e, index, decoded);
    }
    if let Shape::Compare64(condition, signed) = shape {
        compare64(e, op, condition, signed);
        return true;
    }
    let srcs = prepare(e, op, shape);
    let vdst = op.operands.vdst as i32 * ROW;
    match shape {
        Shape::Dot2 => checked_rows(e, index, decoded, vdst, |e, k| dot2(e, vdst, srcs[0], srcs[1], k)),
        Shape::MinMax => {
            let max = op.opcode == Opcode::VMaxF32;
            checked_rows(e, index, decoded, vdst, |e, k| min_max(e, max, srcs[0], srcs[1], k));
        }
        Shape::Round => {
            let convert = op.opcode == Opcode::VCvtI32F32;
            checked_rows(e, index, decoded, vdst, |e, k| round(e, convert, srcs[0], k));
        }
        _ => emit(e, op, shape, &srcs),
    }
    if op.operands.dpp.is_some() {
        // DPP narrowed the EXEC masks to the lanes it lets write.
        e.masks();
    }
    true
}

/// The sources where chunks read them (`place`), src0 through DPP's permutation where it has
/// DPP (`permute`, into scratch row 0), and each source with float modifiers (neg, abs: bit
/// operations on the sign, abs first, as `VOp::read` applies them) modified: a broadcast in
/// its register, a row into scratch row 1 + its index (or in place in row 0 after DPP).
fn prepare(e: &mut Emitter<'_>, op: &VOp, shape: Shape) -> Vec<Src> {
    let mut srcs: Vec<Src> = (0..sources(shape)).map(|index| place(e, op, index)).collect();
    if let (Some(dpp), Source::Vgpr(source)) = (&op.operands.dpp, op.operands.src[0]) {
        permute(e, dpp, source as u32);
        srcs[0] = Src::Scratch(0);
    }
    if op.operands.neg | op.operands.abs == 0 {
        return srcs;
    }
    // ymm1: the sign bit; ymm2: all but it.
    dynasm!(e.ops
        ; .arch x64
        ; vpcmpeqd ymm2, ymm2, ymm2
        ; vpslld ymm1, ymm2, 31
        ; vpsrld ymm2, ymm2, 1
    );
    for (index, src) in srcs.iter_mut().enumerate() {
        let (neg, abs) = (op.operands.neg >> index & 1 == 1, op.operands.abs >> index & 1 == 1);
        if !neg && !abs {
            continue;
        }
        let modify = |e: &mut Emitter<'_>, reg: u8| {
            if abs {
                dynasm!(e.ops ; .arch x64 ; vpand Ry(reg), Ry(reg), ymm2);
            }
            if neg {
                dynasm!(e.ops ; .arch x64 ; vpxor Ry(reg), Ry(reg), ymm1);
            }
        };
        match *src {
            Src::Reg(reg) => modify(e, reg),
            Src::Row(_) | Src::Scratch(_) => {
                let row = if let Src::Scratch(n) = *src { n } else { 1 + index as u8 };
                for k in 0..4 {
                    load(e, 0, *src, k);
                    modify(e, 0);
                    dynasm!(e.ops ; .arch x64 ; vmovdqa [r14 + scratch_row(row) + 32 * k], ymm0);
                }
                *src = Src::Scratch(row);
            }
        }
    }
    srcs
}

/// The byte offset of the frame's scratch row `n`.
fn scratch_row(n: u8) -> i32 {
    SCRATCH + n as i32 * ROW
}

/// `v_permlane16_b32` and `v_permlanex16_b32` as `valu::permlane` runs them: lane `i` of each
/// row of 16 reads src0's lane of the 4-bit select S1 (lanes 0–7) or S2 (8–15) holds for it,
/// within its own row or, `x16`, the other; a lane it may not read (inactive, without `fi`)
/// keeps vdst's value, or reads 0 with `bound_ctrl`. One gather per eight lanes into the
/// frame's scratch row (src0 and vdst may be one register), then the write in EXEC's lanes.
fn permlane(e: &mut Emitter<'_>, op: &VOp) -> bool {
    let operands = &op.operands;
    let plain = operands.neg | operands.abs | operands.omod == 0 && !operands.clamp && op.half == 0;
    let (Source::Vgpr(source), true) = (operands.src[0], plain && operands.dpp.is_none()) else { return false };
    let scalar = |source: Source| matches!(source, Source::Sgpr(_) | Source::Constant(_));
    if source as u32 >= e.vgprs
        || operands.vdst as u32 >= e.vgprs
        || !scalar(operands.src[1])
        || !scalar(operands.src[2])
    {
        return false;
    }
    let (fetch_inactive, bound_ctrl) = (operands.op_sel & 1 == 1, operands.op_sel & 2 == 2);
    let cross = op.opcode == Opcode::VPermlanex16B32;
    let (source, vdst) = (source as i32 * ROW, operands.vdst as i32 * ROW);
    // The selects, broadcast: S1 in ymm9, S2 in ymm10.
    let (Src::Reg(low), Src::Reg(high)) = (place(e, op, 1), place(e, op, 2)) else { unreachable!("scalar selects") };
    dynasm!(e.ops
        ; .arch x64
        ; mov eax, 15
        ; vmovd xmm11, eax
        ; vpbroadcastd ymm11, xmm11
        ; vpbroadcastd ymm5, [r12 + sgpr(EXEC)]
    );
    for k in 0..4 {
        // Lanes 8k..8k+8: their selects' nibbles (the ramp 0, 4, …, 28 is 4 × the lane's index
        // in its half-row), plus the row they read.
        let select = if k % 2 == 0 { low } else { high };
        let row_read = if (k < 2) != cross { 0 } else { 16 };
        dynasm!(e.ops
            ; .arch x64
            ; vpsrlvd ymm0, Ry(select), [r14 + RAMP]
            ; vpand ymm0, ymm0, ymm11
            ; mov eax, row_read
            ; vmovd xmm1, eax
            ; vpbroadcastd ymm1, xmm1
            ; vpaddd ymm0, ymm0, ymm1
        );
        if fetch_inactive {
            dynasm!(e.ops ; .arch x64 ; vpcmpeqd ymm1, ymm1, ymm1);
        } else {
            dynasm!(e.ops
                ; .arch x64
                ; vpsrlvd ymm1, ymm5, ymm0
                ; vpslld ymm1, ymm1, 31
                ; vpsrad ymm1, ymm1, 31
            );
        }
        if bound_ctrl {
            dynasm!(e.ops ; .arch x64 ; vpxor xmm2, xmm2, xmm2);
        } else {
            dynasm!(e.ops ; .arch x64 ; vmovdqu ymm2, [r13 + vdst + 32 * k]);
        }
        dynasm!(e.ops
            ; .arch x64
            ; vpgatherdd ymm2, [r13 + ymm0 * 4 + source], ymm1
            ; vmovdqa [r14 + SCRATCH + 32 * k], ymm2
        );
    }
    for k in 0..4 {
        dynasm!(e.ops
            ; .arch x64
            ; vmovdqa ymm0, [r14 + SCRATCH + 32 * k]
            ; vblendvps ymm0, ymm0, [r13 + vdst + 32 * k], Ry(12 + k as u8)
            ; vmovdqu [r13 + vdst + 32 * k], ymm0
        );
    }
    true
}

/// DPP on src0 (`operands::DppPlan`, as the interpreter applies it): permutes VGPR `source`
/// into the frame's scratch row, where a lane whose source lane is outside its row (or, without
/// `fi`, inactive) reads 0, and narrows the inactive-lane masks in `ymm12`–`ymm15` to the
/// lanes that may write: not those the row and bank masks disable, nor, without `bound_ctrl`,
/// those that read nothing. The caller restores the masks after the instruction.
fn permute(e: &mut Emitter<'_>, dpp: &DppPlan, source: u32) {
    let row = source as i32 * ROW;
    for k in 0..4usize {
        let lane = |i: usize| 8 * k + i;
        let from = e.constant(core::array::from_fn(|i| match dpp.from[lane(i)] {
            INVALID => 0,
            from => from as u32 & 31,
        }));
        let valid = e.constant(core::array::from_fn(|i| if dpp.from[lane(i)] == INVALID { 0 } else { u32::MAX }));
        let disabled = e.constant(core::array::from_fn(|i| if dpp.enabled >> lane(i) & 1 == 1 { 0 } else { u32::MAX }));
        let (inactive, scratch) = (12 + k as u8, SCRATCH + 32 * k as i32);
        dynasm!(e.ops
            ; .arch x64
            ; vmovdqu ymm4, [=>from]
            ; vmovdqu ymm5, [=>valid]
        );
        if !dpp.fetch_inactive {
            // The source lane's EXEC bit, as a lane mask.
            dynasm!(e.ops
                ; .arch x64
                ; vpbroadcastd ymm1, [r12 + sgpr(EXEC)]
                ; vpsrlvd ymm1, ymm1, ymm4
                ; vpslld ymm1, ymm1, 31
                ; vpsrad ymm1, ymm1, 31
                ; vpand ymm5, ymm5, ymm1
            );
        }
        dynasm!(e.ops
            ; .arch x64
            ; vpxor xmm0, xmm0, xmm0
            ; vmovdqa ymm1, ymm5
            ; vpgatherdd ymm0, [r13 + ymm4 * 4 + row], ymm1
            ; vmovdqa [r14 + scratch], ymm0
            ; vpor Ry(inactive), Ry(inactive), [=>disabled]
        );
        if !dpp.zero_invalid {
            dynasm!(e.ops
                ; .arch x64
                ; vpcmpeqd ymm1, ymm1, ymm1
                ; vpxor ymm1, ymm1, ymm5
                ; vpor Ry(inactive), Ry(inactive), ymm1
            );
        }
    }
}

/// A VOPD pair: both halves read their sources before either writes (RDNA3 ISA guide, "Dual
/// Issue VALU"). Translated when both halves are, and neither writes a register the other reads.
pub(super) fn translate_dual(e: &mut Emitter<'_>, index: u32, decoded: &Decoded, x: &VOp, y: &VOp) -> bool {
    let (Some(x_shape), Some(y_shape)) = (translatable(e, x), translatable(e, y)) else { return false };
    // Shapes with writes or checks of their own (masks, pairs, a NaN test) go as one operation.
    let alone = |shape: Shape| {
        matches!(
            shape,
            Shape::Compare(..)
                | Shape::Compare64(..)
                | Shape::Carry { .. }
                | Shape::Shift64
                | Shape::Mad64
                | Shape::Dot2
                | Shape::MinMax
                | Shape::Round
        )
    };
    if alone(x_shape) || alone(y_shape) {
        return false;
    }
    let reads = |op: &VOp, shape: Shape, register: u16| {
        op.operands.src.iter().take(sources(shape)).any(|source| *source == Source::Vgpr(register))
            || (shape == Shape::Fmac && op.operands.vdst == register)
    };
    if reads(y, y_shape, x.operands.vdst) || reads(x, x_shape, y.operands.vdst) {
        return false;
    }
    if float(x) || float(y) {
        guard_mode(e, index, decoded);
    }
    let srcs = prepare(e, x, x_shape);
    emit(e, x, x_shape, &srcs);
    let srcs = prepare(e, y, y_shape);
    emit(e, y, y_shape, &srcs);
    true
}

/// An operation whose result some lanes' operands make the interpreter's business (a NaN's
/// payload, say): `chunk(e, k)` computes chunk `k`'s result into `ymm7` and the lanes that need
/// the interpreter into `ymm0`; the results go to the frame's scratch row, and where any active
/// lane needs the interpreter, the instruction is its step, before anything is written;
/// otherwise the scratch row is written to `vdst` in the active lanes.
fn checked_rows(
    e: &mut Emitter<'_>,
    index: u32,
    decoded: &Decoded,
    vdst: i32,
    mut chunk: impl FnMut(&mut Emitter<'_>, i32),
) {
    let resume = e.next_label(index, decoded);
    let slow = e.slow_path(index, resume);
    dynasm!(e.ops ; .arch x64 ; vpxor xmm11, xmm11, xmm11);
    for k in 0..4 {
        chunk(e, k);
        let scratch = SCRATCH + 32 * k;
        dynasm!(e.ops
            ; .arch x64
            ; vmovaps [r14 + scratch], ymm7
            ; vpandn ymm0, Ry(12 + k as u8), ymm0
            ; vpor ymm11, ymm11, ymm0
        );
    }
    dynasm!(e.ops
        ; .arch x64
        ; vptest ymm11, ymm11
        ; jnz =>slow
    );
    for k in 0..4 {
        let scratch = SCRATCH + 32 * k;
        dynasm!(e.ops
            ; .arch x64
            ; vmovaps ymm0, [r14 + scratch]
            ; vblendvps ymm0, ymm0, [r13 + vdst + 32 * k], Ry(12 + k as u8)
            ; vmovdqu [r13 + vdst + 32 * k], ymm0
        );
    }
}

/// Chunk `k` of `v_dot2acc_f32_f16` as the interpreter computes it (`valu::dot2_f16`): the f16
/// halves to f64 (exact), the two products (exact) summed in f64, the accumulator (`vdst`) added
/// in f64, rounded once more to f32. A NaN result (whose payload the interpreter picks its own
/// way) is the interpreter's.
fn dot2(e: &mut Emitter<'_>, vdst: i32, a: Src, b: Src, k: i32) {
    // (a0 a1 a2 a3 in f64) from halves (lo, hi) of four lanes: [l0, l2, l1, l3] after `vhaddpd`,
    // put back in lane order by `vpermpd`.
    const LANE_ORDER: i8 = 0b11_01_10_00_u8 as i8;
    load(e, 0, a, k);
    load(e, 1, b, k);
    dynasm!(e.ops
        ; .arch x64
        ; vmovdqu ymm2, [r13 + vdst + 32 * k]
        // Halves as f32: lanes 0–3 in ymm3 (a) and ymm4 (b), lanes 4–7 in ymm5 and ymm6.
        ; vcvtph2ps ymm3, xmm0
        ; vcvtph2ps ymm4, xmm1
        ; vextracti128 xmm0, ymm0, 1
        ; vextracti128 xmm1, ymm1, 1
        ; vcvtph2ps ymm5, xmm0
        ; vcvtph2ps ymm6, xmm1
        // Lanes 0–3: products of lanes 0–1 and 2–3, each lane's two summed, plus c.
        ; vcvtps2pd ymm0, xmm3
        ; vcvtps2pd ymm1, xmm4
        ; vmulpd ymm7, ymm0, ymm1
        ; vextractf128 xmm3, ymm3, 1
        ; vextractf128 xmm4, ymm4, 1
        ; vcvtps2pd ymm0, xmm3
        ; vcvtps2pd ymm1, xmm4
        ; vmulpd ymm0, ymm0, ymm1
        ; vhaddpd ymm7, ymm7, ymm0
        ; vpermpd ymm7, ymm7, LANE_ORDER
        ; vcvtps2pd ymm0, xmm2
        ; vaddpd ymm7, ymm7, ymm0
        ; vcvtpd2ps xmm7, ymm7
        // Lanes 4–7 likewise.
        ; vcvtps2pd ymm0, xmm5
        ; vcvtps2pd ymm1, xmm6
        ; vmulpd ymm3, ymm0, ymm1
        ; vextractf128 xmm5, ymm5, 1
        ; vextractf128 xmm6, ymm6, 1
        ; vcvtps2pd ymm0, xmm5
        ; vcvtps2pd ymm1, xmm6
        ; vmulpd ymm0, ymm0, ymm1
        ; vhaddpd ymm3, ymm3, ymm0
        ; vpermpd ymm3, ymm3, LANE_ORDER
        ; vextractf128 xmm2, ymm2, 1
        ; vcvtps2pd ymm0, xmm2
        ; vaddpd ymm3, ymm3, ymm0
        ; vcvtpd2ps xmm3, ymm3
        ; vinsertf128 ymm7, ymm7, xmm3, 1
    );
    e.vcmpps(0, 7, 7, UNORDERED);
}

/// Chunk `k` of `v_max_f32` (`max`) or `v_min_f32` as `valu::min_max32` decides: the greater
/// (or lesser) of two numbers, a tie S0 for max and S1 for min (equal numbers have equal bits),
/// and of two zeros the positive for max (the signs ANDed) and the negative for min (ORed). A
/// NaN operand is the interpreter's (IEEE mode's quieting, the other operand otherwise).
fn min_max(e: &mut Emitter<'_>, max: bool, a: Src, b: Src, k: i32) {
    load(e, 1, a, k);
    load(e, 2, b, k);
    if max {
        dynasm!(e.ops ; .arch x64 ; vmaxps ymm7, ymm1, ymm2 ; vandps ymm3, ymm1, ymm2);
    } else {
        dynasm!(e.ops ; .arch x64 ; vminps ymm7, ymm1, ymm2 ; vorps ymm3, ymm1, ymm2);
    }
    // Both zero (either sign): the signs' combination instead.
    dynasm!(e.ops ; .arch x64 ; vxorps xmm4, xmm4, xmm4);
    e.vcmpps(5, 1, 4, EQUAL);
    e.vcmpps(6, 2, 4, EQUAL);
    e.vcmpps(0, 1, 2, UNORDERED);
    dynasm!(e.ops
        ; .arch x64
        ; vandps ymm5, ymm5, ymm6
        ; vblendvps ymm7, ymm7, ymm3, ymm5
    );
}

/// Chunk `k` of `v_rndne_f32` (to the nearest integer, ties to even: `vroundps` mode 0, its
/// precision exception masked) or, `convert`, `v_cvt_i32_f32` (toward zero, `vcvttps2dq`). A
/// NaN source is the interpreter's (its payload), and so is a conversion `vcvttps2dq` answers
/// with 0x8000_0000: out of range or NaN, which the interpreter saturates (and −2^31 itself).
fn round(e: &mut Emitter<'_>, convert: bool, a: Src, k: i32) {
    load(e, 1, a, k);
    if convert {
        dynasm!(e.ops
            ; .arch x64
            ; vcvttps2dq ymm7, ymm1
            ; vpcmpeqd ymm0, ymm0, ymm0
            ; vpslld ymm0, ymm0, 31
            ; vpcmpeqd ymm0, ymm0, ymm7
        );
    } else {
        dynasm!(e.ops ; .arch x64 ; vroundps ymm7, ymm1, 8);
        e.vcmpps(0, 1, 1, UNORDERED);
    }
}

/// `vcmpps` predicates.
const EQUAL: u8 = 0x00;
const UNORDERED: u8 = 0x03;

/// Takes the interpreter's step unless MODE is IEEE round-to-nearest with denormals kept.
fn guard_mode(e: &mut Emitter<'_>, index: u32, decoded: &Decoded) {
    let resume = e.next_label(index, decoded);
    let slow = e.slow_path(index, resume);
    dynasm!(e.ops
        ; .arch x64
        ; cmp BYTE [r12 + MODE], MODE_IEEE_FLOAT as i8
        ; jne =>slow
    );
}

/// Emits `op`'s computation and its write.
fn emit(e: &mut Emitter<'_>, op: &VOp, shape: Shape, srcs: &[Src]) {
    use Opcode::*;
    if let Shape::Compare(condition, ty) = shape {
        compare(e, op, condition, ty, srcs[0], srcs[1]);
        return;
    }
    if let Shape::Carry { carry_in } = shape {
        add_with_carry(e, op, srcs[0], srcs[1], carry_in.then(|| srcs[2]));
        return;
    }
    if shape == Shape::Shift64 {
        shift_left64(e, op, srcs[0], srcs[1]);
        return;
    }
    if shape == Shape::Mad64 {
        multiply_add64(e, op, srcs[0], srcs[1]);
        return;
    }
    // A constant for the operation's lanes in ymm11.
    let constant = match op.opcode {
        VLshlrevB32 | VLshrrevB32 | VAshrrevI32 | VLshlAddU32 | VAddLshlU32 | VLshlOrB32 | VBfeU32 | VBfeI32 => {
            Some(31)
        }
        VMulU32U24 => Some(0xFF_FFFF),
        _ => None,
    };
    if let Some(value) = constant {
        dynasm!(e.ops
            ; .arch x64
            ; mov eax, value
            ; vmovd xmm11, eax
            ; vpbroadcastd ymm11, xmm11
        );
    }
    // fmaak's and fmamk's constant K, broadcast once for the four chunks.
    let k_constant = matches!(op.opcode, VFmaakF32 | VFmamkF32).then(|| literal(e, op));
    let vdst = op.operands.vdst as i32 * ROW;
    for k in 0..4 {
        let (a, b, c) = (srcs[0], srcs.get(1).copied(), srcs.get(2).copied());
        match op.opcode {
            VMovB32 => load(e, 0, a, k),
            VCvtF32I32 => match a {
                Src::Row(offset) => dynasm!(e.ops ; .arch x64 ; vcvtdq2ps ymm0, [r13 + offset + 32 * k]),
                Src::Reg(reg) => dynasm!(e.ops ; .arch x64 ; vcvtdq2ps ymm0, Ry(reg)),
                Src::Scratch(n) => dynasm!(e.ops ; .arch x64 ; vcvtdq2ps ymm0, [r14 + scratch_row(n) + 32 * k]),
            },
            VAddF32 => binary(e, a, b.unwrap(), k, Ins::Addps),
            VSubF32 => binary(e, a, b.unwrap(), k, Ins::Subps),
            VSubrevF32 => binary(e, b.unwrap(), a, k, Ins::Subps),
            VMulF32 => binary(e, a, b.unwrap(), k, Ins::Mulps),
            VAddNcU32 => binary(e, a, b.unwrap(), k, Ins::Paddd),
            VSubNcU32 => binary(e, a, b.unwrap(), k, Ins::Psubd),
            VSubrevNcU32 => binary(e, b.unwrap(), a, k, Ins::Psubd),
            VAndB32 => binary(e, a, b.unwrap(), k, Ins::Pand),
            VOrB32 => binary(e, a, b.unwrap(), k, Ins::Por),
            VXorB32 => binary(e, a, b.unwrap(), k, Ins::Pxor),
            VMulLoU32 => binary(e, a, b.unwrap(), k, Ins::Pmulld),
            VMaxU32 => binary(e, a, b.unwrap(), k, Ins::Pmaxud),
            VMinU32 => binary(e, a, b.unwrap(), k, Ins::Pminud),
            VMaxI32 => binary(e, a, b.unwrap(), k, Ins::Pmaxsd),
            VMinI32 => binary(e, a, b.unwrap(), k, Ins::Pminsd),
            VMulU32U24 => {
                load(e, 0, a, k);
                load(e, 1, b.unwrap(), k);
                dynasm!(e.ops
                    ; .arch x64
                    ; vpand ymm0, ymm0, ymm11
                    ; vpand ymm1, ymm1, ymm11
                    ; vpmulld ymm0, ymm0, ymm1
                );
            }
            // Shifts: the count is the first source's low 5 bits.
            VLshlrevB32 | VLshrrevB32 | VAshrrevI32 => {
                load(e, 1, a, k);
                load(e, 0, b.unwrap(), k);
                dynasm!(e.ops ; .arch x64 ; vpand ymm1, ymm1, ymm11);
                match op.opcode {
                    VLshlrevB32 => dynasm!(e.ops ; .arch x64 ; vpsllvd ymm0, ymm0, ymm1),
                    VLshrrevB32 => dynasm!(e.ops ; .arch x64 ; vpsrlvd ymm0, ymm0, ymm1),
                    _ => dynasm!(e.ops ; .arch x64 ; vpsravd ymm0, ymm0, ymm1),
                }
            }
            // a × b + c as `vfmadd213ps ymm0 = b, ymm1 = a, c`: x86 returns the first NaN of
            // ymm1, ymm0 and c, quieted, so a NaN result is the first NaN of a, b, c, as the
            // interpreter defines it (`valu::ordered_nans`).
            VFmacF32 => {
                load(e, 1, a, k);
                load(e, 0, b.unwrap(), k);
                dynasm!(e.ops ; .arch x64 ; vfmadd213ps ymm0, ymm1, [r13 + vdst + 32 * k]);
            }
            VFmaF32 | VFmaakF32 => {
                let c = if op.opcode == VFmaakF32 { k_constant.unwrap() } else { c.unwrap() };
                load(e, 1, a, k);
                load(e, 0, b.unwrap(), k);
                vex!(e, vfmadd213ps, 0, 1, c, k);
            }
            VFmamkF32 => {
                let k_reg = k_constant.unwrap();
                load(e, 1, a, k);
                load(e, 0, k_reg, k);
                vex!(e, vfmadd213ps, 0, 1, b.unwrap(), k);
            }
            VAdd3U32 | VOr3B32 | VAndOrB32 => {
                let (first, second) = match op.opcode {
                    VAdd3U32 => (Ins::Paddd, Ins::Paddd),
                    VOr3B32 => (Ins::Por, Ins::Por),
                    _ => (Ins::Pand, Ins::Por),
                };
                binary(e, a, b.unwrap(), k, first);
                apply(e, second, c.unwrap(), k);
            }
            // (a << (b & 31)) + c, or | c.
            VLshlAddU32 | VLshlOrB32 => {
                load(e, 0, a, k);
                load(e, 1, b.unwrap(), k);
                dynasm!(e.ops
                    ; .arch x64
                    ; vpand ymm1, ymm1, ymm11
                    ; vpsllvd ymm0, ymm0, ymm1
                );
                apply(e, if op.opcode == VLshlAddU32 { Ins::Paddd } else { Ins::Por }, c.unwrap(), k);
            }
            // (a + b) << (c & 31).
            VAddLshlU32 => {
                binary(e, a, b.unwrap(), k, Ins::Paddd);
                load(e, 1, c.unwrap(), k);
                dynasm!(e.ops
                    ; .arch x64
                    ; vpand ymm1, ymm1, ymm11
                    ; vpsllvd ymm0, ymm0, ymm1
                );
            }
            // Bits [offset, offset + size) of a, offset b & 31 and size c & 31 (0: the result is
            // 0), zero- or sign-extended: a >> offset, then the field's mask (all ones >> (32 −
            // size)), or shifted up and back down arithmetically by 32 − size. A count of 32
            // gives 0 in both, as a size of 0 must.
            VBfeU32 | VBfeI32 => {
                load(e, 0, a, k);
                load(e, 1, b.unwrap(), k);
                load(e, 2, c.unwrap(), k);
                dynasm!(e.ops
                    ; .arch x64
                    ; vpand ymm1, ymm1, ymm11
                    ; vpsrlvd ymm0, ymm0, ymm1
                    ; vpand ymm2, ymm2, ymm11
                    ; vpcmpeqd ymm1, ymm1, ymm1
                    ; vpsrld ymm3, ymm1, 31
                    ; vpslld ymm3, ymm3, 5
                    ; vpsubd ymm2, ymm3, ymm2
                );
                if op.opcode == VBfeU32 {
                    dynasm!(e.ops
                        ; .arch x64
                        ; vpsrlvd ymm1, ymm1, ymm2
                        ; vpand ymm0, ymm0, ymm1
                    );
                } else {
                    dynasm!(e.ops
                        ; .arch x64
                        ; vpsllvd ymm0, ymm0, ymm2
                        ; vpsravd ymm0, ymm0, ymm2
                    );
                }
            }
            // The lane's select bit set: b; clear: a.
            VCndmaskB32 => {
                let bits = LANE_BITS + 32 * k;
                let select = c.unwrap();
                let Src::Reg(mask) = select else { unreachable!("a mask source is broadcast") };
                dynasm!(e.ops
                    ; .arch x64
                    ; vpand ymm2, Ry(mask), [r14 + bits]
                    ; vpcmpeqd ymm2, ymm2, [r14 + bits]
                );
                load(e, 1, a, k);
                match b.unwrap() {
                    Src::Row(offset) => {
                        dynasm!(e.ops ; .arch x64 ; vblendvps ymm0, ymm1, [r13 + offset + 32 * k], ymm2)
                    }
                    Src::Reg(reg) => dynasm!(e.ops ; .arch x64 ; vblendvps ymm0, ymm1, Ry(reg), ymm2),
                    Src::Scratch(n) => {
                        let at = scratch_row(n) + 32 * k;
                        dynasm!(e.ops ; .arch x64 ; vblendvps ymm0, ymm1, [r14 + at], ymm2)
                    }
                }
            }
            _ => unreachable!("shape() lists the translated operations"),
        }
        // Inactive lanes keep the register's old value.
        dynasm!(e.ops
            ; .arch x64
            ; vblendvps ymm0, ymm0, [r13 + vdst + 32 * k], Ry(12 + k as u8)
            ; vmovdqu [r13 + vdst + 32 * k], ymm0
        );
    }
}

/// The literal of fmaak/fmamk, broadcast into ymm10.
fn literal(e: &mut Emitter<'_>, op: &VOp) -> Src {
    let value = op.operands.literal as i32;
    dynasm!(e.ops
        ; .arch x64
        ; mov eax, value
        ; vmovd xmm10, eax
        ; vpbroadcastd ymm10, xmm10
    );
    Src::Reg(10)
}

/// Two-source operations by their AVX instruction.
#[derive(Clone, Copy)]
enum Ins {
    Addps,
    Subps,
    Mulps,
    Paddd,
    Psubd,
    Pand,
    Por,
    Pxor,
    Pmulld,
    Pmaxud,
    Pminud,
    Pmaxsd,
    Pminsd,
}

/// ymm0 = chunk `k` of `a` (op) `b`.
fn binary(e: &mut Emitter<'_>, a: Src, b: Src, k: i32, ins: Ins) {
    load(e, 0, a, k);
    apply(e, ins, b, k);
}

/// ymm0 = ymm0 (op) chunk `k` of `b`.
fn apply(e: &mut Emitter<'_>, ins: Ins, b: Src, k: i32) {
    match ins {
        Ins::Addps => vex!(e, vaddps, 0, 0, b, k),
        Ins::Subps => vex!(e, vsubps, 0, 0, b, k),
        Ins::Mulps => vex!(e, vmulps, 0, 0, b, k),
        Ins::Paddd => vex!(e, vpaddd, 0, 0, b, k),
        Ins::Psubd => vex!(e, vpsubd, 0, 0, b, k),
        Ins::Pand => vex!(e, vpand, 0, 0, b, k),
        Ins::Por => vex!(e, vpor, 0, 0, b, k),
        Ins::Pxor => vex!(e, vpxor, 0, 0, b, k),
        Ins::Pmulld => vex!(e, vpmulld, 0, 0, b, k),
        Ins::Pmaxud => vex!(e, vpmaxud, 0, 0, b, k),
        Ins::Pminud => vex!(e, vpminud, 0, 0, b, k),
        Ins::Pmaxsd => vex!(e, vpmaxsd, 0, 0, b, k),
        Ins::Pminsd => vex!(e, vpminsd, 0, 0, b, k),
    }
}

/// A compare: the lanes where it holds, in EXEC, to the SGPR (or VCC or EXEC) it names.
fn compare(e: &mut Emitter<'_>, op: &VOp, condition: Condition, ty: CompareType, a: Src, b: Src) {
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
        e.movmsk(1, 2); // ecx: equal
        e.movmsk(2, 3); // edx: greater
        dynasm!(e.ops
            ; .arch x64
            ; shl ecx, (8 * k) as i8
            ; shl edx, (8 * k) as i8
            ; or r8d, ecx
            ; or r9d, edx
        );
    }
    if ty != CompareType::F32 {
        holds(e, condition);
    }
    write_lanes(e, target);
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

/// Writes a compare's lanes (`r8d`) to `target`, 0 in inactive lanes.
fn write_lanes(e: &mut Emitter<'_>, target: u32) {
    dynasm!(e.ops ; .arch x64 ; and r8d, [r12 + sgpr(EXEC)]);
    if target != NULL && target < 128 {
        dynasm!(e.ops ; .arch x64 ; mov [r12 + sgpr(target)], r8d);
        if target == EXEC {
            e.masks();
        }
    }
}

/// A compare of 64-bit integers, as `valu`'s on `row64` sources, in 32-bit halves: equal where
/// both halves are, greater where the high half is (signed for i64) or the high halves are
/// equal and the low half is (unsigned).
fn compare64(e: &mut Emitter<'_>, op: &VOp, condition: Condition, signed: bool) {
    let Form::Compare { into_exec, .. } = op.form else { unreachable!("a compare's form") };
    let target = if into_exec { EXEC } else { op.operands.sdst as u32 };
    // Source `index`'s low and high halves: rows, or broadcasts into `low` and `low + 1`.
    let halves = |e: &mut Emitter<'_>, index: usize, low: u8| -> (Src, Src) {
        let high = low + 1;
        let constant = |e: &mut Emitter<'_>, reg: u8, value: u32| {
            dynasm!(e.ops
                ; .arch x64
                ; mov eax, value as i32
                ; vmovd Rx(reg), eax
                ; vpbroadcastd Ry(reg), Rx(reg)
            );
        };
        match op.operands.src[index] {
            Source::Vgpr(v) => return (Src::Row(v as i32 * ROW), Src::Row((v as i32 + 1) * ROW)),
            Source::Sgpr(s) => dynasm!(e.ops
                ; .arch x64
                ; vpbroadcastd Ry(low), [r12 + sgpr(s as u32)]
                ; vpbroadcastd Ry(high), [r12 + sgpr(s as u32 + 1)]
            ),
            Source::Scc => {
                dynasm!(e.ops
                    ; .arch x64
                    ; movzx eax, BYTE [r12 + SCC]
                    ; vmovd Rx(low), eax
                    ; vpbroadcastd Ry(low), Rx(low)
                );
                constant(e, high, 0);
            }
            Source::Constant(value) => {
                constant(e, low, value as u32);
                constant(e, high, (value >> 32) as u32);
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
        e.movmsk(1, 5); // ecx: equal
        e.movmsk(2, 0); // edx: greater
        dynasm!(e.ops
            ; .arch x64
            ; shl ecx, (8 * k) as i8
            ; shl edx, (8 * k) as i8
            ; or r8d, ecx
            ; or r9d, edx
        );
    }
    holds(e, condition);
    write_lanes(e, target);
}

/// `v_add_co_u32` and `v_add_co_ci_u32`: vdst = a + b (+ the lane's carry-in bit), and the
/// lanes whose sum carried, in EXEC, to sdst (as `valu::plain`: the row first, then the mask).
fn add_with_carry(e: &mut Emitter<'_>, op: &VOp, a: Src, b: Src, carry_in: Option<Src>) {
    let vdst = op.operands.vdst as i32 * ROW;
    let sdst = op.operands.sdst as u32;
    dynasm!(e.ops ; .arch x64 ; xor r8d, r8d);
    for k in 0..4 {
        load(e, 0, a, k);
        load(e, 1, b, k);
        // ymm2 = a + b; ymm3: no carry (sum >= a, unsigned).
        dynasm!(e.ops
            ; .arch x64
            ; vpaddd ymm2, ymm0, ymm1
            ; vpmaxud ymm3, ymm2, ymm0
            ; vpcmpeqd ymm3, ymm3, ymm2
        );
        if let Some(Src::Reg(mask)) = carry_in {
            // ymm4: all ones where the lane's carry-in bit is set; the sum less that (+1), and
            // no carry from it where the new sum is not below the old.
            let bits = LANE_BITS + 32 * k;
            dynasm!(e.ops
                ; .arch x64
                ; vpand ymm4, Ry(mask), [r14 + bits]
                ; vpcmpeqd ymm4, ymm4, [r14 + bits]
                ; vpsubd ymm5, ymm2, ymm4
                ; vpmaxud ymm6, ymm5, ymm2
                ; vpcmpeqd ymm6, ymm6, ymm5
                ; vpand ymm3, ymm3, ymm6
                ; vmovdqa ymm2, ymm5
            );
        }
        e.movmsk(1, 3); // ecx: lanes without a carry
        dynasm!(e.ops
            ; .arch x64
            ; not ecx
            ; and ecx, 0xFF
            ; shl ecx, (8 * k) as i8
            ; or r8d, ecx
            ; vblendvps ymm2, ymm2, [r13 + vdst + 32 * k], Ry(12 + k as u8)
            ; vmovdqu [r13 + vdst + 32 * k], ymm2
        );
    }
    dynasm!(e.ops ; .arch x64 ; and r8d, [r12 + sgpr(EXEC)]);
    if sdst != NULL && sdst < 128 {
        dynasm!(e.ops ; .arch x64 ; mov [r12 + sgpr(sdst)], r8d);
        if sdst == EXEC {
            e.masks();
        }
    }
}

/// `v_lshlrev_b64`: (hi:lo) << n, n = the shift's low 6 bits, in 32-bit lanes: lo' = lo << n,
/// hi' = hi << n | lo >> (32 − n) | lo << (n − 32). AVX2's variable shifts give 0 for a count
/// of 32 or more (a negative one included), which makes each term vanish where it should: for
/// n = 32 the last two are both lo, which the OR keeps.
fn shift_left64(e: &mut Emitter<'_>, op: &VOp, shift: Src, value: Src) {
    let Src::Row(low) = value else { unreachable!("the shifted pair is VGPRs (`translatable`)") };
    let high = low + ROW;
    let vdst = op.operands.vdst as i32 * ROW;
    dynasm!(e.ops
        ; .arch x64
        ; mov eax, 63
        ; vmovd xmm11, eax
        ; vpbroadcastd ymm11, xmm11
        ; mov eax, 32
        ; vmovd xmm10, eax
        ; vpbroadcastd ymm10, xmm10
    );
    for k in 0..4 {
        load(e, 1, shift, k);
        dynasm!(e.ops
            ; .arch x64
            ; vpand ymm1, ymm1, ymm11
            ; vmovdqu ymm2, [r13 + low + 32 * k]
            ; vmovdqu ymm3, [r13 + high + 32 * k]
            ; vpsllvd ymm4, ymm2, ymm1
            ; vpsllvd ymm5, ymm3, ymm1
            ; vpsubd ymm6, ymm10, ymm1
            ; vpsrlvd ymm7, ymm2, ymm6
            ; vpor ymm5, ymm5, ymm7
            ; vpsubd ymm6, ymm1, ymm10
            ; vpsllvd ymm7, ymm2, ymm6
            ; vpor ymm5, ymm5, ymm7
            ; vblendvps ymm4, ymm4, [r13 + vdst + 32 * k], Ry(12 + k as u8)
            ; vmovdqu [r13 + vdst + 32 * k], ymm4
            ; vblendvps ymm5, ymm5, [r13 + vdst + ROW + 32 * k], Ry(12 + k as u8)
            ; vmovdqu [r13 + vdst + ROW + 32 * k], ymm5
        );
    }
}

/// `v_mad_u64_u32` (no carry-out): per lane a × b + the VGPR pair c, 64-bit, to the pair vdst.
/// Eight lanes are two sets of four 64-bit products (`vpmuludq` on the even lanes, then on the
/// odd ones moved down), each added to c's lanes gathered into 64 bits, then split back into
/// the low and high rows. Odd dwords move down with `vpsrldq` by 4 bytes, whose other dwords
/// nothing reads (dynasm-rs 3.2 encodes `vpsrlq ymm, ymm, imm` as its 128-bit form).
fn multiply_add64(e: &mut Emitter<'_>, op: &VOp, a: Src, b: Src) {
    const ODD_DWORDS: u8 = 0xAA;
    let Source::Vgpr(c) = op.operands.src[2] else { unreachable!("the addend is a VGPR pair (`translatable`)") };
    let (c_low, c_high) = (c as i32 * ROW, (c as i32 + 1) * ROW);
    let vdst = op.operands.vdst as i32 * ROW;
    for k in 0..4 {
        load(e, 0, a, k);
        load(e, 1, b, k);
        // Products: ymm2 the even lanes', ymm3 the odd lanes'. c's even lanes (low | high << 32)
        // and odd lanes (low >> 32 | high's upper half), added.
        dynasm!(e.ops
            ; .arch x64
            ; vpmuludq ymm2, ymm0, ymm1
            ; vpsrldq ymm0, ymm0, 4
            ; vpsrldq ymm1, ymm1, 4
            ; vpmuludq ymm3, ymm0, ymm1
            ; vmovdqu ymm4, [r13 + c_low + 32 * k]
            ; vmovdqu ymm5, [r13 + c_high + 32 * k]
            ; vpsllq ymm6, ymm5, 32
            ; vpsrldq ymm7, ymm4, 4
        );
        e.vpblendd(6, 4, 6, ODD_DWORDS);
        e.vpblendd(7, 7, 5, ODD_DWORDS);
        // Low row: even lanes' low halves, odd lanes' moved up; the high row likewise.
        dynasm!(e.ops
            ; .arch x64
            ; vpaddq ymm2, ymm2, ymm6
            ; vpaddq ymm3, ymm3, ymm7
            ; vpsllq ymm4, ymm3, 32
            ; vpsrldq ymm5, ymm2, 4
        );
        e.vpblendd(4, 2, 4, ODD_DWORDS);
        e.vpblendd(5, 5, 3, ODD_DWORDS);
        dynasm!(e.ops
            ; .arch x64
            ; vblendvps ymm4, ymm4, [r13 + vdst + 32 * k], Ry(12 + k as u8)
            ; vblendvps ymm5, ymm5, [r13 + vdst + ROW + 32 * k], Ry(12 + k as u8)
            ; vmovdqu [r13 + vdst + 32 * k], ymm4
            ; vmovdqu [r13 + vdst + ROW + 32 * k], ymm5
        );
    }
}

/// AVX's `vcmpps` predicate for a compare's condition (ordered conditions false on NaN, the
/// negated ones true), as `valu::holds` decides from the order.
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
