//! Vector ALU instructions: VOP1, VOP2, VOPC, VOP3 (and VOP3SD), VOP3P, VOPD, with DPP (RDNA3
//! ISA guide, chapter 7 for the operations, chapter 15 for the fields).
//!
//! Each instruction is planned once at decode ([`VOp::plan`]): its operation, its operands
//! resolved ([`Operands`]), its operand types, its compare condition and its [`Family`]. Running
//! it reads each source as a whole row of lanes, computes every lane with one closure chosen by
//! one `match` on the family and one on the operation within the family's file, and writes the
//! lanes EXEC (and DPP's masks) enable. Lanes outside EXEC keep their registers; a compare writes
//! 0 for them (RDNA3 ISA guide).
//!
//! 16-bit results write one half of their register and keep the other: gfx10 and later keep the
//! high bits of every 16-bit VALU result (LLVM's `GCNSubtarget::zeroesHigh16BitsOfDest` is true
//! only up to GFX9).
//!
//! This file holds the plan, the two paths that run it ([`step`], [`step_dual`]) and the writes
//! of their rows. The operations are in one file per family: `plain.rs` (the common 32-bit ones,
//! and the small path that runs them without modifiers), `bit_ops.rs`, `integer_ops.rs`,
//! `f32_ops.rs`, `f64_ops.rs`, `f16_ops.rs`, `conversions.rs`, `division.rs`, `compare.rs`,
//! `cross_lane.rs`, `packed.rs` and `wmma.rs` (VOP3P), and `mode.rs` (a MODE other than the
//! defaults). They share leaves that import no family: `rows.rs` (lane maps), `lane_math.rs`
//! (one lane's shared arithmetic), `f16_values.rs`, `mnemonic.rs` (types read off a name) and
//! `family.rs`.

mod bit_ops;
mod compare;
mod conversions;
mod cross_lane;
mod division;
mod f16_ops;
mod f16_values;
mod f32_ops;
mod f64_ops;
mod family;
mod integer_ops;
mod lane_math;
mod mnemonic;
mod mode;
mod packed;
mod plain;
mod rows;
mod unfused;
#[allow(clippy::needless_range_loop)]
pub(crate) mod wmma;

pub(crate) use cross_lane::readlane_destination;
pub(crate) use f16_values::{h, to_h};
pub(crate) use f32_ops::lane_function_f32;
use family::Family;
use mnemonic::result_kind;
pub(crate) use mnemonic::{half_operands, source_kind};
pub(crate) use unfused::step_unfused;

use half::f16;

use super::wave::Flow;
use super::wave::{Kind, LANES, MODE_IEEE, MODE_IEEE_FLOAT, Wave};
use crate::gfx11::{Encoding, Entry, Instruction, Opcode, Slot};
use crate::interp::operands::{Operands, Row, Row64, Width};
use lane_math::clamp01;

/// A compare's condition (`v_cmp_<condition>_<type>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Condition {
    False,
    True,
    Lt,
    Eq,
    Le,
    Gt,
    Lg,
    Ne,
    Ge,
    Ordered,
    Unordered,
    Nge,
    Nlg,
    Ngt,
    Nle,
    Nlt,
    /// `v_cmp_class`: src1 is a mask of IEEE classes.
    Class,
}

/// A compare's operand type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CompareType {
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F16,
    F32,
    F64,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Form {
    /// Writes vdst (and a carry mask for the carry operations).
    Alu,
    /// Writes a lane mask to sdst, or to EXEC for `v_cmpx`.
    Compare { condition: Condition, ty: CompareType, into_exec: bool },
}

/// A VALU instruction ready to run.
#[derive(Clone, Copy, Debug)]
pub(crate) struct VOp {
    pub opcode: Opcode,
    pub form: Form,
    pub operands: Operands,
    /// The sources' float type, which their modifiers and constants follow.
    pub kind: Kind,
    /// The result's type, which the output modifiers follow.
    pub result: Kind,
    /// Bits 0–2: 16-bit sources; bit 3: a 16-bit destination.
    pub half: u8,
    pub encoding: Encoding,
    /// No modifiers, DPP or 16-bit halves, and a plain ALU form: eligible for [`plain`].
    pub plain: bool,
    /// The file that computes it ([`Family::of`]).
    pub family: Family,
}

/// What an operation computed, before it is written.
enum Out {
    /// 32 bits per lane.
    B32(Row),
    /// 64 bits per lane, to a VGPR pair.
    B64(Row64),
    /// 32 bits per lane and a carry (or VCC) mask to sdst.
    Carry(Row, u32),
    /// 64 bits per lane and a carry mask.
    Carry64(Row64, u32),
    /// Already written (lane-crossing and scalar-writing operations).
    Done,
}

