//! Corrupted code objects: never a panic, always a typed error.

mod common;

use aqueduct_codeobject::{CodeObject, CodeObjectError, Feature, MetadataError, Processor, inspect_json, inspect_text};
use common::*;
use object::LittleEndian;
use object::read::elf::{FileHeader, SectionHeader};
use proptest::prelude::*;

const E_FLAGS: usize = 48;

fn patched(bytes: &[u8], at: usize, new: &[u8]) -> Vec<u8> {
    let mut copy = bytes.to_vec();
    copy[at..at + new.len()].copy_from_slice(new);
    copy
}

fn with_flags(bytes: &[u8], edit: impl Fn(u32) -> u32) -> Vec<u8> {
    let flags = u32::from_le_bytes(bytes[E_FLAGS..E_FLAGS + 4].try_into().unwrap());
    patched(bytes, E_FLAGS, &edit(flags).to_le_bytes())
}

/// File offset of the `index`th symbol of .symtab whose name is `name`.
fn symtab_entry(bytes: &[u8], name: &str) -> usize {
    let header = object::elf::FileHeader64::<LittleEndian>::parse(bytes).unwrap();
    let sections = header.sections(LittleEndian, bytes).unwrap();
    let symbols = sections.symbols(LittleEndian, bytes, object::elf::SHT_SYMTAB).unwrap();
    let (_, symtab) =
        sections.iter().enumerate().find(|(_, s)| s.sh_type(LittleEndian) == object::elf::SHT_SYMTAB).unwrap();
    let base = symtab.sh_offset(LittleEndian) as usize;
    for (index, symbol) in symbols.enumerate() {
        if symbols.symbol_name(LittleEndian, symbol).unwrap() == name.as_bytes() {
            return base + index.0 * 24;
        }
    }
    panic!("no symbol {name}");
}

#[test]
fn every_truncation_is_an_error() {
    for len in 0..GFX1100_V5.len() {
        assert!(CodeObject::parse(&GFX1100_V5[..len]).is_err(), "prefix {len}");
        assert!(inspect_json(&GFX1100_V5[..len]).is_err(), "prefix {len}");
    }
}

#[test]
fn header_errors() {
    assert_eq!(CodeObject::parse(b""), Err(CodeObjectError::NotElf));
    assert_eq!(CodeObject::parse(b"MZ\x90\x00"), Err(CodeObjectError::NotElf));
    // e_machine x86-64
    assert_eq!(
        CodeObject::parse(&patched(GFX1100_V5, 18, &0x3eu16.to_le_bytes())),
        Err(CodeObjectError::WrongMachine { machine: 0x3e })
    );
    assert_eq!(
        CodeObject::parse(&patched(GFX1100_V5, 18, &0x3eu16.to_le_bytes())).unwrap_err().to_string(),
        "ELF machine 0x3e is not AMDGPU (0xe0)"
    );
    assert_eq!(CodeObject::parse(&patched(GFX1100_V5, 4, &[1])), Err(CodeObjectError::NotElf64 { class: 1 }));
    assert_eq!(CodeObject::parse(&patched(GFX1100_V5, 5, &[2])), Err(CodeObjectError::NotLittleEndian));
    assert_eq!(CodeObject::parse(&patched(GFX1100_V5, 7, &[0])), Err(CodeObjectError::WrongOsAbi { os_abi: 0 }));
    for (abi_version, supported) in [(0u8, false), (1, false), (2, true), (3, true), (4, true), (5, false)] {
        let result = CodeObject::parse(&patched(GFX1100_V5, 8, &[abi_version]));
        if supported {
            // Header accepted; the metadata still parses either way.
            assert!(result.is_ok(), "abi {abi_version}: {result:?}");
        } else {
            assert_eq!(result, Err(CodeObjectError::UnsupportedVersion { abi_version }));
        }
    }
    assert!(CodeObject::parse(&patched(GFX1100_V5, 8, &[1])).unwrap_err().to_string().contains("only v4, v5 and v6"));
}

#[test]
fn e_flags_errors() {
    assert_eq!(
        CodeObject::parse(&with_flags(GFX1100_V5, |f| (f & !0xff) | 0x49)),
        Err(CodeObjectError::UnknownMach { mach: 0x49 })
    );
    // xnack "on" bits on gfx1100, which has no xnack.
    assert_eq!(
        CodeObject::parse(&with_flags(GFX1100_V5, |f| f | 0x300)),
        Err(CodeObjectError::UnsupportedFeatureFlag {
            processor: Processor::from_name("gfx1100").unwrap(),
            feature: Feature::Xnack
        })
    );
    // Generic version missing.
    assert_eq!(
        CodeObject::parse(&with_flags(GFX11_GENERIC_V6, |f| f & 0x00ff_ffff)),
        Err(CodeObjectError::MissingGenericVersion { processor: Processor::from_name("gfx11-generic").unwrap() })
    );
    // Generic processor in a v5 object.
    assert_eq!(
        CodeObject::parse(&patched(GFX11_GENERIC_V6, 8, &[3])),
        Err(CodeObjectError::GenericNeedsV6 { processor: Processor::from_name("gfx11-generic").unwrap() })
    );
    // ELF says xnack-, metadata says xnack+.
    let error = CodeObject::parse(&with_flags(GFX90A_XNACK_ON_V4, |f| (f & !0x300) | 0x200)).unwrap_err();
    assert!(matches!(error, CodeObjectError::TargetMismatch { .. }), "{error}");
    // A later generic version still parses and is reported.
    let newer = CodeObject::parse(&with_flags(GFX11_GENERIC_V6, |f| (f & 0x00ff_ffff) | (3 << 24))).unwrap();
    assert_eq!(newer.target().generic_version(), Some(3));
}

