//! Coverage by enumeration (issue 54): every operation of the gfx11 and gfx10.3 decoder tables,
//! each with a status in `isa/coverage/<isa>.tsv`:
//! - `tested`: the interpreter runs it, and a test checks its results against the host: one of
//!   the kernel tests (the operation is in a code object they run: `isa/tests/kernels`, the device
//!   library, the demo's kernels, the soft runtime's fixtures) or a family test here, which runs
//!   each operation of the family alone on edge and random inputs against a reference;
//! - `excluded`: not run, with the reason (graphics-only, debugger or trap-handler code, what is
//!   not modelled yet).
//!
//! An operation that runs with no test checking it fails (the lists may say `untested` only for
//! the time it takes to write its test), as does any operation the lists lack or whose status
//! is wrong. `AQUEDUCT_WRITE_COVERAGE=1`
//! rewrites the lists' `tested` and `untested` lines from what is measured, keeping each
//! exclusion's reason.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use aqueduct_isa::interp::coverage::{
    CLOCK, Next, Operation, PC, Registers, Unmapped, execute, mnemonics_in, operations,
};
use aqueduct_isa::interp::{AtomicOp, Isa, Memory, MemoryFault};
use aqueduct_isa::interp::{ExecError, apply_atomic32, apply_atomic64};
use object::{Object, ObjectSection};

#[path = "coverage/memory.rs"]
mod memory;
#[path = "coverage/misc.rs"]
mod misc;
#[path = "coverage/valu.rs"]
mod valu;

const ISAS: [(Isa, &str); 2] = [(Isa::Gfx11, "gfx11"), (Isa::Gfx10_3, "gfx10.3")];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The operations in the code objects the kernel tests run, for `isa`.
fn in_kernel_tests(isa: Isa) -> BTreeSet<&'static str> {
    let mut found = BTreeSet::new();
    for dir in ["isa/tests/kernels", "builtins/prebuilt", "kernels", "cli/kernels", "soft-hsa/tests/fixtures"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let ours = match isa {
                Isa::Gfx11 => name.contains("gfx1100") || name.contains("gfx11-generic"),
                Isa::Gfx10_3 => name.contains("gfx1030") || name.contains("gfx10-3-generic"),
                Isa::Gfx9(_) => false,
                Isa::Gfx12 => name.contains("gfx1200") || name.contains("gfx1201") || name.contains("gfx12-generic"),
            };
            if !name.ends_with(".hsaco") || !ours {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            let file = object::File::parse(&*bytes).unwrap();
            let text = file.section_by_name(".text").unwrap();
            found.extend(mnemonics_in(text.data().unwrap(), isa));
        }
    }
    found
}

// ---------------------------------------------------------------------------------------------
// Running one operation.
// ---------------------------------------------------------------------------------------------

const EXEC: usize = 126;
const VCC: usize = 106;

/// Runs `operation` (its probe words: sources v0, v2, v4, destination s4/v4) on `registers`.
fn run(isa: Isa, operation: &Operation, registers: &mut Registers) -> Next {
    run_words(isa, operation, &operation.words, registers)
}

/// Runs `words`, `operation` with other operands, on `registers`.
fn run_words(isa: Isa, operation: &Operation, words: &[u32], registers: &mut Registers) -> Next {
    let mut lds = [0u8; 0];
    execute(isa, words, registers, &Unmapped, &mut lds)
        .unwrap_or_else(|error| panic!("{isa:?} {}: {error}", operation.mnemonic))
}

/// Fails with `what` and the registers that differ, if any do.
fn assert_registers(got: &Registers, want: &Registers, what: &str) {
    if got == want {
        return;
    }
    let mut differences = Vec::new();
    for (index, (g, w)) in got.sgpr.iter().zip(&want.sgpr).enumerate() {
        if g != w {
            differences.push(format!("s{index}: {g:#x}, want {w:#x}"));
        }
    }
    for (index, (g, w)) in got.vgpr.iter().zip(&want.vgpr).enumerate() {
        for lane in (0..32).filter(|&lane| g[lane] != w[lane]) {
            differences.push(format!("v{index}[{lane}]: {:#x}, want {:#x}", g[lane], w[lane]));
        }
    }
    if got.scc != want.scc {
        differences.push(format!("scc: {}, want {}", got.scc, want.scc));
    }
    if got.mode != want.mode {
        differences.push(format!("mode: {:#x}, want {:#x}", got.mode, want.mode));
    }
    differences.truncate(12);
    panic!("{what}:\n  {}", differences.join("\n  "));
}

/// The name without its encoding suffix (`_e32`, `_e64`, `_sdwa`, `_dpp`).
fn base_name(mnemonic: &str) -> &str {
    ["_e32", "_e64", "_sdwa", "_dpp"].iter().find_map(|suffix| mnemonic.strip_suffix(suffix)).unwrap_or(mnemonic)
}

/// A small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

// ---------------------------------------------------------------------------------------------
// Family: compares (`v_cmp_*`, `v_cmpx_*`, every type, every encoding).
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Type {
    F16,
    F32,
    F64,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
}

impl Type {
    fn of(name: &str) -> Option<Type> {
        Some(match name {
            "f16" => Type::F16,
            "f32" => Type::F32,
            "f64" => Type::F64,
            "i16" => Type::I16,
            "u16" => Type::U16,
            "i32" => Type::I32,
            "u32" => Type::U32,
            "i64" => Type::I64,
            "u64" => Type::U64,
            _ => return None,
        })
    }

    fn wide(self) -> bool {
        matches!(self, Type::F64 | Type::I64 | Type::U64)
    }

