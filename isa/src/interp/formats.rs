//! Typed buffer accesses (`tbuffer_*`, `buffer_load_format_*`, `buffer_store_format_*`): each
//! component converted between its format in memory and 32 bits in a VGPR (16 for the `d16`
//! forms), as the RDNA3 ISA guide's "Buffer Formats" and "Data Format Conversion" describe.
//! Formats whose components differ in width (`10_11_11`, `2_10_10_10`, ...) are not modelled and
//! are refused by the caller.

use super::valu::{h, to_h};
use super::wave::Wave;
use super::{Memory, MemoryFault};
use crate::gfx11::{BufferFormat, Numeric};

/// One typed access's shape: a load or a store of `count` components from VGPR `vdata` on
/// (`d16`: two per VGPR, or one in bits 31:16 for `hi`), and the V#'s word 3 with its
/// destination selects.
pub(crate) struct Typed {
    pub load: bool,
    pub count: u8,
    pub d16: bool,
    pub hi: bool,
    pub vdata: u32,
    pub selects: u32,
}

/// One lane's typed access of the element at `address`; `in_range(offset, bytes)` is the
/// buffer's range check for a component (out of range: reads 0, writes dropped). Out of line:
/// typed accesses are rare, and the wave loop, into which the other memory steps inline, is
/// already large.
#[inline(never)]
pub(crate) fn access<M: Memory + ?Sized>(
    wave: &mut Wave,
    memory: &M,
    format: &BufferFormat,
    typed: Typed,
    lane: usize,
    address: u64,
    in_range: &dyn Fn(u64, u64) -> bool,
) -> Result<(), MemoryFault> {
    let Typed { load, count, d16, hi, vdata, selects } = typed;
    let mut at = 0u64;
    let mut values = [0u32; 4];
    // Register value `index` (of `count`), in and out of the d16 halves.
    let register = |index: usize| (vdata + if d16 { index / 2 } else { index } as u32, d16 && (hi || index % 2 == 1));
    for (component, &bits) in format.bits.iter().enumerate() {
        let bytes = bits as u64 / 8;
        if bits == 0 || (!load && component >= count as usize) {
            continue;
        }
        if load {
            let mut raw = [0u8; 4];
            if in_range(at, bytes) {
                memory.read(address + at, &mut raw[..bytes as usize])?;
            }
            values[component] = self::load(u32::from_le_bytes(raw), bits, format.numeric, d16);
        } else {
            let (index, high) = register(component);
            let value = wave.vgpr(index, lane);
            let value = if d16 { from_d16(if high { value >> 16 } else { value }, format) } else { value };
            let raw = store(value, bits, format.numeric).to_le_bytes();
            if in_range(at, bytes) {
                memory.write(address + at, &raw[..bytes as usize])?;
            }
        }
        at += bytes;
    }
    if load {
        for (component, value) in values.iter_mut().enumerate().skip(format.components()) {
            *value = missing(component, format, d16);
        }
        for index in 0..count as usize {
            // Typed loads take the V#'s destination selects, MTBUF's too.
            let value = select((selects >> (3 * index)) & 7, &values, format, d16);
            let (register, high) = register(index);
            let value = if d16 {
                let old = wave.vgpr(register, lane);
                if high { (old & 0xFFFF) | value << 16 } else { (old & 0xFFFF_0000) | value }
            } else {
                value
            };
            wave.write_vgpr(register, lane, value);
        }
    }
    Ok(())
}

/// Whether a format's components read as floats in a VGPR.
fn float_valued(numeric: Numeric) -> bool {
    !matches!(numeric, Numeric::Uint | Numeric::Sint)
}

fn sign_extend(raw: u32, bits: u8) -> i32 {
    let shift = 32 - bits as u32;
    ((raw << shift) as i32) >> shift
}

/// Component `raw` (its `bits` low bits) as the 32 bits a load writes, or for `d16` the 16 bits
/// (float-valued components as f16, a 16-bit float component as it is; integers' low 16 bits).
pub(crate) fn load(raw: u32, bits: u8, numeric: Numeric, d16: bool) -> u32 {
    if d16 && numeric == Numeric::Float && bits == 16 {
        return raw;
    }
    let max = ((1u64 << bits) - 1) as f64;
    let value = match numeric {
        Numeric::Unorm => ((raw as f64 / max) as f32).to_bits(),
        Numeric::Snorm => {
            let max = ((1u64 << (bits - 1)) - 1) as f64;
            ((sign_extend(raw, bits) as f64 / max).max(-1.0) as f32).to_bits()
        }
        Numeric::Uscaled => (raw as f32).to_bits(),
        Numeric::Sscaled => (sign_extend(raw, bits) as f32).to_bits(),
        Numeric::Uint => raw,
        Numeric::Sint => sign_extend(raw, bits) as u32,
        Numeric::Float if bits == 16 => h(raw).to_bits(),
        Numeric::Float => raw,
    };
    if d16 { to_d16(value, numeric) } else { value }
}

