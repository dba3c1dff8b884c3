//! Vector ALU instructions: VOP1, VOP2, VOPC, VOP3 (and VOP3SD), VOP3P, VOPD, with DPP (RDNA3
//! ISA guide, chapter 7 for the operations, chapter 15 for the fields).
//!
//! Each instruction is planned once at decode ([`VOp::plan`]): its operation, its operands
//! resolved ([`Operands`]), its operand types and its compare condition. Running it reads each
//! source as a whole row of lanes, computes every lane with one closure chosen by one `match`
//! on the operation, and writes the lanes EXEC (and DPP's masks) enable. Lanes outside EXEC keep
//! their registers; a compare writes 0 for them (RDNA3 ISA guide).
//!
//! 16-bit results write one half of their register and keep the other: gfx10 and later keep the
//! high bits of every 16-bit VALU result (LLVM's `GCNSubtarget::zeroesHigh16BitsOfDest` is true
//! only up to GFX9).

#[allow(clippy::needless_range_loop)]
mod wmma;

use half::{bf16, f16};

use super::operands::{Operands, Row, Row64, Width};
use super::wave::Flow;
use super::wave::{EXEC, Kind, LANES, MODE_IEEE, MODE_IEEE_FLOAT, VCC, Wave};
use crate::gfx11::{Encoding, Entry, Instruction, Opcode, Slot};

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
        let form = match parse_compare(entry) {
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
        Some(VOp { opcode: entry.opcode, form, operands, kind, result, half, encoding: instruction.encoding, plain })
    }

    /// Source `index`: its row (DPP applied to src0), its 16-bit half selected, and its float
    /// modifiers applied.
    #[inline(always)]
    fn read(&self, wave: &Wave, index: usize) -> Row {
        let mut row = self.operands.row(wave, index);
        if index == 0
            && let Some(dpp) = &self.operands.dpp
        {
            row = dpp.apply(&row, wave.exec()).0;
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
            Some(dpp) => dpp.apply(&self.operands.row(wave, 0), exec).1,
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
        }
    };
    let x = half(instruction.entry, x_dst, w0 & 0x1FF, (w0 >> 9) & 0xFF);
    let y = half(instruction.dual?, y_dst, w1 & 0x1FF, (w1 >> 9) & 0xFF);
    Some((x, y))
}

/// Runs `op`; `None` for an operation the interpreter does not execute (nothing is written).
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn step<const WIDE: bool>(wave: &mut Wave, op: &VOp) -> Option<Flow> {
    if op.plain && wave.mode & 0xFF == MODE_IEEE_FLOAT && plain(wave, op) {
        return Some(Flow::Next);
    }
    let writes = op.writes(wave);
    let out = general::<WIDE>(wave, op)?;
    commit(wave, op, out, writes);
    Some(Flow::Next)
}

/// The common 32-bit operations without modifiers, DPP or 16-bit halves, in a small function of
/// their own: sources read as rows, one lane loop, the masked write. (The general path's size,
/// its result enum and its modifier stages cost several times the arithmetic.) Returns false
/// for an operation this path does not have.
#[cfg_attr(not(debug_assertions), inline(always))]
fn plain(wave: &mut Wave, op: &VOp) -> bool {
    use Opcode::*;
    let operands = &op.operands;
    let a = operands.row(wave, 0);
    let b = || operands.row(wave, 1);
    let c = || operands.row(wave, 2);
    let current = || wave.vgpr.get(operands.vdst as usize).copied().unwrap_or([0; LANES]);
    let exec = wave.exec();
    if let Form::Compare { condition, ty, into_exec } = op.form {
        if condition == Condition::Class {
            return false;
        }
        let b = b();
        let mut order = [core::cmp::Ordering::Equal; LANES];
        let mut unordered = 0u32;
        match ty {
            CompareType::U32 => {
                for lane in 0..LANES {
                    order[lane] = a[lane].cmp(&b[lane]);
                }
            }
            CompareType::I32 => {
                for lane in 0..LANES {
                    order[lane] = (a[lane] as i32).cmp(&(b[lane] as i32));
                }
            }
            CompareType::F32 => {
                for lane in 0..LANES {
                    match f32::from_bits(a[lane]).partial_cmp(&f32::from_bits(b[lane])) {
                        Some(value) => order[lane] = value,
                        None => unordered |= 1 << lane,
                    }
                }
            }
            _ => return false,
        }
        let mut result = 0u32;
        for lane in 0..LANES {
            let ordering = if unordered >> lane & 1 == 1 { None } else { Some(order[lane]) };
            result |= (holds(condition, ordering) as u32) << lane;
        }
        let target = if into_exec { EXEC } else { operands.sdst as u32 };
        wave.write_mask(target, result & exec);
        return true;
    }
    if matches!(op.opcode, VAddCoU32 | VAddCoCiU32 | VSubCoU32 | VSubCoCiU32) {
        let (b, carry_in) = (b(), if matches!(op.opcode, VAddCoCiU32 | VSubCoCiU32) { c()[0] } else { 0 });
        let (mut row, mut carry) = ([0u32; LANES], 0u32);
        for lane in 0..LANES {
            let (x, y, cin) = (a[lane] as u64, b[lane] as u64, (carry_in >> lane & 1) as u64);
            let (value, out) = if matches!(op.opcode, VAddCoU32 | VAddCoCiU32) {
                let sum = x + y + cin;
                (sum as u32, sum >> 32 != 0)
            } else {
                (x.wrapping_sub(y + cin) as u32, y + cin > x)
            };
            row[lane] = value;
            carry |= (out as u32) << lane;
        }
        write_plain(wave, operands.vdst, row, exec);
        wave.write_mask(operands.sdst as u32, carry & exec);
        return true;
    }
    let ieee = wave.mode & MODE_IEEE != 0;
    let Some(row) = common_row(op.opcode, a, b, c, current, operands.literal, ieee) else { return false };
    write_plain(wave, operands.vdst, row, exec);
    true
}

/// The common 32-bit operations, shared by the small path and the general one (which reads its
/// sources through DPP and modifiers first): `None` for any other operation.
#[inline(always)]
fn common_row(
    opcode: Opcode,
    a: Row,
    b: impl Fn() -> Row,
    c: impl Fn() -> Row,
    current: impl Fn() -> Row,
    literal: u32,
    ieee: bool,
) -> Option<Row> {
    use Opcode::*;
    Some(match opcode {
        VMovB32 => a,
        VAddF32 => ordered_nans(f2(a, b(), |x, y| x + y), [&a, &b()]),
        VSubF32 => ordered_nans(f2(a, b(), |x, y| x - y), [&a, &b()]),
        VSubrevF32 => ordered_nans(f2(a, b(), |x, y| y - x), [&b(), &a]),
        VMulF32 => ordered_nans(f2(a, b(), |x, y| x * y), [&a, &b()]),
        VMaxF32 => f2(a, b(), |x, y| fmax(x, y, ieee)),
        VMinF32 => f2(a, b(), |x, y| fmin(x, y, ieee)),
        VFmacF32 => fma_rows(a, b(), current()),
        VFmaF32 => fma_rows(a, b(), c()),
        VFmaakF32 => fma_rows(a, b(), [literal; LANES]),
        VFmamkF32 => fma_rows(a, [literal; LANES], b()),
        VAddNcU32 => map2(a, b(), u32::wrapping_add),
        VSubNcU32 => map2(a, b(), u32::wrapping_sub),
        VSubrevNcU32 => map2(a, b(), |x, y| y.wrapping_sub(x)),
        VAndB32 => map2(a, b(), |x, y| x & y),
        VOrB32 => map2(a, b(), |x, y| x | y),
        VXorB32 => map2(a, b(), |x, y| x ^ y),
        VLshlrevB32 => map2(a, b(), |x, y| y << (x & 31)),
        VLshrrevB32 => map2(a, b(), |x, y| y >> (x & 31)),
        VAshrrevI32 => map2(a, b(), |x, y| ((y as i32) >> (x & 31)) as u32),
        VMulLoU32 => map2(a, b(), u32::wrapping_mul),
        VMulU32U24 => map2(a, b(), |x, y| (x & 0xFF_FFFF).wrapping_mul(y & 0xFF_FFFF)),
        VMaxU32 => map2(a, b(), u32::max),
        VMinU32 => map2(a, b(), u32::min),
        VMaxI32 => map2(a, b(), |x, y| (x as i32).max(y as i32) as u32),
        VMinI32 => map2(a, b(), |x, y| (x as i32).min(y as i32) as u32),
        VAdd3U32 => map3(a, b(), c(), |x, y, z| x.wrapping_add(y).wrapping_add(z)),
        VLshlAddU32 => map3(a, b(), c(), |x, y, z| (x << (y & 31)).wrapping_add(z)),
        VAddLshlU32 => map3(a, b(), c(), |x, y, z| x.wrapping_add(y) << (z & 31)),
        VLshlOrB32 => map3(a, b(), c(), |x, y, z| (x << (y & 31)) | z),
        VAndOrB32 => map3(a, b(), c(), |x, y, z| (x & y) | z),
        VOr3B32 => map3(a, b(), c(), |x, y, z| x | y | z),
        VCndmaskB32 => {
            let (y, select) = (b(), c());
            let mut out = [0u32; LANES];
            for lane in 0..LANES {
                out[lane] = if select[lane] >> lane & 1 == 1 { y[lane] } else { a[lane] };
            }
            out
        }
        VCvtF32U32 => map1(a, |x| (x as f32).to_bits()),
        VCvtF32I32 => map1(a, |x| (x as i32 as f32).to_bits()),
        VCvtU32F32 => map1(a, |x| f32::from_bits(x) as u32),
        VCvtI32F32 => map1(a, |x| f32::from_bits(x) as i32 as u32),
        _ => return None,
    })
}

/// Writes `row` to VGPR `vdst` in the lanes of `exec`.
#[inline(always)]
fn write_plain(wave: &mut Wave, vdst: u16, row: Row, exec: u32) {
    let Some(target) = wave.vgpr.get_mut(vdst as usize) else { return };
    if exec == u32::MAX {
        *target = row;
    } else {
        for lane in 0..LANES {
            target[lane] = if exec >> lane & 1 == 1 { row[lane] } else { target[lane] };
        }
    }
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

/// Clamps to [0, 1]; NaN clamps to 0 (RDNA3 ISA guide, "Output modifiers").
fn clamp01(value: f32) -> f32 {
    if value.is_nan() { 0.0 } else { value.clamp(0.0, 1.0) }
}

// Lane maps: one closure over every lane of fixed-size rows, as plain indexed loops (which the
// compiler unrolls and vectorises; `array::from_fn` was not inlined through its closure).
/// A fused multiply-add of f32 rows. Without the FMA instructions (x86-64's baseline), each
/// `f32::mul_add` is a call into a software `fmaf`; where the CPU has them (checked once), the
/// same loop compiled for them is a few vector instructions. Both round once, exactly as IEEE
/// fma does.
#[inline(always)]
fn fma_rows(a: Row, b: Row, c: Row) -> Row {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("fma") && std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has the FMA instructions the function is compiled for (checked
            // just above; the result is cached by the standard library).
            return ordered_nans(unsafe { fma_rows_fma(&a, &b, &c) }, [&a, &b, &c]);
        }
    }
    ordered_nans(f3(a, b, c, f32::mul_add), [&a, &b, &c])
}

