//! Vector ALU translations, as whole rows in four AVX2 vectors: the interpreter's 32-bit
//! operations with their DPP and float `neg`/`abs` (`lanes.rs` prepares the sources), and VOPD
//! pairs of the plain ones.
//!
//! Translated here: `v_mov_b32`; f32 add, sub, subrev, mul, fma, fmac, fmaak, fmamk; integer
//! add, sub, subrev, and, or, xor, shifts, mul_lo, mul_u32_u24, min/max (signed and unsigned),
//! add3, lshl_add, add_lshl, lshl_or, and_or, or3, `v_bfe_u32/i32`; `v_add_co_u32` and
//! `v_add_co_ci_u32`, `v_sub(rev)_co_u32` and `v_sub(rev)_co_ci_u32` (carries and borrows to an
//! SGPR or VCC); `v_lshlrev_b64`, `v_lshrrev_b64`; `v_mad_u64_u32` (its carry-out
//! too); `v_cndmask_b32`; `v_cvt_f32_i32`. Elsewhere: compares (`compare.rs`),
//! `v_dot2acc_f32_f16`, `v_max/min_f32`, `v_rndne_f32`, `v_cvt_i32_f32`, `v_rcp_f32`,
//! `v_ldexp_f32`, `v_cvt_f16_f32` and the division helpers `v_div_scale/fmas/fixup_f32`
//! (`checked.rs`); square root, reciprocal square root, exp, log, sin, cos,
//! fract and frexp's mantissa through the interpreter's own lane function (`map_row`),
//! `v_permlane16/x16`, `v_readlane_b32`, `v_readfirstlane_b32` (`lanes.rs`), WMMA (`matrix.rs`).
//!
//! Float operations run natively only while MODE is IEEE round-to-nearest with denormals kept
//! (the host's own arithmetic, as the interpreter's plain path requires): the code tests MODE
//! and takes the interpreter's step otherwise.

use dynasmrt::{DynasmApi, DynasmLabelApi, dynasm};

use super::checked::{Chunk, checked_rows, division, dot2, dot2_onto, ldexp, min_max, reciprocal, round, to_half};
use super::compare::{compare, compare64, write_lanes};
use super::emit::{Emitter, LANE_BITS, MODE, ROW, sgpr};
use super::frame::Part;
use super::lanes::{permlane, prepare, read_lane};
use super::sources::{Src, load, scratch_row};
use crate::gfx11::Opcode;
use crate::interp::decoded_kernel::{Decoded, Plan};
use crate::interp::operands::Source;
use crate::interp::valu::{CompareType, Condition, Form, VOp, lane_function_f32};
use crate::interp::wave::{Kind, MODE_IEEE_FLOAT, NULL, VCC};

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
    /// SGPR (or VCC); `subtract`: `v_sub_co_u32` and `v_sub_co_ci_u32`, the difference and the
    /// borrows (`reverse`: the `subrev` forms, b − a).
    Carry {
        carry_in: bool,
        subtract: bool,
        reverse: bool,
    },
    /// `v_lshlrev_b64` and `v_lshrrev_b64` (`right`): a VGPR pair shifted by the first
    /// source's low 6 bits, to a pair.
    Shift64 {
        right: bool,
    },
    /// `v_mad_u64_u32`: a × b (32-bit, unsigned) plus a VGPR pair, to a pair, and the carry out of
    /// the 64-bit sum to a mask where `sdst` is not null.
    Mad64,
    /// `v_dot2acc_f32_f16`: vdst += a.lo × b.lo + a.hi × b.hi, f16 halves, f32 accumulator.
    Dot2,
    /// `v_max_f32`, `v_min_f32`.
    MinMax,
    /// `v_rndne_f32` and `v_cvt_i32_f32`: one source, NaN and out-of-range lanes the step's.
    Round,
    /// `v_rcp_f32` (and `v_rcp_iflag_f32`): 1 / x, correctly rounded.
    Reciprocal,
    /// `v_ldexp_f32`: x · 2^n, n the second source as an i32, rounded once.
    Ldexp,
    /// `v_div_scale_f32` (with its VCC-like mask to `sdst`), `v_div_fmas_f32` (reading VCC) and
    /// `v_div_fixup_f32`: ordinary lanes in vectors, anything else the interpreter's step
    /// (`checked::division`).
    Division,
    /// `v_cvt_f16_f32`: to f16, nearest even, into the destination's low half (its high half
    /// kept, as the interpreter's 16-bit write keeps it).
    ToHalf,
    /// A one-source f32 operation whose lanes the interpreter's own function computes
    /// (`valu::lane_function_f32`: square root, reciprocal square root, exp, log, sin, cos,
    /// fract, frexp's mantissa), called over the row.
    LaneFunction,
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
        VAddCoU32 => Shape::Carry { carry_in: false, subtract: false, reverse: false },
        VAddCoCiU32 => Shape::Carry { carry_in: true, subtract: false, reverse: false },
        VSubCoU32 => Shape::Carry { carry_in: false, subtract: true, reverse: false },
        VSubCoCiU32 => Shape::Carry { carry_in: true, subtract: true, reverse: false },
        VSubrevCoU32 => Shape::Carry { carry_in: false, subtract: true, reverse: true },
        VSubrevCoCiU32 => Shape::Carry { carry_in: true, subtract: true, reverse: true },
        VLshlrevB64 => Shape::Shift64 { right: false },
        VLshrrevB64 => Shape::Shift64 { right: true },
        VMadU64U32 => Shape::Mad64,
        VBfeU32 | VBfeI32 => Shape::Ternary,
        VBcntU32B32 | VMbcntLoU32B32 | VMbcntHiU32B32 => Shape::Binary,
        VDot2accF32F16 => Shape::Dot2,
        VMaxF32 | VMinF32 => Shape::MinMax,
        VRndneF32 | VCvtI32F32 => Shape::Round,
        VRcpF32 | VRcpIflagF32 => Shape::Reciprocal,
        VLdexpF32 => Shape::Ldexp,
        VCvtF16F32 => Shape::ToHalf,
        VDivScaleF32 | VDivFmasF32 | VDivFixupF32 => Shape::Division,
        opcode if lane_function_f32(opcode).is_some() => Shape::LaneFunction,
        _ => return None,
    })
}

