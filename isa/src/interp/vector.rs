//! Vector ALU instructions: VOP1, VOP2, VOPC, VOP3 (and VOP3SD), VOPD (RDNA3 ISA chapter 7 for
//! their operations, chapter 15 for the fields). Every lane outside EXEC keeps its registers; a
//! compare writes 0 for those lanes (RDNA3 ISA guide).

use super::ExecError;
use super::launch::{Flow, unsupported};
use super::scalar::width;
use super::wave::{EXEC, Kind, LANES, VCC, Wave, source_kind};
use crate::gfx11::{Encoding, Entry, Instruction, Opcode, Slot};

/// A VALU instruction's fields, whatever its encoding.
struct Fields {
    vdst: u32,
    /// Where a carry-out or compare result goes (a scalar field).
    sdst: u32,
    /// 9-bit source fields (VGPRs as 256 + n).
    src: [u32; 3],
    neg: u32,
    abs: u32,
    clamp: bool,
    omod: u32,
    literal: Option<u32>,
}

fn fields(instruction: &Instruction) -> Fields {
    let [w0, w1, _] = instruction.words;
    let literal = instruction.literal();
    let mut fields = Fields { vdst: 0, sdst: VCC, src: [0; 3], neg: 0, abs: 0, clamp: false, omod: 0, literal };
    match instruction.encoding {
        Encoding::Vop1 => {
            fields.vdst = (w0 >> 17) & 0xFF;
            fields.src[0] = w0 & 0x1FF;
        }
        Encoding::Vop2 | Encoding::Vopc => {
            fields.vdst = (w0 >> 17) & 0xFF;
            fields.src = [w0 & 0x1FF, 256 + ((w0 >> 9) & 0xFF), VCC];
        }
        _ => {
            let has_sdst = instruction.entry.slots.iter().any(|slot| matches!(slot, Slot::Sdst(_)));
            fields.vdst = w0 & 0xFF;
            fields.src = [w1 & 0x1FF, (w1 >> 9) & 0x1FF, (w1 >> 18) & 0x1FF];
            fields.neg = w1 >> 29;
            fields.omod = (w1 >> 27) & 3;
            fields.clamp = (w0 >> 15) & 1 == 1;
            if has_sdst {
                fields.sdst = (w0 >> 8) & 0x7F;
            } else {
                fields.abs = (w0 >> 8) & 7;
            }
            if instruction.entry.slots.iter().any(|slot| matches!(slot, Slot::ScalarVdst(_))) {
                fields.sdst = w0 & 0xFF;
            }
        }
    }
    fields
}

