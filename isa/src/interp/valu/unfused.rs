//! gfx9's non-fused f32 multiply-adds, which gfx11 lacks: `v_mad_f32`, `v_mac_f32`,
//! `v_madak_f32`, `v_madmk_f32` and `v_mad_legacy_f32` (`from_gfx9/vector.rs`, `unfused`).
//!
//! Each is a multiply rounded to f32, then an add rounded to f32 (Vega ISA guide, V_MAD_F32:
//! "D.f = S0.f * S1.f + S2.f"; two roundings, unlike V_FMA_F32), with f32 denormals flushed
//! whatever MODE's FP_DENORM says: LLVM forms `fmad` for f32 only where f32 denormals are
//! flushed (SIISelLowering.cpp, `SITargetLowering::isFMADLegal`: `hasMadMacF32Insts()` and the
//! f32 denormal mode preserve-sign), and selects `v_mad_f32`/`v_mac_f32` for
//! `llvm.amdgcn.fmad.ftz` ("fmad with flush to zero", IntrinsicsAMDGPU.td) even under
//! `+fp32-denormals` (test/CodeGen/AMDGPU/llvm.amdgcn.fmad.ftz.ll, gfx900 `v_ma{d,c}_f32`).
//! So the sources, the rounded product and the rounded sum are each flushed to a zero of their
//! sign. MODE's rounding applies to both roundings.

use super::lane_math::two_sum;
use super::mode::{flush32, round32, zero_sum_sign};
use super::rows::lanes;
use super::{Out, VOp, commit};
use crate::gfx11::Opcode;
use crate::interp::wave::{Flow, LANES, Wave};

/// Runs `op`, a gfx11 stand-in naming the operands (`v_fma_f32` for `v_mad_f32` and
/// `v_mad_legacy_f32`, `v_fmac_f32` for `v_mac_f32`, `v_fmaak_f32` for `v_madak_f32`,
/// `v_fmamk_f32` for `v_madmk_f32`), as the module's unfused multiply-add; `legacy` gives
/// `v_mad_legacy_f32`'s DX9 product (Vega ISA guide, V_MAD_LEGACY_F32: 0 × anything, NaN and
/// infinity included, is 0). `None` for any other stand-in.
pub(crate) fn step_unfused(wave: &mut Wave, op: &VOp, legacy: bool) -> Option<Flow> {
    let writes = op.writes(wave);
    let literal = [op.operands.literal; LANES];
    let a = op.read(wave, 0);
    let (b, c) = match op.opcode {
        Opcode::VFmaF32 => (op.read(wave, 1), op.read(wave, 2)),
        Opcode::VFmacF32 => (op.read(wave, 1), *wave.vgpr.get(op.operands.vdst as usize)?),
        Opcode::VFmaakF32 => (op.read(wave, 1), literal),
        Opcode::VFmamkF32 => (literal, op.read(wave, 1)),
        _ => return None,
    };
    let round = wave.mode & 3;
    let value = |bits: u32| f32::from_bits(flush32(bits)) as f64;
    let row = lanes(|lane| {
        let (x, y, z) = (value(a[lane]), value(b[lane]), value(c[lane]));
        // A product of two f32 values is exact in f64; its one rounding is round32's.
        let product = match legacy && (x == 0.0 || y == 0.0) {
            true => 0.0,
            false => value(round32(x * y, 0.0, round).to_bits()),
        };
        let (high, low) = two_sum(product, z);
        let sum = round32(zero_sum_sign(high, low, (product, z), round), low, round);
        flush32(sum.to_bits())
    });
    commit(wave, op, Out::B32(row), writes);
    Some(Flow::Next)
}