/// The VGPR `op` writes where that row is all it writes (no SGPR, VCC, EXEC or second row) and
/// its code, translated or the interpreter's step, goes on to the next instruction: the shapes
/// of one result row. `None` for any other operation. `known_rows.rs` follows address rows
/// through a kernel by it.
pub(super) fn row_only_write(op: &VOp) -> Option<u32> {
    let one_row = matches!(
        shape(op)?,
        Shape::Unary
            | Shape::Binary
            | Shape::Ternary
            | Shape::Fmac
            | Shape::Select
            | Shape::Dot2
            | Shape::MinMax
            | Shape::Round
            | Shape::Reciprocal
            | Shape::Ldexp
            | Shape::ToHalf
            | Shape::LaneFunction
    );
    one_row.then_some(op.operands.vdst as u32)
}

/// Whether the operation's arithmetic is the host's float arithmetic (so MODE must be IEEE).
fn float(op: &VOp) -> bool {
    use Opcode::*;
    lane_function_f32(op.opcode).is_some()
        || matches!(op.form, Form::Compare { ty: CompareType::F32, .. })
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
                | VRcpF32
                | VRcpIflagF32
                | VLdexpF32
                | VCvtF16F32
                | VDivScaleF32
                | VDivFmasF32
                | VDivFixupF32
        )
}

/// Sources the shape reads.
fn sources(shape: Shape) -> usize {
    match shape {
        Shape::Unary | Shape::Round | Shape::Reciprocal | Shape::LaneFunction | Shape::ToHalf => 1,
        Shape::Binary
        | Shape::Fmac
        | Shape::Compare(..)
        | Shape::Carry { carry_in: false, .. }
        | Shape::Shift64 { .. }
        | Shape::Mad64
        | Shape::Dot2
        | Shape::MinMax
        | Shape::Ldexp
        | Shape::Compare64(..) => 2,
        Shape::Ternary | Shape::Select | Shape::Carry { carry_in: true, .. } | Shape::Division => 3,
    }
}

/// Whether `op` has a translation in this wave's registers.
fn translatable(e: &Emitter<'_>, op: &VOp) -> Option<Shape> {
    if op.operands.omod | op.operands.op_sel != 0 || op.operands.clamp {
        return None;
    }
    let shape = shape(op)?;
    // 16-bit operands: only `v_cvt_f16_f32`'s destination, its low half.
    if op.half != if shape == Shape::ToHalf { 8 } else { 0 } {
        return None;
    }
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
                | Shape::Reciprocal
                | Shape::LaneFunction
                | Shape::ToHalf
                | Shape::Division
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
                matches!(shape, Shape::Select | Shape::Carry { carry_in: true, .. }) && index == 2
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
    if matches!(shape, Shape::Select | Shape::Carry { carry_in: true, .. }) && !mask_source {
        return None;
    }
    if let Shape::Shift64 { .. } = shape {
        // The shifted pair is VGPRs or plain SGPRs (a 64-bit constant reads differently), and
        // the result a pair too.
        let pair = match op.operands.src[1] {
            Source::Vgpr(v) => (v as u32) + 1 < e.vgprs,
            Source::Sgpr(s) => (s as u32) < VCC + 1,
            _ => false,
        };
        if !pair || op.operands.vdst as u32 + 1 >= e.vgprs {
            return None;
        }
    }
    if shape == Shape::Mad64 {
        // The addend a VGPR pair, the result a pair (the carry-out, where there is one, to a mask).
        let pair = matches!(op.operands.src[2], Source::Vgpr(v) if (v as u32) + 1 < e.vgprs);
        if !pair || op.operands.vdst as u32 + 1 >= e.vgprs {
            return None;
        }
    }
    if !matches!(shape, Shape::Compare(..)) && op.operands.vdst as u32 >= e.vgprs {
        return None;
    }
    Some(shape)
}

/// Whether `inner`, planned as `Plan::BothHalves` around the mask word `register`
/// (`interp/decoded_kernel/both_halves.rs`), runs the same half by half: an integer compare, carry or
/// `v_mad_u64_u32` (whose reads are their sources alone) whose high half reads no source from
/// `register`. A mask source `s[n:n+1]` is read by the high half from `s[n+1]`
/// (`Wave::mask_register`), so a carry-in pair that is also the carry-out pair does not meet the
/// low half's write to `s[n]`; a scalar value (or the high word of a pair) in `register` would.
/// Those are the guard's cases this leaves to the interpreter.
pub(super) fn halves_apart(e: &Emitter<'_>, inner: &Decoded, register: u8) -> bool {
    let Plan::Vector(op) = &inner.plan else { return false };
    let Some(shape) = translatable(e, op) else { return false };
    let integer = match shape {
        Shape::Compare(_, ty) => ty != CompareType::F32,
        Shape::Compare64(..) | Shape::Carry { .. } | Shape::Mad64 => true,
        _ => false,
    };
    let register = u32::from(register);
    integer
        && register <= VCC
        && op.operands.src.iter().take(sources(shape)).all(|source| match *source {
            Source::Sgpr(first) => u32::from(first) != register && u32::from(first) + 1 != register,
            Source::Mask(first) => u32::from(first) + 1 != register,
            _ => true,
        })
}