/// Which NaN a float operation returns, made independent of the build: where a lane's result is
/// NaN and an operand is, the result is the first NaN operand in the arithmetic's written order
/// (x − y: x first; subrev's y − x: y first; fma(x, y, z)), quieted. That is x86's own rule
/// for its operand order, which a compiler may swap for commutative operations and which the
/// native tier's instructions keep. A NaN made from numbers (∞ − ∞, 0 × ∞) stays the host's.
#[inline(always)]
fn ordered_nans<const N: usize>(mut out: Row, operands: [&Row; N]) -> Row {
    let nan = |bits: u32| bits & 0x7FFF_FFFF > 0x7F80_0000;
    if !out.iter().any(|&bits| nan(bits)) {
        return out;
    }
    for lane in 0..LANES {
        if nan(out[lane])
            && let Some(first) = operands.iter().map(|row| row[lane]).find(|&bits| nan(bits))
        {
            out[lane] = first | 0x0040_0000;
        }
    }
    out
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma,avx2")]
fn fma_rows_fma(a: &Row, b: &Row, c: &Row) -> Row {
    let mut out = [0u32; LANES];
    for lane in 0..LANES {
        out[lane] = f32::from_bits(a[lane]).mul_add(f32::from_bits(b[lane]), f32::from_bits(c[lane])).to_bits();
    }
    out
}

/// A row built lane by lane.
#[inline(always)]
fn lanes<T: Copy + Default>(mut f: impl FnMut(usize) -> T) -> [T; LANES] {
    let mut out = [T::default(); LANES];
    for (lane, value) in out.iter_mut().enumerate() {
        *value = f(lane);
    }
    out
}
#[inline(always)]
fn map1(a: Row, f: impl Fn(u32) -> u32) -> Row {
    let mut out = [0u32; LANES];
    for lane in 0..LANES {
        out[lane] = f(a[lane]);
    }
    out
}
#[inline(always)]
fn map2(a: Row, b: Row, f: impl Fn(u32, u32) -> u32) -> Row {
    let mut out = [0u32; LANES];
    for lane in 0..LANES {
        out[lane] = f(a[lane], b[lane]);
    }
    out
}
#[inline(always)]
fn map3(a: Row, b: Row, c: Row, f: impl Fn(u32, u32, u32) -> u32) -> Row {
    let mut out = [0u32; LANES];
    for lane in 0..LANES {
        out[lane] = f(a[lane], b[lane], c[lane]);
    }
    out
}
#[inline(always)]
fn f1(a: Row, f: impl Fn(f32) -> f32) -> Row {
    map1(a, |x| f(f32::from_bits(x)).to_bits())
}
#[inline(always)]
fn f2(a: Row, b: Row, f: impl Fn(f32, f32) -> f32) -> Row {
    map2(a, b, |x, y| f(f32::from_bits(x), f32::from_bits(y)).to_bits())
}
#[inline(always)]
fn f3(a: Row, b: Row, c: Row, f: impl Fn(f32, f32, f32) -> f32) -> Row {
    map3(a, b, c, |x, y, z| f(f32::from_bits(x), f32::from_bits(y), f32::from_bits(z)).to_bits())
}
#[inline(always)]
fn map64(a: Row64, f: impl Fn(u64) -> u64) -> Row64 {
    let mut out = [0u64; LANES];
    for lane in 0..LANES {
        out[lane] = f(a[lane]);
    }
    out
}
#[inline(always)]
fn d1(a: Row64, f: impl Fn(f64) -> f64) -> Row64 {
    map64(a, |x| f(f64::from_bits(x)).to_bits())
}
#[inline(always)]
fn d2(a: Row64, b: Row64, f: impl Fn(f64, f64) -> f64) -> Row64 {
    let mut out = [0u64; LANES];
    for lane in 0..LANES {
        out[lane] = f(f64::from_bits(a[lane]), f64::from_bits(b[lane])).to_bits();
    }
    out
}
#[inline(always)]
fn d3(a: Row64, b: Row64, c: Row64, f: impl Fn(f64, f64, f64) -> f64) -> Row64 {
    let mut out = [0u64; LANES];
    for lane in 0..LANES {
        out[lane] = f(f64::from_bits(a[lane]), f64::from_bits(b[lane]), f64::from_bits(c[lane])).to_bits();
    }
    out
}
/// f16 operations, computed in f32 (exact for one operation of f16 values) and rounded once.
#[inline(always)]
fn h1(a: Row, f: impl Fn(f32) -> f32) -> Row {
    map1(a, |x| to_h(f(h(x))))
}
#[inline(always)]
fn h2(a: Row, b: Row, f: impl Fn(f32, f32) -> f32) -> Row {
    map2(a, b, |x, y| to_h(f(h(x), h(y))))
}
#[inline(always)]
pub(crate) fn h(bits: u32) -> f32 {
    // Every f16 is an f32: its exponent and mantissa bits, shifted into f32's places, are the
    // value times 2^-112 (denormals included, as f32 normals or denormals), so one exact multiply
    // rescales them; infinities and NaNs keep their payload. (half's `to_f32` checks the CPU's
    // features on every call.)
    let sign = (bits & 0x8000) << 16;
    let magnitude = bits & 0x7FFF;
    if magnitude >= 0x7C00 {
        return f32::from_bits(sign | 0x7F80_0000 | (magnitude & 0x3FF) << 13);
    }
    let scaled = f32::from_bits(magnitude << 13) * f32::from_bits((127 + 112) << 23);
    f32::from_bits(scaled.to_bits() | sign)
}
/// f32 to f16 bits, rounded once to nearest even (f32 to f64 is exact).
#[inline(always)]
pub(crate) fn to_h(value: f32) -> u32 {
    to_h64(value as f64)
}
/// f64 to f16 bits, rounded once to nearest even. (half's `from_f64` goes through f32 on CPUs
/// with F16C, rounding twice, and checks the CPU's features on every call.)
#[inline(always)]
fn to_h64(value: f64) -> u32 {
    let sign = ((value.to_bits() >> 48) & 0x8000) as u32;
    let magnitude = value.abs();
    if magnitude.is_nan() {
        // Quiet, with the payload's top bits (min and max return an operand NaN as it was,
        // quieted: RDNA3 ISA guide, V_MAX_F16).
        return sign | 0x7E00 | ((value.to_bits() >> 42) & 0x3FF) as u32;
    }
    // Past the midpoint between the largest f16 (65504) and 2^16, nearest even is infinity.
    if magnitude >= 65520.0 {
        return sign | 0x7C00;
    }
    // Nearest even of a non-negative value below 2^52: (y + 2^52) − 2^52, exact otherwise.
    let nearest = |y: f64| (y + 4503599627370496.0) - 4503599627370496.0;
    if magnitude < f64::from_bits(0x3F10_0000_0000_0000) {
        // Below 2^-14: multiples of 2^-24 (1024 of them is the smallest normal, 0x0400).
        return sign | nearest(magnitude * 16777216.0) as u32;
    }
    let exponent = ((magnitude.to_bits() >> 52) & 0x7FF) as i32 - 1023;
    // The value in units of its f16 quantum, 2^(exponent − 10): 1024 to 2048 after rounding.
    let units = nearest(magnitude * f64::from_bits(((1023 + 10 - exponent) as u64) << 52)) as u32;
    let (exponent, units) = if units == 2048 { (exponent + 1, 1024) } else { (exponent, units) };
    sign | ((exponent + 15) as u32) << 10 | (units - 1024)
}
/// A fused multiply-add of f16 values: exact in f64, rounded once to f16.
#[inline(always)]
fn hfma(a: u32, b: u32, c: u32) -> u32 {
    let value = (h(a) as f64).mul_add(h(b) as f64, h(c) as f64);
    to_h64(value)
}
/// A packed operation: each 16-bit half of the (already op_sel-arranged) operands.
#[inline(always)]
fn pk2(a: Row, b: Row, f: impl Fn(u32, u32) -> u32) -> Row {
    map2(a, b, |x, y| (f(x & 0xFFFF, y & 0xFFFF) & 0xFFFF) | f(x >> 16, y >> 16) << 16)
}
#[inline(always)]
fn pk3(a: Row, b: Row, c: Row, f: impl Fn(u32, u32, u32) -> u32) -> Row {
    map3(a, b, c, |x, y, z| (f(x & 0xFFFF, y & 0xFFFF, z & 0xFFFF) & 0xFFFF) | f(x >> 16, y >> 16, z >> 16) << 16)
}
#[inline(always)]
fn wide(row: Row) -> Row64 {
    let mut out = [0u64; LANES];
    for lane in 0..LANES {
        out[lane] = row[lane] as u64;
    }
    out
}

/// The sum of the absolute differences of `x`'s and `y`'s bytes; `masked` skips a byte where `y`'s
/// is 0 (V_SAD_U8, V_MSAD_U8).
fn sad_u8(x: u32, y: u32, masked: bool) -> u32 {
    (0..4)
        .map(|i| {
            let (p, q) = ((x >> (8 * i)) as u8, (y >> (8 * i)) as u8);
            if masked && q == 0 { 0 } else { p.abs_diff(q) as u32 }
        })
        .sum()
}

fn med3<T: PartialOrd + Copy>(a: T, b: T, c: T) -> T {
    let (low, high) = if a < b { (a, b) } else { (b, a) };
    if c < low {
        low
    } else if c > high {
        high
    } else {
        c
    }
}

/// `V_MIN_*`/`V_MAX_*` (RDNA3 ISA guide's pseudocode, every width): in IEEE mode a signaling NaN
/// operand is returned quieted (S0's first); otherwise a NaN yields the other operand; −0 is
/// below +0; a tie takes S0 for max and S1 for min.
macro_rules! min_max {
    ($select:ident, $min:ident, $max:ident, $float:ty, $bits:ty, $quiet:expr) => {
        /// Min (`max` false) or max of `a` and `b`, S0 and S1.
        #[inline(always)]
        fn $select(a: $float, b: $float, ieee: bool, max: bool) -> $float {
            let quiet: $bits = $quiet;
            let signaling = |x: $float| x.is_nan() && x.to_bits() & quiet == 0;
            if ieee && signaling(a) {
                return <$float>::from_bits(a.to_bits() | quiet);
            }
            if ieee && signaling(b) {
                return <$float>::from_bits(b.to_bits() | quiet);
            }
            if a.is_nan() {
                return b;
            }
            if b.is_nan() {
                return a;
            }
            if a == 0.0 && b == 0.0 {
                // −0 below +0: min takes the negative zero, max the positive one.
                return if a.is_sign_negative() != max { a } else { b };
            }
            if max {
                if a >= b { a } else { b }
            } else if a < b {
                a
            } else {
                b
            }
        }
        fn $min(a: $float, b: $float, ieee: bool) -> $float {
            $select(a, b, ieee, false)
        }
        fn $max(a: $float, b: $float, ieee: bool) -> $float {
            $select(a, b, ieee, true)
        }
    };
}

min_max!(min_max32, fmin, fmax, f32, u32, 0x0040_0000);
min_max!(min_max64, fmin64, fmax64, f64, u64, 0x0008_0000_0000_0000);

fn fmed3(a: f32, b: f32, c: f32, ieee: bool) -> f32 {
    if a.is_nan() || b.is_nan() || c.is_nan() {
        return fmin(fmin(a, b, ieee), c, ieee);
    }
    fmax(fmin(a, b, ieee), fmin(fmax(a, b, ieee), c, ieee), ieee)
}

/// `V_FRACT`: x − floor(x), below 1.0; NaN stays NaN and infinity gives NaN (RDNA3 ISA guide;
/// LLVM's gfx6 `v_fract_f64` workaround returns the input for NaN to match later chips).
fn fract32(x: f32) -> f32 {
    if x.is_nan() {
        x
    } else if x.is_infinite() {
        f32::NAN
    } else {
        (x - x.floor()).min(f32::from_bits(0x3F7F_FFFF))
    }
}
fn fract64(x: f64) -> f64 {
    if x.is_nan() {
        x
    } else if x.is_infinite() {
        f64::NAN
    } else {
        (x - x.floor()).min(f64::from_bits(0x3FEF_FFFF_FFFF_FFFF))
    }
}
fn fract16(x: f32) -> f32 {
    if x.is_nan() {
        x
    } else if x.is_infinite() {
        f32::NAN
    } else {
        (x - x.floor()).min(h(0x3BFF))
    }
}

/// `frexp`: the mantissa in [0.5, 1) and the exponent; NaN and infinity give themselves and 0.
fn frexp(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7FF) as i32;
    if exponent == 0 {
        let (mantissa, e) = frexp(x * 2f64.powi(64));
        return (mantissa, e - 64);
    }
    (f64::from_bits((bits & !(0x7FF << 52)) | (1022 << 52)), exponent - 1022)
}

fn ldexp32(x: f32, e: i32) -> f32 {
    ldexp64(x as f64, e) as f32
}
fn ldexp64(x: f64, e: i32) -> f64 {
    // One multiplication by an exact power of two, so a result in the subnormal range is rounded
    // once (scaling in steps would round twice): x = m · 2^ex with m in [0.5, 1).
    let (mantissa, exponent) = frexp(x);
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    match exponent.saturating_add(e) {
        // m · 2^n ≥ 2^1024: past the largest finite.
        n if n > 1024 => f64::INFINITY.copysign(x),
        // Below half the smallest subnormal (m < 1): rounds to zero.
        n if n < -1074 => 0.0f64.copysign(x),
        // 2^1024 is past the range where m · 2^1024 (m < 1) is not: split it.
        1024 => mantissa * 2.0 * power_of_two(1023),
        n => mantissa * power_of_two(n),
    }
}

/// 2^n, exactly, for n in −1074..=1023 (built from its bits: `powi` divides by 2^−n, which
/// overflows to a zero quotient below −1023).
fn power_of_two(n: i32) -> f64 {
    debug_assert!((-1074..=1023).contains(&n));
    if n >= -1022 { f64::from_bits(((n + 1023) as u64) << 52) } else { f64::from_bits(1u64 << (n + 1074)) }
}

/// `V_SIN_F32`/`V_COS_F32` take their angle in revolutions (the input is multiplied by 2π by
/// the hardware; RDNA3 ISA guide).
fn sin_revolutions(x: f32) -> f32 {
    let turns = (x as f64) - (x as f64).round();
    (turns * core::f64::consts::TAU).sin() as f32
}
fn cos_revolutions(x: f32) -> f32 {
    let turns = (x as f64) - (x as f64).round();
    (turns * core::f64::consts::TAU).cos() as f32
}

/// The `v_cmp_class` mask bit of a value (RDNA3 ISA guide, `V_CMP_CLASS_F32`): 0 signaling
/// NaN, 1 quiet NaN, 2–5 negative infinity, normal, denormal and zero, 6–9 their positives.
fn class_bits(x: f64, is_denormal: bool, is_signaling: bool) -> u32 {
    let negative = x.is_sign_negative();
    if x.is_nan() {
        return if is_signaling { 1 } else { 2 };
    }
    let bit = if x.is_infinite() {
        if negative { 2 } else { 9 }
    } else if x == 0.0 {
        if negative { 5 } else { 6 }
    } else if is_denormal {
        if negative { 4 } else { 7 }
    } else if negative {
        3
    } else {
        8
    };
    1 << bit
}

/// A mask bit per lane where `f` holds.
#[inline(always)]
fn mask(f: impl Fn(usize) -> bool) -> u32 {
    (0..LANES).fold(0, |mask, lane| mask | (f(lane) as u32) << lane)
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
        let out = match moded(wave, op, mode) {
            Some(out) => out,
            // A directed rounding this operation's result would take is not modelled: it fails
            // (Unsupported, naming it) rather than round to nearest silently.
            None if mode & 0xF != 0 && rounds_by_mode_unmodelled(op.opcode) => return None,
            None => ieee(wave, op)?,
        };
        return Some(flush_output(op, out, mode));
    }
    ieee(wave, op)
}

/// One lane of the f32 division sequence's helpers: `v_div_scale_f32` (the scaled operand and
/// its VCC bit), `v_div_fmas_f32` (reading the lane's VCC bit) and `v_div_fixup_f32`. (The
/// native tier computes ordinary lanes in vectors and leaves the rest to this, through the
/// interpreter's step: `native::checked::division`.)
pub(crate) fn division_lane_f32(opcode: Opcode, x: f32, y: f32, z: f32, vcc: bool) -> (f32, bool) {
    match opcode {
        Opcode::VDivScaleF32 => div_scale32(x, y, z),
        Opcode::VDivFmasF32 => (div_fmas32(x, y, z, vcc), false),
        _ => (div_fixup(x as f64, y as f64, z as f64, FloatWidth::F32) as f32, false),
    }
}

