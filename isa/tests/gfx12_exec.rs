//! The gfx12 path's reach, table-wide: every operation of the gfx1200 decoder's table, tried once
//! through `interp::coverage` (its words decoded as gfx12, translated or given its own plan, run
//! on a blank wave), either runs or is refused with a reason; the counts are printed. And the
//! matrix forms beyond `kernels_exec.rs`'s: the kernels of `tests/kernels/wmma_gfx12_sparse.c`
//! (iu4 WMMA, SWMMAC, negation and constant C), run against host references.

use std::collections::BTreeMap;

use aqueduct_codeobject::CodeObject;
use aqueduct_isa::interp::coverage::operations;
use aqueduct_isa::interp::{DecodedKernel, Dispatch, ExecError, Isa, Regions, StandaloneImage};
use aqueduct_isa::native::{self, Tier};
use aqueduct_isa::run_workgroup;

#[test]
fn every_gfx1200_table_row_runs_or_is_refused_with_a_reason() {
    let all = operations(Isa::Gfx12);
    let mut refusals: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut unprobed = Vec::new();
    let mut runs = 0;
    for operation in &all {
        if let Some(error) = &operation.probe_error {
            unprobed.push(format!("{} ({}): {error}", operation.mnemonic, operation.encoding));
        } else if operation.runs {
            runs += 1;
        } else {
            refusals
                .entry(operation.refusal.unwrap_or("translated, but the gfx11 plan refuses it"))
                .or_default()
                .push(operation.mnemonic);
        }
    }
    println!("gfx1200: {} table rows; {runs} run; {} refused:", all.len(), all.len() - runs - unprobed.len());
    for (reason, mnemonics) in &refusals {
        println!("  {} — {reason}: {}", mnemonics.len(), mnemonics.join(" "));
    }
    assert!(unprobed.is_empty(), "probe words that do not decode as their row: {unprobed:#?}");
    assert!(all.len() > 1_500 && runs > 1_000, "{} rows, {runs} run", all.len());
    // Every wave32 WMMA and SWMMAC form runs (`valu/wmma.rs`: the dense 16x16x16 ones, the iu4
    // ones, and the sparse-A ones); wave64 is refused when a wave64 wave reaches one.
    let wmma_runs = |name: &str| all.iter().any(|operation| operation.mnemonic == name && operation.runs);
    let matrix: Vec<&str> =
        all.iter().map(|operation| operation.mnemonic).filter(|name| name.contains("wmma")).collect();
    assert_eq!(matrix.len(), 22, "{matrix:?}");
    for name in matrix {
        assert!(wmma_runs(name), "{name} does not run");
    }
}

// ---------------------------------------------------------------------------------------------
// The compiled kernels of tests/kernels/wmma_gfx12_sparse.c: iu4 WMMA, SWMMAC and the modifiers
// clang folds into a WMMA, checked against host references written here from the sources that
// `valu/wmma.rs` cites (placement written register-to-element again, independently). Small
// integer values throughout, so every float result is exact and compared bit for bit.
// ---------------------------------------------------------------------------------------------

/// Waves per dispatch (each its own matrices).
const WAVES: usize = 2;

/// A buffer the kernel reaches by address: 8-byte aligned host memory.
struct Buf(Vec<u64>);

impl Buf {
    fn of(dwords: &[u32]) -> Buf {
        let mut words = vec![0u64; dwords.len().div_ceil(2).max(1)];
        for (index, &dword) in dwords.iter().enumerate() {
            words[index / 2] |= (dword as u64) << (32 * (index % 2));
        }
        Buf(words)
    }

    fn zeroed(dwords: usize) -> Buf {
        Buf::of(&vec![0; dwords])
    }

    fn dwords(&self) -> Vec<u32> {
        self.0.iter().flat_map(|&word| [word as u32, (word >> 32) as u32]).collect()
    }
}

/// Runs `symbol` of `tests/kernels/wmma_gfx12_sparse_<target>.hsaco` as `WAVES` waves of one
/// workgroup with `buffers` as its pointer arguments, on the interpreter and then on the
/// native tier where there is one (which must agree); returns the buffers' dwords after.
fn run_sparse(target: &str, symbol: &str, buffers: &[Buf]) -> Result<Vec<Vec<u32>>, ExecError> {
    run_object("wmma_gfx12_sparse", target, symbol, buffers)
}

