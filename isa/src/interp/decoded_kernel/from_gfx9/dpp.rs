//! gfx9 DPP that gfx11's DPP16 cannot express, run as [`Plan::WaveDpp`]: the whole-wave
//! patterns (`wave_shl:1`, `wave_rol:1`, `wave_shr:1`, `wave_ror:1`, `row_bcast:15`,
//! `row_bcast:31`), which reach across rows and, in a wave64 wave, across its two halves, and
//! any DPP operation with a 16-bit result, whose high half gfx9 zeroes in the lanes it writes,
//! and gfx90a's 64-bit ("DP ALU") DPP, which takes only `row_newbcast` and has no gfx11 DPP16
//! form (gfx11 has no DPP on 64-bit operands).
//!
//! The wave's src0 lanes are gathered once for all 64 lanes into a shadow VGPR (two for a
//! 64-bit src0; the first past the kernel's own, as SDWA's plan uses), and the operation runs,
//! half by half, as its gfx11 translation without DPP, src0 read from that shadow, with EXEC
//! narrowed to the lanes DPP lets write; a 16-bit result then has its high half zeroed in those
//! lanes.
//!
//! Patterns (Vega ISA guide, "DPP" DPP_CTRL; LLVM's `DppCtrl`, SIDefines.h): `wave_shl:1`
//! (0x130) reads lane i + 1 and `wave_rol:1` (0x134) lane (i + 1) mod 64; `wave_shr:1` (0x138)
//! lane i − 1 and `wave_ror:1` (0x13C) lane (i − 1) mod 64 (left/right as in `row_shl`/`row_shr`:
//! a left shift reads the next lane up); `row_bcast:15` (0x142) gives each row after the first
//! the last lane of the row before it, `row_bcast:31` (0x143) gives rows 2 and 3 lane 31 (the
//! "broadcast 15th thread of each row to next row" and "thread 31 to rows 2 and 3" of the
//! guide). A lane whose pattern leaves the wave, or whose source lane EXEC disables, reads 0
//! with `bound_ctrl` and is not written without it, as `operands::DppPlan` has it for DPP16.

use super::{NUMBERING, Plan, Refusal, gfx942, vector};
use crate::gfx9::{self, Extension, Opcode as O9, Slot};
use crate::gfx11::{self, Opcode as O11};
use crate::interp::decoded_kernel::reencode::{self, E32, E32Form};
use crate::interp::operands::{DppPlan, INVALID, Source, masks};
use crate::interp::valu::{self, VOp};
use crate::interp::wave::{EXEC, Flow, LANES, Wave};

/// A [`Plan::WaveDpp`]: the stand-in (the operation's gfx11 translation without DPP, src0 the
/// shadow row), the VGPR DPP reads and how many rows from it (2 for a 64-bit src0), the shadow
/// row, the lane each of the 64 lanes reads (`INVALID` where none), the lanes row and bank
/// masks enable, `bound_ctrl`, and whether the result is 16-bit with its high half zeroed.
#[derive(Clone, Debug)]
pub(crate) struct WaveDpp {
    op: VOp,
    source: u16,
    rows: u16,
    shadow: u16,
    from: [u8; 2 * LANES],
    enabled: u64,
    bound_ctrl: bool,
    zero_high: bool,
}

/// gfx9's whole-wave DPP controls (the module's patterns), which gfx11 lacks.
fn wave_control(control: u32) -> bool {
    matches!(control, 0x130 | 0x134 | 0x138 | 0x13C | 0x142 | 0x143)
}

/// Whether `instruction` is DPP that only [`planned`] runs: a whole-wave pattern, a 16-bit
/// result gfx9 zeroes the high half of, or a 64-bit operand.
pub(super) fn needs_plan(instruction: &gfx9::Instruction) -> bool {
    let Some(word) = instruction.extension_word() else { return false };
    instruction.extension == Extension::Dpp
        && (wave_control((word >> 8) & 0x1FF)
            || vector::zeroes_high_half(instruction)
            || instruction.double_precision_dpp())
}

/// The lane of the wave each of its 64 lanes reads under DPP word `word` (`INVALID` where none)
/// on `processor`: `row_newbcast` (gfx90a's, gfx11's `row_share`, `vector::dpp_word`) only
/// where the processor has it.
fn sources(word: u32, processor: gfx9::Processor) -> Result<[u8; 2 * LANES], Refusal> {
    let control = (word >> 8) & 0x1FF;
    if control >= 0x160 || (control >= 0x150 && !processor.has_unified_registers()) {
        return Err(Refusal("a DPP control gfx9 reserves"));
    }
    if !wave_control(control) {
        // A DPP16 pattern: the same within each half's rows.
        let dpp16 = DppPlan::dpp16(word).ok_or(Refusal("a DPP control gfx9 reserves"))?;
        return Ok(core::array::from_fn(|lane| match dpp16.from[lane % LANES] {
            INVALID => INVALID,
            from => from + (lane / LANES * LANES) as u8,
        }));
    }
    let wave = 2 * LANES;
    Ok(core::array::from_fn(|lane| {
        let from = match control {
            0x130 => Some(lane + 1).filter(|&from| from < wave),
            0x134 => Some((lane + 1) % wave),
            0x138 => lane.checked_sub(1),
            0x13C => Some((lane + wave - 1) % wave),
            0x142 => (lane >= 16).then(|| (lane & 0x30) - 1),
            _ => (lane >= 32).then_some(31),
        };
        from.map_or(INVALID, |from| from as u8)
    }))
}