/// The one-source f32 operations whose lane result is a function of that lane's source alone
/// (MODE aside, which the caller applies): the interpreter maps the function over a row, and
/// the native tier calls the same function over a row (`native::frame::map_row`), so the two
/// tiers compute every lane with one piece of code, libm's transcendentals included.
pub(crate) fn lane_function_f32(opcode: Opcode) -> Option<fn(f32) -> f32> {
    use Opcode::*;
    Some(match opcode {
        VSqrtF32 => f32::sqrt,
        VRsqF32 => |x| (1.0 / (x as f64).sqrt()) as f32,
        VExpF32 => f32::exp2,
        VLogF32 => f32::log2,
        VSinF32 => sin_revolutions,
        VCosF32 => cos_revolutions,
        VFractF32 => fract32,
        VFrexpMantF32 => |x| frexp(x as f64).0 as f32,
        _ => return None,
    })
}

/// The operation under MODE's defaults: IEEE arithmetic, nearest even, denormals kept.
#[cfg_attr(not(debug_assertions), inline(always))]
fn ieee(wave: &mut Wave, op: &VOp) -> Option<Out> {
    if let Form::Compare { condition, ty, into_exec } = op.form {
        return Some(compare(wave, op, condition, ty, into_exec));
    }
    if op.encoding == Encoding::Vop3p {
        return packed(wave, op);
    }
    let a = || op.read(wave, 0);
    let b = || op.read(wave, 1);
    let c = || op.read(wave, 2);
    let a64 = || op.read64(wave, 0);
    let b64 = || op.read64(wave, 1);
    let c64 = || op.read64(wave, 2);
    let clamp = op.operands.clamp;
    let literal = op.operands.literal;
    let ieee = wave.mode & MODE_IEEE != 0;
    let vdst = || wave.vgpr.get(op.operands.vdst as usize).copied().unwrap_or([0; LANES]);
    use Opcode::*;
    if !(clamp && matches!(op.opcode, Opcode::VAddNcU32 | Opcode::VSubNcU32))
        && let Some(row) = common_row(op.opcode, a(), b, c, vdst, literal, ieee)
    {
        return Some(Out::B32(row));
    }
    let row = match op.opcode {
        VNop | VPipeflush => return Some(Out::Done),
        VMovB16 => a(),
        // Lane-crossing and scalar-writing operations write for themselves.
        // These see the whole wave: a wave64 wave runs them once, from its low half, and they
        // reach lanes 32–63 in the other half's rows.
        VReadfirstlaneB32 => {
            let exec = wave.mask64(EXEC);
            let lane = if exec == 0 { 0 } else { exec.trailing_zeros() as usize };
            let value = lane_of(wave, op, lane);
            wave.write_sgpr(readlane_destination(op), value);
            return Some(Out::Done);
        }
        VReadlaneB32 => {
            let lane = b()[0] as usize % wave.lanes();
            let value = lane_of(wave, op, lane);
            wave.write_sgpr(readlane_destination(op), value);
            return Some(Out::Done);
        }
        VWritelaneB32 => {
            let lane = b()[0] as usize % wave.lanes();
            let value = a()[0];
            wave.set_lane_value(op.operands.vdst as u32, lane, value);
            return Some(Out::Done);
        }
        // Wave64 only: each half reads the other's lanes (RDNA3 ISA guide). A wave32 wave has
        // no other half; the instruction is wave64's.
        VPermlane64B32 => {
            if !wave.wide {
                return None;
            }
            let super::operands::Source::Vgpr(source) = op.operands.src[0] else { return None };
            let exec = wave.mask64(EXEC);
            let values: [u32; 2 * LANES] = core::array::from_fn(|lane| wave.lane_value(source as u32, lane ^ LANES));
            for lane in (0..2 * LANES).filter(|lane| exec >> lane & 1 == 1) {
                wave.set_lane_value(op.operands.vdst as u32, lane, values[lane]);
            }
            return Some(Out::Done);
        }
        VPermlane16B32 | VPermlanex16B32 => return Some(permlane(wave, op)),
        VSwapB32 => {
            let (source, target) = (a(), vdst());
            let exec = wave.exec();
            if let super::operands::Source::Vgpr(register) = op.operands.src[0] {
                for lane in (0..LANES).filter(|lane| exec >> lane & 1 == 1) {
                    wave.write_vgpr(register as u32, lane, target[lane]);
                }
            }
            source
        }
        VMovrelsB32 | VMovreldB32 | VMovrelsdB32 | VMovrelsd2B32 | VSwaprelB32 => return movrel(wave, op),
        // Bitwise and shifts.
        VXnorB32 => map2(a(), b(), |x, y| !(x ^ y)),
        VNotB32 => map1(a(), |x| !x),
        VAndB16 => map2(a(), b(), |x, y| x & y),
        VOrB16 => map2(a(), b(), |x, y| x | y),
        VXorB16 => map2(a(), b(), |x, y| x ^ y),
        VNotB16 => map1(a(), |x| !x),
        VBfrevB32 => map1(a(), u32::reverse_bits),
        VLshlrevB16 => map2(a(), b(), |x, y| (y << (x & 15)) & 0xFFFF),
        VLshrrevB16 => map2(a(), b(), |x, y| (y & 0xFFFF) >> (x & 15)),
        VAshrrevI16 => map2(a(), b(), |x, y| ((y as i16) >> (x & 15)) as u16 as u32),
        VLshlrevB64 | VLshrrevB64 | VAshrrevI64 => {
            let (shift, value) = (a(), b64());
            let mut out = [0u64; LANES];
            for lane in 0..LANES {
                let (x, y) = (shift[lane] & 63, value[lane]);
                out[lane] = match op.opcode {
                    VLshlrevB64 => y << x,
                    VLshrrevB64 => y >> x,
                    _ => ((y as i64) >> x) as u64,
                };
            }
            return Some(Out::B64(out));
        }
        VXor3B32 => map3(a(), b(), c(), |x, y, z| x ^ y ^ z),
        VXadU32 => map3(a(), b(), c(), |x, y, z| (x ^ y).wrapping_add(z)),
        VBfeU32 => map3(a(), b(), c(), |x, y, z| {
            let (offset, size) = (y & 31, z & 31);
            if size == 0 { 0 } else { (x >> offset) & ((1u32 << size) - 1) }
        }),
        VBfeI32 => map3(a(), b(), c(), |x, y, z| {
            let (offset, size) = (y & 31, z & 31);
            if size == 0 { 0 } else { ((((x >> offset) << (32 - size)) as i32) >> (32 - size)) as u32 }
        }),
        VBfiB32 => map3(a(), b(), c(), |x, y, z| (x & y) | (!x & z)),
        VBfmB32 => map2(a(), b(), |x, y| (((1u64 << (x & 31)) - 1) << (y & 31)) as u32),
        VAlignbitB32 => map3(a(), b(), c(), |x, y, z| (((x as u64) << 32 | y as u64) >> (z & 31)) as u32),
        VAlignbyteB32 => map3(a(), b(), c(), |x, y, z| (((x as u64) << 32 | y as u64) >> (8 * (z & 3))) as u32),
        VPermB32 => map3(a(), b(), c(), perm),
        VBcntU32B32 => map2(a(), b(), |x, y| x.count_ones().wrapping_add(y)),
        VClzI32U32 => map1(a(), |x| if x == 0 { u32::MAX } else { x.leading_zeros() }),
        VCtzI32B32 => map1(a(), |x| if x == 0 { u32::MAX } else { x.trailing_zeros() }),
        VClsI32 => map1(a(), |x| {
            let leading = if (x as i32) < 0 { (!x).leading_zeros() } else { x.leading_zeros() };
            if x == 0 || x == u32::MAX { u32::MAX } else { leading }
        }),
        // The bits of the mask's low (high) 32 below the lane's position in the wave: lanes
        // 32–63 of a wave64 wave count all of the low half, and only they count any of the high.
        VMbcntLoU32B32 => {
            let (x, y) = (a(), b());
            let mut out = [0u32; LANES];
            for lane in 0..LANES {
                let below = if wave.half == 0 { ((1u64 << lane) - 1) as u32 } else { u32::MAX };
                out[lane] = (x[lane] & below).count_ones().wrapping_add(y[lane]);
            }
            out
        }
        VMbcntHiU32B32 => {
            if wave.half == 0 {
                b()
            } else {
                let (x, y) = (a(), b());
                let mut out = [0u32; LANES];
                for lane in 0..LANES {
                    out[lane] = (x[lane] & ((1u64 << lane) - 1) as u32).count_ones().wrapping_add(y[lane]);
                }
                out
            }
        }
        VCndmaskB16 => {
            let (x, y, select) = (a(), b(), c());
            let mut out = [0u32; LANES];
            for lane in 0..LANES {
                out[lane] = if select[lane] >> lane & 1 == 1 { y[lane] } else { x[lane] };
            }
            out
        }
        // Integer arithmetic.
        VAddNcU32 if clamp => map2(a(), b(), u32::saturating_add),
        VSubNcU32 if clamp => map2(a(), b(), u32::saturating_sub),
        VAddNcI32 if clamp => map2(a(), b(), |x, y| (x as i32).saturating_add(y as i32) as u32),
        VAddNcI32 => map2(a(), b(), u32::wrapping_add),
        VSubNcI32 if clamp => map2(a(), b(), |x, y| (x as i32).saturating_sub(y as i32) as u32),
        VSubNcI32 => map2(a(), b(), u32::wrapping_sub),
        VAddNcU16 if clamp => map2(a(), b(), |x, y| (x as u16).saturating_add(y as u16) as u32),
        VAddNcU16 => map2(a(), b(), u32::wrapping_add),
        VSubNcU16 if clamp => map2(a(), b(), |x, y| (x as u16).saturating_sub(y as u16) as u32),
        VSubNcU16 => map2(a(), b(), u32::wrapping_sub),
        VAddNcI16 if clamp => map2(a(), b(), |x, y| (x as i16).saturating_add(y as i16) as u16 as u32),
        VAddNcI16 => map2(a(), b(), u32::wrapping_add),
        VSubNcI16 if clamp => map2(a(), b(), |x, y| (x as i16).saturating_sub(y as i16) as u16 as u32),
        VSubNcI16 => map2(a(), b(), u32::wrapping_sub),
        VMulLoU16 => map2(a(), b(), u32::wrapping_mul),
        VMadU16 => map3(a(), b(), c(), |x, y, z| x.wrapping_mul(y).wrapping_add(z)),
        VMadI16 => map3(a(), b(), c(), |x, y, z| x.wrapping_mul(y).wrapping_add(z)),
        VMadU32U16 => map3(a(), b(), c(), |x, y, z| (x & 0xFFFF).wrapping_mul(y & 0xFFFF).wrapping_add(z)),
        VMadI32I16 => {
            map3(a(), b(), c(), |x, y, z| ((x as i16 as i32).wrapping_mul(y as i16 as i32) as u32).wrapping_add(z))
        }
        VMinU16 => map2(a(), b(), |x, y| (x as u16).min(y as u16) as u32),
        VMaxU16 => map2(a(), b(), |x, y| (x as u16).max(y as u16) as u32),
        VMinI16 => map2(a(), b(), |x, y| (x as i16).min(y as i16) as u16 as u32),
        VMaxI16 => map2(a(), b(), |x, y| (x as i16).max(y as i16) as u16 as u32),
        VMin3U16 => map3(a(), b(), c(), |x, y, z| (x as u16).min(y as u16).min(z as u16) as u32),
        VMax3U16 => map3(a(), b(), c(), |x, y, z| (x as u16).max(y as u16).max(z as u16) as u32),
        VMed3U16 => map3(a(), b(), c(), |x, y, z| med3(x as u16, y as u16, z as u16) as u32),
        VMin3I16 => map3(a(), b(), c(), |x, y, z| (x as i16).min(y as i16).min(z as i16) as u16 as u32),
        VMax3I16 => map3(a(), b(), c(), |x, y, z| (x as i16).max(y as i16).max(z as i16) as u16 as u32),
        VMed3I16 => map3(a(), b(), c(), |x, y, z| med3(x as i16, y as i16, z as i16) as u16 as u32),
        VCvtI32I16 => map1(a(), |x| x as i16 as i32 as u32),
        VCvtU32U16 => map1(a(), |x| x & 0xFFFF),
        VMulHiU32 => map2(a(), b(), |x, y| ((x as u64 * y as u64) >> 32) as u32),
        VMulHiI32 => map2(a(), b(), |x, y| ((x as i32 as i64 * y as i32 as i64) >> 32) as u32),
        VMulHiU32U24 => map2(a(), b(), |x, y| (((x & 0xFF_FFFF) as u64 * (y & 0xFF_FFFF) as u64) >> 32) as u32),
        VMulI32I24 => map2(a(), b(), |x, y| (i24(x).wrapping_mul(i24(y))) as u32),
        VMulHiI32I24 => map2(a(), b(), |x, y| ((i24(x) as i64 * i24(y) as i64) >> 32) as u32),
        VMadU32U24 => map3(a(), b(), c(), |x, y, z| (x & 0xFF_FFFF).wrapping_mul(y & 0xFF_FFFF).wrapping_add(z)),
        VMadI32I24 => map3(a(), b(), c(), |x, y, z| (i24(x).wrapping_mul(i24(y)) as u32).wrapping_add(z)),
        VMin3U32 => map3(a(), b(), c(), |x, y, z| x.min(y).min(z)),
        VMax3U32 => map3(a(), b(), c(), |x, y, z| x.max(y).max(z)),
        VMed3U32 => map3(a(), b(), c(), med3),
        VMin3I32 => map3(a(), b(), c(), |x, y, z| (x as i32).min(y as i32).min(z as i32) as u32),
        VMax3I32 => map3(a(), b(), c(), |x, y, z| (x as i32).max(y as i32).max(z as i32) as u32),
        VMed3I32 => map3(a(), b(), c(), |x, y, z| med3(x as i32, y as i32, z as i32) as u32),
        VMaxminU32 => map3(a(), b(), c(), |x, y, z| x.max(y).min(z)),
        VMinmaxU32 => map3(a(), b(), c(), |x, y, z| x.min(y).max(z)),
        VMaxminI32 => map3(a(), b(), c(), |x, y, z| (x as i32).max(y as i32).min(z as i32) as u32),
        VMinmaxI32 => map3(a(), b(), c(), |x, y, z| (x as i32).min(y as i32).max(z as i32) as u32),
        VSadU32 => map3(a(), b(), c(), |x, y, z| x.abs_diff(y).wrapping_add(z)),
        VSadU8 => map3(a(), b(), c(), |x, y, z| sad_u8(x, y, false).wrapping_add(z)),
        VSadHiU8 => map3(a(), b(), c(), |x, y, z| (sad_u8(x, y, false) << 16).wrapping_add(z)),
        VMsadU8 => map3(a(), b(), c(), |x, y, z| sad_u8(x, y, true).wrapping_add(z)),
        VSadU16 => map3(a(), b(), c(), |x, y, z| {
            let half = |shift: u32| ((x >> shift) as u16).abs_diff((y >> shift) as u16) as u32;
            (half(0) + half(16)).wrapping_add(z)
        }),
        // Each byte the rounded average of the two sources' (RDNA3 ISA guide, V_LERP_U8: bit 8i
        // of S2 rounds byte i up).
        VLerpU8 => map3(a(), b(), c(), |x, y, z| {
            (0..4).fold(0, |out, i| {
                let byte = |v: u32| (v >> (8 * i)) & 0xFF;
                out | ((byte(x) + byte(y) + ((z >> (8 * i)) & 1)) >> 1) << (8 * i)
            })
        }),
        // Four SADs of S1's bytes against S0's 64 bits at byte offsets 0 to 3, each plus S2's
        // 16-bit field and kept to 16 bits (V_QSAD_PK_U16_U8; masked: V_MQSAD_PK_U16_U8).
        VQsadPkU16U8 | VMqsadPkU16U8 => {
            let masked = op.opcode == VMqsadPkU16U8;
            let (x, y, z) = (a64(), b(), c64());
            return Some(Out::B64(lanes(|lane| {
                (0..4).fold(0u64, |out, k| {
                    let window = (x[lane] >> (8 * k)) as u32;
                    let sum = sad_u8(window, y[lane], masked).wrapping_add((z[lane] >> (16 * k)) as u32 & 0xFFFF);
                    out | ((sum & 0xFFFF) as u64) << (16 * k)
                })
            })));
        }
        VCvtPkU16U32 => map2(a(), b(), |x, y| (x & 0xFFFF) | y << 16),
        VCvtPkI16I32 => map2(a(), b(), |x, y| {
            let s = |v: u32| (v as i32).clamp(i16::MIN as i32, i16::MAX as i32) as u16 as u32;
            s(x) | s(y) << 16
        }),
        // Carry operations write a lane mask to sdst as well.
        VAddCoU32 | VSubCoU32 | VSubrevCoU32 | VAddCoCiU32 | VSubCoCiU32 | VSubrevCoCiU32 => {
            let (x, y) = (a(), b());
            let carry_in = if matches!(op.opcode, VAddCoCiU32 | VSubCoCiU32 | VSubrevCoCiU32) { c()[0] } else { 0 };
            let mut carry = 0u32;
            let row = lanes(|lane| {
                let cin = (carry_in >> lane & 1) as u64;
                let (x, y) = (x[lane] as u64, y[lane] as u64);
                let (value, out) = match op.opcode {
                    VAddCoU32 | VAddCoCiU32 => {
                        let sum = x + y + cin;
                        (sum, sum >> 32 != 0)
                    }
                    VSubCoU32 | VSubCoCiU32 => (x.wrapping_sub(y + cin), y + cin > x),
                    _ => (y.wrapping_sub(x + cin), x + cin > y),
                };
                carry |= (out as u32) << lane;
                value as u32
            });
            return Some(Out::Carry(row, carry));
        }
        VMadU64U32 | VMadI64I32 => {
            let (x, y, z) = (a(), b(), c64());
            let mut carry = 0u32;
            let row = lanes(|lane| {
                let (value, overflow) = if op.opcode == VMadU64U32 {
                    (x[lane] as u64 * y[lane] as u64).overflowing_add(z[lane])
                } else {
                    // The carry out is bit 64 of the 65-bit signed sum (RDNA3 ISA guide,
                    // V_MAD_I64_I32: `{ D1.i1, D0.i64 } = 65'I(S0.i32 * S1.i32 + S2.i64)`).
                    let exact = x[lane] as i32 as i128 * y[lane] as i32 as i128 + z[lane] as i64 as i128;
                    (exact as u64, (exact >> 64) & 1 == 1)
                };
                carry |= (overflow as u32) << lane;
                value
            });
            return Some(Out::Carry64(row, carry));
        }
        // f32.
        // DX9 rules: 0 × anything (NaN and infinity included) is 0.
        VMulDx9ZeroF32 => f2(a(), b(), |x, y| if x == 0.0 || y == 0.0 { 0.0 } else { x * y }),
        VFmaDx9ZeroF32 => f3(a(), b(), c(), |x, y, z| if x == 0.0 || y == 0.0 { z } else { x.mul_add(y, z) }),
        VFmacDx9ZeroF32 => f3(a(), b(), vdst(), |x, y, z| if x == 0.0 || y == 0.0 { z } else { x.mul_add(y, z) }),
        VMin3F32 => f3(a(), b(), c(), |x, y, z| fmin(fmin(x, y, ieee), z, ieee)),
        VMax3F32 => f3(a(), b(), c(), |x, y, z| fmax(fmax(x, y, ieee), z, ieee)),
        VMed3F32 => f3(a(), b(), c(), |x, y, z| fmed3(x, y, z, ieee)),
        VMaxminF32 => f3(a(), b(), c(), |x, y, z| fmin(fmax(x, y, ieee), z, ieee)),
        VMinmaxF32 => f3(a(), b(), c(), |x, y, z| fmax(fmin(x, y, ieee), z, ieee)),
        VRcpF32 | VRcpIflagF32 => f1(a(), |x| 1.0 / x),
        opcode if lane_function_f32(opcode).is_some() => {
            f1(a(), lane_function_f32(opcode).expect("the guard found the function"))
        }
        VTruncF32 => f1(a(), f32::trunc),
        VFloorF32 => f1(a(), f32::floor),
        VCeilF32 => f1(a(), f32::ceil),
        VRndneF32 => f1(a(), f32::round_ties_even),
        VFrexpExpI32F32 => map1(a(), |x| frexp(f32::from_bits(x) as f64).1 as u32),
        VLdexpF32 => map2(a(), b(), |x, y| ldexp32(f32::from_bits(x), y as i32).to_bits()),
        VCvtNearestI32F32 => map1(a(), |x| (f32::from_bits(x) + 0.5).floor() as i32 as u32),
        VCvtFloorI32F32 => map1(a(), |x| f32::from_bits(x).floor() as i32 as u32),
        VCvtOffF32I4 => map1(a(), |x| ((((x & 15) as i32) << 28 >> 28) as f32 / 16.0).to_bits()),
        VCvtF32Ubyte0 => map1(a(), |x| ((x & 0xFF) as f32).to_bits()),
        VCvtF32Ubyte1 => map1(a(), |x| (((x >> 8) & 0xFF) as f32).to_bits()),
        VCvtF32Ubyte2 => map1(a(), |x| (((x >> 16) & 0xFF) as f32).to_bits()),
        VCvtF32Ubyte3 => map1(a(), |x| ((x >> 24) as f32).to_bits()),
        VCvtPkU8F32 => map3(a(), b(), c(), |x, y, z| {
            let byte = (f32::from_bits(x).round_ties_even() as u32).min(255);
            let shift = 8 * (y & 3);
            (z & !(0xFF << shift)) | byte << shift
        }),
        VCvtPkRtzF16F32 => map2(a(), b(), |x, y| f16_toward_zero(x) | f16_toward_zero(y) << 16),
        // Each f32 toward zero to 16 bits, saturated, NaN to 0 (V_CVT_PK_I16_F32, _U16_F32).
        VCvtPkI16F32 => map2(a(), b(), |x, y| {
            let convert =
                |v: u32| f32::from_bits(v).trunc().clamp(i16::MIN as f32, i16::MAX as f32) as i16 as u16 as u32;
            convert(x) | convert(y) << 16
        }),
        VCvtPkU16F32 => map2(a(), b(), |x, y| {
            let convert = |v: u32| f32::from_bits(v).trunc().clamp(0.0, u16::MAX as f32) as u16 as u32;
            convert(x) | convert(y) << 16
        }),
        // The cubemap face of (x, y, z) = (S0, S1, S2) and its coordinates (RDNA3 ISA guide,
        // V_CUBEID_F32 and siblings): z's face where |z| is largest, then y's, then x's.
        VCubeidF32 | VCubescF32 | VCubetcF32 | VCubemaF32 => f3(a(), b(), c(), |x, y, z| {
            let face = if z.abs() >= x.abs() && z.abs() >= y.abs() {
                2
            } else if y.abs() >= x.abs() {
                1
            } else {
                0
            };
            let negative = [x, y, z][face] < 0.0;
            match (op.opcode, face) {
                (VCubeidF32, _) => (2 * face + negative as usize) as f32,
                (VCubescF32, 2) => {
                    if negative {
                        -x
                    } else {
                        x
                    }
                }
                (VCubescF32, 1) => x,
                (VCubescF32, _) => {
                    if negative {
                        z
                    } else {
                        -z
                    }
                }
                (VCubetcF32, 1) => {
                    if negative {
                        -z
                    } else {
                        z
                    }
                }
                (VCubetcF32, _) => -y,
                (_, face) => [x, y, z][face] * 2.0,
            }
        }),
        // Legacy lighting's multiply: -MAX_FLOAT where S1 is -MAX_FLOAT, -inf or NaN or S2 is at
        // most 0 or NaN (RDNA3 ISA guide, V_MULLIT_F32).
        VMullitF32 => f3(a(), b(), c(), |x, y, z| {
            if y == -f32::MAX || y == f32::NEG_INFINITY || y.is_nan() || z <= 0.0 || z.is_nan() {
                -f32::MAX
            } else {
                x * y
            }
        }),
        VCvtPkNormI16F32 => map2(a(), b(), |x, y| norm_i16(f32::from_bits(x)) | norm_i16(f32::from_bits(y)) << 16),
        VCvtPkNormU16F32 => map2(a(), b(), |x, y| norm_u16(f32::from_bits(x)) | norm_u16(f32::from_bits(y)) << 16),
        VDivFmasF32 | VDivFixupF32 | VDivScaleF32 => {
            let (x, y, z, vcc) = (a(), b(), c(), wave.sgpr[wave.mask_register(VCC) as usize]);
            let mut flags = 0u32;
            let row = lanes(|lane| {
                let [x, y, z] = [x[lane], y[lane], z[lane]].map(f32::from_bits);
                let (value, flag) = division_lane_f32(op.opcode, x, y, z, vcc >> lane & 1 == 1);
                flags |= (flag as u32) << lane;
                value.to_bits()
            });
            if op.opcode == VDivScaleF32 {
                return Some(Out::Carry(row, flags));
            }
            row
        }
        // f64.
        VAddF64 => return Some(Out::B64(d2(a64(), b64(), |x, y| x + y))),
        VMulF64 => return Some(Out::B64(d2(a64(), b64(), |x, y| x * y))),
        VFmaF64 => return Some(Out::B64(d3(a64(), b64(), c64(), f64::mul_add))),
        VMinF64 => return Some(Out::B64(d2(a64(), b64(), |x, y| fmin64(x, y, ieee)))),
        VMaxF64 => return Some(Out::B64(d2(a64(), b64(), |x, y| fmax64(x, y, ieee)))),
        VTrigPreopF64 => {
            let (x, y) = (a64(), b());
            return Some(Out::B64(lanes(|l| super::trig_preop::trig_preop(f64::from_bits(x[l]), y[l]).to_bits())));
        }
        VLdexpF64 => {
            let (x, y) = (a64(), b());
            return Some(Out::B64(lanes(|l| ldexp64(f64::from_bits(x[l]), y[l] as i32).to_bits())));
        }
        VTruncF64 => return Some(Out::B64(d1(a64(), f64::trunc))),
        VFloorF64 => return Some(Out::B64(d1(a64(), f64::floor))),
        VCeilF64 => return Some(Out::B64(d1(a64(), f64::ceil))),
        VRndneF64 => return Some(Out::B64(d1(a64(), f64::round_ties_even))),
        VFractF64 => return Some(Out::B64(d1(a64(), fract64))),
        VRcpF64 => return Some(Out::B64(d1(a64(), |x| 1.0 / x))),
        VRsqF64 => return Some(Out::B64(d1(a64(), |x| 1.0 / x.sqrt()))),
        VSqrtF64 => return Some(Out::B64(d1(a64(), f64::sqrt))),
        VFrexpMantF64 => return Some(Out::B64(d1(a64(), |x| frexp(x).0))),
        VFrexpExpI32F64 => a64().map(|x| frexp(f64::from_bits(x)).1 as u32),
        VCvtF32F64 => a64().map(|x| (f64::from_bits(x) as f32).to_bits()),
        VCvtU32F64 => a64().map(|x| f64::from_bits(x) as u32),
        VCvtI32F64 => a64().map(|x| f64::from_bits(x) as i32 as u32),
        VCvtF64F32 => return Some(Out::B64(wide(a()).map(|x| (f32::from_bits(x as u32) as f64).to_bits()))),
        VCvtF64U32 => return Some(Out::B64(wide(a()).map(|x| (x as u32 as f64).to_bits()))),
        VCvtF64I32 => return Some(Out::B64(wide(a()).map(|x| (x as u32 as i32 as f64).to_bits()))),
        VDivFmasF64 => {
            let (x, y, z, vcc) = (a64(), b64(), c64(), wave.sgpr[wave.mask_register(VCC) as usize]);
            return Some(Out::B64(lanes(|lane| {
                let [x, y, z] = [x[lane], y[lane], z[lane]].map(f64::from_bits);
                div_fmas64(x, y, z, vcc >> lane & 1 == 1).to_bits()
            })));
        }
        VDivFixupF64 => return Some(Out::B64(d3(a64(), b64(), c64(), |q, d, n| div_fixup(q, d, n, FloatWidth::F64)))),
        VDivScaleF64 => {
            let (x, y, z) = (a64(), b64(), c64());
            let mut vcc = 0u32;
            let row = lanes(|lane| {
                let (value, flag) =
                    div_scale64(f64::from_bits(x[lane]), f64::from_bits(y[lane]), f64::from_bits(z[lane]));
                vcc |= (flag as u32) << lane;
                value.to_bits()
            });
            return Some(Out::Carry64(row, vcc));
        }
        // f16 (one half of each register).
        VAddF16 => h2(a(), b(), |x, y| x + y),
        VSubF16 => h2(a(), b(), |x, y| x - y),
        VSubrevF16 => h2(a(), b(), |x, y| y - x),
        VMulF16 => h2(a(), b(), |x, y| x * y),
        VFmaF16 => map3(a(), b(), c(), hfma),
        VFmacF16 => {
            let accumulator =
                vdst().map(|value| if op.operands.op_sel & 8 != 0 { value >> 16 } else { value & 0xFFFF });
            map3(a(), b(), accumulator, hfma)
        }
        VFmaakF16 => map2(a(), b(), |x, y| hfma(x, y, literal & 0xFFFF)),
        VFmamkF16 => map2(a(), b(), |x, y| hfma(x, literal & 0xFFFF, y)),
        VMinF16 => h2(a(), b(), |x, y| fmin(x, y, ieee)),
        VMaxF16 => h2(a(), b(), |x, y| fmax(x, y, ieee)),
        VMin3F16 => map3(a(), b(), c(), |x, y, z| to_h(fmin(fmin(h(x), h(y), ieee), h(z), ieee))),
        VMax3F16 => map3(a(), b(), c(), |x, y, z| to_h(fmax(fmax(h(x), h(y), ieee), h(z), ieee))),
        VMed3F16 => map3(a(), b(), c(), |x, y, z| to_h(fmed3(h(x), h(y), h(z), ieee))),
        VMaxminF16 => map3(a(), b(), c(), |x, y, z| to_h(fmin(fmax(h(x), h(y), ieee), h(z), ieee))),
        VMinmaxF16 => map3(a(), b(), c(), |x, y, z| to_h(fmax(fmin(h(x), h(y), ieee), h(z), ieee))),
        VLdexpF16 => map2(a(), b(), |x, y| to_h64(ldexp64(h(x) as f64, y as i16 as i32))),
        VRcpF16 => h1(a(), |x| 1.0 / x),
        VSqrtF16 => h1(a(), f32::sqrt),
        VRsqF16 => h1(a(), |x| 1.0 / x.sqrt()),
        VLogF16 => h1(a(), f32::log2),
        VExpF16 => h1(a(), f32::exp2),
        VSinF16 => h1(a(), sin_revolutions),
        VCosF16 => h1(a(), cos_revolutions),
        VFloorF16 => h1(a(), f32::floor),
        VCeilF16 => h1(a(), f32::ceil),
        VTruncF16 => h1(a(), f32::trunc),
        VRndneF16 => h1(a(), f32::round_ties_even),
        VFractF16 => h1(a(), fract16),
        VFrexpMantF16 => h1(a(), |x| frexp(x as f64).0 as f32),
        VFrexpExpI16F16 => map1(a(), |x| frexp(h(x) as f64).1 as u16 as u32),
        VCvtF16F32 => map1(a(), |x| to_h(f32::from_bits(x))),
        VCvtF32F16 => map1(a(), |x| h(x).to_bits()),
        VCvtF16U16 => map1(a(), |x| to_h((x & 0xFFFF) as f32)),
        VCvtF16I16 => map1(a(), |x| to_h(x as i16 as f32)),
        VCvtU16F16 => map1(a(), |x| h(x) as u16 as u32),
        VCvtI16F16 => map1(a(), |x| h(x) as i16 as u16 as u32),
        VCvtNormI16F16 => map1(a(), |x| norm_i16(h(x))),
        VCvtNormU16F16 => map1(a(), |x| norm_u16(h(x))),
        VCvtPkNormI16F16 => map2(a(), b(), |x, y| norm_i16(h(x)) | norm_i16(h(y)) << 16),
        VCvtPkNormU16F16 => map2(a(), b(), |x, y| norm_u16(h(x)) | norm_u16(h(y)) << 16),
        VPackB32F16 => map2(a(), b(), |x, y| (x & 0xFFFF) | y << 16),
        VSatPkU8I16 => map1(a(), |x| {
            let s = |v: u32| (v as u16 as i16).clamp(0, 255) as u32;
            s(x & 0xFFFF) | s(x >> 16) << 8
        }),
        VDivFixupF16 => {
            map3(a(), b(), c(), |q, d, n| to_h64(div_fixup(h(q) as f64, h(d) as f64, h(n) as f64, FloatWidth::F16)))
        }
        VDot2accF32F16 => dot2_rows(a(), b(), vdst()),
        VDot2F16F16 | VDot2Bf16Bf16 => {
            let (x, y, z) = (a(), b(), c());
            let bf = op.opcode == VDot2Bf16Bf16;
            lanes(|lane| {
                let (x, y) = (x[lane], y[lane]);
                let value = |bits: u32| if bf { bf16::from_bits(bits as u16).to_f32() } else { h(bits) };
                let sum = value(x & 0xFFFF) * value(y & 0xFFFF) + value(x >> 16) * value(y >> 16) + value(z[lane]);
                if bf { bf16::from_f32(sum).to_bits() as u32 } else { to_h(sum) }
            })
        }
        VPkFmacF16 => {
            let (x, y, z) = (a(), b(), vdst());
            pk3(x, y, z, hfma)
        }
        _ => return None,
    };
    Some(Out::B32(row))
}

