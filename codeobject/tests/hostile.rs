//! Hostile-input campaigns: structured mutations of the real code objects (the fixtures and the
//! device library's prebuilt objects), of clang offload bundles raw and inside a host ELF.
//!
//! Unlike `corrupt.rs`, which flips bytes anywhere, each mutation here lands on a field the parser
//! reads (ELF header, program and section headers, note sizes, symbols, MessagePack markers and
//! lengths, bundle counts, offsets, sizes and triple lengths) or cuts the file at a structure
//! boundary, and writes a value chosen to lie: zero, all ones, one past the file, a huge count.
//! Every parse must end in a typed error or a valid object, without a panic, and its peak heap
//! must stay within a linear bound of the input's real size. Each campaign tallies the error
//! kinds it saw, prints them (`--nocapture`), and asserts that the kinds it aims at occurred.
//!
//! The default budget keeps the set within seconds in a debug build; `AQUEDUCT_HOSTILE_CASES=N`
//! runs N cases per campaign instead.

mod common;

use std::cell::{Cell, RefCell};

#[path = "../../tests/support/peak_heap.rs"]
mod peak_heap;

// The MessagePack walker; this campaign keeps its own lies and error kinds (`Lie`, `kind_of`).
#[path = "../../tests/support/mutation.rs"]
#[allow(dead_code)]
mod mutation;

use peak_heap::measured;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::time::{Duration, Instant};

use aqueduct_codeobject::{
    BundleError, CodeObject, CodeObjectError, InspectError, inspect_json, inspect_text, parse_bundle, parse_bundles,
};
use common::*;
use object::LittleEndian;
use object::read::elf::{FileHeader, ProgramHeader, SectionHeader};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

// ---------------------------------------------------------------------------------------------

/// Heap a parse may take: a constant plus a multiple of the input's real size. MessagePack
/// decodes into one `ValueRef` (tens of bytes) per input byte at worst, and vectors double.
fn heap_bound(input_len: usize) -> usize {
    (1 << 20) + 160 * input_len
}

// ---------------------------------------------------------------------------------------------
// Budget and tallies.

/// Cases per campaign: `AQUEDUCT_HOSTILE_CASES`, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("AQUEDUCT_HOSTILE_CASES").ok().and_then(|text| text.parse().ok()).unwrap_or(default)
}

/// The kind of an error from its `Debug` text: the variant path, e.g. `Metadata::MissingField`.
/// For `MalformedElf` (whose payload is the `object` crate's message, a fixed set of texts) the
/// message is kept, since it says which ELF structure was refused.
fn kind_of(error: &impl Debug) -> String {
    let text = format!("{error:?}");
    let mut kind = String::new();
    let mut rest = text.as_str();
    loop {
        let end = rest.find(|c: char| !c.is_ascii_alphanumeric() && c != '_').unwrap_or(rest.len());
        if !kind.is_empty() {
            kind.push_str("::");
        }
        kind.push_str(&rest[..end]);
        rest = &rest[end..];
        if let Some(inner) = rest.strip_prefix('(')
            && inner.starts_with(|c: char| c.is_ascii_uppercase())
        {
            rest = inner;
            continue;
        }
        if let Some(message) = rest.strip_prefix("(\"")
            && kind.ends_with("MalformedElf")
        {
            let message = message.split('"').next().unwrap_or_default();
            kind.push_str(&format!("({message})"));
        }
        return kind;
    }
}

#[derive(Default)]
struct Tally {
    /// Mutations tried, by where they landed.
    tried: BTreeMap<&'static str, usize>,
    /// Outcomes, by error kind (`Ok` for inputs that still parse).
    outcomes: BTreeMap<String, usize>,
    slowest: Duration,
    peak_ratio: f64,
}

impl Tally {
    fn outcome<T, E: Debug>(&mut self, result: &Result<T, E>) {
        let kind = match result {
            Ok(_) => "Ok".to_owned(),
            Err(error) => kind_of(error),
        };
        *self.outcomes.entry(kind).or_default() += 1;
    }

    fn print(&self, campaign: &str, cases: u32) {
        let tried: Vec<String> = self.tried.iter().map(|(k, n)| format!("{k}={n}")).collect();
        let outcomes: Vec<String> = self.outcomes.iter().map(|(k, n)| format!("{k}={n}")).collect();
        println!(
            "hostile {campaign}: {cases} cases; tried [{}]; outcomes [{}]; slowest parse {:?}; peak heap {:.1}x input",
            tried.join(", "),
            outcomes.join(", "),
            self.slowest,
            self.peak_ratio
        );
    }