pub(crate) fn step(wave: &mut Wave, instruction: &Instruction) -> Result<Flow, ExecError> {
    if instruction.encoding == Encoding::Vopd {
        return dual(wave, instruction);
    }
    if instruction.encoding == Encoding::Vop3p {
        return Err(unsupported(wave, instruction));
    }
    let f = fields(instruction);
    let entry = instruction.entry;
    let opcode = entry.opcode;
    let kind = source_kind(entry.mnemonic);
    if entry.mnemonic.starts_with("v_cmp") {
        return compare(wave, instruction, &f, kind);
    }
    let dst_width = width(instruction, |slot| match slot {
        Slot::Vdst(width) => Some(*width),
        _ => None,
    });
    match opcode {
        Opcode::VNop => return Ok(Flow::Next),
        Opcode::VReadfirstlaneB32 => {
            let lane = wave.lanes().next().unwrap_or(0);
            let value = wave.source(f.src[0], lane, f.literal, Kind::Int) as u32;
            wave.write_sgpr(f.sdst_scalar(instruction), value);
            return Ok(Flow::Next);
        }
        Opcode::VReadlaneB32 => {
            let lane = wave.scalar(f.src[1], f.literal, Kind::Int) as usize % LANES;
            let value = wave.source(f.src[0], lane, f.literal, Kind::Int) as u32;
            wave.write_sgpr(f.sdst_scalar(instruction), value);
            return Ok(Flow::Next);
        }
        Opcode::VWritelaneB32 => {
            let lane = wave.scalar(f.src[1], f.literal, Kind::Int) as usize % LANES;
            let value = wave.scalar(f.src[0], f.literal, Kind::Int);
            wave.write_vgpr(f.vdst, lane, value);
            return Ok(Flow::Next);
        }
        _ => {}
    }
    // Carry-producing operations write a lane mask to `sdst` as well.
    let carries = matches!(
        opcode,
        Opcode::VAddCoU32
            | Opcode::VSubCoU32
            | Opcode::VSubrevCoU32
            | Opcode::VAddCoCiU32
            | Opcode::VSubCoCiU32
            | Opcode::VSubrevCoCiU32
            | Opcode::VMadU64U32
            | Opcode::VMadI64I32
    );
    let carry_in = wave.scalar(f.src[2], f.literal, Kind::Int);
    let mut carry_out = 0u32;
    let mut results = [0u64; LANES];
    let exec = wave.exec();
    for (lane, result) in results.iter_mut().enumerate() {
        if exec >> lane & 1 == 0 {
            continue;
        }
        let read = |index: usize| modified(wave.source(f.src[index], lane, f.literal, kind), index, &f, kind);
        let (a, b) = (
            read(0),
            if entry.slots.len() > 2 || matches!(instruction.encoding, Encoding::Vop2) { read(1) } else { 0 },
        );
        let (a32, b32) = (a as u32, b as u32);
        let cin = (carry_in >> lane & 1) as u64;
        let (value, carry) = match opcode {
            Opcode::VMovB32 => (a32 as u64, false),
            Opcode::VAddNcU32 => (a32.wrapping_add(b32) as u64, false),
            Opcode::VSubNcU32 => (a32.wrapping_sub(b32) as u64, false),
            Opcode::VSubrevNcU32 => (b32.wrapping_sub(a32) as u64, false),
            Opcode::VAddCoU32 => {
                let sum = a32 as u64 + b32 as u64;
                (sum & 0xFFFF_FFFF, sum >> 32 != 0)
            }
            Opcode::VSubCoU32 => (a32.wrapping_sub(b32) as u64, b32 > a32),
            Opcode::VSubrevCoU32 => (b32.wrapping_sub(a32) as u64, a32 > b32),
            Opcode::VAddCoCiU32 => {
                let sum = a32 as u64 + b32 as u64 + cin;
                (sum & 0xFFFF_FFFF, sum >> 32 != 0)
            }
            Opcode::VSubCoCiU32 => {
                ((a32 as u64).wrapping_sub(b32 as u64 + cin) & 0xFFFF_FFFF, b32 as u64 + cin > a32 as u64)
            }
            Opcode::VSubrevCoCiU32 => {
                ((b32 as u64).wrapping_sub(a32 as u64 + cin) & 0xFFFF_FFFF, a32 as u64 + cin > b32 as u64)
            }
            Opcode::VMadU64U32 => {
                let c = read(2);
                let (sum, overflow) = (a32 as u64 * b32 as u64).overflowing_add(c);
                (sum, overflow)
            }
            Opcode::VMadI64I32 => {
                let c = read(2) as i64;
                let (sum, overflow) = (a32 as i32 as i64 * b32 as i32 as i64).overflowing_add(c);
                (sum as u64, overflow)
            }
            // The count of set mask bits below this lane, plus the addend (wave32: no lane is
            // past 31, so the high half counts nothing).
            Opcode::VMbcntLoU32B32 => {
                ((a32 & ((1u64 << lane) - 1) as u32).count_ones().wrapping_add(b32) as u64, false)
            }
            Opcode::VMbcntHiU32B32 => (b32 as u64, false),
            Opcode::VCndmaskB32 => {
                let mask = if instruction.encoding == Encoding::Vop2 { wave.sgpr[VCC as usize] } else { carry_in };
                ((if mask >> lane & 1 == 1 { b32 } else { a32 }) as u64, false)
            }
            _ => match lane_value(opcode, a, b, || read(2), wave.vgpr(f.vdst, lane), f.literal) {
                Some(value) => (value, false),
                None => return Err(unsupported(wave, instruction)),
            },
        };
        *result = value;
        carry_out |= (carry as u32) << lane;
    }
    for lane in (0..LANES).filter(|lane| exec >> lane & 1 == 1) {
        let value = output(results[lane], &f, kind, dst_width);
        if dst_width >= 2 {
            wave.write_vgpr64(f.vdst, lane, value)
        } else {
            wave.write_vgpr(f.vdst, lane, value as u32)
        }
    }
    if carries {
        wave.write_sgpr(f.sdst, carry_out);
    }
    Ok(Flow::Next)
}

