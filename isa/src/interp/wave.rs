//! A wave's registers and how operands read and write them.
//!
//! Scalar registers live in one array indexed by their operand encoding (RDNA3 ISA guide, the
//! SSRC/SDST tables): s0–s105, then `vcc_lo` 106, `vcc_hi` 107, trap temporaries 108–123,
//! `null` 124 (reads 0, drops writes), `m0` 125, `exec_lo` 126, `exec_hi` 127. A wave32 wave's
//! EXEC is `exec_lo`; its VCC is `vcc_lo`.
//!
//! A wave64 wave runs as two halves of 32 lanes, as RDNA issues wave64 VALU work in two passes
//! (RDNA ISA guides, "Wave32 and Wave64"): lanes 0–31 are the low half, 32–63 the high. The
//! wave holds the running half's per-lane state (VGPR rows, scratch) in `vgpr` and `scratch`
//! and the other half's in `other`; [`Wave::swap_halves`] exchanges them, and EXEC's halves. A
//! lane mask (EXEC, VCC, a compare's or carry's SGPR pair) is 64 bits: the running half reads
//! and writes its own 32 (`exec_lo` as swapped, `s[n]`/`s[n+1]`, `vcc_lo`/`vcc_hi`), which is
//! what `half` offsets.

use super::ExecError;
use crate::gfx11::{InlineFloat, Operand, scalar_operand};

pub(crate) const LANES: usize = 32;
pub(crate) const VCC: u32 = 106;
pub(crate) const NULL: u32 = 124;
pub(crate) const EXEC: u32 = 126;
pub(crate) const M0: u32 = 125;

/// The apertures `src_shared_base` and `src_private_base` report: the high halves of flat
/// addresses that reach LDS and the lane's scratch (`memory_ops::Target`), each 4 GiB, as
/// ROCr's apertures are. Both lie above every x86-64 user address (at most 0x7FFF_FFFF_FFFF),
/// so no host pointer is taken for one.
pub(crate) const SHARED_BASE: u64 = 0x1000_0000_0000_0000;
pub(crate) const PRIVATE_BASE: u64 = 0x2000_0000_0000_0000;

/// The base of the private segment buffer V# a wave starts with (when the descriptor enables it):
/// bit 47 set, so no x86-64 user address (at most 0x7FFF_FFFF_FFFF) is ever confused with it. A
/// MUBUF access through a V# with this base and ADD_TID_ENABLE is the lane's scratch at the
/// offset past it, as the hardware's per-lane (swizzled) scratch buffer is.
pub(crate) const SCRATCH_RESOURCE_BASE: u64 = 0x8000_0000_0000;
/// ADD_TID_ENABLE, V# word 3 bit 23 (RDNA2 and RDNA3 ISA guides, "Buffer Resource").
pub(crate) const ADD_TID_ENABLE: u32 = 1 << 23;

/// How an operand's inline constants read: float constants as f32 or f64 bits, integers sign
/// extended (RDNA3 ISA guide, "Inline constants").
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Int,
    F16,
    F32,
    F64,
}

pub(crate) struct Wave {
    pub sgpr: [u32; 128],
    pub vgpr: Vec<[u32; LANES]>,
    pub scc: bool,
    pub pc: u64,
    pub ended: bool,
    pub at_barrier: bool,
    /// Per-lane scratch, `private_bytes` each.
    pub scratch: Vec<u8>,
    pub private_bytes: usize,
    pub executed: u64,
    pub realtime: fn() -> u64,
    /// The MODE register (RDNA3 ISA guide, "MODE"): bits 1:0 f32 rounding, 3:2 f16/f64
    /// rounding (0 nearest even, 1 +inf, 2 −inf, 3 toward zero), 5:4 f32 and 7:6 f16/f64
    /// denormals (bit 0 of each: keep input denormals, bit 1: keep output denormals), 8
    /// DX10_CLAMP, 9 IEEE.
    pub mode: u32,
    /// Wave64: the wave runs as two halves.
    pub wide: bool,
    /// The half running: 0, or 1 for a wave64 wave's lanes 32–63.
    pub half: u32,
    /// A wave64 wave's other half (empty for wave32).
    pub other: Half,
    /// Where it runs and what it was given: what `s_getreg_b32`'s identity and allocation
    /// registers report (`hw_registers.rs`).
    pub site: super::site::WaveSite,
}