    /// Fails unless every kind in `expected` (a prefix of a tallied kind) was seen.
    fn assert_saw(&self, campaign: &str, expected: &[&str]) {
        for want in expected {
            assert!(
                self.outcomes.keys().any(|kind| kind.starts_with(want)),
                "campaign {campaign} never produced {want}; outcomes: {:?}",
                self.outcomes
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Where the fields are.

/// A field of the input: where it is, how wide (1, 2, 4 or 8 bytes; 0 for a cut point), and
/// which structure it belongs to.
#[derive(Clone, Copy, Debug)]
struct Field {
    at: usize,
    width: usize,
    region: &'static str,
}

fn push_fields(fields: &mut Vec<Field>, base: usize, layout: &[(usize, usize)], region: &'static str, len: usize) {
    for &(offset, width) in layout {
        if base + offset + width <= len {
            fields.push(Field { at: base + offset, width, region });
        }
    }
}

const ELF_HEADER: &[(usize, usize)] = &[
    (4, 1),
    (5, 1),
    (6, 1),
    (7, 1),
    (8, 1),
    (16, 2),
    (18, 2),
    (20, 4),
    (24, 8),
    (32, 8),
    (40, 8),
    (48, 4),
    (52, 2),
    (54, 2),
    (56, 2),
    (58, 2),
    (60, 2),
    (62, 2),
];
const PROGRAM_HEADER: &[(usize, usize)] = &[(0, 4), (4, 4), (8, 8), (16, 8), (32, 8), (40, 8), (48, 8)];
const SECTION_HEADER: &[(usize, usize)] =
    &[(0, 4), (4, 4), (8, 8), (16, 8), (24, 8), (32, 8), (40, 4), (44, 4), (48, 8), (56, 8)];
const SYMBOL: &[(usize, usize)] = &[(0, 4), (4, 1), (5, 1), (6, 2), (8, 8), (16, 8)];
const NOTE_HEADER: &[(usize, usize)] = &[(0, 4), (4, 4), (8, 4)];

/// The fields of an ELF64 little-endian file at `base` in `bytes`: header, program headers,
/// section headers, notes, symbols, and (in the metadata note) every MessagePack marker.
fn elf_fields(bytes: &[u8], base: usize, fields: &mut Vec<Field>) {
    let elf = &bytes[base..];
    let len = bytes.len();
    push_fields(fields, base, ELF_HEADER, "elf header", len);
    fields.push(Field { at: base + 64, width: 0, region: "cut" });
    let Ok(header) = object::elf::FileHeader64::<LittleEndian>::parse(elf) else {
        return;
    };
    let e = LittleEndian;
    let phoff = header.e_phoff.get(e) as usize;
    if let Ok(segments) = header.program_headers(e, elf) {
        for (index, segment) in segments.iter().enumerate() {
            let at = base + phoff + index * 56;
            push_fields(fields, at, PROGRAM_HEADER, "program header", len);
            fields.push(Field { at, width: 0, region: "cut" });
            if let Ok(Some(notes)) = segment.notes(e, elf) {
                note_fields(bytes, base + segment.p_offset(e) as usize, notes, fields);
            }
        }
    }
    let shoff = header.e_shoff.get(e) as usize;
    if let Ok(sections) = header.sections(e, elf) {
        for (index, section) in sections.iter().enumerate() {
            let at = base + shoff + index * 64;
            push_fields(fields, at, SECTION_HEADER, "section header", len);
            fields.push(Field { at, width: 0, region: "cut" });
            let start = base + section.sh_offset(e) as usize;
            fields.push(Field { at: start, width: 0, region: "cut" });
            fields.push(Field { at: start + section.sh_size(e) as usize, width: 0, region: "cut" });
            let kind = section.sh_type(e);
            if kind == object::elf::SHT_SYMTAB || kind == object::elf::SHT_DYNSYM {
                let count = section.sh_size(e) as usize / 24;
                for symbol in 0..count.min(64) {
                    push_fields(fields, start + symbol * 24, SYMBOL, "symbol", len);
                }
            }
        }
    }
}

fn note_fields(
    bytes: &[u8],
    segment_start: usize,
    mut notes: object::read::elf::NoteIterator<'_, object::elf::FileHeader64<LittleEndian>>,
    fields: &mut Vec<Field>,
) {
    let mut at = segment_start;
    while let Ok(Some(note)) = notes.next() {
        push_fields(fields, at, NOTE_HEADER, "note header", bytes.len());
        fields.push(Field { at, width: 0, region: "cut" });
        let desc = note.desc();
        let desc_at = desc.as_ptr() as usize - bytes.as_ptr() as usize;
        if note.name() == b"AMDGPU" && note.n_type(LittleEndian).0 == 32 {
            // The metadata is one MessagePack map.
            mutation::messagepack_fields(desc, Some(1), |at, width, region| {
                fields.push(Field { at: desc_at + at, width, region })
            });
        }
        at = (desc_at + desc.len()).next_multiple_of(4);
    }
}

/// The fields of a clang offload bundle at `base`: the entry count, each entry's offset, size
/// and triple length, a byte of each triple, and the code objects' own fields.
fn bundle_fields(bytes: &[u8], base: usize, fields: &mut Vec<Field>) {
    let read = |at: usize| bytes.get(at..at + 8).map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap()) as usize);
    fields.push(Field { at: base, width: 8, region: "bundle magic" });
    fields.push(Field { at: base + 24, width: 8, region: "bundle entry count" });
    let count = read(base + 24);
    let mut at = base + 32;
    for _ in 0..count.min(16) {
        fields.push(Field { at, width: 8, region: "bundle entry offset" });
        fields.push(Field { at: at + 8, width: 8, region: "bundle entry size" });
        fields.push(Field { at: at + 16, width: 8, region: "bundle triple length" });
        fields.push(Field { at, width: 0, region: "cut" });
        let (offset, size, triple) = (read(at), read(at + 8), read(at + 16));
        fields.push(Field { at: at + 24, width: 1, region: "bundle triple" });
        fields.push(Field { at: base + offset, width: 0, region: "cut" });
        fields.push(Field { at: base + offset + size, width: 0, region: "cut" });
        if size >= 64 && bytes.get(base + offset..base + offset + 4) == Some(b"\x7fELF") {
            elf_fields(bytes, base + offset, fields);
        }
        at += 24 + triple;
    }
}

// ---------------------------------------------------------------------------------------------
// Mutations.

/// What to write over a field.
#[derive(Clone, Copy, Debug)]
enum Lie {
    Zero,
    AllOnes,
    /// The top bit alone (a huge count, a negative size).
    TopBit,
    /// The input's length, or one past it (an offset or size that just misses).
    FileLength(u64),
    /// The current value plus a small delta (a size off by a few, an off-by-one count).
    Nudge(i8),
    /// The current value times 2^k (a declared count far above what is there).
    Scale(u8),
    /// One flipped bit.
    Flip(u8),
    Random(u64),
}

fn lie() -> impl Strategy<Value = Lie> {
    prop_oneof![
        Just(Lie::Zero),
        Just(Lie::AllOnes),
        Just(Lie::TopBit),
        (0u64..2).prop_map(Lie::FileLength),
        any::<i8>().prop_map(Lie::Nudge),
        (1u8..40).prop_map(Lie::Scale),
        any::<u8>().prop_map(Lie::Flip),
        any::<u64>().prop_map(Lie::Random),
    ]
}

/// A MessagePack marker to write over another: other types, the 32-bit length forms (whose
/// length then comes from the bytes after them), and the reserved 0xc1.
fn messagepack_marker(seed: u8) -> u8 {
    const MARKERS: [u8; 16] =
        [0xc0, 0xc1, 0xc2, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xd9, 0xdb, 0xdd, 0xdf, 0xc6, 0xcf, 0xff];
    MARKERS[usize::from(seed) % MARKERS.len()]
}

fn apply(bytes: &mut Vec<u8>, field: Field, lie: Lie) {
    if field.width == 0 {
        bytes.truncate(field.at);
        return;
    }
    let Some(slot) = bytes.get_mut(field.at..field.at + field.width) else {
        return;
    };
    // Markers are replaced, by another type or a 32-bit length form, for some of the lies.
    if field.region == "messagepack marker" {
        match lie {
            Lie::Flip(seed) => return slot[0] = messagepack_marker(seed),
            Lie::Random(value) => return slot[0] = messagepack_marker(value as u8),
            _ => {}
        }
    }
    // Length fields of MessagePack are big-endian; every other field is little-endian.
    let big_endian = field.region == "messagepack length";
    let mut raw = [0u8; 8];
    if big_endian {
        raw[8 - field.width..].copy_from_slice(slot);
    } else {
        raw[..field.width].copy_from_slice(slot);
    }
    let current = if big_endian { u64::from_be_bytes(raw) } else { u64::from_le_bytes(raw) };
    let bits = (field.width * 8) as u32;
    let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let value = match lie {
        Lie::Zero => 0,
        Lie::AllOnes => u64::MAX,
        Lie::TopBit => 1 << (bits - 1),
        Lie::FileLength(extra) => INPUT_LEN.with(Cell::get) + extra,
        Lie::Nudge(delta) => current.wrapping_add_signed(i64::from(delta)),
        Lie::Scale(shift) => current.max(1).wrapping_shl(u32::from(shift)),
        Lie::Flip(bit) => current ^ (1 << (u32::from(bit) % bits)),
        Lie::Random(value) => value,
    } & mask;
    let out = if big_endian { value.to_be_bytes() } else { value.to_le_bytes() };
    if big_endian {
        slot.copy_from_slice(&out[8 - field.width..]);
    } else {
        slot.copy_from_slice(&out[..field.width]);
    }
}

thread_local! {
    /// The length of the input being mutated, for [`Lie::FileLength`].
    static INPUT_LEN: Cell<u64> = const { Cell::new(0) };
}

/// The fields of an input grouped by region, so each region is picked as often as any other
/// (a metadata note has hundreds of markers, a file one header).
struct Regions(Vec<Vec<Field>>);

impl Regions {
    fn new(fields: Vec<Field>) -> Regions {
        let mut groups: BTreeMap<&'static str, Vec<Field>> = BTreeMap::new();
        for field in fields {
            groups.entry(field.region).or_default().push(field);
        }
        Regions(groups.into_values().collect())
    }

    fn pick(&self, region: prop::sample::Index, field: prop::sample::Index) -> Field {
        let group = &self.0[region.index(self.0.len())];
        group[field.index(group.len())]
    }
}

type Edit = (prop::sample::Index, prop::sample::Index, Lie);

/// Applies up to three field lies (a cut among them, perhaps) to `original`, tallying where they
/// landed.
fn mutate(original: &[u8], regions: &Regions, edits: &[Edit], tally: &mut Tally) -> Vec<u8> {
    INPUT_LEN.with(|len| len.set(original.len() as u64));
    let mut bytes = original.to_vec();
    // Cuts last, so a cut does not hide the edits before it.
    let mut chosen: Vec<(Field, Lie)> =
        edits.iter().map(|(region, field, lie)| (regions.pick(*region, *field), *lie)).collect();
    chosen.sort_by_key(|(field, _)| field.width == 0);
    for (field, lie) in chosen {
        *tally.tried.entry(field.region).or_default() += 1;
        apply(&mut bytes, field, lie);
    }
    bytes
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    proptest::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>(), lie()), 1..4)
}