impl VOp {
    /// Plans `instruction` (a VALU encoding), or `None` for one the interpreter cannot run.
    pub fn plan(instruction: &Instruction) -> Option<VOp> {
        let entry = instruction.entry;
        let name = entry.mnemonic.trim_end_matches("_e32").trim_end_matches("_e64");
        let kind = source_kind(name);
        let widths = [0, 1, 2].map(|index| {
            let width = entry.slots.iter().find_map(|slot| match (slot, index) {
                (Slot::Src0(width), 0) | (Slot::Src1(width), 1) | (Slot::Src2(width), 2) => Some(*width),
                _ => None,
            });
            if width == Some(2) { Width::B64 } else { Width::B32 }
        });
        let half = if instruction.encoding == Encoding::Vop3p { 0 } else { half_operands(name) };
        let mut kinds = [kind; 3];
        for (index, kind) in kinds.iter_mut().enumerate() {
            if half >> index & 1 == 1 && *kind != Kind::Int {
                *kind = Kind::F16;
            }
        }
        // Integer second operands of float operations.
        if name.starts_with("v_cmp_class")
            || name.starts_with("v_cmpx_class")
            || name.starts_with("v_ldexp")
            || name.starts_with("v_trig_preop")
        {
            kinds[1] = Kind::Int;
        }
        if name.starts_with("v_cndmask") {
            kinds[2] = Kind::Int;
        }
        if instruction.encoding == Encoding::Vop3p && name.ends_with("f16") {
            kinds = [Kind::F16; 3];
        }
        let mut operands = Operands::of(instruction, kinds, widths, half)?;
        if reads_mask(entry.opcode) {
            operands.mask_source2();
        }
        let form = match compare::parse_compare(entry) {
            Some((into_exec, condition, ty)) => Form::Compare { condition, ty, into_exec },
            None if name.starts_with("v_cmp") => return None,
            None => Form::Alu,
        };
        let kind = if half & 1 == 1 && kind != Kind::Int { Kind::F16 } else { kind };
        let result = result_kind(name);
        let plain = half == 0
            && instruction.encoding != Encoding::Vop3p
            && operands.dpp.is_none()
            && operands.neg | operands.abs | operands.omod | operands.op_sel == 0
            && !operands.clamp;
        let family = Family::of(&form, instruction.encoding, entry.opcode, operands.clamp);
        Some(VOp {
            opcode: entry.opcode,
            form,
            operands,
            kind,
            result,
            half,
            encoding: instruction.encoding,
            plain,
            family,
        })
    }

    /// Source `index`: its row (DPP applied to src0), its 16-bit half selected, and its float
    /// modifiers applied.
    #[inline(always)]
    fn read(&self, wave: &Wave, index: usize) -> Row {
        let mut row = self.operands.row(wave, index);
        if index == 0
            && let Some(dpp) = &self.operands.dpp
        {
            row = dpp.apply(&row, wave.exec(), wave.half).0;
        }
        let (neg, abs) = (self.operands.neg >> index & 1 == 1, self.operands.abs >> index & 1 == 1);
        if self.half >> index & 1 == 1 {
            let high = self.operands.op_sel >> index & 1 == 1;
            let (clear, flip) = match self.kind {
                Kind::F16 | Kind::F32 => ((abs as u32) << 15, (neg as u32) << 15),
                _ => (0, 0),
            };
            return row.map(|value| ((if high { value >> 16 } else { value } & 0xFFFF) & !clear) ^ flip);
        }
        let (clear, flip) = match self.kind {
            Kind::F32 => ((abs as u32) << 31, (neg as u32) << 31),
            _ => (0, 0),
        };
        if clear | flip != 0 { row.map(|value| (value & !clear) ^ flip) } else { row }
    }

    #[inline(always)]
    fn read64(&self, wave: &Wave, index: usize) -> Row64 {
        let row = self.operands.row64(wave, index);
        let (neg, abs) = (self.operands.neg >> index & 1 == 1, self.operands.abs >> index & 1 == 1);
        if self.kind == Kind::F64 && (neg || abs) {
            let (clear, flip) = ((abs as u64) << 63, (neg as u64) << 63);
            row.map(|value| (value & !clear) ^ flip)
        } else {
            row
        }
    }

    /// The lanes this instruction writes: EXEC, narrowed by DPP's masks and invalid lanes.
    #[inline(always)]
    fn writes(&self, wave: &Wave) -> u32 {
        let exec = wave.exec();
        match &self.operands.dpp {
            Some(dpp) => dpp.apply(&self.operands.row(wave, 0), exec, wave.half).1,
            None => exec,
        }
    }
}

