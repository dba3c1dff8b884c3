//! A VALU instruction's operands, resolved once when the kernel is decoded: each source is a
//! VGPR row, an SGPR (read when the instruction runs), SCC or a constant already widened to the
//! operation's type; modifiers and DPP are bit masks and a lane table. Reading a source yields a
//! whole row of lanes at once, so the operations run as loops over fixed-size arrays.
//!
//! Field positions: RDNA3 ISA guide, chapter 15 (VOP1, VOP2, VOPC, VOP3, VOP3SD, VOP3P, DPP16,
//! DPP8). 16-bit operands of VOP1, VOP2 and VOPC name a half register: bits 6:0 of the VGPR field
//! are the register, bit 7 the high half (RDNA3 ISA guide, "16-bit VGPRs"); VOP3 selects halves
//! with `op_sel` instead.

use super::wave::{Kind, LANES, Wave, constant_of};
use crate::gfx11::{Dpp, Encoding, Instruction, Slot};

/// One row of lanes.
pub(crate) type Row = [u32; LANES];
/// One row of 64-bit lanes (a VGPR pair).
pub(crate) type Row64 = [u64; LANES];

/// Where a source operand comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    Vgpr(u16),
    /// An SGPR (or VCC, EXEC, M0, `null`), read when the instruction runs.
    Sgpr(u8),
    Scc,
    /// An inline constant or the literal, widened to the operand's type.
    Constant(u64),
    /// A lane-mask source (`v_cndmask`'s select, a carry-in): the SGPR (pair) whose running
    /// half's part each half reads ([`Wave::mask_register`]).
    Mask(u8),
    /// A constant lane mask, 64 bits: each half reads its own 32.
    ConstantMask(u64),
}

/// DPP's effect on src0, planned at decode: the lane each lane reads and which lanes may write.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DppPlan {
    /// The lane each lane reads src0 from; `INVALID` where the pattern leaves the row.
    pub from: [u8; LANES],
    /// Lanes whose row and bank masks let them write: rows 0 and 1 (a wave32 wave, or a wave64
    /// wave's low half).
    pub enabled: u32,
    /// The same for a wave64 wave's high half, rows 2 and 3: row_mask bit r enables lanes
    /// 16r..16r + 15 of the whole wave (Vega ISA guide, "DPP": ROW_MASK; LLVM's gfx9 wave
    /// reductions write rows 2 and 3 alone with `row_bcast:31 row_mask:0xc`).
    pub enabled_high: u32,
    /// `bound_ctrl:1`: an invalid or inactive source reads 0 (otherwise the lane does not write).
    pub zero_invalid: bool,
    /// `fi:1`: inactive source lanes are read as they are.
    pub fetch_inactive: bool,
}

pub(crate) const INVALID: u8 = 0xFF;

impl DppPlan {
    /// DPP16's `dpp_ctrl` (RDNA3 ISA guide, "DPP16"): quad_perm, row shifts and rotates, mirrors,
    /// row_share and row_xmask; every pattern stays within a row of 16 lanes.
    pub fn dpp16(word: u32) -> Option<DppPlan> {
        let control = (word >> 8) & 0x1FF;
        let mut from = [INVALID; LANES];
        for (lane, slot) in from.iter_mut().enumerate() {
            let row = lane & !15;
            let index = lane & 15;
            let source = match control {
                0x000..=0x0FF => Some((lane & !3) + ((control as usize >> (2 * (lane & 3))) & 3)),
                0x101..=0x10F => Some(index + (control as usize & 15)).filter(|&i| i < 16).map(|i| row + i),
                0x111..=0x11F => index.checked_sub(control as usize & 15).map(|i| row + i),
                0x121..=0x12F => Some(row + ((index + 16 - (control as usize & 15)) & 15)),
                0x140 => Some(row + 15 - index),
                0x141 => Some(row + (index & 8) + 7 - (index & 7)),
                0x150..=0x15F => Some(row + (control as usize & 15)),
                0x160..=0x16F => Some(row + (index ^ (control as usize & 15))),
                // wave shifts and row broadcasts are GFX9's; gfx10 and later have none.
                _ => return None,
            };
            *slot = source.map_or(INVALID, |source| source as u8);
        }
        let (bank_mask, row_mask) = ((word >> 24) & 15, (word >> 28) & 15);
        let (enabled, enabled_high) = masks(row_mask, bank_mask);
        let (zero_invalid, fetch_inactive) = ((word >> 19) & 1 == 1, (word >> 18) & 1 == 1);
        Some(DppPlan { from, enabled, enabled_high, zero_invalid, fetch_inactive })
    }