// ---------------------------------------------------------------------------------------------
// The inputs.

const PREBUILT: &[&[u8]] = &[
    include_bytes!("../../builtins/prebuilt/amdgcn-amd-amdhsa--gfx9-generic.hsaco"),
    include_bytes!("../../builtins/prebuilt/amdgcn-amd-amdhsa--gfx90a.hsaco"),
    include_bytes!("../../builtins/prebuilt/amdgcn-amd-amdhsa--gfx942.hsaco"),
    include_bytes!("../../builtins/prebuilt/amdgcn-amd-amdhsa--gfx10-1-generic.hsaco"),
    include_bytes!("../../builtins/prebuilt/amdgcn-amd-amdhsa--gfx1030.hsaco"),
    include_bytes!("../../builtins/prebuilt/amdgcn-amd-amdhsa--gfx10-3-generic.hsaco"),
    include_bytes!("../../builtins/prebuilt/amdgcn-amd-amdhsa--gfx11-generic.hsaco"),
    include_bytes!("../../builtins/prebuilt/amdgcn-amd-amdhsa--gfx1100.hsaco"),
    include_bytes!("../../builtins/prebuilt/amdgcn-amd-amdhsa--gfx12-generic.hsaco"),
];

fn code_objects() -> Vec<(&'static [u8], Regions)> {
    let fixtures = [
        GFX90A_XNACK_ON_V4,
        GFX90A_XNACK_OFF_V5,
        GFX942_V5,
        GFX1100_V5,
        GFX11_GENERIC_V6,
        GFX9_GENERIC_V6,
        OPENCL_GFX1100_V5,
    ];
    fixtures
        .into_iter()
        .chain(PREBUILT.iter().copied())
        .map(|bytes| {
            assert!(CodeObject::parse(bytes).is_ok(), "every base input parses before it is mutated");
            let mut fields = Vec::new();
            elf_fields(bytes, 0, &mut fields);
            (bytes, Regions::new(fields))
        })
        .collect()
}