fn i24(value: u32) -> i32 {
    ((value << 8) as i32) >> 8
}

/// `V_PERM_B32`: each result byte chosen by a selector byte of S2 from the eight bytes of
/// {S0, S1} (S1 the low four), or a constant (RDNA3 ISA guide).
fn perm(x: u32, y: u32, selectors: u32) -> u32 {
    let bytes = ((x as u64) << 32 | y as u64).to_le_bytes();
    let mut out = 0u32;
    for index in 0..4 {
        let selector = (selectors >> (8 * index)) & 0xFF;
        let byte = match selector {
            0..=7 => bytes[selector as usize] as u32,
            8 => {
                if bytes[1] & 0x80 != 0 {
                    0xFF
                } else {
                    0
                }
            }
            9 => {
                if bytes[3] & 0x80 != 0 {
                    0xFF
                } else {
                    0
                }
            }
            10 => {
                if bytes[5] & 0x80 != 0 {
                    0xFF
                } else {
                    0
                }
            }
            11 => {
                if bytes[7] & 0x80 != 0 {
                    0xFF
                } else {
                    0
                }
            }
            12 => 0,
            _ => 0xFF,
        };
        out |= byte << (8 * index);
    }
    out
}

/// f32 to f16, rounding toward zero (`V_CVT_PK_RTZ_F16_F32`).
fn f16_toward_zero(bits: u32) -> u32 {
    let value = f32::from_bits(bits);
    let nearest = f16::from_f32(value);
    if nearest.is_nan() || nearest.to_f32().abs() <= value.abs() || value.is_infinite() {
        return nearest.to_bits() as u32;
    }
    // Rounded away from zero: step one unit toward zero.
    (nearest.to_bits() - 1) as u32
}