    /// Edge values as raw bits of the type.
    fn edges(self) -> Vec<u64> {
        match self {
            Type::F16 => vec![
                0, 0x8000, 1, 0x8001, 0x03FF, 0x0400, 0x3C00, 0xBC00, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE00,
            ],
            Type::F32 => [
                0.0f32,
                -0.0,
                f32::from_bits(1),
                -f32::MIN_POSITIVE,
                1.0,
                -1.0,
                2.5,
                f32::MAX,
                f32::INFINITY,
                f32::NEG_INFINITY,
            ]
            .iter()
            .map(|value| value.to_bits() as u64)
            .chain([0x7FC0_0000, 0x7F80_0001, 0xFFC0_0000])
            .collect(),
            Type::F64 => [
                0.0f64,
                -0.0,
                f64::from_bits(1),
                -f64::MIN_POSITIVE,
                1.0,
                -1.0,
                2.5,
                f64::MAX,
                f64::INFINITY,
                f64::NEG_INFINITY,
            ]
            .iter()
            .map(|value| value.to_bits())
            .chain([0x7FF8_0000_0000_0000, 0x7FF0_0000_0000_0001])
            .collect(),
            Type::I16 | Type::U16 => vec![0, 1, 0x7FFF, 0x8000, 0xFFFF, 0x1234],
            Type::I32 | Type::U32 => vec![0, 1, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0x1234_5678],
            Type::I64 | Type::U64 => vec![0, 1, i64::MAX as u64, 1 << 63, u64::MAX, 0x1234_5678_9ABC_DEF0, 0xFFFF_FFFF],
        }
    }

    fn float(self, bits: u64) -> f64 {
        match self {
            Type::F16 => half::f16::from_bits(bits as u16).to_f64(),
            Type::F32 => f32::from_bits(bits as u32) as f64,
            _ => f64::from_bits(bits),
        }
    }

    /// The class bit `v_cmp_class` tests (RDNA3 ISA guide: 0 signaling NaN, 1 quiet NaN, 2–5
    /// negative infinity, normal, subnormal, zero, 6–9 positive zero, subnormal, normal,
    /// infinity).
    fn class(self, bits: u64) -> u32 {
        let (exponent_bits, fraction_bits, value_bits) = match self {
            Type::F16 => (5, 10, bits & 0xFFFF),
            Type::F32 => (8, 23, bits & 0xFFFF_FFFF),
            _ => (11, 52, bits),
        };
        let negative = value_bits >> (exponent_bits + fraction_bits) & 1 == 1;
        let exponent = (value_bits >> fraction_bits) & ((1 << exponent_bits) - 1);
        let fraction = value_bits & ((1 << fraction_bits) - 1);
        let all_ones = (1 << exponent_bits) - 1;
        if exponent == all_ones && fraction != 0 {
            return if fraction >> (fraction_bits - 1) == 1 { 1 } else { 0 };
        }
        let kind = match (exponent, fraction) {
            (e, _) if e == all_ones => 0, // infinity
            (0, 0) => 3,                  // zero
            (0, _) => 2,                  // subnormal
            _ => 1,                       // normal
        };
        if negative { 2 + kind } else { 9 - kind }
    }

    // The ordered and unordered predicates as the ISA guide spells them: with NaNs, `x < y || x > y`
    // is not `x != y`, and `!(x >= y)` is not `x < y`.
    #[allow(clippy::double_comparisons, clippy::neg_cmp_op_on_partial_ord)]
    fn compare(self, condition: &str, a: u64, b: u64) -> Option<bool> {
        if matches!(self, Type::F16 | Type::F32 | Type::F64) {
            let (x, y) = (self.float(a), self.float(b));
            let unordered = x.is_nan() || y.is_nan();
            return Some(match condition {
                "f" => false,
                "lt" => x < y,
                "eq" => x == y,
                "le" => x <= y,
                "gt" => x > y,
                "lg" => x < y || x > y,
                "ge" => x >= y,
                "o" => !unordered,
                "u" => unordered,
                "nge" => !(x >= y),
                "nlg" => !(x < y || x > y),
                "ngt" => !(x > y),
                "nle" => !(x <= y),
                "neq" => !(x == y),
                "nlt" => !(x < y),
                "t" | "tru" => true,
                _ => return None,
            });
        }
        let (x, y): (i128, i128) = match self {
            Type::I16 => (a as u16 as i16 as i128, b as u16 as i16 as i128),
            Type::U16 => (a as u16 as i128, b as u16 as i128),
            Type::I32 => (a as u32 as i32 as i128, b as u32 as i32 as i128),
            Type::U32 => (a as u32 as i128, b as u32 as i128),
            Type::I64 => (a as i64 as i128, b as i64 as i128),
            _ => (a as i128, b as i128),
        };
        Some(match condition {
            "f" => false,
            "lt" => x < y,
            "eq" => x == y,
            "le" => x <= y,
            "gt" => x > y,
            "ne" => x != y,
            "ge" => x >= y,
            "t" => true,
            _ => return None,
        })
    }
}

/// Puts 64-bit `value` (or its low half) in lane `lane` of VGPR `register` (and the next).
fn put(registers: &mut Registers, register: usize, lane: usize, value: u64, wide: bool) {
    registers.vgpr[register][lane] = value as u32;
    if wide {
        registers.vgpr[register + 1][lane] = (value >> 32) as u32;
    }
}

/// Checks a compare operation; `None` if `mnemonic` is not one.
fn check_compare(isa: Isa, operation: &Operation) -> Option<()> {
    let name = base_name(operation.mnemonic);
    let (exec_form, rest) = match name.strip_prefix("v_cmpx_") {
        Some(rest) => (true, rest),
        None => (false, name.strip_prefix("v_cmp_")?),
    };
    let (condition, type_name) = rest.rsplit_once('_')?;
    let kind = Type::of(type_name)?;
    let edges = kind.edges();
    let mut rng = Rng(0xC0 ^ operation.words[0] as u64);
    // Every pair of edges, then random values, 32 lanes a round.
    let mut pairs: Vec<(u64, u64)> = edges.iter().flat_map(|&a| edges.iter().map(move |&b| (a, b))).collect();
    for _ in 0..64 {
        let mask = if kind.wide() {
            u64::MAX
        } else if matches!(kind, Type::F16 | Type::I16 | Type::U16) {
            0xFFFF
        } else {
            0xFFFF_FFFF
        };
        pairs.push((rng.next() & mask, rng.next() & mask));
    }
    if condition == "class" {
        // src1 is the class mask: one class bit, then random masks.
        pairs = edges.iter().flat_map(|&a| (0..10).map(move |bit| (a, 1u64 << bit))).collect();
        pairs.extend(edges.iter().map(|&a| (a, rng.next() & 0x3FF)));
    }
    for chunk in pairs.chunks(32) {
        for exec in [u32::MAX, 0x5A5A_A5A5] {
            let mut registers = Registers::new(8);
            registers.sgpr[EXEC] = exec;
            for (lane, &(a, b)) in chunk.iter().enumerate() {
                put(&mut registers, 0, lane, a, kind.wide());
                put(&mut registers, 2, lane, b, kind.wide() && condition != "class");
            }
            run(isa, operation, &mut registers);
            let mut want = 0u32;
            for (lane, &(a, b)) in chunk.iter().enumerate() {
                let bit = if condition == "class" {
                    (b as u32 >> kind.class(a)) & 1 == 1
                } else {
                    kind.compare(condition, a, b).unwrap_or_else(|| panic!("{}: no reference", operation.mnemonic))
                };
                want |= (bit as u32) << lane;
            }
            want &= exec & (u32::MAX >> (32 - chunk.len()));
            let got = if exec_form {
                registers.sgpr[EXEC]
            } else if operation.encoding.starts_with("Vop3") {
                registers.sgpr[4]
            } else {
                registers.sgpr[VCC]
            } & (u32::MAX >> (32 - chunk.len()));
            assert_eq!(got, want, "{isa:?} {} (exec {exec:#x}) over {chunk:x?}", operation.mnemonic);
        }
    }
    Some(())
}