impl Fields {
    /// The scalar destination of `v_readfirstlane`/`v_readlane` (the vdst field holds an SGPR).
    fn sdst_scalar(&self, instruction: &Instruction) -> u32 {
        match instruction.encoding {
            Encoding::Vop1 => self.vdst,
            _ => self.sdst,
        }
    }
}

/// Applies VOP3's `abs` and `neg` to a float source.
fn modified(value: u64, index: usize, f: &Fields, kind: Kind) -> u64 {
    let (abs, neg) = (f.abs >> index & 1 == 1, f.neg >> index & 1 == 1);
    match kind {
        Kind::F32 => {
            let mut bits = value as u32;
            if abs {
                bits &= 0x7FFF_FFFF;
            }
            if neg {
                bits ^= 0x8000_0000;
            }
            bits as u64
        }
        Kind::F64 => {
            let mut bits = value;
            if abs {
                bits &= !(1 << 63);
            }
            if neg {
                bits ^= 1 << 63;
            }
            bits
        }
        Kind::Int => value,
    }
}

/// Applies VOP3's output modifier and clamp to a float result.
fn output(value: u64, f: &Fields, kind: Kind, width: u8) -> u64 {
    if f.omod == 0 && !f.clamp {
        return value;
    }
    let scale = [1.0, 2.0, 4.0, 0.5][f.omod as usize];
    match (kind, width) {
        (Kind::F64, 2) => {
            let mut result = f64::from_bits(value) * scale;
            if f.clamp {
                result = result.clamp(0.0, 1.0);
            }
            result.to_bits()
        }
        (Kind::F32, _) => {
            let mut result = f32::from_bits(value as u32) * scale as f32;
            if f.clamp {
                result = result.clamp(0.0, 1.0);
            }
            result.to_bits() as u64
        }
        _ => value,
    }
}

fn f32_of(value: u64) -> f32 {
    f32::from_bits(value as u32)
}

fn f64_of(value: u64) -> f64 {
    f64::from_bits(value)
}