/// One half's per-lane state, while the other half runs.
#[derive(Default)]
pub(crate) struct Half {
    pub vgpr: Vec<[u32; LANES]>,
    pub scratch: Vec<u8>,
}

/// MODE's value where nothing differs from IEEE arithmetic as the host does it: nearest even,
/// every denormal kept.
pub(crate) const MODE_IEEE_FLOAT: u32 = 0xF0;
/// MODE.IEEE (bit 9): signaling NaNs are quieted by min and max, among others (RDNA3 ISA guide,
/// "MODE").
pub(crate) const MODE_IEEE: u32 = 1 << 9;

impl Wave {
    /// The running half's EXEC.
    #[inline(always)]
    pub fn exec(&self) -> u32 {
        // The high half's EXEC is swapped into `exec_lo` while it runs ([`Wave::swap_halves`]).
        self.sgpr[EXEC as usize]
    }

    /// A whole lane mask: the SGPR pair at `field` for wave64, the one SGPR for wave32.
    pub fn mask64(&self, field: u32) -> u64 {
        let high = if self.wide { self.read_sgpr(field + 1) as u64 } else { 0 };
        self.read_sgpr(field) as u64 | high << 32
    }

    /// The register of the running half's part of the lane mask at `field`: `s[n+1]` (or
    /// `vcc_hi`) for a wave64 wave's high half; `null` stays `null`, and EXEC is `exec_lo`,
    /// where the running half's EXEC is.
    #[inline(always)]
    pub fn mask_register(&self, field: u32) -> u32 {
        if field == NULL || field == EXEC { field } else { field + self.half }
    }

    /// Writes the running half's part of a lane mask.
    #[inline(always)]
    pub fn write_mask(&mut self, field: u32, value: u32) {
        self.write_sgpr(self.mask_register(field), value);
    }

    /// Exchanges the running half's per-lane state with the other's (wave64 only), and
    /// `exec_lo` with `exec_hi`, so that EXEC reads as one register whichever half runs.
    pub fn swap_halves(&mut self) {
        core::mem::swap(&mut self.vgpr, &mut self.other.vgpr);
        core::mem::swap(&mut self.scratch, &mut self.other.scratch);
        self.sgpr.swap(EXEC as usize, EXEC as usize + 1);
        self.half ^= 1;
    }

    /// Lane `lane` (0–63) of VGPR `index`, whichever half holds it; the low half runs.
    pub fn lane_value(&self, index: u32, lane: usize) -> u32 {
        let (rows, lane) = if lane < LANES { (&self.vgpr, lane) } else { (&self.other.vgpr, lane - LANES) };
        rows.get(index as usize).map_or(0, |row| row[lane % LANES])
    }

    /// Writes lane `lane` (0–63) of VGPR `index`; the low half runs.
    pub fn set_lane_value(&mut self, index: u32, lane: usize, value: u32) {
        let (rows, lane) = if lane < LANES { (&mut self.vgpr, lane) } else { (&mut self.other.vgpr, lane - LANES) };
        if let Some(row) = rows.get_mut(index as usize) {
            row[lane % LANES] = value;
        }
    }

    /// Lanes in the wave: 32 or 64.
    pub fn lanes(&self) -> usize {
        if self.wide { 2 * LANES } else { LANES }
    }

    /// Reads a scalar operand (8- or 9-bit encoding below 256) as 32 bits.
    pub fn scalar(&self, field: u32, literal: Option<u32>, kind: Kind) -> u32 {
        match field {
            235 => (SHARED_BASE >> 32) as u32,
            237 => (PRIVATE_BASE >> 32) as u32,
            _ => self.scalar64(field, literal, kind) as u32,
        }
    }

    /// Reads a scalar operand as 64 bits: a register pair, or a constant widened.
    pub fn scalar64(&self, field: u32, literal: Option<u32>, kind: Kind) -> u64 {
        match field {
            0..=127 if field == NULL => 0,
            0..=127 => {
                self.sgpr[field as usize] as u64
                    | (self.sgpr.get(field as usize + 1).copied().unwrap_or(0) as u64) << 32
            }
            253 => self.scc as u64,
            255 => {
                let value = literal.unwrap_or(0);
                // A 64-bit float operand's literal is the double's high half (RDNA3 ISA guide).
                if kind == Kind::F64 { (value as u64) << 32 } else { value as u64 }
            }
            // A 64-bit read of an aperture is its whole base (the compiler takes the high half
            // from `s_mov_b64 s[n:n+1], src_shared_base`'s s[n+1]); a 32-bit one, the high half
            // (`Wave::scalar`, and `scalar::alu`'s 32-bit operands).
            235 => SHARED_BASE,
            237 => PRIVATE_BASE,
            _ => constant(scalar_operand(field), kind),
        }
    }