fn norm_i16(value: f32) -> u32 {
    if value.is_nan() { 0 } else { (value.clamp(-1.0, 1.0) * 32767.0).round_ties_even() as i16 as u16 as u32 }
}
fn norm_u16(value: f32) -> u32 {
    if value.is_nan() { 0 } else { (value.clamp(0.0, 1.0) * 65535.0).round_ties_even() as u16 as u32 }
}

/// `v_dot2_f32_f16` over a row. A loop of its own rather than a closure through `lanes`: the
/// optimizer left that closure out of line, one call per lane, which cost the f16 GEMM 60 %
/// more host instructions once the general path was its own function.
#[inline(always)]
fn dot2_rows(x: Row, y: Row, z: Row) -> Row {
    let mut row = [0; LANES];
    for lane in 0..LANES {
        row[lane] = dot2_f16(x[lane], y[lane], f32::from_bits(z[lane])).to_bits();
    }
    row
}

#[inline(always)]
fn dot2_f16(x: u32, y: u32, accumulator: f32) -> f32 {
    let product = h(x & 0xFFFF) as f64 * h(y & 0xFFFF) as f64 + h(x >> 16) as f64 * h(y >> 16) as f64;
    (product + accumulator as f64) as f32
}

/// A float format's exponent field: its biased value, and the bias plus the mantissa's bits,
/// below which a quotient's exponent difference means it underflows to zero.
#[derive(Clone, Copy)]
enum FloatWidth {
    F16,
    F32,
    F64,
}

impl FloatWidth {
    /// The biased exponent field of `x`, a value of this width held as an f64 (0 for subnormals).
    fn exponent(self, x: f64) -> i32 {
        match self {
            FloatWidth::F16 => ((to_h64(x) >> 10) & 0x1F) as i32,
            FloatWidth::F32 => exponent32(x as f32),
            FloatWidth::F64 => exponent64(x),
        }
    }

    /// `exponent(n) − exponent(d)` below this and `n / d` is below half the smallest subnormal:
    /// −(bias + mantissa bits + 1), the RDNA3 ISA guide's 1075 for f64.
    fn underflow(self) -> i32 {
        match self {
            FloatWidth::F16 => -(15 + 10),
            FloatWidth::F32 => -(127 + 23),
            FloatWidth::F64 => -(1023 + 52),
        }
    }
}

/// `V_DIV_FIXUP`: the quotient `q` of `n / d` with IEEE's special cases put back (RDNA3 ISA
/// guide's pseudocode): NaNs, 0/0 and ∞/∞, division by zero or of infinity, and a quotient so
/// small that it underflows to a signed zero whatever `q` says (the scaled quotient of such a
/// pair can overflow in `V_DIV_SCALE`'s scaling).
fn div_fixup(q: f64, d: f64, n: f64, width: FloatWidth) -> f64 {
    let negative = d.is_sign_negative() != n.is_sign_negative();
    let signed = |value: f64| if negative { -value.abs() } else { value.abs() };
    if n.is_nan() {
        return n;
    }
    if d.is_nan() {
        return d;
    }
    if (d == 0.0 && n == 0.0) || (d.is_infinite() && n.is_infinite()) {
        return f64::NAN;
    }
    if d == 0.0 || n.is_infinite() {
        return signed(f64::INFINITY);
    }
    if d.is_infinite() || n == 0.0 {
        return signed(0.0);
    }
    if width.exponent(n) - width.exponent(d) < width.underflow() {
        return signed(0.0);
    }
    // The guide's "exponent(S1) == 2047: the result overflowed" branch: S1's infinity is caught
    // above, so read as the quotient's exponent, all ones (an infinite or NaN quotient of finite
    // operands). It is what makes an overflowing division infinite (`division_sequences_are_ieee`).
    if q.is_nan() || q.is_infinite() {
        return signed(f64::INFINITY);
    }
    signed(q)
}

/// `V_DIV_FMAS_F32`: `x·y + z`, and where `V_DIV_SCALE` set VCC, scaled back by 2^±64: up when
/// the quotient estimate `z` was scaled down (its exponent is at least the bias, |z| ≥ 1), down
/// when it was scaled up (a quotient near zero). The scale is fused: one rounding. The RDNA3
/// guide's pseudocode writes a fixed 2^32 here; that leaves the quotient of a huge or tiny
/// division off by 2^32, which the compiler's division sequence (LLVM's `LowerFDIV32`) never gets
/// on hardware, so this follows the sequence's arithmetic: `division_sequences_are_ieee` checks it
/// against the host's division.
fn div_fmas32(x: f32, y: f32, z: f32, vcc: bool) -> f32 {
    // In f64 the product is exact, so the sum is one rounding and its error is exact.
    let product = x as f64 * y as f64;
    let (sum, error) = two_sum(product, z as f64);
    let scale = match (vcc, exponent32(z) >= 127) {
        (false, _) => 0,
        (true, true) => 64,
        (true, false) => -64,
    };
    let value = ldexp64(sum, scale);
    let rounded = value as f32;
    if !rounded.is_finite() {
        return rounded;
    }
    // A tie at f32's precision that the f64 sum made: the exact value's side breaks it.
    let back = rounded as f64;
    let beside = if value > back { rounded.next_up() } else { rounded.next_down() };
    if error != 0.0 && value != back && (value - back) * 2.0 == beside as f64 - back {
        let away = (error > 0.0) == (value > back);
        return if away { beside } else { rounded };
    }
    rounded
}

/// `V_DIV_FMAS_F64`: as [`div_fmas32`], scaled by 2^±128, the scale `V_DIV_SCALE_F64` applies.
/// A result in the subnormal range is rounded once: a tie left by the unscaled FMA's rounding is
/// broken by the sign of its error.
fn div_fmas64(x: f64, y: f64, z: f64, vcc: bool) -> f64 {
    let sum = x.mul_add(y, z);
    let scale = match (vcc, exponent64(z) >= 1023) {
        (false, _) => return sum,
        (true, true) => 128,
        (true, false) => -128,
    };
    let value = ldexp64(sum, scale);
    if scale > 0 || !sum.is_finite() || value.abs() >= f64::MIN_POSITIVE {
        return value; // the same precision at either scale: exact
    }
    // The subnormal grid at `sum`'s scale is 2^(-1074-scale); `sum` a midpoint of it is a tie.
    let back = ldexp64(value, -scale);
    let offset = sum - back;
    if offset == 0.0 || offset.abs() * 2.0 != ldexp64(f64::from_bits(1), -scale) {
        return value;
    }
    // The FMA's rounding error: x·y + z − sum, its sign from error-free transformations.
    let product = x * y;
    let product_error = x.mul_add(y, -product);
    let (total, total_error) = two_sum(product, z);
    let error = (total - sum) + total_error + product_error;
    if error == 0.0 {
        return value;
    }
    let away = (error > 0.0) == (offset > 0.0);
    if away { ldexp64(back + 2.0 * offset, scale) } else { value }
}

fn exponent32(x: f32) -> i32 {
    ((x.to_bits() >> 23) & 0xFF) as i32
}
fn exponent64(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7FF) as i32
}

