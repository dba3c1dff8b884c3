//! gfx9's MUBUF accesses that read the V# in gfx9's layout (`Descriptor::Gfx9`, planned by
//! `from_gfx9/memory.rs`): structured (`idxen`) and structured-with-offset addressing under
//! gfx9's range check, raw accesses, `buffer_load_format_*`/`buffer_store_format_*` and their
//! d16 forms in several V# formats, and the typed errors for what stays refused. Each kernel is
//! wave64 code that `llvm-mc-19 -mcpu=gfx900` and `-mcpu=gfx90a` both encode as the words given
//! (the text beside each instruction's last word), run on gfx900 and gfx90a. The expected values
//! come from the guides' rules, written out here:
//!
//! - the V# (Vega and MI200 ISA guides, "Buffer Resource"): base [47:0], stride [61:48],
//!   `num_records` dword 2, DST_SEL_X/Y/Z/W [107:96] (0: 0, 1: 1, 4–7: x, y, z, w), NUM_FORMAT
//!   [110:108], DATA_FORMAT [114:111];
//! - the address: base + soffset + offset + stride × index, the index the VGPR before the offset
//!   VGPR where both are given;
//! - range checking ("Range Checking"): a structured access (index, stride ≠ 0) is out of range
//!   where index ≥ `num_records`, whatever its offset; a raw one (also an index with stride 0)
//!   per dword where the dword's bytes pass `num_records` bytes; format accesses all or nothing;
//!   out of range, a load reads 0 (1 where DST_SEL is 1) and a store writes nothing;
//! - formats ("Data Format Conversion"): UNORM is raw / (2^n − 1), SINT sign-extends, a float
//!   store rounds to the format; d16 forms pack two 16-bit components per VGPR, d16_hi uses the
//!   high half.

use aqueduct_isa::gfx9::Processor;
use aqueduct_isa::interp::{DecodedKernel, Dispatch, ExecError, Isa, Regions};
use aqueduct_isa::native::Tier;
use aqueduct_isa::run_workgroup;

/// Dwords of the buffer the V#s address: dwords 0..512 hold 0x1000 + their index, bytes from
/// 2048 on [`pattern`].
const DATA_DWORDS: usize = 2048;
/// Rows of 64 dwords the kernels store their results to (row k: out[64·k + lane]).
const OUT_DWORDS: usize = 64 * 16;

/// Byte `k` past the data's byte 2048, where the format tests read and write.
fn pattern(k: usize) -> u8 {
    (k * 37 + 11) as u8
}

/// A wave64 gfx9 kernel, its data and its output. The code takes the data's address as the
/// literals 0x1111_1111 (low) and 0x2222_2222 (high), the output's as 0x3333_3333 and 0x4444_4444.
struct Kernel {
    words: Vec<u32>,
    data: Vec<u32>,
    out: Vec<u32>,
}

impl Kernel {
    fn new(code: &[u32]) -> Kernel {
        let mut data: Vec<u32> = (0..512).map(|k| 0x1000 + k as u32).collect();
        data.extend((0..DATA_DWORDS - 512).map(|d| u32::from_le_bytes(core::array::from_fn(|b| pattern(4 * d + b)))));
        let out = vec![0u32; OUT_DWORDS];
        let (data_address, out_address) = (data.as_ptr() as u64, out.as_ptr() as u64);
        let mut words = vec![0u32; 16];
        words[4] = 64; // kernel_code_entry_byte_offset
        words[12] = 15; // COMPUTE_PGM_RSRC1: (15 + 1) × 4 VGPRs (× 2 on gfx90a)
        words.extend(code.iter().map(|&word| match word {
            0x1111_1111 => data_address as u32,
            0x2222_2222 => (data_address >> 32) as u32,
            0x3333_3333 => out_address as u32,
            0x4444_4444 => (out_address >> 32) as u32,
            other => other,
        }));
        Kernel { words, data, out }
    }

    /// Runs one workgroup of 64 work-items as `processor`'s code on the interpreter.
    fn run(&mut self, processor: Processor) -> Result<(), ExecError> {
        self.run_on(processor, Tier::Interpreter)
    }

    /// Runs one workgroup of 64 work-items as `processor`'s code on `tier`.
    fn run_on(&mut self, processor: Processor, tier: Tier) -> Result<(), ExecError> {
        let kernel_object = self.words.as_ptr() as u64;
        let (data, out) = (self.data.as_mut_ptr() as u64, self.out.as_mut_ptr() as u64);
        let memory = Regions(vec![
            (kernel_object, self.words.len() as u64 * 4),
            (data, DATA_DWORDS as u64 * 4),
            (out, OUT_DWORDS as u64 * 4),
        ]);
        let kernel = DecodedKernel::load_for(&memory, kernel_object, Isa::Gfx9(processor))?;
        let dispatch = Dispatch { instruction_limit: 1000, tier, ..Dispatch::new(&kernel, [64, 1, 1], [64, 1, 1]) };
        run_workgroup(&dispatch, &memory, [0; 3], &mut Vec::new())?;
        Ok(())
    }

