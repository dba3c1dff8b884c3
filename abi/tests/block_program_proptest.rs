//! The validator never panics: flipped, overwritten and truncated versions of a valid program
//! either validate or return an error, and whatever validates can be read end to end.

#[path = "block_program/sample.rs"]
mod sample;

use aqueduct_abi::block_program::{BlockProgram, BlockProgramBuf, DecodedCommand, validate};
use proptest::prelude::*;

fn image() -> Vec<u8> {
    sample::sample().to_bytes()
}

/// Everything execution would read from a validated program.
fn walk(program: &BlockProgram<'_>) {
    let table = [0x1000u64; 4];
    for block in program.blocks() {
        let _ = block.terminator();
        let _ = block.rodata();
        for source in block.sources() {
            let _ = source.resolve(&table);
        }
        let _ = block.patches().count();
        for command in block.commands() {
            let decoded = command.decode().expect("validated commands decode");
            let _ = decoded.execution_cost();
            match decoded {
                DecodedCommand::Dispatch(d) => {
                    assert_eq!(block.dispatch_patches(&d).count(), usize::from(d.patch_count));
                    assert_eq!(block.dispatch_sources(&d).count(), usize::from(d.source_count));
                    if d.strategy().is_some_and(|s| s.uses_template()) {
                        assert!(block.template(&d).is_some_and(|t| t.len() >= usize::from(d.kernarg_size)));
                    }
                    assert!(block.constants(&d).is_some());
                }
                DecodedCommand::Update(u) => assert!(block.update_payload(&u).is_some()),
                DecodedCommand::Branch(b) => assert!(program.block(b.target_block).is_some()),
                DecodedCommand::CondBranch(c) => {
                    for value in [0, 1, u64::MAX] {
                        assert!(c.next_block(value).and_then(|target| program.block(target)).is_some());
                    }
                }
                _ => {}
            }
        }
    }
    let _ = BlockProgramBuf::from_program(program);
}

fn check(bytes: &[u8]) {
    if let Ok(program) = validate(bytes) {
        walk(&program);
    }
}

/// Values that tend to hit boundaries when written over counts and offsets.
fn interesting_u32() -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(0u32),
        Just(1),
        Just(8),
        Just(64),
        Just(0xFFFF),
        Just(0x1_0000),
        Just(0x7FFF_FFFF),
        Just(u32::MAX),
        any::<u32>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn flipped_bytes_never_panic(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8)) {
        let mut bytes = image();
        for (at, mask) in flips {
            let at = at % bytes.len();
            bytes[at] ^= mask | 1;
        }
        check(&bytes);
    }

    #[test]
    fn overwritten_words_never_panic(writes in proptest::collection::vec((any::<usize>(), interesting_u32()), 1..4)) {
        let mut bytes = image();
        for (at, value) in writes {
            let at = (at % (bytes.len() / 4)) * 4;
            bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
        }
        check(&bytes);
    }

    #[test]
    fn truncated_or_extended_images_never_panic(length in 0usize..2048, flip in any::<(usize, u8)>()) {
        let mut bytes = image();
        bytes.resize(length, 0);
        if !bytes.is_empty() {
            let at = flip.0 % bytes.len();
            bytes[at] ^= flip.1;
        }
        check(&bytes);
    }
}

#[test]
fn the_sample_walks_cleanly() {
    let bytes = image();
    walk(&validate(&bytes).unwrap());
}

// ---------------------------------------------------------------------------------------------
// The hostile-input campaign: structured lies in the fields the validator reads, with the error
// kinds tallied (`--nocapture` prints them) and the heap each read takes measured.

use std::cell::{Cell, RefCell};

#[path = "../../tests/support/peak_heap.rs"]
mod peak_heap;

use peak_heap::measured;
#[path = "../../tests/support/mutation.rs"]
mod mutation;

use mutation::{kind_of, lie};

use std::collections::BTreeMap;

use proptest::test_runner::{Config, TestRunner};

/// A field of the image: offset, width (0 for a cut point) and the structure it belongs to.
#[derive(Clone, Copy)]
struct Field {
    at: usize,
    width: usize,
    region: &'static str,
}

const PROGRAM_HEADER_FIELDS: &[(usize, usize)] = &[(0, 4), (4, 2), (6, 2), (8, 4), (12, 4), (16, 4), (20, 4), (24, 8)];
const BLOCK_HEADER_FIELDS: &[(usize, usize)] = &[
    (0, 4),
    (4, 2),
    (6, 1),
    (7, 1),
    (8, 4),
    (12, 4),
    (16, 4),
    (20, 4),
    (24, 4),
    (28, 4),
    (32, 4),
    (36, 4),
    (40, 4),
    (44, 4),
    (48, 4),
    (52, 4),
    (56, 4),
    (60, 4),
];
/// The union of every command kind's field positions (byte 0 is the kind, byte 1 the flags).
const COMMAND_FIELDS: &[(usize, usize)] = &[
    (0, 1),
    (1, 1),
    (2, 1),
    (3, 1),
    (4, 2),
    (4, 4),
    (6, 2),
    (8, 4),
    (8, 8),
    (10, 2),
    (12, 4),
    (16, 4),
    (16, 8),
    (20, 4),
    (24, 8),
    (32, 4),
    (36, 4),
    (40, 4),
    (44, 4),
    (48, 2),
    (50, 2),
    (52, 2),
    (54, 2),
    (56, 2),
    (58, 2),
    (60, 2),
    (62, 2),
];
const SOURCE_FIELDS: &[(usize, usize)] = &[(0, 1), (1, 1), (4, 4), (8, 8)];
const PATCH_FIELDS: &[(usize, usize)] = &[(0, 4), (4, 2), (6, 2)];