/// `V_DIV_SCALE_F32` (RDNA3 ISA guide's pseudocode): scales the numerator or denominator `s0`
/// (one of `s1` denominator, `s2` numerator) so the reciprocal iteration cannot underflow or
/// overflow; the flag tells `V_DIV_FMAS` to scale the quotient back. One case differs from the
/// guide's text, which scales a huge denominator up (to infinity, past f32's range) where its
/// reciprocal and the quotient are both subnormal: here it scales the denominator down and flags
/// the quotient, scaled up, for `V_DIV_FMAS` to scale down, which is what makes the compiler's
/// division sequence IEEE-exact (`division_sequences_are_ieee`).
fn div_scale32(s0: f32, s1: f32, s2: f32) -> (f32, bool) {
    if s2 == 0.0 || s1 == 0.0 {
        return (f32::NAN, false);
    }
    let scale = |x: f32, e: i32| ldexp32(x, e);
    let denormal = |x: f32| x != 0.0 && exponent32(x) == 0;
    if exponent32(s2) - exponent32(s1) >= 96 {
        return (if s0 == s1 { scale(s0, 64) } else { s0 }, true);
    }
    if denormal(s1) {
        return (scale(s0, 64), false);
    }
    let reciprocal = 1.0 / s1 as f64;
    let quotient = s2 as f64 / s1 as f64;
    let denormal64 = |x: f64| x != 0.0 && x.abs() < f32::MIN_POSITIVE as f64;
    if denormal64(reciprocal) && denormal64(quotient) {
        return (if s0 == s1 { scale(s0, -64) } else { s0 }, true);
    }
    if denormal64(reciprocal) {
        return (scale(s0, -64), false);
    }
    if denormal64(quotient) {
        return (if s0 == s2 { scale(s0, 64) } else { s0 }, true);
    }
    if exponent32(s2) <= 23 {
        return (scale(s0, 64), false);
    }
    (s0, false)
}

fn div_scale64(s0: f64, s1: f64, s2: f64) -> (f64, bool) {
    if s2 == 0.0 || s1 == 0.0 {
        return (f64::NAN, false);
    }
    let denormal = |x: f64| x != 0.0 && exponent64(x) == 0;
    if exponent64(s2) - exponent64(s1) >= 768 {
        return (if s0 == s1 { ldexp64(s0, 128) } else { s0 }, true);
    }
    if denormal(s1) {
        return (ldexp64(s0, 128), false);
    }
    let (reciprocal, quotient) = (1.0 / s1, s2 / s1);
    if denormal(reciprocal) && denormal(quotient) {
        return (if s0 == s1 { ldexp64(s0, -128) } else { s0 }, true);
    }
    if denormal(reciprocal) {
        return (ldexp64(s0, -128), false);
    }
    if denormal(quotient) {
        return (if s0 == s2 { ldexp64(s0, 128) } else { s0 }, true);
    }
    if exponent64(s2) <= 53 {
        return (ldexp64(s0, 128), false);
    }
    (s0, false)
}

/// Lane `lane` (of the whole wave) of source 0: a VGPR's lane, or a scalar source's value.
fn lane_of(wave: &Wave, op: &VOp, lane: usize) -> u32 {
    match op.operands.src[0] {
        super::operands::Source::Vgpr(register) => wave.lane_value(register as u32, lane),
        _ => op.operands.row(wave, 0)[0],
    }
}

/// The scalar destination of `v_readfirstlane`/`v_readlane`: the VOP1 vdst field or VOP3's.
pub(crate) fn readlane_destination(op: &VOp) -> u32 {
    match op.encoding {
        Encoding::Vop1 => op.operands.vdst as u32,
        _ => op.operands.sdst as u32,
    }
}

/// `v_permlane16_b32` / `v_permlanex16_b32`: each lane of a row of 16 reads the lane its 4-bit
/// select names (from S1 for lanes 0–7, S2 for 8–15), within its own row or, for `x16`, the
/// other row. `op_sel[0]` is `fi` (read inactive lanes), `op_sel[1]` `bound_ctrl` (RDNA3 ISA
/// guide; LLVM prints them as `op_sel:[fi,bc]`).
fn permlane(wave: &mut Wave, op: &VOp) -> Out {
    let source = op.operands.row(wave, 0);
    let (low, high) = (op.operands.row(wave, 1)[0], op.operands.row(wave, 2)[0]);
    let fetch_inactive = op.operands.op_sel & 1 == 1;
    let bound_ctrl = op.operands.op_sel & 2 == 2;
    let exec = wave.exec();
    let cross = op.opcode == Opcode::VPermlanex16B32;
    let current = wave.vgpr.get(op.operands.vdst as usize).copied().unwrap_or([0; LANES]);
    let row = lanes(|lane| {
        let index = lane & 15;
        let select = if index < 8 { low >> (4 * index) } else { high >> (4 * (index - 8)) } & 15;
        let base = if cross { (lane & 16) ^ 16 } else { lane & 16 };
        let from = base + select as usize;
        if fetch_inactive || exec >> from & 1 == 1 {
            source[from]
        } else if bound_ctrl {
            0
        } else {
            current[lane]
        }
    });
    Out::B32(row)
}

