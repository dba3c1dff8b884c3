//! LLVM's printing of immediates and source modifiers, alike on every ISA before gfx11's
//! (`AMDGPUInstPrinter::printImmediate*`, `printOperandAndFPInputMods`, `printSwizzle`): the
//! gfx9 and gfx10 printers share it.

use core::fmt::{self, Display, Formatter, Write};
use core::marker::PhantomData;

use super::operand::{InlineFloat, Operand};
use super::syntax::{Operands, Syntax};

/// How a VALU source reads a literal or an inline constant (the generators tell them apart by
/// how LLVM prints literals, or on gfx9 an inline constant, there; `AMDGPUInstPrinter::printImmediate*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandType {
    /// 32 bits (f32, i32, b32, packed i16), or 64-bit integer where the slot is two dwords wide.
    B32,
    /// f16: the literal's low half; inline constants are f16 values.
    F16,
    /// i16/u16/b16: the literal's low half; inline float constants are their f16 bit patterns.
    I16,
    /// f64: the literal is the double's high dword.
    F64,
    /// 64-bit integer: the literal zero-extended.
    I64,
    /// Packed f16 pairs: a literal is printed as an f16 only when its high half is zero.
    PackedF16,
}

/// VOP3 modifier flags (`Entry::modifiers`): source abs and neg, op_sel, clamp, omod, the
/// sources that take abs and neg, and the integer sources whose neg bit is `sext`.
pub const ABS: u16 = 1;
pub const NEG: u16 = 2;
pub const OP_SEL: u16 = 4;
pub const CLAMP: u16 = 8;
pub const OMOD: u16 = 16;
pub const SRC0: u16 = 32;
pub const SRC1: u16 = 64;
pub const SRC2: u16 = 128;
pub const SEXT0: u16 = 256;
pub const SEXT1: u16 = 512;
pub const SEXT2: u16 = 1024;

/// A source's modifiers as the encoding sets them.
#[derive(Clone, Copy, Default)]
pub(crate) struct Modifiers {
    pub(crate) neg: bool,
    pub(crate) abs: bool,
    pub(crate) sext: bool,
}

impl<S: Syntax> Operands<'_, '_, S> {
    /// A source of type `ty` with its modifiers: `sext(...)`, `-`, `|...|`; a negated number
    /// without abs is `neg(...)` (`AMDGPUInstPrinter::printOperandAndFPInputMods`).
    pub(crate) fn source(&mut self, operand: Operand, width: u8, ty: OperandType, modifiers: Modifiers) -> fmt::Result {
        self.separator()?;
        let Modifiers { neg, abs, sext } = modifiers;
        let number = matches!(operand, Operand::Int(_) | Operand::Float(_) | Operand::Literal(_));
        let (open, close) = match (sext, neg && !abs && number) {
            (true, _) => ("sext(", ")"),
            (false, true) => ("neg(", ")"),
            (false, false) => ("", ""),
        };
        let neg = if neg && (abs || !number) { "-" } else { "" };
        let (bar_open, bar_close) = if abs { ("|", "|") } else { ("", "") };
        write!(self.f, "{open}{neg}{bar_open}{}{bar_close}{close}", Typed::<S>(operand, width, ty, PhantomData))
    }
}

/// A source operand printed as its type reads immediates (`AMDGPUInstPrinter::printImmediate16`,
/// `printImmediateInt16`, `printImmediate64`, `printImmediateV216`); registers as the ISA spells them.
pub(crate) struct Typed<S>(pub(crate) Operand, pub(crate) u8, pub(crate) OperandType, pub(crate) PhantomData<S>);

