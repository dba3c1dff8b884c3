//! Hostile bundles: truncated, flipped, oversized, of another version, or with garbage that passes
//! the checksum. Each gives a typed error, never a panic, and reading stays within bounded memory.

use std::cell::Cell;

#[path = "../../tests/support/peak_heap.rs"]
mod peak_heap;

use peak_heap::measured;
#[path = "../../tests/support/mutation.rs"]
mod mutation;

use mutation::{kind_of, lie};

use aqueduct_profile::sample::sample_bundle;
use aqueduct_profile::*;
use proptest::prelude::*;

/// Reading any input of these tests never holds more than this above what was live before.
const MEMORY_BOUND: usize = 1 << 20;

/// Reads the whole bundle; returns the first error, and checks the memory it took.
fn read(bytes: &[u8]) -> Result<usize, CaptureFileError> {
    let (result, peak) = measured(|| {
        ProfileReader::new(bytes).and_then(|reader| {
            let mut count = 0;
            for record in reader {
                record?;
                count += 1;
            }
            Ok(count)
        })
    });
    assert!(peak < MEMORY_BOUND, "reading {} bytes took {peak} bytes of heap", bytes.len());
    result
}

const PREAMBLE: usize = 12;
const CHUNK_HEADER: usize = 16;

/// Appends a chunk with a correct checksum, as the writer would.
fn push_chunk(bytes: &mut Vec<u8>, kind: u8, records: u32, payload: &[u8]) {
    let mut header = [0u8; CHUNK_HEADER];
    header[0] = kind;
    header[4..8].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    header[8..12].copy_from_slice(&records.to_le_bytes());
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&header[..12]);
    hasher.update(payload);
    header[12..16].copy_from_slice(&hasher.finalize().to_le_bytes());
    bytes.extend_from_slice(&header);
    bytes.extend_from_slice(payload);
}

/// The sample's preamble and header chunk, without records or end chunk.
fn preamble_and_header() -> Vec<u8> {
    let bundle = sample_bundle();
    let header_length = u32::from_le_bytes(bundle[PREAMBLE + 4..PREAMBLE + 8].try_into().unwrap()) as usize;
    bundle[..PREAMBLE + CHUNK_HEADER + header_length].to_vec()
}

#[test]
fn the_sample_reads_whole() {
    assert_eq!(read(&sample_bundle()).unwrap(), 24);
}

#[test]
fn truncation_at_every_length_is_reported_as_truncation() {
    let bundle = sample_bundle();
    for length in 0..bundle.len() {
        match read(&bundle[..length]) {
            Err(CaptureFileError::Truncated { .. }) => {}
            other => panic!("cut to {length} of {} bytes: {other:?}", bundle.len()),
        }
    }
}

#[test]
fn every_single_byte_flip_is_caught_by_the_region_it_hits() {
    let bundle = sample_bundle();
    for position in 0..bundle.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut mutated = bundle.clone();
            mutated[position] ^= flip;
            let result = read(&mutated);
            match position {
                0..8 => assert!(matches!(result, Err(CaptureFileError::BadMagic { .. })), "{position}: {result:?}"),
                8..10 => assert!(
                    matches!(
                        result,
                        Err(CaptureFileError::NewerVersion { .. } | CaptureFileError::UnsupportedVersion { .. })
                    ),
                    "{position}: {result:?}"
                ),
                // The minor version: any minor of major 1 reads.
                10..12 => assert_eq!(result.unwrap(), 24, "{position}"),
                _ => assert!(
                    matches!(
                        result,
                        Err(CaptureFileError::ChecksumMismatch { .. }
                            | CaptureFileError::ChunkTooLarge { .. }
                            | CaptureFileError::Truncated { .. })
                    ),
                    "{position} ^ {flip:#x}: {result:?}"
                ),
            }
        }
    }
}

