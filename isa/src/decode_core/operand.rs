//! The operand vocabulary both ISAs share: the values of the register fields ([`Operand`], read
//! by [`scalar_operand`] and [`source_operand`] where gfx10 and gfx11 number them alike) and the
//! printed operand slots of their generated tables ([`Slot`]).

/// One operand value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Operand {
    /// SGPR n (0..=105).
    Sgpr(u8),
    /// VGPR n.
    Vgpr(u8),
    /// Trap temporary n (108..=123).
    Ttmp(u8),
    VccLo,
    VccHi,
    Null,
    M0,
    ExecLo,
    ExecHi,
    Scc,
    /// An inline integer (-16..=64).
    Int(i8),
    /// An inline floating-point constant.
    Float(InlineFloat),
    /// The literal dword.
    Literal(u32),
    /// An aperture register (`src_shared_base` and the like).
    Special(&'static str),
    /// A value no operand has.
    Reserved(u32),
}

/// The inline floating-point constants, 240..=248.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InlineFloat {
    Half,
    MinusHalf,
    One,
    MinusOne,
    Two,
    MinusTwo,
    Four,
    MinusFour,
    /// 1/(2π).
    InvTwoPi,
}

impl InlineFloat {
    /// The value as an `f64`.
    pub fn value(self) -> f64 {
        match self {
            Self::Half => 0.5,
            Self::MinusHalf => -0.5,
            Self::One => 1.0,
            Self::MinusOne => -1.0,
            Self::Two => 2.0,
            Self::MinusTwo => -2.0,
            Self::Four => 4.0,
            Self::MinusFour => -4.0,
            Self::InvTwoPi => 0.15915494309189532,
        }
    }

    /// LLVM's spelling.
    pub fn text(self) -> &'static str {
        match self {
            Self::Half => "0.5",
            Self::MinusHalf => "-0.5",
            Self::One => "1.0",
            Self::MinusOne => "-1.0",
            Self::Two => "2.0",
            Self::MinusTwo => "-2.0",
            Self::Four => "4.0",
            Self::MinusFour => "-4.0",
            Self::InvTwoPi => "0.15915494",
        }
    }
}

/// Where one printed operand comes from, with its width in dwords where it is a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// SOP destination.
    Sdst(u8),
    /// SOP first source (8-bit field).
    Ssrc0(u8),
    /// SOP second source.
    Ssrc1(u8),
    /// SMEM destination registers.
    Sdata(u8),
    /// SMEM base address registers (an SGPR pair, or four for buffer loads).
    Sbase(u8),
    /// SMEM offset register.
    Soffset(u8),
    /// VALU vector destination.
    Vdst(u8),
    /// VALU destination field holding an SGPR (VOPC promoted to VOP3, `v_readlane`).
    ScalarVdst(u8),
    /// VALU sources: 9-bit fields (src0, VOP3 src1 and src2) or the 8-bit VGPR `vsrc1`.
    Src0(u8),
    Src1(u8),
    Src2(u8),
    /// DS address, data and FLAT/GLOBAL/SCRATCH address and data.
    Addr(u8),
    Data0(u8),
    Data1(u8),
    Data(u8),
    /// GLOBAL/SCRATCH scalar base.
    Saddr(u8),
    /// MUBUF data, address and resource.
    Vdata(u8),
    Vaddr(u8),
    Srsrc(u8),
    /// A register the encoding implies, printed by name (`vcc_lo` in VOP2 carries, VOPC).
    Fixed(&'static str),
    /// An immediate: SOPP/SOPK `simm16`, SMEM and MUBUF offsets, literals.
    Imm,
    /// `off`: an absent address or scalar base.
    Off,
    /// `null`: SMEM without an offset register.
    Null,
}

/// A 9-bit source field (`src0`, VOP3 sources; SOP sources are its low 256 values): a VGPR, the
/// literal, or else what the ISA's `scalar` reads from the value.
pub(crate) fn source_operand(value: u32, literal: Option<u32>, scalar: impl FnOnce(u32) -> Operand) -> Operand {
    match value {
        256..=511 => Operand::Vgpr((value - 256) as u8),
        255 => Operand::Literal(literal.unwrap_or(0)),
        _ => scalar(value),
    }
}

/// A scalar field (SDST, SSRC below 255) where gfx10 and gfx11 number it alike; `own` reads the
/// other values: `m0` and `null` (which the two swap), gfx10's extra sources, the reserved ones.
pub(crate) fn scalar_operand(value: u32, own: impl FnOnce(u32) -> Operand) -> Operand {
    match value {
        0..=105 => Operand::Sgpr(value as u8),
        106 => Operand::VccLo,
        107 => Operand::VccHi,
        108..=123 => Operand::Ttmp((value - 108) as u8),
        126 => Operand::ExecLo,
        127 => Operand::ExecHi,
        128..=192 => Operand::Int((value - 128) as i8),
        193..=208 => Operand::Int(-((value - 192) as i8)),
        235 => Operand::Special("src_shared_base"),
        236 => Operand::Special("src_shared_limit"),
        237 => Operand::Special("src_private_base"),
        238 => Operand::Special("src_private_limit"),
        240 => Operand::Float(InlineFloat::Half),
        241 => Operand::Float(InlineFloat::MinusHalf),
        242 => Operand::Float(InlineFloat::One),
        243 => Operand::Float(InlineFloat::MinusOne),
        244 => Operand::Float(InlineFloat::Two),
        245 => Operand::Float(InlineFloat::MinusTwo),
        246 => Operand::Float(InlineFloat::Four),
        247 => Operand::Float(InlineFloat::MinusFour),
        248 => Operand::Float(InlineFloat::InvTwoPi),
        253 => Operand::Scc,
        other => own(other),
    }
}

/// A scalar register field of an operand `width` dwords wide, aligned down as LLVM reads it: to a
/// pair for 64 bits, to a quad for more (`AMDGPUDisassembler::createSRegOperand`; `llvm-mc-19`
/// prints sdst 109 of an `s_and_b64` as `ttmp[0:1]` on gfx900, gfx1030 and gfx1100 alike).
pub(crate) fn aligned_scalar(index: u8, width: u8) -> u8 {
    match width {
        0 | 1 => index,
        2 => index & !1,
        _ => index & !3,
    }
}
