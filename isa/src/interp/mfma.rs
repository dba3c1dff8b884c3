//! gfx9 CDNA's matrix multiply-accumulate (`v_mfma_*`, gfx908, gfx90a, gfx942): one
//! instruction computes D = A × B + C for `blocks` independent M×N blocks across the whole
//! wave64 wave, each lane holding pieces of A, B, C and D. It runs once per wave, not per half
//! (`launch::per_half`), reading all 64 lanes.
//!
//! The register layouts are those of AMD's CDNA1/2/3 ISA guides ("Matrix Arithmetic
//! Instructions", the "Dependency and layout" tables), as AMD's amd_matrix_instruction_calculator
//! states them for every opcode (its "Register to matrix element mapping", printed for each MFMA
//! of CDNA1, CDNA2 and CDNA3 while this file was written; for f64 16×16×4 its register table,
//! whose i the printed formula gives without the lane / 16 term):
//!
//! - A[i][k] of block b (B[k][j] alike, j for i): lane's i = lane % M, its group g = lane / M;
//!   with several blocks b = g and k = e, else k = E·g + e, where e counts the lane's E packed
//!   elements (E = M·K·blocks / 64) from bit 0 of its first register.
//! - C and D, one 32-bit element per register r: M = 32: i = 8·((r % 16) / 4) + 4·(lane / 32) +
//!   r % 4, j = lane % 32, b = r / 16; M = 16: i = 4·(lane / 16) + r % 4, j = lane % 16, b =
//!   r / 4; M = 4: i = r, j = lane % 4, b = lane / 4.
//! - f64: 16×16×4: A k = lane / 16; D in register pair p: i = 4·p + lane / 16, j = lane % 16.
//!   4×4×4 (4 blocks): A and B b = (lane / 4) % 4, k = lane / 16; D i = lane / 16, j = lane % 4,
//!   b = (lane / 4) % 4.
//!
//! Arithmetic: the hardware's order and intermediate rounding of the dot products are not
//! modelled (no source at hand gives them). Here every product of f32, f16, bf16 or fp8/bf8 inputs is exact (in f64) and the
//! K products and C are summed in f64 in k order, then rounded once to f32 (nearest even): an
//! idealised fused dot product, within the error bound of any f32 summation order (tests allow
//! that bound). MODE's denormal and rounding controls are not applied (inputs and outputs keep
//! denormals). i8 sums are exact and are added to C modulo 2^32 (two's complement; this file's
//! choice, no clamp applies). f64 runs one fused multiply-add per k in k order from C.
//!
//! Controls (the CDNA ISA guides' MFMA fields, as amd_matrix_instruction_calculator's
//! `_get_cbsz_abid_transformed_block` and `_get_blgp_transformed_lane` document them): CBSZ and
//! ABID broadcast one block of A to each group of 2^CBSZ blocks (block b multiplies A of block
//! (b / 2^CBSZ)·2^CBSZ + ABID); BLGP makes each lane read B from another lane ([`blgp_lane`]).
//! Where they apply is planned (`from_gfx9/mfma.rs`); elsewhere set values are refused.
//!
//! Sparse (gfx942's `v_smfmac_*`; MI300 ISA guide, 7.4 "Sparse Matrices" and 7.4.1, as the
//! calculator's CDNA3 "compression" layout states it): A is 4:2 structured-sparse along K, so
//! each lane holds half of the dense layout's A elements, packed as dense A would be; stored
//! element e of a lane lies in K chunk e / 2 (four dense k each), at the position its 2-bit
//! index gives, index e being bits [2e + 1 : 2e] of the selected index set of the src2 VGPR
//! ([`Sparse`]). B is dense (the layout above, K the dense K), C is D (accumulated in place:
//! src2 is repurposed for the indices). An index pair must be strictly increasing (the guide's
//! restriction 3); one that is not is refused when met (`step` returns `false`), not guessed.
//! Absent A elements are zeros that contribute no product (the calculator: the Matrix Core
//! skips the "0-multiplications"), so a B infinity beside one adds no NaN.
//!
//! xf32 (gfx942's `v_mfma_f32_*_xf32`, [`Input::Xf32`]): each f32 input's mantissa is truncated
//! to 10 bits before the (exact) products (MI300 ISA guide, V_MFMA_F32_16X16X8_XF32: "mantissa
//! is truncated to 10 bits ... and results are accumulated into FP32"; its 7.1.2 prose says
//! "round the mantissa to 10 bits", the instruction text names the direction; rocWMMA's
//! `rocwmma_xfloat32(float)` host conversion also truncates, `& 0xffffe000`). A NaN whose
//! payload lies only in the 13 dropped bits becomes an infinity here; no source says more.
//!
//! EXEC: gfx942's MFMA ignores EXEC and runs every lane (MI300 ISA guide, 7.1.2's rules for the
//! dense MFMA, "Execution Mask: ignores exec mask from MODE and forces it to 1 for all
//! threads"; the MI355X (CDNA4) guide states the same for its SMFMAC, 7.5), so all 64 lanes
//! are read and written whatever EXEC holds ([`Mfma::exec_ignored`]). The MI100 and MI200
//! guides state no such rule (their hazard tables only ask wait states between a V_CMPX that
//! writes EXEC and a V_MFMA, "no ExecMask forwarding logic for the miSIMD pipeline"), so on
//! gfx908 and gfx90a a partial EXEC is refused (`ExecError::Unsupported`) rather than guessed.
//! The MAI hazards (required `s_nop`s) do not arise here: the interpreter runs a wave's
//! instructions one after another, each complete before the next reads its registers.

