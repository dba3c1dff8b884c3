//! The values the hostile-input campaigns write over a field, and how they name the error they
//! got back. Included by path (`#[path = ".../tests/support/mutation.rs"] mod mutation;`) from
//! each crate's campaign.

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
