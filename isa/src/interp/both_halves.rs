//! A wave64 instruction whose two halves must both read a scalar source before either writes
//! the lane mask that source lies in.
//!
//! A wave64 wave runs a per-half VALU instruction twice (`launch::per_half`), and each half
//! writes its own 32 bits of a mask destination as it runs: the low half `s[n]`, the high half
//! `s[n+1]` (`Wave::mask_register`). Hardware reads every operand before it writes any, so an
//! instruction such as clang's `v_mad_u64_u32 v[0:1], s[2:3], s2, v2, v[0:1]` (the carry-out to
//! `s[2:3]`, the multiplier in `s2`, as gfx9 code computes a work-item's global id) must see the
//! old `s2` in both halves. Run half by half, the high half would read the low half's carry
//! mask instead. Such an instruction is planned as [`Plan::BothHalves`]: it runs once for the
//! wave, both halves inside one step, and the low half's mask word is written only after the
//! high half has read its sources.
//!
//! Instructions whose scalar sources do not overlap their mask destination (nearly all) keep
//! their own plan, so nothing is added to the common path.

use super::decoded_kernel::{Decoded, Plan};
use super::launch::step;
use super::operands::Source;
use super::valu::{Form, VOp};
use super::wave::{self, Flow, Wave};
use super::{ExecError, Memory};

/// Replaces the plan of each instruction of wave64 code whose low half's mask write would
/// reach a scalar source of its high half with [`Plan::BothHalves`] around it.
pub(crate) fn guard(code: &mut [Option<Decoded>]) {
    for decoded in code.iter_mut().flatten() {
        let Some(register) = overlapping_mask(&decoded.plan) else { continue };
        let plan = core::mem::replace(&mut decoded.plan, Plan::Unsupported);
        let inner = Decoded { instruction: decoded.instruction, plan, len: decoded.len, source: decoded.source };
        decoded.plan = Plan::BothHalves(Box::new((inner, register)));
    }
}

/// The SGPR a per-half plan's low half writes its mask word to, where a source of the
/// instruction reads that SGPR (as itself, or as the high word of a pair); `None` otherwise.
fn overlapping_mask(plan: &Plan) -> Option<u8> {
    let op: &VOp = match plan {
        Plan::Vector(op) => op,
        Plan::ZeroHigh(op) | Plan::CmpxMask(op) => op,
        Plan::Unfused(mad) => &mad.0,
        Plan::Dot2x16(dot) => &dot.0,
        _ => return None,
    };
    let register = mask_destination(op)?;
    op.operands
        .src
        .iter()
        .any(|source| match *source {
            // A 64-bit source names its pair by the low register.
            Source::Sgpr(first) | Source::Mask(first) => first == register || first + 1 == register,
            _ => false,
        })
        .then_some(register)
}

/// The SGPR `op` writes the running half's mask word to (`n` for the low half), if it writes
/// a mask other than EXEC: compares, and the carry-out operations (RDNA3 ISA guide, VOP3b).
fn mask_destination(op: &VOp) -> Option<u8> {
    use crate::gfx11::Opcode::*;
    let writes_mask = match op.form {
        Form::Compare { into_exec, .. } => !into_exec,
        Form::Alu => matches!(
            op.opcode,
            VAddCoU32
                | VSubCoU32
                | VSubrevCoU32
                | VAddCoCiU32
                | VSubCoCiU32
                | VSubrevCoCiU32
                | VMadU64U32
                | VMadI64I32
                | VDivScaleF32
                | VDivScaleF64
        ),
    };
    let register = op.operands.sdst;
    (writes_mask && u32::from(register) != wave::NULL && u32::from(register) != wave::EXEC).then_some(register)
}

/// Runs `inner`'s plan for both halves of a wave64 wave in one step: the low half, then the
/// high half with `register` (the low half's mask word) holding its value from before the
/// instruction, then the low half's word written. The wave's halves are as they were on
/// return, also on error.
#[inline(never)]
pub(crate) fn run<M: Memory + ?Sized, const WIDE: bool>(
    memory: &M,
    wave: &mut Wave,
    inner: &Decoded,
    register: u8,
    lds: &mut [u8],
) -> Result<Flow, ExecError> {
    let register = u32::from(register);
    let before = wave.read_sgpr(register);
    let flow = step::<M, WIDE>(memory, wave, inner, lds)?;
    let low = wave.read_sgpr(register);
    wave.write_sgpr(register, before);
    wave.swap_halves();
    let high = step::<M, WIDE>(memory, wave, inner, lds);
    wave.swap_halves();
    high?;
    wave.write_sgpr(register, low);
    Ok(flow)
}
