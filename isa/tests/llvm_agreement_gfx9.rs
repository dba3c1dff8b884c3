//! The gfx9 decoder against LLVM: every line of `tests/golden/<processor>.txt` for gfx900, gfx906,
//! gfx908, gfx90a and gfx942 (written by `isa/gen/golden_gfx9.sh`: the instructions of the
//! checked-in gfx9 test kernels and a sample of the distinct instructions of the code objects in
//! Debian's rocSPARSE and rocRAND, as `llvm-objdump-19 -d --mcpu=<processor>` prints them) decodes
//! from its words alone, as that processor's, and prints as LLVM printed it; so does every
//! instruction of the test kernels, decoded in order from their `.text`. With
//! `AQUEDUCT_GFX9_CORPUS=DIR` (the full lists `golden_gfx9.sh DIR` writes, `DIR/<processor>.txt`),
//! each golden test also checks every line there.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use aqueduct_isa::DecodeError;
use aqueduct_isa::gfx9::{Processor, decode, decode_all};
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

fn check(processor: Processor, golden: &str, name: &str, at_least: usize) {
    let lines = parse_golden(golden);
    assert!(lines.len() >= at_least, "{} golden lines", lines.len());
    check_lines(processor, &lines);
    if let Ok(dir) = std::env::var("AQUEDUCT_GFX9_CORPUS")
        && processor != Processor::Gfx942
    {
        let path = std::path::Path::new(&dir).join(format!("{name}.txt"));
        let corpus = parse_golden(&std::fs::read_to_string(&path).unwrap());
        check_lines(processor, &corpus);
        println!("{} instructions of {}", corpus.len(), path.display());
    }
}

#[test]
fn every_golden_gfx900_instruction_prints_as_llvm_prints_it() {
    check(Processor::Gfx900, include_str!("golden/gfx900.txt"), "gfx900", 5_000);
}

#[test]
fn every_golden_gfx906_instruction_prints_as_llvm_prints_it() {
    check(Processor::Gfx906, include_str!("golden/gfx906.txt"), "gfx906", 5_000);
}

#[test]
fn every_golden_gfx908_instruction_prints_as_llvm_prints_it() {
    check(Processor::Gfx908, include_str!("golden/gfx908.txt"), "gfx908", 5_000);
}

#[test]
fn every_golden_gfx90a_instruction_prints_as_llvm_prints_it() {
    check(Processor::Gfx90a, include_str!("golden/gfx90a.txt"), "gfx90a", 5_000);
}

/// gfx942 has no code in Debian's libraries: its golden text is the test kernels' alone.
#[test]
fn every_golden_gfx942_instruction_prints_as_llvm_prints_it() {
    check(Processor::Gfx942, include_str!("golden/gfx942.txt"), "gfx942", 50);
}

/// Every instruction of `tests/kernels/mfma_<processor>.hsaco`, decoded in order from its
/// `.text`, is in the processor's golden text with the same words and prints as LLVM printed it.
#[test]
fn every_instruction_of_the_gfx9_test_kernels_prints_as_llvm_prints_it() {
    let goldens = [
        (Processor::Gfx908, "gfx908", include_str!("golden/gfx908.txt")),
        (Processor::Gfx90a, "gfx90a", include_str!("golden/gfx90a.txt")),
        (Processor::Gfx942, "gfx942", include_str!("golden/gfx942.txt")),
    ];
    for (processor, name, golden) in goldens {
        let golden: HashMap<String, String> = parse_golden(golden)
            .into_iter()
            .map(|(words, text)| (words.iter().map(|word| format!("{word:08X}")).collect::<Vec<_>>().join(" "), text))
            .collect();
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/kernels/mfma_{name}.hsaco"));
        let bytes = std::fs::read(&path).unwrap();
        let file = object::File::parse(&*bytes).unwrap();
        let text = file.section_by_name(".text").unwrap();
        let (mut decoded, mut matrix) = (0, 0);
        for result in decode_all(text.data().unwrap(), text.address(), processor) {
            let (pc, instruction) = result.unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            let key = instruction.words[..instruction.dwords as usize]
                .iter()
                .map(|word| format!("{word:08X}"))
                .collect::<Vec<_>>()
                .join(" ");
            assert_eq!(golden.get(&key), Some(&instruction.to_string()), "{}@0x{pc:x} [{key}]", path.display());
            decoded += 1;
            matrix += instruction.mnemonic().starts_with("v_mfma") as usize;
        }
        assert!(decoded > 40 && matrix >= 3, "{name}: {decoded} instructions, {matrix} MFMA");
    }
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