/// `ins ymm(dst), ymm(a), <chunk k of b>`: one three-operand AVX instruction whose last operand
/// is a row's chunk in memory or a register; a row's chunk goes through `ymm7` with its inactive
/// lanes zeroed where the emitter says so (`Emitter::zero_inactive`).
macro_rules! vex {
    ($e:expr, $ins:ident, $dst:expr, $a:expr, $b:expr, $k:expr) => {
        match $b {
            b @ (Src::Row(_) | Src::Scratch(_)) if $e.zero_inactive => {
                load($e, 7, b, $k);
                dynasm!($e.ops ; .arch x64 ; $ins Ry($dst), Ry($a), ymm7)
            }
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
    if matches!(op.opcode, Opcode::VReadlaneB32 | Opcode::VReadfirstlaneB32) {
        return read_lane(e, op);
    }
    if op.opcode == Opcode::VWmmaF3216x16x16F16 {
        return super::matrix::translate(e, index, decoded, op);
    }
    let Some(shape) = translatable(e, op) else { return false };
    if accumulator_chain(e, index, decoded, op, shape) {
        return true;
    }
    if float(op) {
        guard_mode(e, index, decoded);
    }
    if let Shape::Compare64(condition, signed) = shape {
        compare64(e, op, condition, signed);
        return true;
    }
    let srcs = prepare(e, op, sources(shape));
    compute(e, index, decoded, op, shape, &srcs);
    if op.operands.dpp.is_some() {
        // DPP narrowed the EXEC masks to the lanes it lets write.
        e.masks();
    }
    true
}

/// Emits `op`'s computation and write from its prepared sources: the checked shapes through
/// `checked_rows` (whose slow path is the whole instruction's step, taken before anything is
/// written), the lane functions through `map_row`, the rest through [`emit`]. A float
/// operation's sources are read with their inactive lanes zeroed (`Emitter::zero_inactive`).
fn compute(e: &mut Emitter<'_>, index: u32, decoded: &Decoded, op: &VOp, shape: Shape, srcs: &[Src]) {
    let zero_inactive = e.zero_inactive;
    e.zero_inactive = float_arithmetic(op);
    compute_zeroed(e, index, decoded, op, shape, srcs);
    e.zero_inactive = zero_inactive;
}

/// Whether `op` is float arithmetic (not a compare), whose sources' stale inactive lanes may cost
/// the host's arithmetic a microcode assist each.
fn float_arithmetic(op: &VOp) -> bool {
    float(op) && !matches!(op.form, Form::Compare { .. })
}

/// [`compute`], with `e.zero_inactive` set for `op`.
fn compute_zeroed(e: &mut Emitter<'_>, index: u32, decoded: &Decoded, op: &VOp, shape: Shape, srcs: &[Src]) {
    let vdst = op.operands.vdst as i32 * ROW;
    if let Some(chunk) = checked_chunk(op, shape, srcs) {
        checked_rows(e, index, decoded, vec![(vdst, chunk)]);
        if op.opcode == Opcode::VDivScaleF32 {
            // Nothing scaled: every active lane's flag clear.
            dynasm!(e.ops ; .arch x64 ; xor r8d, r8d);
            write_lanes(e, op.operands.sdst as u32);
        }
        return;
    }
    match shape {
        Shape::LaneFunction => {
            let function = lane_function_f32(op.opcode).expect("`shape` found the function");
            map_row(e, function, srcs[0]);
            e.write_scratch_row(0, vdst);
        }
        // The plain shapes twice: stored whole where EXEC holds every lane (the common case,
        // and a blend per eight lanes less), blended otherwise, out of line. Not with DPP,
        // which narrows the lanes that write.
        Shape::Unary | Shape::Binary | Shape::Ternary | Shape::Fmac | Shape::Select | Shape::Carry { .. }
            if op.operands.dpp.is_none() =>
        {
            let done = e.ops.new_dynamic_label();
            let (op, blended) = (*op, srcs.to_vec());
            let masked = e.out_of_line(move |e| {
                emit(e, &op, shape, &blended);
                dynasm!(e.ops ; .arch x64 ; jmp =>done);
            });
            let zero_inactive = e.zero_inactive;
            e.unless_every_lane(masked);
            (e.every_lane, e.zero_inactive) = (true, false);
            emit(e, &op, shape, srcs);
            (e.every_lane, e.zero_inactive) = (false, zero_inactive);
            dynasm!(e.ops ; .arch x64 ; =>done);
        }
        _ => emit(e, op, shape, srcs),
    }
}

/// The chunk of a checked shape (`checked.rs`), or `None` for the others.
fn checked_chunk<'a>(op: &VOp, shape: Shape, srcs: &'a [Src]) -> Option<Chunk<'a>> {
    let vdst = op.operands.vdst as i32 * ROW;
    let (max, convert) = (op.opcode == Opcode::VMaxF32, op.opcode == Opcode::VCvtI32F32);
    Some(match shape {
        Shape::Dot2 => Box::new(move |e, k| dot2(e, vdst, srcs[0], srcs[1], k)),
        Shape::MinMax => Box::new(move |e, k| min_max(e, max, srcs[0], srcs[1], k)),
        Shape::Round => Box::new(move |e, k| round(e, convert, srcs[0], k)),
        Shape::Reciprocal => Box::new(move |e, k| reciprocal(e, srcs[0], k)),
        Shape::Ldexp => Box::new(move |e, k| ldexp(e, srcs[0], srcs[1], k)),
        Shape::ToHalf => Box::new(move |e, k| to_half(e, vdst, srcs[0], k)),
        Shape::Division => {
            let which = match op.opcode {
                Opcode::VDivScaleF32 => 0,
                Opcode::VDivFmasF32 => 1,
                _ => 2,
            };
            Box::new(move |e, k| division(e, which, srcs, k))
        }
        _ => return None,
    })
}