/// One lane's result of the operations without carries; `c` reads the third source and
/// `accumulator` is the destination's current value (for `fmac`).
fn lane_value(
    opcode: Opcode,
    a: u64,
    b: u64,
    c: impl Fn() -> u64,
    accumulator: u32,
    literal: Option<u32>,
) -> Option<u64> {
    let (a32, b32) = (a as u32, b as u32);
    let f32_bits = |value: f32| value.to_bits() as u64;
    Some(match opcode {
        Opcode::VAndB32 => (a32 & b32) as u64,
        Opcode::VOrB32 => (a32 | b32) as u64,
        Opcode::VXorB32 => (a32 ^ b32) as u64,
        Opcode::VXnorB32 => !(a32 ^ b32) as u64,
        Opcode::VNotB32 => !a32 as u64,
        Opcode::VLshlrevB32 => (b32 << (a32 & 31)) as u64,
        Opcode::VLshrrevB32 => (b32 >> (a32 & 31)) as u64,
        Opcode::VAshrrevI32 => ((b32 as i32) >> (a32 & 31)) as u32 as u64,
        Opcode::VLshlrevB64 => b << (a32 & 63),
        Opcode::VLshrrevB64 => b >> (a32 & 63),
        Opcode::VAshrrevI64 => ((b as i64) >> (a32 & 63)) as u64,
        Opcode::VLshlAddU32 => (a32 << (b32 & 31)).wrapping_add(c() as u32) as u64,
        Opcode::VAddLshlU32 => (a32.wrapping_add(b32) << (c() as u32 & 31)) as u64,
        Opcode::VLshlOrB32 => ((a32 << (b32 & 31)) | c() as u32) as u64,
        Opcode::VAndOrB32 => ((a32 & b32) | c() as u32) as u64,
        Opcode::VOr3B32 => (a32 | b32 | c() as u32) as u64,
        Opcode::VXor3B32 => (a32 ^ b32 ^ c() as u32) as u64,
        Opcode::VAdd3U32 => a32.wrapping_add(b32).wrapping_add(c() as u32) as u64,
        Opcode::VMulLoU32 => a32.wrapping_mul(b32) as u64,
        Opcode::VMulHiU32 => ((a32 as u64 * b32 as u64) >> 32) & 0xFFFF_FFFF,
        Opcode::VMulHiI32 => (((a32 as i32 as i64 * b32 as i32 as i64) >> 32) as u32) as u64,
        Opcode::VMulU32U24 => (a32 & 0xFF_FFFF).wrapping_mul(b32 & 0xFF_FFFF) as u64,
        Opcode::VMulI32I24 => ((((a32 << 8) as i32 >> 8).wrapping_mul((b32 << 8) as i32 >> 8)) as u32) as u64,
        Opcode::VMadU32U24 => ((a32 & 0xFF_FFFF).wrapping_mul(b32 & 0xFF_FFFF).wrapping_add(c() as u32)) as u64,
        Opcode::VMinU32 => a32.min(b32) as u64,
        Opcode::VMaxU32 => a32.max(b32) as u64,
        Opcode::VMinI32 => (a32 as i32).min(b32 as i32) as u32 as u64,
        Opcode::VMaxI32 => (a32 as i32).max(b32 as i32) as u32 as u64,
        Opcode::VBfeU32 => {
            let (offset, size) = (b32 & 31, c() as u32 & 31);
            if size == 0 { 0 } else { ((a32 >> offset) & ((1u32 << size) - 1)) as u64 }
        }
        Opcode::VBfeI32 => {
            let (offset, size) = (b32 & 31, c() as u32 & 31);
            if size == 0 { 0 } else { ((((a32 >> offset) << (32 - size)) as i32 >> (32 - size)) as u32) as u64 }
        }
        Opcode::VBfiB32 => ((a32 & b32) | (!a32 & c() as u32)) as u64,
        Opcode::VAlignbitB32 => ((((a32 as u64) << 32 | b32 as u64) >> (c() as u32 & 31)) as u32) as u64,
        Opcode::VBfmB32 => (((1u64 << (a32 & 31)) - 1) << (b32 & 31)) as u32 as u64,
        Opcode::VBcntU32B32 => a32.count_ones().wrapping_add(b32) as u64,
        // f32.
        Opcode::VAddF32 => f32_bits(f32_of(a) + f32_of(b)),
        Opcode::VSubF32 => f32_bits(f32_of(a) - f32_of(b)),
        Opcode::VSubrevF32 => f32_bits(f32_of(b) - f32_of(a)),
        Opcode::VMulF32 => f32_bits(f32_of(a) * f32_of(b)),
        Opcode::VFmaF32 => f32_bits(f32_of(a).mul_add(f32_of(b), f32_of(c()))),
        Opcode::VFmacF32 => f32_bits(f32_of(a).mul_add(f32_of(b), f32::from_bits(accumulator))),
        Opcode::VFmaakF32 => f32_bits(f32_of(a).mul_add(f32_of(b), f32::from_bits(literal.unwrap_or(0)))),
        Opcode::VFmamkF32 => f32_bits(f32_of(a).mul_add(f32::from_bits(literal.unwrap_or(0)), f32_of(b))),
        Opcode::VMinF32 => f32_bits(f32_of(a).min(f32_of(b))),
        Opcode::VMaxF32 => f32_bits(f32_of(a).max(f32_of(b))),
        Opcode::VRcpF32 | Opcode::VRcpIflagF32 => f32_bits(1.0 / f32_of(a)),
        Opcode::VSqrtF32 => f32_bits(f32_of(a).sqrt()),
        Opcode::VRsqF32 => f32_bits(1.0 / f32_of(a).sqrt()),
        Opcode::VTruncF32 => f32_bits(f32_of(a).trunc()),
        Opcode::VFloorF32 => f32_bits(f32_of(a).floor()),
        Opcode::VCeilF32 => f32_bits(f32_of(a).ceil()),
        Opcode::VRndneF32 => f32_bits(f32_of(a).round_ties_even()),
        Opcode::VFractF32 => f32_bits(f32_of(a) - f32_of(a).floor()),
        Opcode::VLdexpF32 => f32_bits(f32_of(a) * 2f32.powi(b32 as i32)),
        Opcode::VCvtF32U32 => f32_bits(a32 as f32),
        Opcode::VCvtF32I32 => f32_bits(a32 as i32 as f32),
        // Float to integer conversions saturate and send NaN to 0, as Rust's casts do (the RDNA3
        // ISA guide's V_CVT_U32_F32 and V_CVT_I32_F32).
        Opcode::VCvtU32F32 => f32_of(a) as u32 as u64,
        Opcode::VCvtI32F32 => f32_of(a) as i32 as u32 as u64,
        Opcode::VCvtF32F64 => f32_bits(f64_of(a) as f32),
        Opcode::VCvtF64F32 => (f32_of(a) as f64).to_bits(),
        Opcode::VCvtF64U32 => (a32 as f64).to_bits(),
        Opcode::VCvtF64I32 => (a32 as i32 as f64).to_bits(),
        Opcode::VCvtU32F64 => f64_of(a) as u32 as u64,
        Opcode::VCvtI32F64 => f64_of(a) as i32 as u32 as u64,
        // f64.
        Opcode::VAddF64 => (f64_of(a) + f64_of(b)).to_bits(),
        Opcode::VMulF64 => (f64_of(a) * f64_of(b)).to_bits(),
        Opcode::VFmaF64 => f64_of(a).mul_add(f64_of(b), f64_of(c())).to_bits(),
        Opcode::VMinF64 => f64_of(a).min(f64_of(b)).to_bits(),
        Opcode::VMaxF64 => f64_of(a).max(f64_of(b)).to_bits(),
        Opcode::VLdexpF64 => (f64_of(a) * 2f64.powi(b32 as i32)).to_bits(),
        Opcode::VTruncF64 => f64_of(a).trunc().to_bits(),
        Opcode::VFloorF64 => f64_of(a).floor().to_bits(),
        Opcode::VCeilF64 => f64_of(a).ceil().to_bits(),
        Opcode::VRcpF64 => (1.0 / f64_of(a)).to_bits(),
        Opcode::VSqrtF64 => f64_of(a).sqrt().to_bits(),
        Opcode::VFractF64 => (f64_of(a) - f64_of(a).floor()).to_bits(),
        _ => return None,
    })
}

