//! gfx9 CDNA's matrix instructions on the interpreter (`Isa::Gfx9`, wave64): the MFMA kernels
//! of `tests/kernels/mfma.c` (built by `gen/test_kernels.sh` for gfx908, gfx90a and gfx942) and
//! hand-encoded kernels for the shapes, register files and operand forms clang's output does
//! not reach (several blocks, AGPR C and D on gfx90a, an inline-constant C, the accvgpr moves,
//! f64's 4×4×4). Every output element is checked against a host reference computed here from
//! the register layouts of AMD's CDNA ISA guides, as amd_matrix_instruction_calculator states
//! them element by element ("Matrix element to register mapping": where A[i][k], B[k][j] and
//! C/D[i][j] of each block lie), the direction opposite to the interpreter's (register to
//! element), so that a layout slip shows.
//!
//! Accuracy: the hardware's order and intermediate rounding of the dot products are not
//! modelled, so a float result passes within the bound any summation order in the output
//! precision meets (Higham, "Accuracy and Stability of Numerical Algorithms", 3.1: |error| ≤
//! γ·(|C| + Σ|a·b|) for K + 1 terms, here (K + 2)·u with u = 2^-24 for f32 and 2^-53 for f64,
//! the extra u for the result's own rounding). The inputs are fractions whose sums round, so
//! results are not trivially exact. Integer forms are compared bit for bit.
//!
//! Each hand-encoded word is what `llvm-mc-19 -show-encoding` encodes for the text beside it
//! (the MFMA words with the opcode and register fields put in: VOP3P-MAI, `0xD380_0000 | op <<
//! 16 | acc_cd << 15 | vdst` and `src0 | src1 << 9 | src2 << 18`, as `llvm-mc-19 -mcpu=gfx90a`
//! encodes `v_mfma_f32_32x32x1f32 a[0:31], v2, v3, a[0:31]` as `d3c08000 04020702`).

use aqueduct_codeobject::CodeObject;
use aqueduct_isa::gfx9::Processor;
use aqueduct_isa::interp::{DecodedKernel, Dispatch, ExecError, Isa, Regions, StandaloneImage};
use aqueduct_isa::native::{self, Tier};
use aqueduct_isa::run_workgroup;

/// The element types of A and B.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ty {
    F32,
    F16,
    Bf16,
    I8,
    Fp8,
    Bf8,
    F64,
    /// gfx942's xf32: f32 registers whose mantissas the MFMA truncates to 10 bits (MI300 ISA
    /// guide, V_MFMA_F32_16X16X8_XF32).
    Xf32,
}

impl Ty {
    fn bits(self) -> usize {
        match self {
            Ty::F32 | Ty::Xf32 => 32,
            Ty::F16 | Ty::Bf16 => 16,
            Ty::I8 | Ty::Fp8 | Ty::Bf8 => 8,
            Ty::F64 => 64,
        }
    }
}

/// The type of C and D.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Out {
    F32,
    I32,
    F64,
}

/// An MFMA's shape: D (M×M, `blocks` of them) = A (M×K) × B (K×M) + C.
#[derive(Clone, Copy, Debug)]
struct Shape {
    m: usize,
    k: usize,
    blocks: usize,
    input: Ty,
    output: Out,
}

/// B's element type where it is not A's (gfx942's mixed fp8/bf8 forms).
fn b_type(shape: &Shape, b: Option<Ty>) -> Ty {
    b.unwrap_or(shape.input)
}

impl Shape {
    /// Elements of A each lane holds.
    fn per_lane(&self) -> usize {
        self.m * self.k * self.blocks / 64
    }

    /// Dwords of A (or B) per lane.
    fn source_dwords(&self) -> usize {
        (self.per_lane() * self.input.bits()).div_ceil(32)
    }

    /// Dwords of C (or D) per lane.
    fn d_dwords(&self) -> usize {
        self.m * self.m * self.blocks / 64 * if self.output == Out::F64 { 2 } else { 1 }
    }

    /// (lane, element index in the lane) of A[i][k] of `block` (of B[k][j]: `i` is j), by the
    /// calculator's "A[i][k].block Lane" and "GPR" formulas for each shape class.
    fn source_at(&self, block: usize, i: usize, k: usize) -> (usize, usize) {
        let e = self.per_lane();
        match (self.output, self.m) {
            // 16×16×4 f64: lane 16·k + i; 4×4×4 f64: lane 4·block + 16·k + i.
            (Out::F64, 16) => (16 * k + i, 0),
            (Out::F64, _) => (4 * block + 16 * k + i, 0),
            // One block: lane M·floor(k / E) + i, element k % E; several: lane M·block + i,
            // element k.
            _ if self.blocks == 1 => (self.m * (k / e) + i, k % e),
            _ => (self.m * block + i, k),
        }
    }

    /// (lane, register or f64 pair) of C/D[i][j] of `block` (the calculator's "C or D[i][j]"
    /// formulas).
    fn d_at(&self, block: usize, i: usize, j: usize) -> (usize, usize) {
        match (self.output, self.m) {
            (Out::F64, 16) => (16 * (i % 4) + j, i / 4),
            (Out::F64, _) => (16 * (i % 4) + 4 * block + j, 0),
            (_, 32) => ((32 * (i / 4)) % 64 + j, 16 * block + 4 * (i / 8) + i % 4),
            (_, 16) => (16 * (i / 4) + j, 4 * block + i % 4),
            _ => (4 * block + j, i),
        }
    }
}

/// Element `e` of a lane's packed `ty` dwords, as f64 (exact).
fn value(ty: Ty, dwords: &[u32], e: usize) -> f64 {
    let bits = ty.bits();
    if ty == Ty::F64 {
        return f64::from_bits(dwords[2 * e] as u64 | (dwords[2 * e + 1] as u64) << 32);
    }
    let word = dwords[e * bits / 32] >> (e * bits % 32);
    match ty {
        Ty::F32 => f32::from_bits(word) as f64,
        // Sign, exponent and the top 10 mantissa bits: the low 13 truncated.
        Ty::Xf32 => f32::from_bits(word >> 13 << 13) as f64,
        Ty::F16 => half::f16::from_bits(word as u16).to_f64(),
        Ty::Bf16 => half::bf16::from_bits(word as u16).to_f64(),
        Ty::I8 => word as u8 as i8 as f64,
        // E4M3 FNUZ (gfx942's FP8; LLVM's APFloat `Float8E4M3FNUZ`): bias 8, 0x80 is NaN.
        Ty::Fp8 => {
            let byte = word as u8;
            assert_ne!(byte, 0x80, "the test's inputs have no NaN");
            let (exponent, mantissa) = (((byte >> 3) & 15) as i32, (byte & 7) as f64);
            let magnitude = if exponent == 0 {
                mantissa / 8.0 * 2f64.powi(-7)
            } else {
                (1.0 + mantissa / 8.0) * 2f64.powi(exponent - 8)
            };
            if byte & 0x80 != 0 { -magnitude } else { magnitude }
        }
        // E5M2 FNUZ (gfx942's BF8; LLVM's APFloat `Float8E5M2FNUZ`): bias 16, 0x80 is NaN.
        Ty::Bf8 => {
            let byte = word as u8;
            assert_ne!(byte, 0x80, "the test's inputs have no NaN");
            let (exponent, mantissa) = (((byte >> 2) & 31) as i32, (byte & 3) as f64);
            let magnitude = if exponent == 0 {
                mantissa / 4.0 * 2f64.powi(-15)
            } else {
                (1.0 + mantissa / 4.0) * 2f64.powi(exponent - 16)
            };
            if byte & 0x80 != 0 { -magnitude } else { magnitude }
        }
        Ty::F64 => unreachable!(),
    }
}