/// A VOPD pair: both halves read their sources before either writes (RDNA3 ISA guide, "Dual
/// Issue VALU"). Translated when both halves are and they can be emitted one after the other:
/// the second reads nothing the first writes.
pub(super) fn translate_dual(e: &mut Emitter<'_>, index: u32, decoded: &Decoded, x: &VOp, y: &VOp) -> bool {
    let (Some(x_shape), Some(y_shape)) = (translatable(e, x), translatable(e, y)) else { return false };
    // Shapes with writes of their own (masks, pairs, an accumulator) go as one operation.
    let alone = |shape: Shape| {
        matches!(
            shape,
            Shape::Compare(..)
                | Shape::Compare64(..)
                | Shape::Carry { .. }
                | Shape::Shift64 { .. }
                | Shape::Mad64
                | Shape::Dot2
                | Shape::Division
        )
    };
    if alone(x_shape) || alone(y_shape) {
        return false;
    }
    // Shapes checked chunk by chunk (`checked_chunk`, asked without sources: its chunk is not
    // run), and those that may take the instruction's step or call out: the latter only as the
    // half emitted first, so that the step finds nothing written.
    let by_chunk = |op: &VOp, shape: Shape| checked_chunk(op, shape, &[]).is_some();
    let checked = |op: &VOp, shape: Shape| by_chunk(op, shape) || shape == Shape::LaneFunction;
    // Both halves checked chunk by chunk (`v_dual_max_f32` twice, say): both computed into
    // scratch rows and tested before either is written. Their sources are VGPR rows: a
    // broadcast goes to a register by source index (`sources::place`), where the other half's
    // would replace it.
    let chunked = |op: &VOp, shape: Shape| {
        by_chunk(op, shape)
            && op.operands.src.iter().take(sources(shape)).all(|source| matches!(source, Source::Vgpr(_)))
    };
    if chunked(x, x_shape) && chunked(y, y_shape) {
        if float(x) || float(y) {
            guard_mode(e, index, decoded);
        }
        let (x_srcs, y_srcs) = (prepare(e, x, sources(x_shape)), prepare(e, y, sources(y_shape)));
        let halves = [(x, x_shape, &x_srcs), (y, y_shape, &y_srcs)].map(|(op, shape, srcs)| {
            (op.operands.vdst as i32 * ROW, checked_chunk(op, shape, srcs).expect("a checked shape"))
        });
        let zero_inactive = e.zero_inactive;
        e.zero_inactive = float_arithmetic(x) || float_arithmetic(y);
        checked_rows(e, index, decoded, halves.into());
        e.zero_inactive = zero_inactive;
        return true;
    }
    if checked(x, x_shape) && checked(y, y_shape) {
        return false;
    }
    let reads = |op: &VOp, shape: Shape, register: u16| {
        op.operands.src.iter().take(sources(shape)).any(|source| *source == Source::Vgpr(register))
            || (shape == Shape::Fmac && op.operands.vdst == register)
    };
    // Emitted one after the other, the second half must not read what the first writes: X then
    // Y where Y reads nothing X writes, else Y then X where X reads nothing Y writes and their
    // destinations differ (where they are the same, Y's result is the one kept).
    let x_first = !reads(y, y_shape, x.operands.vdst) && !checked(y, y_shape);
    let y_first = !reads(x, x_shape, y.operands.vdst) && !checked(x, x_shape) && x.operands.vdst != y.operands.vdst;
    let order = match (x_first, y_first) {
        (true, _) => [(x, x_shape), (y, y_shape)],
        (false, true) => [(y, y_shape), (x, x_shape)],
        (false, false) => return false,
    };
    if float(x) || float(y) {
        guard_mode(e, index, decoded);
    }
    for (op, shape) in order {
        let srcs = prepare(e, op, sources(shape));
        compute(e, index, decoded, op, shape, &srcs);
    }
    true
}

/// Instructions an accumulator chain runs at most as one ([`accumulator_chain`]).
const CHAIN: usize = 8;

/// The VGPR rows (a, b) of `op` where it is an instance of `opcode` onto `vdst` that its own
/// translation (`translatable`, `shape`) would read as plain rows (`v_fmac_f32 vdst, a, b`,
/// `v_dot2acc_f32_f16 vdst, a, b`): no DPP, no neg or abs, both sources VGPRs other than `vdst`.
fn plain_accumulation(e: &Emitter<'_>, op: &VOp, opcode: Opcode, shape: Shape, vdst: u16) -> Option<(Src, Src)> {
    let operands = &op.operands;
    let row = |source: Source| match source {
        Source::Vgpr(v) if (v as u32) < e.vgprs && v != vdst => Some(Src::Row(v as i32 * ROW)),
        _ => None,
    };
    let fits = op.opcode == opcode
        && translatable(e, op) == Some(shape)
        && operands.neg | operands.abs == 0
        && operands.dpp.is_none()
        && operands.vdst == vdst;
    fits.then(|| Some((row(operands.src[0])?, row(operands.src[1])?))).flatten()
}