#[test]
fn missing_or_corrupt_metadata_note() {
    let (note_header, desc, len) = metadata_note_range(GFX1100_V5);
    // Change the note type from NT_AMDGPU_METADATA (32) to 33: no metadata left
    // (the PT_NOTE segment and the SHT_NOTE section share these bytes).
    let no_note = patched(GFX1100_V5, note_header + 8, &33u32.to_le_bytes());
    assert_eq!(CodeObject::parse(&no_note), Err(CodeObjectError::MissingMetadata));
    // Owner name changed.
    let other_owner = patched(GFX1100_V5, note_header + 12, b"AMDGPX");
    assert_eq!(CodeObject::parse(&other_owner), Err(CodeObjectError::MissingMetadata));
    // Garbage MessagePack.
    let garbage = patched(GFX1100_V5, desc, &vec![0xc1; len]);
    assert!(matches!(CodeObject::parse(&garbage), Err(CodeObjectError::Metadata(_))));
    // Note size larger than the file.
    let huge = patched(GFX1100_V5, note_header + 4, &u32::MAX.to_le_bytes());
    assert!(CodeObject::parse(&huge).is_err());
}

#[test]
fn metadata_errors_surface_through_parse() {
    // Rewrite ".wavefront_size: 32" of the first kernel to 33 in place
    // (positive fixint 32 = 0x20).
    let (_, desc, len) = metadata_note_range(GFX1100_V5);
    let note = &GFX1100_V5[desc..desc + len];
    let key = b"\xaf.wavefront_size";
    let at = note.windows(key.len()).position(|w| w == key).unwrap() + key.len();
    assert_eq!(note[at], 0x20);
    let bad = patched(GFX1100_V5, desc + at, &[0x21]);
    assert!(matches!(
        CodeObject::parse(&bad),
        Err(CodeObjectError::Metadata(MetadataError::InvalidWavefrontSize { size: 33, .. }))
    ));
}

#[test]
fn kernel_descriptor_symbol_errors() {
    // Rename fill.kd in the string table: the metadata's symbol is gone.
    let at = GFX1100_V5.windows(8).position(|w| w == b"fill.kd\0").unwrap();
    let renamed = patched(GFX1100_V5, at, b"fill.kx\0");
    assert_eq!(
        CodeObject::parse(&renamed),
        Err(CodeObjectError::MissingKernelDescriptor { kernel: "fill".into(), symbol: "fill.kd".into() })
    );

    let entry = symtab_entry(GFX1100_V5, "axpy.kd");
    let wrong_size = patched(GFX1100_V5, entry + 16, &32u64.to_le_bytes());
    assert_eq!(
        CodeObject::parse(&wrong_size),
        Err(CodeObjectError::KernelDescriptorSize { kernel: "axpy".into(), symbol: "axpy.kd".into(), size: 32 })
    );

    for address in [u64::MAX, u64::MAX - 63, 0, 0xd80 + 0x104 - 32] {
        let moved = patched(GFX1100_V5, entry + 8, &address.to_le_bytes());
        assert_eq!(
            CodeObject::parse(&moved),
            Err(CodeObjectError::KernelDescriptorOutOfBounds { kernel: "axpy".into(), symbol: "axpy.kd".into() }),
            "address {address:#x}"
        );
    }
}

#[test]
fn unrecognized_input_for_inspect() {
    assert!(inspect_json(b"hello world").is_err());
    assert!(inspect_text(&[]).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn flipped_bytes_never_panic(flips in proptest::collection::vec((0usize..7064, any::<u8>()), 1..8)) {
        let mut bytes = GFX1100_V5.to_vec();
        for (at, value) in flips {
            let at = at % bytes.len();
            bytes[at] ^= value | 1;
        }
        let _ = CodeObject::parse(&bytes);
        let _ = inspect_json(&bytes);
    }

    #[test]
    fn flipped_metadata_bytes_never_panic(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6)) {
        let (_, desc, len) = metadata_note_range(GFX1100_V5);
        let mut bytes = GFX1100_V5.to_vec();
        for (at, value) in flips {
            bytes[desc + at % len] ^= value | 1;
        }
        let _ = CodeObject::parse(&bytes);
    }

    #[test]
    fn random_bytes_are_rejected(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        prop_assert!(CodeObject::parse(&bytes).is_err());
        prop_assert!(inspect_json(&bytes).is_err());
    }

    #[test]
    fn random_bytes_behind_elf_header_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let mut bytes = GFX1100_V5[..64].to_vec();
        bytes.extend_from_slice(&tail);
        let _ = CodeObject::parse(&bytes);
    }
}
