//! WMMA (`v_wmma_*_16x16x16_*`): one wave32 wave multiplies 16×16 matrices, D = A × B + C.
//! gfx11 and gfx12 compute the same thing from registers laid out differently: [`Layout`]
//! places each element, [`multiply`] does the arithmetic for both.
//!
//! gfx11's register layout, wave32 (RDNA3 ISA guide, "Wave Matrix Multiply Accumulate"; the
//! same layout AMD's matrix instruction calculator prints, and that ROCm/FlyDSL#485 checked on
//! gfx1151):
//! - A: lane `l` holds row `l % 16`, its 16 K elements packed in order through the source
//!   registers (f16/bf16: two per VGPR, K = 2j low half and 2j + 1 high half; iu8: four per VGPR;
//!   iu4: eight). Lanes 16–31 repeat lanes 0–15.
//! - B: lane `l` holds column `l % 16` the same way.
//! - C and D: VGPR `v`, lane `l` holds element (row 2v + l / 16, column l % 16); f32 and i32
//!   use the whole register, f16 and bf16 the half `op_sel[2]` selects (the other half is kept).
//! - The iu8/iu4 forms read `neg_lo[0]` and `neg_lo[1]` as "A signed" and "B signed"; `clamp`
//!   saturates the i32 result.
//!
//! gfx12's (RDNA4) layout, wave32 (wave64 below). AMD's "Using the Matrix Cores of AMD RDNA 4 architecture
//! GPUs" (GPUOpen) says RDNA4 changed the WMMA VGPR layout without giving it element by element;
//! it is taken from code that runs on RDNA4 hardware: llama.cpp `ggml/src/ggml-cuda/mma.cuh`
//! (`tile<16, 16, float>::get_i` under RDNA4 = 8 × (lane / 16) + l, `get_j` = lane % 16; the
//! A/B `tile<16, 8, half2>` `get_j` = 4 × (lane / 16) + l; the int8 A/B load at int offset
//! 2 × (lane / 16)), consistent with LLVM's register counts (gfx12 `v_wmma_f32_16x16x16_f16`
//! wave32: A and B 4 VGPRs, C and D 8; iu8 and fp8/bf8: A and B 2) and with composable_kernel's
//! gfx12 `wmma_type`s (`num_acc_vgprs_per_wave` = 8 elements, wave32 only):
//! - A: lane `l` holds row `l % 16`, K elements 8 × (l / 16) to 8 × (l / 16) + 7, packed in
//!   order as on gfx11 (f16/bf16 two per VGPR, 8-bit four). Nothing is repeated.
//! - B: lane `l` holds column `l % 16` the same way.
//! - C and D: element `e` of lane `l` is (row 8 × (l / 16) + e, column l % 16); f32/i32 one per
//!   VGPR, f16/bf16 two per VGPR (e = 2v low half, 2v + 1 high half: 4 VGPRs, no `op_sel`;
//!   llama.cpp's RDNA4 f16-result `mma` keeps D as a `half2` tile, consecutive elements paired).
//! - Only the pairing of A's and B's elements shows in D: any K order both share computes the
//!   same product, so the tests check that each half of the wave holds its 8 K elements paired
//!   and where C and D lie, not which K each element is.
//! - iu4 (`v_wmma_i32_16x16x16_iu4`: A and B 1 VGPR; `v_wmma_i32_16x16x32_iu4`, K = 32: 2 VGPRs,
//!   LLVM's register counts): each lane's K/2 nibbles of its row or column, packed low nibble
//!   first as on gfx11. For a dense WMMA the nibble order cannot show (the point above); the
//!   C/D placement, signedness (`neg_lo`) and clamp are iu8's (for `v_wmma_i32_16x16x32_iu4` a
//!   probe on gfx1201 found the same C/D rows: warpfront/hipfire PR #140).
//! - SWMMAC (`v_swmmac_*`, D = A × B + D with A 2:4 sparse, K = 32, 64 for
//!   `v_swmmac_i32_16x16x64_iu4`): B is a dense form's of that K (lane `l`: column `l % 16`, K
//!   (K/2)(l / 16) to (K/2)(l / 16 + 1) − 1), A holds K/4 compressed elements a lane, two for
//!   each group of 4 K, and the index VGPR (`src2`) a 2-bit field per compressed element: field
//!   `e` (bits 2e, 2e + 1) is element `e`'s position in its group. Source: composable_kernel's
//!   ck_tile gfx12 SWMMAC (`include/ck_tile/core/arch/mma/sparse/wmma/sparse_gfx12.hpp`: K per
//!   lane 16 for K = 32, one access, no repeat, 8 C elements a lane; the layout parameters'
//!   meaning in `amdgcn_mma.hpp`) and its compressor (`sparse/sparse_transforms.hpp`,
//!   `compress_a_impl`: group `i`'s survivors become elements 2i and 2i + 1 with their
//!   positions 0–3 in fields 2i and 2i + 1). `index_key` (`op_sel[0]`) picks the index
//!   register's high 16 bits where a lane has 8 fields (LLVM 19 selects it for an index taken
//!   from bits 31:16). For the iu4 forms the nibble order does show; a measurement on gfx1201
//!   (composable_kernel PR #3759, "bug 3": with the high nibble taken as element 0, each field
//!   had to be written swapped and XOR 1) is what low-nibble-first with the plain field order
//!   gives.
//! - Wave64 (`-mwavefrontsize64`; the f16 and bf16 forms, A and B 2 VGPRs, C and D 4 or 2):
//!   lane `l` holds A's row `l % 16`, K 4 (l / 16) to 4 (l / 16) + 3, B's column likewise, and
//!   C/D rows {0, 8, 4, 12}[l / 16] to that + 3 of column `l % 16` (16-bit results two a VGPR,
//!   consecutive rows paired). Source: AMD aiter's `op_tests/opus/device/test_wmma_gfx1201_w64.cu`
//!   (the `_w64_gfx12` builtins against a torch reference; ROCm/aiter#3236 reports it passing on
//!   gfx1201). The 8-bit, iu4 and SWMMAC forms in wave64 have no such source and are refused.
//! - Modifiers, as LLVM 19's instruction selection for gfx1200 sets them (`llc-19`): `fneg` of
//!   an f16 A or B sets `neg_lo[i]` and `neg_hi[i]` together; `fneg`/`fabs` of a float C set
//!   `neg_lo[2]`/`neg_hi[2]` (both: −|C|); a C splat of an inline constant is that constant,
//!   an integer one as the element's bits (f16 1 is 0x0001), a float one as its value in the
//!   element's type (i32's 1.0 is 0x3F80_0000). The assembler takes no `op_sel` and no float
//!   `clamp` on gfx12 WMMA.

