//! The gfx12 decoder against LLVM: every line of `tests/golden/gfx1200.txt`, `gfx1201.txt` and
//! `gfx12-generic.txt` (written by `isa/gen/golden_gfx12.sh`: every distinct instruction of the
//! checked-in gfx1200 (wave32 and wave64), gfx1201 and gfx12-generic test kernels as
//! `llvm-objdump-19 -d --mcpu=<processor>` prints it) decodes from its words alone and prints as
//! LLVM printed it; so does every instruction of those kernels, decoded
//! in order from their `.text`; and so does the probe word of every row of the generated table
//! (`tests/golden/gfx12_probes.txt`, written by `isa/gen/probe_gfx12.py --golden`).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use aqueduct_isa::DecodeError;
use aqueduct_isa::gfx12::{decode, decode_all};
use object::{Object, ObjectSection};

fn parse_golden(text: &str) -> Vec<(Vec<u32>, String)> {
    text.lines()
        .map(|line| {
            let (words, instruction) = line.split_once('\t').unwrap_or_else(|| panic!("no tab in {line:?}"));
            let words = words.split_whitespace().map(|word| u32::from_str_radix(word, 16).unwrap()).collect();
            (words, instruction.trim().to_owned())
        })
        .collect()
}

fn key(words: &[u32]) -> String {
    words.iter().map(|word| format!("{word:08X}")).collect::<Vec<_>>().join(" ")
}

/// Decodes each line's words and compares the text and length; fails on any difference or
/// refusal, with one example per mnemonic (or refusal) and its count.
fn check_lines(name: &str, lines: &[(Vec<u32>, String)]) {
    let mut mismatches: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for (words, theirs) in lines {
        let (class, report) = match decode(words, 0) {
            Ok(instruction) => {
                let ours = instruction.to_string();
                if ours == *theirs && instruction.dwords as usize == words.len() {
                    continue;
                }
                let report =
                    format!("[{}] ({} dwords): ours {ours:?}, llvm {theirs:?}", key(words), instruction.dwords);
                (instruction.mnemonic().to_owned(), report)
            }
            Err(error) => {
                let class = match &error {
                    DecodeError::Unsupported { what, .. } => format!("unsupported {what}"),
                    DecodeError::UnknownOpcode { encoding, .. } => format!("unknown {encoding:?} opcode"),
                    DecodeError::Truncated { .. } => "truncated".to_owned(),
                };
                (class, format!("[{}] {theirs}: {error}", key(words)))
            }
        };
        mismatches.entry(class).or_insert((0, report)).0 += 1;
    }
    let shown: Vec<String> = mismatches.values().map(|(count, example)| format!("({count}x) {example}")).collect();
    assert!(shown.is_empty(), "{name}: {} of {} lines differ:\n{}", mismatches.len(), lines.len(), shown.join("\n"));
}

#[test]
fn every_golden_gfx1200_instruction_prints_as_llvm_prints_it() {
    let lines = parse_golden(include_str!("golden/gfx1200.txt"));
    assert!(lines.len() > 1_000, "{} lines", lines.len());
    check_lines("gfx1200", &lines);
}

#[test]
fn every_golden_gfx12_generic_instruction_prints_as_llvm_prints_it() {
    let lines = parse_golden(include_str!("golden/gfx12-generic.txt"));
    assert!(lines.len() > 1_000, "{} lines", lines.len());
    check_lines("gfx12-generic", &lines);
}

#[test]
fn every_golden_gfx1201_instruction_prints_as_llvm_prints_it() {
    let lines = parse_golden(include_str!("golden/gfx1201.txt"));
    assert!(lines.len() > 1_000, "{} lines", lines.len());
    check_lines("gfx1201", &lines);
}

/// Every row of the table: the probe word LLVM accepted for it decodes to that row and prints as
/// LLVM printed it.
#[test]
fn every_table_row_prints_its_probe_as_llvm_prints_it() {
    let lines = parse_golden(include_str!("golden/gfx12_probes.txt"));
    assert!(lines.len() > 1_500, "{} lines", lines.len());
    check_lines("probes", &lines);
}

/// Every instruction of `tests/kernels/*_gfx1200.hsaco` (and `-wave64`), `*_gfx1201.hsaco` and
/// `*_gfx12-generic.hsaco`, decoded in order from its `.text`, is in the processor's golden text
/// with the same words and prints as LLVM printed it.
#[test]
fn every_instruction_of_the_gfx12_test_kernels_prints_as_llvm_prints_it() {
    let goldens = [
        ("gfx1200", include_str!("golden/gfx1200.txt")),
        ("gfx1201", include_str!("golden/gfx1201.txt")),
        ("gfx12-generic", include_str!("golden/gfx12-generic.txt")),
    ];
    for (name, golden) in goldens {
        let golden: HashMap<String, String> =
            parse_golden(golden).into_iter().map(|(words, text)| (key(&words), text)).collect();
        let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels");
        let (mut objects, mut decoded) = (0, 0);
        for entry in std::fs::read_dir(&directory).unwrap() {
            let path = entry.unwrap().path();
            let file_name = path.to_string_lossy().into_owned();
            if !file_name.ends_with(&format!("_{name}.hsaco")) && !file_name.ends_with(&format!("_{name}-wave64.hsaco"))
            {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            let file = object::File::parse(&*bytes).unwrap();
            let text = file.section_by_name(".text").unwrap();
            for result in decode_all(text.data().unwrap(), text.address()) {
                let (pc, instruction) = result.unwrap_or_else(|error| panic!("{}: {error}", path.display()));
                let words = key(&instruction.words[..instruction.dwords as usize]);
                assert_eq!(golden.get(&words), Some(&instruction.to_string()), "{}@0x{pc:x} [{words}]", path.display());
                decoded += 1;
            }
            objects += 1;
        }
        assert!(objects >= 11 && decoded > 3_000, "{name}: {objects} objects, {decoded} instructions");
        println!("{name}: {decoded} instructions of {objects} objects print as llvm-objdump-19 prints them");
    }
}