fn check_heap(input_len: usize, peak: usize, tally: &mut Tally) {
    assert!(peak <= heap_bound(input_len), "a {input_len}-byte input took {peak} bytes of heap");
    tally.peak_ratio = tally.peak_ratio.max(peak as f64 / input_len.max(1) as f64);
}

fn timed<T>(tally: &mut Tally, parse: impl FnOnce() -> T) -> (T, usize) {
    let start = Instant::now();
    let out = measured(parse);
    tally.slowest = tally.slowest.max(start.elapsed());
    out
}

// ---------------------------------------------------------------------------------------------
// Campaigns.

#[test]
fn hostile_code_objects() {
    let inputs = code_objects();
    let cases = cases(10_000);
    let tally = RefCell::new(Tally::default());
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    runner
        .run(&(any::<prop::sample::Index>(), edits()), |(which, edits)| {
            let (original, fields) = &inputs[which.index(inputs.len())];
            let tally = &mut *tally.borrow_mut();
            let bytes = mutate(original, fields, &edits, tally);
            let (result, peak) = timed(tally, || CodeObject::parse(&bytes));
            check_heap(bytes.len(), peak, tally);
            tally.outcome(&result);
            // The inspect report walks the same parse and then reads every kernel.
            let (report, peak) = timed(tally, || inspect_json(&bytes));
            check_heap(bytes.len(), peak, tally);
            prop_assert_eq!(report.is_ok(), result.is_ok());
            let (text, peak) = timed(tally, || inspect_text(&bytes));
            check_heap(bytes.len(), peak, tally);
            prop_assert_eq!(text.is_ok(), result.is_ok());
            Ok(())
        })
        .unwrap();
    let tally = tally.into_inner();
    tally.print("code objects", cases);
    tally.assert_saw(
        "code objects",
        &[
            "Ok",
            "MalformedElf",
            "NotElf64",
            "WrongMachine",
            "UnsupportedVersion",
            "UnknownMach",
            "MissingMetadata",
            "Metadata::MessagePack",
            "Metadata::WrongType",
            "MissingKernelDescriptor",
            "KernelDescriptorOutOfBounds",
        ],
    );
}