/// [`run_sparse`] for `tests/kernels/<object>_<target>.hsaco`, whose wave size (a `-wave64`
/// target: 64) sets the workgroup's size.
fn run_object(object: &str, target: &str, symbol: &str, buffers: &[Buf]) -> Result<Vec<Vec<u32>>, ExecError> {
    let path = format!("{}/tests/kernels/{object}_{target}.hsaco", env!("CARGO_MANIFEST_DIR"));
    let lanes = if target.ends_with("-wave64") { 64 } else { 32 };
    let bytes = std::fs::read(&path).unwrap_or_else(|error| panic!("{path}: {error} (run isa/gen/test_kernels.sh)"));
    let metadata = CodeObject::parse(&bytes).expect("a code object").kernel(symbol).expect("the kernel").clone();
    let image = StandaloneImage::load(&bytes).expect("the image");
    let kernel_object = image.kernel_object(symbol).expect("the kernel descriptor");
    let explicit: Vec<_> = metadata.args.iter().filter(|arg| !arg.value_kind.is_hidden()).collect();
    assert_eq!(explicit.len(), buffers.len(), "{symbol}'s arguments");
    let before: Vec<Vec<u32>> = buffers.iter().map(Buf::dwords).collect();
    let run = |tier: Tier, buffers: &[Buf]| -> Result<(), ExecError> {
        let mut kernargs = vec![0u64; (metadata.kernarg_segment_size as usize).div_ceil(8).max(48)];
        for (arg, buffer) in explicit.iter().zip(buffers) {
            assert_eq!((arg.offset % 8, arg.size), (0, 8), "{symbol}: a pointer argument");
            kernargs[arg.offset as usize / 8] = buffer.0.as_ptr() as u64;
        }
        let mut regions = vec![image.range(), (kernargs.as_ptr() as u64, kernargs.len() as u64 * 8)];
        regions.extend(buffers.iter().map(|buffer| (buffer.0.as_ptr() as u64, buffer.0.len() as u64 * 8)));
        let memory = Regions(regions);
        let kernel = DecodedKernel::load_for(&memory, kernel_object, Isa::Gfx12)?;
        let dispatch = Dispatch {
            kernarg_address: kernargs.as_ptr() as u64,
            instruction_limit: 100_000,
            tier,
            ..Dispatch::new(&kernel, [lanes * WAVES as u32, 1, 1], [lanes as u16 * WAVES as u16, 1, 1])
        };
        run_workgroup(&dispatch, &memory, [0; 3], &mut Vec::new()).map(|_| ())
    };
    run(Tier::Interpreter, buffers)?;
    let interpreted: Vec<Vec<u32>> = buffers.iter().map(Buf::dwords).collect();
    if native::unavailable().is_none() {
        let again: Vec<Buf> = before.iter().map(|dwords| Buf::of(dwords)).collect();
        run(Tier::Native, &again).expect("the native tier runs what the interpreter ran");
        let native: Vec<Vec<u32>> = again.iter().map(Buf::dwords).collect();
        assert_eq!(native, interpreted, "{target} {symbol}: the native tier differs from the interpreter");
    }
    Ok(interpreted)
}

/// A 32-bit LCG's stream of integers in `low..=high`.
struct Rng(u64);

impl Rng {
    fn int(&mut self, low: i64, high: i64) -> i64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        low + ((self.0 >> 33) as i64).rem_euclid(high - low + 1)
    }
}

/// rows × columns of integers.
type Grid = Vec<Vec<i64>>;

fn grid(rng: &mut Rng, rows: usize, columns: usize, low: i64, high: i64) -> Grid {
    (0..rows).map(|_| (0..columns).map(|_| rng.int(low, high)).collect()).collect()
}

/// gfx12's wave32 placement, K deep (the sources in `valu/wmma.rs`): element `e` of lane `l`
/// is A[l % 16][(K/2)(l / 16) + e], B[(K/2)(l / 16) + e][l % 16], and C/D[8 (l / 16) + e][l % 16].
fn a_at(k: usize, lane: usize, e: usize) -> (usize, usize) {
    (lane % 16, k / 2 * (lane / 16) + e)
}

