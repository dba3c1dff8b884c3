//! Rows of lanes, mapped: one closure over every lane of fixed-size rows, as plain indexed loops
//! (which the compiler unrolls and vectorises; `array::from_fn` was not inlined through its
//! closure), the lane mask a predicate makes, and the f32 FMA over rows with the NaN order every
//! float operation keeps. Every operation family builds its rows with these, so this file
//! imports none of the families.

use super::f16_values::{h, to_h};
use crate::interp::operands::{Row, Row64};
use crate::interp::wave::LANES;

/// A fused multiply-add of f32 rows. Without the FMA instructions (x86-64's baseline), each
/// `f32::mul_add` is a call into a software `fmaf`; where the CPU has them (checked once), the
/// same loop compiled for them is a few vector instructions. Both round once, exactly as IEEE
/// fma does.
#[inline(always)]
pub(super) fn fma_rows(a: Row, b: Row, c: Row) -> Row {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("fma") && std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has the FMA instructions the function is compiled for (checked
            // just above; the result is cached by the standard library).
            return ordered_nans(unsafe { fma_rows_fma(&a, &b, &c) }, [&a, &b, &c]);
        }
    }
    ordered_nans(f3(a, b, c, f32::mul_add), [&a, &b, &c])
}

/// Which NaN a float operation returns, made independent of the build: where a lane's result is
/// NaN and an operand is, the result is the first NaN operand in the arithmetic's written order
/// (x − y: x first; subrev's y − x: y first; fma(x, y, z)), quieted. That is x86's own rule
/// for its operand order, which a compiler may swap for commutative operations and which the
/// native tier's instructions keep. A NaN made from numbers (∞ − ∞, 0 × ∞) stays the host's.
#[inline(always)]
pub(super) fn ordered_nans<const N: usize>(mut out: Row, operands: [&Row; N]) -> Row {
    let nan = |bits: u32| bits & 0x7FFF_FFFF > 0x7F80_0000;
    if !out.iter().any(|&bits| nan(bits)) {
        return out;
    }
    for lane in 0..LANES {
        if nan(out[lane])
            && let Some(first) = operands.iter().map(|row| row[lane]).find(|&bits| nan(bits))
        {
            out[lane] = first | 0x0040_0000;
        }
    }
    out
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma,avx2")]
fn fma_rows_fma(a: &Row, b: &Row, c: &Row) -> Row {
    let mut out = [0u32; LANES];
    for lane in 0..LANES {
        out[lane] = f32::from_bits(a[lane]).mul_add(f32::from_bits(b[lane]), f32::from_bits(c[lane])).to_bits();
    }
    out
}

/// A row built lane by lane.
#[inline(always)]
pub(super) fn lanes<T: Copy + Default>(mut f: impl FnMut(usize) -> T) -> [T; LANES] {
    let mut out = [T::default(); LANES];
    for (lane, value) in out.iter_mut().enumerate() {
        *value = f(lane);
    }
    out
}
#[inline(always)]
pub(super) fn map1(a: Row, f: impl Fn(u32) -> u32) -> Row {
    let mut out = [0u32; LANES];
    for lane in 0..LANES {
        out[lane] = f(a[lane]);
    }
    out
}
#[inline(always)]
pub(super) fn map2(a: Row, b: Row, f: impl Fn(u32, u32) -> u32) -> Row {
    let mut out = [0u32; LANES];
    for lane in 0..LANES {
        out[lane] = f(a[lane], b[lane]);
    }
    out
}
#[inline(always)]
pub(super) fn map3(a: Row, b: Row, c: Row, f: impl Fn(u32, u32, u32) -> u32) -> Row {
    let mut out = [0u32; LANES];
    for lane in 0..LANES {
        out[lane] = f(a[lane], b[lane], c[lane]);
    }
    out
}
#[inline(always)]
pub(super) fn f1(a: Row, f: impl Fn(f32) -> f32) -> Row {
    map1(a, |x| f(f32::from_bits(x)).to_bits())
}
#[inline(always)]
pub(super) fn f2(a: Row, b: Row, f: impl Fn(f32, f32) -> f32) -> Row {
    map2(a, b, |x, y| f(f32::from_bits(x), f32::from_bits(y)).to_bits())
}
#[inline(always)]
pub(super) fn f3(a: Row, b: Row, c: Row, f: impl Fn(f32, f32, f32) -> f32) -> Row {
    map3(a, b, c, |x, y, z| f(f32::from_bits(x), f32::from_bits(y), f32::from_bits(z)).to_bits())
}
#[inline(always)]
pub(super) fn map64(a: Row64, f: impl Fn(u64) -> u64) -> Row64 {
    let mut out = [0u64; LANES];
    for lane in 0..LANES {
        out[lane] = f(a[lane]);
    }
    out
}
#[inline(always)]
pub(super) fn d1(a: Row64, f: impl Fn(f64) -> f64) -> Row64 {
    map64(a, |x| f(f64::from_bits(x)).to_bits())
}
#[inline(always)]
pub(super) fn d2(a: Row64, b: Row64, f: impl Fn(f64, f64) -> f64) -> Row64 {
    let mut out = [0u64; LANES];
    for lane in 0..LANES {
        out[lane] = f(f64::from_bits(a[lane]), f64::from_bits(b[lane])).to_bits();
    }
    out
}
#[inline(always)]
pub(super) fn d3(a: Row64, b: Row64, c: Row64, f: impl Fn(f64, f64, f64) -> f64) -> Row64 {
    let mut out = [0u64; LANES];
    for lane in 0..LANES {
        out[lane] = f(f64::from_bits(a[lane]), f64::from_bits(b[lane]), f64::from_bits(c[lane])).to_bits();
    }
    out
}
/// f16 operations, computed in f32 (exact for one operation of f16 values) and rounded once.
#[inline(always)]
pub(super) fn h1(a: Row, f: impl Fn(f32) -> f32) -> Row {
    map1(a, |x| to_h(f(h(x))))
}
#[inline(always)]
pub(super) fn h2(a: Row, b: Row, f: impl Fn(f32, f32) -> f32) -> Row {
    map2(a, b, |x, y| to_h(f(h(x), h(y))))
}

/// A packed operation: each 16-bit half of the (already op_sel-arranged) operands.
#[inline(always)]
pub(super) fn pk2(a: Row, b: Row, f: impl Fn(u32, u32) -> u32) -> Row {
    map2(a, b, |x, y| (f(x & 0xFFFF, y & 0xFFFF) & 0xFFFF) | f(x >> 16, y >> 16) << 16)
}
#[inline(always)]
pub(super) fn pk3(a: Row, b: Row, c: Row, f: impl Fn(u32, u32, u32) -> u32) -> Row {
    map3(a, b, c, |x, y, z| (f(x & 0xFFFF, y & 0xFFFF, z & 0xFFFF) & 0xFFFF) | f(x >> 16, y >> 16, z >> 16) << 16)
}
#[inline(always)]
pub(super) fn wide(row: Row) -> Row64 {
    let mut out = [0u64; LANES];
    for lane in 0..LANES {
        out[lane] = row[lane] as u64;
    }
    out
}

/// A mask bit per lane where `f` holds.
#[inline(always)]
pub(super) fn mask(f: impl Fn(usize) -> bool) -> u32 {
    (0..LANES).fold(0, |mask, lane| mask | (f(lane) as u32) << lane)
}