/// A run of consecutive plain `v_fmac_f32` (or `v_dot2acc_f32_f16`) onto one accumulator (a dot
/// product's inner loop, as compilers unroll it), starting at instruction `index`, as one piece
/// of code where EXEC holds every lane: each chunk of the accumulator loaded once, the run's
/// operations chained in a register (each rounded as its instruction rounds it, with the same
/// operand order, so the same NaNs), and stored once. Through memory, every operation waited
/// for the last one's store to be forwarded. Otherwise (lanes off, MODE not IEEE's, or a dot
/// product whose NaN is the interpreter's) the first instruction runs by its own code, which
/// writes nothing before it decides, and the run goes on at the second, whose own code still
/// serves a wave entering there. False (nothing emitted) where fewer than two such instructions
/// follow, or for a wave64 half.
fn accumulator_chain(e: &mut Emitter<'_>, index: u32, decoded: &Decoded, op: &VOp, shape: Shape) -> bool {
    // Not within a run already chained: its later instructions keep their own code only.
    let chained = (index as usize) < e.chain_end;
    if chained || e.part != super::frame::Part::Whole || !matches!(shape, Shape::Fmac | Shape::Dot2) {
        return false;
    }
    let vdst = op.operands.vdst;
    let mut run = Vec::new();
    let (mut at, mut current) = (index as usize, decoded);
    while run.len() < CHAIN {
        let Plan::Vector(next) = &current.plan else { break };
        let Some(rows) = plain_accumulation(e, next, op.opcode, shape, vdst) else { break };
        run.push((rows, at, current));
        at += current.len as usize / 4;
        let Some(following) = e.kernel.at(at) else { break };
        current = following;
    }
    if run.len() < 2 {
        return false;
    }
    let (_, last_index, last) = run[run.len() - 1];
    let after = e.next_label(last_index as u32, last);
    e.chain_end = at;
    guard_mode(e, index, decoded);
    let alone = e.ops.new_dynamic_label();
    e.unless_every_lane(alone);
    let accumulator = vdst as i32 * ROW;
    let dot = shape == Shape::Dot2;
    if dot {
        // The lanes whose result is the interpreter's, over the whole run.
        dynasm!(e.ops ; .arch x64 ; vpxor xmm11, xmm11, xmm11);
    }
    for k in 0..4 {
        dynasm!(e.ops ; .arch x64 ; vmovdqu ymm2, [r13 + accumulator + 32 * k]);
        for &((a, b), _, _) in &run {
            if dot {
                dot2_onto(e, a, b, k);
                dynasm!(e.ops ; .arch x64 ; vpor ymm11, ymm11, ymm0 ; vmovaps ymm2, ymm7);
            } else {
                // As `emit`'s VFmacF32: ymm0 = ymm1 (a) × ymm0 (b) + the accumulator.
                load(e, 1, a, k);
                load(e, 0, b, k);
                dynasm!(e.ops ; .arch x64 ; vfmadd213ps ymm0, ymm1, ymm2 ; vmovaps ymm2, ymm0);
            }
        }
        if dot {
            // Held back until every chunk is known to be ours.
            dynasm!(e.ops ; .arch x64 ; vmovaps [r14 + scratch_row(0) + 32 * k], ymm2);
        } else {
            dynasm!(e.ops ; .arch x64 ; vmovdqu [r13 + accumulator + 32 * k], ymm2);
        }
    }
    if dot {
        dynasm!(e.ops ; .arch x64 ; vptest ymm11, ymm11 ; jnz =>alone);
        for k in 0..4 {
            dynasm!(e.ops
                ; .arch x64
                ; vmovaps ymm0, [r14 + scratch_row(0) + 32 * k]
                ; vmovdqu [r13 + accumulator + 32 * k], ymm0
            );
        }
    }
    dynasm!(e.ops
        ; .arch x64
        ; add rbp, (run.len() - 1) as i32
        ; jmp =>after
        ; =>alone
    );
    let srcs = prepare(e, op, sources(shape));
    compute(e, index, decoded, op, shape, &srcs);
    true
}

/// Scratch row 0 = `function` of each active lane of `source` (0 in the others, which the write
/// keeps as they were), through `frame::map_row`. The call clobbers every caller-saved
/// register; the EXEC masks are restored after it.
fn map_row(e: &mut Emitter<'_>, function: fn(f32) -> f32, source: Src) {
    row_address(e, source, 1);
    // The running half's EXEC: only its lanes are written.
    let exec = e.exec();
    e.load_mask(1, exec);
    dynasm!(e.ops
        ; .arch x64
        ; mov rdx, rax
        ; mov rdi, QWORD function as usize as i64
        ; lea rsi, [r14 + scratch_row(0)]
        ; mov rax, QWORD super::frame::map_row as *const () as usize as i64
        // No vector state lives across the call; clean upper halves spare libm's code the
        // transition penalties of dirty ones.
        ; vzeroupper
        ; call rax
    );
    e.masks();
}

/// `rax` = the address of `source` as a whole row in memory, for a helper called over rows: a
/// VGPR row or scratch row where it is; a broadcast scalar written out to scratch row `spare`
/// first.
fn row_address(e: &mut Emitter<'_>, source: Src, spare: u8) {
    match source {
        Src::Row(offset) => dynasm!(e.ops ; .arch x64 ; lea rax, [r13 + offset]),
        Src::Scratch(n) => dynasm!(e.ops ; .arch x64 ; lea rax, [r14 + scratch_row(n)]),
        Src::Reg(reg) => {
            for k in 0..4 {
                dynasm!(e.ops ; .arch x64 ; vmovdqa [r14 + scratch_row(spare) + 32 * k], Ry(reg));
            }
            dynasm!(e.ops ; .arch x64 ; lea rax, [r14 + scratch_row(spare)]);
        }
    }
}

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
    if let Shape::Carry { carry_in, subtract, reverse } = shape {
        let (a, b) = if reverse { (srcs[1], srcs[0]) } else { (srcs[0], srcs[1]) };
        add_with_carry(e, op, a, b, carry_in.then(|| srcs[2]), subtract);
        return;
    }
    if let Shape::Shift64 { right } = shape {
        shift64(e, op, srcs[0], srcs[1], right);
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
            // interpreter defines it (`valu::rows::ordered_nans`).
            VFmacF32 => {
                load(e, 1, a, k);
                load(e, 0, b.unwrap(), k);
                vex!(e, vfmadd213ps, 0, 1, Src::Row(vdst), k);
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
            // The bits of a set (in the lane masks, those below the lane's place in the wave,
            // as `valu` counts them), plus b.
            VBcntU32B32 | VMbcntLoU32B32 | VMbcntHiU32B32 => count_bits(e, op, a, b.unwrap(), k),
            // Bits [offset, offset + size) of a, offset b & 31 and size c & 31 (0: the result is
            // 0), zero- or sign-extended: a >> offset, then the field's mask (all ones >> (32 −
            // size)), or shifted up and back down arithmetically by 32 − size. A count of 32
            // gives 0 in both, as a size of 0 must.
            VBfeU32 | VBfeI32 => bit_field(e, op, a, b.unwrap(), c.unwrap(), k),
            // The lane's select bit set: b; clear: a.
            VCndmaskB32 => select(e, a, b.unwrap(), c.unwrap(), k),
            _ => unreachable!("shape() lists the translated operations"),
        }
        // Inactive lanes keep the register's old value.
        e.write_chunk(0, vdst, k);
    }
}