/// `v_movrels`/`v_movreld`/`v_movrelsd`: VGPR indexing relative to M0 (RDNA3 ISA guide).
/// The VGPR-relative moves (RDNA3 ISA guide, `V_MOVRELS_B32` and siblings): the source, the
/// destination or both indexed by M0; `v_movrelsd_2_b32` and `v_swaprel_b32` index the source by
/// M0[9:0] and the destination by M0[25:16]; `v_swaprel_b32` exchanges the two. A register past
/// the wave's reads 0 and takes no write.
fn movrel(wave: &mut Wave, op: &VOp) -> Option<Out> {
    let m0 = wave.sgpr[125];
    let super::operands::Source::Vgpr(source) = op.operands.src[0] else { return None };
    let vdst = op.operands.vdst;
    let (low, high) = ((m0 & 0x3FF) as u16, ((m0 >> 16) & 0x3FF) as u16);
    let (from, to) = match op.opcode {
        Opcode::VMovrelsB32 => (source.wrapping_add(m0 as u16), vdst),
        Opcode::VMovreldB32 => (source, vdst.wrapping_add(m0 as u16)),
        Opcode::VMovrelsdB32 => (source.wrapping_add(m0 as u16), vdst.wrapping_add(m0 as u16)),
        _ => (source.wrapping_add(low), vdst.wrapping_add(high)),
    };
    let row = wave.vgpr.get(from as usize).copied().unwrap_or([0; LANES]);
    let old = wave.vgpr.get(to as usize).copied().unwrap_or([0; LANES]);
    let exec = wave.exec();
    for lane in (0..LANES).filter(|lane| exec >> lane & 1 == 1) {
        wave.write_vgpr(to as u32, lane, row[lane]);
        if op.opcode == Opcode::VSwaprelB32 {
            wave.write_vgpr(from as u32, lane, old[lane]);
        }
    }
    Some(Out::Done)
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn compare(wave: &mut Wave, op: &VOp, condition: Condition, ty: CompareType, into_exec: bool) -> Out {
    use core::cmp::Ordering;
    let exec = op.writes(wave);
    let result = if condition == Condition::Class {
        let classes = op.read(wave, 1);
        match ty {
            CompareType::F64 => {
                let value = op.read64(wave, 0);
                mask(|lane| {
                    let x = f64::from_bits(value[lane]);
                    let bits = value[lane];
                    let denormal = bits & (0x7FF << 52) == 0 && bits << 1 != 0;
                    let signaling = x.is_nan() && bits >> 51 & 1 == 0;
                    class_bits(x, denormal, signaling) & classes[lane] != 0
                })
            }
            CompareType::F16 => {
                let value = op.read(wave, 0);
                mask(|lane| {
                    let bits = value[lane] as u16;
                    let denormal = bits & 0x7C00 == 0 && bits & 0x3FF != 0;
                    let signaling = h(bits as u32).is_nan() && bits >> 9 & 1 == 0;
                    class_bits(h(bits as u32) as f64, denormal, signaling) & classes[lane] != 0
                })
            }
            _ => {
                let value = op.read(wave, 0);
                mask(|lane| {
                    let bits = value[lane];
                    let denormal = bits & 0x7F80_0000 == 0 && bits & 0x7F_FFFF != 0;
                    let signaling = f32::from_bits(bits).is_nan() && bits >> 22 & 1 == 0;
                    class_bits(f32::from_bits(bits) as f64, denormal, signaling) & classes[lane] != 0
                })
            }
        }
    } else {
        let order: [Option<Ordering>; LANES] = match ty {
            CompareType::I64 | CompareType::U64 | CompareType::F64 => {
                let (x, y) = (op.read64(wave, 0), op.read64(wave, 1));
                lanes(|lane| match ty {
                    CompareType::I64 => Some((x[lane] as i64).cmp(&(y[lane] as i64))),
                    CompareType::U64 => Some(x[lane].cmp(&y[lane])),
                    _ => f64::from_bits(x[lane]).partial_cmp(&f64::from_bits(y[lane])),
                })
            }
            _ => {
                let (x, y) = (op.read(wave, 0), op.read(wave, 1));
                lanes(|lane| {
                    let (x, y) = (x[lane], y[lane]);
                    match ty {
                        CompareType::I16 => Some((x as i16).cmp(&(y as i16))),
                        CompareType::U16 => Some((x as u16).cmp(&(y as u16))),
                        CompareType::I32 => Some((x as i32).cmp(&(y as i32))),
                        CompareType::U32 => Some(x.cmp(&y)),
                        CompareType::F16 => h(x).partial_cmp(&h(y)),
                        _ => f32::from_bits(x).partial_cmp(&f32::from_bits(y)),
                    }
                })
            }
        };
        mask(|lane| holds(condition, order[lane]))
    };
    let target = if into_exec { EXEC } else { op.operands.sdst as u32 };
    wave.write_mask(target, result & exec);
    Out::Done
}

/// Whether `condition` holds for an ordering; `None` is unordered (a NaN): the ordered
/// conditions are false, their negations (`n*`) and `u` true.
fn holds(condition: Condition, order: Option<core::cmp::Ordering>) -> bool {
    use core::cmp::Ordering::*;
    match condition {
        Condition::False => false,
        Condition::True => true,
        Condition::Lt => order == Some(Less),
        Condition::Eq => order == Some(Equal),
        Condition::Le => matches!(order, Some(Less | Equal)),
        Condition::Gt => order == Some(Greater),
        Condition::Lg => matches!(order, Some(Less | Greater)),
        Condition::Ne => order != Some(Equal),
        Condition::Ge => matches!(order, Some(Greater | Equal)),
        Condition::Ordered => order.is_some(),
        Condition::Unordered => order.is_none(),
        Condition::Nge => !matches!(order, Some(Greater | Equal)),
        Condition::Nlg => !matches!(order, Some(Less | Greater)),
        Condition::Ngt => order != Some(Greater),
        Condition::Nle => !matches!(order, Some(Less | Equal)),
        Condition::Nlt => order != Some(Less),
        Condition::Class => false,
    }
}

fn parse_compare(entry: &Entry) -> Option<(bool, Condition, CompareType)> {
    let name = entry.mnemonic.trim_end_matches("_e32").trim_end_matches("_e64");
    let (into_exec, rest) = match name.strip_prefix("v_cmpx_") {
        Some(rest) => (true, rest),
        None => (false, name.strip_prefix("v_cmp_")?),
    };
    let (condition, ty) = rest.rsplit_once('_')?;
    let condition = match condition {
        "f" => Condition::False,
        "t" | "tru" => Condition::True,
        "lt" => Condition::Lt,
        "eq" => Condition::Eq,
        "le" => Condition::Le,
        "gt" => Condition::Gt,
        "lg" => Condition::Lg,
        "ne" | "neq" => Condition::Ne,
        "ge" => Condition::Ge,
        "o" => Condition::Ordered,
        "u" => Condition::Unordered,
        "nge" => Condition::Nge,
        "nlg" => Condition::Nlg,
        "ngt" => Condition::Ngt,
        "nle" => Condition::Nle,
        "nlt" => Condition::Nlt,
        "class" => Condition::Class,
        _ => return None,
    };
    let ty = match ty {
        "i16" => CompareType::I16,
        "u16" => CompareType::U16,
        "i32" => CompareType::I32,
        "u32" => CompareType::U32,
        "i64" => CompareType::I64,
        "u64" => CompareType::U64,
        "f16" => CompareType::F16,
        "f32" => CompareType::F32,
        "f64" => CompareType::F64,
        _ => return None,
    };
    Some((into_exec, condition, ty))
}

/// The constant kind of an operation's sources: the last type suffix of its name
/// (`v_cvt_f32_u32` reads a u32).
pub(crate) fn source_kind(name: &str) -> Kind {
    match name.rsplit('_').next() {
        Some("f64") => Kind::F64,
        Some("f32") => Kind::F32,
        Some("f16") => Kind::F16,
        _ => Kind::Int,
    }
}

/// Whether a name token is an operand type (`f32`, `u16`, `b64`, `bf16`).
fn is_type(token: &str) -> bool {
    token.len() >= 3
        && matches!(token.as_bytes()[0], b'f' | b'i' | b'u' | b'b')
        && token[1..].trim_start_matches('f').parse::<u32>().is_ok()
}

/// The result's float type: the first type suffix (`v_cvt_f16_f32` makes an f16); packed
/// results of `v_pk_*` f16 operations are f16 pairs.
fn result_kind(name: &str) -> Kind {
    let first = name.split('_').skip(1).find(|token| is_type(token));
    match first {
        _ if name.starts_with("v_cmp") || name.contains("_pk_norm") || name.starts_with("v_cvt_pk") => Kind::Int,
        Some("f16") => Kind::F16,
        Some("f32") => Kind::F32,
        Some("f64") => Kind::F64,
        _ => Kind::Int,
    }
}

/// Which operands of a VOP1/VOP2/VOPC/VOP3 operation are 16-bit: bits 0–2 the sources, bit 3
/// the destination. From the name: the last type suffix is the sources', the first the
/// destination's; packed (`_pk_`) results and dot products are 32-bit.
pub(crate) fn half_operands(name: &str) -> u8 {
    let is16 = |ty: &str| matches!(ty, "f16" | "i16" | "u16" | "b16" | "bf16");
    let types: Vec<&str> = name.split('_').filter(|token| is_type(token)).collect();
    let (Some(first), Some(last)) = (types.first(), types.last()) else { return 0 };
    let mut sources = if is16(last) { 0b111 } else { 0 };
    let compare = name.starts_with("v_cmp");
    let mut destination = !compare && !name.contains("_pk_") && !name.starts_with("v_pk_") && is16(first);
    match name {
        "v_mad_u32_u16" | "v_mad_i32_i16" => sources = 0b011,
        "v_dot2acc_f32_f16" | "v_pk_fmac_f16" => sources = 0,
        "v_dot2_f16_f16" | "v_dot2_bf16_bf16" => sources = 0b100,
        "v_sat_pk_u8_i16" => {
            sources = 0;
            destination = true;
        }
        "v_cvt_pk_norm_i16_f16" | "v_cvt_pk_norm_u16_f16" | "v_pack_b32_f16" => destination = false,
        "v_cndmask_b16" => sources = 0b011,
        // Two 16-bit fields of each 32-bit source, and a 32-bit sum; the quad SADs' `u16` names
        // their packed results, whose sources are bytes (`u8`, too short a token to count).
        "v_sad_u16" | "v_qsad_pk_u16_u8" | "v_mqsad_pk_u16_u8" => {
            sources = 0;
            destination = false;
        }
        "v_ldexp_f16" => sources = 0b011,
        _ => {}
    }
    sources | if destination { 8 } else { 0 }
}

/// VOP3P: packed 16-bit operations, dot products, mixed-precision FMA and WMMA. Each source's
/// halves are arranged first: the result's low half reads the half `op_sel` names, its high half
/// the half `op_sel_hi` names; `neg_lo`/`neg_hi` negate float halves (RDNA3 ISA guide, VOP3P).
#[cfg_attr(not(debug_assertions), inline(always))]
fn packed(wave: &mut Wave, op: &VOp) -> Option<Out> {
    let ieee = wave.mode & MODE_IEEE != 0;
    use Opcode::*;
    if matches!(
        op.opcode,
        VWmmaF3216x16x16F16
            | VWmmaF3216x16x16Bf16
            | VWmmaF1616x16x16F16
            | VWmmaBf1616x16x16Bf16
            | VWmmaI3216x16x16Iu8
            | VWmmaI3216x16x16Iu4
    ) {
        return wmma::run(wave, op).map(|()| Out::Done);
    }
    let operands = &op.operands;
    let float =
        matches!(op.opcode, VPkFmaF16 | VPkAddF16 | VPkMulF16 | VPkMinF16 | VPkMaxF16 | VDot2F32F16 | VDot2F32Bf16);
    let arranged = |index: usize| -> Row {
        let row = op.read(wave, index);
        let (low_high, high_high) = (operands.op_sel >> index & 1 == 1, operands.op_sel_hi >> index & 1 == 1);
        let (neg_low, neg_high) = (operands.neg >> index & 1 == 1, operands.neg_hi >> index & 1 == 1);
        let flip = if float { (neg_low as u32) << 15 | (neg_high as u32) << 31 } else { 0 };
        row.map(|value| {
            let low = if low_high { value >> 16 } else { value & 0xFFFF };
            let high = if high_high { value >> 16 } else { value & 0xFFFF };
            (low | high << 16) ^ flip
        })
    };
    let a = || arranged(0);
    let b = || arranged(1);
    let c = || arranged(2);
    let clamp = operands.clamp;
    let row = match op.opcode {
        VPkAddF16 => pk2(a(), b(), |x, y| to_h(h(x) + h(y))),
        VPkMulF16 => pk2(a(), b(), |x, y| to_h(h(x) * h(y))),
        VPkMinF16 => pk2(a(), b(), |x, y| to_h(fmin(h(x), h(y), ieee))),
        VPkMaxF16 => pk2(a(), b(), |x, y| to_h(fmax(h(x), h(y), ieee))),
        VPkFmaF16 => pk3(a(), b(), c(), hfma),
        VPkAddU16 if clamp => pk2(a(), b(), |x, y| (x as u16).saturating_add(y as u16) as u32),
        VPkAddU16 | VPkAddI16 if !clamp => pk2(a(), b(), u32::wrapping_add),
        VPkAddI16 => pk2(a(), b(), |x, y| (x as i16).saturating_add(y as i16) as u16 as u32),
        VPkSubU16 if clamp => pk2(a(), b(), |x, y| (x as u16).saturating_sub(y as u16) as u32),
        VPkSubU16 | VPkSubI16 if !clamp => pk2(a(), b(), u32::wrapping_sub),
        VPkSubI16 => pk2(a(), b(), |x, y| (x as i16).saturating_sub(y as i16) as u16 as u32),
        VPkMulLoU16 => pk2(a(), b(), u32::wrapping_mul),
        VPkMadU16 => pk3(a(), b(), c(), |x, y, z| x.wrapping_mul(y).wrapping_add(z)),
        VPkMadI16 => pk3(a(), b(), c(), |x, y, z| x.wrapping_mul(y).wrapping_add(z)),
        VPkLshlrevB16 => pk2(a(), b(), |x, y| y << (x & 15)),
        VPkLshrrevB16 => pk2(a(), b(), |x, y| y >> (x & 15)),
        VPkAshrrevI16 => pk2(a(), b(), |x, y| ((y as i16) >> (x & 15)) as u16 as u32),
        VPkMaxI16 => pk2(a(), b(), |x, y| (x as i16).max(y as i16) as u16 as u32),
        VPkMinI16 => pk2(a(), b(), |x, y| (x as i16).min(y as i16) as u16 as u32),
        VPkMaxU16 => pk2(a(), b(), |x, y| x.max(y)),
        VPkMinU16 => pk2(a(), b(), |x, y| x.min(y)),
        VDot2F32F16 => dot2_rows(a(), b(), c()),
        VDot2F32Bf16 => map3(a(), b(), c(), |x, y, z| {
            {
                let v = |bits: u32| bf16::from_bits(bits as u16).to_f64();
                ((v(x & 0xFFFF) * v(y & 0xFFFF) + v(x >> 16) * v(y >> 16)) + f32::from_bits(z) as f64) as f32
            }
            .to_bits()
        }),
        // Integer dot products: for the `iu` forms, neg_lo bits 0 and 1 say whether A and B are
        // signed (LLVM's `v_dot4_i32_iu8 ... neg_lo:[1,1,0]`).
        VDot4I32Iu8 | VDot4U32U8 | VDot8I32Iu4 | VDot8U32U4 => {
            let (x, y, z) = (op.read(wave, 0), op.read(wave, 1), op.read(wave, 2));
            let signed =
                |index: usize| matches!(op.opcode, VDot4I32Iu8 | VDot8I32Iu4) && operands.neg >> index & 1 == 1;
            let (bits, count) = if matches!(op.opcode, VDot4I32Iu8 | VDot4U32U8) { (8, 4) } else { (4, 8) };
            let element = |word: u32, index: u32, signed: bool| -> i64 {
                let raw = (word >> (bits * index)) & ((1 << bits) - 1);
                if signed { ((raw << (32 - bits)) as i32 >> (32 - bits)) as i64 } else { raw as i64 }
            };
            let (sa, sb) = (signed(0), signed(1));
            let integer = matches!(op.opcode, VDot4I32Iu8 | VDot8I32Iu4);
            lanes(|lane| {
                let sum: i64 = (0..count).map(|i| element(x[lane], i, sa) * element(y[lane], i, sb)).sum::<i64>();
                let total = sum + if integer { z[lane] as i32 as i64 } else { z[lane] as i64 };
                match (clamp, integer) {
                    (true, true) => total.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32,
                    (true, false) => total.clamp(0, u32::MAX as i64) as u32,
                    _ => total as u32,
                }
            })
        }
        // Mixed precision: each source is f32, or (op_sel_hi set) the f16 half op_sel names.
        VFmaMixF32 | VFmaMixloF16 | VFmaMixhiF16 => {
            let source = |index: usize| -> [f64; LANES] {
                let row = operands.row(wave, index);
                let is_half = operands.op_sel_hi >> index & 1 == 1;
                let high = operands.op_sel >> index & 1 == 1;
                let (neg, abs) = (operands.neg >> index & 1 == 1, operands.neg_hi >> index & 1 == 1);
                row.map(|bits| {
                    let mut value = if is_half {
                        h(if high { bits >> 16 } else { bits }) as f64
                    } else {
                        f32::from_bits(bits) as f64
                    };
                    if abs {
                        value = value.abs();
                    }
                    if neg { -value } else { value }
                })
            };
            let (x, y, z) = (source(0), source(1), source(2));
            let exec = op.writes(wave);
            let current = wave.vgpr.get(operands.vdst as usize).copied().unwrap_or([0; LANES]);
            let row: Row = lanes(|lane| {
                let value = x[lane].mul_add(y[lane], z[lane]);
                match op.opcode {
                    VFmaMixF32 => {
                        let value = value as f32;
                        if clamp { clamp01(value).to_bits() } else { value.to_bits() }
                    }
                    _ => {
                        let value = to_h64(if clamp { value.clamp(0.0, 1.0) } else { value });
                        if op.opcode == VFmaMixloF16 {
                            (current[lane] & 0xFFFF_0000) | value
                        } else {
                            (current[lane] & 0xFFFF) | value << 16
                        }
                    }
                }
            });
            if let Some(target) = wave.vgpr.get_mut(operands.vdst as usize) {
                for lane in (0..LANES).filter(|lane| exec >> lane & 1 == 1) {
                    target[lane] = row[lane];
                }
            }
            return Some(Out::Done);
        }
        _ => return None,
    };
    Some(Out::B32(row))
}

// MODE's rounding and denormal controls (RDNA3 ISA guide, "MODE"). The host computes in
// nearest-even with denormals kept; other modes are applied to the basic arithmetic and the narrowing conversions from its
// exact error: the rounded result moves one unit toward the mode's direction where the exact
// value lies that way. Input flushing applies to these operations; output flushing to every
// float result. Other operations round to nearest even whatever the mode (a stated limit).

/// Where the exact value lies from a rounded one: the sign of exact − rounded.
fn direct32(rounded: f32, error: f64, mode: u32) -> f32 {
    // A NaN error: an infinite operand made the result, which is then exact.
    if error == 0.0 || error.is_nan() || rounded.is_nan() {
        return rounded;
    }
    if rounded.is_infinite() {
        // Rounded past the largest finite value: directed modes stop at it.
        let toward_zero = mode == 3 || (mode == 1 && rounded < 0.0) || (mode == 2 && rounded > 0.0);
        return if toward_zero { f32::MAX.copysign(rounded) } else { rounded };
    }
    match mode {
        1 if error > 0.0 => rounded.next_up(),
        2 if error < 0.0 => rounded.next_down(),
        3 if error < 0.0 && rounded > 0.0 => rounded.next_down(),
        3 if error > 0.0 && rounded < 0.0 => rounded.next_up(),
        _ => rounded,
    }
}

fn direct64(rounded: f64, error: f64, mode: u32) -> f64 {
    // A NaN error: an infinite operand made the result, which is then exact (the callers turn
    // an overflow of finite operands, whose two-sum error is NaN too, into a finite one).
    if error == 0.0 || error.is_nan() || rounded.is_nan() {
        return rounded;
    }
    if rounded.is_infinite() {
        let toward_zero = mode == 3 || (mode == 1 && rounded < 0.0) || (mode == 2 && rounded > 0.0);
        return if toward_zero { f64::MAX.copysign(rounded) } else { rounded };
    }
    match mode {
        1 if error > 0.0 => rounded.next_up(),
        2 if error < 0.0 => rounded.next_down(),
        3 if error < 0.0 && rounded > 0.0 => rounded.next_down(),
        3 if error > 0.0 && rounded < 0.0 => rounded.next_up(),
        _ => rounded,
    }
}

/// Knuth's TwoSum: the rounded sum and its exact error.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let sum = a + b;
    let b_virtual = sum - a;
    let error = (a - (sum - b_virtual)) + (b - b_virtual);
    (sum, error)
}

/// The sign of an exact zero sum (IEEE 754, 6.3): +0 in every mode but toward −∞ (mode 2),
/// where it is −0, unless both addends are zeros of one sign, whose sum keeps it. The host's sum
/// (`high`, with `low` its exact error) is +0 for a cancellation whatever the mode.
fn zero_sum_sign(high: f64, low: f64, (p, q): (f64, f64), mode: u32) -> f64 {
    if high != 0.0 || low != 0.0 || (p == 0.0 && q == 0.0 && p.is_sign_negative() == q.is_sign_negative()) {
        return high;
    }
    if mode == 2 { -0.0 } else { 0.0 }
}

/// An f32 result in `mode` from its exact value `high + low` (two f64s).
fn round32(high: f64, low: f64, mode: u32) -> f32 {
    let rounded = high as f32;
    let error = (high - rounded as f64) + low;
    direct32(rounded, error, mode)
}

/// An f16 result (bits) in `mode` from its exact value `high + low`: rounded once to nearest
/// even (`to_h64`), then one step in f16's ordered bit patterns where the mode says.
fn round16(high: f64, low: f64, mode: u32) -> u32 {
    let bits = to_h64(high);
    let rounded = h(bits) as f64;
    let error = (high - rounded) + low;
    if error == 0.0 || error.is_nan() || rounded.is_nan() {
        return bits;
    }
    let up = error > 0.0;
    if rounded.is_infinite() {
        // Past the largest finite value (65504, 0x7BFF): directed modes stop at it.
        let toward_zero = mode == 3 || (mode == 1 && rounded < 0.0) || (mode == 2 && rounded > 0.0);
        return if toward_zero { bits - 1 } else { bits };
    }
    let step = |toward_up: bool| {
        if rounded == 0.0 {
            if toward_up { 0x0001 } else { 0x8001 }
        } else if (rounded > 0.0) == toward_up {
            bits + 1
        } else {
            bits - 1
        }
    };
    // Rounded away from zero: the exact value lies between it and zero.
    let overshot = rounded != 0.0 && up != (rounded > 0.0);
    match mode {
        1 if up => step(true),
        2 if !up => step(false),
        3 if overshot => step(up),
        _ => bits,
    }
}