use half::{bf16, f16};

use super::VOp;
use crate::gfx11::Opcode;
use crate::interp::operands::Source;
use crate::interp::wave::Wave;

const N: usize = 16;
/// The deepest K (`v_swmmac_i32_16x16x64_iu4`).
const MAX_K: usize = 64;

/// The element type of A or B.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Input {
    F16,
    Bf16,
    Iu8,
    Iu4,
    /// OCP FP8 E4M3 (gfx12).
    Fp8,
    /// OCP FP8 E5M2 (gfx12).
    Bf8,
}

impl Input {
    /// Elements per 32-bit register.
    fn per_register(self) -> usize {
        match self {
            Input::F16 | Input::Bf16 => 2,
            Input::Iu8 | Input::Fp8 | Input::Bf8 => 4,
            Input::Iu4 => 8,
        }
    }
}

/// The element type of C and D.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Output {
    F32,
    F16,
    Bf16,
    I32,
}

/// Where the elements of A, B, C and D live (the module notes).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Layout {
    Gfx11,
    Gfx12,
    /// gfx12 in wave64 (the f16 and bf16 forms).
    Gfx12Wave64,
}

/// One WMMA, decoded: its types, registers and modifiers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Matrix {
    pub layout: Layout,
    pub a: Input,
    pub b: Input,
    pub out: Output,
    /// The first VGPR of A, of B and of D.
    pub a_first: u32,
    pub b_first: u32,
    pub vdst: u32,
    pub c: Source,
    /// Integer forms: whether A and B are signed (`neg_lo[0]`, `neg_lo[1]`).
    pub signed: (bool, bool),
    /// Integer forms: saturate the i32 result.
    pub clamp: bool,
    /// gfx11's 16-bit results: the half `op_sel[2]` selects.
    pub high: bool,
    /// K: 16, or gfx12's 32 (`v_wmma_i32_16x16x32_iu4`, SWMMAC) and 64 (`v_swmmac_i32_16x16x64_iu4`).
    pub k: usize,
    /// gfx12's f16 A and B: negate the whole matrix (`neg_lo[i]` and `neg_hi[i]` together).
    pub negate: (bool, bool),
    /// gfx12's float C: `neg_lo[2]` negates it, `neg_hi[2]` takes its absolute value first.
    pub c_neg: bool,
    pub c_abs: bool,
    /// gfx12's SWMMAC: A is stored 2:4-compressed, placed by an index register.
    pub sparse: Option<Sparse>,
}