#[test]
fn huge_length_fields_are_refused_or_truncated_without_allocating_them() {
    let mut bundle = sample_bundle();
    let records_chunk = {
        let header_length = u32::from_le_bytes(bundle[PREAMBLE + 4..PREAMBLE + 8].try_into().unwrap()) as usize;
        PREAMBLE + CHUNK_HEADER + header_length
    };
    bundle[records_chunk + 4..records_chunk + 8].copy_from_slice(&u32::MAX.to_le_bytes());
    match read(&bundle) {
        Err(CaptureFileError::ChunkTooLarge { length: u32::MAX, limit: MAX_CHUNK_PAYLOAD, .. }) => {}
        other => panic!("{other:?}"),
    }
    // At the limit, the length is legal but the data is not there: truncated, and the read buffer
    // grew only as far as the data.
    bundle[records_chunk + 4..records_chunk + 8].copy_from_slice(&MAX_CHUNK_PAYLOAD.to_le_bytes());
    assert!(matches!(read(&bundle), Err(CaptureFileError::Truncated { .. })));
}

#[test]
fn versions_newer_and_never_released_are_refused_and_newer_minors_read() {
    let mut bundle = sample_bundle();
    bundle[8..10].copy_from_slice(&2u16.to_le_bytes());
    let error = read(&bundle).unwrap_err();
    assert!(matches!(error, CaptureFileError::NewerVersion { supported_major: 1, .. }), "{error:?}");
    assert!(error.to_string().contains("2.0"), "{error}");
    bundle[8..10].copy_from_slice(&0u16.to_le_bytes());
    assert!(matches!(read(&bundle), Err(CaptureFileError::UnsupportedVersion { .. })));
    bundle[8..10].copy_from_slice(&1u16.to_le_bytes());
    bundle[10..12].copy_from_slice(&9u16.to_le_bytes());
    let reader = ProfileReader::new(bundle.as_slice()).unwrap();
    assert_eq!(reader.version(), FormatVersion { major: 1, minor: 9 });
    assert_eq!(reader.count(), 24);
}

#[test]
fn not_a_profile_is_bad_magic() {
    assert!(matches!(read(b"{\"traceEvents\": []}"), Err(CaptureFileError::BadMagic { .. })));
    assert!(matches!(read(b"\x7fELF"), Err(CaptureFileError::BadMagic { .. })));
}

#[test]
fn unknown_chunk_kinds_are_skipped_and_structure_errors_are_malformed() {
    let record = rmp_record(&Record::Dropped(Dropped { queue: 1, count: 2 }));
    let mut bundle = preamble_and_header();
    push_chunk(&mut bundle, 200, 0, b"from a newer minor version");
    push_chunk(&mut bundle, 2, 1, &record);
    let mut finished = bundle.clone();
    push_chunk(&mut finished, 3, 0, &1u64.to_le_bytes());
    assert_eq!(read(&finished).unwrap(), 1);

    let mut miscounted = bundle.clone();
    push_chunk(&mut miscounted, 3, 0, &5u64.to_le_bytes());
    assert!(matches!(read(&miscounted), Err(CaptureFileError::Malformed { .. })));

    let mut trailing = finished.clone();
    trailing.push(0);
    assert!(matches!(read(&trailing), Err(CaptureFileError::Malformed { .. })));

    let mut two_headers = preamble_and_header();
    let header_chunk = two_headers[PREAMBLE..].to_vec();
    two_headers.extend_from_slice(&header_chunk);
    assert!(matches!(read(&two_headers), Err(CaptureFileError::Malformed { .. })));

    let mut no_header = sample_bundle()[..PREAMBLE].to_vec();
    push_chunk(&mut no_header, 2, 1, &record);
    assert!(matches!(read(&no_header), Err(CaptureFileError::Malformed { .. })));
}

