//! Coverage by enumeration (issue 54): every operation of the gfx11 and gfx10.3 decoder tables,
//! each with a status in `isa/coverage/<isa>.tsv`:
//! - `tested`: the interpreter runs it, and a test checks its results against the host: one of
//!   the kernel tests (the operation is in a code object they run: `isa/tests/kernels`, the device
//!   library, the demo's kernels, the soft runtime's fixtures) or a family test here, which runs
//!   each operation of the family alone on edge and random inputs against a reference;
//! - `excluded`: not run, with the reason (graphics-only, privileged, a table artifact);
//! - `untested`: runs, but no test checks it yet. Only ever shrinks: an operation listed as
//!   `untested` that a test now covers fails until the list says `tested`.
//!
//! Any operation the list lacks, or whose status is wrong, fails. `AQUEDUCT_WRITE_COVERAGE=1`
//! rewrites the lists' `tested` and `untested` lines from what is measured, keeping each
//! exclusion's reason.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use aqueduct_isa::interp::coverage::{Operation, Registers, execute, mnemonics_in, operations};
use aqueduct_isa::interp::{AtomicOp, Isa, Memory, MemoryFault};
use object::{Object, ObjectSection};

const ISAS: [(Isa, &str); 2] = [(Isa::Gfx11, "gfx11"), (Isa::Gfx10_3, "gfx10.3")];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The operations in the code objects the kernel tests run, for `isa`.
fn in_kernel_tests(isa: Isa) -> BTreeSet<&'static str> {
    let mut found = BTreeSet::new();
    for dir in ["isa/tests/kernels", "builtins/prebuilt", "kernels", "soft-hsa/tests/fixtures"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let ours = match isa {
                Isa::Gfx11 => name.contains("gfx1100") || name.contains("gfx11-generic"),
                Isa::Gfx10_3 => name.contains("gfx1030") || name.contains("gfx10-3-generic"),
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

/// Memory with nothing mapped.
struct Unmapped;

impl Memory for Unmapped {
    fn read(&self, address: u64, out: &mut [u8]) -> Result<(), MemoryFault> {
        Err(MemoryFault { address, length: out.len() as u64, write: false })
    }
    fn write(&self, address: u64, data: &[u8]) -> Result<(), MemoryFault> {
        Err(MemoryFault { address, length: data.len() as u64, write: true })
    }
    fn atomic32(&self, address: u64, _: AtomicOp, _: u32, _: u32) -> Result<u32, MemoryFault> {
        Err(MemoryFault { address, length: 4, write: true })
    }
    fn atomic64(&self, address: u64, _: AtomicOp, _: u64, _: u64) -> Result<u64, MemoryFault> {
        Err(MemoryFault { address, length: 8, write: true })
    }
}

const EXEC: usize = 126;
const VCC: usize = 106;

/// Runs `operation` (its probe words: sources v0, v2, v4, destination s4/v4) on `registers`.
fn run(isa: Isa, operation: &Operation, registers: &mut Registers) {
    let mut lds = [0u8; 0];
    execute(isa, &operation.words, registers, &Unmapped, &mut lds)
        .unwrap_or_else(|error| panic!("{isa:?} {}: {error}", operation.mnemonic));
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

/// Every family test, over every operation of both instruction sets: the operations each
/// covers, by instruction set.
fn family_tested() -> BTreeMap<&'static str, BTreeSet<&'static str>> {
    let mut tested = BTreeMap::new();
    for (isa, name) in ISAS {
        let set: &mut BTreeSet<&'static str> = tested.entry(name).or_default();
        for operation in operations(isa).iter().filter(|operation| operation.runs) {
            if check_compare(isa, operation).is_some() {
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