/// `v_cmp_*` and `v_cmpx_*`: the condition and type come from the mnemonic
/// (`v_cmp[x]_<condition>_<type>`). `v_cmp` writes its lane mask to `sdst` (VCC for VOPC);
/// `v_cmpx` writes it to EXEC only (gfx11).
fn compare(wave: &mut Wave, instruction: &Instruction, f: &Fields, kind: Kind) -> Result<Flow, ExecError> {
    let Some((into_exec, condition, ty)) = parse_compare(instruction.entry) else {
        return Err(unsupported(wave, instruction));
    };
    let exec = wave.exec();
    let mut mask = 0u32;
    for lane in (0..LANES).filter(|lane| exec >> lane & 1 == 1) {
        let a = modified(wave.source(f.src[0], lane, f.literal, kind), 0, f, kind);
        let b = modified(wave.source(f.src[1], lane, f.literal, kind), 1, f, kind);
        let Some(result) = evaluate(condition, ty, a, b) else {
            return Err(unsupported(wave, instruction));
        };
        mask |= (result as u32) << lane;
    }
    if into_exec {
        wave.write_sgpr(EXEC, mask);
    } else {
        wave.write_sgpr(f.sdst, mask);
    }
    Ok(Flow::Next)
}

fn parse_compare(entry: &Entry) -> Option<(bool, &'static str, &'static str)> {
    let name = entry.mnemonic.trim_end_matches("_e32").trim_end_matches("_e64");
    let (into_exec, rest) = match name.strip_prefix("v_cmpx_") {
        Some(rest) => (true, rest),
        None => (false, name.strip_prefix("v_cmp_")?),
    };
    let (condition, ty) = rest.rsplit_once('_')?;
    Some((into_exec, condition, ty))
}