    /// Output row `row`: one dword per lane.
    fn row(&self, row: usize) -> &[u32] {
        &self.out[64 * row..64 * row + 64]
    }

    /// The byte at `k` past the data's byte 2048, as the kernel left it.
    fn byte(&self, k: usize) -> u8 {
        self.data[512 + k / 4].to_le_bytes()[k % 4]
    }
}

/// The processors each kernel runs on: GCN5's and CDNA2's (whose AGPR-capable encodings are the
/// same for these instructions).
const PROCESSORS: [Processor; 2] = [Processor::Gfx900, Processor::Gfx90a];

/// Checks row `row` of `kernel`'s output against `expected` for each lane.
fn check_row(kernel: &Kernel, processor: Processor, row: usize, expected: impl Fn(usize) -> u32) {
    let want: Vec<u32> = (0..64).map(expected).collect();
    assert_eq!(kernel.row(row), want, "{processor:?} row {row}");
}

/// Whether a structured access (an index, a nonzero stride) is in range on gfx9: its index is
/// below `num_records`, whatever its offset.
fn structured_in_range(index: usize, records: usize) -> bool {
    index < records
}

/// Whether a raw access's `bytes` at byte `offset` are in range: they end within `num_records`
/// bytes.
fn raw_in_range(offset: usize, bytes: usize, records: usize) -> bool {
    offset + bytes <= records
}

/// Dword accesses. s[4:7]: a structured V# (stride 16, 40 records; its format gfx9's 32_FLOAT,
/// which dword accesses ignore); s[8:11]: a raw V# (stride 0, 204 bytes); s[12:15]: stride 0 and
/// 100 bytes, used with an index. Rows: a structured load at offset 4 (v3); structured with a
/// VGPR offset of 4·(i mod 8), up to 28, past the 16-byte stride, and soffset 32 (v4); raw
/// offen loads of a dword (v5) and a dword pair (v10, v11: each dword checked alone); an index
/// with a zero stride, which is raw (v13). Then structured stores at offsets 8 and 20.
const K1: &[u32] = &[
    0xBE80_00FF,
    0x3333_3333, // s_mov_b32 s0, 0x33333333
    0xBE81_00FF,
    0x4444_4444, // s_mov_b32 s1, 0x44444444
    0xBE84_00FF,
    0x1111_1111, // s_mov_b32 s4, 0x11111111
    0xBE85_00FF,
    0x2222_2222, // s_mov_b32 s5, 0x22222222
    0x8705_FF05,
    0x0010_0000, // s_or_b32 s5, s5, 0x100000
    0xBE86_00A8, // s_mov_b32 s6, 40
    0xBE87_00FF,
    0x0002_7FAC, // s_mov_b32 s7, 0x27fac
    0xBE88_0004, // s_mov_b32 s8, s4
    0xBE89_00FF,
    0x2222_2222, // s_mov_b32 s9, 0x22222222
    0xB00A_00CC, // s_movk_i32 s10, 0xcc
    0xBE8B_00FF,
    0x0002_7FAC, // s_mov_b32 s11, 0x27fac
    0xBE8C_0004, // s_mov_b32 s12, s4
    0xBE8D_00FF,
    0x2222_2222, // s_mov_b32 s13, 0x22222222
    0xB00E_0064, // s_movk_i32 s14, 0x64
    0xBE8F_00FF,
    0x0002_7FAC, // s_mov_b32 s15, 0x27fac
    0xB010_0020, // s_movk_i32 s16, 0x20
    0x243C_0082, // v_lshlrev_b32_e32 v30, 2, v0
    0x7E02_0300, // v_mov_b32_e32 v1, v0
    0x7E04_0300, // v_mov_b32_e32 v2, v0
    0x2606_0087, // v_and_b32_e32 v3, 7, v0
    0x2406_0682, // v_lshlrev_b32_e32 v3, 2, v3
    0xE050_3000,
    0x1001_0402, // buffer_load_dword v4, v[2:3], s[4:7], s16 idxen offen
    0x7E06_0280, // v_mov_b32_e32 v3, 0
    0xE050_2004,
    0x8001_0301, // buffer_load_dword v3, v1, s[4:7], 0 idxen offset:4
    0x240C_0082, // v_lshlrev_b32_e32 v6, 2, v0
    0xE050_1000,
    0x8002_0506, // buffer_load_dword v5, v6, s[8:11], 0 offen
    0x2418_0083, // v_lshlrev_b32_e32 v12, 3, v0
    0xE054_1000,
    0x8002_0A0C, // buffer_load_dwordx2 v[10:11], v12, s[8:11], 0 offen
    0x7E1C_0300, // v_mov_b32_e32 v14, v0
    0x241E_0082, // v_lshlrev_b32_e32 v15, 2, v0
    0xE050_3000,
    0x8003_0D0E, // buffer_load_dword v13, v[14:15], s[12:15], 0 idxen offen
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0x6820_00FF,
    0x0000_5000, // v_add_u32_e32 v16, 0x5000, v0
    0xE070_2008,
    0x8001_1001, // buffer_store_dword v16, v1, s[4:7], 0 idxen offset:8
    0x6822_00FF,
    0x0000_6000, // v_add_u32_e32 v17, 0x6000, v0
    0xE070_2014,
    0x8001_1101, // buffer_store_dword v17, v1, s[4:7], 0 idxen offset:20
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xDC70_8000,
    0x0000_031E, // global_store_dword v30, v3, s[0:1]
    0xDC70_8100,
    0x0000_041E, // global_store_dword v30, v4, s[0:1] offset:256
    0xDC70_8200,
    0x0000_051E, // global_store_dword v30, v5, s[0:1] offset:512
    0xDC70_8300,
    0x0000_0A1E, // global_store_dword v30, v10, s[0:1] offset:768
    0xDC70_8400,
    0x0000_0B1E, // global_store_dword v30, v11, s[0:1] offset:1024
    0xDC70_8500,
    0x0000_0D1E, // global_store_dword v30, v13, s[0:1] offset:1280
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xBF81_0000, // s_endpgm
];

