//! WMMA (`v_wmma_*_16x16x16_*`): one wave32 wave multiplies 16×16 matrices, D = A × B + C.
//!
//! Register layout, wave32 (RDNA3 ISA guide, "Wave Matrix Multiply Accumulate"; the same layout
//! AMD's matrix instruction calculator prints, and that ROCm/FlyDSL#485 checked on gfx1151):
//! - A: lane `l` holds row `l % 16`, its 16 K elements packed in order through the source
//!   registers (f16/bf16: two per VGPR, K = 2j low half and 2j + 1 high half; iu8: four per VGPR;
//!   iu4: eight). Lanes 16–31 repeat lanes 0–15.
//! - B: lane `l` holds column `l % 16` the same way.
//! - C and D: VGPR `v`, lane `l` holds element (row 2v + l / 16, column l % 16); f32 and i32
//!   use the whole register, f16 and bf16 the half `op_sel[2]` selects (the other half is kept).
//! - The iu8/iu4 forms read `neg_lo[0]` and `neg_lo[1]` as "A signed" and "B signed"; `clamp`
//!   saturates the i32 result.

use half::{bf16, f16};

use super::VOp;
use crate::gfx11::Opcode;
use crate::interp::operands::Source;
use crate::interp::wave::{LANES, Wave};

const N: usize = 16;

/// The element type of A and B.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Input {
    F16,
    Bf16,
    Iu8,
    Iu4,
}

/// Runs a WMMA; `None` (refused, naming it) for a wave64 wave, whose register layout (each
/// matrix spread over 64 lanes, half the VGPRs) is not modelled.
pub(crate) fn run(wave: &mut Wave, op: &VOp) -> Option<()> {
    use Opcode::*;
    if wave.wide {
        return None;
    }
    let (input, float_out, half_out) = match op.opcode {
        VWmmaF3216x16x16F16 => (Input::F16, true, None),
        VWmmaF3216x16x16Bf16 => (Input::Bf16, true, None),
        VWmmaF1616x16x16F16 => (Input::F16, true, Some(false)),
        VWmmaBf1616x16x16Bf16 => (Input::Bf16, true, Some(true)),
        VWmmaI3216x16x16Iu8 => (Input::Iu8, false, None),
        VWmmaI3216x16x16Iu4 => (Input::Iu4, false, None),
        _ => return None,
    };
    let operands = &op.operands;
    let registers = |index: usize, count: usize| -> Option<Vec<[u32; LANES]>> {
        let Source::Vgpr(first) = operands.src[index] else { return None };
        (0..count).map(|offset| wave.vgpr.get(first as usize + offset).copied()).collect()
    };
    let per_register = match input {
        Input::F16 | Input::Bf16 => 2,
        Input::Iu8 => 4,
        Input::Iu4 => 8,
    };
    let a = registers(0, N / per_register)?;
    let b = registers(1, N / per_register)?;
    let high = operands.op_sel >> 2 & 1 == 1;
    // Element k of lane `lane`'s packed vector, as f64 (floats) or i64 (integers).
    let element = |rows: &[[u32; LANES]], lane: usize, k: usize, signed: bool| -> f64 {
        let word = rows[k / per_register][lane];
        let position = k % per_register;
        match input {
            Input::F16 => f16::from_bits((word >> (16 * position)) as u16).to_f64(),
            Input::Bf16 => bf16::from_bits((word >> (16 * position)) as u16).to_f64(),
            Input::Iu8 => {
                let raw = (word >> (8 * position)) & 0xFF;
                if signed { raw as u8 as i8 as f64 } else { raw as f64 }
            }
            Input::Iu4 => {
                let raw = (word >> (4 * position)) & 0xF;
                if signed { (((raw << 28) as i32) >> 28) as f64 } else { raw as f64 }
            }
        }
    };
    let (a_signed, b_signed) = (operands.neg & 1 == 1, operands.neg & 2 == 2);
    // C: its source may be an inline constant (every element the same) or eight VGPRs.
    let c_value = |row: usize, column: usize| -> f64 {
        let (register, lane) = (row / 2, column + 16 * (row % 2));
        let word = match operands.src[2] {
            Source::Vgpr(first) => wave.vgpr.get(first as usize + register).map_or(0, |rows| rows[lane]),
            Source::Constant(value) => value as u32,
            Source::Sgpr(register) => wave.read_sgpr(register as u32),
            Source::Scc => wave.scc as u32,
            // WMMA's C is never a lane mask.
            Source::Mask(_) | Source::ConstantMask(_) => 0,
        };
        match (float_out, half_out) {
            (true, None) => f32::from_bits(word) as f64,
            (true, Some(brain)) => {
                let bits = if high { word >> 16 } else { word } as u16;
                if brain { bf16::from_bits(bits).to_f64() } else { f16::from_bits(bits).to_f64() }
            }
            (false, _) => word as i32 as f64,
        }
    };
    let mut d = [[0u32; LANES]; N / 2];
    for row in 0..N {
        for column in 0..N {
            let mut sum = c_value(row, column);
            // Integer products are exact in f64 (|sum| < 2^53); float ones accumulate in f64 and
            // round once, within the hardware's rounding (the guide does not fix an order).
            for k in 0..N {
                sum += element(&a, row, k, a_signed) * element(&b, column, k, b_signed);
            }
            let (register, lane) = (row / 2, column + 16 * (row % 2));
            d[register][lane] = match (float_out, half_out) {
                (true, None) => (sum as f32).to_bits(),
                (true, Some(brain)) => {
                    let bits = if brain { bf16::from_f64(sum).to_bits() } else { f16::from_f64(sum).to_bits() };
                    bits as u32
                }
                (false, _) if operands.clamp => sum.clamp(i32::MIN as f64, i32::MAX as f64) as i32 as u32,
                (false, _) => sum as i64 as i32 as u32,
            };
        }
    }
    // WMMA ignores EXEC: the whole wave computes (RDNA3 ISA guide: it requires EXEC to be all
    // ones; a partial EXEC is undefined there, and every lane is written here).
    for (register, values) in d.iter().enumerate() {
        let Some(target) = wave.vgpr.get_mut(operands.vdst as usize + register) else { continue };
        for lane in 0..LANES {
            target[lane] = match half_out {
                None => values[lane],
                Some(_) if high => (target[lane] & 0xFFFF) | values[lane] << 16,
                Some(_) => (target[lane] & 0xFFFF_0000) | values[lane],
            };
        }
    }
    Some(())
}