#[test]
fn hostile_offload_bundles() {
    let mut raw_fields = Vec::new();
    bundle_fields(BUNDLE, 0, &mut raw_fields);
    let mut host_fields = Vec::new();
    elf_fields(HOST_WITH_FATBIN, 0, &mut host_fields);
    let fatbin = fatbin_offset(HOST_WITH_FATBIN);
    bundle_fields(HOST_WITH_FATBIN, fatbin, &mut host_fields);
    let inputs: [(&[u8], Regions, bool); 2] =
        [(BUNDLE, Regions::new(raw_fields), false), (HOST_WITH_FATBIN, Regions::new(host_fields), true)];
    let cases = cases(5_000);
    let tally = RefCell::new(Tally::default());
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    runner
        .run(&(any::<bool>(), edits()), |(host, edits)| {
            let (original, fields, in_host) = &inputs[usize::from(host)];
            let tally = &mut *tally.borrow_mut();
            let bytes = mutate(original, fields, &edits, tally);
            if *in_host {
                let (result, peak) = timed(tally, || parse_bundles(&bytes).map(|bundles| bundles.len()));
                check_heap(bytes.len(), peak, tally);
                tally.outcome(&result);
            } else {
                let (result, peak) = timed(tally, || parse_bundle(&bytes).map(|bundle| bundle.entries.len()));
                check_heap(bytes.len(), peak, tally);
                tally.outcome(&result);
            }
            // inspect parses every bundled code object too.
            let (report, peak) = timed(tally, || inspect_json(&bytes));
            check_heap(bytes.len(), peak, tally);
            let (text, peak) = timed(tally, || inspect_text(&bytes));
            check_heap(bytes.len(), peak, tally);
            prop_assert_eq!(text.is_ok(), report.is_ok());
            if let Err(error @ InspectError::BundledCodeObject { .. }) = &report {
                tally.outcome::<(), _>(&Err(error.clone()));
            }
            Ok(())
        })
        .unwrap();
    let tally = tally.into_inner();
    tally.print("offload bundles", cases);
    tally.assert_saw(
        "offload bundles",
        &[
            "Ok",
            "Truncated",
            "EntryOutOfBounds",
            "InvalidTriple",
            "BadMagic",
            "MalformedHostElf",
            "BundledCodeObject",
            "OverlappingEntries",
        ],
    );
}