    /// DPP8: eight 3-bit selects, one per lane of each group of eight.
    pub fn dpp8(word: u32, fetch_inactive: bool) -> DppPlan {
        let from =
            core::array::from_fn(|lane| ((lane & !7) as u32 + ((word >> (8 + 3 * (lane as u32 & 7))) & 7)) as u8);
        DppPlan { from, enabled: u32::MAX, enabled_high: u32::MAX, zero_invalid: true, fetch_inactive }
    }

    /// Permutes `row` in the wave's running `half` (1: a wave64 wave's high half); returns it
    /// and the lanes that may write.
    #[inline]
    pub fn apply(&self, row: &Row, exec: u32, half: u32) -> (Row, u32) {
        let mut out = [0u32; LANES];
        let mut writes = if half == 0 { self.enabled } else { self.enabled_high } & exec;
        for lane in 0..LANES {
            let from = self.from[lane];
            let readable = from != INVALID && (self.fetch_inactive || exec >> (from & 31) & 1 == 1);
            if readable {
                out[lane] = row[from as usize & 31];
            } else if !self.zero_invalid {
                writes &= !(1 << lane);
            }
        }
        (out, writes)
    }
}

/// The lanes DPP's `row_mask` and `bank_mask` enable: a wave's lanes 0–31 and 32–63 (a bank is
/// four lanes of a row, bank_mask bit b enabling lanes 4b..4b + 3 of each row: Vega ISA guide,
/// "DPP": BANK_MASK).
pub(crate) fn masks(row_mask: u32, bank_mask: u32) -> (u32, u32) {
    let half = |first: usize| {
        (0..LANES)
            .filter(|lane| row_mask >> ((first + lane) / 16) & 1 == 1 && bank_mask >> ((lane >> 2) & 3) & 1 == 1)
            .fold(0u32, |mask, lane| mask | 1 << lane)
    };
    (half(0), half(LANES))
}

/// A VALU instruction's operands and modifiers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Operands {
    pub vdst: u16,
    /// The scalar destination: a carry-out or compare mask (VCC for VOP2 and VOPC), or the SGPR
    /// `v_readlane`/`v_readfirstlane` write.
    pub sdst: u8,
    pub src: [Source; 3],
    /// Per source: negate (VOP3P: the low half's) and absolute value.
    pub neg: u8,
    pub abs: u8,
    /// VOP3P: negate the high half.
    pub neg_hi: u8,
    /// Bits 0–2: source reads its high half; bit 3: the destination is the high half.
    pub op_sel: u8,
    /// VOP3P: which half each source gives the result's high half.
    pub op_sel_hi: u8,
    pub clamp: bool,
    /// Output modifier: 0 none, 1 ×2, 2 ×4, 3 ÷2.
    pub omod: u8,
    pub literal: u32,
    pub dpp: Option<DppPlan>,
}

/// How wide a source is, so constants widen the right way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Width {
    B32,
    B64,
}

