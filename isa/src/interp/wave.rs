//! A wave's registers and how operands read and write them.
//!
//! Scalar registers live in one array indexed by their operand encoding (RDNA3 ISA guide, the
//! SSRC/SDST tables): s0–s105, then `vcc_lo` 106, `vcc_hi` 107, trap temporaries 108–123,
//! `null` 124 (reads 0, drops writes), `m0` 125, `exec_lo` 126, `exec_hi` 127. A wave32 wave's
//! EXEC is `exec_lo`; its VCC is `vcc_lo`.

use crate::gfx11::{InlineFloat, Operand, scalar_operand};

pub(crate) const LANES: usize = 32;
pub(crate) const VCC: u32 = 106;
pub(crate) const NULL: u32 = 124;
pub(crate) const EXEC: u32 = 126;

/// The apertures `src_shared_base` and `src_private_base` report: the high halves of flat
/// addresses that reach LDS and scratch. Flat accesses there are refused (the kernels this
/// interpreter runs address global memory through flat instructions).
pub(crate) const SHARED_BASE: u64 = 0x1000_0000_0000_0000;
pub(crate) const PRIVATE_BASE: u64 = 0x2000_0000_0000_0000;

/// How an operand's inline constants read: float constants as f32 or f64 bits, integers sign
/// extended (RDNA3 ISA guide, "Inline constants").
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Int,
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
}

impl Wave {
    pub fn exec(&self) -> u32 {
        self.sgpr[EXEC as usize]
    }

    pub fn lanes(&self) -> impl Iterator<Item = usize> + use<> {
        let exec = self.exec();
        (0..LANES).filter(move |lane| exec >> lane & 1 == 1)
    }

    /// Reads a scalar operand (8- or 9-bit encoding below 256) as 32 bits.
    pub fn scalar(&self, field: u32, literal: Option<u32>, kind: Kind) -> u32 {
        self.scalar64(field, literal, kind) as u32
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
            235 => SHARED_BASE >> 32,
            237 => PRIVATE_BASE >> 32,
            _ => constant(scalar_operand(field), kind),
        }
    }

    /// Reads a 9-bit source for `lane` at 64 bits (the low 32 for a 32-bit operand).
    pub fn source(&self, field: u32, lane: usize, literal: Option<u32>, kind: Kind) -> u64 {
        if field >= 256 {
            let index = (field - 256) as usize;
            let low = self.vgpr.get(index).map_or(0, |register| register[lane]);
            let high = self.vgpr.get(index + 1).map_or(0, |register| register[lane]);
            low as u64 | (high as u64) << 32
        } else {
            self.scalar64(field, literal, kind)
        }
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
            _ => float32(value).to_bits() as u64,
        },
        _ => 0,
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

/// The constant kind of an operation's sources: f64 and f32 operations read float constants at
/// their width; everything else (integers, conversions from integers) as integers, whose float
/// constants are f32 bit patterns.
pub(crate) fn source_kind(mnemonic: &str) -> Kind {
    let base = mnemonic.trim_end_matches("_e32").trim_end_matches("_e64");
    // The source type is the operation's last type suffix (`v_cvt_f32_u32` reads a u32).
    match base.rsplit('_').next() {
        Some("f64") => Kind::F64,
        Some("f32") => Kind::F32,
        _ => Kind::Int,
    }
}