// ---------------------------------------------------------------------------------------------
// Family: scalar ALU (SOP2, SOP1, SOPC, SOPK), against the RDNA3 ISA guide's pseudocode.
// ---------------------------------------------------------------------------------------------

/// gfx10.3's names for the operations gfx11 renamed.
fn gfx11_name(name: &str) -> String {
    let renamed = [
        ("s_andn2_saveexec", "s_and_not1_saveexec"),
        ("s_orn2_saveexec", "s_or_not1_saveexec"),
        ("s_andn1_saveexec", "s_and_not0_saveexec"),
        ("s_orn1_saveexec", "s_or_not0_saveexec"),
        ("s_andn1_wrexec", "s_and_not0_wrexec"),
        ("s_andn2_wrexec", "s_and_not1_wrexec"),
        ("s_andn2_", "s_and_not1_"),
        ("s_orn2_", "s_or_not1_"),
        ("s_ff1_i32_b32", "s_ctz_i32_b32"),
        ("s_ff1_i32_b64", "s_ctz_i32_b64"),
        ("s_flbit_i32_b32", "s_clz_i32_u32"),
        ("s_flbit_i32_b64", "s_clz_i32_u64"),
        ("s_flbit_i32_i64", "s_cls_i32_i64"),
        ("s_flbit_i32", "s_cls_i32"),
    ];
    for (old, new) in renamed {
        if let Some(rest) = name.strip_prefix(old) {
            return format!("{new}{rest}");
        }
    }
    name.to_owned()
}