/// Whether an operation's source 2 is a lane mask: `v_cndmask`'s select, a carry-in.
fn reads_mask(opcode: Opcode) -> bool {
    use Opcode::*;
    matches!(opcode, VCndmaskB32 | VCndmaskB16 | VAddCoCiU32 | VSubCoCiU32 | VSubrevCoCiU32)
}

/// Plans a VOPD pair: its X and Y halves, each a VOP2-shaped operation.
pub(crate) fn plan_dual(instruction: &Instruction) -> Option<(VOp, VOp)> {
    let [w0, w1, _] = instruction.words;
    let x_dst = (w1 >> 24) & 0xFF;
    let y_dst = (((w1 >> 17) & 0x7F) << 1) | (!x_dst & 1);
    let half = |entry: &Entry, vdst: u32, src0: u32, vsrc1: u32| {
        let kind = source_kind(entry.mnemonic);
        VOp {
            opcode: entry.opcode,
            form: Form::Alu,
            operands: {
                let mut operands = Operands::dual(vdst, src0, vsrc1, instruction.literal(), kind);
                if reads_mask(entry.opcode) {
                    operands.mask_source2();
                }
                operands
            },
            kind,
            result: result_kind(entry.mnemonic),
            half: 0,
            encoding: Encoding::Vopd,
            plain: false,
            family: Family::of(&Form::Alu, Encoding::Vopd, entry.opcode, false),
        }
    };
    let x = half(instruction.entry, x_dst, w0 & 0x1FF, (w0 >> 9) & 0xFF);
    let y = half(instruction.dual?, y_dst, w1 & 0x1FF, (w1 >> 9) & 0xFF);
    Some((x, y))
}

/// Runs `op`; `None` for an operation the interpreter does not execute (nothing is written).
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn step<const WIDE: bool>(wave: &mut Wave, op: &VOp) -> Option<Flow> {
    if op.plain && wave.mode & 0xFF == MODE_IEEE_FLOAT && plain::plain(wave, op) {
        return Some(Flow::Next);
    }
    let writes = op.writes(wave);
    let out = general::<WIDE>(wave, op)?;
    commit(wave, op, out, writes);
    Some(Flow::Next)
}

