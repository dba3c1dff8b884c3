//! Every record type survives the file, across chunk boundaries, and the writer's chunks stay
//! bounded.

use aqueduct_profile::sample::{sample_bundle, sample_header, sample_records};
use aqueduct_profile::*;

fn read_all(bytes: &[u8]) -> (BundleHeader, Vec<Record>) {
    let reader = ProfileReader::new(bytes).expect("a valid bundle opens");
    let header = reader.header().clone();
    let records = reader.collect::<Result<Vec<_>, _>>().expect("a valid bundle reads");
    (header, records)
}

#[test]
fn every_record_type_round_trips() {
    let records = sample_records();
    let kinds: std::collections::BTreeSet<&str> = records
        .iter()
        .map(|record| match record {
            Record::QueueEvent(_) => "queue",
            Record::DeviceQueueEvent(_) => "device",
            Record::Dispatch(_) => "dispatch",
            Record::Executable(_) => "executable",
            Record::Counter(_) => "counter",
            Record::Dropped(_) => "dropped",
        })
        .collect();
    assert_eq!(kinds.len(), 6, "the sample holds every record type: {kinds:?}");
    let (header, read) = read_all(&sample_bundle());
    assert_eq!(header, sample_header());
    assert_eq!(read, records);
}

#[test]
fn every_wait_resolution_and_optional_field_round_trips() {
    let resolutions = [
        WaitResolution::Satisfied,
        WaitResolution::SameQueue,
        WaitResolution::CoveredByFrontier,
        WaitResolution::DeviceBarrier { producer_queue: u32::MAX, producer_epoch: u64::MAX },
        WaitResolution::Deferred,
    ];
    let operations = OperationKind::ALL.iter().copied();
    let mut records = Vec::new();
    for (index, operation) in operations.enumerate() {
        records.push(Record::QueueEvent(QueueEvent {
            queue: index as u32,
            operation,
            epoch: u64::MAX - index as u64,
            waits: resolutions.iter().map(|&resolution| Wait { semaphore: 5, value: 6, resolution }).collect(),
            signals: vec![Signal { semaphore: u64::MAX, value: 0 }],
            packets: 3,
            kernarg_bytes: 1 << 40,
            submit_entry_ns: 1,
            published_ns: 2,
            completion_seen_ns: if index % 2 == 0 { None } else { Some(3) },
        }));
    }
    records.push(Record::Executable(ExecutableMetadata {
        executable: 1,
        code_object_hash: CodeObjectHash([0xab; 32]),
        target: "gfx90a:sramecc+:xnack-".to_string(),
        code_object_version: 5,
        kernels: vec![KernelMetadata {
            symbol: "ünïcode, \"quoted\"".to_string(),
            kernarg_size: 1,
            group_segment_size: 2,
            private_segment_size: 3,
            required_workgroup_size: Some([1, 2, 3]),
            workgroup_size_hint: None,
        }],
    }));
    let mut writer = ProfileWriter::new(Vec::new(), &sample_header()).unwrap();
    records.iter().for_each(|record| writer.append(record).unwrap());
    assert_eq!(writer.records(), records.len() as u64);
    let (_, read) = read_all(&writer.finish().unwrap());
    assert_eq!(read, records);
}