fn cd_at(lane: usize, e: usize) -> (usize, usize) {
    (8 * (lane / 16) + e, lane % 16)
}

/// Per-lane images (`WAVES` × 32 lanes) of `count` `bits`-wide elements, element `e` of lane `l`
/// of wave `w` being `value(w, l, e)`, packed from bit 0 up.
fn image(count: usize, bits: usize, value: impl Fn(usize, usize, usize) -> u32) -> Vec<u32> {
    let words = (count * bits).div_ceil(32);
    let mask = if bits == 32 { u32::MAX } else { (1 << bits) - 1 };
    let mut out = vec![0u32; WAVES * 32 * words];
    for w in 0..WAVES {
        for lane in 0..32 {
            for e in 0..count {
                out[(w * 32 + lane) * words + e * bits / 32] |= (value(w, lane, e) & mask) << (e * bits % 32);
            }
        }
    }
    out
}

/// Dense images of A (16 × K) and B (K × 16), `bits` wide.
fn dense(a: &[Grid], b: &[Grid], k: usize, bits: usize, encode: &dyn Fn(i64) -> u32) -> (Buf, Buf) {
    let a_image = image(k / 2, bits, |w, lane, e| {
        let (row, kk) = a_at(k, lane, e);
        encode(a[w][row][kk])
    });
    (Buf::of(&a_image), dense_b(b, k, bits, encode))
}

/// B's image (K × 16), `bits` wide: B's (k, column) sits where A's (column, k) does.
fn dense_b(b: &[Grid], k: usize, bits: usize, encode: &dyn Fn(i64) -> u32) -> Buf {
    Buf::of(&image(k / 2, bits, |w, lane, e| {
        let (column, kk) = a_at(k, lane, e);
        encode(b[w][kk][column])
    }))
}

/// C's image, 32 or 16 bits an element.
fn c_image(c: &[Grid], bits: usize, encode: &dyn Fn(i64) -> u32) -> Buf {
    Buf::of(&image(8, bits, |w, lane, e| {
        let (row, column) = cd_at(lane, e);
        encode(c[w][row][column])
    }))
}

/// C + A × B, exactly.
fn matmul(a: &Grid, b: &Grid, c: &Grid) -> Grid {
    (0..16)
        .map(|r| (0..16).map(|j| c[r][j] + (0..a[0].len()).map(|k| a[r][k] * b[k][j]).sum::<i64>()).collect())
        .collect()
}

/// Checks output `which` of `of` per lane (D images `words` dwords each) against `want`.
fn check(d: &[u32], of: usize, which: usize, bits: usize, want: &[Grid], decode: &dyn Fn(u32) -> i64, what: &str) {
    let words = 8 * bits / 32;
    for (w, want) in want.iter().enumerate() {
        for lane in 0..32 {
            for e in 0..8 {
                let (row, column) = cd_at(lane, e);
                let word = d[((w * 32 + lane) * of + which) * words + e * bits / 32];
                let got = decode(if bits == 32 { word } else { (word >> (16 * (e % 2))) & 0xFFFF });
                assert_eq!(got, want[row][column], "{what}: wave {w} D[{row}][{column}]");
            }
        }
    }
}

/// A 2:4-sparse A (16 × K): in each group of 4 K of a row, the two positions `positions` gives
/// (p0 < p1) hold values, the rest zero; also its compressed image and index fields (field `e`,
/// bits 2e and 2e + 1, is compressed element `e`'s position in its group: composable_kernel's
/// `compress_a_impl`).
struct Sparse {
    dense: Vec<Grid>,
    values: Vec<Vec<Vec<i64>>>,
    fields: Vec<Vec<u32>>,
}

fn sparse(rng: &mut Rng, k: usize, low: i64, high: i64) -> Sparse {
    let pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)];
    let (mut dense, mut values, mut fields) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..WAVES {
        let mut a = vec![vec![0i64; k]; 16];
        let mut lane_values = vec![vec![0i64; k / 4]; 32];
        let mut lane_fields = vec![0u32; 32];
        for lane in 0..32 {
            for e in 0..k / 4 {
                let (p0, p1) = pairs[rng.int(0, 5) as usize];
                if e % 2 == 1 {
                    continue;
                }
                for (slot, position) in [p0, p1].into_iter().enumerate() {
                    let value = rng.int(low, high);
                    let kk = k / 2 * (lane / 16) + 4 * (e / 2) + position;
                    a[lane % 16][kk] = value;
                    lane_values[lane][e + slot] = value;
                    lane_fields[lane] |= (position as u32) << (2 * (e + slot));
                }
            }
        }
        dense.push(a);
        values.push(lane_values);
        fields.push(lane_fields);
    }
    Sparse { dense, values, fields }
}

