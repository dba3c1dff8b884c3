//! The validator never panics: flipped, overwritten and truncated versions of a valid program
//! either validate or return an error, and whatever validates can be read end to end.

#[path = "block_program/sample.rs"]
mod sample;

use aqueduct_abi::block_program::{BlockProgram, BlockProgramBuf, DecodedCommand, validate};
use proptest::prelude::*;

fn image() -> Vec<u8> {
    sample::sample().to_bytes()
}

/// Everything replay would read from a validated program.
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
            let _ = decoded.replay_cost();
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