impl<S: Syntax> Display for Typed<S> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let Typed(operand, width, ty, _) = *self;
        match (operand, ty) {
            (Operand::Literal(value), OperandType::F16) => write_immediate_f16(f, value),
            (Operand::Literal(value), OperandType::I16) => {
                if (-16..=64).contains(&(value as i32)) || float32_text(value).is_some() {
                    write_literal(f, value)
                } else {
                    write!(f, "0x{:x}", value & 0xFFFF)
                }
            }
            (Operand::Literal(value), OperandType::F64) => write_immediate64(f, (value as u64) << 32, true),
            (Operand::Literal(value), OperandType::I64) => write_immediate64(f, value as u64, false),
            (Operand::Literal(value), OperandType::PackedF16) => {
                if (-16..=64).contains(&(value as i32)) {
                    write!(f, "{}", value as i32)
                } else if let Some(text) = (value <= 0xFFFF).then(|| float16_text(value as u16)).flatten() {
                    f.write_str(text)
                } else {
                    write!(f, "0x{value:x}")
                }
            }
            // i16 operands read the inline floats as their f16 bit patterns, printed in hex.
            (Operand::Float(value), OperandType::I16) => write!(f, "0x{:x}", float16_bits(value)),
            (Operand::Float(InlineFloat::InvTwoPi), OperandType::F64 | OperandType::I64) => {
                f.write_str("0.15915494309189532")
            }
            _ => S::write_operand(f, operand, width),
        }
    }
}

/// The f16 bit pattern of an inline float constant.
pub(crate) fn float16_bits(value: InlineFloat) -> u16 {
    match value {
        InlineFloat::Half => 0x3800,
        InlineFloat::MinusHalf => 0xB800,
        InlineFloat::One => 0x3C00,
        InlineFloat::MinusOne => 0xBC00,
        InlineFloat::Two => 0x4000,
        InlineFloat::MinusTwo => 0xC000,
        InlineFloat::Four => 0x4400,
        InlineFloat::MinusFour => 0xC400,
        InlineFloat::InvTwoPi => 0x3118,
    }
}

/// The text of an f16 bit pattern that is an inline constant (`printImmediateFloat16`).
pub(crate) fn float16_text(bits: u16) -> Option<&'static str> {
    [
        InlineFloat::Half,
        InlineFloat::MinusHalf,
        InlineFloat::One,
        InlineFloat::MinusOne,
        InlineFloat::Two,
        InlineFloat::MinusTwo,
        InlineFloat::Four,
        InlineFloat::MinusFour,
        InlineFloat::InvTwoPi,
    ]
    .into_iter()
    .find(|value| float16_bits(*value) == bits)
    .map(InlineFloat::text)
}

/// The text of an f32 bit pattern that is an inline constant (`printImmediateFloat32`).
pub(crate) fn float32_text(value: u32) -> Option<&'static str> {
    match value {
        0x3F00_0000 => Some("0.5"),
        0xBF00_0000 => Some("-0.5"),
        0x3F80_0000 => Some("1.0"),
        0xBF80_0000 => Some("-1.0"),
        0x4000_0000 => Some("2.0"),
        0xC000_0000 => Some("-2.0"),
        0x4080_0000 => Some("4.0"),
        0xC080_0000 => Some("-4.0"),
        0x3E22_F983 => Some("0.15915494"),
        _ => None,
    }
}

/// An f16 operand's literal: its low half (`printImmediate16`).
pub(crate) fn write_immediate_f16(f: &mut Formatter<'_>, value: u32) -> fmt::Result {
    let low = value as u16;
    if (-16..=64).contains(&(low as i16)) {
        write!(f, "{}", low as i16)
    } else if let Some(text) = float16_text(low) {
        f.write_str(text)
    } else {
        write!(f, "0x{low:x}")
    }
}

/// A 64-bit operand's immediate (`printImmediate64`): an f64 literal is the double's high dword.
pub(crate) fn write_immediate64(f: &mut Formatter<'_>, value: u64, fp: bool) -> fmt::Result {
    if (-16..=64).contains(&(value as i64)) {
        return write!(f, "{}", value as i64);
    }
    let double = [0.5f64, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0].into_iter().find(|double| double.to_bits() == value);
    match double {
        Some(double) => write!(f, "{double:?}"),
        None if value == 0x3FC4_5F30_6DC9_C882 => f.write_str("0.15915494309189532"),
        None if fp => write!(f, "0x{:x}", value >> 32),
        None => write!(f, "0x{value:x}"),
    }
}