/// The registers of A, B and C of every lane (`[lane][dword]`), and a sparse form's index
/// register (`[lane]`; empty for the dense forms).
struct Operands {
    a: Vec<Vec<u32>>,
    b: Vec<Vec<u32>>,
    c: Vec<Vec<u32>>,
    index: Vec<u32>,
}

/// Checks every element of D (`[lane][dword]`) against A × B + C computed on the host from the
/// documented layouts; returns how many elements were checked.
/// The MFMA's broadcast controls: CBSZ, ABID and BLGP.
#[derive(Clone, Copy, Debug, Default)]
struct Controls {
    cbsz: u32,
    abid: u32,
    blgp: u32,
}

impl Controls {
    /// The block whose A block `block` multiplies: CBSZ "broadcasts one block to 2^CBSZ
    /// others", ABID says which (the calculator's `_get_cbsz_abid_transformed_block` docs).
    fn a_block(&self, block: usize) -> usize {
        let group = 1usize << self.cbsz;
        block - block % group + self.abid as usize
    }

    /// The lane B is read from in place of `lane`, case by case as the calculator's
    /// `_get_blgp_transformed_lane` documents BLGP: 1 broadcasts the first 32 lanes, 2 the
    /// second 32, 3 rotates down by 16, 4–7 broadcast the first to fourth 16.
    fn b_lane(&self, lane: usize) -> usize {
        match self.blgp {
            0 => lane,
            1 => lane & 31,
            2 => lane | 32,
            3 => (lane + 16) & 63,
            group => (group as usize - 4) * 16 + (lane & 15),
        }
    }
}

fn check(shape: &Shape, b: Option<Ty>, operands: &Operands, d: &[Vec<u32>], what: &str) -> usize {
    check_with(shape, b, Controls::default(), operands, d, what)
}

/// [`check`] with broadcast controls.
fn check_with(
    shape: &Shape,
    b: Option<Ty>,
    controls: Controls,
    operands: &Operands,
    d: &[Vec<u32>],
    what: &str,
) -> usize {
    let b_ty = b_type(shape, b);
    let mut checked = 0;
    for block in 0..shape.blocks {
        for i in 0..shape.m {
            for j in 0..shape.m {
                let (mut exact, mut magnitude) = (0f64, 0f64);
                for k in 0..shape.k {
                    let (lane_a, ea) = shape.source_at(controls.a_block(block), i, k);
                    let (lane_b, eb) = shape.source_at(block, j, k);
                    let lane_b = controls.b_lane(lane_b);
                    let product = value(shape.input, &operands.a[lane_a], ea) * value(b_ty, &operands.b[lane_b], eb);
                    exact += product;
                    magnitude += product.abs();
                }
                let where_ = format!("{what}: block {block} D[{i}][{j}]");
                assert_element(shape, operands, d, (block, i, j), (exact, magnitude), &where_);
                checked += 1;
            }
        }
    }
    assert_eq!(checked, shape.m * shape.m * shape.blocks);
    checked
}

/// Checks D[block][i][j] (`[lane][dword]`) against C + `exact`, the sum of the products whose
/// absolute values sum to `magnitude`: integers bit for bit (C + the sum modulo 2^32), floats
/// within the module's bound.
fn assert_element(
    shape: &Shape,
    operands: &Operands,
    d: &[Vec<u32>],
    (block, i, j): (usize, usize, usize),
    (exact, magnitude): (f64, f64),
    what: &str,
) {
    let (lane, register) = shape.d_at(block, i, j);
    let (c, got) = match shape.output {
        Out::F64 => {
            let pair = |regs: &[u32]| regs[2 * register] as u64 | (regs[2 * register + 1] as u64) << 32;
            (f64::from_bits(pair(&operands.c[lane])), f64::from_bits(pair(&d[lane])))
        }
        Out::F32 => (f32::from_bits(operands.c[lane][register]) as f64, f32::from_bits(d[lane][register]) as f64),
        Out::I32 => (operands.c[lane][register] as i32 as f64, d[lane][register] as i32 as f64),
    };
    let where_ = format!("{what} (lane {lane}, register {register})");
    if shape.output == Out::I32 {
        let want = (operands.c[lane][register] as i32).wrapping_add(exact as i64 as i32);
        assert_eq!(d[lane][register] as i32, want, "{where_}");
    } else {
        let unit = if shape.output == Out::F64 { 2f64.powi(-53) } else { 2f64.powi(-24) };
        let want = exact + c;
        let bound = (shape.k as f64 + 2.0) * unit * (magnitude + c.abs()) + f64::MIN_POSITIVE;
        assert!((got - want).abs() <= bound, "{where_}: got {got}, want {want} (bound {bound})");
    }
}

/// A small deterministic generator for the inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }

    /// A fraction in [−2, 2) with `bits` significant bits below the point, so that sums round.
    fn fraction(&mut self, bits: u32) -> f64 {
        let random = (self.next() as u64) << 32 | self.next() as u64;
        (random % (1 << (bits + 2))) as f64 / (1u64 << bits) as f64 - 2.0
    }

    /// `count` dwords of packed `ty` elements.
    fn dwords(&mut self, ty: Ty, count: usize) -> Vec<u32> {
        let elements = count * 32 / ty.bits();
        let mut out = vec![0u32; count];
        for e in 0..elements {
            let bits: u64 = match ty {
                Ty::F32 => (self.fraction(20) as f32).to_bits() as u64,
                // Any low 13 bits, so that the truncation shows (rounding would differ).
                Ty::Xf32 => ((self.fraction(20) as f32).to_bits() & !0x1FFF | self.next() & 0x1FFF) as u64,
                Ty::F16 => half::f16::from_f64(self.fraction(9)).to_bits() as u64,
                Ty::Bf16 => half::bf16::from_f64(self.fraction(6)).to_bits() as u64,
                Ty::I8 => self.next() as u8 as u64,
                // Any byte but NaN (0x80).
                Ty::Fp8 | Ty::Bf8 => match self.next() as u8 {
                    0x80 => 0x38,
                    byte => byte as u64,
                },
                Ty::F64 => self.fraction(50).to_bits(),
            };
            let width = ty.bits();
            if ty == Ty::F64 {
                out[2 * e] = bits as u32;
                out[2 * e + 1] = (bits >> 32) as u32;
            } else {
                out[e * width / 32] |= (bits as u32) << (e * width % 32);
            }
        }
        out
    }
}