/// Chunk `k` of `v_bcnt_u32_b32`, `v_mbcnt_lo_u32_b32` or `v_mbcnt_hi_u32_b32`.
/// The bits of a set (in the lane masks, those below the lane's place in the wave,
/// as `valu` counts them), plus b.
fn count_bits(e: &mut Emitter<'_>, op: &VOp, a: Src, b: Src, k: i32) {
    use Opcode::*;
    assert!(e.part != Part::Running || op.opcode == VBcntU32B32, "a lane count is emitted per half (`compile.rs`)");
    let high_half = e.part == Part::High;
    // The bits of a's word below each lane of this chunk: in the word of the lane's
    // own half (the low word for wave32 and the low half), all of the low word for
    // the high half, none of the high word for the low half.
    let below = match (op.opcode, high_half) {
        (VBcntU32B32, _) | (VMbcntLoU32B32, true) => Some(None),
        (VMbcntLoU32B32, false) | (VMbcntHiU32B32, true) => {
            Some(Some(e.constant(core::array::from_fn(|i| (1u32 << (8 * k as usize + i)) - 1))))
        }
        _ => None,
    };
    match below {
        Some(below) => {
            load(e, 0, a, k);
            if let Some(below) = below {
                dynasm!(e.ops ; .arch x64 ; vpand ymm0, ymm0, [=>below]);
            }
            count_ones(e);
            apply(e, Ins::Paddd, b, k);
        }
        None => load(e, 0, b, k),
    }
}