fn evaluate(condition: &str, ty: &str, a: u64, b: u64) -> Option<bool> {
    use core::cmp::Ordering::*;
    let order = match ty {
        "u16" => Some((a as u16).cmp(&(b as u16))),
        "i16" => Some((a as i16).cmp(&(b as i16))),
        "u32" => Some((a as u32).cmp(&(b as u32))),
        "i32" => Some((a as i32).cmp(&(b as i32))),
        "u64" => Some(a.cmp(&b)),
        "i64" => Some((a as i64).cmp(&(b as i64))),
        "f32" => f32_of(a).partial_cmp(&f32_of(b)),
        "f64" => f64_of(a).partial_cmp(&f64_of(b)),
        _ => return None,
    };
    // An unordered float comparison (a NaN) makes `order` None: the ordered conditions are
    // false, their negations (`n*`) and `u` true.
    Some(match condition {
        "f" => false,
        "t" | "tru" => true,
        "lt" => order == Some(Less),
        "eq" => order == Some(Equal),
        "le" => matches!(order, Some(Less | Equal)),
        "gt" => order == Some(Greater),
        "lg" => matches!(order, Some(Less | Greater)),
        "ne" | "neq" => order != Some(Equal),
        "ge" => matches!(order, Some(Greater | Equal)),
        "o" => order.is_some(),
        "u" => order.is_none(),
        "nge" => !matches!(order, Some(Greater | Equal)),
        "nlg" => !matches!(order, Some(Less | Greater)),
        "ngt" => order != Some(Greater),
        "nle" => !matches!(order, Some(Less | Equal)),
        "nlt" => order != Some(Less),
        _ => return None,
    })
}

/// VOPD: two independent operations; both read their sources before either writes (RDNA3 ISA
/// guide, "Dual Issue VALU").
fn dual(wave: &mut Wave, instruction: &Instruction) -> Result<Flow, ExecError> {
    let [w0, w1, _] = instruction.words;
    let literal = instruction.literal();
    let x_dst = (w1 >> 24) & 0xFF;
    let y_dst = (((w1 >> 17) & 0x7F) << 1) | (!x_dst & 1);
    let halves = [
        (instruction.entry, x_dst, w0 & 0x1FF, 256 + ((w0 >> 9) & 0xFF)),
        (instruction.dual.expect("VOPD has its Y half"), y_dst, w1 & 0x1FF, 256 + ((w1 >> 9) & 0xFF)),
    ];
    let exec = wave.exec();
    let mut results = [[0u32; LANES]; 2];
    for (half, &(entry, vdst, src0, vsrc1)) in halves.iter().enumerate() {
        for lane in (0..LANES).filter(|lane| exec >> lane & 1 == 1) {
            let a = wave.source(src0, lane, literal, Kind::F32);
            let b = wave.source(vsrc1, lane, literal, Kind::F32);
            let value = match entry.opcode {
                Opcode::VMovB32 => a,
                Opcode::VCndmaskB32 => {
                    if wave.sgpr[VCC as usize] >> lane & 1 == 1 {
                        b
                    } else {
                        a
                    }
                }
                Opcode::VAddNcU32 => (a as u32).wrapping_add(b as u32) as u64,
                Opcode::VLshlrevB32 => ((b as u32) << (a as u32 & 31)) as u64,
                Opcode::VAndB32 => a & b & 0xFFFF_FFFF,
                opcode => match lane_value(opcode, a, b, || 0, wave.vgpr(vdst, lane), literal) {
                    Some(value) => value,
                    None => return Err(unsupported(wave, instruction)),
                },
            };
            results[half][lane] = value as u32;
        }
    }
    for (half, &(_, vdst, _, _)) in halves.iter().enumerate() {
        for lane in (0..LANES).filter(|lane| exec >> lane & 1 == 1) {
            wave.write_vgpr(vdst, lane, results[half][lane]);
        }
    }
    Ok(Flow::Next)
}