/// SWMMAC's sparsity index (the module notes).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Sparse {
    /// The VGPR whose lanes hold A's 2-bit position fields.
    pub index: u32,
    /// `index_key`: the 16-bit half of it read (0 where the form reads all 32 bits).
    pub key: u32,
}

/// Runs a gfx11 WMMA; `None` (refused, naming it) for a wave64 wave, whose register layout (each
/// matrix spread over 64 lanes, half the VGPRs) is not modelled.
pub(crate) fn run(wave: &mut Wave, op: &VOp) -> Option<()> {
    use Opcode::*;
    if wave.wide {
        return None;
    }
    let (input, out) = match op.opcode {
        VWmmaF3216x16x16F16 => (Input::F16, Output::F32),
        VWmmaF3216x16x16Bf16 => (Input::Bf16, Output::F32),
        VWmmaF1616x16x16F16 => (Input::F16, Output::F16),
        VWmmaBf1616x16x16Bf16 => (Input::Bf16, Output::Bf16),
        VWmmaI3216x16x16Iu8 => (Input::Iu8, Output::I32),
        VWmmaI3216x16x16Iu4 => (Input::Iu4, Output::I32),
        _ => return None,
    };
    let operands = &op.operands;
    let (Source::Vgpr(a_first), Source::Vgpr(b_first)) = (operands.src[0], operands.src[1]) else { return None };
    let matrix = Matrix {
        layout: Layout::Gfx11,
        a: input,
        b: input,
        out,
        a_first: a_first as u32,
        b_first: b_first as u32,
        vdst: operands.vdst as u32,
        c: operands.src[2],
        signed: (operands.neg & 1 == 1, operands.neg & 2 == 2),
        clamp: operands.clamp,
        high: operands.op_sel >> 2 & 1 == 1,
        k: N,
        negate: (false, false),
        c_neg: false,
        c_abs: false,
        sparse: None,
    };
    multiply(wave, &matrix)
}

/// Element `index` (0..16 on gfx11, 0..K/2 on gfx12) of lane `lane`'s packed vector starting at
/// VGPR `first`, as f64 (floats and integers alike; `None` past the register file).
fn element(wave: &Wave, first: u32, input: Input, lane: usize, index: usize, signed: bool) -> Option<f64> {
    let per_register = input.per_register();
    let word = read(wave, first + (index / per_register) as u32, lane)?;
    let position = index % per_register;
    Some(match input {
        Input::F16 => f16::from_bits((word >> (16 * position)) as u16).to_f64(),
        Input::Bf16 => bf16::from_bits((word >> (16 * position)) as u16).to_f64(),
        Input::Iu8 => {
            let raw = (word >> (8 * position)) & 0xFF;
            if signed { raw as u8 as i8 as f64 } else { raw as f64 }
        }
        Input::Iu4 => {
            let raw = (word >> (4 * position)) & 0xF;
            if signed { (((raw << 28) as i32) >> 28) as f64 } else { raw as f64 }
        }
        Input::Fp8 => fp8_e4m3((word >> (8 * position)) as u8),
        Input::Bf8 => fp8_e5m2((word >> (8 * position)) as u8),
    })
}

/// OCP FP8 E4M3 ("E4M3FN": bias 7, no infinities, S.1111.111 the only NaN, largest 448). gfx12
/// reads its fp8 WMMA operands in the OCP formats: MLIR's AMDGPU dialect types them
/// `F8E4M3FN`/`F8E5M2` (`WMMAInTypes`, `mlir/include/mlir/Dialect/AMDGPU/IR/AMDGPU.td`), where
/// gfx942's MFMA takes the FNUZ variants.
pub(crate) fn fp8_e4m3(bits: u8) -> f64 {
    let sign = if bits & 0x80 != 0 { -1.0 } else { 1.0 };
    let (exponent, mantissa) = ((bits >> 3) & 0xF, bits & 7);
    if exponent == 0xF && mantissa == 7 {
        return f64::NAN;
    }
    let magnitude = match exponent {
        0 => mantissa as f64 / 8.0 * 2f64.powi(-6),
        _ => (1.0 + mantissa as f64 / 8.0) * 2f64.powi(exponent as i32 - 7),
    };
    sign * magnitude
}

