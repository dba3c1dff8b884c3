#!/usr/bin/env python3
"""Prints the fraction bits of 2/pi that v_trig_preop_f64 reads, as the Rust table in
isa/src/interp/trig_preop.rs (`TWO_OVER_PI`): 1201 bits b_1200..b_0 (RDNA3 ISA guide,
V_TRIG_PREOP_F64: "(2.0/PI) == 0.{b_1200, b_1199, ..., b_1, b_0}"), left-aligned in 19
big-endian u64 words. Pi comes from Machin's formula in integer arithmetic, 1,400 bits with 64
guard bits. Run: python3 isa/gen/two_over_pi.py
"""
BITS = 1400 + 64


def atan_inverse(x, one):
    """atan(1/x) scaled by `one`, by its Taylor series."""
    total, term, n, sign = 0, one // x, 1, 1
    while term:
        total += sign * (term // n)
        term //= x * x
        n += 2
        sign = -sign
    return total


one = 1 << BITS
pi = 16 * atan_inverse(5, one) - 4 * atan_inverse(239, one)
fraction = (2 << (2 * BITS)) // pi  # 2/pi scaled by 2^BITS
bits = fraction >> (BITS - 1201)  # b_1200..b_0
value = bits << (19 * 64 - 1201)
words = [(value >> (64 * (18 - i))) & (2**64 - 1) for i in range(19)]
print("const TWO_OVER_PI: [u64; 19] = [")
for i in range(0, 19, 3):
    print("    " + " ".join(f"0x{w:016X}," for w in words[i:i + 3]))
print("];")