/// What a scalar operation computes: its destination (`None`: it writes none) and SCC (`None`:
/// unchanged), from the sources `a`, `b` (64-bit reads), SCC, EXEC and the destination's old
/// value. `None` for an operation not in the family.
#[allow(clippy::type_complexity)]
fn scalar_reference(name: &str, a: u64, b: u64, scc: bool, exec: u64, old: u64) -> Option<(Option<u64>, Option<bool>)> {
    let (a32, b32) = (a as u32, b as u32);
    let nz32 = |value: u32| (Some(value as u64), Some(value != 0));
    let nz64 = |value: u64| (Some(value), Some(value != 0));
    let only = |value: u64| (Some(value), None);
    let set = |flag: bool| (None, Some(flag));
    let cls = |value: u64, bits: u32| {
        let value = value << (64 - bits);
        let sign = (value >> 63) & 1;
        let count = (1..bits).take_while(|bit| (value >> (63 - bit)) & 1 == sign).count() as u32;
        if count == bits - 1 { u32::MAX as u64 } else { count as u64 }
    };
    let field = |value: u64, offset: u64, size: u64, bits: u32, signed: bool| {
        let shifted = value >> offset;
        let masked = if size >= 64 { shifted } else { shifted & ((1u64 << size) - 1) };
        let extended = if signed && size > 0 && size < 64 {
            ((masked << (64 - size)) as i64 >> (64 - size)) as u64
        } else {
            masked
        };
        if bits == 32 { extended as u32 as u64 } else { extended }
    };
    let quads = |value: u64, count: u32, whole: bool| {
        (0..count).fold(0u64, |out, quad| {
            let any = (value >> (4 * quad)) & 0xF != 0;
            out | if whole { (any as u64 * 0xF) << (4 * quad) } else { (any as u64) << quad }
        })
    };
    let saveexec = |op: &str, source: u64, exec: u64| match op {
        "and" => source & exec,
        "or" => source | exec,
        "xor" => source ^ exec,
        "nand" => !(source & exec),
        "nor" => !(source | exec),
        "xnor" => !(source ^ exec),
        "and_not0" => !source & exec,
        "or_not0" => !source | exec,
        "and_not1" => source & !exec,
        _ => source | !exec,
    };
    Some(match name {
        "s_add_u32" => {
            let sum = a32 as u64 + b32 as u64;
            (Some(sum as u32 as u64), Some(sum >> 32 != 0))
        }
        "s_sub_u32" => (Some(a32.wrapping_sub(b32) as u64), Some(b32 > a32)),
        "s_add_i32" => {
            let sum = a32.wrapping_add(b32);
            (Some(sum as u64), Some(a32 >> 31 == b32 >> 31 && a32 >> 31 != sum >> 31))
        }
        "s_sub_i32" => {
            let difference = a32.wrapping_sub(b32);
            (Some(difference as u64), Some(a32 >> 31 != b32 >> 31 && a32 >> 31 != difference >> 31))
        }
        "s_addc_u32" => {
            let sum = a32 as u64 + b32 as u64 + scc as u64;
            (Some(sum as u32 as u64), Some(sum >> 32 != 0))
        }
        "s_subb_u32" => {
            (Some(a32.wrapping_sub(b32).wrapping_sub(scc as u32) as u64), Some(b32 as u64 + scc as u64 > a32 as u64))
        }
        "s_absdiff_i32" => nz32((a32 as i32).wrapping_sub(b32 as i32).wrapping_abs() as u32),
        "s_lshl_b32" => nz32(a32 << (b32 & 31)),
        "s_lshl_b64" => nz64(a << (b32 & 63)),
        "s_lshr_b32" => nz32(a32 >> (b32 & 31)),
        "s_lshr_b64" => nz64(a >> (b32 & 63)),
        "s_ashr_i32" => nz32(((a32 as i32) >> (b32 & 31)) as u32),
        "s_ashr_i64" => nz64(((a as i64) >> (b32 & 63)) as u64),
        "s_lshl1_add_u32" | "s_lshl2_add_u32" | "s_lshl3_add_u32" | "s_lshl4_add_u32" => {
            let shift = name.as_bytes()[6] - b'0';
            let sum = ((a32 as u64) << shift) + b32 as u64;
            (Some(sum as u32 as u64), Some(sum >> 32 != 0))
        }
        "s_min_i32" => {
            let first = (a32 as i32) < (b32 as i32);
            (Some(if first { a32 } else { b32 } as u64), Some(first))
        }
        "s_min_u32" => (Some(a32.min(b32) as u64), Some(a32 < b32)),
        "s_max_i32" => {
            let first = (a32 as i32) >= (b32 as i32);
            (Some(if first { a32 } else { b32 } as u64), Some(first))
        }
        "s_max_u32" => (Some(a32.max(b32) as u64), Some(a32 >= b32)),
        "s_and_b32" => nz32(a32 & b32),
        "s_or_b32" => nz32(a32 | b32),
        "s_xor_b32" => nz32(a32 ^ b32),
        "s_nand_b32" => nz32(!(a32 & b32)),
        "s_nor_b32" => nz32(!(a32 | b32)),
        "s_xnor_b32" => nz32(!(a32 ^ b32)),
        "s_and_not1_b32" => nz32(a32 & !b32),
        "s_or_not1_b32" => nz32(a32 | !b32),
        "s_and_b64" => nz64(a & b),
        "s_or_b64" => nz64(a | b),
        "s_xor_b64" => nz64(a ^ b),
        "s_nand_b64" => nz64(!(a & b)),
        "s_nor_b64" => nz64(!(a | b)),
        "s_xnor_b64" => nz64(!(a ^ b)),
        "s_and_not1_b64" => nz64(a & !b),
        "s_or_not1_b64" => nz64(a | !b),
        "s_bfe_u32" => nz32(field(a32 as u64, (b32 & 31) as u64, ((b32 >> 16) & 0x7F) as u64, 32, false) as u32),
        "s_bfe_i32" => nz32(field(a32 as u64, (b32 & 31) as u64, ((b32 >> 16) & 0x7F) as u64, 32, true) as u32),
        "s_bfe_u64" => nz64(field(a, (b32 & 63) as u64, ((b32 >> 16) & 0x7F) as u64, 64, false)),
        "s_bfe_i64" => nz64(field(a, (b32 & 63) as u64, ((b32 >> 16) & 0x7F) as u64, 64, true)),
        "s_bfm_b32" => only((((1u64 << (a32 & 31)) - 1) << (b32 & 31)) as u32 as u64),
        "s_bfm_b64" => only(((1u128 << (a32 & 63)) - 1).wrapping_shl(b32 & 63) as u64),
        "s_mul_i32" => only(a32.wrapping_mul(b32) as u64),
        "s_mul_hi_u32" => only((a32 as u64 * b32 as u64) >> 32),
        "s_mul_hi_i32" => only(((a32 as i32 as i64 * b32 as i32 as i64) >> 32) as u32 as u64),
        "s_cselect_b32" => only(if scc { a32 } else { b32 } as u64),
        "s_cselect_b64" => only(if scc { a } else { b }),
        "s_pack_ll_b32_b16" => only((a32 & 0xFFFF | b32 << 16) as u64),
        "s_pack_lh_b32_b16" => only((a32 & 0xFFFF | b32 & 0xFFFF_0000) as u64),
        "s_pack_hh_b32_b16" => only((a32 >> 16 | b32 & 0xFFFF_0000) as u64),
        "s_pack_hl_b32_b16" => only((a32 >> 16 | b32 << 16) as u64),
        // SOPC.
        "s_cmp_eq_i32" | "s_cmp_eq_u32" => set(a32 == b32),
        "s_cmp_lg_i32" | "s_cmp_lg_u32" => set(a32 != b32),
        "s_cmp_gt_i32" => set(a32 as i32 > b32 as i32),
        "s_cmp_ge_i32" => set(a32 as i32 >= b32 as i32),
        "s_cmp_lt_i32" => set((a32 as i32) < b32 as i32),
        "s_cmp_le_i32" => set(a32 as i32 <= b32 as i32),
        "s_cmp_gt_u32" => set(a32 > b32),
        "s_cmp_ge_u32" => set(a32 >= b32),
        "s_cmp_lt_u32" => set(a32 < b32),
        "s_cmp_le_u32" => set(a32 <= b32),
        "s_cmp_eq_u64" => set(a == b),
        "s_cmp_lg_u64" => set(a != b),
        "s_bitcmp0_b32" => set((a32 >> (b32 & 31)) & 1 == 0),
        "s_bitcmp1_b32" => set((a32 >> (b32 & 31)) & 1 == 1),
        "s_bitcmp0_b64" => set((a >> (b32 & 63)) & 1 == 0),
        "s_bitcmp1_b64" => set((a >> (b32 & 63)) & 1 == 1),
        // SOP1.
        "s_mov_b32" => only(a32 as u64),
        "s_mov_b64" => only(a),
        "s_cmov_b32" => only(if scc { a32 as u64 } else { old as u32 as u64 }),
        "s_cmov_b64" => only(if scc { a } else { old }),
        "s_not_b32" => nz32(!a32),
        "s_not_b64" => nz64(!a),
        "s_wqm_b32" => nz32(quads(a32 as u64, 8, true) as u32),
        "s_wqm_b64" => nz64(quads(a, 16, true)),
        "s_quadmask_b32" => nz32(quads(a32 as u64, 8, false) as u32),
        "s_quadmask_b64" => nz64(quads(a, 16, false)),
        "s_brev_b32" => only(a32.reverse_bits() as u64),
        "s_brev_b64" => only(a.reverse_bits()),
        "s_bcnt0_i32_b32" => nz32(a32.count_zeros()),
        "s_bcnt0_i32_b64" => nz32(a.count_zeros()),
        "s_bcnt1_i32_b32" => nz32(a32.count_ones()),
        "s_bcnt1_i32_b64" => nz32(a.count_ones()),
        "s_ctz_i32_b32" => only(if a32 == 0 { u32::MAX } else { a32.trailing_zeros() } as u64),
        "s_ctz_i32_b64" => only(if a == 0 { u32::MAX } else { a.trailing_zeros() } as u64),
        "s_clz_i32_u32" => only(if a32 == 0 { u32::MAX } else { a32.leading_zeros() } as u64),
        "s_clz_i32_u64" => only(if a == 0 { u32::MAX } else { a.leading_zeros() } as u64),
        "s_cls_i32" => only(cls(a32 as u64, 32)),
        "s_cls_i32_i64" => only(cls(a, 64)),
        "s_sext_i32_i8" => only(a32 as i8 as i32 as u32 as u64),
        "s_sext_i32_i16" => only(a32 as i16 as i32 as u32 as u64),
        "s_bitset0_b32" => only((old as u32 & !(1 << (a32 & 31))) as u64),
        "s_bitset1_b32" => only((old as u32 | 1 << (a32 & 31)) as u64),
        "s_bitset0_b64" => only(old & !(1 << (a32 & 63))),
        "s_bitset1_b64" => only(old | 1 << (a32 & 63)),
        "s_bitreplicate_b64_b32" => {
            only((0..32).fold(0, |out, bit| out | (((a32 as u64 >> bit) & 1) * 3) << (2 * bit)))
        }
        "s_abs_i32" => nz32((a32 as i32).wrapping_abs() as u32),
        _ => {
            let (op, width) = name.strip_prefix("s_")?.rsplit_once("_saveexec_b").or(None)?;
            let wide = width == "64";
            let exec = if wide { exec } else { exec as u32 as u64 };
            let source = if wide { a } else { a32 as u64 };
            let value = saveexec(op, source, exec);
            let value = if wide { value } else { value as u32 as u64 };
            // The destination gets EXEC as it was; EXEC the result (checked by the caller).
            return Some((Some(exec), Some(value != 0)));
        }
    })
}