/// Random A, B and C registers for `shape` (C of the output type; f64 in pairs).
fn operands(shape: &Shape, b: Option<Ty>, rng: &mut Rng) -> Operands {
    let per_lane = |rng: &mut Rng, ty: Ty, count: usize| (0..64).map(|_| rng.dwords(ty, count)).collect::<Vec<_>>();
    let c_type = match shape.output {
        Out::F32 => Ty::F32,
        Out::F64 => Ty::F64,
        Out::I32 => Ty::I8,
    };
    let mut c = per_lane(rng, c_type, shape.d_dwords());
    if shape.output == Out::I32 {
        // Whole i32 accumulators, some near the ends so that wrapping shows.
        for (lane, registers) in c.iter_mut().enumerate() {
            for (r, register) in registers.iter_mut().enumerate() {
                *register = (*register).wrapping_mul(0x0101_0101) ^ ((lane + r) as u32 & 1) << 31;
            }
        }
    }
    Operands {
        a: per_lane(rng, shape.input, shape.source_dwords()),
        b: per_lane(rng, b_type(shape, b), shape.source_dwords()),
        c,
        index: Vec::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// The compiled kernels of tests/kernels/mfma.c.
// ---------------------------------------------------------------------------------------------

/// A buffer the kernel reaches by address: 8-byte aligned host memory.
struct Buf(Vec<u64>);

impl Buf {
    fn of_dwords(dwords: &[u32]) -> Buf {
        let mut words = vec![0u64; dwords.len().div_ceil(2).max(1)];
        for (index, &dword) in dwords.iter().enumerate() {
            words[index / 2] |= (dword as u64) << (32 * (index % 2));
        }
        Buf(words)
    }

    fn address(&self) -> u64 {
        self.0.as_ptr() as u64
    }

    fn dwords(&self) -> Vec<u32> {
        self.0.iter().flat_map(|&word| [word as u32, (word >> 32) as u32]).collect()
    }
}

/// Runs kernel `symbol` of `tests/kernels/mfma_<target>.hsaco` as one wave of 64 work-items on
/// the interpreter, then on the native tier where it is available (which must agree: it leaves
/// MFMA to the interpreter), with `buffers` as its pointer arguments in order. Returns the
/// buffers' dwords after the run.
fn run_compiled(target: &str, symbol: &str, buffers: &[Buf]) -> Result<Vec<Vec<u32>>, ExecError> {
    let processor = Processor::from_name(target).expect("a gfx9 processor");
    let path = format!("{}/tests/kernels/mfma_{target}.hsaco", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).unwrap_or_else(|error| panic!("{path}: {error} (run isa/gen/test_kernels.sh)"));
    let code_object = CodeObject::parse(&bytes).expect("a code object");
    let metadata = code_object.kernel(symbol).expect("the kernel's metadata").clone();
    let image = StandaloneImage::load(&bytes).expect("the image");
    let kernel_object = image.kernel_object(symbol).expect("the kernel descriptor");
    let explicit: Vec<_> = metadata.args.iter().filter(|arg| !arg.value_kind.is_hidden()).collect();
    assert_eq!(explicit.len(), buffers.len(), "{symbol}'s arguments");
    let results = |buffers: &[Buf]| buffers.iter().map(Buf::dwords).collect::<Vec<_>>();
    let before = results(buffers);
    let run = |tier: Tier, buffers: &[Buf]| -> Result<(), ExecError> {
        let mut kernargs = vec![0u64; (metadata.kernarg_segment_size as usize).div_ceil(8).max(32)];
        for (arg, buffer) in explicit.iter().zip(buffers) {
            assert_eq!((arg.offset % 8, arg.size), (0, 8), "{symbol}: a pointer argument");
            kernargs[arg.offset as usize / 8] = buffer.address();
        }
        let mut regions = vec![image.range(), (kernargs.as_ptr() as u64, kernargs.len() as u64 * 8)];
        regions.extend(buffers.iter().map(|buffer| (buffer.address(), buffer.0.len() as u64 * 8)));
        let memory = Regions(regions);
        let kernel = DecodedKernel::load_for(&memory, kernel_object, Isa::Gfx9(processor))?;
        let dispatch = Dispatch {
            kernarg_address: kernargs.as_ptr() as u64,
            instruction_limit: 100_000,
            tier,
            ..Dispatch::new(&kernel, [64, 1, 1], [64, 1, 1])
        };
        run_workgroup(&dispatch, &memory, [0; 3], &mut Vec::new()).map(|_| ())
    };
    run(Tier::Interpreter, buffers)?;
    let interpreted = results(buffers);
    if native::unavailable().is_none() {
        let again: Vec<Buf> = before.iter().map(|dwords| Buf::of_dwords(dwords)).collect();
        run(Tier::Native, &again).expect("the native tier runs what the interpreter ran");
        assert_eq!(results(&again), interpreted, "{target} {symbol}: the native tier differs from the interpreter");
    }
    Ok(interpreted)
}

/// The compiled MFMA kernels, each with its shape and how its arguments hold A, B, C and D: the
/// kernels take one `in` array (A at lane, B at 64 + lane, C at 128 + 4·lane..) or separate
/// per-lane vectors.
#[derive(Clone, Copy)]
enum Arguments {
    /// `(const T *in, T4 *out)`: A and B one element per lane, C four per lane after them.
    OneArray,
    /// `(const A *a, const B *b, const C *c, D *out)`, each indexed by lane.
    PerLane,
}

const COMPILED: [(&str, Shape, Arguments, &[&str]); 7] = [
    (
        "mfma_f32_16x16x4f32",
        Shape { m: 16, k: 4, blocks: 1, input: Ty::F32, output: Out::F32 },
        Arguments::OneArray,
        &["gfx908", "gfx90a", "gfx942"],
    ),
    (
        "mfma_f32_32x32x8f16",
        Shape { m: 32, k: 8, blocks: 1, input: Ty::F16, output: Out::F32 },
        Arguments::PerLane,
        &["gfx908", "gfx90a", "gfx942"],
    ),
    (
        "mfma_i32_16x16x16i8",
        Shape { m: 16, k: 16, blocks: 1, input: Ty::I8, output: Out::I32 },
        Arguments::OneArray,
        &["gfx908", "gfx90a"],
    ),
    (
        "mfma_f32_16x16x16bf16_1k",
        Shape { m: 16, k: 16, blocks: 1, input: Ty::Bf16, output: Out::F32 },
        Arguments::PerLane,
        &["gfx90a", "gfx942"],
    ),
    (
        "mfma_f64_16x16x4f64",
        Shape { m: 16, k: 4, blocks: 1, input: Ty::F64, output: Out::F64 },
        Arguments::OneArray,
        &["gfx90a", "gfx942"],
    ),
    (
        "mfma_f32_16x16x32_fp8_fp8",
        Shape { m: 16, k: 32, blocks: 1, input: Ty::Fp8, output: Out::F32 },
        Arguments::PerLane,
        &["gfx942"],
    ),
    (
        "mfma_f32_16x16x8_xf32",
        Shape { m: 16, k: 8, blocks: 1, input: Ty::Xf32, output: Out::F32 },
        Arguments::PerLane,
        &["gfx942"],
    ),
];

/// Lays `operands` out as the kernel's arguments take them; the last buffer is D's.
fn arguments(shape: &Shape, layout: Arguments, operands: &Operands) -> Vec<Buf> {
    let flat = |rows: &[Vec<u32>]| rows.concat();
    match layout {
        Arguments::OneArray => {
            // Elements of `in` (f64: two dwords each): A, B at 64 + lane, C at 128 + 4·lane.
            let mut input = flat(&operands.a);
            input.extend(flat(&operands.b));
            input.extend(flat(&operands.c));
            vec![Buf::of_dwords(&input), Buf::of_dwords(&vec![0; 64 * shape.d_dwords()])]
        }
        Arguments::PerLane => vec![
            Buf::of_dwords(&flat(&operands.a)),
            Buf::of_dwords(&flat(&operands.b)),
            Buf::of_dwords(&flat(&operands.c)),
            Buf::of_dwords(&vec![0; 64 * shape.d_dwords()]),
        ],
    }
}

#[test]
fn the_compiled_mfma_kernels_match_the_host_reference_on_gfx908_gfx90a_and_gfx942() {
    let mut rng = Rng(0x4D46_4D41);
    let mut checked = 0;
    for (symbol, shape, layout, targets) in COMPILED {
        for target in targets {
            let operands = operands(&shape, None, &mut rng);
            let buffers = arguments(&shape, layout, &operands);
            let out =
                run_compiled(target, symbol, &buffers).unwrap_or_else(|error| panic!("{target} {symbol}: {error}"));
            let d: Vec<Vec<u32>> = out.last().unwrap().chunks(shape.d_dwords()).map(<[u32]>::to_vec).collect();
            checked += check(&shape, None, &operands, &d[..64], &format!("{target} {symbol}"));
        }
    }
    // 16·16 + 32·32 + 256 (×2) + 256 (×2) + 256 (×2) + 256 + 256 (xf32), over the targets
    // each runs on.
    assert_eq!(checked, 3 * 256 + 3 * 1024 + 2 * 256 + 2 * 256 + 2 * 256 + 256 + 256);
}

// ---------------------------------------------------------------------------------------------
// Hand-encoded kernels: the shapes, register files and operand forms clang's output above does
// not reach.
// ---------------------------------------------------------------------------------------------

/// Where the hand-encoded MFMA keeps C and D, and where C comes from.
#[derive(Clone, Copy, PartialEq)]
enum Accumulator {
    /// VGPRs (gfx90a and gfx942 only).
    Vgprs,
    /// AGPRs a0.., written from the loaded VGPRs with `v_accvgpr_write_b32` (on gfx90a and
    /// gfx942 first to a[C..2C) and moved down with `v_accvgpr_mov_b32`), read back with
    /// `v_accvgpr_read_b32`.
    Agprs,
    /// VGPR D with C an inline constant: the 9-bit source field (e.g. 242, `1.0`) and its bits.
    Constant(u32, u32),
    /// gfx90a and gfx942: A, B and C loaded straight into AGPRs (`global_load_dword a..`, the
    /// acc bit), the MFMA reading A and B from AGPRs (its acc bits) and C and D there (acc_cd),
    /// D passed through LDS (`ds_write_b32 v1, a[r]`, `ds_read_b32 a[128 + r], v1`) and stored
    /// from AGPRs (`global_store_dword v1, a[128 + r], s[2:3]`).
    AgprMemory,
}

/// One hand-encoded case: the processor, the MFMA's mnemonic (which its words must decode as),
/// its VOP3P opcode (the gfx9 table's `op`), its shape, B's type if not A's, and where C and D
/// live.
struct Case {
    processor: Processor,
    mnemonic: &'static str,
    op: u32,
    shape: Shape,
    b: Option<Ty>,
    accumulator: Accumulator,
    controls: Controls,
    /// A `v_smfmac_*`: A holds half the dense registers, the index register follows C's.
    sparse: bool,
}

impl Case {
    /// Dwords of A per lane: half the dense count where A is sparse.
    fn a_dwords(&self) -> usize {
        self.shape.source_dwords() / if self.sparse { 2 } else { 1 }
    }
}

/// The wave64 kernel for `case`: loads A, B and C (one VGPR per row of 64 dwords of `in`, lane
/// by lane), runs the MFMA and stores each D register to a row of `out`. The literals
/// 0x1111_1111/0x2222_2222 are `in`'s address, 0x3333_3333/0x4444_4444 `out`'s.
fn program(case: &Case) -> Vec<u32> {
    let shape = &case.shape;
    let (ra, rb, rc) = (case.a_dwords(), shape.source_dwords(), shape.d_dwords());
    if case.accumulator == Accumulator::AgprMemory {
        return agpr_memory_program(case);
    }
    let constant = matches!(case.accumulator, Accumulator::Constant(..));
    let rows = ra + rb + if constant { 0 } else { rc } + usize::from(case.sparse);
    let (a, b, c) = (2, 2 + ra as u32, 2 + (ra + rb) as u32);
    let unified = case.processor != Processor::Gfx908;
    let mut code = vec![
        0xBE80_00FF,
        0x1111_1111, // s_mov_b32 s0, <in low>
        0xBE81_00FF,
        0x2222_2222, // s_mov_b32 s1, <in high>
        0xBE82_00FF,
        0x3333_3333, // s_mov_b32 s2, <out low>
        0xBE83_00FF,
        0x4444_4444, // s_mov_b32 s3, <out high>
        0x2402_0082, // v_lshlrev_b32_e32 v1, 2, v0
    ];
    for row in 0..rows as u32 {
        code.extend([0xDC50_8000, 0x0000_0001 | (2 + row) << 24]); // global_load_dword v[2 + row], v1, s[0:1]
        code.extend([0x8000_FF00, 0x100, 0x8201_8001]); // s_add_u32 s0, s0, 0x100; s_addc_u32 s1, s1, 0
    }
    code.push(0xBF8C_0F70); // s_waitcnt vmcnt(0)
    let agprs = case.accumulator == Accumulator::Agprs;
    if agprs {
        let staging = if unified { rc as u32 } else { 0 };
        for r in 0..rc as u32 {
            // v_accvgpr_write_b32 a[staging + r], v[c + r]
            code.extend([0xD3D9_4000 | (staging + r), 0x1800_0100 | (c + r)]);
        }
        for r in (0..rc as u32).filter(|_| unified) {
            // v_accvgpr_mov_b32 a[r], a[staging + r] (VOP1, op 82)
            code.push(0x7E00_0000 | r << 17 | 82 << 9 | (256 + staging + r));
        }
    }
    // The MFMA (VOP3P-MAI): D and C in a0.. (acc_cd on gfx90a and gfx942; always on gfx908)
    // or in v[c..].
    let (vdst, src2) = match case.accumulator {
        Accumulator::Agprs | Accumulator::AgprMemory => (0, 256),
        Accumulator::Vgprs => (c, 256 + c),
        Accumulator::Constant(field, _) => (c, field),
    };
    // A sparse form's src2 is its index VGPR, loaded after C (C is D there).
    let src2 = if case.sparse { 256 + c + rc as u32 } else { src2 };
    let acc_cd = u32::from(agprs && unified);
    // cbsz [10:8], abid [14:11], blgp [63:61].
    let Controls { cbsz, abid, blgp } = case.controls;
    let w0 = 0xD380_0000 | case.op << 16 | acc_cd << 15 | abid << 11 | cbsz << 8 | vdst;
    code.extend([w0, (256 + a) | (256 + b) << 9 | src2 << 18 | blgp << 29]);
    if agprs {
        for r in 0..rc as u32 {
            code.extend([0xD3D8_4000 | (c + r), 0x1800_0100 | r]); // v_accvgpr_read_b32 v[c + r], a[r]
        }
    }
    for r in 0..rc as u32 {
        code.extend([0xDC70_8000, 0x0002_0001 | (c + r) << 8]); // global_store_dword v1, v[c + r], s[2:3]
        code.extend([0x8002_FF02, 0x100, 0x8203_8003]); // s_add_u32 s2, s2, 0x100; s_addc_u32 s3, s3, 0
    }
    code.extend([0xBF8C_0F70, 0xBF81_0000]); // s_waitcnt vmcnt(0); s_endpgm
    code
}

/// [`program`] for [`Accumulator::AgprMemory`]: A in a64.., B after it, C and D in a0...
fn agpr_memory_program(case: &Case) -> Vec<u32> {
    let shape = &case.shape;
    let (ra, rb, rc) = (shape.source_dwords() as u32, shape.source_dwords() as u32, shape.d_dwords() as u32);
    let mut code = vec![
        0xBE80_00FF,
        0x1111_1111, // s_mov_b32 s0, <in low>
        0xBE81_00FF,
        0x2222_2222, // s_mov_b32 s1, <in high>
        0xBE82_00FF,
        0x3333_3333, // s_mov_b32 s2, <out low>
        0xBE83_00FF,
        0x4444_4444, // s_mov_b32 s3, <out high>
        0x2402_0082, // v_lshlrev_b32_e32 v1, 2, v0
    ];
    let destinations = (0..ra).map(|r| 64 + r).chain((0..rb).map(|r| 64 + ra + r)).chain(0..rc);
    for agpr in destinations {
        code.extend([0xDC50_8000, 0x0080_0001 | agpr << 24]); // global_load_dword a[agpr], v1, s[0:1]
        code.extend([0x8000_FF00, 0x100, 0x8201_8001]); // s_add_u32 s0, s0, 0x100; s_addc_u32 s1, s1, 0
    }
    code.push(0xBF8C_0F70); // s_waitcnt vmcnt(0)
    // The MFMA: acc_cd, A = a64, B = a[64 + ra], C = a0, both acc bits.
    let Controls { cbsz, abid, blgp } = case.controls;
    let w0 = 0xD380_8000 | case.op << 16 | abid << 11 | cbsz << 8;
    code.extend([w0, (256 + 64) | (256 + 64 + ra) << 9 | 256 << 18 | 3 << 27 | blgp << 29]);
    for r in 0..rc {
        code.extend([0xDA1A_0000, 0x0000_0001 | r << 8]); // ds_write_b32 v1, a[r]
        code.push(0xBF8C_C07F); // s_waitcnt lgkmcnt(0)
        code.extend([0xDA6C_0000, 0x0000_0001 | (128 + r) << 24]); // ds_read_b32 a[128 + r], v1
        code.push(0xBF8C_C07F); // s_waitcnt lgkmcnt(0)
        code.extend([0xDC70_8000, 0x0082_0001 | (128 + r) << 8]); // global_store_dword v1, a[128 + r], s[2:3]
        code.extend([0x8002_FF02, 0x100, 0x8203_8003]); // s_add_u32 s2, s2, 0x100; s_addc_u32 s3, s3, 0
    }
    code.extend([0xBF8C_0F70, 0xBF81_0000]); // s_waitcnt vmcnt(0); s_endpgm
    code
}

/// Runs `case` with `operands` as one wave on the interpreter (and the native tier, which must
/// agree); returns D's registers per lane.
fn run_case(case: &Case, operands: &Operands) -> Result<Vec<Vec<u32>>, ExecError> {
    run_with_code(case, operands, &program(case))
}

/// [`run_case`] with `code`, [`program`]'s for `case` or an edit of it.
fn run_with_code(case: &Case, operands: &Operands, code: &[u32]) -> Result<Vec<Vec<u32>>, ExecError> {
    let shape = &case.shape;
    let rc = shape.d_dwords();
    let mut rows: Vec<&Vec<u32>> = Vec::new();
    let registers = |per_lane: &[Vec<u32>], count: usize| -> Vec<Vec<u32>> {
        (0..count).map(|r| (0..64).map(|lane| per_lane[lane][r]).collect()).collect()
    };
    let (a, b, c) = (
        registers(&operands.a, case.a_dwords()),
        registers(&operands.b, shape.source_dwords()),
        registers(&operands.c, rc),
    );
    rows.extend(&a);
    rows.extend(&b);
    if !matches!(case.accumulator, Accumulator::Constant(..)) {
        rows.extend(&c);
    }
    if case.sparse {
        rows.push(&operands.index);
    }
    let input: Vec<u32> = rows.into_iter().flatten().copied().collect();
    let out = run_program(case.processor, code, &input, 64 * rc)?;
    Ok((0..64).map(|lane| (0..rc).map(|r| out[r * 64 + lane]).collect()).collect())
}

/// Runs the wave64 `code` (with [`program`]'s address literals) as `processor`'s code on the
/// interpreter, then on the native tier where available (which must agree), with `input` and an
/// output buffer of `out_dwords`; returns the output.
fn run_program(processor: Processor, code: &[u32], input: &[u32], out_dwords: usize) -> Result<Vec<u32>, ExecError> {
    let execute = |tier: Tier| -> Result<Vec<u32>, ExecError> {
        let (input, output) = (Buf::of_dwords(input), Buf::of_dwords(&vec![0; out_dwords]));
        let mut words = vec![0u32; 16];
        words[4] = 64; // kernel_code_entry_byte_offset
        words[0] = 256; // group_segment_fixed_size: a dword of LDS per lane
        words[12] = 15; // COMPUTE_PGM_RSRC1: (15 + 1) × 4 VGPRs (× 2 on gfx90a and gfx942)
        words.extend(code.iter().map(|&word| match word {
            0x1111_1111 => input.address() as u32,
            0x2222_2222 => (input.address() >> 32) as u32,
            0x3333_3333 => output.address() as u32,
            0x4444_4444 => (output.address() >> 32) as u32,
            other => other,
        }));
        let image = Buf::of_dwords(&words);
        let memory = Regions(vec![
            (image.address(), words.len() as u64 * 4),
            (input.address(), input.0.len() as u64 * 8),
            (output.address(), output.0.len() as u64 * 8),
        ]);
        let kernel = DecodedKernel::load_for(&memory, image.address(), Isa::Gfx9(processor))?;
        let dispatch = Dispatch {
            group_segment_size: 256,
            instruction_limit: 100_000,
            tier,
            ..Dispatch::new(&kernel, [64, 1, 1], [64, 1, 1])
        };
        run_workgroup(&dispatch, &memory, [0; 3], &mut Vec::new())?;
        Ok(output.dwords())
    };
    let out = execute(Tier::Interpreter)?;
    if native::unavailable().is_none() {
        assert_eq!(execute(Tier::Native)?, out, "{processor:?}: the native tier differs from the interpreter");
    }
    Ok(out)
}

/// `case`'s MFMA words decode as its mnemonic on its processor (so the opcodes above are the
/// table's).
fn assert_decodes(case: &Case) {
    let code = program(case);
    let bytes: Vec<u8> = code.iter().flat_map(|word| word.to_le_bytes()).collect();
    let found = aqueduct_isa::gfx9::decode_all(&bytes, 0, case.processor)
        .map(|result| result.expect("the kernel decodes").1.entry.mnemonic)
        .find(|mnemonic| mnemonic.starts_with("v_mfma") || mnemonic.starts_with("v_smfmac"));
    assert_eq!(found, Some(case.mnemonic), "{:?}'s op {}", case.processor, case.op);
}

const fn shape(m: usize, k: usize, blocks: usize, input: Ty, output: Out) -> Shape {
    Shape { m, k, blocks, input, output }
}

/// One case per shape class and register file the compiled kernels leave out: the multi-block
/// f32, f16, bf16 and i8 forms (2, 4 and 16 blocks), gfx908's AGPR-only accumulators and
/// x2bf16, gfx90a's AGPR accumulators (acc_cd) with `v_accvgpr_mov_b32`, an inline-constant C,
/// f64's 4×4×4 and gfx942's i8 with two dwords and mixed bf8 × fp8.
fn cases() -> Vec<Case> {
    use Accumulator::*;
    use Processor::*;
    let case = |processor, mnemonic, op, shape, b, accumulator| Case {
        processor,
        mnemonic,
        op,
        shape,
        b,
        accumulator,
        controls: Controls::default(),
        sparse: false,
    };
    vec![
        case(Gfx908, "v_mfma_f32_32x32x1f32", 64, shape(32, 1, 2, Ty::F32, Out::F32), None, Agprs),
        case(Gfx908, "v_mfma_f32_32x32x2bf16", 104, shape(32, 2, 2, Ty::Bf16, Out::F32), None, Agprs),
        case(Gfx908, "v_mfma_f32_16x16x8bf16", 109, shape(16, 8, 1, Ty::Bf16, Out::F32), None, Agprs),
        case(Gfx908, "v_mfma_i32_4x4x4i8", 82, shape(4, 4, 16, Ty::I8, Out::I32), None, Agprs),
        case(Gfx90a, "v_mfma_f32_16x16x1f32", 65, shape(16, 1, 4, Ty::F32, Out::F32), None, Agprs),
        case(Gfx90a, "v_mfma_f32_4x4x1f32", 66, shape(4, 1, 16, Ty::F32, Out::F32), None, Constant(242, 0x3F80_0000)),
        case(Gfx90a, "v_mfma_f32_32x32x2f32", 68, shape(32, 2, 1, Ty::F32, Out::F32), None, Vgprs),
        case(Gfx90a, "v_mfma_f32_32x32x4f16", 72, shape(32, 4, 2, Ty::F16, Out::F32), None, Vgprs),
        case(Gfx90a, "v_mfma_f32_16x16x4f16", 73, shape(16, 4, 4, Ty::F16, Out::F32), None, Agprs),
        case(Gfx90a, "v_mfma_f32_4x4x4f16", 74, shape(4, 4, 16, Ty::F16, Out::F32), None, Vgprs),
        case(Gfx90a, "v_mfma_f32_32x32x4bf16_1k", 99, shape(32, 4, 2, Ty::Bf16, Out::F32), None, Vgprs),
        case(Gfx90a, "v_mfma_i32_32x32x4i8", 80, shape(32, 4, 2, Ty::I8, Out::I32), None, Vgprs),
        case(Gfx90a, "v_mfma_i32_32x32x8i8", 84, shape(32, 8, 1, Ty::I8, Out::I32), None, Agprs),
        case(Gfx90a, "v_mfma_f64_4x4x4f64", 111, shape(4, 4, 4, Ty::F64, Out::F64), None, Vgprs),
        case(Gfx90a, "v_mfma_f64_16x16x4f64", 110, shape(16, 4, 1, Ty::F64, Out::F64), None, Agprs),
        case(Gfx942, "v_mfma_i32_32x32x16_i8", 86, shape(32, 16, 1, Ty::I8, Out::I32), None, Vgprs),
        case(Gfx942, "v_mfma_f32_32x32x16_bf8_fp8", 117, shape(32, 16, 1, Ty::Bf8, Out::F32), Some(Ty::Fp8), Agprs),
        case(Gfx942, "v_mfma_f32_4x4x4_16b_f16", 74, shape(4, 4, 16, Ty::F16, Out::F32), None, Agprs),
        case(Gfx90a, "v_mfma_f32_16x16x4f32", 69, shape(16, 4, 1, Ty::F32, Out::F32), None, AgprMemory),
        case(Gfx90a, "v_mfma_f32_32x32x8f16", 76, shape(32, 8, 1, Ty::F16, Out::F32), None, AgprMemory),
        case(Gfx942, "v_mfma_f64_16x16x4_f64", 110, shape(16, 4, 1, Ty::F64, Out::F64), None, AgprMemory),
    ]
}

#[test]
fn hand_encoded_mfma_shapes_register_files_and_constant_c_match_the_host_reference() {
    let mut rng = Rng(0x6D66_6D61_2D68_616E);
    for case in cases() {
        assert_decodes(&case);
        let mut operands = operands(&case.shape, case.b, &mut rng);
        if let Accumulator::Constant(_, bits) = case.accumulator {
            operands.c.iter_mut().flatten().for_each(|register| *register = bits);
        }
        let d = run_case(&case, &operands).unwrap_or_else(|error| panic!("{}: {error}", case.mnemonic));
        let what = format!("{:?} {}", case.processor, case.mnemonic);
        check(&case.shape, case.b, &operands, &d, &what);
    }
}

/// CBSZ/ABID (one block of A broadcast to each group of 2^CBSZ blocks) and BLGP (B read from
/// other lanes), on the forms that have them: each control value on a multi-block and a
/// single-block form, against the host reference with the calculator's transforms.
#[test]
fn mfma_broadcast_controls_pick_the_documented_blocks_and_lanes() {
    use Processor::*;
    let mut rng = Rng(0x6362_737A);
    let mut cases = Vec::new();
    let controlled = |processor, mnemonic, op, shape, accumulator, cbsz, abid, blgp| Case {
        processor,
        mnemonic,
        op,
        shape,
        b: None,
        accumulator,
        controls: Controls { cbsz, abid, blgp },
        sparse: false,
    };
    for blgp in 0..8 {
        let (cbsz, abid) = (blgp % 5, (blgp * 7) % (1 << (blgp % 5)));
        let f32_4x4 = shape(4, 1, 16, Ty::F32, Out::F32);
        cases.push(controlled(Gfx90a, "v_mfma_f32_4x4x1f32", 66, f32_4x4, Accumulator::Vgprs, cbsz, abid, blgp));
        let f32_16x16x4 = shape(16, 4, 1, Ty::F32, Out::F32);
        cases.push(controlled(Gfx942, "v_mfma_f32_16x16x4_f32", 69, f32_16x16x4, Accumulator::Agprs, 0, 0, blgp));
    }
    let f32_32x32 = shape(32, 1, 2, Ty::F32, Out::F32);
    cases.push(controlled(Gfx908, "v_mfma_f32_32x32x1f32", 64, f32_32x32, Accumulator::Agprs, 1, 1, 3));
    let f16_16x16 = shape(16, 4, 4, Ty::F16, Out::F32);
    cases.push(controlled(Gfx90a, "v_mfma_f32_16x16x4f16", 73, f16_16x16, Accumulator::Vgprs, 2, 3, 6));
    let i8_4x4 = shape(4, 4, 16, Ty::I8, Out::I32);
    cases.push(controlled(Gfx942, "v_mfma_i32_4x4x4_16b_i8", 82, i8_4x4, Accumulator::Vgprs, 3, 5, 2));
    for case in cases {
        assert_decodes(&case);
        let operands = operands(&case.shape, case.b, &mut rng);
        let d = run_case(&case, &operands).unwrap_or_else(|error| panic!("{}: {error}", case.mnemonic));
        let what = format!("{:?} {} {:?}", case.processor, case.mnemonic, case.controls);
        check_with(&case.shape, case.b, case.controls, &operands, &d, &what);
    }
}

/// The broadcast controls (cbsz, abid, blgp) where a form has none, and a sparse MFMA's blgp or
/// non-VGPR index, are refused by name, not run as if unset.
#[test]
fn mfma_controls_and_sparse_forms_are_refused_naming_the_instruction() {
    // v_mfma_f32_16x16x4f32 v[0:3], v5, v7, v[0:3] (one block) with cbsz:1, then abid:2 (bits
    // 10:8, 14:11); v_mfma_f32_4x4x1f32 v[4:7], v2, v3, v[4:7] cbsz:1 abid:2 (an ABID past the
    // 2^CBSZ blocks); v_mfma_f64_16x16x4f64 v[0:7], v[8:9], v[10:11], v[0:7] blgp:1 (f64's
    // negation on gfx942); gfx942's v_mfma_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], v[0:3]
    // blgp:1; v_smfmac_f32_16x16x32_f16 v[0:3], v[4:5], v[6:9], v10 with blgp 1 (bits 63:61,
    // which llvm-mc-19 does not accept there), then with src2 the constant 0 (field 128).
    let cases: [(Processor, [u32; 2], &str); 7] = [
        (Processor::Gfx90a, [0xD3C5_0100, 0x0402_0F05], "v_mfma_f32_16x16x4f32"),
        (Processor::Gfx90a, [0xD3C5_1000, 0x0402_0F05], "v_mfma_f32_16x16x4f32"),
        (Processor::Gfx90a, [0xD3C2_1104, 0x0412_0702], "v_mfma_f32_4x4x1f32"),
        (Processor::Gfx90a, [0xD3EE_0000, 0x2402_1508], "v_mfma_f64_16x16x4f64"),
        (Processor::Gfx942, [0xD3CD_0000, 0x2402_0D04], "v_mfma_f32_16x16x16_f16"),
        (Processor::Gfx942, [0xD3E2_0000, 0x242A_0D04], "v_smfmac_f32_16x16x32_f16"),
        (Processor::Gfx942, [0xD3E2_0000, 0x0202_0D04], "v_smfmac_f32_16x16x32_f16"),
    ];
    for (processor, words, mnemonic) in cases {
        let bytes: Vec<u8> = words.iter().flat_map(|word| word.to_le_bytes()).collect();
        let (_, instruction) = aqueduct_isa::gfx9::decode_all(&bytes, 0, processor).next().unwrap().unwrap();
        assert_eq!(instruction.entry.mnemonic, mnemonic);
        let reason = aqueduct_isa::interp::coverage::gfx9_refusal(&instruction);
        assert!(reason.is_some(), "{mnemonic} {words:x?} runs");
    }
}

/// On gfx908 and gfx90a an MFMA with lanes EXEC disables is refused (their guides do not say
/// what it does with them).
#[test]
fn a_gfx90a_mfma_under_a_partial_exec_is_refused_naming_it() {
    let code = [
        0xBEFE_00FF,
        0xFFFF, // s_mov_b32 exec_lo, 0xffff
        0xD3C2_0004,
        0x0412_0702, // v_mfma_f32_4x4x1f32 v[4:7], v2, v3, v[4:7]
        0xBF81_0000, // s_endpgm
    ];
    let error = run_program(Processor::Gfx90a, &code, &[0; 64], 64).expect_err("a partial EXEC is refused");
    assert!(matches!(error, ExecError::Unsupported { mnemonic: "v_mfma_f32_4x4x1f32", .. }), "{error:?}");
    // The same with every lane enabled runs.
    run_program(Processor::Gfx90a, &code[2..], &[0; 64], 64).expect("a full EXEC runs");
}

// ---------------------------------------------------------------------------------------------
// gfx942's sparse MFMA (v_smfmac_*) and EXEC.
// ---------------------------------------------------------------------------------------------

/// The 4:2 index pairs the MI300 ISA guide allows (7.4, restriction 3: index0 < index1), as
/// nibbles (index0 in bits 1:0, index1 in bits 3:2).
const PAIRS: [u32; 6] = [0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b1110];

/// Random operands for a sparse `case`: A's stored half, dense B, C, and an index register of
/// valid pairs in every set (so that a wrongly chosen set reads other indices).
fn sparse_operands(case: &Case, rng: &mut Rng) -> Operands {
    let mut operands = operands(&case.shape, case.b, rng);
    operands.a.iter_mut().for_each(|registers| registers.truncate(case.a_dwords()));
    operands.index =
        (0..64).map(|_| (0..8).fold(0, |word, nibble| word | PAIRS[rng.next() as usize % 6] << (4 * nibble))).collect();
    operands
}

/// Checks a sparse MFMA's D against C + A × B with A rebuilt from the guide's definition,
/// element to register (MI300 ISA guide, 7.4.1; the calculator's CDNA3 "compression" layout):
/// A[i][k] of the dense K lies in lane M·(k / E) + i (E the dense elements a lane of B holds),
/// in K chunk c = (k % E) / 4, whose index nibble is bits [4c + 3 : 4c] of the selected set (set
/// ABID, of E bits, when CBSZ[1:0] = 0, else set 0); A[i][k] is stored element 2c if the
/// nibble's index0 is k % 4, 2c + 1 if its index1 is, and zero (no product) otherwise.
fn check_sparse(case: &Case, operands: &Operands, d: &[Vec<u32>], what: &str) -> usize {
    let shape = &case.shape;
    let e = shape.per_lane();
    let Controls { cbsz, abid, .. } = case.controls;
    let shift = if cbsz & 3 != 0 { 0 } else { (abid as usize % (32 / e)) * e };
    let mut checked = 0;
    for i in 0..shape.m {
        for j in 0..shape.m {
            let (mut exact, mut magnitude) = (0f64, 0f64);
            for k in 0..shape.k {
                let lane_a = shape.m * (k / e) + i;
                let chunk = (k % e) / 4;
                let nibble = operands.index[lane_a] >> shift >> (4 * chunk) & 0xF;
                let slot = match (nibble & 3, nibble >> 2) {
                    (first, _) if first as usize == k % 4 => 2 * chunk,
                    (_, second) if second as usize == k % 4 => 2 * chunk + 1,
                    _ => continue,
                };
                let (lane_b, eb) = shape.source_at(0, j, k);
                let b = value(b_type(shape, case.b), &operands.b[lane_b], eb);
                let product = value(shape.input, &operands.a[lane_a], slot) * b;
                exact += product;
                magnitude += product.abs();
            }
            assert_element(shape, operands, d, (0, i, j), (exact, magnitude), &format!("{what}: D[{i}][{j}]"));
            checked += 1;
        }
    }
    checked
}

/// Every gfx942 `v_smfmac_*` form (16-bit, i8 and each fp8/bf8 pairing, both sizes), D and C
/// in VGPRs or AGPRs, each index set CBSZ and ABID pick, against [`check_sparse`]; integers bit
/// for bit.
#[test]
fn gfx942_sparse_mfma_forms_match_the_guides_index_selection() {
    use Accumulator::{Agprs, Vgprs};
    let mut rng = Rng(0x736D_666D_6163);
    let sparse = |mnemonic, op, shape, b, accumulator, cbsz, abid| Case {
        processor: Processor::Gfx942,
        mnemonic,
        op,
        shape,
        b,
        accumulator,
        controls: Controls { cbsz, abid, blgp: 0 },
        sparse: true,
    };
    let cases = [
        sparse("v_smfmac_f32_16x16x32_f16", 98, shape(16, 32, 1, Ty::F16, Out::F32), None, Vgprs, 0, 0),
        sparse("v_smfmac_f32_16x16x32_f16", 98, shape(16, 32, 1, Ty::F16, Out::F32), None, Agprs, 0, 3),
        sparse("v_smfmac_f32_32x32x16_f16", 100, shape(32, 16, 1, Ty::F16, Out::F32), None, Vgprs, 0, 2),
        sparse("v_smfmac_f32_16x16x32_bf16", 102, shape(16, 32, 1, Ty::Bf16, Out::F32), None, Vgprs, 1, 3),
        sparse("v_smfmac_f32_32x32x16_bf16", 104, shape(32, 16, 1, Ty::Bf16, Out::F32), None, Agprs, 0, 1),
        sparse("v_smfmac_i32_16x16x64_i8", 106, shape(16, 64, 1, Ty::I8, Out::I32), None, Vgprs, 0, 1),
        sparse("v_smfmac_i32_32x32x32_i8", 108, shape(32, 32, 1, Ty::I8, Out::I32), None, Agprs, 0, 0),
        sparse("v_smfmac_f32_16x16x64_bf8_bf8", 120, shape(16, 64, 1, Ty::Bf8, Out::F32), None, Vgprs, 0, 1),
        sparse("v_smfmac_f32_16x16x64_bf8_fp8", 121, shape(16, 64, 1, Ty::Bf8, Out::F32), Some(Ty::Fp8), Vgprs, 0, 0),
        sparse("v_smfmac_f32_16x16x64_fp8_bf8", 122, shape(16, 64, 1, Ty::Fp8, Out::F32), Some(Ty::Bf8), Agprs, 2, 1),
        sparse("v_smfmac_f32_16x16x64_fp8_fp8", 123, shape(16, 64, 1, Ty::Fp8, Out::F32), None, Vgprs, 0, 1),
        sparse("v_smfmac_f32_32x32x32_bf8_bf8", 124, shape(32, 32, 1, Ty::Bf8, Out::F32), None, Vgprs, 0, 0),
        sparse("v_smfmac_f32_32x32x32_bf8_fp8", 125, shape(32, 32, 1, Ty::Bf8, Out::F32), Some(Ty::Fp8), Vgprs, 1, 1),
        sparse("v_smfmac_f32_32x32x32_fp8_bf8", 126, shape(32, 32, 1, Ty::Fp8, Out::F32), Some(Ty::Bf8), Agprs, 0, 1),
        sparse("v_smfmac_f32_32x32x32_fp8_fp8", 127, shape(32, 32, 1, Ty::Fp8, Out::F32), None, Vgprs, 0, 1),
    ];
    let mut checked = 0;
    for case in cases {
        assert_decodes(&case);
        let operands = sparse_operands(&case, &mut rng);
        let d = run_case(&case, &operands).unwrap_or_else(|error| panic!("{}: {error}", case.mnemonic));
        checked += check_sparse(&case, &operands, &d, &format!("{} {:?}", case.mnemonic, case.controls));
    }
    assert_eq!(checked, 8 * 256 + 7 * 1024);
}

/// An index pair the guide rules out (index0 ≥ index1) fails the wave naming the instruction,
/// rather than running some guess.
#[test]
fn a_sparse_mfma_with_an_unordered_index_pair_is_refused_naming_it() {
    let case = Case {
        processor: Processor::Gfx942,
        mnemonic: "v_smfmac_f32_16x16x32_f16",
        op: 98,
        shape: shape(16, 32, 1, Ty::F16, Out::F32),
        b: None,
        accumulator: Accumulator::Vgprs,
        controls: Controls::default(),
        sparse: true,
    };
    let mut operands = sparse_operands(&case, &mut Rng(7));
    run_case(&case, &operands).expect("valid pairs run");
    // Lane 37's second nibble of set 0: index0 = index1 = 2.
    operands.index[37] = operands.index[37] & !0xF0 | 0b1010 << 4;
    let error = run_case(&case, &operands).expect_err("an unordered pair is refused");
    assert!(matches!(error, ExecError::Unsupported { mnemonic: "v_smfmac_f32_16x16x32_f16", .. }), "{error:?}");
}

/// On gfx942 an MFMA runs every lane whatever EXEC holds (MI300 ISA guide, 7.1.2: "ignores exec
/// mask ... and forces it to 1 for all threads"): with EXEC cleared to lanes 0–15 of the low
/// half, then to none, just before it (and set whole again after it for the stores), every D
/// element still matches the reference, a dense and a sparse form alike.
#[test]
fn a_gfx942_mfma_ignores_exec_and_writes_every_lane() {
    let mut rng = Rng(0x6578_6563);
    let dense = Case {
        processor: Processor::Gfx942,
        mnemonic: "v_mfma_f32_16x16x4_f32",
        op: 69,
        shape: shape(16, 4, 1, Ty::F32, Out::F32),
        b: None,
        accumulator: Accumulator::Vgprs,
        controls: Controls::default(),
        sparse: false,
    };
    let sparse = Case {
        mnemonic: "v_smfmac_f32_32x32x16_f16",
        op: 100,
        shape: shape(32, 16, 1, Ty::F16, Out::F32),
        accumulator: Accumulator::Agprs,
        sparse: true,
        ..dense
    };
    // s_mov_b32 exec_lo, 0xffff; s_mov_b64 exec, 0; then s_mov_b64 exec, -1.
    let masks: [&[u32]; 2] = [&[0xBEFE_00FF, 0xFFFF], &[0xBEFE_0180]];
    for case in [dense, sparse] {
        for mask in masks {
            let operands =
                if case.sparse { sparse_operands(&case, &mut rng) } else { operands(&case.shape, None, &mut rng) };
            let mut code = program(&case);
            let mfma = code.iter().position(|&word| word >> 16 == 0xD380 | case.op).expect("the MFMA");
            code.splice(mfma + 2..mfma + 2, [0xBEFE_01C1]);
            code.splice(mfma..mfma, mask.iter().copied());
            let d = run_with_code(&case, &operands, &code).unwrap_or_else(|error| panic!("{}: {error}", case.mnemonic));
            let what = format!("{} under EXEC {mask:x?}", case.mnemonic);
            if case.sparse {
                check_sparse(&case, &operands, &d, &what);
            } else {
                check(&case.shape, None, &operands, &d, &what);
            }
        }
    }
}