/// File offset of the host ELF's `.hip_fatbin` section data.
fn fatbin_offset(host: &[u8]) -> usize {
    let e = LittleEndian;
    let header = object::elf::FileHeader64::<LittleEndian>::parse(host).unwrap();
    let sections = header.sections(e, host).unwrap();
    let (_, section) = sections.section_by_name(e, b".hip_fatbin").unwrap();
    section.sh_offset(e) as usize
}

/// Counts that lie by orders of magnitude, written where each parser reads one: none may
/// allocate what is declared.
#[test]
fn declared_counts_far_beyond_the_input_are_refused_within_its_size() {
    let mut tally = Tally::default();
    for count in [u64::from(u32::MAX), 1 << 40, u64::MAX] {
        let mut bundle = BUNDLE.to_vec();
        bundle[24..32].copy_from_slice(&count.to_le_bytes());
        let (result, peak) = measured(|| parse_bundle(&bundle).map(|b| b.entries.len()));
        check_heap(bundle.len(), peak, &mut tally);
        assert_eq!(result, Err(BundleError::Truncated("entry headers")));
        let mut triple = BUNDLE.to_vec();
        triple[32 + 16..32 + 24].copy_from_slice(&count.to_le_bytes());
        assert!(matches!(parse_bundle(&triple), Err(BundleError::Truncated(_))));
    }
    // An array32 / map32 of 2^32 - 1 elements at the root of the metadata.
    let (_, desc, _) = metadata_note_range(GFX1100_V5);
    for marker in [0xdd, 0xdf, 0xdb, 0xc6] {
        let mut bytes = GFX1100_V5.to_vec();
        bytes[desc] = marker;
        bytes[desc + 1..desc + 5].copy_from_slice(&u32::MAX.to_be_bytes());
        let (result, peak) = measured(|| CodeObject::parse(&bytes));
        check_heap(bytes.len(), peak, &mut tally);
        assert!(matches!(result, Err(CodeObjectError::Metadata(_))), "{result:?}");
    }
}

/// Every input once found to misbehave (and the hand-made liars above, kept as files) parses to
/// an error under every entry point.
#[test]
fn regression_fixtures_are_refused() {
    let directory = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hostile");
    let mut seen = 0;
    for entry in std::fs::read_dir(directory).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let mut tally = Tally::default();
        let (result, peak) = measured(|| CodeObject::parse(&bytes));
        check_heap(bytes.len(), peak, &mut tally);
        assert!(result.is_err(), "{}", path.display());
        let (_, peak) = measured(|| (parse_bundle(&bytes).is_err(), parse_bundles(&bytes).is_err()));
        check_heap(bytes.len(), peak, &mut tally);
        let (report, peak) = measured(|| inspect_json(&bytes));
        check_heap(bytes.len(), peak, &mut tally);
        assert!(report.is_err(), "{}", path.display());
        seen += 1;
    }
    assert!(seen > 0, "no fixtures in {directory}");
}

/// 4096 entries that all name the same 7 KB code object (a 236 KB file): before bundles with
/// overlapping entries were refused, `inspect` parsed that object 4096 times and wrote a 10 MB
/// report (0.9 s in a debug build). The work is entries times object size, so it grows with the
/// square of the file's size: a few MB naming a large object would take hours.
#[test]
fn entries_sharing_bytes_are_refused() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hostile/bundle-4096-entries-share-one-object.bin");
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(parse_bundle(&bytes), Err(BundleError::OverlappingEntries { first: 0, second: 1 }));
    assert!(matches!(inspect_json(&bytes), Err(InspectError::Bundle(BundleError::OverlappingEntries { .. }))));
    // The clang-built bundle's entries are disjoint, as the bundler writes them.
    assert_eq!(parse_bundle(BUNDLE).unwrap().entries.len(), 3);
}