/// The new EXEC a `saveexec` or `wrexec` operation leaves.
fn exec_after(name: &str, a: u64, exec: u64) -> Option<u64> {
    let rest = name.strip_prefix("s_")?;
    let (op, width, _) = if let Some((op, width)) = rest.rsplit_once("_saveexec_b") {
        (op, width, false)
    } else if let Some((op, width)) = rest.rsplit_once("_wrexec_b") {
        (op, width, true)
    } else {
        return None;
    };
    let wide = width == "64";
    let (source, exec) = if wide { (a, exec) } else { (a as u32 as u64, exec as u32 as u64) };
    let value = match op {
        "and" => source & exec,
        "or" => source | exec,
        "xor" => source ^ exec,
        "nand" => !(source & exec),
        "nor" => !(source | exec),
        "xnor" => !(source ^ exec),
        "and_not0" => !source & exec,
        "or_not0" => !source | exec,
        "and_not1" => source & !exec,
        "or_not1" => source | !exec,
        _ => return None,
    };
    Some(if wide { value } else { value as u32 as u64 })
}

/// Scalar source values: edges of each width, then random.
fn scalar_values(rng: &mut Rng) -> Vec<u64> {
    let mut values = vec![
        0,
        1,
        2,
        31,
        32,
        63,
        0x7FFF_FFFF,
        0x8000_0000,
        0xFFFF_FFFF,
        0x1_0000_0000,
        u64::MAX,
        1 << 63,
        0x0010_0005,
        0x0020_0008,
    ];
    values.extend((0..12).map(|_| rng.next()));
    values.extend((0..4).map(|_| rng.next() & 0x003F_003F));
    values
}

/// Checks a SOP2, SOP1 or SOPC operation over pairs of sources; `None` if not in the family.
fn check_scalar(isa: Isa, operation: &Operation) -> Option<()> {
    if !matches!(operation.encoding.as_str(), "Sop2" | "Sop1" | "Sopc") {
        return None;
    }
    let name = gfx11_name(operation.mnemonic);
    let wrexec = name.contains("_wrexec_");
    scalar_reference(&name, 0, 0, false, 0, 0).or(if wrexec { Some((None, None)) } else { None })?;
    let wide_destination = name.ends_with("_b64") && !name.starts_with("s_cmp") && !name.starts_with("s_bitcmp")
        || name.ends_with("_u64")
            && !name.starts_with("s_cmp")
            && !name.starts_with("s_clz")
            && !name.starts_with("s_bcnt")
        || name == "s_bfe_i64"
        || name == "s_ashr_i64"
        || name == "s_bitreplicate_b64_b32";
    let wide_destination = wide_destination && !name.starts_with("s_bcnt") && !name.starts_with("s_ctz");
    let mut rng = Rng(0x5CA1 ^ operation.words[0] as u64);
    let values = scalar_values(&mut rng);
    for (index, &a) in values.iter().enumerate() {
        for &b in values.iter().skip(index % 3).step_by(3) {
            for scc in [false, true] {
                let exec = rng.next();
                let old = rng.next();
                let mut registers = Registers::new(8);
                registers.sgpr[0] = a as u32;
                registers.sgpr[1] = (a >> 32) as u32;
                registers.sgpr[2] = b as u32;
                registers.sgpr[3] = (b >> 32) as u32;
                registers.sgpr[4] = old as u32;
                registers.sgpr[5] = (old >> 32) as u32;
                registers.sgpr[EXEC] = exec as u32;
                registers.sgpr[EXEC + 1] = (exec >> 32) as u32;
                registers.scc = scc;
                let before = registers.clone();
                run(isa, operation, &mut registers);
                let what =
                    format!("{isa:?} {} a={a:#x} b={b:#x} scc={scc} exec={exec:#x} old={old:#x}", operation.mnemonic);
                let destination = registers.sgpr[4] as u64 | (registers.sgpr[5] as u64) << 32;
                let mut expected = before.clone();
                if let Some(new_exec) = exec_after(&name, a, exec) {
                    let wide = name.ends_with("_b64");
                    let old_exec = if wide { exec } else { exec as u32 as u64 };
                    let written = if wrexec { new_exec } else { old_exec };
                    expected.sgpr[4] = written as u32;
                    if wide {
                        expected.sgpr[5] = (written >> 32) as u32;
                    }
                    expected.sgpr[EXEC] = new_exec as u32;
                    if wide {
                        expected.sgpr[EXEC + 1] = (new_exec >> 32) as u32;
                    }
                    expected.scc = new_exec != 0;
                    assert_registers(&registers, &expected, &what);
                    continue;
                }
                let (value, flag) = scalar_reference(&name, a, b, scc, exec, old).unwrap();
                if let Some(value) = value {
                    expected.sgpr[4] = value as u32;
                    if wide_destination {
                        expected.sgpr[5] = (value >> 32) as u32;
                    }
                }
                if let Some(flag) = flag {
                    expected.scc = flag;
                }
                assert_registers(&registers, &expected, &format!("{what}: destination {destination:#x}"));
            }
        }
    }
    Some(())
}

