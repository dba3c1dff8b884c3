//! Clang offload bundles (`__CLANG_OFFLOAD_BUNDLE__`), standalone or in a
//! host ELF's `.hip_fatbin` section.

use object::read::elf::{FileHeader, SectionHeader};
use object::{Endianness, elf};

use crate::target::{ISA_PREFIX, TargetId};

/// Magic of an uncompressed bundle.
pub const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
/// Magic of a compressed bundle (`clang-offload-bundler -compress`).
pub const COMPRESSED_BUNDLE_MAGIC: &[u8; 4] = b"CCOB";
/// The host section that holds bundles.
pub const FATBIN_SECTION: &str = ".hip_fatbin";

/// Why bundle bytes were rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BundleError {
    /// The bytes where a bundle should start do not begin with [`BUNDLE_MAGIC`].
    #[error("not a clang offload bundle (bad magic at byte {offset})")]
    BadMagic {
        /// Where the bundle should start: 0 for a raw bundle, the offset
        /// into the `.hip_fatbin` section for a host ELF.
        offset: usize,
    },
    /// The bundle starts with [`COMPRESSED_BUNDLE_MAGIC`]; compressed bundles are not supported.
    #[error("compressed offload bundles (CCOB) are not supported; rebuild without --offload-compress")]
    Compressed,
    /// The data ends inside a bundle header; holds what was being read
    /// (e.g. `"entry count"`, `"triple"`).
    #[error("offload bundle is truncated: {0}")]
    Truncated(&'static str),
    #[error("bundle entry {index} (`{triple}`): bytes {offset}+{size} lie outside the bundle")]
    /// An entry's contents (`offset`, `size`) do not lie inside the bundle.
    EntryOutOfBounds {
        /// The entry's position in the bundle header.
        index: usize,
        /// The entry's triple.
        triple: String,
        /// The entry's offset from the start of the bundle.
        offset: u64,
        /// The entry's size in bytes.
        size: u64,
    },
    #[error("bundle entries {first} and {second} share bytes; a bundler writes each entry's contents once")]
    /// Two entries' contents share bytes.
    OverlappingEntries {
        /// The lower index of the two entries.
        first: usize,
        /// The higher index of the two entries.
        second: usize,
    },
    #[error("bundle entry {index}: triple is not UTF-8")]
    /// An entry's triple is not valid UTF-8.
    InvalidTriple {
        /// The entry's position in the bundle header.
        index: usize,
    },
    /// The host file could not be read as an ELF file; holds the `object` crate's message.
    #[error("host file is not an ELF file this crate can read: {0}")]
    MalformedHostElf(String),
    /// The host ELF has no [`FATBIN_SECTION`] section.
    #[error("host ELF has no {FATBIN_SECTION} section")]
    NoFatbinSection,
}

/// One bundle: its entries in header order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bundle<'a> {
    /// The entries, in header order.
    pub entries: Vec<BundleEntry<'a>>,
}

/// One entry of a bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleEntry<'a> {
    /// Offload kind plus target triple, e.g.
    /// `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+` or `host-x86_64-unknown-linux-gnu-`.
    pub triple: String,
    /// The code object, for `amdgcn` entries with data.
    pub code_object: Option<&'a [u8]>,
}

impl BundleEntry<'_> {
    /// The target ID named by an `amdgcn-amd-amdhsa--` triple, if it parses.
    pub fn target_id(&self) -> Option<TargetId> {
        let (_, target) = self.triple.split_once(ISA_PREFIX)?;
        TargetId::parse(target).ok()
    }
}

/// Bounds-checked little-endian reader.
struct Reader<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize, what: &'static str) -> Result<&'a [u8], BundleError> {
        let end = self.position.checked_add(len).ok_or(BundleError::Truncated(what))?;
        let slice = self.bytes.get(self.position..end).ok_or(BundleError::Truncated(what))?;
        self.position = end;
        Ok(slice)
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, BundleError> {
        let mut raw = [0u8; 8];
        raw.copy_from_slice(self.take(8, what)?);
        Ok(u64::from_le_bytes(raw))
    }
}

/// Parses one bundle that starts at `bytes[0]`.
pub fn parse_bundle(bytes: &[u8]) -> Result<Bundle<'_>, BundleError> {
    parse_bundle_with_end(bytes).map(|(bundle, _)| bundle)
}