use super::wave::{EXEC, Wave};

/// The type of A's or B's elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Input {
    F32,
    F16,
    Bf16,
    I8,
    F64,
    /// gfx942's FP8: E4M3 FNUZ (LLVM's `APFloat::Float8E4M3FNUZ`: bias 8, no infinities or
    /// negative zero, 0x80 the only NaN).
    Fp8,
    /// gfx942's BF8: E5M2 FNUZ (LLVM's `APFloat::Float8E5M2FNUZ`: bias 16, 0x80 the only NaN).
    Bf8,
    /// gfx942's xf32: an f32 register whose mantissa is truncated to 10 bits (the module's note).
    Xf32,
}

impl Input {
    /// Bits per element.
    pub fn bits(self) -> usize {
        match self {
            Input::F32 | Input::Xf32 => 32,
            Input::F16 | Input::Bf16 => 16,
            Input::I8 | Input::Fp8 | Input::Bf8 => 8,
            Input::F64 => 64,
        }
    }
}

/// The type of C and D.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Output {
    F32,
    I32,
    F64,
}

/// Where C comes from: a register tuple (VGPR or AGPR row) or one inline constant for every
/// element (`v_mfma_f32_16x16x4f32 a[0:3], v0, v1, 0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Accumulator {
    Rows(u16),
    /// The constant's bits as C's type reads them (f32 or i32 in the low 32, f64 whole).
    Constant(u64),
}

/// A sparse MFMA's indices (the module's note): the VGPR row of src2 and the bit where the
/// selected index set starts (8·set for 16-bit inputs, 16·set for 8-bit ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sparse {
    pub index: u16,
    pub shift: u8,
}

/// An MFMA planned: its shape, types and the first row of each operand (an AGPR's row is past
/// the VGPRs: `from_gfx9/mfma.rs`, `agpr_row`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mfma {
    /// M = N: 4, 16 or 32.
    pub m: usize,
    pub k: usize,
    pub blocks: usize,
    pub a_type: Input,
    pub b_type: Input,
    pub output: Output,
    pub a: u16,
    pub b: u16,
    pub c: Accumulator,
    pub d: u16,
    /// CBSZ and ABID: block b reads A from block (b / 2^cbsz)·2^cbsz + abid (the module's
    /// note on the controls).
    pub cbsz: u8,
    pub abid: u8,
    /// BLGP: which lane each lane's B is read from ([`blgp_lane`]).
    pub blgp: u8,
    /// A `v_smfmac_*`: A is 4:2 sparse, its indices here (`k` is the dense K).
    pub sparse: Option<Sparse>,
    /// Whether every lane runs whatever EXEC holds (gfx942; the module's note on EXEC).
    pub exec_ignored: bool,
}