/// VOPD: two operations that both read their sources before either writes (RDNA3 ISA guide,
/// "Dual Issue VALU").
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn step_dual<const WIDE: bool>(wave: &mut Wave, x: &VOp, y: &VOp) -> Option<Flow> {
    let first = general::<WIDE>(wave, x)?;
    let second = general::<WIDE>(wave, y)?;
    let exec = wave.exec();
    commit(wave, x, first, exec);
    commit(wave, y, second, exec);
    Some(Flow::Next)
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn commit(wave: &mut Wave, op: &VOp, out: Out, writes: u32) {
    match out {
        Out::B32(row) => write_row(wave, op, row, writes),
        Out::B64(row) => write_row64(wave, op, row, writes),
        Out::Carry(row, carry) => {
            write_row(wave, op, row, writes);
            wave.write_mask(op.operands.sdst as u32, carry & writes);
        }
        Out::Carry64(row, carry) => {
            write_row64(wave, op, row, writes);
            wave.write_mask(op.operands.sdst as u32, carry & writes);
        }
        Out::Done => {}
    }
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn write_row(wave: &mut Wave, op: &VOp, row: Row, writes: u32) {
    let row = output32(op, row);
    let Some(target) = wave.vgpr.get_mut(op.operands.vdst as usize) else { return };
    if op.half & 8 != 0 {
        let high = op.operands.op_sel >> 3 & 1 == 1;
        for lane in 0..LANES {
            let value = if high {
                (target[lane] & 0xFFFF) | row[lane] << 16
            } else {
                (target[lane] & 0xFFFF_0000) | (row[lane] & 0xFFFF)
            };
            target[lane] = if writes >> lane & 1 == 1 { value } else { target[lane] };
        }
    } else if writes == u32::MAX {
        *target = row;
    } else {
        for lane in 0..LANES {
            target[lane] = if writes >> lane & 1 == 1 { row[lane] } else { target[lane] };
        }
    }
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn write_row64(wave: &mut Wave, op: &VOp, row: Row64, writes: u32) {
    let row = output64(op, row);
    let vdst = op.operands.vdst as usize;
    for (half, shift) in [(0, 0), (1, 32)] {
        if let Some(target) = wave.vgpr.get_mut(vdst + half) {
            for lane in 0..LANES {
                if writes >> lane & 1 == 1 {
                    target[lane] = (row[lane] >> shift) as u32;
                }
            }
        }
    }
}

/// VOP3's output modifier and clamp on a float result.
#[cfg_attr(not(debug_assertions), inline(always))]
fn output32(op: &VOp, row: Row) -> Row {
    let (omod, clamp) = (op.operands.omod, op.operands.clamp);
    if omod == 0 && !clamp {
        return row;
    }
    let scale = [1.0f32, 2.0, 4.0, 0.5][omod as usize];
    let half = |bits: u32| {
        let value = f16::from_bits(bits as u16).to_f32() * scale;
        to_h(if clamp { clamp01(value) } else { value })
    };
    match op.result {
        Kind::F32 if matches!(op.form, Form::Alu) => row.map(|bits| {
            let value = f32::from_bits(bits) * scale;
            if clamp { clamp01(value).to_bits() } else { value.to_bits() }
        }),
        Kind::F16 if op.encoding == Encoding::Vop3p => row.map(|bits| half(bits & 0xFFFF) | half(bits >> 16) << 16),
        Kind::F16 if op.half & 8 != 0 => row.map(half),
        _ => row,
    }
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn output64(op: &VOp, row: Row64) -> Row64 {
    let (omod, clamp) = (op.operands.omod, op.operands.clamp);
    if op.result != Kind::F64 || (omod == 0 && !clamp) {
        return row;
    }
    let scale = [1.0f64, 2.0, 4.0, 0.5][omod as usize];
    row.map(|bits| {
        let value = f64::from_bits(bits) * scale;
        if clamp { value.clamp(0.0, 1.0).to_bits() } else { value.to_bits() }
    })
}

/// The general path: `compute` out of line, compiled once per instruction set (`WIDE`: the
/// AVX2 build, as the wave loop that calls it). Inlined, its copies (two wave loops, three call
/// sites each) were most of the release build's time: about 150 of the interpreter's 160
/// seconds on a 2-core machine. Returning `Out` through the call costs no measurable host
/// instructions beside the path's modifier stages (callgrind).
#[inline(always)]
fn general<const WIDE: bool>(wave: &mut Wave, op: &VOp) -> Option<Out> {
    #[cfg(target_arch = "x86_64")]
    if WIDE {
        // SAFETY: `WIDE` is instantiated only under `run_workgroup_avx2`, which runs after
        // `wide_vectors` found every feature `compute_avx2` is compiled for.
        return unsafe { compute_avx2(wave, op) };
    }
    compute_baseline(wave, op)
}

#[inline(never)]
fn compute_baseline(wave: &mut Wave, op: &VOp) -> Option<Out> {
    compute(wave, op)
}

#[cfg(target_arch = "x86_64")]
#[inline(never)]
#[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
fn compute_avx2(wave: &mut Wave, op: &VOp) -> Option<Out> {
    compute(wave, op)
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn compute(wave: &mut Wave, op: &VOp) -> Option<Out> {
    if wave.mode & 0xFF != MODE_IEEE_FLOAT && op.result != Kind::Int {
        let mode = wave.mode;
        let out = match mode::moded(wave, op, mode) {
            Some(out) => out,
            // A directed rounding this operation's result would take is not modelled: it fails
            // (Unsupported, naming it) rather than round to nearest silently.
            None if mode & 0xF != 0 && mode::rounds_by_mode_unmodelled(op.opcode) => return None,
            None => ieee(wave, op)?,
        };
        return Some(mode::flush_output(op, out, mode));
    }
    ieee(wave, op)
}

/// The operation under MODE's defaults: IEEE arithmetic, nearest even, denormals kept. One
/// `match` on the family the plan chose, into the family's file.
#[cfg_attr(not(debug_assertions), inline(always))]
fn ieee(wave: &mut Wave, op: &VOp) -> Option<Out> {
    match op.family {
        Family::Common => {
            let vdst = || wave.vgpr.get(op.operands.vdst as usize).copied().unwrap_or([0; LANES]);
            let (b, c) = (|| op.read(wave, 1), || op.read(wave, 2));
            let ieee = wave.mode & MODE_IEEE != 0;
            let row = plain::common_row(op.opcode, op.read(wave, 0), b, c, vdst, op.operands.literal, ieee)?;
            Some(Out::B32(row))
        }
        Family::Compare => compare::compare(wave, op),
        Family::Packed => packed::packed(wave, op),
        Family::CrossLane => cross_lane::compute(wave, op),
        Family::Bits => bit_ops::compute(wave, op),
        Family::Integer => integer_ops::compute(wave, op),
        Family::Float32 => f32_ops::compute(wave, op),
        Family::Float64 => f64_ops::compute(wave, op),
        Family::Float16 => f16_ops::compute(wave, op),
        Family::Conversion => conversions::compute(wave, op),
        Family::Division => division::compute(wave, op),
        Family::Nothing => Some(Out::Done),
        Family::Unsupported => None,
    }
}