/// OCP FP8 E5M2 (bias 15, IEEE-style infinities and NaNs; the source as for [`fp8_e4m3`]).
pub(crate) fn fp8_e5m2(bits: u8) -> f64 {
    let sign = if bits & 0x80 != 0 { -1.0 } else { 1.0 };
    let (exponent, mantissa) = ((bits >> 2) & 0x1F, bits & 3);
    let magnitude = match (exponent, mantissa) {
        (0x1F, 0) => f64::INFINITY,
        (0x1F, _) => return f64::NAN,
        (0, _) => mantissa as f64 / 4.0 * 2f64.powi(-14),
        _ => (1.0 + mantissa as f64 / 4.0) * 2f64.powi(exponent as i32 - 15),
    };
    sign * magnitude
}

/// The lane and element index that hold A's (row, k) or B's (column, k) for a K of `depth`
/// (gfx12: each half of the wave holds half of K; A uncompressed for SWMMAC).
fn input_place(layout: Layout, depth: usize, line: usize, k: usize) -> (usize, usize) {
    match layout {
        Layout::Gfx11 => (line, k),
        Layout::Gfx12 => (line + 16 * (k / (depth / 2)), k % (depth / 2)),
        Layout::Gfx12Wave64 => (line + 16 * (k / 4), k % 4),
    }
}

/// Lane `lane` (0–63) of VGPR `index`; `None` past the register file.
fn read(wave: &Wave, index: u32, lane: usize) -> Option<u32> {
    ((index as usize) < wave.vgpr.len()).then(|| wave.lane_value(index, lane))
}

/// SWMMAC's A, uncompressed into `a` (rows × K): compressed element `e` of lane `l` (stored as
/// a dense form's element `e`) goes to row `l % 16`, K = half × K/2 + 4 × (e / 2) + the 2-bit
/// field `e` of the lane's index bits; the other K of each group of 4 are zero. Two elements
/// naming one position both count (each multiplies the B element it selects).
fn uncompress(wave: &Wave, matrix: &Matrix, sparse: Sparse, a: &mut [[f64; MAX_K]; N]) -> Option<()> {
    let span = matrix.k / 2;
    for lane in 0..2 * N {
        let index = read(wave, sparse.index, lane)? >> (16 * sparse.key);
        for e in 0..span / 2 {
            let value = element(wave, matrix.a_first, matrix.a, lane, e, matrix.signed.0)?;
            let position = (index >> (2 * e)) as usize & 3;
            a[lane % N][(lane / N) * span + 4 * (e / 2) + position] += value;
        }
    }
    Some(())
}

/// The register (offset from the first), lane, and half (16-bit results) of C's or D's
/// (row, column); `None` for the half where the result is 32 bits.
fn output_place(matrix: &Matrix, row: usize, column: usize) -> (usize, usize, Option<bool>) {
    let sixteen = matches!(matrix.out, Output::F16 | Output::Bf16);
    match matrix.layout {
        Layout::Gfx11 => (row / 2, column + 16 * (row % 2), sixteen.then_some(matrix.high)),
        Layout::Gfx12 => {
            let (element, lane) = (row % 8, column + 16 * (row / 8));
            if sixteen { (element / 2, lane, Some(element % 2 == 1)) } else { (element, lane, None) }
        }
        Layout::Gfx12Wave64 => {
            // Rows 0–3, 8–11, 4–7, 12–15 in lanes 0–15, 16–31, 32–47, 48–63.
            let (element, lane) = (row % 4, column + 16 * [0, 2, 1, 3][row / 4]);
            if sixteen { (element / 2, lane, Some(element % 2 == 1)) } else { (element, lane, None) }
        }
    }
}