#[test]
fn gfx9_structured_and_raw_dword_accesses_take_gfx9_s_range_check() {
    let word = |dword: usize| 0x1000 + dword as u32;
    for processor in PROCESSORS {
        let mut kernel = Kernel::new(K1);
        kernel.run(processor).unwrap_or_else(|error| panic!("{processor:?}: {error}"));
        let (stride, records) = (16, 40);
        check_row(
            &kernel,
            processor,
            0,
            |i| if structured_in_range(i, records) { word((stride * i + 4) / 4) } else { 0 },
        );
        check_row(&kernel, processor, 1, |i| {
            let offset = 4 * (i % 8);
            if structured_in_range(i, records) { word((32 + stride * i + offset) / 4) } else { 0 }
        });
        check_row(&kernel, processor, 2, |i| if raw_in_range(4 * i, 4, 204) { word(i) } else { 0 });
        check_row(&kernel, processor, 3, |i| if raw_in_range(8 * i, 4, 204) { word(2 * i) } else { 0 });
        check_row(&kernel, processor, 4, |i| if raw_in_range(8 * i + 4, 4, 204) { word(2 * i + 1) } else { 0 });
        check_row(&kernel, processor, 5, |i| if raw_in_range(4 * i, 4, 100) { word(i) } else { 0 });
        // The stores: lane i's at 16·i + 8 and 16·i + 20 where i < 40, nothing past.
        let mut want: Vec<u32> = (0..512).map(word).collect();
        for i in (0..64).filter(|&i| structured_in_range(i, records)) {
            want[(stride * i + 8) / 4] = 0x5000 + i as u32;
            want[(stride * i + 20) / 4] = 0x6000 + i as u32;
        }
        assert_eq!(kernel.data[..512], want, "{processor:?} stored data");
    }
}

/// The IEEE half-precision bits of `value`, which the tests pick exactly representable (zero or
/// a normal half): sign, exponent rebiased from 127 to 15, the mantissa's top 10 bits.
fn half(value: f32) -> u32 {
    let bits = value.to_bits();
    if bits << 1 == 0 {
        return (bits >> 16) & 0x8000;
    }
    let exponent = ((bits >> 23) & 0xFF) as i32 - 127 + 15;
    assert!(bits & 0x1FFF == 0 && (1..31).contains(&exponent), "{value} is not exactly a normal half");
    (bits >> 16) & 0x8000 | (exponent as u32) << 10 | (bits >> 13) & 0x3FF
}