/// The compressed A's image, `bits` wide.
fn compressed(a: &Sparse, k: usize, bits: usize, encode: &dyn Fn(i64) -> u32) -> Buf {
    Buf::of(&image(k / 4, bits, |w, lane, e| encode(a.values[w][lane][e])))
}

/// The index image: `low`'s fields in bits 15:0 and `high`'s in 31:16 (K = 32), or `low`'s 32.
fn index(low: &Sparse, high: Option<&Sparse>) -> Buf {
    Buf::of(&image(1, 32, |w, lane, _| low.fields[w][lane] | high.map_or(0, |high| high.fields[w][lane] << 16)))
}

fn f16_bits(x: i64) -> u32 {
    half::f16::from_f64(x as f64).to_bits() as u32
}

fn bf16_bits(x: i64) -> u32 {
    half::bf16::from_f64(x as f64).to_bits() as u32
}

fn f32_bits(x: i64) -> u32 {
    (x as f32).to_bits()
}

/// An OCP FP8 byte (E4M3: 4 exponent bits, bias 7; E5M2: 5, bias 15) of an integer |x| <= 8.
fn fp8(x: i64, exponent_bits: u32) -> u32 {
    let mantissa_bits = 7 - exponent_bits;
    let sign = if x < 0 { 0x80 } else { 0 };
    let magnitude = x.unsigned_abs() as u32;
    if magnitude == 0 {
        return sign;
    }
    let exponent = 31 - magnitude.leading_zeros();
    let mantissa = (magnitude << mantissa_bits >> exponent) & ((1 << mantissa_bits) - 1);
    sign | (exponent + (1 << (exponent_bits - 1)) - 1) << mantissa_bits | mantissa
}

fn from_f32(word: u32) -> i64 {
    let value = f32::from_bits(word);
    assert_eq!(value.fract(), 0.0, "{value} is not an integer");
    value as i64
}

fn from_f16(bits: u32) -> i64 {
    from_f32(half::f16::from_bits(bits as u16).to_f32().to_bits())
}

fn from_bf16(bits: u32) -> i64 {
    from_f32(half::bf16::from_bits(bits as u16).to_f32().to_bits())
}

