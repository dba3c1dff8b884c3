//! The values the hostile-input campaigns write over a field, how they name the error they got
//! back, and where a MessagePack document's markers and lengths are. Included by path (`#[path = ".../tests/support/mutation.rs"] mod mutation;`) from
//! each crate's campaign.

use proptest::prelude::*;

/// One edit of a campaign: which region, which field in it, the lie's choice and its random value.
pub type Edit = (prop::sample::Index, prop::sample::Index, u8, u64);

/// Any [`Edit`].
#[allow(dead_code)] // the code-object campaign draws its own
pub fn edit() -> impl Strategy<Value = Edit> {
    (any::<prop::sample::Index>(), any::<prop::sample::Index>(), any::<u8>(), any::<u64>())
}

/// The fields `edits` pick from `regions`, each with its choice and random value, cut points
/// (`is_cut`) last so that a cut does not hide the edits before it.
#[allow(dead_code)] // the code-object campaign draws its own
pub fn chosen_fields<F: Copy>(regions: &[Vec<F>], edits: &[Edit], is_cut: impl Fn(&F) -> bool) -> Vec<(F, u8, u64)> {
    let mut fields: Vec<(F, u8, u64)> = edits
        .iter()
        .map(|(region, field, choice, random)| {
            let group = &regions[region.index(regions.len())];
            (group[field.index(group.len())], *choice, *random)
        })
        .collect();
    fields.sort_by_key(|(field, _, _)| is_cut(field));
    fields
}

/// What to write over a `width`-byte field holding `current` in an input of `input_len` bytes,
/// by `choice`: zero, all ones, the top bit alone, the input's length, `special` (a lie that
/// means something to this format), a value two off the current one, the current one scaled up,
/// one flipped bit, or `random`.
pub fn lie(current: u64, width: usize, input_len: u64, choice: u8, random: u64, special: u64) -> u64 {
    let bits = (width * 8) as u32;
    let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let value = match choice % 9 {
        0 => 0,
        1 => u64::MAX,
        2 => 1 << (bits - 1),
        3 => input_len,
        4 => special,
        5 => current.wrapping_add(random % 5).wrapping_sub(2),
        6 => current.max(1).wrapping_shl(1 + (random % 31) as u32),
        7 => current ^ (1 << (random % u64::from(bits))),
        _ => random,
    };
    value & mask
}

/// The variant name of an error, from its `Debug` text.
pub fn kind_of(error: &impl std::fmt::Debug) -> String {
    let text = format!("{error:?}");
    text.split(|c: char| !c.is_ascii_alphanumeric()).next().unwrap_or_default().to_owned()
}

/// Every marker of the MessagePack values at the start of `doc`, and each marker's big-endian
/// length field, as `found(offset, width, region)` with region `messagepack marker` or
/// `messagepack length`: the first `values` values with their contents, or (`None`) everything
/// up to the end of `doc`. Stops at an ext type or the reserved 0xc1, which the documents the
/// campaigns mutate never hold.
#[allow(dead_code)] // not every campaign walks MessagePack
pub fn messagepack_fields(doc: &[u8], values: Option<usize>, mut found: impl FnMut(usize, usize, &'static str)) {
    let mut position = 0usize;
    // Values left to read: arrays and maps add their element counts.
    let mut pending = values.unwrap_or(usize::MAX);
    while pending > 0 && position < doc.len() {
        pending -= 1;
        let marker = doc[position];
        let be = |from: usize, width: usize| -> usize {
            doc.get(from..from + width).map_or(0, |b| b.iter().fold(0usize, |v, &x| v << 8 | usize::from(x)))
        };
        // (length-field width, payload bytes, child values)
        let (length_width, payload, children) = match marker {
            0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => (0, 0, 0),
            0x80..=0x8f => (0, 0, 2 * usize::from(marker & 0x0f)),
            0x90..=0x9f => (0, 0, usize::from(marker & 0x0f)),
            0xa0..=0xbf => (0, usize::from(marker & 0x1f), 0),
            0xcc | 0xd0 => (0, 1, 0),
            0xcd | 0xd1 => (0, 2, 0),
            0xca | 0xce | 0xd2 => (0, 4, 0),
            0xcb | 0xcf | 0xd3 => (0, 8, 0),
            0xc4 | 0xd9 => (1, be(position + 1, 1), 0),
            0xc5 | 0xda => (2, be(position + 1, 2), 0),
            0xc6 | 0xdb => (4, be(position + 1, 4), 0),
            0xdc => (2, 0, be(position + 1, 2)),
            0xdd => (4, 0, be(position + 1, 4)),
            0xde => (2, 0, 2 * be(position + 1, 2)),
            0xdf => (4, 0, 2 * be(position + 1, 4)),
            _ => return,
        };
        found(position, 1, "messagepack marker");
        if length_width > 0 {
            found(position + 1, length_width, "messagepack length");
        }
        position += 1 + length_width + payload;
        pending = pending.saturating_add(children);
    }
}