// ---------------------------------------------------------------------------------------------
// Family: SOPK, SOPP and scalar memory.
// ---------------------------------------------------------------------------------------------

/// Host bytes an instruction reaches at their own address (reads, writes and atomics, plain).
struct HostBytes(std::cell::UnsafeCell<Vec<u8>>);

// SAFETY: one test thread uses each; `execute` runs on the caller's thread.
unsafe impl Sync for HostBytes {}

impl HostBytes {
    fn new(bytes: Vec<u8>) -> HostBytes {
        HostBytes(std::cell::UnsafeCell::new(bytes))
    }
    fn base(&self) -> u64 {
        // SAFETY: read of the vector's pointer, no access to the bytes.
        unsafe { (*self.0.get()).as_ptr() as u64 }
    }
    fn bytes(&self) -> Vec<u8> {
        // SAFETY: no instruction runs while the test reads.
        unsafe { (*self.0.get()).clone() }
    }
    fn range(&self, address: u64, length: usize, write: bool) -> Result<usize, MemoryFault> {
        // SAFETY: length read only.
        let size = unsafe { (*self.0.get()).len() } as u64;
        let fault = MemoryFault { address, length: length as u64, write };
        let offset = address.checked_sub(self.base()).ok_or(fault)?;
        if offset + length as u64 > size { Err(fault) } else { Ok(offset as usize) }
    }
}

impl Memory for HostBytes {
    fn read(&self, address: u64, out: &mut [u8]) -> Result<(), MemoryFault> {
        let at = self.range(address, out.len(), false)?;
        // SAFETY: in range; one thread.
        out.copy_from_slice(unsafe { &(&*self.0.get())[at..at + out.len()] });
        Ok(())
    }
    fn write(&self, address: u64, data: &[u8]) -> Result<(), MemoryFault> {
        let at = self.range(address, data.len(), true)?;
        // SAFETY: in range; one thread.
        unsafe { (&mut *self.0.get())[at..at + data.len()].copy_from_slice(data) };
        Ok(())
    }
    fn atomic32(&self, address: u64, op: AtomicOp, value: u32, compare: u32) -> Result<u32, MemoryFault> {
        let mut word = [0u8; 4];
        self.read(address, &mut word)?;
        let old = u32::from_le_bytes(word);
        self.write(address, &apply_atomic32(op, old, value, compare).to_le_bytes())?;
        Ok(old)
    }
    fn atomic64(&self, address: u64, op: AtomicOp, value: u64, compare: u64) -> Result<u64, MemoryFault> {
        let mut word = [0u8; 8];
        self.read(address, &mut word)?;
        let old = u64::from_le_bytes(word);
        self.write(address, &apply_atomic64(op, old, value, compare).to_le_bytes())?;
        Ok(old)
    }
}

/// Checks a SOPK operation over immediates and destination values; `None` if not one.
fn check_sopk(isa: Isa, operation: &Operation) -> Option<()> {
    if operation.encoding != "Sopk" {
        return None;
    }
    let name = operation.mnemonic;
    let mut rng = Rng(0x50C ^ operation.words[0] as u64);
    for _ in 0..64 {
        let simm = (rng.next() as u32) & 0xFFFF;
        let old = rng.next() as u32;
        let scc = rng.next() & 1 == 1;
        let mode = (rng.next() as u32) & 0x3FF;
        let mut registers = Registers::new(4);
        registers.sgpr[4] = old;
        registers.sgpr[5] = rng.next() as u32;
        registers.scc = scc;
        registers.mode = mode;
        let hwreg = name.contains("reg_");
        let mut words = operation.words;
        if !hwreg {
            words[0] = (words[0] & !0xFFFF) | simm;
        } else {
            words[1] = rng.next() as u32 & 0x3FF; // s_setreg_imm32_b32's literal
        }
        let mut expected = registers.clone();
        let signed = simm as u16 as i16 as i32;
        let mut next = Next::Following;
        match name {
            "s_movk_i32" => expected.sgpr[4] = signed as u32,
            "s_cmovk_i32" if scc => expected.sgpr[4] = signed as u32,
            "s_cmovk_i32" | "s_version" | "s_waitcnt_vscnt" | "s_waitcnt_vmcnt" | "s_waitcnt_expcnt"
            | "s_waitcnt_lgkmcnt" => {}
            "s_addk_i32" => {
                let sum = (old as i32).wrapping_add(signed);
                expected.sgpr[4] = sum as u32;
                expected.scc = (old as i32 >= 0) == (signed >= 0) && (sum >= 0) != (old as i32 >= 0);
            }
            "s_mulk_i32" => expected.sgpr[4] = (old as i32).wrapping_mul(signed) as u32,
            "s_call_b64" => {
                let return_address = PC + 4;
                expected.sgpr[4] = return_address as u32;
                expected.sgpr[5] = (return_address >> 32) as u32;
                next = Next::Jump(return_address.wrapping_add_signed(signed as i64 * 4));
            }
            "s_getreg_b32" => expected.sgpr[4] = mode,
            "s_setreg_b32" => expected.mode = old,
            "s_setreg_imm32_b32" => expected.mode = words[1],
            _ => {
                let rest = name.strip_prefix("s_cmpk_")?;
                let (condition, kind) = rest.split_once('_')?;
                let (x, y): (i64, i64) = match kind {
                    "i32" => (old as i32 as i64, signed as i64),
                    _ => (old as i64, simm as i64),
                };
                expected.scc = match condition {
                    "eq" => x == y,
                    "lg" => x != y,
                    "gt" => x > y,
                    "ge" => x >= y,
                    "lt" => x < y,
                    "le" => x <= y,
                    _ => return None,
                };
            }
        }
        let got = run_words(isa, operation, &words, &mut registers);
        let what = format!("{isa:?} {name} simm={simm:#x} old={old:#x} scc={scc} mode={mode:#x}");
        assert_registers(&registers, &expected, &what);
        assert_eq!(got, next, "{what}");
    }
    Some(())
}