/// Parses a bundle and also returns where its last byte of content ends.
fn parse_bundle_with_end(bytes: &[u8]) -> Result<(Bundle<'_>, usize), BundleError> {
    if bytes.starts_with(COMPRESSED_BUNDLE_MAGIC) {
        return Err(BundleError::Compressed);
    }
    if !bytes.starts_with(BUNDLE_MAGIC) {
        return Err(BundleError::BadMagic { offset: 0 });
    }
    let mut reader = Reader { bytes, position: BUNDLE_MAGIC.len() };
    let count = reader.u64("entry count")?;
    // Each entry header takes at least 24 bytes; refuse counts the data
    // cannot hold before reserving memory for them.
    let remaining = bytes.len().saturating_sub(reader.position) as u64;
    if count > remaining / 24 {
        return Err(BundleError::Truncated("entry headers"));
    }
    let count = usize::try_from(count).map_err(|_| BundleError::Truncated("entry headers"))?;
    let mut entries = Vec::with_capacity(count);
    // (start, stop, index) of every entry with contents, to refuse shared bytes below.
    let mut extents = Vec::with_capacity(count);
    let mut end = 0usize;
    for index in 0..count {
        let offset = reader.u64("entry offset")?;
        let size = reader.u64("entry size")?;
        let triple_len = reader.u64("triple length")?;
        let triple_len = usize::try_from(triple_len).map_err(|_| BundleError::Truncated("triple"))?;
        let triple = reader.take(triple_len, "triple")?;
        let triple = std::str::from_utf8(triple).map_err(|_| BundleError::InvalidTriple { index })?.to_owned();
        let out_of_bounds = || BundleError::EntryOutOfBounds { index, triple: triple.clone(), offset, size };
        let start = usize::try_from(offset).map_err(|_| out_of_bounds())?;
        let stop = usize::try_from(size).ok().and_then(|size| start.checked_add(size)).ok_or_else(out_of_bounds)?;
        let data = bytes.get(start..stop).ok_or_else(out_of_bounds)?;
        end = end.max(stop);
        if start < stop {
            extents.push((start, stop, index));
        }
        let is_amdgcn = triple.split('-').nth(1) == Some("amdgcn");
        let code_object = (is_amdgcn && !data.is_empty()).then_some(data);
        entries.push(BundleEntry { triple, code_object });
    }
    // Entries whose contents overlap would let a small file name one code object thousands of
    // times, and every reader that parses each entry (inspect does) would do that work again for
    // each: refuse them, so the work stays linear in the file's size.
    extents.sort_unstable();
    if let Some(pair) = extents.windows(2).find(|pair| pair[1].0 < pair[0].1) {
        let (first, second) = (pair[0].2.min(pair[1].2), pair[0].2.max(pair[1].2));
        return Err(BundleError::OverlappingEntries { first, second });
    }
    Ok((Bundle { entries }, end.max(reader.position)))
}

/// Parses every bundle in a host ELF's `.hip_fatbin` section. Bundles are
/// concatenated, each padded (with zeros) to the next alignment boundary.
pub fn parse_bundles(host_elf: &[u8]) -> Result<Vec<Bundle<'_>>, BundleError> {
    let fatbin = fatbin_section(host_elf)?;
    let mut bundles = Vec::new();
    let mut position = 0usize;
    loop {
        // Skip the zero padding between bundles.
        while fatbin.get(position) == Some(&0) {
            position += 1;
        }
        let Some(rest) = fatbin.get(position..).filter(|rest| !rest.is_empty()) else {
            break;
        };
        let (bundle, end) = parse_bundle_with_end(rest).map_err(|error| match error {
            BundleError::BadMagic { .. } => BundleError::BadMagic { offset: position },
            other => other,
        })?;
        bundles.push(bundle);
        position = position.checked_add(end).ok_or(BundleError::Truncated("bundle"))?;
    }
    Ok(bundles)
}

/// The `.hip_fatbin` section data of a host ELF (32 or 64 bit, either endianness).
pub(crate) fn fatbin_section(host_elf: &[u8]) -> Result<&[u8], BundleError> {
    let malformed = |error: object::read::Error| BundleError::MalformedHostElf(error.to_string());
    match host_elf.get(4) {
        Some(&class) if class == elf::ELFCLASS32.0 => {
            section_data::<elf::FileHeader32<Endianness>>(host_elf).map_err(malformed)?
        }
        _ => section_data::<elf::FileHeader64<Endianness>>(host_elf).map_err(malformed)?,
    }
    .ok_or(BundleError::NoFatbinSection)
}

fn section_data<Header: FileHeader<Endian = Endianness>>(data: &[u8]) -> object::read::Result<Option<&[u8]>> {
    let header = Header::parse(data)?;
    let endian = header.endian()?;
    let sections = header.sections(endian, data)?;
    match sections.section_by_name(endian, FATBIN_SECTION.as_bytes()) {
        Some((_, section)) => section.data(endian, data).map(Some),
        None => Ok(None),
    }
}
