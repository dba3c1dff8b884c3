//! gfx11's buffer formats: the 7-bit unified FORMAT of an MTBUF instruction (bits 25:19) and of
//! a buffer resource (V# word 3, bits 18:12), which `buffer_load_format_*` and
//! `buffer_store_format_*` use. Numbers and names are LLVM 19's (`llvm-mc-19 --disassemble
//! -mcpu=gfx1100` of each value of the MTBUF field prints `format:[BUF_FMT_<name>]`; 64 and up
//! print as bare numbers and are not formats).

/// How a format's components read as numbers (RDNA3 ISA guide, "Buffer Formats").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numeric {
    /// Unsigned normalized: raw / (2^n − 1).
    Unorm,
    /// Signed normalized: max(raw / (2^(n−1) − 1), −1).
    Snorm,
    /// Unsigned integer converted to float.
    Uscaled,
    /// Signed integer converted to float.
    Sscaled,
    Uint,
    Sint,
    Float,
}

/// A buffer format: its components' widths in bits, x first, and how they read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferFormat {
    pub name: &'static str,
    /// Bits per component, x, y, z, w; 0 where the format has no such component.
    pub bits: [u8; 4],
    pub numeric: Numeric,
    /// A format whose components differ in width (`10_11_11`, `2_10_10_10`, ...).
    pub packed: bool,
}

impl BufferFormat {
    /// Components the format has.
    pub fn components(&self) -> usize {
        self.bits.iter().filter(|&&bits| bits != 0).count()
    }

    /// Bytes one element takes.
    pub fn element_bytes(&self) -> usize {
        self.bits.iter().map(|&bits| bits as usize).sum::<usize>() / 8
    }
}

/// The names of formats 0–63, by number.
const NAMES: [&str; 64] = [
    "INVALID",
    "8_UNORM",
    "8_SNORM",
    "8_USCALED",
    "8_SSCALED",
    "8_UINT",
    "8_SINT",
    "16_UNORM",
    "16_SNORM",
    "16_USCALED",
    "16_SSCALED",
    "16_UINT",
    "16_SINT",
    "16_FLOAT",
    "8_8_UNORM",
    "8_8_SNORM",
    "8_8_USCALED",
    "8_8_SSCALED",
    "8_8_UINT",
    "8_8_SINT",
    "32_UINT",
    "32_SINT",
    "32_FLOAT",
    "16_16_UNORM",
    "16_16_SNORM",
    "16_16_USCALED",
    "16_16_SSCALED",
    "16_16_UINT",
    "16_16_SINT",
    "16_16_FLOAT",
    "10_11_11_FLOAT",
    "11_11_10_FLOAT",
    "10_10_10_2_UNORM",
    "10_10_10_2_SNORM",
    "10_10_10_2_UINT",
    "10_10_10_2_SINT",
    "2_10_10_10_UNORM",
    "2_10_10_10_SNORM",
    "2_10_10_10_USCALED",
    "2_10_10_10_SSCALED",
    "2_10_10_10_UINT",
    "2_10_10_10_SINT",
    "8_8_8_8_UNORM",
    "8_8_8_8_SNORM",
    "8_8_8_8_USCALED",
    "8_8_8_8_SSCALED",
    "8_8_8_8_UINT",
    "8_8_8_8_SINT",
    "32_32_UINT",
    "32_32_SINT",
    "32_32_FLOAT",
    "16_16_16_16_UNORM",
    "16_16_16_16_SNORM",
    "16_16_16_16_USCALED",
    "16_16_16_16_SSCALED",
    "16_16_16_16_UINT",
    "16_16_16_16_SINT",
    "16_16_16_16_FLOAT",
    "32_32_32_UINT",
    "32_32_32_SINT",
    "32_32_32_FLOAT",
    "32_32_32_32_UINT",
    "32_32_32_32_SINT",
    "32_32_32_32_FLOAT",
];

/// The name LLVM prints for format `number` (`BUF_FMT_<name>`), if it is one.
pub fn buffer_format_name(number: u32) -> Option<&'static str> {
    NAMES.get(number as usize).copied()
}

/// Format `number`, parsed from its name; `None` for `INVALID` and numbers past the table.
pub fn buffer_format(number: u32) -> Option<BufferFormat> {
    let name = buffer_format_name(number).filter(|&name| name != "INVALID")?;
    let (widths, numeric) = name.rsplit_once('_')?;
    let numeric = match numeric {
        "UNORM" => Numeric::Unorm,
        "SNORM" => Numeric::Snorm,
        "USCALED" => Numeric::Uscaled,
        "SSCALED" => Numeric::Sscaled,
        "UINT" => Numeric::Uint,
        "SINT" => Numeric::Sint,
        _ => Numeric::Float,
    };
    let mut bits = [0u8; 4];
    for (slot, width) in bits.iter_mut().zip(widths.split('_')) {
        *slot = width.parse().ok()?;
    }
    let packed = bits.iter().filter(|&&width| width != 0).any(|&width| width != bits[0]);
    Some(BufferFormat { name, bits, numeric, packed })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_from_their_names() {
        let format = buffer_format(50).unwrap();
        assert_eq!(
            (format.name, format.bits, format.numeric, format.packed),
            ("32_32_FLOAT", [32, 32, 0, 0], Numeric::Float, false)
        );
        assert_eq!((format.components(), format.element_bytes()), (2, 8));
        let format = buffer_format(42).unwrap();
        assert_eq!((format.bits, format.numeric, format.element_bytes()), ([8, 8, 8, 8], Numeric::Unorm, 4));
        assert!(buffer_format(30).unwrap().packed);
        assert!(buffer_format(36).unwrap().packed);
        assert_eq!(buffer_format(0), None);
        assert_eq!(buffer_format(64), None);
        assert_eq!(buffer_format_name(1), Some("8_UNORM"));
    }
}