/// D = A × B + C for `matrix`, written to its D registers in every lane; `None` where a source
/// register lies past the register file.
pub(crate) fn multiply(wave: &mut Wave, matrix: &Matrix) -> Option<()> {
    let signed = matrix.signed;
    let depth = matrix.k;
    let mut a = [[0f64; MAX_K]; N];
    let mut b = [[0f64; MAX_K]; N];
    for line in 0..N {
        for k in 0..depth {
            let (lane, index) = input_place(matrix.layout, depth, line, k);
            if matrix.sparse.is_none() {
                a[line][k] = element(wave, matrix.a_first, matrix.a, lane, index, signed.0)?;
            }
            b[line][k] = element(wave, matrix.b_first, matrix.b, lane, index, signed.1)?;
        }
    }
    if let Some(sparse) = matrix.sparse {
        uncompress(wave, matrix, sparse, &mut a)?;
    }
    let sign = |negate: bool| if negate { -1.0 } else { 1.0 };
    let (a_sign, b_sign) = (sign(matrix.negate.0), sign(matrix.negate.1));
    // C: its source may be an inline constant (every element the same) or VGPRs.
    let c_value = |row: usize, column: usize| -> f64 {
        let (register, lane, half) = output_place(matrix, row, column);
        let word = match matrix.c {
            Source::Vgpr(first) => read(wave, first as u32 + register as u32, lane).unwrap_or(0),
            Source::Constant(value) => value as u32,
            Source::Sgpr(register) => wave.read_sgpr(register as u32),
            Source::Scc => wave.scc as u32,
            // WMMA's C is never a lane mask.
            Source::Mask(_) | Source::ConstantMask(_) => 0,
        };
        let bits = if half == Some(true) { word >> 16 } else { word } as u16;
        let value = match matrix.out {
            Output::F32 => f32::from_bits(word) as f64,
            Output::F16 => f16::from_bits(bits).to_f64(),
            Output::Bf16 => bf16::from_bits(bits).to_f64(),
            Output::I32 => word as i32 as f64,
        };
        let value = if matrix.c_abs { value.abs() } else { value };
        if matrix.c_neg { -value } else { value }
    };
    let mut d = [[0u32; N]; N];
    for row in 0..N {
        for column in 0..N {
            let mut sum = c_value(row, column);
            // Integer products are exact in f64 (|sum| < 2^53); float ones accumulate in f64 and
            // round once, within the hardware's rounding (the guides do not fix an order).
            for k in 0..depth {
                sum += a_sign * a[row][k] * b_sign * b[column][k];
            }
            d[row][column] = match matrix.out {
                Output::F32 => (sum as f32).to_bits(),
                Output::F16 => f16::from_f64(sum).to_bits() as u32,
                Output::Bf16 => bf16::from_f64(sum).to_bits() as u32,
                Output::I32 if matrix.clamp => sum.clamp(i32::MIN as f64, i32::MAX as f64) as i32 as u32,
                Output::I32 => sum as i64 as i32 as u32,
            };
        }
    }
    // WMMA ignores EXEC: the whole wave computes (RDNA3 ISA guide: it requires EXEC to be all
    // ones; a partial EXEC is undefined there, and every lane is written here).
    for row in 0..N {
        for column in 0..N {
            let (register, lane, half) = output_place(matrix, row, column);
            let index = matrix.vdst + register as u32;
            let Some(old) = read(wave, index, lane) else { continue };
            let value = d[row][column];
            let value = match half {
                None => value,
                Some(true) => (old & 0xFFFF) | value << 16,
                Some(false) => (old & 0xFFFF_0000) | value,
            };
            wave.set_lane_value(index, lane, value);
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::{fp8_e4m3, fp8_e5m2};

    /// Values from the OCP 8-bit floating point specification's format tables (v1.0, §5.1).
    #[test]
    fn fp8_formats_decode_as_ocp_defines_them() {
        assert_eq!(fp8_e4m3(0x38), 1.0);
        assert_eq!(fp8_e4m3(0x7E), 448.0);
        assert_eq!(fp8_e4m3(0x01), 2f64.powi(-9));
        assert_eq!(fp8_e4m3(0xC0), -2.0);
        assert!(fp8_e4m3(0x7F).is_nan());
        assert_eq!(fp8_e4m3(0x78), 256.0);
        assert_eq!(fp8_e5m2(0x3C), 1.0);
        assert_eq!(fp8_e5m2(0x7B), 57344.0);
        assert_eq!(fp8_e5m2(0x01), 2f64.powi(-16));
        assert_eq!(fp8_e5m2(0x7C), f64::INFINITY);
        assert!(fp8_e5m2(0x7D).is_nan());
        assert_eq!(fp8_e5m2(0xBC), -1.0);
    }
}