/// Checks a SOPP operation: branches against their conditions, the MODE writers, and that the
/// rest change nothing; `None` if not one.
fn check_sopp(isa: Isa, operation: &Operation) -> Option<()> {
    if operation.encoding != "Sopp" {
        return None;
    }
    let name = operation.mnemonic;
    let mut rng = Rng(0x5099 ^ operation.words[0] as u64);
    for _ in 0..32 {
        let simm = rng.next() as u32 & 0xFFFF;
        let mut registers = Registers::new(4);
        registers.scc = rng.next() & 1 == 1;
        registers.sgpr[VCC] = if rng.next() & 1 == 1 { 0 } else { rng.next() as u32 };
        registers.sgpr[EXEC] = if rng.next() & 1 == 1 { 0 } else { rng.next() as u32 };
        registers.mode = rng.next() as u32 & 0x3FF;
        let mut words = operation.words;
        // Messages and priorities keep the probe's immediate (gfx10.3's s_sendmsg takes only
        // MSG_INTERRUPT); everything else takes a random one.
        if !matches!(name, "s_sendmsg" | "s_trap") {
            words[0] = (words[0] & !0xFFFF) | simm;
        }
        let simm = words[0] & 0xFFFF;
        let target = (PC + 4).wrapping_add_signed(simm as u16 as i16 as i64 * 4);
        let mut expected = registers.clone();
        let taken = |condition: bool| if condition { Next::Jump(target) } else { Next::Following };
        let next = match name {
            "s_branch" => Next::Jump(target),
            "s_cbranch_scc0" => taken(!registers.scc),
            "s_cbranch_scc1" => taken(registers.scc),
            "s_cbranch_vccz" => taken(registers.sgpr[VCC] == 0),
            "s_cbranch_vccnz" => taken(registers.sgpr[VCC] != 0),
            "s_cbranch_execz" => taken(registers.sgpr[EXEC] == 0),
            "s_cbranch_execnz" => taken(registers.sgpr[EXEC] != 0),
            "s_endpgm" => Next::End,
            "s_barrier" => Next::Barrier,
            "s_sleep" => Next::Sleep,
            "s_round_mode" => {
                expected.mode = (expected.mode & !0xF) | (simm & 0xF);
                Next::Following
            }
            "s_denorm_mode" => {
                expected.mode = (expected.mode & !0xF0) | (simm & 0xF) << 4;
                Next::Following
            }
            "s_trap" => {
                let mut lds = [0u8; 0];
                let error = execute(isa, &words, &mut registers, &Unmapped, &mut lds).expect_err("s_trap traps");
                assert!(matches!(error, ExecError::Trap { .. }), "{isa:?} s_trap: {error}");
                continue;
            }
            _ => Next::Following,
        };
        let got = run_words(isa, operation, &words, &mut registers);
        let what = format!("{isa:?} {name} simm={simm:#x}");
        assert_eq!(got, next, "{what}");
        assert_registers(&registers, &expected, &what);
    }
    Some(())
}

/// Checks a scalar memory operation against host bytes; `None` if not one.
fn check_smem(isa: Isa, operation: &Operation) -> Option<()> {
    if operation.encoding != "Smem" {
        return None;
    }
    let name = operation.mnemonic;
    let mut rng = Rng(0x5E ^ operation.words[0] as u64);
    let bytes: Vec<u8> = (0..256).map(|_| rng.next() as u8).collect();
    let memory = HostBytes::new(bytes.clone());
    let dwords = match () {
        _ if name.ends_with("b512") || name.ends_with("dwordx16") => 16,
        _ if name.ends_with("b256") || name.ends_with("dwordx8") => 8,
        _ if name.ends_with("b128") || name.ends_with("dwordx4") => 4,
        _ if name.ends_with("b64") || name.ends_with("dwordx2") => 2,
        _ if name.ends_with("b32") || name.ends_with("dword") => 1,
        _ => 0,
    };
    let buffer = name.contains("buffer");
    for offset in [0u32, 4, 16, 60, 64, 132, 196] {
        let records = [256u32, 64, 100][offset as usize % 3];
        let mut registers = Registers::new(4);
        let base = memory.base();
        registers.sgpr[0] = base as u32;
        registers.sgpr[1] = (base >> 32) as u32;
        registers.sgpr[2] = records;
        let mut words = operation.words;
        words[1] = (words[1] & !0x1F_FFFF) | offset;
        let mut expected = registers.clone();
        for index in 0..dwords {
            let at = offset as usize + 4 * index;
            let in_range = at + 4 <= bytes.len() && (!buffer || at + 4 <= records as usize);
            expected.sgpr[8 + index] =
                if in_range { u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) } else { 0 };
        }
        if name == "s_memtime" || name == "s_memrealtime" {
            expected.sgpr[8] = CLOCK as u32;
            expected.sgpr[9] = (CLOCK >> 32) as u32;
        }
        if dwords > 0 && !buffer && offset as usize + 4 * dwords > bytes.len() {
            let mut lds = [0u8; 0];
            let error = execute(isa, &words, &mut registers, &memory, &mut lds).expect_err("past the bytes");
            assert!(matches!(error, ExecError::Fault { .. }), "{isa:?} {name}: {error}");
            continue;
        }
        let mut lds = [0u8; 0];
        execute(isa, &words, &mut registers, &memory, &mut lds)
            .unwrap_or_else(|error| panic!("{isa:?} {name}: {error}"));
        assert_registers(&registers, &expected, &format!("{isa:?} {name} offset {offset} records {records}"));
    }
    Some(())
}