/// C values that make clamp saturate in some elements.
fn near_limits(rng: &mut Rng) -> Vec<Grid> {
    (0..WAVES)
        .map(|_| {
            (0..16)
                .map(|r| {
                    (0..16)
                        .map(|j| match (r + j) % 4 {
                            0 => i64::from(i32::MAX) - rng.int(0, 100),
                            1 => i64::from(i32::MIN) + rng.int(0, 100),
                            _ => rng.int(-1 << 20, 1 << 20),
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

fn wrap(x: i64) -> i64 {
    x as i32 as i64
}

fn saturate(x: i64) -> i64 {
    x.clamp(i32::MIN.into(), i32::MAX.into())
}

#[test]
fn gfx12_iu4_wmma_matches_the_host_signed_unsigned_and_clamped() {
    let mut rng = Rng(0x1200_0004);
    for target in ["gfx1200", "gfx1201", "gfx12-generic"] {
        for (symbol, k) in [("wmma_i32_iu4", 16), ("wmma_i32_iu4_k32", 32)] {
            let a_raw: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 16, k, 0, 15)).collect();
            let b_raw: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, k, 16, 0, 15)).collect();
            let c = near_limits(&mut rng);
            let (a, b) = dense(&a_raw, &b_raw, k, 4, &|x| x as u32);
            let d = Buf::zeroed(WAVES * 32 * 2 * 8);
            let out = run_sparse(target, symbol, &[d, a, b, c_image(&c, 32, &|x| x as u32)]).unwrap();
            let signed =
                |m: &Grid| -> Grid { m.iter().map(|row| row.iter().map(|&x| (x << 60) >> 60).collect()).collect() };
            for w in 0..2 {
                // d[2i]: signed × signed, wrapping; d[2i+1]: unsigned A × (K = 16: signed,
                // K = 32: unsigned) B, clamped.
                let want: Vec<Grid> = (0..WAVES)
                    .map(|v| {
                        let (a, b) = match (w, k) {
                            (0, _) => (signed(&a_raw[v]), signed(&b_raw[v])),
                            (_, 16) => (a_raw[v].clone(), signed(&b_raw[v])),
                            _ => (a_raw[v].clone(), b_raw[v].clone()),
                        };
                        let sum = matmul(&a, &b, &c[v]);
                        sum.iter()
                            .map(|row| row.iter().map(|&x| if w == 0 { wrap(x) } else { saturate(x) }).collect())
                            .collect()
                    })
                    .collect();
                check(&out[0], 2, w, 32, &want, &|word| word as i32 as i64, &format!("{target} {symbol} d[2i+{w}]"));
            }
        }
    }
}

#[test]
fn gfx12_swmmac_uncompresses_a_by_its_index_and_matches_the_host() {
    let mut rng = Rng(0x1200_5EED);
    for target in ["gfx1200", "gfx1201", "gfx12-generic"] {
        // f32 += f16: d[2i] reads the index's low half, d[2i+1] its high half (index_key:1).
        let (low, high) = (sparse(&mut rng, 32, -8, 8), sparse(&mut rng, 32, -8, 8));
        // The high index places the same compressed values: only the positions differ.
        let high = Sparse { dense: relocate(&low, &high, 32), values: low.values.clone(), fields: high.fields };
        let b: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 32, 16, -8, 8)).collect();
        let c: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 16, 16, -3000, 3000)).collect();
        let b_image = dense_b(&b, 32, 16, &f16_bits);
        let args = [
            Buf::zeroed(WAVES * 32 * 2 * 8),
            compressed(&low, 32, 16, &f16_bits),
            b_image,
            c_image(&c, 32, &f32_bits),
            index(&low, Some(&high)),
        ];
        let out = run_sparse(target, "swmmac_f32_f16", &args).unwrap();
        for (which, a) in [&low, &high].into_iter().enumerate() {
            let want: Vec<Grid> = (0..WAVES).map(|w| matmul(&a.dense[w], &b[w], &c[w])).collect();
            check(&out[0], 2, which, 32, &want, &from_f32, &format!("{target} swmmac_f32_f16 d[2i+{which}]"));
        }

        // f16 A, then B, negated (neg_lo and neg_hi together, as clang folds `-a`).
        let b_image = dense_b(&b, 32, 16, &f16_bits);
        let args = [
            Buf::zeroed(WAVES * 32 * 2 * 8),
            compressed(&low, 32, 16, &f16_bits),
            b_image,
            c_image(&c, 32, &f32_bits),
            index(&low, None),
        ];
        let out = run_sparse(target, "swmmac_f32_f16_negated", &args).unwrap();
        let neg = |m: &Grid| -> Grid { m.iter().map(|row| row.iter().map(|&x| -x).collect()).collect() };
        let negated_a: Vec<Grid> = (0..WAVES).map(|w| matmul(&neg(&low.dense[w]), &b[w], &c[w])).collect();
        let negated_b: Vec<Grid> = (0..WAVES).map(|w| matmul(&low.dense[w], &neg(&b[w]), &c[w])).collect();
        check(&out[0], 2, 0, 32, &negated_a, &from_f32, &format!("{target} swmmac_f32_f16_negated -A"));
        check(&out[0], 2, 1, 32, &negated_b, &from_f32, &format!("{target} swmmac_f32_f16_negated -B"));

        // f32 += bf16, and the f16 and bf16 results.
        for (symbol, encode, bits, decode) in [
            ("swmmac_f32_bf16", &bf16_bits as &dyn Fn(i64) -> u32, 32, &from_f32 as &dyn Fn(u32) -> i64),
            ("swmmac_f16", &f16_bits, 16, &from_f16),
            ("swmmac_bf16", &bf16_bits, 16, &from_bf16),
        ] {
            let a = sparse(&mut rng, 32, -3, 3);
            let b: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 32, 16, -3, 3)).collect();
            let c: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 16, 16, -100, 100)).collect();
            let b_image = dense_b(&b, 32, 16, encode);
            let c_encode: &dyn Fn(i64) -> u32 = if bits == 32 { &f32_bits } else { encode };
            let args = [
                Buf::zeroed(WAVES * 32 * 8),
                compressed(&a, 32, 16, encode),
                b_image,
                c_image(&c, bits, c_encode),
                index(&a, None),
            ];
            let out = run_sparse(target, symbol, &args).unwrap();
            let want: Vec<Grid> = (0..WAVES).map(|w| matmul(&a.dense[w], &b[w], &c[w])).collect();
            check(&out[0], 1, 0, bits, &want, decode, &format!("{target} {symbol}"));
        }

        // iu8: d[2i] signed × signed; d[2i+1] unsigned A × signed B, clamped.
        let a = sparse(&mut rng, 32, -128, 127);
        let b: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 32, 16, -128, 127)).collect();
        let c = near_limits(&mut rng);
        let b_image = dense_b(&b, 32, 8, &|x| x as u32);
        let args = [
            Buf::zeroed(WAVES * 32 * 2 * 8),
            compressed(&a, 32, 8, &|x| x as u32),
            b_image,
            c_image(&c, 32, &|x| x as u32),
            index(&a, None),
        ];
        let out = run_sparse(target, "swmmac_i32_iu8", &args).unwrap();
        let unsigned = |m: &Grid| -> Grid { m.iter().map(|row| row.iter().map(|&x| x & 0xFF).collect()).collect() };
        let signed: Vec<Grid> = (0..WAVES)
            .map(|w| matmul(&a.dense[w], &b[w], &c[w]).iter().map(|r| r.iter().map(|&x| wrap(x)).collect()).collect())
            .collect();
        let clamped: Vec<Grid> = (0..WAVES)
            .map(|w| {
                matmul(&unsigned(&a.dense[w]), &b[w], &c[w])
                    .iter()
                    .map(|r| r.iter().map(|&x| saturate(x)).collect())
                    .collect()
            })
            .collect();
        check(&out[0], 2, 0, 32, &signed, &|word| word as i32 as i64, &format!("{target} swmmac_i32_iu8 signed"));
        check(&out[0], 2, 1, 32, &clamped, &|word| word as i32 as i64, &format!("{target} swmmac_i32_iu8 clamped"));

        // iu4, K = 32 and K = 64, signed.
        for (symbol, k) in [("swmmac_i32_iu4", 32), ("swmmac_i32_iu4_k64", 64)] {
            let a = sparse(&mut rng, k, -8, 7);
            let b: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, k, 16, -8, 7)).collect();
            let c: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 16, 16, -5000, 5000)).collect();
            let b_image = dense_b(&b, k, 4, &|x| x as u32);
            let args = [
                Buf::zeroed(WAVES * 32 * 8),
                compressed(&a, k, 4, &|x| x as u32),
                b_image,
                c_image(&c, 32, &|x| x as u32),
                index(&a, None),
            ];
            let out = run_sparse(target, symbol, &args).unwrap();
            let want: Vec<Grid> = (0..WAVES).map(|w| matmul(&a.dense[w], &b[w], &c[w])).collect();
            check(&out[0], 1, 0, 32, &want, &|word| word as i32 as i64, &format!("{target} {symbol}"));
        }

        // fp8/bf8: the same integers in both encodings; d[4i + j] per (A, B) type pair.
        let a = sparse(&mut rng, 32, -8, 8);
        let b: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 32, 16, -8, 8)).collect();
        let c: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 16, 16, -500, 500)).collect();
        let want: Vec<Grid> = (0..WAVES).map(|w| matmul(&a.dense[w], &b[w], &c[w])).collect();
        for (pair, (a_bits, b_bits)) in [(4, 4), (4, 5), (5, 4), (5, 5)].into_iter().enumerate() {
            let b_image = dense_b(&b, 32, 8, &|x| fp8(x, b_bits));
            let args = [
                Buf::zeroed(WAVES * 32 * 4 * 8),
                compressed(&a, 32, 8, &|x| fp8(x, a_bits)),
                b_image,
                c_image(&c, 32, &f32_bits),
                index(&a, None),
            ];
            let out = run_sparse(target, "swmmac_f32_fp8", &args).unwrap();
            check(&out[0], 4, pair, 32, &want, &from_f32, &format!("{target} swmmac_f32_fp8 pair {pair}"));
        }
    }
}