/// Chunk `k` of `v_bfe_u32` or `v_bfe_i32` (ymm11 holds 31 in every lane).
/// Bits [offset, offset + size) of a, offset b & 31 and size c & 31 (0: the result is
/// 0), zero- or sign-extended: a >> offset, then the field's mask (all ones >> (32 −
/// size)), or shifted up and back down arithmetically by 32 − size. A count of 32
/// gives 0 in both, as a size of 0 must.
fn bit_field(e: &mut Emitter<'_>, op: &VOp, a: Src, b: Src, c: Src, k: i32) {
    load(e, 0, a, k);
    load(e, 1, b, k);
    load(e, 2, c, k);
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
    if op.opcode == Opcode::VBfeU32 {
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

/// Chunk `k` of `v_cndmask_b32`.
/// The lane's select bit set: b; clear: a.
fn select(e: &mut Emitter<'_>, a: Src, b: Src, c: Src, k: i32) {
    let bits = LANE_BITS + 32 * k;
    let select = c;
    let Src::Reg(mask) = select else { unreachable!("a mask source is broadcast") };
    dynasm!(e.ops
        ; .arch x64
        ; vpand ymm2, Ry(mask), [r14 + bits]
        ; vpcmpeqd ymm2, ymm2, [r14 + bits]
    );
    load(e, 1, a, k);
    match b {
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

/// ymm0 = the count of bits set in each 32-bit lane of ymm0 (clobbers ymm1 and ymm6): each
/// nibble's count from a table (`vpshufb`), then the bytes' counts summed in pairs and the pairs
/// in pairs.
fn count_ones(e: &mut Emitter<'_>) {
    let nibbles = e.constant([0x0F0F_0F0F; 8]);
    // Bytes 0..16: the count of bits of 0..16, for each 128-bit lane.
    let table = e.constant([0x0201_0100, 0x0302_0201, 0x0302_0201, 0x0403_0302].repeat(2).try_into().unwrap());
    let (bytes, words) = (e.constant([0x0101_0101; 8]), e.constant([0x0001_0001; 8]));
    dynasm!(e.ops
        ; .arch x64
        ; vmovdqu ymm6, [=>table]
        ; vpsrlw ymm1, ymm0, 4
        ; vpand ymm0, ymm0, [=>nibbles]
        ; vpand ymm1, ymm1, [=>nibbles]
        ; vpshufb ymm0, ymm6, ymm0
        ; vpshufb ymm1, ymm6, ymm1
        ; vpaddb ymm0, ymm0, ymm1
        ; vpmaddubsw ymm0, ymm0, [=>bytes]
        ; vpmaddwd ymm0, ymm0, [=>words]
    );
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

/// `v_add_co_u32` and `v_add_co_ci_u32`: vdst = a + b (+ the lane's carry-in bit), and the
/// lanes whose sum carried, in EXEC, to sdst (as `valu::plain::plain`: the row first, then the mask).
/// `subtract`: `v_sub_co_u32` and `v_sub_co_ci_u32`, vdst = a − b (− the borrow-in bit), and the
/// lanes that borrowed (b plus the borrow-in exceeds a).
fn add_with_carry(e: &mut Emitter<'_>, op: &VOp, a: Src, b: Src, carry_in: Option<Src>, subtract: bool) {
    let vdst = op.operands.vdst as i32 * ROW;
    dynasm!(e.ops ; .arch x64 ; xor r8d, r8d);
    if subtract && carry_in.is_some() {
        // Zero, for the borrow-in's test of a zero difference.
        dynasm!(e.ops ; .arch x64 ; vpxor xmm7, xmm7, xmm7);
    }
    for k in 0..4 {
        load(e, 0, a, k);
        load(e, 1, b, k);
        if subtract {
            // ymm2 = a − b; ymm3: no borrow (a >= b, unsigned).
            dynasm!(e.ops
                ; .arch x64
                ; vpsubd ymm2, ymm0, ymm1
                ; vpmaxud ymm3, ymm0, ymm1
                ; vpcmpeqd ymm3, ymm3, ymm0
            );
        } else {
            // ymm2 = a + b; ymm3: no carry (sum >= a, unsigned).
            dynasm!(e.ops
                ; .arch x64
                ; vpaddd ymm2, ymm0, ymm1
                ; vpmaxud ymm3, ymm2, ymm0
                ; vpcmpeqd ymm3, ymm3, ymm2
            );
        }
        if let Some(Src::Reg(mask)) = carry_in {
            // ymm4: all ones where the lane's carry-in bit is set.
            let bits = LANE_BITS + 32 * k;
            dynasm!(e.ops
                ; .arch x64
                ; vpand ymm4, Ry(mask), [r14 + bits]
                ; vpcmpeqd ymm4, ymm4, [r14 + bits]
            );
            if subtract {
                // Less the borrow (+ −1): it borrows again only from a difference of 0.
                dynasm!(e.ops
                    ; .arch x64
                    ; vpcmpeqd ymm6, ymm2, ymm7
                    ; vpand ymm6, ymm6, ymm4
                    ; vpandn ymm3, ymm6, ymm3
                    ; vpaddd ymm2, ymm2, ymm4
                );
            } else {
                // The sum less that (+1), and no carry from it where the new sum is not below
                // the old.
                dynasm!(e.ops
                    ; .arch x64
                    ; vpsubd ymm5, ymm2, ymm4
                    ; vpmaxud ymm6, ymm5, ymm2
                    ; vpcmpeqd ymm6, ymm6, ymm5
                    ; vpand ymm3, ymm3, ymm6
                    ; vmovdqa ymm2, ymm5
                );
            }
        }
        // r8d gathers the lanes without a carry, eight bits per chunk.
        e.movmsk(1, 3);
        if k > 0 {
            dynasm!(e.ops ; .arch x64 ; shl ecx, (8 * k) as i8);
        }
        dynasm!(e.ops
            ; .arch x64
            ; or r8d, ecx
        );
        e.write_chunk(2, vdst, k);
    }
    // The carries: every lane's bit is set once the four chunks are in.
    dynasm!(e.ops ; .arch x64 ; not r8d);
    write_lanes(e, op.operands.sdst as u32);
}

/// `v_lshlrev_b64` and `v_lshrrev_b64` (`right`): (hi:lo) shifted by n, the shift's low 6 bits,
/// in 32-bit lanes. Left: lo' = lo << n, hi' = hi << n | lo >> (32 − n) | lo << (n − 32); right,
/// the mirror: hi' = hi >> n, lo' = lo >> n | hi << (32 − n) | hi >> (n − 32). AVX2's variable
/// shifts give 0 for a count of 32 or more (a negative one included), which makes each term
/// vanish where it should: for n = 32 the last two are both the moving half, which the OR keeps.
fn shift64(e: &mut Emitter<'_>, op: &VOp, shift: Src, value: Src, right: bool) {
    // The pair's halves: two VGPR rows, or an SGPR pair's two broadcasts (the low one placed in
    // `ymm9` by `prepare`, the high one into `ymm0` here).
    let halves = match (value, op.operands.src[1]) {
        (Src::Row(low), _) => [Src::Row(low), Src::Row(low + ROW)],
        (Src::Reg(low), Source::Sgpr(s)) => {
            dynasm!(e.ops ; .arch x64 ; vpbroadcastd ymm0, [r12 + sgpr(s as u32 + 1)]);
            [Src::Reg(low), Src::Reg(0)]
        }
        _ => unreachable!("the shifted pair is VGPRs or SGPRs (`translatable`)"),
    };
    let vdst = op.operands.vdst as i32 * ROW;
    // The half the bits leave (the moving one) and the half they enter, in the source and in
    // the destination.
    let (moving, entered) = if right { (halves[1], halves[0]) } else { (halves[0], halves[1]) };
    let (moving_out, entered_out) = if right { (vdst + ROW, vdst) } else { (vdst, vdst + ROW) };
    if let Source::Constant(count) = op.operands.src[0] {
        shift64_by(e, (count & 63) as i8, [moving, entered], [moving_out, entered_out], right);
        return;
    }
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
            ; vpsubd ymm6, ymm10, ymm1
        );
        load(e, 2, moving, k);
        load(e, 3, entered, k);
        if right {
            dynasm!(e.ops
                ; .arch x64
                ; vpsrlvd ymm4, ymm2, ymm1
                ; vpsrlvd ymm5, ymm3, ymm1
                ; vpsllvd ymm7, ymm2, ymm6
                ; vpor ymm5, ymm5, ymm7
                ; vpsubd ymm6, ymm1, ymm10
                ; vpsrlvd ymm7, ymm2, ymm6
                ; vpor ymm5, ymm5, ymm7
            );
        } else {
            dynasm!(e.ops
                ; .arch x64
                ; vpsllvd ymm4, ymm2, ymm1
                ; vpsllvd ymm5, ymm3, ymm1
                ; vpsrlvd ymm7, ymm2, ymm6
                ; vpor ymm5, ymm5, ymm7
                ; vpsubd ymm6, ymm1, ymm10
                ; vpsllvd ymm7, ymm2, ymm6
                ; vpor ymm5, ymm5, ymm7
            );
        }
        e.write_chunk(4, moving_out, k);
        e.write_chunk(5, entered_out, k);
    }
}

/// Whether a 32-bit source is one value for every lane that a scalar load reads: an SGPR below
/// VCC (the mask registers a wave64 half reads its own way are left to the general forms), or a
/// constant.
fn uniform32(source: Source) -> bool {
    matches!(source, Source::Sgpr(s) if u32::from(s) < VCC) || matches!(source, Source::Constant(_))
}

/// [`multiply_add64`] where both factors are uniform ([`uniform32`]), as a kernel's index
/// (workgroup id × size) plus the work-item's pair is: the one 64-bit product in scalar
/// registers, then per lane a 64-bit add, the low halves' carry into the high.
fn multiply_add64_uniform(e: &mut Emitter<'_>, op: &VOp, [c_low, c_high]: [i32; 2], vdst: i32) {
    for (source, register) in [(op.operands.src[0], 0u8), (op.operands.src[1], 1)] {
        match source {
            Source::Sgpr(s) => dynasm!(e.ops ; .arch x64 ; mov Rd(register), [r12 + sgpr(u32::from(s))]),
            Source::Constant(value) => dynasm!(e.ops ; .arch x64 ; mov Rd(register), value as u32 as i32),
            _ => unreachable!("uniform factors (`uniform32`)"),
        }
    }
    // ymm10 = the product's low half, ymm11 its high half plus one (a carry's mask, −1 where
    // there is none, then makes it right).
    dynasm!(e.ops
        ; .arch x64
        ; imul rax, rcx
        ; vmovd xmm10, eax
        ; vpbroadcastd ymm10, xmm10
        ; shr rax, 32
        ; inc eax
        ; vmovd xmm11, eax
        ; vpbroadcastd ymm11, xmm11
    );
    for k in 0..4 {
        // Both halves of c read before either half of vdst is written (the pairs may overlap).
        dynasm!(e.ops
            ; .arch x64
            ; vmovdqu ymm4, [r13 + c_low + 32 * k]
            ; vpaddd ymm4, ymm4, ymm10
            ; vpmaxud ymm6, ymm4, ymm10
            ; vpcmpeqd ymm6, ymm6, ymm4
            ; vpaddd ymm5, ymm11, [r13 + c_high + 32 * k]
            ; vpaddd ymm5, ymm5, ymm6
        );
        e.write_chunk(4, vdst, k);
        e.write_chunk(5, vdst + ROW, k);
    }
}

/// [`shift64`] by a constant `count` (0 to 63), the common case (an index scaled to a byte
/// address): the same three terms with immediate counts, a term whose count is out of range
/// left out (the variable shifts' zero).
fn shift64_by(
    e: &mut Emitter<'_>,
    count: i8,
    [moving, entered]: [Src; 2],
    [moving_out, entered_out]: [i32; 2],
    right: bool,
) {
    // ymm`dst` = ymm`src` shifted the way the bits move (`along`) or the other way.
    let shift = |e: &mut Emitter<'_>, along: bool, dst: u8, src: u8, count: i8| {
        if along == right {
            dynasm!(e.ops ; .arch x64 ; vpsrld Ry(dst), Ry(src), count);
        } else {
            dynasm!(e.ops ; .arch x64 ; vpslld Ry(dst), Ry(src), count);
        }
    };
    for k in 0..4 {
        load(e, 2, moving, k);
        load(e, 3, entered, k);
        // ymm4 = the moving half shifted; ymm5 = the entered half shifted, with the bits that
        // cross from the moving half (count − 32 further where the whole half crosses).
        match count {
            0 => dynasm!(e.ops ; .arch x64 ; vmovdqa ymm4, ymm2 ; vmovdqa ymm5, ymm3),
            1..=31 => {
                shift(e, true, 4, 2, count);
                shift(e, true, 5, 3, count);
                shift(e, false, 7, 2, 32 - count);
                dynasm!(e.ops ; .arch x64 ; vpor ymm5, ymm5, ymm7);
            }
            _ => {
                dynasm!(e.ops ; .arch x64 ; vpxor xmm4, xmm4, xmm4);
                shift(e, true, 5, 2, count - 32);
            }
        }
        e.write_chunk(4, moving_out, k);
        e.write_chunk(5, entered_out, k);
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
    let carry_out = op.operands.sdst as u32 != NULL;
    if uniform32(op.operands.src[0]) && uniform32(op.operands.src[1]) && !carry_out {
        multiply_add64_uniform(e, op, [c_low, c_high], vdst);
        return;
    }
    if carry_out {
        dynasm!(e.ops ; .arch x64 ; xor r8d, r8d);
    }
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
        if carry_out {
            // The carry out of the 64-bit sum (the interpreter's `overflowing_add`): the sum
            // below the addend (ymm6 even lanes', ymm7 odd lanes'), unsigned, as signed with the
            // sign bits flipped; each lane's answer in its quadword, the even lanes' low dwords
            // and the odd lanes' high dwords blended into one mask of dwords.
            dynasm!(e.ops
                ; .arch x64
                ; vpcmpeqd ymm1, ymm1, ymm1
                ; vpsllq ymm1, ymm1, 63
                ; vpxor ymm6, ymm6, ymm1
                ; vpxor ymm7, ymm7, ymm1
                ; vpxor ymm2, ymm2, ymm1
                ; vpxor ymm3, ymm3, ymm1
                ; vpcmpgtq ymm6, ymm6, ymm2
                ; vpcmpgtq ymm7, ymm7, ymm3
            );
            e.vpblendd(6, 6, 7, ODD_DWORDS);
            e.movmsk(1, 6); // ecx
            if k > 0 {
                dynasm!(e.ops ; .arch x64 ; shl ecx, (8 * k) as i8);
            }
            dynasm!(e.ops ; .arch x64 ; or r8d, ecx);
        }
        e.write_chunk(4, vdst, k);
        e.write_chunk(5, vdst + ROW, k);
    }
    if carry_out {
        write_lanes(e, op.operands.sdst as u32);
    }
}