/// A 32-bit VGPR value as the `bits`-bit component a store writes: normalized and scaled values
/// clamped to the format's range and rounded to nearest even (NaN stores 0), integers
/// truncated to their low bits, floats rounded to nearest even.
pub(crate) fn store(value: u32, bits: u8, numeric: Numeric) -> u32 {
    let mask = ((1u64 << bits) - 1) as u32;
    let float = f32::from_bits(value) as f64;
    let nan_zero = |x: f64| if x.is_nan() { 0.0 } else { x };
    let unsigned_max = mask as f64;
    let signed_max = ((1u64 << (bits - 1)) - 1) as f64;
    match numeric {
        Numeric::Unorm => (nan_zero(float).clamp(0.0, 1.0) * unsigned_max).round_ties_even() as u32,
        Numeric::Snorm => ((nan_zero(float).clamp(-1.0, 1.0) * signed_max).round_ties_even() as i32 as u32) & mask,
        Numeric::Uscaled => nan_zero(float).round_ties_even().clamp(0.0, unsigned_max) as u32,
        Numeric::Sscaled => {
            (nan_zero(float).round_ties_even().clamp(-signed_max - 1.0, signed_max) as i32 as u32) & mask
        }
        Numeric::Uint | Numeric::Sint => value & mask,
        Numeric::Float if bits == 16 => to_h(f32::from_bits(value)),
        Numeric::Float => value,
    }
}

/// What a load gives for a component the format lacks: 0, and 1 (1.0 for float-valued formats)
/// for w (RDNA3 ISA guide, "Data Format Conversion"); 16 bits of it for `d16`.
pub(crate) fn missing(component: usize, format: &BufferFormat, d16: bool) -> u32 {
    let value = match (component, float_valued(format.numeric)) {
        (3, true) => 1f32.to_bits(),
        (3, false) => 1,
        _ => 0,
    };
    if d16 { to_d16(value, format.numeric) } else { value }
}

/// A V# destination select (word 3, three bits per component): 0 reads 0, 1 reads one, 4–7 the
/// loaded x, y, z, w; the other values read 0.
pub(crate) fn select(select: u32, loaded: &[u32; 4], format: &BufferFormat, d16: bool) -> u32 {
    match select {
        1 => missing(3, format, d16),
        4..=7 => loaded[select as usize - 4],
        _ => 0,
    }
}

/// A 32-bit value as the 16 bits a `d16` load keeps: float-valued ones as f16, integers' low 16
/// bits.
fn to_d16(value: u32, numeric: Numeric) -> u32 {
    if float_valued(numeric) { to_h(f32::from_bits(value)) } else { value & 0xFFFF }
}

/// The 16 bits a `d16` store takes as the 32-bit value [`store`] converts.
pub(crate) fn from_d16(half: u32, format: &BufferFormat) -> u32 {
    let half = half & 0xFFFF;
    if float_valued(format.numeric) { h(half).to_bits() } else { half }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_convert_both_ways() {
        assert_eq!(f32::from_bits(load(255, 8, Numeric::Unorm, false)), 1.0);
        assert_eq!(f32::from_bits(load(0x80, 8, Numeric::Snorm, false)), -1.0);
        assert_eq!(f32::from_bits(load(0x81, 8, Numeric::Snorm, false)), -1.0);
        assert_eq!(f32::from_bits(load(0xFFFF, 16, Numeric::Sscaled, false)), -1.0);
        assert_eq!(load(0xFF, 8, Numeric::Sint, false), u32::MAX);
        assert_eq!(f32::from_bits(load(0x3C00, 16, Numeric::Float, false)), 1.0);
        // d16: a signalling-NaN half comes back as it was; 8-bit UNORM 255 as f16 1.0.
        assert_eq!(load(0x7C01, 16, Numeric::Float, true), 0x7C01);
        assert_eq!(load(255, 8, Numeric::Unorm, true), 0x3C00);
        assert_eq!(store(0.5f32.to_bits(), 8, Numeric::Unorm), 128);
        assert_eq!(store((-2.0f32).to_bits(), 8, Numeric::Snorm), 0x81);
        assert_eq!(store(f32::NAN.to_bits(), 16, Numeric::Unorm), 0);
        assert_eq!(store(300f32.to_bits(), 8, Numeric::Uscaled), 255);
        assert_eq!(store(0x1234_5678, 16, Numeric::Uint), 0x5678);
        assert_eq!(store(1f32.to_bits(), 16, Numeric::Float), 0x3C00);
    }
}