impl Operands {
    /// Resolves `instruction`'s fields. `kinds` gives each source's constant kind and `half`
    /// says which sources (bits 0–2) and whether the destination (bit 3) are 16-bit.
    pub fn of(instruction: &Instruction, kinds: [Kind; 3], widths: [Width; 3], half: u8) -> Option<Operands> {
        let [w0, w1, _] = instruction.words;
        let literal = instruction.literal().unwrap_or(0);
        let mut out = Operands {
            vdst: 0,
            sdst: super::wave::VCC as u8,
            src: [Source::Constant(0); 3],
            neg: 0,
            abs: 0,
            neg_hi: 0,
            op_sel: 0,
            op_sel_hi: 0,
            clamp: false,
            omod: 0,
            literal,
            dpp: None,
        };
        let source = |field: u32, index: usize| resolve(field, kinds[index], widths[index], instruction.literal());
        let mut fields;
        match instruction.encoding {
            Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc => {
                let vdst = (w0 >> 17) & 0xFF;
                fields = [w0 & 0x1FF, 256 + ((w0 >> 9) & 0xFF), super::wave::VCC];
                out.vdst = vdst as u16;
                // A 16-bit operand names a half: bit 7 of its VGPR number is the high half.
                for index in 0..2 {
                    if half >> index & 1 == 1 && fields[index] >= 256 {
                        out.op_sel |= (((fields[index] - 256) >> 7) as u8 & 1) << index;
                        fields[index] = 256 + ((fields[index] - 256) & 0x7F);
                    }
                }
                if half & 8 != 0 && instruction.encoding != Encoding::Vopc {
                    out.op_sel |= ((vdst >> 7) as u8 & 1) << 3;
                    out.vdst = (vdst & 0x7F) as u16;
                }
            }
            Encoding::Vop3 | Encoding::Vop3p => {
                let has_sdst = instruction.entry.slots.iter().any(|slot| matches!(slot, Slot::Sdst(_)));
                let scalar_vdst = instruction.entry.slots.iter().any(|slot| matches!(slot, Slot::ScalarVdst(_)));
                out.vdst = (w0 & 0xFF) as u16;
                fields = [w1 & 0x1FF, (w1 >> 9) & 0x1FF, (w1 >> 18) & 0x1FF];
                out.neg = (w1 >> 29) as u8;
                out.clamp = (w0 >> 15) & 1 == 1;
                if has_sdst {
                    out.sdst = ((w0 >> 8) & 0x7F) as u8;
                }
                if scalar_vdst {
                    out.sdst = (w0 & 0xFF) as u8;
                }
                if instruction.encoding == Encoding::Vop3 {
                    out.omod = ((w1 >> 27) & 3) as u8;
                    if !has_sdst {
                        out.abs = ((w0 >> 8) & 7) as u8;
                        out.op_sel = ((w0 >> 11) & 15) as u8;
                    }
                } else {
                    out.neg_hi = ((w0 >> 8) & 7) as u8;
                    out.op_sel = ((w0 >> 11) & 7) as u8;
                    out.op_sel_hi = (((w1 >> 27) & 3) | ((w0 >> 12) & 4)) as u8;
                }
            }
            _ => return None,
        }
        if let Some(word) = instruction.dpp_word() {
            // DPP: src0 is the DPP word's VGPR; DPP16 carries src0's and src1's modifiers there.
            let mut src0 = 256 + (word & 0xFF);
            if matches!(instruction.encoding, Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc) && half & 1 == 1 {
                out.op_sel |= ((word >> 7) & 1) as u8;
                src0 = 256 + (word & 0x7F);
            }
            fields[0] = src0;
            out.dpp = Some(match instruction.dpp {
                Dpp::Dpp8 { fetch_inactive } => DppPlan::dpp8(word, fetch_inactive),
                _ => {
                    if matches!(instruction.encoding, Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc) {
                        out.neg |= (((word >> 20) & 1) | ((word >> 21) & 2)) as u8;
                        out.abs |= (((word >> 21) & 1) | ((word >> 22) & 2)) as u8;
                    }
                    DppPlan::dpp16(word)?
                }
            });
        }
        for (index, field) in fields.into_iter().enumerate() {
            out.src[index] = source(field, index);
        }
        Some(out)
    }

