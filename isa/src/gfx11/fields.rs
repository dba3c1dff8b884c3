//! Operand values of the encodings' register fields (RDNA3 ISA guide, the SSRC, SDST and SRC
//! operand tables; gfx11 numbers `null` 124 and `m0` 125, the reverse of gfx10).

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

/// A 9-bit source field (`src0`, VOP3 sources; SOP sources are its low 256 values).
pub fn source_operand(value: u32, literal: Option<u32>) -> Operand {
    match value {
        256..=511 => Operand::Vgpr((value - 256) as u8),
        255 => Operand::Literal(literal.unwrap_or(0)),
        _ => scalar_operand(value),
    }
}

/// A scalar field (SDST, SSRC below 255).
pub fn scalar_operand(value: u32) -> Operand {
    match value {
        0..=105 => Operand::Sgpr(value as u8),
        106 => Operand::VccLo,
        107 => Operand::VccHi,
        108..=123 => Operand::Ttmp((value - 108) as u8),
        124 => Operand::Null,
        125 => Operand::M0,
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
        other => Operand::Reserved(other),
    }
}