/// The lane whose B registers lane `lane` reads under BLGP `blgp` (CDNA ISA guides, "BLGP"; as
/// amd_matrix_instruction_calculator applies it): 0 its own, 1 and 2 the first or second 32
/// lanes broadcast to both halves, 3 every lane rotated down by 16, 4–7 the (blgp − 4)th group
/// of 16 lanes broadcast to all four.
pub(crate) fn blgp_lane(lane: usize, blgp: u8) -> usize {
    match blgp {
        1 => lane % 32,
        2 => 32 + lane % 32,
        3 => (lane + 16) % 64,
        4..=7 => 16 * (blgp as usize - 4) + lane % 16,
        _ => lane,
    }
}

/// The most elements of A (or B) in one MFMA over all blocks (the dense K of 32×32×32 i8 sparse:
/// 1024).
const MAX_ELEMENTS: usize = 1024;
/// The most D elements per lane (32×32×1 f32, two blocks: 32).
const MAX_D: usize = 32;

impl Mfma {
    /// Elements of A (and of B) each lane holds: M·K·blocks / 64.
    pub fn per_lane(&self) -> usize {
        self.m * self.k * self.blocks / 64
    }

    /// D elements each lane holds (registers, or register pairs for f64).
    pub fn d_per_lane(&self) -> usize {
        self.m * self.m * self.blocks / 64
    }

    /// Registers A (or B, of `input`) takes per lane.
    pub fn source_registers(&self, input: Input) -> usize {
        (self.per_lane() * input.bits()).div_ceil(32)
    }

    /// Registers A takes per lane: half the dense count where A is sparse.
    pub fn a_registers(&self) -> usize {
        let stored = self.per_lane() / if self.sparse.is_some() { 2 } else { 1 };
        (stored * self.a_type.bits()).div_ceil(32)
    }

    /// Registers D (and C) take per lane.
    pub fn d_registers(&self) -> usize {
        self.d_per_lane() * if self.output == Output::F64 { 2 } else { 1 }
    }

    /// Whether the shape is one the layouts cover and fits the bounds the step uses.
    pub fn is_valid(&self) -> bool {
        let f64_shape = self.output == Output::F64;
        let shape = matches!(
            (f64_shape, self.m, self.blocks),
            (false, 32, 1 | 2) | (false, 16, 1 | 4) | (false, 4, 16) | (true, 16, 1) | (true, 4, 4)
        );
        // A sparse form: one block of 16 or 32, whole K chunks of four per lane, its index set
        // within the index register, no broadcast controls.
        let sparse = self.sparse.is_none_or(|sparse| {
            self.blocks == 1
                && self.m >= 16
                && self.per_lane().is_multiple_of(4)
                && sparse.shift as usize + self.per_lane() <= 32
                && (self.cbsz, self.abid, self.blgp) == (0, 0, 0)
        });
        shape
            && sparse
            && (self.m * self.k * self.blocks).is_multiple_of(64)
            && self.m * self.k * self.blocks <= MAX_ELEMENTS
            && self.d_per_lane() <= MAX_D
            && (1usize << self.cbsz) <= self.blocks
            && (self.abid as usize) < (1 << self.cbsz)
            && self.blgp < 8
    }

    /// (block, row i, k) of A's element `e` in `lane` (of B: (block, column j, k)).
    fn source_position(&self, lane: usize, e: usize) -> (usize, usize, usize) {
        if self.output == Output::F64 && self.m == 4 {
            return ((lane / 4) % 4, lane % 4, lane / 16);
        }
        let group = lane / self.m;
        if self.blocks > 1 { (group, lane % self.m, e) } else { (0, lane % self.m, self.per_lane() * group + e) }
    }

