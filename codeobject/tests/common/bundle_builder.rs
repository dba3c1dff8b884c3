//! Builds clang offload bundles for tests (shared by the codeobject and engine suites through
//! `#[path]`).

/// An uncompressed clang offload bundle of (entry ID, contents), laid out as
/// `clang-offload-bundler` writes one: the header, then each entry's bytes at a 16-byte aligned
/// offset.
pub fn build_bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let header_len: usize = 24 + 8 + entries.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
    let mut offset = header_len.next_multiple_of(16);
    let mut bytes = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    bytes.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    let mut placements = Vec::new();
    for (id, data) in entries {
        for field in [offset as u64, data.len() as u64, id.len() as u64] {
            bytes.extend_from_slice(&field.to_le_bytes());
        }
        bytes.extend_from_slice(id.as_bytes());
        placements.push(offset);
        offset = (offset + data.len()).next_multiple_of(16);
    }
    bytes.resize(offset, 0);
    for ((_, data), at) in entries.iter().zip(placements) {
        bytes[at..at + data.len()].copy_from_slice(data);
    }
    bytes
}