    /// SGPR `field` read as a vector operand's value: the same in both halves of a wave64 wave
    /// (`v_mov_b32 v0, exec_lo` gives every lane `exec_lo`), though `exec_lo` and `exec_hi`
    /// trade places while the high half runs ([`Wave::swap_halves`]).
    #[inline(always)]
    pub fn read_sgpr_value(&self, field: u32) -> u32 {
        let swapped = self.half == 1 && (field | 1) == EXEC + 1;
        self.read_sgpr(if swapped { field ^ 1 } else { field })
    }

    /// An SGPR-file operand (below 128): `null` reads 0.
    #[inline(always)]
    pub fn read_sgpr(&self, field: u32) -> u32 {
        if field == NULL { 0 } else { self.sgpr.get(field as usize).copied().unwrap_or(0) }
    }

    pub fn write_sgpr(&mut self, field: u32, value: u32) {
        if field != NULL && (field as usize) < self.sgpr.len() {
            self.sgpr[field as usize] = value;
        }
    }

    pub fn write_sgpr64(&mut self, field: u32, value: u64) {
        self.write_sgpr(field, value as u32);
        if field != NULL {
            self.write_sgpr(field + 1, (value >> 32) as u32);
        }
    }

    pub fn write_vgpr(&mut self, index: u32, lane: usize, value: u32) {
        if let Some(register) = self.vgpr.get_mut(index as usize) {
            register[lane] = value;
        }
    }

    pub fn write_vgpr64(&mut self, index: u32, lane: usize, value: u64) {
        self.write_vgpr(index, lane, value as u32);
        self.write_vgpr(index + 1, lane, (value >> 32) as u32);
    }

    pub fn vgpr(&self, index: u32, lane: usize) -> u32 {
        self.vgpr.get(index as usize).map_or(0, |register| register[lane])
    }
}

fn constant(operand: Operand, kind: Kind) -> u64 {
    match operand {
        Operand::Int(value) => value as i64 as u64,
        Operand::Float(value) => match kind {
            Kind::F64 => float64(value).to_bits(),
            Kind::F16 => float16(value) as u64,
            _ => float32(value).to_bits() as u64,
        },
        _ => 0,
    }
}

/// The value of a constant source field (inline constants and the aperture registers) for an
/// operand of `kind`; `wide` operands read the aperture as a whole 64-bit base.
pub(crate) fn constant_of(field: u32, kind: Kind, wide: bool) -> u64 {
    match field {
        235 if wide => SHARED_BASE,
        237 if wide => PRIVATE_BASE,
        235 => SHARED_BASE >> 32,
        237 => PRIVATE_BASE >> 32,
        _ => constant(scalar_operand(field), kind),
    }
}

/// The inline float constants as f16 bits (RDNA3 ISA guide, "Inline constants": 1/(2π) is
/// 0x3118 in f16).
fn float16(value: InlineFloat) -> u16 {
    match value {
        InlineFloat::InvTwoPi => 0x3118,
        other => half::f16::from_f64(other.value()).to_bits(),
    }
}

fn float32(value: InlineFloat) -> f32 {
    match value {
        // 1/(2π) as the hardware holds it in f32 (RDNA3 ISA guide: 0x3e22f983).
        InlineFloat::InvTwoPi => f32::from_bits(0x3E22_F983),
        other => other.value() as f32,
    }
}

fn float64(value: InlineFloat) -> f64 {
    match value {
        InlineFloat::InvTwoPi => f64::from_bits(0x3FC4_5F30_6DC9_C882),
        other => other.value(),
    }
}

/// What the step of one instruction asks of the wave loop.
pub(crate) enum Flow {
    Next,
    Jump(u64),
    End,
    Barrier,
    /// `s_sleep`: on to the next instruction, and the wave yields to its workgroup's others.
    Sleep,
}

/// The error for an instruction a step does not execute.
pub(crate) fn unsupported(wave: &Wave, instruction: &crate::gfx11::Instruction) -> ExecError {
    ExecError::Unsupported { pc: wave.pc, mnemonic: instruction.mnemonic() }
}