/// Format accesses, the V#s' formats from gfx9's DATA_FORMAT and NUM_FORMAT, each on the
/// pattern bytes from the data's byte 2048 (element i of a 4-byte stride: x, y, z, w = bytes
/// 4i..4i+3). s[4:7]: 8_8_8_8 UNORM, structured (stride 4, 48 records), DST_SEL x = z, y = y,
/// z = x, w = 1 (word 3 0x5032e); s[8:11]: 16_16 SINT, raw (158 bytes: lane 39's x fits, its y does not); s[16:19]: 8_8_8_8 UINT,
/// structured (stride 4, 50 records); s[12:15]: 16_16 FLOAT at byte 4096, structured (stride 8,
/// 40 records); s[20:23]: 8_8_8_8 UNORM at byte 6144 (stride 4, 40 records). Rows:
/// `buffer_load_format_xyzw` (v2..v5), `buffer_load_format_xy` raw offen (v6, v7),
/// `buffer_load_format_d16_xyzw` (v10, v11), `_d16_hi_x` and `_d16_x` into 0xabcd1234 (v12,
/// v13), and MTBUF's 8 UINT through a structured V# (v24). Stores: `buffer_store_format_xy` of
/// i/4 and −2i, `_d16_xy` of two halves at offset 4, `buffer_store_format_xyzw` of
/// (i/64 + 2⁻⁹, 1.5, −0.25, 0.25) to UNORM.
const K2: &[u32] = &[
    0xBE80_00FF,
    0x3333_3333, // s_mov_b32 s0, 0x33333333
    0xBE81_00FF,
    0x4444_4444, // s_mov_b32 s1, 0x44444444
    0xBE82_00FF,
    0x1111_1111, // s_mov_b32 s2, 0x11111111
    0xBE83_00FF,
    0x2222_2222, // s_mov_b32 s3, 0x22222222
    0x8004_FF02,
    0x0000_0800, // s_add_u32 s4, s2, 0x800
    0x8205_8003, // s_addc_u32 s5, s3, 0
    0x8705_FF05,
    0x0004_0000, // s_or_b32 s5, s5, 0x40000
    0xBE86_00B0, // s_mov_b32 s6, 48
    0xBE87_00FF,
    0x0005_032E, // s_mov_b32 s7, 0x5032e
    0x8008_FF02,
    0x0000_0800, // s_add_u32 s8, s2, 0x800
    0x8209_8003, // s_addc_u32 s9, s3, 0
    0xB00A_009E, // s_movk_i32 s10, 0x9e
    0xBE8B_00FF,
    0x0002_DFAC, // s_mov_b32 s11, 0x2dfac
    0x800C_FF02,
    0x0000_1000, // s_add_u32 s12, s2, 0x1000
    0x820D_8003, // s_addc_u32 s13, s3, 0
    0x870D_FF0D,
    0x0008_0000, // s_or_b32 s13, s13, 0x80000
    0xBE8E_00A8, // s_mov_b32 s14, 40
    0xBE8F_00FF,
    0x0002_FFAC, // s_mov_b32 s15, 0x2ffac
    0x8010_FF02,
    0x0000_0800, // s_add_u32 s16, s2, 0x800
    0x8211_8003, // s_addc_u32 s17, s3, 0
    0x8711_FF11,
    0x0004_0000, // s_or_b32 s17, s17, 0x40000
    0xBE92_00B2, // s_mov_b32 s18, 50
    0xBE93_00FF,
    0x0005_4FAC, // s_mov_b32 s19, 0x54fac
    0x8014_FF02,
    0x0000_1800, // s_add_u32 s20, s2, 0x1800
    0x8215_8003, // s_addc_u32 s21, s3, 0
    0x8715_FF15,
    0x0004_0000, // s_or_b32 s21, s21, 0x40000
    0xBE96_00A8, // s_mov_b32 s22, 40
    0xBE97_00FF,
    0x0005_0FAC, // s_mov_b32 s23, 0x50fac
    0x243C_0082, // v_lshlrev_b32_e32 v30, 2, v0
    0x7E02_0300, // v_mov_b32_e32 v1, v0
    0xE00C_2000,
    0x8001_0201, // buffer_load_format_xyzw v[2:5], v1, s[4:7], 0 idxen
    0x2410_0082, // v_lshlrev_b32_e32 v8, 2, v0
    0xE004_1000,
    0x8002_0608, // buffer_load_format_xy v[6:7], v8, s[8:11], 0 offen
    0xE02C_2000,
    0x8004_0A01, // buffer_load_format_d16_xyzw v[10:11], v1, s[16:19], 0 idxen
    0x7E18_02FF,
    0xABCD_1234, // v_mov_b32_e32 v12, 0xabcd1234
    0xE098_2000,
    0x8004_0C01, // buffer_load_format_d16_hi_x v12, v1, s[16:19], 0 idxen
    0x7E1A_02FF,
    0xABCD_1234, // v_mov_b32_e32 v13, 0xabcd1234
    0xE020_2000,
    0x8004_0D01, // buffer_load_format_d16_x v13, v1, s[16:19], 0 idxen
    0xEA08_2000,
    0x8004_1801, // tbuffer_load_format_x v24, v1, s[16:19], 0 format:[BUF_DATA_FORMAT_8,BUF_NUM_FORMAT_UINT] idxen
    0x7E1C_0D00, // v_cvt_f32_u32_e32 v14, v0
    0x0A1E_1CF5, // v_mul_f32_e32 v15, -2.0, v14
    0x0A1C_1CFF,
    0x3E80_0000, // v_mul_f32_e32 v14, 0x3e800000, v14
    0xE014_2000,
    0x8003_0E01, // buffer_store_format_xy v[14:15], v1, s[12:15], 0 idxen
    0x6820_00FF,
    0x0000_4000, // v_add_u32_e32 v16, 0x4000, v0
    0x2420_2090, // v_lshlrev_b32_e32 v16, 16, v16
    0x2820_20FF,
    0x0000_3C00, // v_or_b32_e32 v16, 0x3c00, v16
    0xE034_2004,
    0x8003_1001, // buffer_store_format_d16_xy v16, v1, s[12:15], 0 idxen offset:4
    0x7E28_0D00, // v_cvt_f32_u32_e32 v20, v0
    0x0A28_28FF,
    0x3C80_0000, // v_mul_f32_e32 v20, 0x3c800000, v20
    0x0228_28FF,
    0x3B00_0000, // v_add_f32_e32 v20, 0x3b000000, v20
    0x7E2A_02FF,
    0x3FC0_0000, // v_mov_b32_e32 v21, 0x3fc00000
    0x7E2C_02FF,
    0xBE80_0000, // v_mov_b32_e32 v22, 0xbe800000
    0x7E2E_02FF,
    0x3E80_0000, // v_mov_b32_e32 v23, 0x3e800000
    0xE01C_2000,
    0x8005_1401, // buffer_store_format_xyzw v[20:23], v1, s[20:23], 0 idxen
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xDC70_8000,
    0x0000_021E, // global_store_dword v30, v2, s[0:1]
    0xDC70_8100,
    0x0000_031E, // global_store_dword v30, v3, s[0:1] offset:256
    0xDC70_8200,
    0x0000_041E, // global_store_dword v30, v4, s[0:1] offset:512
    0xDC70_8300,
    0x0000_051E, // global_store_dword v30, v5, s[0:1] offset:768
    0xDC70_8400,
    0x0000_061E, // global_store_dword v30, v6, s[0:1] offset:1024
    0xDC70_8500,
    0x0000_071E, // global_store_dword v30, v7, s[0:1] offset:1280
    0xDC70_8600,
    0x0000_0A1E, // global_store_dword v30, v10, s[0:1] offset:1536
    0xDC70_8700,
    0x0000_0B1E, // global_store_dword v30, v11, s[0:1] offset:1792
    0xDC70_8800,
    0x0000_0C1E, // global_store_dword v30, v12, s[0:1] offset:2048
    0xDC70_8900,
    0x0000_0D1E, // global_store_dword v30, v13, s[0:1] offset:2304
    0xDC70_8A00,
    0x0000_181E, // global_store_dword v30, v24, s[0:1] offset:2560
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xBF81_0000, // s_endpgm
];