    /// One half of a VOPD pair: `src0` (a 9-bit field), the VGPR `vsrc1`, and VCC as the
    /// third source (`v_dual_cndmask_b32`'s mask).
    pub fn dual(vdst: u32, src0: u32, vsrc1: u32, literal: Option<u32>, kind: Kind) -> Operands {
        Operands {
            vdst: vdst as u16,
            sdst: super::wave::VCC as u8,
            src: [
                resolve(src0, kind, Width::B32, literal),
                Source::Vgpr(vsrc1 as u16),
                Source::Sgpr(super::wave::VCC as u8),
            ],
            neg: 0,
            abs: 0,
            neg_hi: 0,
            op_sel: 0,
            op_sel_hi: 0,
            clamp: false,
            omod: 0,
            literal: literal.unwrap_or(0),
            dpp: None,
        }
    }

    /// Source `index` as 32 bits per lane (its low half for a 64-bit source).
    #[inline(always)]
    pub fn row(&self, wave: &Wave, index: usize) -> Row {
        match self.src[index] {
            Source::Vgpr(register) => match wave.vgpr.get(register as usize) {
                Some(row) => *row,
                None => [0; LANES],
            },
            Source::Sgpr(register) => [wave.read_sgpr_value(register as u32); LANES],
            Source::Scc => [wave.scc as u32; LANES],
            Source::Constant(value) => [value as u32; LANES],
            Source::Mask(register) => [wave.read_sgpr(wave.mask_register(register as u32)); LANES],
            Source::ConstantMask(value) => [(value >> (32 * wave.half)) as u32; LANES],
        }
    }

    /// Marks source 2 as a lane mask (`v_cndmask`'s select, a carry-in), read per half.
    pub fn mask_source2(&mut self) {
        self.src[2] = match self.src[2] {
            Source::Sgpr(register) => Source::Mask(register),
            Source::Constant(value) => Source::ConstantMask(value),
            other => other,
        };
    }

    /// Source `index` as 64 bits per lane: a VGPR or SGPR pair, or a constant.
    #[inline(always)]
    pub fn row64(&self, wave: &Wave, index: usize) -> Row64 {
        match self.src[index] {
            Source::Vgpr(register) => {
                let zero = [0; LANES];
                let low = wave.vgpr.get(register as usize).unwrap_or(&zero);
                let high = wave.vgpr.get(register as usize + 1).unwrap_or(&zero);
                let mut out = [0u64; LANES];
                for lane in 0..LANES {
                    out[lane] = low[lane] as u64 | (high[lane] as u64) << 32;
                }
                out
            }
            Source::Sgpr(register) => {
                let (low, high) = (wave.read_sgpr_value(register as u32), wave.read_sgpr_value(register as u32 + 1));
                [low as u64 | (high as u64) << 32; LANES]
            }
            Source::Scc => [wave.scc as u64; LANES],
            Source::Constant(value) | Source::ConstantMask(value) => [value; LANES],
            Source::Mask(register) => [wave.read_sgpr(wave.mask_register(register as u32)) as u64; LANES],
        }
    }
}

/// A 9-bit source field resolved for an operand of `kind` and `width`.
fn resolve(field: u32, kind: Kind, width: Width, literal: Option<u32>) -> Source {
    match field {
        256..=511 => Source::Vgpr((field - 256) as u16),
        253 => Source::Scc,
        0..=127 => Source::Sgpr(field as u8),
        255 => {
            let value = literal.unwrap_or(0);
            // A 64-bit float operand's literal is the double's high half (RDNA3 ISA guide).
            Source::Constant(match (width, kind) {
                (Width::B64, Kind::F64) => (value as u64) << 32,
                _ => value as u64,
            })
        }
        _ => Source::Constant(constant_of(field, kind, width == Width::B64)),
    }
}