#[test]
fn fields_a_newer_minor_version_adds_are_ignored() {
    // A `dropped` record as a later minor version might write it, with one more field.
    #[derive(serde::Serialize)]
    #[serde(rename_all = "kebab-case")]
    enum FutureRecord {
        Dropped { queue: u32, count: u64, reason: &'static str },
    }
    let payload =
        rmp_serde::to_vec_named(&FutureRecord::Dropped { queue: 4, count: 9, reason: "writer fell behind" }).unwrap();
    let mut bundle = preamble_and_header();
    push_chunk(&mut bundle, 2, 1, &payload);
    push_chunk(&mut bundle, 3, 0, &1u64.to_le_bytes());
    let records: Vec<Record> = ProfileReader::new(bundle.as_slice()).unwrap().map(Result::unwrap).collect();
    assert_eq!(records, [Record::Dropped(Dropped { queue: 4, count: 9 })]);
}

#[test]
fn a_chunk_of_many_small_records_is_decoded_one_at_a_time() {
    let record = rmp_record(&Record::Dropped(Dropped { queue: 1, count: 2 }));
    let count = (256 << 10) / record.len();
    // Decoded all at once, the chunk's records would take more than the bound by themselves.
    assert!(count * std::mem::size_of::<Record>() > MEMORY_BOUND);
    let mut bundle = preamble_and_header();
    push_chunk(&mut bundle, 2, count as u32, &record.repeat(count));
    push_chunk(&mut bundle, 3, 0, &(count as u64).to_le_bytes());
    assert_eq!(read(&bundle).unwrap(), count);
}

#[test]
fn record_counts_that_disagree_with_the_payload_are_undecodable() {
    let record = rmp_record(&Record::Dropped(Dropped { queue: 1, count: 2 }));
    for declared in [0, 2, u32::MAX] {
        let mut bundle = preamble_and_header();
        push_chunk(&mut bundle, 2, declared, &record);
        push_chunk(&mut bundle, 3, 0, &1u64.to_le_bytes());
        assert!(matches!(read(&bundle), Err(CaptureFileError::Undecodable { .. })), "declared {declared}");
    }
}

fn rmp_record(record: &Record) -> Vec<u8> {
    // The same encoding as the writer: a bundle of one record, cut out of its records chunk.
    let mut writer = ProfileWriter::new(Vec::new(), &sample::sample_header()).unwrap();
    writer.append(record).unwrap();
    let bytes = writer.finish().unwrap();
    let start = preamble_and_header().len();
    let length = u32::from_le_bytes(bytes[start + 4..start + 8].try_into().unwrap()) as usize;
    bytes[start + CHUNK_HEADER..start + CHUNK_HEADER + length].to_vec()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_mutations_never_panic_and_any_real_change_is_an_error(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let original = sample_bundle();
        let mut mutated = original.clone();
        for (position, value) in &edits {
            mutated[position.index(original.len())] = *value;
        }
        if truncate {
            mutated.truncate(cut.index(original.len()));
        }
        let changed_outside_minor = mutated.len() < original.len()
            || mutated.iter().zip(&original).enumerate().any(|(index, (a, b))| a != b && !(10..12).contains(&index));
        let result = read(&mutated);
        if changed_outside_minor {
            prop_assert!(result.is_err(), "{result:?}");
        } else {
            prop_assert_eq!(result.unwrap(), 24);
        }
    }

    #[test]
    fn garbage_that_passes_the_checksum_is_undecodable_not_a_panic(
        payload in proptest::collection::vec(any::<u8>(), 0..512),
        declared in 0u32..64,
    ) {
        let mut bundle = preamble_and_header();
        push_chunk(&mut bundle, 2, declared, &payload);
        push_chunk(&mut bundle, 3, 0, &u64::from(declared).to_le_bytes());
        match read(&bundle) {
            Ok(count) => prop_assert_eq!(count, declared as usize),
            Err(CaptureFileError::Undecodable { .. }) => {}
            Err(other) => prop_assert!(false, "{other:?}"),
        }
    }

    #[test]
    fn garbage_headers_are_undecodable_not_a_panic(payload in proptest::collection::vec(any::<u8>(), 0..512)) {
        let mut bundle = sample_bundle()[..PREAMBLE].to_vec();
        push_chunk(&mut bundle, 1, 1, &payload);
        push_chunk(&mut bundle, 3, 0, &0u64.to_le_bytes());
        let result = read(&bundle);
        prop_assert!(matches!(result, Err(CaptureFileError::Undecodable { .. })), "{:?}", result);
    }
}

// ---------------------------------------------------------------------------------------------
// The structured campaign: lies in the fields the reader trusts, with each chunk's checksum
// recomputed (as a forger would) for most of them so the lie reaches the MessagePack decoder.

mod campaign {
    use std::cell::RefCell;
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    use super::*;

    /// A field: offset, width (0 for a cut point), big-endian or not, its region, and the chunk
    /// (payload start, payload length, header offset) whose checksum covers it.
    #[derive(Clone, Copy)]
    struct Field {
        at: usize,
        width: usize,
        big_endian: bool,
        region: &'static str,
        chunk: Option<usize>,
    }

    /// Chunk header offsets of the sample.
    fn chunks(bundle: &[u8]) -> Vec<usize> {
        let mut at = PREAMBLE;
        let mut out = Vec::new();
        while at + CHUNK_HEADER <= bundle.len() {
            out.push(at);
            at += CHUNK_HEADER + u32::from_le_bytes(bundle[at + 4..at + 8].try_into().unwrap()) as usize;
        }
        out
    }

    fn regions(bundle: &[u8]) -> Vec<Vec<Field>> {
        let mut fields = vec![
            Field { at: 0, width: 8, big_endian: false, region: "preamble", chunk: None },
            Field { at: 8, width: 2, big_endian: false, region: "preamble", chunk: None },
            Field { at: 10, width: 2, big_endian: false, region: "preamble", chunk: None },
        ];
        for at in chunks(bundle) {
            let length = u32::from_le_bytes(bundle[at + 4..at + 8].try_into().unwrap()) as usize;
            for (offset, width, region) in
                [(0, 1, "chunk kind"), (1, 1, "chunk header"), (4, 4, "chunk length"), (8, 4, "chunk record count")]
            {
                fields.push(Field { at: at + offset, width, big_endian: false, region, chunk: Some(at) });
            }
            fields.push(Field { at: at + 12, width: 4, big_endian: false, region: "chunk checksum", chunk: None });
            for cut in [at, at + CHUNK_HEADER, at + CHUNK_HEADER + length / 2] {
                fields.push(Field { at: cut, width: 0, big_endian: false, region: "cut", chunk: None });
            }
            let payload = &bundle[at + CHUNK_HEADER..at + CHUNK_HEADER + length];
            if bundle[at] == 3 {
                let region = "end chunk count";
                fields.push(Field { at: at + CHUNK_HEADER, width: 8, big_endian: false, region, chunk: Some(at) });
            } else {
                // A chunk's payload is a run of MessagePack records up to its end.
                mutation::messagepack_fields(payload, None, |offset, width, region| {
                    let big_endian = region == "messagepack length";
                    fields.push(Field { at: at + CHUNK_HEADER + offset, width, big_endian, region, chunk: Some(at) });
                });
            }
        }
        let mut by_region: BTreeMap<&'static str, Vec<Field>> = BTreeMap::new();
        for field in fields {
            by_region.entry(field.region).or_default().push(field);
        }
        by_region.into_values().collect()
    }

    /// Recomputes the checksum of the chunk whose header is at `at`, over what is left of it.
    fn reseal(bytes: &mut [u8], at: usize) {
        let Some(header) = bytes.get(at..at + CHUNK_HEADER) else { return };
        let length = u32::from_le_bytes(header[4..8].try_into().unwrap()) as usize;
        let end = (at + CHUNK_HEADER).saturating_add(length).min(bytes.len());
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&bytes[at..at + 12]);
        hasher.update(&bytes[at + CHUNK_HEADER..end]);
        bytes[at + 12..at + 16].copy_from_slice(&hasher.finalize().to_le_bytes());
    }

    /// Replacement markers: other types, the 32-bit length forms, and the reserved 0xc1.
    const MARKERS: [u8; 16] =
        [0xc0, 0xc1, 0xc2, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xd9, 0xdb, 0xdd, 0xdf, 0xc6, 0xcf, 0xff];

    #[test]
    fn hostile_profile_bundles() {
        let cases: u32 =
            std::env::var("AQUEDUCT_HOSTILE_CASES").ok().and_then(|text| text.parse().ok()).unwrap_or(10_000);
        let original = sample_bundle();
        let regions = regions(&original);
        let tried: RefCell<BTreeMap<&'static str, usize>> = RefCell::default();
        let outcomes: RefCell<BTreeMap<String, usize>> = RefCell::default();
        let worst_heap = Cell::new(0usize);
        let strategy = (proptest::collection::vec(mutation::edit(), 1..4), prop::bool::weighted(0.85));
        let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
        runner
            .run(&strategy, |(edits, forge)| {
                let mut bytes = original.clone();
                let mut touched = Vec::new();
                for (field, choice, random) in mutation::chosen_fields(&regions, &edits, |field| field.width == 0) {
                    *tried.borrow_mut().entry(field.region).or_default() += 1;
                    if field.width == 0 {
                        bytes.truncate(field.at);
                        continue;
                    }
                    let Some(slot) = bytes.get_mut(field.at..field.at + field.width) else { continue };
                    let mut raw = [0u8; 8];
                    if field.big_endian {
                        raw[8 - field.width..].copy_from_slice(slot);
                    } else {
                        raw[..field.width].copy_from_slice(slot);
                    }
                    let current = if field.big_endian { u64::from_be_bytes(raw) } else { u64::from_le_bytes(raw) };
                    let special = if field.region == "messagepack marker" {
                        u64::from(MARKERS[(random % 16) as usize])
                    } else {
                        u64::from(MAX_CHUNK_PAYLOAD)
                    };
                    let value = lie(current, field.width, original.len() as u64, choice, random, special);
                    if field.big_endian {
                        slot.copy_from_slice(&value.to_be_bytes()[8 - field.width..]);
                    } else {
                        slot.copy_from_slice(&value.to_le_bytes()[..field.width]);
                    }
                    touched.extend(field.chunk);
                }
                if forge {
                    for at in touched {
                        reseal(&mut bytes, at);
                    }
                }
                // read() asserts the 1 MiB bound; this campaign holds the reader to a tighter one,
                // linear in the input (its chunks are a few KB).
                let (result, peak) = measured(|| read(&bytes));
                prop_assert!(peak <= (64 << 10) + 16 * bytes.len(), "{} bytes took {peak} bytes of heap", bytes.len());
                worst_heap.set(worst_heap.get().max(peak));
                let kind = match result {
                    Ok(_) => "Ok".to_owned(),
                    Err(error) => kind_of(&error),
                };
                *outcomes.borrow_mut().entry(kind).or_default() += 1;
                Ok(())
            })
            .unwrap();
        let (tried, outcomes) = (tried.into_inner(), outcomes.into_inner());
        println!(
            "hostile profile bundles: {cases} cases of a {}-byte bundle; tried {tried:?}; outcomes {outcomes:?}; heap at most {} bytes",
            original.len(),
            worst_heap.get()
        );
        for want in [
            "Ok",
            "BadMagic",
            "Truncated",
            "ChecksumMismatch",
            "ChunkTooLarge",
            "Undecodable",
            "Malformed",
            "NewerVersion",
        ] {
            assert!(outcomes.contains_key(want), "the campaign never produced {want}: {outcomes:?}");
        }
    }
}

/// Every input once found to misbehave is refused, within a heap far below the 1 MiB bound.
///
/// `wait-array16-hint.aqprof`: the campaign turned a `waits` array's marker into array16, whose
/// length (0x4649) then came from the record's next bytes, and forged the checksum. serde's `Vec`
/// reserved for the declared 17,993 elements (capped at 1 MiB) before finding the record
/// undecodable: 1,051,980 bytes of heap for a 3,356-byte file.
#[test]
fn regression_fixtures_are_refused_in_little_memory() {
    let directory = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hostile");
    let mut seen = 0;
    for entry in std::fs::read_dir(directory).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let (result, peak) = measured(|| read(&bytes));
        assert!(result.is_err(), "{}: {result:?}", path.display());
        assert!(peak < 64 << 10, "{}: {peak} bytes of heap", path.display());
        seen += 1;
    }
    assert!(seen > 0, "no fixtures in {directory}");
}