#[test]
fn gfx9_format_accesses_read_the_v_sharp_s_gfx9_format() {
    let byte = |k: usize| pattern(k) as u32;
    let unorm = |raw: u32| ((raw as f64 / 255.0) as f32).to_bits();
    let sext16 = |raw: u32| raw as u16 as i16 as i32 as u32;
    for processor in PROCESSORS {
        let mut kernel = Kernel::new(K2);
        kernel.run(processor).unwrap_or_else(|error| panic!("{processor:?}: {error}"));
        // 8_8_8_8 UNORM, selects (z, y, x, 1): out of range, 0 but for the 1.
        let component = |i: usize, c: usize| byte(4 * i + c);
        let inside = |i: usize| structured_in_range(i, 48);
        check_row(&kernel, processor, 0, |i| if inside(i) { unorm(component(i, 2)) } else { 0 });
        check_row(&kernel, processor, 1, |i| if inside(i) { unorm(component(i, 1)) } else { 0 });
        check_row(&kernel, processor, 2, |i| if inside(i) { unorm(component(i, 0)) } else { 0 });
        check_row(&kernel, processor, 3, |_| 1f32.to_bits());
        // 16_16 SINT, raw: the whole 4-byte element in range or none of it (lane 39's x too).
        let short = |i: usize, c: usize| component(i, 2 * c) | component(i, 2 * c + 1) << 8;
        check_row(&kernel, processor, 4, |i| if raw_in_range(4 * i, 4, 158) { sext16(short(i, 0)) } else { 0 });
        check_row(&kernel, processor, 5, |i| if raw_in_range(4 * i, 4, 158) { sext16(short(i, 1)) } else { 0 });
        // 8_8_8_8 UINT as d16: two components a VGPR.
        let inside = |i: usize| structured_in_range(i, 50);
        let pair = |i: usize, c: usize| if inside(i) { component(i, c) | component(i, c + 1) << 16 } else { 0 };
        check_row(&kernel, processor, 6, |i| pair(i, 0));
        check_row(&kernel, processor, 7, |i| pair(i, 2));
        let x = |i: usize| if inside(i) { component(i, 0) } else { 0 };
        // d16_hi_x and d16_x write one half. gfx900 keeps the other; gfx90a's d16 loads do not
        // preserve it (LLVM D112635, `d16PreservesUnusedBits`), so only the written half counts.
        let kept = if processor == Processor::Gfx900 { u32::MAX } else { 0 };
        let row = |row: usize| kernel.row(row).to_vec();
        let masked = |values: Vec<u32>, mask: u32| values.into_iter().map(|value| value & mask).collect::<Vec<_>>();
        let want = |f: &dyn Fn(usize) -> u32, mask: u32| (0..64).map(|i| f(i) & mask).collect::<Vec<_>>();
        let hi_mask = 0xFFFF_0000 | (kept & 0xFFFF);
        assert_eq!(masked(row(8), hi_mask), want(&|i| x(i) << 16 | 0x1234, hi_mask), "{processor:?} d16_hi_x");
        let lo_mask = 0xFFFF | (kept & 0xFFFF_0000);
        assert_eq!(masked(row(9), lo_mask), want(&|i| 0xABCD_0000 | x(i), lo_mask), "{processor:?} d16_x");
        check_row(&kernel, processor, 10, x);
        // Stores: 16_16 FLOAT (the halves of i/4 and −2i; then two halves as they are), 40
        // records of 8 bytes from byte 2048 past the pattern's start.
        for i in 0..64 {
            let at = 2048 + 8 * i;
            let written = structured_in_range(i, 40);
            let value = |k: usize| kernel.byte(at + k) as u32;
            let stored = [
                value(0) | value(1) << 8,
                value(2) | value(3) << 8,
                value(4) | value(5) << 8,
                value(6) | value(7) << 8,
            ];
            let want: [u32; 4] = if written {
                [half(i as f32 / 4.0), half(-2.0 * i as f32), 0x3C00, 0x4000 + i as u32]
            } else {
                core::array::from_fn(|c| byte(at + 2 * c) | byte(at + 2 * c + 1) << 8)
            };
            assert_eq!(stored, want, "{processor:?} 16_16 FLOAT element {i}");
        }
        // 8_8_8_8 UNORM: round(v × 255) of the value clamped to [0, 1], 40 records from 4096.
        for i in 0..64 {
            let at = 4096 + 4 * i;
            let stored: [u8; 4] = core::array::from_fn(|c| kernel.byte(at + c));
            let x = i as f64 / 64.0 + 1.0 / 512.0;
            let want: [u8; 4] = if structured_in_range(i, 40) {
                [(x * 255.0).round() as u8, 255, 0, (0.25f64 * 255.0).round() as u8]
            } else {
                core::array::from_fn(|c| pattern(at + c))
            };
            assert_eq!(stored, want, "{processor:?} 8_8_8_8 UNORM element {i}");
        }
    }
}

