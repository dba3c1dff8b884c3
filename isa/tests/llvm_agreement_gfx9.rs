//! The gfx9 decoder against LLVM: every line of `tests/golden/gfx906.txt`, `gfx908.txt` and
//! `gfx90a.txt` (written by `isa/gen/golden_gfx9.sh`: a sample of the distinct instructions of
//! the gfx906, gfx908 and gfx90a code objects in Debian's rocSPARSE and rocRAND, as
//! `llvm-objdump-19 -d --mcpu=<processor>` prints them) decodes from its words alone, as that
//! processor's, and prints as LLVM printed it. With `AQUEDUCT_GFX9_CORPUS=DIR` (the full lists
//! `golden_gfx9.sh DIR` writes, `DIR/<processor>.txt`), each test also checks every line there.

use std::collections::BTreeMap;

use aqueduct_isa::DecodeError;
use aqueduct_isa::gfx9::{Processor, decode};

fn parse_golden(text: &str) -> Vec<(Vec<u32>, String)> {
    text.lines()
        .map(|line| {
            let (words, instruction) = line.split_once('\t').unwrap_or_else(|| panic!("no tab in {line:?}"));
            let words = words.split_whitespace().map(|word| u32::from_str_radix(word, 16).unwrap()).collect();
            (words, instruction.trim().to_owned())
        })
        .collect()
}

/// Mismatches, one example per class with their count, so that a failure's report stays short.
fn examples(mismatches: &[(String, String)]) -> String {
    let mut shown = BTreeMap::new();
    for (class, mismatch) in mismatches {
        shown.entry(class.clone()).or_insert((0, mismatch.clone())).0 += 1;
    }
    shown.into_values().map(|(count, example)| format!("({count}x) {example}")).collect::<Vec<_>>().join("\n")
}

/// Decodes each line's words as `processor`'s and compares the text; fails on any difference or
/// refusal, naming a sample of each kind.
fn check_lines(processor: Processor, lines: &[(Vec<u32>, String)]) {
    let mut mismatches = Vec::new();
    for (words, theirs) in lines {
        let key = words.iter().map(|word| format!("{word:08X}")).collect::<Vec<_>>().join(" ");
        match decode(words, 0, processor) {
            Ok(instruction) => {
                let ours = instruction.to_string();
                if ours != *theirs || instruction.dwords as usize != words.len() {
                    mismatches.push((
                        instruction.mnemonic().to_owned(),
                        format!("[{key}] ({} dwords): ours {ours:?}, llvm {theirs:?}", instruction.dwords),
                    ));
                }
            }
            Err(error) => {
                let class = match &error {
                    DecodeError::Unsupported { what, .. } => format!("unsupported {what}"),
                    DecodeError::UnknownOpcode { encoding, .. } => format!("unknown {encoding:?} opcode"),
                    DecodeError::Truncated { .. } => "truncated".to_owned(),
                };
                mismatches.push((class, format!("[{key}] {theirs}: {error}")));
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "{processor:?}: {} of {} differ, for example:\n{}",
        mismatches.len(),
        lines.len(),
        examples(&mismatches)
    );
}

fn check(processor: Processor, golden: &str, name: &str) {
    let lines = parse_golden(golden);
    assert!(lines.len() > 5_000, "{} golden lines", lines.len());
    check_lines(processor, &lines);
    if let Ok(dir) = std::env::var("AQUEDUCT_GFX9_CORPUS") {
        let path = std::path::Path::new(&dir).join(format!("{name}.txt"));
        let corpus = parse_golden(&std::fs::read_to_string(&path).unwrap());
        check_lines(processor, &corpus);
        println!("{} instructions of {}", corpus.len(), path.display());
    }
}

#[test]
fn every_golden_gfx906_instruction_prints_as_llvm_prints_it() {
    check(Processor::Gfx906, include_str!("golden/gfx906.txt"), "gfx906");
}

#[test]
fn every_golden_gfx908_instruction_prints_as_llvm_prints_it() {
    check(Processor::Gfx908, include_str!("golden/gfx908.txt"), "gfx908");
}

#[test]
fn every_golden_gfx90a_instruction_prints_as_llvm_prints_it() {
    check(Processor::Gfx90a, include_str!("golden/gfx90a.txt"), "gfx90a");
}

/// `tests/golden/gfx9_fuzz.txt` (`isa/gen/fuzz_gfx9.py 9 2`): random words of every row of the
/// table, for every processor that has it (gfx900 and gfx942 included, which Debian's libraries
/// do not carry), as `llvm-mc-19 --disassemble` prints them. With `AQUEDUCT_GFX9_FUZZ=FILE`, also
/// every line of another file `fuzz_gfx9.py` wrote.
#[test]
fn random_words_of_every_row_print_as_llvm_prints_them() {
    let check_file = |text: &str| {
        let mut by_processor: BTreeMap<&str, Vec<(Vec<u32>, String)>> = BTreeMap::new();
        for line in text.lines() {
            let (processor, rest) = line.split_once('\t').unwrap_or_else(|| panic!("no tab in {line:?}"));
            by_processor.entry(processor).or_default().extend(parse_golden(rest));
        }
        assert_eq!(by_processor.len(), Processor::ALL.len(), "processors: {:?}", by_processor.keys());
        for (name, lines) in by_processor {
            let processor = Processor::from_name(name).unwrap_or_else(|| panic!("processor {name}"));
            assert!(lines.len() > 1_000, "{name}: {} lines", lines.len());
            check_lines(processor, &lines);
        }
    };
    check_file(include_str!("golden/gfx9_fuzz.txt"));
    if let Ok(path) = std::env::var("AQUEDUCT_GFX9_FUZZ") {
        check_file(&std::fs::read_to_string(path).unwrap());
    }
}