#[test]
fn small_chunk_targets_split_records_into_many_bounded_chunks() {
    let records: Vec<Record> = (0..500u64)
        .map(|index| {
            Record::Counter(CounterSample { queue: 0, timestamp_ns: index, name: "packets".into(), value: index })
        })
        .collect();
    let mut writer = ProfileWriter::with_chunk_target(Vec::new(), &sample_header(), 256).unwrap();
    records.iter().for_each(|record| writer.append(record).unwrap());
    let bytes = writer.finish().unwrap();
    // Walk the chunk headers: the layout docs/PROFILE_FORMAT.md gives.
    let mut offset = 12;
    let mut kinds = Vec::new();
    while offset < bytes.len() {
        let length = u32::from_le_bytes(bytes[offset + 4..offset + 8].try_into().unwrap()) as usize;
        kinds.push((bytes[offset], length));
        offset += 16 + length;
    }
    assert_eq!(offset, bytes.len());
    assert_eq!(kinds.first().map(|kind| kind.0), Some(1), "the header chunk first");
    assert_eq!(kinds.last(), Some(&(3, 8)), "the end chunk last, holding the record count");
    let record_chunks: Vec<usize> = kinds.iter().filter(|kind| kind.0 == 2).map(|kind| kind.1).collect();
    assert!(record_chunks.len() > 20, "{} chunks", record_chunks.len());
    // A chunk closes on the record that reaches the target, so it exceeds it by under one record.
    assert!(record_chunks.iter().all(|&length| length < 256 + 64), "{record_chunks:?}");
    let (_, read) = read_all(&bytes);
    assert_eq!(read, records);
}

#[test]
fn an_empty_capture_reads_as_no_records() {
    let bytes = ProfileWriter::new(Vec::new(), &sample_header()).unwrap().finish().unwrap();
    let (header, records) = read_all(&bytes);
    assert_eq!(header, sample_header());
    assert!(records.is_empty());
}

#[test]
fn a_writer_dropped_unfinished_keeps_its_records_and_reads_as_truncated() {
    let mut bytes = Vec::new();
    {
        let mut writer = ProfileWriter::new(&mut bytes, &sample_header()).unwrap();
        writer.append(&Record::Dropped(Dropped { queue: 2, count: 5 })).unwrap();
    }
    let mut reader = ProfileReader::new(bytes.as_slice()).unwrap();
    assert_eq!(reader.next().unwrap().unwrap(), Record::Dropped(Dropped { queue: 2, count: 5 }));
    assert!(matches!(reader.next(), Some(Err(CaptureFileError::Truncated { .. }))));
    assert!(reader.next().is_none(), "the reader stops after an error");
}

#[test]
fn the_encoding_is_pinned_to_the_documented_bytes() {
    // docs/PROFILE_FORMAT.md's example: changing these bytes is a format change (see Versioning).
    let mut writer = ProfileWriter::new(Vec::new(), &sample_header()).unwrap();
    writer.append(&Record::Dropped(Dropped { queue: 1, count: 2 })).unwrap();
    let bytes = writer.finish().unwrap();
    assert_eq!(&bytes[..12], b"\x89AQPROF\n\x01\x00\x00\x00");
    let end = &bytes[bytes.len() - 24..];
    assert_eq!(&end[..12], b"\x03\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00");
    assert_eq!(&end[16..], 1u64.to_le_bytes());
    let payload: &[u8] = b"\x81\xa7dropped\x82\xa5queue\x01\xa5count\x02";
    let records_chunk = &bytes[bytes.len() - 24 - 16 - payload.len()..bytes.len() - 24];
    assert_eq!(
        &records_chunk[..12],
        [&[2u8, 0, 0, 0][..], &(payload.len() as u32).to_le_bytes(), &1u32.to_le_bytes()].concat()
    );
    assert_eq!(&records_chunk[12..16], crc32fast::hash(&[&records_chunk[..12], payload].concat()).to_le_bytes());
    assert_eq!(&records_chunk[16..], payload);
}

/// Each kind is written under its name (`OperationKind::name`, which the CLI and Perfetto show),
/// and a profile written before `execute` was the name still reads.
#[test]
fn operation_kinds_are_written_by_name_and_the_old_execute_name_reads() {
    for &kind in OperationKind::ALL {
        let bytes = rmp_serde::to_vec(&kind).expect("encodes");
        assert_eq!(rmp_serde::from_slice::<String>(&bytes).expect("a string"), kind.name());
        assert_eq!(rmp_serde::from_slice::<OperationKind>(&bytes).expect("decodes"), kind);
    }
    let old = rmp_serde::to_vec(&"command-buffer-execution").expect("encodes");
    assert_eq!(rmp_serde::from_slice::<OperationKind>(&old).expect("decodes"), OperationKind::Execute);
}