/// What stays refused, each a typed error naming it: a V# format whose components differ in
/// width (gfx9's 10_11_11 FLOAT, word 3 0x37fac), a pair gfx11 has no format for (32 UNORM,
/// 0x20fac), a swizzled V# (SWIZZLE_ENABLE, word 1 bit 31; not modelled), a load into LDS
/// (refused when the kernel is decoded), and ADD_TID_ENABLE (word 3 bit 23) outside the private
/// segment buffer the dispatch gives (not modelled).
const E_PACKED: &[u32] = &[
    0xBE84_00FF,
    0x1111_1111, // s_mov_b32 s4, 0x11111111
    0xBE85_00FF,
    0x2222_2222, // s_mov_b32 s5, 0x22222222
    0x8705_FF05,
    0x0004_0000, // s_or_b32 s5, s5, 0x40000
    0x8705_8005, // s_or_b32 s5, s5, 0
    0xBE86_0090, // s_mov_b32 s6, 16
    0xBE87_00FF,
    0x0003_7FAC, // s_mov_b32 s7, 0x37fac
    0xE000_2000,
    0x8001_0100, // buffer_load_format_x v1, v0, s[4:7], 0 idxen
    0xBF81_0000, // s_endpgm
];

const E_UNORM32: &[u32] = &[
    0xBE84_00FF,
    0x1111_1111, // s_mov_b32 s4, 0x11111111
    0xBE85_00FF,
    0x2222_2222, // s_mov_b32 s5, 0x22222222
    0x8705_FF05,
    0x0004_0000, // s_or_b32 s5, s5, 0x40000
    0x8705_8005, // s_or_b32 s5, s5, 0
    0xBE86_0090, // s_mov_b32 s6, 16
    0xBE87_00FF,
    0x0002_0FAC, // s_mov_b32 s7, 0x20fac
    0xE010_2000,
    0x8001_0100, // buffer_store_format_x v1, v0, s[4:7], 0 idxen
    0xBF81_0000, // s_endpgm
];