fn u32_at(bytes: &[u8], at: usize) -> usize {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize
}

/// Every field of the valid image, by region (each region is then picked equally often).
fn regions(image: &[u8]) -> Vec<Vec<Field>> {
    let mut by_region: BTreeMap<&'static str, Vec<Field>> = BTreeMap::new();
    let mut push = |base: usize, layout: &[(usize, usize)], region: &'static str| {
        for &(offset, width) in layout {
            by_region.entry(region).or_default().push(Field { at: base + offset, width, region });
        }
    };
    push(0, PROGRAM_HEADER_FIELDS, "program header");
    let (count, table) = (u32_at(image, 12), u32_at(image, 16));
    let mut cuts = vec![0, 32, table, table + 4 * count, image.len() - 1];
    for ordinal in 0..count {
        push(table + 4 * ordinal, &[(0, 4)], "block table");
        let block = u32_at(image, table + 4 * ordinal);
        push(block, BLOCK_HEADER_FIELDS, "block header");
        let header = |field: usize| u32_at(image, block + field);
        let (commands, command_count) = (block + header(16), header(20));
        let (sources, source_count) = (block + header(24), header(28) + header(32));
        let (patches, patch_count) = (block + header(36), header(40));
        for index in 0..command_count {
            push(commands + 64 * index, COMMAND_FIELDS, "command");
        }
        for index in 0..source_count {
            push(sources + 16 * index, SOURCE_FIELDS, "binding source");
        }
        for index in 0..patch_count {
            push(patches + 8 * index, PATCH_FIELDS, "patch");
        }
        let rodata = block + header(44);
        cuts.extend([block, block + 64, commands, sources, patches, rodata, rodata + header(48), block + header(12)]);
    }
    push(0, &[], "cut");
    for at in cuts {
        by_region.entry("cut").or_default().push(Field { at, width: 0, region: "cut" });
    }
    by_region.into_values().collect()
}

#[test]
fn hostile_block_programs() {
    let cases: u32 = std::env::var("AQUEDUCT_HOSTILE_CASES").ok().and_then(|text| text.parse().ok()).unwrap_or(20_000);
    let original = image();
    let regions = regions(&original);
    let tried: RefCell<BTreeMap<&'static str, usize>> = RefCell::default();
    let outcomes: RefCell<BTreeMap<String, usize>> = RefCell::default();
    let worst_heap = Cell::new(0usize);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    runner
        .run(&proptest::collection::vec(mutation::edit(), 1..4), |edits| {
            let mut bytes = original.clone();
            for (field, choice, random) in mutation::chosen_fields(&regions, &edits, |field| field.width == 0) {
                *tried.borrow_mut().entry(field.region).or_default() += 1;
                if field.width == 0 {
                    bytes.truncate(field.at);
                    continue;
                }
                let Some(slot) = bytes.get_mut(field.at..field.at + field.width) else { continue };
                let mut raw = [0u8; 8];
                raw[..field.width].copy_from_slice(slot);
                let len = original.len() as u64;
                let value = lie(u64::from_le_bytes(raw), field.width, len, choice, random, len + 64);
                slot.copy_from_slice(&value.to_le_bytes()[..field.width]);
            }
            // The validator reads in place: it allocates nothing, whatever the image declares.
            let (result, heap) = measured(|| validate(&bytes).map(|_| ()));
            prop_assert_eq!(heap, 0, "validating {} bytes allocated", bytes.len());
            let kind = match &result {
                Ok(()) => "Ok".to_owned(),
                Err(error) => kind_of(error),
            };
            *outcomes.borrow_mut().entry(kind).or_default() += 1;
            // Whatever validates is read end to end; copying it out takes heap linear in its size.
            let ((), heap) = measured(|| check(&bytes));
            prop_assert!(heap <= 4096 + 16 * bytes.len(), "walking {} bytes took {heap}", bytes.len());
            worst_heap.set(worst_heap.get().max(heap));
            Ok(())
        })
        .unwrap();
    let tried = tried.into_inner();
    let outcomes = outcomes.into_inner();
    println!(
        "hostile block programs: {cases} cases of a {}-byte image; tried {:?}; outcomes {:?}; validate heap 0, walk heap at most {} bytes",
        original.len(),
        tried,
        outcomes,
        worst_heap.get()
    );
    for want in [
        "Ok",
        "Truncated",
        "BadMagic",
        "UnsupportedVersion",
        "CountMismatch",
        "InvalidField",
        "MisalignedSection",
        "SectionOutOfRange",
        "OrdinalMismatch",
        "UnknownCommandKind",
        "IndexOutOfRange",
    ] {
        assert!(outcomes.contains_key(want), "the campaign never produced {want}: {outcomes:?}");
    }
}