/// `high`'s positions holding `low`'s compressed values, as a dense A.
fn relocate(low: &Sparse, high: &Sparse, k: usize) -> Vec<Grid> {
    (0..WAVES)
        .map(|w| {
            let mut a = vec![vec![0i64; k]; 16];
            for lane in 0..32 {
                for e in 0..k / 4 {
                    let position = (high.fields[w][lane] >> (2 * e)) as usize & 3;
                    a[lane % 16][k / 2 * (lane / 16) + 4 * (e / 2) + position] += low.values[w][lane][e];
                }
            }
            a
        })
        .collect()
}

#[test]
fn gfx12_wmma_negation_absolute_value_and_constant_c_match_the_host() {
    let mut rng = Rng(0x1200_0E6A);
    let neg = |m: &Grid| -> Grid { m.iter().map(|row| row.iter().map(|&x| -x).collect()).collect() };
    let abs = |m: &Grid| -> Grid { m.iter().map(|row| row.iter().map(|&x| x.abs()).collect()).collect() };
    for target in ["gfx1200", "gfx1201", "gfx12-generic"] {
        let a: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 16, 16, -8, 8)).collect();
        let b: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 16, 16, -8, 8)).collect();
        let c: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 16, 16, -3000, 3000)).collect();
        let (a_image, b_image) = dense(&a, &b, 16, 16, &f16_bits);
        let out = run_sparse(
            target,
            "wmma_f32_f16_negated",
            &[Buf::zeroed(WAVES * 32 * 4 * 8), a_image, b_image, c_image(&c, 32, &f32_bits)],
        )
        .unwrap();
        // (-A) B + C, A (-B) - C, A B + |C|, A B - |C|.
        let cases: [&dyn Fn(usize) -> Grid; 4] = [
            &|w| matmul(&neg(&a[w]), &b[w], &c[w]),
            &|w| matmul(&a[w], &neg(&b[w]), &neg(&c[w])),
            &|w| matmul(&a[w], &b[w], &abs(&c[w])),
            &|w| matmul(&a[w], &b[w], &neg(&abs(&c[w]))),
        ];
        for (which, case) in cases.into_iter().enumerate() {
            let want: Vec<Grid> = (0..WAVES).map(case).collect();
            check(&out[0], 4, which, 32, &want, &from_f32, &format!("{target} wmma_f32_f16_negated d[4i+{which}]"));
        }

        // f16 C: -C and |C|.
        let a: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 16, 16, -4, 4)).collect();
        let b: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 16, 16, -4, 4)).collect();
        let c: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 16, 16, -100, 100)).collect();
        let (a_image, b_image) = dense(&a, &b, 16, 16, &f16_bits);
        let out = run_sparse(
            target,
            "wmma_f16_negated",
            &[Buf::zeroed(WAVES * 32 * 2 * 4), a_image, b_image, c_image(&c, 16, &f16_bits)],
        )
        .unwrap();
        let negated: Vec<Grid> = (0..WAVES).map(|w| matmul(&a[w], &b[w], &neg(&c[w]))).collect();
        let absolute: Vec<Grid> = (0..WAVES).map(|w| matmul(&a[w], &b[w], &abs(&c[w]))).collect();
        check(&out[0], 2, 0, 16, &negated, &from_f16, &format!("{target} wmma_f16_negated -C"));
        check(&out[0], 2, 1, 16, &absolute, &from_f16, &format!("{target} wmma_f16_negated |C|"));

        // Inline-constant C: f32 -4.0, f16 2.0, i32 -3 (the same A and B; iu8 signed).
        let a8: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 16, 16, -128, 127)).collect();
        let b8: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 16, 16, -128, 127)).collect();
        let (a8_image, b8_image) = dense(&a8, &b8, 16, 8, &|x| x as u32);
        let (a_image, b_image) = dense(&a, &b, 16, 16, &f16_bits);
        let out = run_sparse(
            target,
            "wmma_constant_c",
            &[
                Buf::zeroed(WAVES * 32 * 8),
                Buf::zeroed(WAVES * 32 * 4),
                Buf::zeroed(WAVES * 32 * 8),
                a_image,
                b_image,
                a8_image,
                b8_image,
            ],
        )
        .unwrap();
        let splat = |value: i64| -> Grid { vec![vec![value; 16]; 16] };
        let f32_want: Vec<Grid> = (0..WAVES).map(|w| matmul(&a[w], &b[w], &splat(-4))).collect();
        let f16_want: Vec<Grid> = (0..WAVES).map(|w| matmul(&a[w], &b[w], &splat(2))).collect();
        let i32_want: Vec<Grid> = (0..WAVES).map(|w| matmul(&a8[w], &b8[w], &splat(-3))).collect();
        check(&out[0], 1, 0, 32, &f32_want, &from_f32, &format!("{target} C = -4.0"));
        check(&out[1], 1, 0, 16, &f16_want, &from_f16, &format!("{target} C = 2.0 (f16)"));
        check(&out[2], 1, 0, 32, &i32_want, &|word| word as i32 as i64, &format!("{target} C = -3"));
    }
}