const E_SWIZZLED: &[u32] = &[
    0xBE84_00FF,
    0x1111_1111, // s_mov_b32 s4, 0x11111111
    0xBE85_00FF,
    0x2222_2222, // s_mov_b32 s5, 0x22222222
    0x8705_FF05,
    0x0004_0000, // s_or_b32 s5, s5, 0x40000
    0x8705_FF05,
    0x8000_0000, // s_or_b32 s5, s5, 0x80000000
    0xBE86_0090, // s_mov_b32 s6, 16
    0xBE87_00FF,
    0x0002_7FAC, // s_mov_b32 s7, 0x27fac
    0xE050_2000,
    0x8001_0100, // buffer_load_dword v1, v0, s[4:7], 0 idxen
    0xBF81_0000, // s_endpgm
];

const E_LDS: &[u32] = &[
    0xBE84_00FF,
    0x1111_1111, // s_mov_b32 s4, 0x11111111
    0xBE85_00FF,
    0x2222_2222, // s_mov_b32 s5, 0x22222222
    0x8705_FF05,
    0x0004_0000, // s_or_b32 s5, s5, 0x40000
    0x8705_8005, // s_or_b32 s5, s5, 0
    0xBE86_0090, // s_mov_b32 s6, 16
    0xBE87_00FF,
    0x0002_7FAC, // s_mov_b32 s7, 0x27fac
    0xE051_0000,
    0x8001_0000, // buffer_load_dword off, s[4:7], 0 lds
    0xBF81_0000, // s_endpgm
];

const E_ADD_TID: &[u32] = &[
    0xBE84_00FF,
    0x1111_1111, // s_mov_b32 s4, 0x11111111
    0xBE85_00FF,
    0x2222_2222, // s_mov_b32 s5, 0x22222222
    0x8705_FF05,
    0x0004_0000, // s_or_b32 s5, s5, 0x40000
    0xBE86_0090, // s_mov_b32 s6, 16
    0xBE87_00FF,
    0x0082_7FAC, // s_mov_b32 s7, 0x827fac
    0xE050_1000,
    0x8001_0100, // buffer_load_dword v1, v0, s[4:7], 0 offen
    0xBF81_0000, // s_endpgm
];

#[test]
fn gfx9_buffer_accesses_the_interpreter_does_not_model_fail_naming_what() {
    for processor in PROCESSORS {
        let run = |code: &[u32]| Kernel::new(code).run(processor).expect_err("refused");
        for (code, named) in [
            (E_PACKED, "format:[BUF_DATA_FORMAT_10_11_11,BUF_NUM_FORMAT_FLOAT]"),
            (E_UNORM32, "format:[BUF_DATA_FORMAT_32,BUF_NUM_FORMAT_UNORM]"),
            (E_SWIZZLED, "buffer_load_dword"),
            (E_LDS, "buffer_load_dword"),
            (E_ADD_TID, "buffer_load_dword"),
        ] {
            let error = run(code);
            assert!(
                matches!(error, ExecError::Unsupported { mnemonic, .. } if mnemonic == named),
                "{processor:?}: {error:?}"
            );
        }
    }
}

/// The native tier leaves buffer accesses to the interpreter's step (`native/compile.rs`
/// translates only DS, FLAT and GLOBAL memory plans): both tiers leave the same results.
#[test]
fn gfx9_buffer_kernels_leave_the_same_results_on_both_tiers() {
    for processor in PROCESSORS {
        for code in [K1, K2] {
            let mut interpreted = Kernel::new(code);
            interpreted.run(processor).unwrap_or_else(|error| panic!("{processor:?}: {error}"));
            let mut compiled = Kernel::new(code);
            match compiled.run_on(processor, Tier::Native) {
                Err(ExecError::NativeUnavailable(why)) => {
                    println!("the native tier is unavailable here: {why}");
                    return;
                }
                result => result.unwrap_or_else(|error| panic!("{processor:?} native: {error}")),
            }
            assert_eq!(compiled.out, interpreted.out, "{processor:?}");
            assert_eq!(compiled.data, interpreted.data, "{processor:?}");
        }
    }
}

