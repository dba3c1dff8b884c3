//! gfx9's buffer formats: a typed access's data format (`BUF_DATA_FORMAT_*`, 4 bits) and numeric
//! format (`BUF_NUM_FORMAT_*`, 3 bits), two numbers where gfx11 has one unified FORMAT. MTBUF
//! names them in the instruction (dfmt [22:19], nfmt [25:23]); `buffer_load_format_*` and
//! `buffer_store_format_*` read them from the V# (word 3: NUM_FORMAT [14:12], DATA_FORMAT
//! [18:15]; Vega ISA guide, "Buffer Resource"; Mesa's `ac_set_buf_desc_word3` sets them there
//! for gfx6–9, and gfx10's unified FORMAT from bit 12). The names are LLVM 19's
//! (`AMDGPUInstPrinter::printFORMAT`'s pre-gfx10 form, `llvm-mc-19 -mcpu=gfx90a`; SIDefines.h's
//! `DFMT_*` and `NFMT_*`): data format 0 is invalid and 15 reserved, numeric format 6 reserved.
//! One list serves the printer (`format.rs`), the MTBUF translation and the V#'s reading.

use std::sync::LazyLock;

/// The name lists, and each pair spelled as a format operand (for errors), from one list each.
macro_rules! formats {
    (data: [$($data:literal),* $(,)?], numeric: $numeric:tt) => {
        /// `BUF_DATA_FORMAT_<name>` by number.
        pub(crate) const DATA_FORMATS: [&str; 16] = [$($data),*];
        /// `BUF_NUM_FORMAT_<name>` by number.
        pub(crate) const NUM_FORMATS: [&str; 8] = formats!(@list $numeric);
        /// `format:[BUF_DATA_FORMAT_<data>,BUF_NUM_FORMAT_<numeric>]` by data, then numeric number.
        const SPELLED: [[&str; 8]; 16] = [$(formats!(@spelled $data, $numeric)),*];
    };
    (@list [$($numeric:literal),* $(,)?]) => { [$($numeric),*] };
    (@spelled $data:literal, [$($numeric:literal),* $(,)?]) => {
        [$(concat!("format:[BUF_DATA_FORMAT_", $data, ",BUF_NUM_FORMAT_", $numeric, "]")),*]
    };
}

formats! {
    data: [
        "INVALID",
        "8",
        "16",
        "8_8",
        "32",
        "16_16",
        "10_11_11",
        "11_11_10",
        "10_10_10_2",
        "2_10_10_10",
        "8_8_8_8",
        "32_32",
        "16_16_16_16",
        "32_32_32",
        "32_32_32_32",
        "RESERVED_15",
    ],
    numeric: ["UNORM", "SNORM", "USCALED", "SSCALED", "UINT", "SINT", "RESERVED_6", "FLOAT"]
}

/// gfx11's unified format (`gfx11/buffer_format.rs`) for each gfx9 pair, 0 (gfx11's INVALID)
/// where none: the one LLVM names `BUF_FMT_<data>_<numeric>` for the same widths and numeric
/// format. An invalid or reserved number names none.
static UNIFIED: LazyLock<[[u8; 8]; 16]> = LazyLock::new(|| {
    core::array::from_fn(|data| {
        core::array::from_fn(|numeric| {
            let name = format!("{}_{}", DATA_FORMATS[data], NUM_FORMATS[numeric]);
            (1..64).find(|&number| crate::gfx11::buffer_format_name(number) == Some(name.as_str())).unwrap_or(0) as u8
        })
    })
});

/// gfx11's unified format number for gfx9's data format `dfmt` and numeric format `nfmt`
/// (their low 4 and 3 bits), if gfx11 has that pair.
pub(crate) fn unified(dfmt: u32, nfmt: u32) -> Option<u32> {
    let number = UNIFIED[(dfmt & 0xF) as usize][(nfmt & 7) as usize];
    (number != 0).then_some(number as u32)
}

/// The pair spelled as LLVM's format operand, for an error naming a format the interpreter does
/// not convert.
pub(crate) fn spelled(dfmt: u32, nfmt: u32) -> &'static str {
    SPELLED[(dfmt & 0xF) as usize][(nfmt & 7) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gfx9_pairs_name_gfx11_s_unified_formats() {
        // gfx11's numbers as llvm-mc-19 -mcpu=gfx1100 prints them: BUF_FMT_8_UNORM is 1,
        // BUF_FMT_32_FLOAT 22, BUF_FMT_8_8_8_8_UNORM 42, BUF_FMT_16_16_16_16_FLOAT 57.
        assert_eq!(unified(1, 0), Some(1));
        assert_eq!(unified(4, 7), Some(22));
        assert_eq!(unified(10, 0), Some(42));
        assert_eq!(unified(12, 7), Some(57));
        // Invalid, reserved, and pairs gfx11 lacks (32-bit UNORM).
        assert_eq!(unified(0, 4), None);
        assert_eq!(unified(15, 4), None);
        assert_eq!(unified(4, 6), None);
        assert_eq!(unified(4, 0), None);
        assert_eq!(spelled(6, 7), "format:[BUF_DATA_FORMAT_10_11_11,BUF_NUM_FORMAT_FLOAT]");
    }
}