fn flush32(value: u32) -> u32 {
    if value & 0x7F80_0000 == 0 { value & 0x8000_0000 } else { value }
}
fn flush16(value: u32) -> u32 {
    if value & 0x7C00 == 0 { value & 0x8000 } else { value }
}
fn flush64(value: u64) -> u64 {
    if value & (0x7FF << 52) == 0 { value & (1 << 63) } else { value }
}

/// The add, subtract, multiply and FMA families and the narrowing conversions (f64 and integers
/// to f32, f32 to f16) under a non-default MODE; `None` for the operations that round to nearest
/// whatever the mode.
fn moded(wave: &mut Wave, op: &VOp, mode: u32) -> Option<Out> {
    use Opcode::*;
    let (round32_mode, round64_mode) = (mode & 3, (mode >> 2) & 3);
    let (keep_in32, keep_in64) = ((mode >> 4) & 1 == 1, (mode >> 6) & 1 == 1);
    let input32 = |row: Row| if keep_in32 { row } else { row.map(flush32) };
    let input16 = |row: Row| if keep_in64 { row } else { row.map(flush16) };
    let input64 = |row: Row64| if keep_in64 { row } else { row.map(flush64) };
    let f32s = |row: Row| row.map(|bits| f32::from_bits(bits) as f64);
    let literal = f32::from_bits(op.operands.literal) as f64;
    match op.opcode {
        VAddF32 | VSubF32 | VSubrevF32 | VMulF32 | VFmaF32 | VFmacF32 | VFmaakF32 | VFmamkF32 => {
            let a = f32s(input32(op.read(wave, 0)));
            let b = f32s(input32(op.read(wave, 1)));
            let c = match op.opcode {
                VFmaF32 => f32s(input32(op.read(wave, 2))),
                VFmacF32 => f32s(input32(wave.vgpr.get(op.operands.vdst as usize).copied().unwrap_or([0; LANES]))),
                _ => [literal; LANES],
            };
            let row = lanes(|lane| {
                let (x, y, z) = (a[lane], b[lane], c[lane]);
                // Sums and products of f32 values are exact in f64 up to one rounding, whose
                // error TwoSum (or an FMA) recovers; FMAs add an exact product.
                let addends = match op.opcode {
                    VAddF32 => (x, y),
                    VSubF32 => (x, -y),
                    VSubrevF32 => (y, -x),
                    VMulF32 => return round32(x * y, 0.0, round32_mode).to_bits(),
                    VFmaakF32 => (x * y, literal),
                    VFmamkF32 => (x * literal, y),
                    _ => (x * y, z),
                };
                let (high, low) = two_sum(addends.0, addends.1);
                round32(zero_sum_sign(high, low, addends, round32_mode), low, round32_mode).to_bits()
            });
            Some(Out::B32(row))
        }
        VAddF64 | VMulF64 => {
            let (a, b) = (input64(op.read64(wave, 0)), input64(op.read64(wave, 1)));
            Some(Out::B64(lanes(|lane| {
                let (x, y) = (f64::from_bits(a[lane]), f64::from_bits(b[lane]));
                let (rounded, error) = if op.opcode == VAddF64 {
                    let (sum, error) = two_sum(x, y);
                    (zero_sum_sign(sum, error, (x, y), round64_mode), error)
                } else {
                    let product = x * y;
                    (product, x.mul_add(y, -product))
                };
                // Finite operands past the largest finite value: an overflow, not exact.
                let overflow = rounded.is_infinite() && x.is_finite() && y.is_finite();
                direct64(rounded, if overflow { -rounded } else { error }, round64_mode).to_bits()
            })))
        }
        VFmaF64 => {
            let (a, b, c) = (input64(op.read64(wave, 0)), input64(op.read64(wave, 1)), input64(op.read64(wave, 2)));
            Some(Out::B64(lanes(|lane| {
                let (x, y, z) = (f64::from_bits(a[lane]), f64::from_bits(b[lane]), f64::from_bits(c[lane]));
                let rounded = x.mul_add(y, z);
                let rounded =
                    if rounded == 0.0 { zero_sum_sign(rounded, 0.0, (x * y, z), round64_mode) } else { rounded };
                // exact = p + ep + z, with p + ep the exact product and (s, es) TwoSum(p, z); s and
                // the rounded FMA lie within an ulp of each other, so s − rounded is exact, and
                // the sum's sign is the error's (a last rounding cannot change a sign).
                let product = x * y;
                let product_error = x.mul_add(y, -product);
                let (sum, sum_error) = two_sum(product, z);
                let error = ((sum - rounded) + sum_error) + product_error;
                let overflow = rounded.is_infinite() && x.is_finite() && y.is_finite() && z.is_finite();
                direct64(rounded, if overflow { -rounded } else { error }, round64_mode).to_bits()
            })))
        }
        VCvtF32F64 => {
            let a = input64(op.read64(wave, 0));
            Some(Out::B32(lanes(|lane| round32(f64::from_bits(a[lane]), 0.0, round32_mode).to_bits())))
        }
        VCvtF32I32 | VCvtF32U32 => {
            // Integers are exact in f64; above 2^24 the f32 rounds.
            let a = op.read(wave, 0);
            let signed = op.opcode == VCvtF32I32;
            Some(Out::B32(lanes(|lane| {
                let value = if signed { a[lane] as i32 as f64 } else { a[lane] as f64 };
                round32(value, 0.0, round32_mode).to_bits()
            })))
        }
        VCvtF16F32 => {
            let a = input32(op.read(wave, 0));
            Some(Out::B32(lanes(|lane| round16(f32::from_bits(a[lane]) as f64, 0.0, round64_mode))))
        }
        VAddF16 | VSubF16 | VSubrevF16 | VMulF16 | VFmaF16 | VFmacF16 => {
            let value = |row: Row| row.map(|bits| h(bits) as f64);
            let a = value(input16(op.read(wave, 0)));
            let b = value(input16(op.read(wave, 1)));
            let c = match op.opcode {
                VFmaF16 => value(input16(op.read(wave, 2))),
                // The accumulator is the destination's half (op_sel's, as the result's).
                VFmacF16 => {
                    let vdst = wave.vgpr.get(op.operands.vdst as usize).copied().unwrap_or([0; LANES]);
                    let high = op.operands.op_sel >> 3 & 1 == 1;
                    value(input16(vdst.map(|bits| if high { bits >> 16 } else { bits & 0xFFFF })))
                }
                _ => [0.0; LANES],
            };
            Some(Out::B32(lanes(|lane| {
                let (x, y, z) = (a[lane], b[lane], c[lane]);
                // f16 sums and products are exact in f64; an FMA's sum is TwoSum's pair.
                let addends = match op.opcode {
                    VAddF16 => (x, y),
                    VSubF16 => (x, -y),
                    VSubrevF16 => (y, -x),
                    VMulF16 => return round16(x * y, 0.0, round64_mode),
                    _ => (x * y, z),
                };
                let (high, low) = two_sum(addends.0, addends.1);
                round16(zero_sum_sign(high, low, addends, round64_mode), low, round64_mode)
            })))
        }
        _ => None,
    }
}

/// The inexact float operations whose directed rounding `moded` does not model. The others
/// outside `moded` are exact (moves, min/max, compares, floor and the like, `v_div_scale`'s powers of
/// two), round by their own rule (`v_cvt_pk_rtz`, float-to-integer conversions), or are
/// approximations the RDNA3 guide bounds in ulps whatever the mode (`v_rcp`, `v_sqrt`, `v_exp`…).
fn rounds_by_mode_unmodelled(opcode: Opcode) -> bool {
    use Opcode::*;
    matches!(
        opcode,
        VDivFmasF32
            | VDivFmasF64
            | VDivFixupF16
            | VLdexpF32
            | VLdexpF64
            | VLdexpF16
            | VPkAddF16
            | VPkMulF16
            | VPkFmaF16
            | VDot2F32F16
            | VDot2F16F16
            | VDot2Bf16Bf16
            | VDot2F32Bf16
            | VFmaMixF32
            | VFmaMixloF16
            | VFmaMixhiF16
            | VFmamkF16
            | VFmaakF16
            | VCvtF16U16
            | VCvtF16I16
            | VMulDx9ZeroF32
            | VFmaDx9ZeroF32
            | VFmacDx9ZeroF32
    )
}

/// MODE's output denormal flushing on a float result.
fn flush_output(op: &VOp, out: Out, mode: u32) -> Out {
    let (keep_out32, keep_out64) = ((mode >> 5) & 1 == 1, (mode >> 7) & 1 == 1);
    match (out, op.result) {
        (Out::B32(row), Kind::F32) if !keep_out32 && op.half & 8 == 0 => Out::B32(row.map(flush32)),
        (Out::B32(row), Kind::F16) if !keep_out64 && op.half & 8 != 0 => Out::B32(row.map(flush16)),
        (Out::B64(row), Kind::F64) if !keep_out64 => Out::B64(row.map(flush64)),
        (out, _) => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every f16, its neighbours' midpoints and the values just beside them round as IEEE's
    /// nearest even says: exhaustively, over all 63,488 finite positive and negative patterns.
    #[test]
    fn f16_conversions_round_once_to_nearest_even() {
        for sign in [0u32, 0x8000] {
            for bits in 0..0x7C00u32 {
                let value = h(sign | bits) as f64;
                assert_eq!(value.abs(), half::f16::from_bits(bits as u16).to_f64(), "{bits:#x}");
                assert_eq!(to_h64(value), sign | bits, "{bits:#x} round-trips");
                let next = if bits + 1 == 0x7C00 { 65536.0 } else { h(bits + 1) as f64 };
                let middle = (value.abs() + next) / 2.0;
                let even = if bits & 1 == 0 { bits } else { bits + 1 };
                let signed = |magnitude: f64| if sign != 0 { -magnitude } else { magnitude };
                assert_eq!(to_h64(signed(middle)), sign | even.min(0x7C00), "{bits:#x} midpoint");
                assert_eq!(to_h64(signed(middle.next_down())), sign | bits, "{bits:#x} below the midpoint");
                assert_eq!(to_h64(signed(middle.next_up())), sign | (bits + 1), "{bits:#x} above the midpoint");
            }
        }
        assert_eq!(to_h64(f64::INFINITY), 0x7C00);
        assert!(h(to_h64(f64::NAN)).is_nan());
        assert_eq!(h(0xFC00), f32::NEG_INFINITY);
    }

    /// The division sequences LLVM emits for `n / d` (`SITargetLowering::LowerFDIV64` and
    /// `LowerFDIV32` with denormals kept): `v_div_scale` ×2, `v_rcp`, FMA refinement,
    /// `v_div_fmas`, `v_div_fixup`. On hardware they give IEEE's correctly rounded quotient, so
    /// the helpers' model must make them do so here: over every pair of edge values (zeros,
    /// subnormals, the smallest normal, the largest finite, quotients that overflow and underflow)
    /// and 200,000 random pairs of each width, bit for bit against the host's division. The
    /// reciprocal is the exact one (the hardware's is within 1 ulp; the FMAs absorb it).
    #[test]
    fn division_sequences_are_ieee() {
        fn divide64(n: f64, d: f64) -> f64 {
            let (scaled_d, _) = div_scale64(d, d, n);
            let (scaled_n, vcc) = div_scale64(n, d, n);
            let rcp = 1.0 / scaled_d;
            let e = (-scaled_d).mul_add(rcp, 1.0);
            let rcp = rcp.mul_add(e, rcp);
            let e = (-scaled_d).mul_add(rcp, 1.0);
            let rcp = rcp.mul_add(e, rcp);
            let quotient = scaled_n * rcp;
            let residual = (-scaled_d).mul_add(quotient, scaled_n);
            div_fixup(div_fmas64(residual, rcp, quotient, vcc), d, n, FloatWidth::F64)
        }
        fn divide32(n: f32, d: f32) -> f32 {
            let (scaled_d, _) = div_scale32(d, d, n);
            let (scaled_n, vcc) = div_scale32(n, d, n);
            let rcp = 1.0 / scaled_d;
            let e = (-scaled_d).mul_add(rcp, 1.0);
            let rcp = e.mul_add(rcp, rcp);
            let quotient = scaled_n * rcp;
            let residual = (-scaled_d).mul_add(quotient, scaled_n);
            let quotient = residual.mul_add(rcp, quotient);
            let residual = (-scaled_d).mul_add(quotient, scaled_n);
            div_fixup(div_fmas32(residual, rcp, quotient, vcc) as f64, d as f64, n as f64, FloatWidth::F32) as f32
        }
        let edges64 = [
            0.0,
            f64::from_bits(1),
            f64::from_bits(0x000F_FFFF_FFFF_FFFF),
            f64::MIN_POSITIVE,
            1e-300,
            0.1,
            1.0,
            3.0,
            1e300,
            f64::MAX,
            f64::INFINITY,
        ];
        let edges32 = [
            0.0,
            f32::from_bits(1),
            f32::from_bits(0x007F_FFFF),
            f32::MIN_POSITIVE,
            1e-30,
            0.1,
            1.0,
            3.0,
            1e30,
            f32::MAX,
            f32::INFINITY,
        ];
        let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        for &n in &edges64 {
            for &d in &edges64 {
                for (n, d) in [(n, d), (-n, d), (n, -d)] {
                    assert!(same(divide64(n, d), n / d), "{n:e} / {d:e}: {:e}, IEEE {:e}", divide64(n, d), n / d);
                }
            }
        }
        for &n in &edges32 {
            for &d in &edges32 {
                for (n, d) in [(n, d), (-n, d), (n, -d)] {
                    let (ours, ieee) = (divide32(n, d) as f64, (n / d) as f64);
                    assert!(same(ours, ieee), "{n:e} / {d:e}: {ours:e}, IEEE {ieee:e}");
                }
            }
        }
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..200_000 {
            let (n, d) = (f64::from_bits(next()), f64::from_bits(next()));
            assert!(same(divide64(n, d), n / d), "{n:e} / {d:e}: {:e}, IEEE {:e}", divide64(n, d), n / d);
            let (n, d) = (f32::from_bits(next() as u32), f32::from_bits((next() >> 32) as u32));
            let (ours, ieee) = (divide32(n, d) as f64, (n / d) as f64);
            assert!(same(ours, ieee), "{n:e} / {d:e}: {ours:e}, IEEE {ieee:e}");
        }
    }
}