/// gfx90a's `buffer_load_format_xyzw` into AGPRs (the `acc` bit; `Plan::AgprMemory` around the
/// access), structured through an 8_8_8_8 UINT V# (stride 4, 48 records, word 3 0x54fac), then
/// x and w read back to VGPRs (`llvm-mc-19 -mcpu=gfx90a`).
const AGPR_FORMAT: &[u32] = &[
    0xBE80_00FF,
    0x3333_3333, // s_mov_b32 s0, 0x33333333
    0xBE81_00FF,
    0x4444_4444, // s_mov_b32 s1, 0x44444444
    0xBE82_00FF,
    0x1111_1111, // s_mov_b32 s2, 0x11111111
    0xBE83_00FF,
    0x2222_2222, // s_mov_b32 s3, 0x22222222
    0x8004_FF02,
    0x0000_0800, // s_add_u32 s4, s2, 0x800
    0x8205_8003, // s_addc_u32 s5, s3, 0
    0x8705_FF05,
    0x0004_0000, // s_or_b32 s5, s5, 0x40000
    0xBE86_00B0, // s_mov_b32 s6, 48
    0xBE87_00FF,
    0x0005_4FAC, // s_mov_b32 s7, 0x54fac
    0x243C_0082, // v_lshlrev_b32_e32 v30, 2, v0
    0xE00C_2000,
    0x8081_0000, // buffer_load_format_xyzw a[0:3], v0, s[4:7], 0 idxen
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xD3D8_4002,
    0x1800_0100, // v_accvgpr_read_b32 v2, a0
    0xD3D8_4003,
    0x1800_0103, // v_accvgpr_read_b32 v3, a3
    0xDC70_8000,
    0x0000_021E, // global_store_dword v30, v2, s[0:1]
    0xDC70_8100,
    0x0000_031E, // global_store_dword v30, v3, s[0:1] offset:256
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xBF81_0000, // s_endpgm
];

#[test]
fn gfx90a_format_loads_into_agprs_read_the_v_sharp_s_gfx9_format() {
    let mut kernel = Kernel::new(AGPR_FORMAT);
    kernel.run(Processor::Gfx90a).unwrap_or_else(|error| panic!("{error}"));
    let component = |i: usize, c: usize| if structured_in_range(i, 48) { pattern(4 * i + c) as u32 } else { 0 };
    check_row(&kernel, Processor::Gfx90a, 0, |i| component(i, 0));
    check_row(&kernel, Processor::Gfx90a, 1, |i| component(i, 3));
}

/// `buffer_store_format_d16_hi_x`: the high half of the VGPR (i) stored through a 16 UINT V#
/// (stride 2, 40 records, word 3 0x14fac) at the data's byte 7168; the low half (0x7777) is not.
const D16_HI_STORE: &[u32] = &[
    0xBE82_00FF,
    0x1111_1111, // s_mov_b32 s2, 0x11111111
    0xBE83_00FF,
    0x2222_2222, // s_mov_b32 s3, 0x22222222
    0x8004_FF02,
    0x0000_1C00, // s_add_u32 s4, s2, 0x1c00
    0x8205_8003, // s_addc_u32 s5, s3, 0
    0x8705_FF05,
    0x0002_0000, // s_or_b32 s5, s5, 0x20000
    0xBE86_00A8, // s_mov_b32 s6, 40
    0xBE87_00FF,
    0x0001_4FAC, // s_mov_b32 s7, 0x14fac
    0x2402_0090, // v_lshlrev_b32_e32 v1, 16, v0
    0x2802_02FF,
    0x0000_7777, // v_or_b32_e32 v1, 0x7777, v1
    0xE09C_2000,
    0x8001_0100, // buffer_store_format_d16_hi_x v1, v0, s[4:7], 0 idxen
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xBF81_0000, // s_endpgm
];

#[test]
fn gfx9_d16_hi_format_stores_take_the_vgpr_s_high_half() {
    for processor in PROCESSORS {
        let mut kernel = Kernel::new(D16_HI_STORE);
        kernel.run(processor).unwrap_or_else(|error| panic!("{processor:?}: {error}"));
        for i in 0..64 {
            let at = 5120 + 2 * i;
            let stored = u16::from_le_bytes([kernel.byte(at), kernel.byte(at + 1)]);
            let want =
                if structured_in_range(i, 40) { i as u16 } else { u16::from_le_bytes([pattern(at), pattern(at + 1)]) };
            assert_eq!(stored, want, "{processor:?} element {i}");
        }
    }
}