/// Plans `instruction` (VOP1/VOP2 DPP, [`needs_plan`]) as gfx11's `equivalent` (or, for
/// gfx942's `v_mov_b64` and gfx90a's `v_fmac_f64`, which gfx11 lacks, their own stand-ins) run
/// through [`step`], its src0 lanes gathered into the shadow VGPRs from `shadow`. Refused: VOPC
/// (whose mask gfx9 writes whole), src0/src1 abs or neg (bits [23:20] of the DPP word), which
/// the stand-in, an e32 form without them, cannot carry, and other operations gfx11 lacks.
pub(super) fn planned(
    instruction: &gfx9::Instruction,
    equivalent: Option<O11>,
    shadow: u16,
) -> Result<(gfx11::Instruction, Plan), Refusal> {
    let word = instruction.extension_word().ok_or(Refusal("a DPP instruction without its word"))?;
    if instruction.encoding == gfx9::Encoding::Vopc {
        return Err(Refusal("a whole-wave DPP compare"));
    }
    if (word >> 20) & 0xF != 0 {
        return Err(Refusal("a whole-wave or 16-bit DPP operation with abs or neg"));
    }
    // The instruction as if src0 named DPP's VGPR directly.
    let w0 = (instruction.words[0] & !0x1FF) | (256 + (word & 0xFF));
    let (encoding, slots, literal) = (instruction.encoding.gfx11(), instruction.entry.slots, instruction.literal());
    let zero_high = vector::zeroes_high_half(instruction);
    // The stand-in and which of its sources reads gfx9's src0.
    let (translated, reads_src0) = match (instruction.opcode(), equivalent) {
        (O9::VMovB64, _) => (gfx942::mov_b64(&without_dpp(instruction, w0)?)?.0, 1),
        (O9::VFmacF64, _) => (vector::fmac_f64(&without_dpp(instruction, w0)?)?, 0),
        (_, None) => return Err(Refusal("a DPP operation gfx11 lacks")),
        (_, Some(equivalent)) if zero_high => {
            // The VOP3 form, whose vdst is a whole register (gfx11's e32 16-bit vdst names a half).
            let fields = E32::of(w0, false, slots, false, NUMBERING)?;
            (reencode::promote(slots, literal, equivalent, fields, NUMBERING)?, 0)
        }
        (_, Some(equivalent)) => {
            let form = E32Form { encoding, w0, slots, literal, dpp: None };
            (reencode::vop_e32(&form, equivalent, NUMBERING)?, 0)
        }
    };
    let Plan::Vector(mut op) = Plan::of(&translated) else {
        return Err(Refusal("the DPP operation does not plan as a VALU row"));
    };
    op.operands.src[reads_src0] = Source::Vgpr(shadow);
    let rows = if slots.iter().any(|slot| matches!(slot, Slot::Src0(2))) { 2 } else { 1 };
    let (low, high) = masks((word >> 28) & 15, (word >> 24) & 15);
    let plan = WaveDpp {
        op,
        source: (word & 0xFF) as u16,
        rows,
        shadow,
        from: sources(word, instruction.processor)?,
        enabled: low as u64 | (high as u64) << 32,
        bound_ctrl: (word >> 19) & 1 == 1,
        zero_high,
    };
    Ok((translated, Plan::WaveDpp(Box::new(plan))))
}

/// `instruction`, DPP, as the e32 instruction whose first word is `w0` (src0 naming DPP's VGPR
/// directly), for the stand-ins of operations gfx11 lacks.
fn without_dpp(instruction: &gfx9::Instruction, w0: u32) -> Result<gfx9::Instruction, Refusal> {
    gfx9::decode(&[w0], 0, instruction.processor).map_err(|_| Refusal("a DPP operation without an e32 form"))
}

/// Runs a [`Plan::WaveDpp`] once for the wave (the low half running): gathers src0's lanes into
/// the shadow row, then runs the stand-in in each half with EXEC narrowed to the lanes DPP
/// writes, zeroing a 16-bit result's high half there; EXEC is restored. `None` where the
/// stand-in does not run (nothing further is written).
pub(crate) fn step<const WIDE: bool>(wave: &mut Wave, dpp: &WaveDpp) -> Option<Flow> {
    let lanes = wave.lanes();
    let exec = wave.mask64(EXEC);
    let mut writes = dpp.enabled & exec;
    for row in 0..dpp.rows {
        let mut values = [0u32; 2 * LANES];
        for (lane, (value, &from)) in values.iter_mut().zip(&dpp.from).enumerate().take(lanes) {
            let from = from as usize;
            if from < lanes && exec >> from & 1 == 1 {
                *value = wave.lane_value(u32::from(dpp.source + row), from);
            } else if !dpp.bound_ctrl {
                writes &= !(1 << lane);
            }
        }
        for (lane, &value) in values.iter().enumerate().take(lanes) {
            wave.set_lane_value(u32::from(dpp.shadow + row), lane, value);
        }
    }
    for half in 0..lanes / LANES {
        let running = wave.exec();
        wave.write_sgpr(EXEC, (writes >> (32 * half)) as u32);
        let flow = valu::step::<WIDE>(wave, &dpp.op);
        if flow.is_some() && dpp.zero_high {
            super::zero_high(wave, &dpp.op);
        }
        wave.write_sgpr(EXEC, running);
        if wave.wide {
            wave.swap_halves();
        }
        if flow.is_none() {
            // Back to the low half, which the loop expects after a whole-wave step.
            if wave.half == 1 {
                wave.swap_halves();
            }
            return None;
        }
    }
    Some(Flow::Next)
}
