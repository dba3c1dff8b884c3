//! The decoder against LLVM: every instruction of every checked-in gfx1100 code object decodes,
//! and prints as `llvm-objdump-19 -d` printed it (`tests/golden/gfx1100.txt`, written by
//! `isa/gen/golden.sh`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use aqueduct_isa::gfx11::decode_all;
use object::{Object, ObjectSection};

/// The objects `isa/gen/objects.sh` lists: gfx1100 and gfx11-generic code objects.
fn gfx11_objects() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut objects = Vec::new();
    for dir in [
        "builtins/prebuilt",
        "codeobject/tests/fixtures",
        "soft-hsa/tests/fixtures",
        "kernels",
        "cli/kernels",
        "isa/tests/kernels",
    ] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".hsaco") && (name.contains("gfx1100") || name.contains("gfx11-generic")) {
                objects.push(path);
            }
        }
    }
    objects.sort();
    objects
}

fn golden() -> HashMap<String, String> {
    let text = include_str!("golden/gfx1100.txt");
    text.lines()
        .map(|line| {
            let (words, instruction) = line.split_once('\t').unwrap();
            (words.trim().to_owned(), instruction.trim().to_owned())
        })
        .collect()
}

#[test]
fn every_instruction_of_every_gfx1100_object_prints_as_llvm_prints_it() {
    let golden = golden();
    let objects = gfx11_objects();
    assert!(objects.len() >= 8, "found {objects:?}");
    let (mut decoded, mut mismatches) = (0usize, Vec::new());
    for path in &objects {
        let bytes = std::fs::read(path).unwrap();
        let file = object::File::parse(&*bytes).unwrap();
        let text = file.section_by_name(".text").unwrap();
        for result in decode_all(text.data().unwrap(), text.address()) {
            let (pc, instruction) = result.unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            let words: Vec<String> =
                instruction.words[..instruction.dwords as usize].iter().map(|word| format!("{word:08X}")).collect();
            let key = words.join(" ");
            let ours = instruction.to_string();
            match golden.get(&key) {
                Some(theirs) if *theirs == ours => {}
                theirs => {
                    mismatches.push(format!("{}@0x{pc:x} [{key}]: ours {ours:?}, llvm {theirs:?}", path.display()))
                }
            }
            decoded += 1;
        }
    }
    assert!(decoded > 60_000, "decoded {decoded}");
    // One example per mnemonic keeps a failure's report short.
    let mut shown = std::collections::BTreeMap::new();
    for mismatch in &mismatches {
        let mnemonic = mismatch.split("ours \"").nth(1).and_then(|rest| rest.split([' ', '"']).next()).unwrap_or("");
        shown.entry(mnemonic.to_owned()).or_insert(mismatch.clone());
    }
    let shown: Vec<_> = shown.into_values().collect();
    assert!(mismatches.is_empty(), "{} of {decoded} differ, for example:\n{}", mismatches.len(), shown.join("\n"));
}

/// LLVM reads a wide scalar field aligned down: `llvm-mc-19 -mcpu=gfx1100` prints `0x8BED488F`
/// (sdst 109, ttmp1) as `s_and_b64 ttmp[0:1], 15, s[72:73]`.
#[test]
fn an_odd_field_of_a_64_bit_scalar_operand_names_the_aligned_pair() {
    let instruction = aqueduct_isa::gfx11::decode(&[0x8BED_488F], 0).unwrap();
    assert_eq!(instruction.to_string(), "s_and_b64 ttmp[0:1], 15, s[72:73]");
}