/// `tests/kernels/wmma_gfx12_waves.c`, built for wave32 (gfx1200, gfx1201, gfx12-generic) and
/// wave64 (gfx1200-wave64) from one source that places row-major matrices in each wave size's
/// layout: every build's D is the host's C + A × B, so the wave64 layout (AMD aiter's opus test
/// on gfx1201) and the wave32 one give the same D.
#[test]
fn gfx12_wmma_in_wave64_gives_the_wave32_d() {
    let mut rng = Rng(0x1200_0064);
    let f32_out: &dyn Fn(i64) -> u32 = &f32_bits;
    for (symbol, encode, out, bits, decode) in [
        ("wmma_f32_f16", &f16_bits as &dyn Fn(i64) -> u32, f32_out, 32, &from_f32 as &dyn Fn(u32) -> i64),
        ("wmma_f32_bf16", &bf16_bits, f32_out, 32, &from_f32),
        ("wmma_f16", &f16_bits, &f16_bits, 16, &from_f16),
        ("wmma_bf16", &bf16_bits, &bf16_bits, 16, &from_bf16),
    ] {
        let (range, c_range) = if bits == 32 { (8, 3000) } else { (3, 100) };
        let a: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 16, 16, -range, range)).collect();
        let b: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 16, 16, -range, range)).collect();
        let c: Vec<Grid> = (0..WAVES).map(|_| grid(&mut rng, 16, 16, -c_range, c_range)).collect();
        // Row-major tiles, one a wave, `bits` wide elements packed into dwords.
        let tiles = |m: &[Grid], bits: usize, encode: &dyn Fn(i64) -> u32| -> Buf {
            let values: Vec<u32> = m.iter().flat_map(|tile| tile.iter().flatten().map(|&x| encode(x))).collect();
            let per = 32 / bits;
            let dwords = values
                .chunks(per)
                .map(|chunk| {
                    chunk
                        .iter()
                        .enumerate()
                        .fold(0, |word, (i, &v)| word | (v & (u32::MAX >> (32 - bits))) << (bits * i))
                })
                .collect::<Vec<u32>>();
            Buf::of(&dwords)
        };
        let want: Vec<Vec<i64>> =
            (0..WAVES).map(|w| matmul(&a[w], &b[w], &c[w]).into_iter().flatten().collect()).collect();
        let mut results = Vec::new();
        for target in ["gfx1200", "gfx1201", "gfx12-generic", "gfx1200-wave64"] {
            let args = [
                Buf::zeroed(WAVES * 256 * bits / 32),
                tiles(&a, 16, encode),
                tiles(&b, 16, encode),
                tiles(&c, bits, out),
            ];
            let d = run_object("wmma_gfx12_waves", target, symbol, &args).unwrap().swap_remove(0);
            let got: Vec<i64> = (0..WAVES * 256)
                .map(|i| decode((d[i * bits / 32] >> (bits * i % 32)) & (u32::MAX >> (32 - bits))))
                .collect();
            for (w, want) in want.iter().enumerate() {
                assert_eq!(&got[w * 256..][..256], &want[..], "{target} {symbol}: wave {w}'s D");
            }
            results.push(d);
        }
        assert!(results.windows(2).all(|pair| pair[0] == pair[1]), "{symbol}: the builds' D images differ");
    }
}