    /// (block, i, j) of D's (and C's) element `r` in `lane` (r a register, or an f64 pair).
    fn d_position(&self, lane: usize, r: usize) -> (usize, usize, usize) {
        match (self.output == Output::F64, self.m) {
            (true, 16) => (0, 4 * r + lane / 16, lane % 16),
            (true, _) => ((lane / 4) % 4, lane / 16, lane % 4),
            (false, 32) => (r / 16, 8 * ((r % 16) / 4) + 4 * (lane / 32) + r % 4, lane % 32),
            (false, 16) => (r / 4, 4 * (lane / 16) + r % 4, lane % 16),
            (false, _) => (lane / 4, r, lane % 4),
        }
    }
}

/// Element `e` of the packed `input` elements from `row` in `lane` (0–63), as f64 (exact for
/// every input type).
fn element(wave: &Wave, row: u16, input: Input, lane: usize, e: usize) -> f64 {
    let bits = input.bits();
    let dword = |index: usize| wave.lane_value(row as u32 + index as u32, lane);
    if input == Input::F64 {
        let pair = dword(2 * e) as u64 | (dword(2 * e + 1) as u64) << 32;
        return f64::from_bits(pair);
    }
    let word = dword(e * bits / 32) >> (e * bits % 32);
    match input {
        Input::F32 => f32::from_bits(word) as f64,
        // The 10 mantissa bits kept, the low 13 dropped (the module's note on xf32).
        Input::Xf32 => f32::from_bits(word & 0xFFFF_E000) as f64,
        Input::F16 => half::f16::from_bits(word as u16).to_f64(),
        // bf16 is an f32's high half.
        Input::Bf16 => f32::from_bits((word & 0xFFFF) << 16) as f64,
        Input::I8 => word as u8 as i8 as f64,
        Input::Fp8 => fnuz8(word as u8, 3, 8),
        Input::Bf8 => fnuz8(word as u8, 2, 16),
        Input::F64 => unreachable!("returned above"),
    }
}

/// An 8-bit FNUZ float (`mantissa` bits, exponent `bias`): 0x80 is NaN, there is no negative
/// zero and no infinity; a zero exponent field is denormal (LLVM's APFloat `Float8E4M3FNUZ`
/// and `Float8E5M2FNUZ`).
fn fnuz8(byte: u8, mantissa: u32, bias: i32) -> f64 {
    if byte == 0x80 {
        return f64::NAN;
    }
    let sign = if byte & 0x80 != 0 { -1.0 } else { 1.0 };
    let exponent = ((byte & 0x7F) >> mantissa) as i32;
    let fraction = (byte as u32 & ((1 << mantissa) - 1)) as f64 / (1u32 << mantissa) as f64;
    let magnitude = match exponent {
        0 => fraction * 2f64.powi(1 - bias),
        _ => (1.0 + fraction) * 2f64.powi(exponent - bias),
    };
    sign * magnitude
}