/// Every family test, over every operation of both instruction sets: the operations each
/// covers, by instruction set.
fn family_tested() -> BTreeMap<&'static str, BTreeSet<&'static str>> {
    let mut tested = BTreeMap::new();
    for (isa, name) in ISAS {
        let set: &mut BTreeSet<&'static str> = tested.entry(name).or_default();
        for operation in operations(isa).iter().filter(|operation| operation.runs) {
            let families = [
                check_compare,
                check_scalar,
                check_sopk,
                check_sopp,
                check_smem,
                memory::check_memory,
                memory::check_typed,
                valu::check_valu,
                valu::check_approximate,
                misc::check_misc,
                misc::check_lane_addressed,
                misc::check_dual,
            ];
            // The round and denormal modes, on top of the default MODE the families run under.
            let moded = valu::check_modes(isa, operation).is_some();
            if families.iter().any(|family| family(isa, operation).is_some()) || moded {
                set.insert(operation.mnemonic);
            }
        }
    }
    tested
}

// ---------------------------------------------------------------------------------------------
// The lists.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Eq)]
enum Status {
    Tested,
    Untested,
    Excluded(String),
}

fn list_path(name: &str) -> PathBuf {
    root().join("isa/coverage").join(format!("{name}.tsv"))
}

/// `mnemonic<TAB>status[<TAB>reason]` lines; `#` starts a comment.
fn read_list(name: &str) -> BTreeMap<String, Status> {
    let text = std::fs::read_to_string(list_path(name)).unwrap_or_default();
    let mut list = BTreeMap::new();
    for line in text.lines().filter(|line| !line.starts_with('#') && !line.trim().is_empty()) {
        let mut fields = line.split('\t');
        let mnemonic = fields.next().unwrap().to_owned();
        let status = match (fields.next(), fields.next()) {
            (Some("tested"), None) => Status::Tested,
            (Some("untested"), None) => Status::Untested,
            (Some("excluded"), Some(reason)) if !reason.trim().is_empty() => Status::Excluded(reason.to_owned()),
            other => {
                panic!("{name}.tsv: `{line}`: the status must be tested, untested or excluded<TAB>reason ({other:?})")
            }
        };
        assert!(list.insert(mnemonic.clone(), status).is_none(), "{name}.tsv lists {mnemonic} twice");
    }
    list
}

#[test]
fn every_operation_is_tested_or_excluded_with_a_reason() {
    let families = family_tested();
    let write = std::env::var_os("AQUEDUCT_WRITE_COVERAGE").is_some();
    let mut problems = Vec::new();
    for (isa, name) in ISAS {
        let list = read_list(name);
        let kernels = in_kernel_tests(isa);
        let mut measured: BTreeMap<String, Status> = BTreeMap::new();
        let all = operations(isa);
        // A mnemonic that runs in one of its encodings runs (gfx10's VOP2 table repeats two VOPC
        // compares at opcodes whose words are VOPC's: the decoder's tables carry LLVM's view).
        let running: BTreeSet<&str> =
            all.iter().filter(|operation| operation.runs).map(|operation| operation.mnemonic).collect();
        for operation in all.iter().filter(|operation| operation.runs || !running.contains(operation.mnemonic)) {
            let listed = list.get(operation.mnemonic);
            let status = if !operation.runs {
                match listed {
                    Some(Status::Excluded(reason)) => Status::Excluded(reason.clone()),
                    _ => {
                        let why = operation.probe_error.as_deref().unwrap_or("the interpreter refuses it");
                        problems.push(format!(
                            "{name} {}: not run ({why}) and not excluded with a reason",
                            operation.mnemonic
                        ));
                        continue;
                    }
                }
            } else if kernels.contains(operation.mnemonic) || families[name].contains(operation.mnemonic) {
                Status::Tested
            } else {
                Status::Untested
            };
            // One mnemonic in several encodings (VOPD's X and Y) takes the better status.
            let entry = measured.entry(operation.mnemonic.to_owned()).or_insert(status.clone());
            if status == Status::Tested {
                *entry = Status::Tested;
            }
        }
        for (mnemonic, status) in &measured {
            if *status == Status::Untested {
                problems.push(format!(
                    "{name} {mnemonic}: runs, but no test checks it (give it a family or a kernel test)"
                ));
            }
            match (list.get(mnemonic), status) {
                (Some(listed), status) if listed == status => {}
                (Some(Status::Excluded(_)), Status::Tested | Status::Untested) => {
                    problems.push(format!("{name} {mnemonic}: runs, but the list excludes it"))
                }
                (listed, status) => problems.push(format!("{name} {mnemonic}: listed {listed:?}, measured {status:?}")),
            }
        }
        for mnemonic in list.keys().filter(|mnemonic| !measured.contains_key(*mnemonic)) {
            problems.push(format!("{name} {mnemonic}: listed, but no table has it"));
        }
        if write {
            let mut text = format!(
                "# {name}: every operation of the decoder's tables (isa/tests/coverage.rs).\n# mnemonic<TAB>tested | untested | excluded<TAB>reason\n"
            );
            for (mnemonic, status) in &measured {
                match status {
                    Status::Tested => text += &format!("{mnemonic}\ttested\n"),
                    Status::Untested => text += &format!("{mnemonic}\tuntested\n"),
                    Status::Excluded(reason) => text += &format!("{mnemonic}\texcluded\t{reason}\n"),
                }
            }
            std::fs::write(list_path(name), text).unwrap();
        }
        let count = |wanted: fn(&Status) -> bool| measured.values().filter(|status| wanted(status)).count();
        eprintln!(
            "{name}: {} operations: {} tested, {} untested, {} excluded",
            measured.len(),
            count(|status| *status == Status::Tested),
            count(|status| *status == Status::Untested),
            count(|status| matches!(status, Status::Excluded(_)))
        );
    }
    if !write {
        assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
    }
}