/// A literal as LLVM prints a 32-bit immediate (`printImmediate32`): values an inline constant
/// could hold in decimal or as the float, others in hex.
pub(crate) fn write_literal(f: &mut Formatter<'_>, value: u32) -> fmt::Result {
    if (-16..=64).contains(&(value as i32)) {
        return write!(f, "{}", value as i32);
    }
    match float32_text(value) {
        Some(text) => f.write_str(text),
        None => write!(f, "0x{value:x}"),
    }
}

/// A signed offset in hex, as LLVM prints SMEM offsets (`-0x10`).
pub(crate) struct SignedHex(pub(crate) i32);

impl Display for SignedHex {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if self.0 < 0 { write!(f, "-0x{:x}", self.0.unsigned_abs()) } else { write!(f, "0x{:x}", self.0) }
    }
}

/// `op_sel:[...]`-style lists: one bit per source, from `bits`.
pub(crate) fn bit_list(bits: u32, count: u32) -> String {
    let mut text = String::from("[");
    for index in 0..count {
        let _ = write!(text, "{}{}", if index == 0 { "" } else { "," }, (bits >> index) & 1);
    }
    text.push(']');
    text
}

/// VOP3's and SDWA's output modifier: `mul:2`, `mul:4` or `div:2`.
pub(crate) fn write_omod<S: Syntax>(out: &mut Operands<'_, '_, S>, omod: u32) -> fmt::Result {
    match omod {
        1 => out.modifier("mul:2"),
        2 => out.modifier("mul:4"),
        3 => out.modifier("div:2"),
        _ => Ok(()),
    }
}

/// `ds_swizzle_b32`'s offset as LLVM names it (`AMDGPUInstPrinter::printSwizzle`): bit 15 set
/// with bits 14:8 clear is `QUAD_PERM`'s four 2-bit lane selects; bit 15 clear is the and/or/xor
/// lane masks [4:0]/[9:5]/[14:10], printed as the named pattern they spell (`SWAP`, `REVERSE`,
/// `BROADCAST`) or as `BITMASK_PERM`; anything else in decimal.
pub(crate) struct Swizzle(pub(crate) u32);

impl Display for Swizzle {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let imm = self.0;
        if imm & 0xFF00 == 0x8000 {
            let lanes: Vec<String> = (0..4).map(|index| ((imm >> (2 * index)) & 3).to_string()).collect();
            return write!(f, "swizzle(QUAD_PERM,{})", lanes.join(","));
        }
        if imm & 0x8000 != 0 {
            return write!(f, "{imm}");
        }
        let (and, or, xor) = (imm & 0x1F, (imm >> 5) & 0x1F, (imm >> 10) & 0x1F);
        if and == 0x1F && or == 0 && xor.count_ones() == 1 {
            return write!(f, "swizzle(SWAP,{xor})");
        }
        if and == 0x1F && or == 0 && xor > 0 && (xor + 1).is_power_of_two() {
            return write!(f, "swizzle(REVERSE,{})", xor + 1);
        }
        let group = 0x1F - and + 1;
        if group > 1 && group.is_power_of_two() && or < group && xor == 0 {
            return write!(f, "swizzle(BROADCAST,{group},{or})");
        }
        let (probe0, probe1) = (or ^ xor, (and | or) ^ xor);
        let mask: String = (0..5)
            .rev()
            .map(|bit| match ((probe0 >> bit) & 1, (probe1 >> bit) & 1) {
                (1, 1) => '1',
                (0, 0) => '0',
                (0, 1) => 'p',
                _ => 'i',
            })
            .collect();
        write!(f, "swizzle(BITMASK_PERM,\"{mask}\")")
    }
}