/// Runs `mfma` on the whole wave64 `wave` (the low half swapped in, as a once-per-wave step
/// finds it). `false` where it cannot: a wave32 wave, an EXEC that disables lanes where EXEC is
/// not ignored, or a sparse index pair the guide rules out (the module's notes).
pub(crate) fn step(wave: &mut Wave, mfma: &Mfma) -> bool {
    let exec_ok = mfma.exec_ignored || wave.mask64(EXEC) == u64::MAX;
    if !wave.wide || wave.half != 0 || !exec_ok || !mfma.is_valid() {
        return false;
    }
    let (m, k) = (mfma.m, mfma.k);
    let mut a = [0f64; MAX_ELEMENTS];
    // Which A elements are present: all, or those a sparse form's indices select.
    let mut present = [mfma.sparse.is_none(); MAX_ELEMENTS];
    let mut b = [0f64; MAX_ELEMENTS];
    for lane in 0..64 {
        for e in 0..mfma.per_lane() {
            let (block, j, kk) = mfma.source_position(lane, e);
            b[(block * k + kk) * m + j] = element(wave, mfma.b, mfma.b_type, blgp_lane(lane, mfma.blgp), e);
        }
        match mfma.sparse {
            None => {
                for e in 0..mfma.per_lane() {
                    let (block, i, kk) = mfma.source_position(lane, e);
                    a[(block * m + i) * k + kk] = element(wave, mfma.a, mfma.a_type, lane, e);
                }
            }
            Some(sparse) if !sparse_a(wave, mfma, sparse, lane, &mut a, &mut present) => return false,
            Some(_) => {}
        }
    }
    // Every D is computed (C read) before any is written: D may be C's registers.
    let mut out = [[0u64; MAX_D]; 64];
    for (lane, results) in out.iter_mut().enumerate() {
        for (r, result) in results.iter_mut().enumerate().take(mfma.d_per_lane()) {
            let (block, i, j) = mfma.d_position(lane, r);
            let group = 1 << mfma.cbsz;
            let a_block = block / group * group + mfma.abid as usize;
            let products = (0..k)
                .filter(|&kk| present[(a_block * m + i) * k + kk])
                .map(|kk| (a[(a_block * m + i) * k + kk], b[(block * k + kk) * m + j]));
            *result = match mfma.output {
                Output::F32 => {
                    let c = f32::from_bits(accumulator(wave, mfma, lane, r) as u32) as f64;
                    (products.fold(c, |sum, (x, y)| sum + x * y) as f32).to_bits() as u64
                }
                Output::I32 => {
                    // Each product of two i8 is exact in f64, and so is their sum (|sum| < 2^21).
                    let sum = products.fold(0f64, |sum, (x, y)| sum + x * y) as i64 as i32;
                    (accumulator(wave, mfma, lane, r) as u32).wrapping_add(sum as u32) as u64
                }
                Output::F64 => {
                    let c = f64::from_bits(accumulator(wave, mfma, lane, r));
                    products.fold(c, |sum, (x, y)| x.mul_add(y, sum)).to_bits()
                }
            };
        }
    }
    let wide = mfma.output == Output::F64;
    for (lane, results) in out.iter().enumerate() {
        for (r, &result) in results.iter().enumerate().take(mfma.d_per_lane()) {
            let row = mfma.d as u32 + if wide { 2 * r as u32 } else { r as u32 };
            wave.set_lane_value(row, lane, result as u32);
            if wide {
                wave.set_lane_value(row + 1, lane, (result >> 32) as u32);
            }
        }
    }
    true
}

/// Places `lane`'s stored A elements of a sparse form in the dense `a` (marking them
/// `present`): stored element e goes to dense k = per_lane·group + 4·(e / 2) + its index (the
/// module's note). `false` where an index pair is not strictly increasing (the guide's
/// restriction 3: index0 < index1).
fn sparse_a(wave: &Wave, mfma: &Mfma, sparse: Sparse, lane: usize, a: &mut [f64], present: &mut [bool]) -> bool {
    let (m, k) = (mfma.m, mfma.k);
    let indices = wave.lane_value(sparse.index as u32, lane) >> sparse.shift;
    let base = mfma.per_lane() * (lane / m);
    let row = (lane % m) * k;
    for chunk in 0..mfma.per_lane() / 4 {
        let (first, second) = ((indices >> (4 * chunk)) & 3, (indices >> (4 * chunk + 2)) & 3);
        if first >= second {
            return false;
        }
        for (e, index) in [(2 * chunk, first), (2 * chunk + 1, second)] {
            let kk = base + 4 * chunk + index as usize;
            a[row + kk] = element(wave, mfma.a, mfma.a_type, lane, e);
            present[row + kk] = true;
        }
    }
    true
}

/// C's element `r` in `lane`: its register (pair for f64), or the constant.
fn accumulator(wave: &Wave, mfma: &Mfma, lane: usize, r: usize) -> u64 {
    match mfma.c {
        Accumulator::Constant(bits) => bits,
        Accumulator::Rows(row) if mfma.output == Output::F64 => {
            let row = row as u32 + 2 * r as u32;
            wave.lane_value(row, lane) as u64 | (wave.lane_value(row + 1, lane) as u64) << 32
        }
        Accumulator::Rows(row) => wave.lane_value(row as u32 + r as u32, lane) as u64,
    }
}
