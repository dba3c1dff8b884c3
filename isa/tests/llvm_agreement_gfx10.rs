//! The gfx10 decoder against LLVM: every instruction of every checked-in gfx1030 code object
//! (`tests/kernels/*_gfx1030.hsaco`) decodes and prints as `llvm-objdump-19 -d --mcpu=gfx1030`
//! printed it, and so does every line of `tests/golden/gfx1030.txt` (written by
//! `isa/gen/golden_gfx10.sh`: those objects' instructions and a sample of the gfx1030 code in
//! Debian's rocSPARSE and rocRAND), decoded from its words alone. With
//! `AQUEDUCT_GFX1030_CORPUS=FILE` (the full list `golden_gfx10.sh FILE` writes, or the random
//! words `isa/gen/fuzz_gfx10.py` writes), the second test also checks every line of that file.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use aqueduct_isa::DecodeError;
use aqueduct_isa::gfx10::{decode, decode_all};
use object::{Object, ObjectSection};

/// Instruction classes the decoder refuses ([`DecodeError::Unsupported`]) rather than print
/// differently from LLVM: none. A test that meets a refusal fails unless its `what` is listed here.
const REFUSED: &[&str] = &[];

fn gfx1030_objects() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels");
    let mut objects: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.file_name().unwrap().to_string_lossy().ends_with("_gfx1030.hsaco"))
        .collect();
    objects.sort();
    objects
}

fn parse_golden(text: &str) -> Vec<(Vec<u32>, String)> {
    text.lines()
        .map(|line| {
            let (words, instruction) = line.split_once('\t').unwrap_or_else(|| panic!("no tab in {line:?}"));
            let words = words.split_whitespace().map(|word| u32::from_str_radix(word, 16).unwrap()).collect();
            (words, instruction.trim().to_owned())
        })
        .collect()
}

fn golden() -> Vec<(Vec<u32>, String)> {
    parse_golden(include_str!("golden/gfx1030.txt"))
}

/// Mismatches, one example per mnemonic with their count, so that a failure's report stays short.
fn examples(mismatches: &[(String, String)]) -> String {
    let mut shown = BTreeMap::new();
    for (mnemonic, mismatch) in mismatches {
        shown.entry(mnemonic.clone()).or_insert((0, mismatch.clone())).0 += 1;
    }
    shown.into_values().map(|(count, example)| format!("({count}x) {example}")).collect::<Vec<_>>().join("\n")
}

/// Counts a refusal listed in [`REFUSED`]; any other error is a mismatch.
fn refused(
    error: &DecodeError,
    counts: &mut BTreeMap<&'static str, usize>,
    mismatches: &mut Vec<(String, String)>,
    context: &str,
) {
    match error {
        DecodeError::Unsupported { what, .. } if REFUSED.contains(what) => *counts.entry(what).or_default() += 1,
        other => {
            let class = match other {
                DecodeError::Unsupported { what, .. } => format!("unsupported {what}"),
                DecodeError::UnknownOpcode { encoding, .. } => format!("unknown {encoding:?} opcode"),
                DecodeError::Truncated { .. } => "truncated".to_owned(),
            };
            mismatches.push((class, format!("{context}: {other}")))
        }
    }
}

#[test]
fn every_instruction_of_every_gfx1030_object_prints_as_llvm_prints_it() {
    let golden: HashMap<String, String> = golden()
        .into_iter()
        .map(|(words, text)| (words.iter().map(|word| format!("{word:08X}")).collect::<Vec<_>>().join(" "), text))
        .collect();
    let objects = gfx1030_objects();
    assert!(objects.len() >= 8, "found {objects:?}");
    let (mut decoded, mut mismatches, mut refusals) = (0usize, Vec::new(), BTreeMap::new());
    for path in &objects {
        let bytes = std::fs::read(path).unwrap();
        let file = object::File::parse(&*bytes).unwrap();
        let text = file.section_by_name(".text").unwrap();
        let code = text.data().unwrap();
        let mut offset = 0usize;
        // After a refusal, resume at the next word: the refused instruction's length is unknown.
        while offset < code.len() {
            let base = text.address() + offset as u64;
            let mut next = code.len();
            for result in decode_all(&code[offset..], base) {
                let (pc, instruction) = match result {
                    Ok(decoded) => decoded,
                    Err(error) => {
                        refused(&error, &mut refusals, &mut mismatches, &path.display().to_string());
                        let (DecodeError::Unsupported { pc, .. }
                        | DecodeError::UnknownOpcode { pc, .. }
                        | DecodeError::Truncated { pc, .. }) = error;
                        next = (pc - text.address()) as usize + 4;
                        break;
                    }
                };
                let key = instruction.words[..instruction.dwords as usize]
                    .iter()
                    .map(|word| format!("{word:08X}"))
                    .collect::<Vec<_>>()
                    .join(" ");
                let ours = instruction.to_string();
                match golden.get(&key) {
                    Some(theirs) if *theirs == ours => {}
                    theirs => mismatches.push((
                        instruction.mnemonic().to_owned(),
                        format!("{}@0x{pc:x} [{key}]: ours {ours:?}, llvm {theirs:?}", path.display()),
                    )),
                }
                decoded += 1;
            }
            offset = next;
        }
    }
    assert!(decoded > 2_500, "decoded {decoded}");
    println!("{decoded} instructions of {} gfx1030 objects; refused: {refusals:?}", objects.len());
    assert!(mismatches.is_empty(), "{} of {decoded} differ, for example:\n{}", mismatches.len(), examples(&mismatches));
}

/// Decodes each line's words and compares the text; returns (checked, refusals).
fn check_lines(lines: &[(Vec<u32>, String)]) -> (usize, BTreeMap<&'static str, usize>) {
    let (mut mismatches, mut refusals) = (Vec::new(), BTreeMap::new());
    for (words, theirs) in lines {
        let key = words.iter().map(|word| format!("{word:08X}")).collect::<Vec<_>>().join(" ");
        match decode(words, 0) {
            Ok(instruction) => {
                let ours = instruction.to_string();
                if ours != *theirs || instruction.dwords as usize != words.len() {
                    mismatches.push((
                        instruction.mnemonic().to_owned(),
                        format!("[{key}] ({} dwords): ours {ours:?}, llvm {theirs:?}", instruction.dwords),
                    ));
                }
            }
            Err(error) => refused(&error, &mut refusals, &mut mismatches, &format!("[{key}] {theirs}")),
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} differ, for example:\n{}",
        mismatches.len(),
        lines.len(),
        examples(&mismatches)
    );
    (lines.len(), refusals)
}

#[test]
fn every_golden_instruction_decodes_from_its_words_and_prints_as_llvm_prints_it() {
    let lines = golden();
    assert!(lines.len() > 15_000, "{} golden lines", lines.len());
    let (checked, refusals) = check_lines(&lines);
    println!("{checked} golden instructions; refused: {refusals:?}");
    if let Ok(path) = std::env::var("AQUEDUCT_GFX1030_CORPUS") {
        let corpus = parse_golden(&std::fs::read_to_string(&path).unwrap());
        let (checked, refusals) = check_lines(&corpus);
        println!("{checked} instructions of {path}; refused: {refusals:?}");
    }
}
