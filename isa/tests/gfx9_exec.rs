//! gfx9 code through the interpreter (`DecodedKernel::load_for(.., Isa::Gfx9(processor))`, each
//! instruction translated to gfx11's): every gfx90a table row either translates or is refused
//! with a reason; which instructions of the compiled gfx9 test kernels are refused;
//! hand-encoded wave64 kernels that run to exact results (arithmetic, gfx90a's `v_pk_mov_b32`
//! and packed f32 fma/mul/add,
//! `v_cmpx`'s two masks); and a refused instruction that fails
//! the wave naming its gfx9 mnemonic. The compiled kernels run against the host references in
//! `kernels_exec.rs`. Each hand-encoded word is what `llvm-mc-19 -mcpu=gfx90a -show-encoding`
//! encodes for the text beside it.

use std::collections::BTreeMap;

use aqueduct_isa::gfx9::{Processor, decode, decode_all};
use aqueduct_isa::interp::coverage::{gfx9_refusal, operations};
use aqueduct_isa::interp::{DecodedKernel, Dispatch, ExecError, Isa, Regions};
use aqueduct_isa::run_workgroup;
use object::{Object, ObjectSection};

/// Every row of the gfx9 table that gfx90a has, tried once (`coverage::operations`): each
/// translates to gfx11 or is refused with a reason; the counts and reasons are printed
/// (`--nocapture`).
#[test]
fn every_gfx90a_table_row_translates_or_is_refused_with_a_reason() {
    let rows = operations(Isa::Gfx9(Processor::Gfx90a));
    let (mut translated, mut runs, mut unprobed) = (0, 0, Vec::new());
    let mut refused: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for row in &rows {
        match (&row.probe_error, row.refusal) {
            (Some(error), _) => unprobed.push(format!("{} ({}): {error}", row.mnemonic, row.encoding)),
            (None, Some(reason)) => {
                assert!(!reason.is_empty(), "{}", row.mnemonic);
                assert!(!row.runs, "{} is refused yet runs", row.mnemonic);
                refused.entry(reason).or_default().push(row.mnemonic);
            }
            (None, None) => {
                translated += 1;
                runs += usize::from(row.runs);
            }
        }
    }
    let refused_count: usize = refused.values().map(Vec::len).sum();
    println!("gfx90a table rows: {}", rows.len());
    println!("translated: {translated} (the interpreter runs {runs} of them)");
    println!("refused: {refused_count}");
    for (reason, mnemonics) in &refused {
        println!(
            "  {:4}  {reason}  (e.g. {})",
            mnemonics.len(),
            mnemonics.iter().take(4).cloned().collect::<Vec<_>>().join(", ")
        );
    }
    println!("not probed (the enumeration's words do not decode as the row): {}", unprobed.len());
    for line in &unprobed {
        println!("  {line}");
    }
    assert_eq!(translated + refused_count + unprobed.len(), rows.len());
    assert!(translated >= 1656, "{translated} rows translate");
    assert!(unprobed.len() <= 4, "{} rows not probed", unprobed.len());
    // gfx11 lacks these; they run as plans of their own (`from_gfx9/vector.rs`, `from_gfx9/mfma.rs`,
    // `from_gfx9/dpp.rs`).
    for mnemonic in [
        "v_pk_mov_b32",
        "v_pk_fma_f32",
        "v_pk_mul_f32",
        "v_pk_add_f32",
        "v_mad_f32",
        "v_mac_f32_e32",
        "v_mac_f32_e64",
        "v_mac_f32_dpp",
        "v_madak_f32",
        "v_madmk_f32",
        "v_mad_legacy_f32",
        "v_add_u16_dpp",
        "v_cvt_f16_f32_dpp",
        "v_cmpx_lt_f16_sdwa",
        "v_cmpx_eq_u32_sdwa",
        "v_accvgpr_read_b32",
        "v_accvgpr_write_b32",
        "v_accvgpr_mov_b32",
        "v_mfma_f32_32x32x8f16",
        "v_mfma_f64_4x4x4f64",
    ] {
        let row = rows.iter().find(|row| row.mnemonic == mnemonic).expect("a gfx90a row");
        assert!(row.refusal.is_none() && row.runs, "{mnemonic}");
    }
    assert!(unprobed.len() < 40, "{unprobed:#?}");
}

/// The gfx9 objects of `tests/kernels/` (built by `gen/test_kernels.sh`), with their processor.
fn gfx9_objects() -> Vec<(String, Processor, Vec<u8>)> {
    let dir = format!("{}/tests/kernels", env!("CARGO_MANIFEST_DIR"));
    let mut objects = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("the kernels directory") {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        let Some(stem) = name.strip_suffix(".hsaco") else { continue };
        let Some(processor) = stem.rsplit('_').next().and_then(Processor::from_name) else { continue };
        objects.push((stem.to_owned(), processor, std::fs::read(&path).expect("the object")));
    }
    objects.sort_by(|a, b| a.0.cmp(&b.0));
    objects
}

/// The refused instructions of each gfx9 test kernel's `.text`, printed (`--nocapture`): what
/// keeps a kernel from running through the gfx9 path. Every instruction decodes, and every
/// MFMA kernel's matrix operations are among the refused.
#[test]
fn the_gfx9_test_kernels_refused_instructions() {
    let objects = gfx9_objects();
    assert!(objects.len() >= 20, "{} gfx9 objects", objects.len());
    for (name, processor, bytes) in &objects {
        let file = object::File::parse(&**bytes).expect("an ELF object");
        let text = file.section_by_name(".text").expect("a .text section");
        let mut refused = BTreeMap::new();
        let mut count = 0;
        for result in decode_all(text.data().expect("the .text bytes"), text.address(), *processor) {
            let (_, instruction) = result.unwrap_or_else(|error| panic!("{name}: {error}"));
            count += 1;
            if let Some(reason) = gfx9_refusal(&instruction) {
                *refused.entry((instruction.entry.mnemonic, reason)).or_insert(0) += 1;
            }
        }
        println!("{name}: {count} instructions, {} refused", refused.values().sum::<usize>());
        for ((mnemonic, reason), times) in &refused {
            println!("  {times:4} {mnemonic}: {reason}");
        }
        if name.starts_with("mfma") {
            // Every matrix instruction runs (`from_gfx9/mfma.rs`), gfx942's xf32 form too.
            let matrix: Vec<&str> =
                refused.keys().map(|(mnemonic, _)| *mnemonic).filter(|m| m.contains("mfma")).collect();
            assert_eq!(matrix, Vec::<&str>::new(), "{name}");
        }
    }
}

/// Dwords in [`Kernel`]'s output buffer: 64 per lane-indexed row, [`ROWS`] rows.
const OUT_DWORDS: usize = 64 * ROWS;
/// Rows of 64 dwords in [`Kernel`]'s output buffer (a GLOBAL store's 13-bit signed offset
/// reaches the 16th row's start, 3840 bytes; a kernel storing past it moves its VGPR offset).
const ROWS: usize = 32;

/// A wave64 kernel descriptor (64 VGPRs as gfx906 counts them), its gfx9 code after it, and a
/// zeroed output buffer of [`OUT_DWORDS`] dwords whose address the code takes as the literals 0x1111_1111
/// (low) and 0x2222_2222 (high).
struct Kernel {
    words: Vec<u32>,
    out: Vec<u32>,
}

impl Kernel {
    fn new(code: &[u32]) -> Kernel {
        let out = vec![0u32; OUT_DWORDS];
        let address = out.as_ptr() as u64;
        let mut words = vec![0u32; 16];
        words[4] = 64; // kernel_code_entry_byte_offset
        words[12] = 15; // COMPUTE_PGM_RSRC1: (15 + 1) × 4 VGPRs
        words.extend(code.iter().map(|&word| match word {
            0x1111_1111 => address as u32,
            0x2222_2222 => (address >> 32) as u32,
            other => other,
        }));
        Kernel { words, out }
    }

    /// Runs one workgroup of 64 work-items as `processor`'s code on the interpreter; returns
    /// the output.
    fn run(&mut self, processor: Processor) -> Result<Vec<u32>, ExecError> {
        let kernel_object = self.words.as_ptr() as u64;
        let out = self.out.as_mut_ptr() as u64;
        let memory = Regions(vec![(kernel_object, self.words.len() as u64 * 4), (out, OUT_DWORDS as u64 * 4)]);
        let kernel = DecodedKernel::load_for(&memory, kernel_object, Isa::Gfx9(processor))?;
        let dispatch = Dispatch { instruction_limit: 1000, ..Dispatch::new(&kernel, [64, 1, 1], [64, 1, 1]) };
        run_workgroup(&dispatch, &memory, [0; 3], &mut Vec::new())?;
        Ok(self.out.clone())
    }
}

/// out[i] = 4·i + m0 + (i − 1 from DPP row_shr:1, 0 at each row's first lane), stored through
/// GLOBAL with an SGPR base and a VGPR offset: scalar moves, `m0` renumbered, VOP2 and DPP,
/// `v_add_u32` (gfx11's `v_add_nc_u32`) and `global_store_dword` re-laid out, in wave64.
const ARITHMETIC: &[u32] = &[
    0xBEFC_00FF,
    0x100, // s_mov_b32 m0, 0x100
    0xBE8000FF,
    0x1111_1111, // s_mov_b32 s0, <out low>
    0xBE8100FF,
    0x2222_2222, // s_mov_b32 s1, <out high>
    0x2402_0082, // v_lshlrev_b32_e32 v1, 2, v0
    0x6804_007C, // v_add_u32_e32 v2, m0, v0
    0x7E06_0280, // v_mov_b32_e32 v3, 0
    0x7E06_02FA,
    0xFF09_1100, // v_mov_b32_dpp v3, v0 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
    0x6804_0702, // v_add_u32_e32 v2, v2, v3
    0x6804_0302, // v_add_u32_e32 v2, v2, v1
    0xDC70_8000,
    0x0000_0201, // global_store_dword v1, v2, s[0:1]
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xBF81_0000, // s_endpgm
];

#[test]
fn a_gfx9_wave64_kernel_runs_to_exact_results() {
    for processor in [Processor::Gfx906, Processor::Gfx90a] {
        let out = Kernel::new(ARITHMETIC).run(processor).unwrap_or_else(|error| panic!("{processor:?}: {error}"));
        let expected: Vec<u32> = (0..64u32).map(|i| 4 * i + 0x100 + i + if i % 16 == 0 { 0 } else { i - 1 }).collect();
        assert_eq!(out[..64], expected, "{processor:?}");
    }
}

/// gfx90a's `v_pk_mov_b32` (run as `Plan::PkMov`): each op_sel pair, an SGPR pair source, a
/// destination that is also both sources (read before written), and half the lanes disabled by
/// EXEC; row k of the output holds the k-th stored register, out[64·k + i] for lane i.
const PK_MOV: &[u32] = &[
    0xBE80_00FF,
    0x1111_1111, // s_mov_b32 s0, <out low>
    0xBE81_00FF,
    0x2222_2222, // s_mov_b32 s1, <out high>
    0x2402_0082, // v_lshlrev_b32_e32 v1, 2, v0
    0x7E04_0300, // v_mov_b32_e32 v2, v0
    0x6806_00FF,
    0x0000_1000, // v_add_u32_e32 v3, 0x1000, v0
    0x6808_00FF,
    0x0000_2000, // v_add_u32_e32 v4, 0x2000, v0
    0x680A_00FF,
    0x0000_3000, // v_add_u32_e32 v5, 0x3000, v0
    0xBE82_00FF,
    0x0000_5000, // s_mov_b32 s2, 0x5000
    0xBE83_00FF,
    0x0000_6000, // s_mov_b32 s3, 0x6000
    0xD3B3_4006,
    0x1802_0902, // v_pk_mov_b32 v[6:7], v[2:3], v[4:5]
    0xD3B3_4808,
    0x1802_0902, // v_pk_mov_b32 v[8:9], v[2:3], v[4:5] op_sel:[1,0]
    0xD3B3_500A,
    0x1802_0802, // v_pk_mov_b32 v[10:11], s[2:3], v[4:5] op_sel:[0,1]
    0x7E18_0280, // v_mov_b32_e32 v12, 0
    0x7E1A_0280, // v_mov_b32_e32 v13, 0
    0xBEFE_00FF,
    0x5555_5555, // s_mov_b32 exec_lo, 0x55555555
    0xBEFF_00FF,
    0x5555_5555, // s_mov_b32 exec_hi, 0x55555555
    0xD3B3_480C,
    0x1800_0402, // v_pk_mov_b32 v[12:13], s[2:3], s[2:3] op_sel:[1,0]
    0xBEFE_01C1, // s_mov_b64 exec, -1
    0xD3B3_4802,
    0x1802_0502, // v_pk_mov_b32 v[2:3], v[2:3], v[2:3] op_sel:[1,0]
    0xDC70_8000,
    0x0000_0601, // global_store_dword v1, v6, s[0:1]
    0xDC70_8100,
    0x0000_0701, // global_store_dword v1, v7, s[0:1] offset:256
    0xDC70_8200,
    0x0000_0801, // global_store_dword v1, v8, s[0:1] offset:512
    0xDC70_8300,
    0x0000_0901, // global_store_dword v1, v9, s[0:1] offset:768
    0xDC70_8400,
    0x0000_0A01, // global_store_dword v1, v10, s[0:1] offset:1024
    0xDC70_8500,
    0x0000_0B01, // global_store_dword v1, v11, s[0:1] offset:1280
    0xDC70_8600,
    0x0000_0C01, // global_store_dword v1, v12, s[0:1] offset:1536
    0xDC70_8700,
    0x0000_0D01, // global_store_dword v1, v13, s[0:1] offset:1792
    0xDC70_8800,
    0x0000_0201, // global_store_dword v1, v2, s[0:1] offset:2048
    0xDC70_8900,
    0x0000_0301, // global_store_dword v1, v3, s[0:1] offset:2304
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xBF81_0000, // s_endpgm
];

#[test]
fn gfx90a_v_pk_mov_b32_picks_a_dword_of_each_source_pair() {
    let out = Kernel::new(PK_MOV).run(Processor::Gfx90a).unwrap_or_else(|error| panic!("{error}"));
    let even = |i: u32, value: u32| if i.is_multiple_of(2) { value } else { 0 };
    let rows: [&dyn Fn(u32) -> u32; 10] = [
        &|i| i,               // v6: v2 (op_sel[0] = 0)
        &|i| i + 0x2000,      // v7: v4 (op_sel[1] = 0)
        &|i| i + 0x1000,      // v8: v3 (op_sel[0] = 1)
        &|i| i + 0x2000,      // v9: v4
        &|_| 0x5000,          // v10: s2
        &|i| i + 0x3000,      // v11: v5 (op_sel[1] = 1)
        &|i| even(i, 0x6000), // v12: s3, in the lanes EXEC enabled
        &|i| even(i, 0x5000), // v13: s2
        &|i| i + 0x1000,      // v2: the old v3
        &|i| i,               // v3: the old v2
    ];
    for (row, expected) in rows.iter().enumerate() {
        let want: Vec<u32> = (0..64).map(expected).collect();
        assert_eq!(out[64 * row..64 * row + 64], want, "row {row}");
    }
}

/// gfx90a's packed f32 arithmetic (run as `Plan::Dual` of gfx11's f32 VOP3 operations): the
/// default op_sel (low dwords) and op_sel_hi (high dwords), other picks, neg_lo and neg_hi, an
/// SGPR pair source, clamp, half the lanes disabled by EXEC, and a destination that is also a
/// source (both dwords read before either is written); row k of the output holds the k-th
/// stored register, out[64·k + i] for lane i.
const PK_F32: &[u32] = &[
    0xBE80_00FF,
    0x1111_1111, // s_mov_b32 s0, <out low>
    0xBE81_00FF,
    0x2222_2222, // s_mov_b32 s1, <out high>
    0x2402_0082, // v_lshlrev_b32_e32 v1, 2, v0
    0x7E04_0D00, // v_cvt_f32_u32_e32 v2, v0
    0x0A06_04FF,
    0x3DCC_CCCD, // v_mul_f32_e32 v3, 0x3dcccccd, v2
    0x0A08_04FF,
    0x4053_3333, // v_mul_f32_e32 v4, 0x40533333, v2
    0x020A_04FF,
    0xC0E8_0000, // v_add_f32_e32 v5, 0xc0e80000, v2
    0x0A0C_0B03, // v_mul_f32_e32 v6, v3, v5
    0x020E_08F0, // v_add_f32_e32 v7, 0.5, v4
    0xBE82_00FF,
    0x3FA0_0000, // s_mov_b32 s2, 0x3fa00000
    0xBE83_00FF,
    0xBEC0_0000, // s_mov_b32 s3, 0xbec00000
    0xD3B0_4008,
    0x1C1A_0902, // v_pk_fma_f32 v[8:9], v[2:3], v[4:5], v[6:7]
    0xD3B0_4C0A,
    0x341A_0902, // v_pk_fma_f32 v[10:11], v[2:3], v[4:5], v[6:7] op_sel:[1,0,0] op_sel_hi:[0,1,1] neg_lo:[1,0,0] neg_hi:[0,0,1]
    0xD3B1_510C,
    0x0802_0902, // v_pk_mul_f32 v[12:13], v[2:3], v[4:5] op_sel:[0,1] op_sel_hi:[1,0] neg_hi:[1,0]
    0xD3B2_580E,
    0x4000_0504, // v_pk_add_f32 v[14:15], v[4:5], s[2:3] op_sel:[1,1] op_sel_hi:[0,0] neg_lo:[0,1]
    0x7E20_0280, // v_mov_b32_e32 v16, 0
    0x7E22_0280, // v_mov_b32_e32 v17, 0
    0xBEFE_00FF,
    0x5555_5555, // s_mov_b32 exec_lo, 0x55555555
    0xBEFF_00FF,
    0x5555_5555, // s_mov_b32 exec_hi, 0x55555555
    0xD3B1_4010,
    0x1802_0902, // v_pk_mul_f32 v[16:17], v[2:3], v[4:5]
    0xBEFE_01C1, // s_mov_b64 exec, -1
    0xD3B2_C012,
    0x5002_0902, // v_pk_add_f32 v[18:19], v[2:3], v[4:5] op_sel_hi:[0,1] neg_lo:[0,1] clamp
    0xD3B1_5802,
    0x0002_0902, // v_pk_mul_f32 v[2:3], v[2:3], v[4:5] op_sel:[1,1] op_sel_hi:[0,0]
    0xDC70_8000,
    0x0000_0801, // global_store_dword v1, v8, s[0:1]
    0xDC70_8100,
    0x0000_0901, // global_store_dword v1, v9, s[0:1] offset:256
    0xDC70_8200,
    0x0000_0A01, // global_store_dword v1, v10, s[0:1] offset:512
    0xDC70_8300,
    0x0000_0B01, // global_store_dword v1, v11, s[0:1] offset:768
    0xDC70_8400,
    0x0000_0C01, // global_store_dword v1, v12, s[0:1] offset:1024
    0xDC70_8500,
    0x0000_0D01, // global_store_dword v1, v13, s[0:1] offset:1280
    0xDC70_8600,
    0x0000_0E01, // global_store_dword v1, v14, s[0:1] offset:1536
    0xDC70_8700,
    0x0000_0F01, // global_store_dword v1, v15, s[0:1] offset:1792
    0xDC70_8800,
    0x0000_1001, // global_store_dword v1, v16, s[0:1] offset:2048
    0xDC70_8900,
    0x0000_1101, // global_store_dword v1, v17, s[0:1] offset:2304
    0xDC70_8A00,
    0x0000_1201, // global_store_dword v1, v18, s[0:1] offset:2560
    0xDC70_8B00,
    0x0000_1301, // global_store_dword v1, v19, s[0:1] offset:2816
    0xDC70_8C00,
    0x0000_0201, // global_store_dword v1, v2, s[0:1] offset:3072
    0xDC70_8D00,
    0x0000_0301, // global_store_dword v1, v3, s[0:1] offset:3328
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xBF81_0000, // s_endpgm
];

#[test]
fn gfx90a_packed_f32_fma_mul_add_pick_negate_and_clamp_each_dword() {
    let out = Kernel::new(PK_F32).run(Processor::Gfx90a).unwrap_or_else(|error| panic!("{error}"));
    // The inputs as the kernel computes them (one rounding per operation, as Rust's f32).
    let inputs = |i: u32| {
        let a = [i as f32, i as f32 * f32::from_bits(0x3DCC_CCCD)];
        let b = [a[0] * f32::from_bits(0x4053_3333), a[0] + -7.25];
        let c = [a[1] * b[1], b[0] + 0.5];
        (a, b, c)
    };
    let (s2, s3) = (1.25f32, -0.375f32);
    let even = |i: u32, value: f32| if i.is_multiple_of(2) { value.to_bits() } else { 0 };
    let clamp = |value: f32| value.clamp(0.0, 1.0);
    let rows: [&dyn Fn(u32) -> u32; 14] = [
        &|i| {
            let (a, b, c) = inputs(i);
            a[0].mul_add(b[0], c[0]).to_bits()
        }, // v8
        &|i| {
            let (a, b, c) = inputs(i);
            a[1].mul_add(b[1], c[1]).to_bits()
        }, // v9
        &|i| {
            let (a, b, c) = inputs(i);
            (-a[1]).mul_add(b[0], c[0]).to_bits()
        }, // v10
        &|i| {
            let (a, b, c) = inputs(i);
            a[0].mul_add(b[1], -c[1]).to_bits()
        }, // v11
        &|i| {
            let (a, b, _) = inputs(i);
            (a[0] * b[1]).to_bits()
        }, // v12
        &|i| {
            let (a, b, _) = inputs(i);
            (-a[1] * b[0]).to_bits()
        }, // v13
        &|i| {
            let (_, b, _) = inputs(i);
            (b[1] + -s3).to_bits()
        }, // v14
        &|i| {
            let (_, b, _) = inputs(i);
            (b[0] + s2).to_bits()
        }, // v15
        &|i| {
            let (a, b, _) = inputs(i);
            even(i, a[0] * b[0])
        }, // v16, in the lanes EXEC enabled
        &|i| {
            let (a, b, _) = inputs(i);
            even(i, a[1] * b[1])
        }, // v17
        &|i| {
            let (a, b, _) = inputs(i);
            clamp(a[0] + -b[0]).to_bits()
        }, // v18
        &|i| {
            let (a, b, _) = inputs(i);
            clamp(a[0] + b[1]).to_bits()
        }, // v19
        &|i| {
            let (a, b, _) = inputs(i);
            (a[1] * b[1]).to_bits()
        }, // v2: the old v3 · v5
        &|i| {
            let (a, b, _) = inputs(i);
            (a[0] * b[0]).to_bits()
        }, // v3: the old v2 · v4
    ];
    for (row, expected) in rows.iter().enumerate() {
        let want: Vec<u32> = (0..64).map(expected).collect();
        assert_eq!(out[64 * row..64 * row + 64], want, "row {row}");
    }
}

#[test]
fn a_refused_gfx9_instruction_fails_naming_its_mnemonic() {
    // s_getreg_b32 s0, hwreg(HW_REG_TBA_LO) (a register the interpreter does not model); s_endpgm.
    let error = Kernel::new(&[0xB880_F810, 0xBF81_0000]).run(Processor::Gfx90a).expect_err("the wave fails");
    assert!(matches!(error, ExecError::Unsupported { mnemonic: "s_getreg_b32", .. }), "{error:?}");
    // v_mfma_f32_16x16x4f32 a[0:3], v0, v1, a[0:3] cbsz:1 (a broadcast on a one-block form)
    let error = Kernel::new(&[0xD3C5_8100, 0x0402_0300, 0xBF81_0000]).run(Processor::Gfx90a).expect_err("fails");
    assert!(
        matches!(error, ExecError::Unsupported { mnemonic, .. } if mnemonic.starts_with("v_mfma_f32_16x16x4")),
        "{error:?}"
    );
}

/// The distinct instructions of `tests/golden/<processor>.txt` (a sample of Debian's rocSPARSE
/// and rocRAND for gfx900 to gfx90a, and the test kernels), each either run translated or
/// refused: the share that runs and the commonest refusals are printed (`--nocapture`).
#[test]
fn the_golden_gfx9_corpora_mostly_translate() {
    let corpora = [
        (Processor::Gfx900, include_str!("golden/gfx900.txt")),
        (Processor::Gfx906, include_str!("golden/gfx906.txt")),
        (Processor::Gfx908, include_str!("golden/gfx908.txt")),
        (Processor::Gfx90a, include_str!("golden/gfx90a.txt")),
    ];
    for (processor, golden) in corpora {
        let (mut total, mut refused) = (0, BTreeMap::new());
        for line in golden.lines() {
            let hex = line.split('\t').next().unwrap_or_default();
            let words: Vec<u32> =
                hex.split_whitespace().map(|word| u32::from_str_radix(word, 16).expect("hex")).collect();
            let instruction =
                aqueduct_isa::gfx9::decode(&words, 0, processor).unwrap_or_else(|error| panic!("{line}: {error}"));
            total += 1;
            if let Some(reason) = gfx9_refusal(&instruction) {
                *refused.entry((reason, instruction.entry.mnemonic)).or_insert(0usize) += 1;
            }
        }
        let count: usize = refused.values().sum();
        println!("{processor:?}: {total} distinct instructions, {} run translated, {count} refused", total - count);
        let mut by_count: Vec<_> = refused.iter().collect();
        by_count.sort_by(|a, b| b.1.cmp(a.1));
        for ((reason, mnemonic), times) in by_count.iter().take(12) {
            println!("  {times:5} {mnemonic}: {reason}");
        }
        assert!(count * 4 < total, "{processor:?}: {count} of {total} refused");
    }
}

/// gfx9's `v_cmpx` (run as `Plan::CmpxMask`): the e32 form writes its mask to VCC and EXEC, the
/// VOP3 form to its sdst and EXEC, lanes EXEC disabled reading 0; rows 0–3 of the output hold
/// VCC and EXEC after `v_cmpx_gt_u32_e32 vcc, 40, v0` (lanes 0–39, across both halves), rows
/// 4–7 s[2:3] and EXEC after `v_cmpx_lt_u32_e64 s[2:3], v0, 36`, each in the lanes then enabled.
const CMPX: &[u32] = &[
    0xBE80_00FF,
    0x1111_1111, // s_mov_b32 s0, <out low>
    0xBE81_00FF,
    0x2222_2222, // s_mov_b32 s1, <out high>
    0x2402_0082, // v_lshlrev_b32_e32 v1, 2, v0
    0x7E04_0280, // v_mov_b32_e32 v2, 0
    0x7E06_0280, // v_mov_b32_e32 v3, 0
    0x7E08_0280, // v_mov_b32_e32 v4, 0
    0x7E0A_0280, // v_mov_b32_e32 v5, 0
    0x7E0C_0280, // v_mov_b32_e32 v6, 0
    0x7E0E_0280, // v_mov_b32_e32 v7, 0
    0x7E10_0280, // v_mov_b32_e32 v8, 0
    0x7E12_0280, // v_mov_b32_e32 v9, 0
    0xBEEA_01C1, // s_mov_b64 vcc, -1
    0xBE82_01C1, // s_mov_b64 s[2:3], -1
    0x7DB8_00A8, // v_cmpx_gt_u32_e32 vcc, 40, v0
    0x7E04_026A, // v_mov_b32_e32 v2, vcc_lo
    0x7E06_026B, // v_mov_b32_e32 v3, vcc_hi
    0x7E08_027E, // v_mov_b32_e32 v4, exec_lo
    0x7E0A_027F, // v_mov_b32_e32 v5, exec_hi
    0xD0D9_0002,
    0x0001_4900, // v_cmpx_lt_u32_e64 s[2:3], v0, 36
    0x7E0C_0202, // v_mov_b32_e32 v6, s2
    0x7E0E_0203, // v_mov_b32_e32 v7, s3
    0x7E10_027E, // v_mov_b32_e32 v8, exec_lo
    0x7E12_027F, // v_mov_b32_e32 v9, exec_hi
    0xBEFE_01C1, // s_mov_b64 exec, -1
    0xDC70_8000,
    0x0000_0201, // global_store_dword v1, v2, s[0:1]
    0xDC70_8100,
    0x0000_0301, // global_store_dword v1, v3, s[0:1] offset:256
    0xDC70_8200,
    0x0000_0401, // global_store_dword v1, v4, s[0:1] offset:512
    0xDC70_8300,
    0x0000_0501, // global_store_dword v1, v5, s[0:1] offset:768
    0xDC70_8400,
    0x0000_0601, // global_store_dword v1, v6, s[0:1] offset:1024
    0xDC70_8500,
    0x0000_0701, // global_store_dword v1, v7, s[0:1] offset:1280
    0xDC70_8600,
    0x0000_0801, // global_store_dword v1, v8, s[0:1] offset:1536
    0xDC70_8700,
    0x0000_0901, // global_store_dword v1, v9, s[0:1] offset:1792
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xBF81_0000, // s_endpgm
];

#[test]
fn gfx9_v_cmpx_writes_vcc_or_sdst_and_exec() {
    for processor in [Processor::Gfx906, Processor::Gfx90a] {
        let out = Kernel::new(CMPX).run(processor).unwrap_or_else(|error| panic!("{processor:?}: {error}"));
        // Each row: the lanes that wrote it and the value they wrote.
        let rows = [
            (40, u32::MAX),
            (40, 0xFF),
            (40, u32::MAX),
            (40, 0xFF),
            (36, u32::MAX),
            (36, 0xF),
            (36, u32::MAX),
            (36, 0xF),
        ];
        for (row, (lanes, value)) in rows.into_iter().enumerate() {
            let want: Vec<u32> = (0..64).map(|i| if i < lanes { value } else { 0 }).collect();
            assert_eq!(out[64 * row..64 * row + 64], want, "{processor:?} row {row}");
        }
    }
}

/// gfx9's non-fused multiply-adds (`Plan::Unfused`): `v_mad_f32`, `v_mac_f32` (e32 and DPP),
/// `v_madak_f32`, `v_madmk_f32` and `v_mad_legacy_f32`, with MODE set to keep f32 denormals
/// (`s_setreg`), which `v_fma_f32` then keeps and the non-fused ones flush: sources, the
/// product and the sum. Row k of the output is the k-th stored register, out[64·k + i] for
/// lane i, whose a = 1 + (i + 1)·2⁻¹³ makes a·a round (so the fused and non-fused differ).
const UNFUSED: &[u32] = &[
    0xBA00_1901,
    0x0000_000F, // s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 4), 15
    0xBE80_00FF,
    0x1111_1111, // s_mov_b32 s0, 0x11111111
    0xBE81_00FF,
    0x2222_2222, // s_mov_b32 s1, 0x22222222
    0x2402_0082, // v_lshlrev_b32_e32 v1, 2, v0
    0x6804_0081, // v_add_u32_e32 v2, 1, v0
    0x7E04_0D02, // v_cvt_f32_u32_e32 v2, v2
    0x0A04_04FF,
    0x3900_0000, // v_mul_f32_e32 v2, 0x39000000, v2
    0x0206_04F2, // v_add_f32_e32 v3, 1.0, v2
    0x7E0A_02F3, // v_mov_b32_e32 v5, -1.0
    0xD1C1_0006,
    0x03CE_0703, // v_mad_f32 v6, v3, v3, -1.0
    0x7E0E_02F3, // v_mov_b32_e32 v7, -1.0
    0x2C0E_0703, // v_mac_f32_e32 v7, v3, v3
    0x3010_0703,
    0xBF80_0000, // v_madak_f32 v8, v3, v3, 0xbf800000
    0x2E12_0B03,
    0x3F80_0001, // v_madmk_f32 v9, v3, 0x3f800001, v5
    0xD1CB_000A,
    0x03CE_0703, // v_fma_f32 v10, v3, v3, -1.0
    0x7E18_02FF,
    0x1C80_0000, // v_mov_b32_e32 v12, 0x1c800000
    0xD1C1_000B,
    0x0202_190C, // v_mad_f32 v11, v12, v12, 0
    0xD1CB_000D,
    0x0202_190C, // v_fma_f32 v13, v12, v12, 0
    0x7E1E_0281, // v_mov_b32_e32 v15, 1
    0x7E20_02FF,
    0x7180_0000, // v_mov_b32_e32 v16, 0x71800000
    0xD1C1_000E,
    0x0202_210F, // v_mad_f32 v14, v15, v16, 0
    0x7E24_02FF,
    0x2000_0000, // v_mov_b32_e32 v18, 0x20000000
    0x7E26_02FF,
    0x80C0_0000, // v_mov_b32_e32 v19, 0x80c00000
    0xD1C1_0011,
    0x044E_2512, // v_mad_f32 v17, v18, v18, v19
    0x7E2A_02FF,
    0x7F80_0000, // v_mov_b32_e32 v21, 0x7f800000
    0xD1C0_0014,
    0x03CA_2A80, // v_mad_legacy_f32 v20, 0, v21, 1.0
    0x7E2C_02F3, // v_mov_b32_e32 v22, -1.0
    0x2C2C_06FA,
    0xFF01_1103, // v_mac_f32_dpp v22, v3, v3 row_shr:1 row_mask:0xf bank_mask:0xf
    0xD1C1_0017,
    0x0BCE_0703, // v_mad_f32 v23, v3, v3, -1.0 mul:2
    0xD1C1_0018,
    0x23CA_0703, // v_mad_f32 v24, -v3, v3, 1.0
    0xDC70_8000,
    0x0000_0601, // global_store_dword v1, v6, s[0:1]
    0xDC70_8100,
    0x0000_0701, // global_store_dword v1, v7, s[0:1] offset:256
    0xDC70_8200,
    0x0000_0801, // global_store_dword v1, v8, s[0:1] offset:512
    0xDC70_8300,
    0x0000_0901, // global_store_dword v1, v9, s[0:1] offset:768
    0xDC70_8400,
    0x0000_0A01, // global_store_dword v1, v10, s[0:1] offset:1024
    0xDC70_8500,
    0x0000_0B01, // global_store_dword v1, v11, s[0:1] offset:1280
    0xDC70_8600,
    0x0000_0D01, // global_store_dword v1, v13, s[0:1] offset:1536
    0xDC70_8700,
    0x0000_0E01, // global_store_dword v1, v14, s[0:1] offset:1792
    0xDC70_8800,
    0x0000_1101, // global_store_dword v1, v17, s[0:1] offset:2048
    0xDC70_8900,
    0x0000_1401, // global_store_dword v1, v20, s[0:1] offset:2304
    0xDC70_8A00,
    0x0000_1601, // global_store_dword v1, v22, s[0:1] offset:2560
    0xDC70_8B00,
    0x0000_1701, // global_store_dword v1, v23, s[0:1] offset:2816
    0xDC70_8C00,
    0x0000_1801, // global_store_dword v1, v24, s[0:1] offset:3072
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xBF81_0000, // s_endpgm
];

#[test]
fn gfx9_v_mad_f32_family_rounds_twice_and_flushes_f32_denormals() {
    let a = |lane: usize| 1.0f32 + (lane + 1) as f32 * f32::from_bits(0x3900_0000);
    let bits = |value: f32| value.to_bits();
    // Rust's f32 `*` and `+` each round once to nearest even: two roundings, as the ISA's.
    let rows: [&dyn Fn(usize) -> u32; 13] = [
        &|i| bits(a(i) * a(i) + -1.0),                                            // v_mad_f32
        &|i| bits(a(i) * a(i) + -1.0),                                            // v_mac_f32_e32
        &|i| bits(a(i) * a(i) + -1.0),                                            // v_madak_f32
        &|i| bits(a(i) * f32::from_bits(0x3F80_0001) + -1.0),                     // v_madmk_f32
        &|i| bits(a(i).mul_add(a(i), -1.0)),                                      // v_fma_f32: one rounding
        &|_| 0,                                                                   // 2⁻⁷⁰ · 2⁻⁷⁰: product flushed
        &|_| 0x200,                                                               // v_fma_f32 keeps 2⁻¹⁴⁰
        &|_| 0,                                                                   // a denormal source flushed
        &|_| 0x8000_0000,                                                         // a denormal sum flushed to −0
        &|_| bits(1.0),                                                           // legacy: 0 · ∞ + 1 = 1
        &|i| if i % 16 == 0 { bits(-1.0) } else { bits(a(i - 1) * a(i) + -1.0) }, // DPP row_shr:1
        &|i| bits((a(i) * a(i) + -1.0) * 2.0),                                    // mul:2
        &|i| bits(-(a(i) * a(i)) + 1.0),                                          // −v3
    ];
    for processor in [Processor::Gfx906, Processor::Gfx90a] {
        let out = Kernel::new(UNFUSED).run(processor).unwrap_or_else(|error| panic!("{processor:?}: {error}"));
        for (row, expected) in rows.iter().enumerate() {
            let want: Vec<u32> = (0..64).map(expected).collect();
            assert_eq!(out[64 * row..64 * row + 64], want, "{processor:?} row {row}");
        }
        // The fused and non-fused results differ (a·a rounds), so the test tells them apart.
        assert!((0..64).any(|lane| out[lane] != out[4 * 64 + lane]));
    }
}

/// gfx9's DPP beyond gfx11's DPP16 (`Plan::WaveDpp`): the four whole-wave shifts and rotates,
/// `row_bcast:15` and `row_bcast:31` under the row masks LLVM's gfx9 reductions give them
/// (0xa, 0xc), an ALU operation on a broadcast, a DPP16 `row_shr` whose row mask enables only
/// the high half's rows, a 16-bit result (high half zeroed only where written), and a source
/// lane EXEC disables (read as 0 with `bound_ctrl`). Every destination starts as −1, which
/// lanes DPP does not write keep; v2 = 100 + lane. Row k of the output is the k-th register.
const WAVE_DPP: &[u32] = &[
    0xBE80_00FF,
    0x1111_1111, // s_mov_b32 s0, 0x11111111
    0xBE81_00FF,
    0x2222_2222, // s_mov_b32 s1, 0x22222222
    0x2402_0082, // v_lshlrev_b32_e32 v1, 2, v0
    0x6804_00FF,
    0x0000_0064, // v_add_u32_e32 v2, 0x64, v0
    0x7E06_02C1, // v_mov_b32_e32 v3, -1
    0x7E06_02FA,
    0xFF01_3002, // v_mov_b32_dpp v3, v2 wave_shl:1 row_mask:0xf bank_mask:0xf
    0x7E08_02C1, // v_mov_b32_e32 v4, -1
    0x7E08_02FA,
    0xFF01_3402, // v_mov_b32_dpp v4, v2 wave_rol:1 row_mask:0xf bank_mask:0xf
    0x7E0A_02C1, // v_mov_b32_e32 v5, -1
    0x7E0A_02FA,
    0xFF09_3802, // v_mov_b32_dpp v5, v2 wave_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
    0x7E0C_02C1, // v_mov_b32_e32 v6, -1
    0x7E0C_02FA,
    0xFF01_3C02, // v_mov_b32_dpp v6, v2 wave_ror:1 row_mask:0xf bank_mask:0xf
    0x7E0E_02C1, // v_mov_b32_e32 v7, -1
    0x7E0E_02FA,
    0xAF01_4202, // v_mov_b32_dpp v7, v2 row_bcast:15 row_mask:0xa bank_mask:0xf
    0x7E10_02C1, // v_mov_b32_e32 v8, -1
    0x7E10_02FA,
    0xCF01_4302, // v_mov_b32_dpp v8, v2 row_bcast:31 row_mask:0xc bank_mask:0xf
    0x7E12_02C1, // v_mov_b32_e32 v9, -1
    0x6812_04FA,
    0xFF01_4202, // v_add_u32_dpp v9, v2, v2 row_bcast:15 row_mask:0xf bank_mask:0xf
    0x7E14_02C1, // v_mov_b32_e32 v10, -1
    0x7E14_02FA,
    0xCF01_1102, // v_mov_b32_dpp v10, v2 row_shr:1 row_mask:0xc bank_mask:0xf
    0x7E16_02C1, // v_mov_b32_e32 v11, -1
    0x4C16_04FA,
    0xFF01_1102, // v_add_u16_dpp v11, v2, v2 row_shr:1 row_mask:0xf bank_mask:0xf
    0x7E18_02C1, // v_mov_b32_e32 v12, -1
    0xBEFE_00FF,
    0x5555_5555, // s_mov_b32 exec_lo, 0x55555555
    0xBEFF_00FF,
    0x5555_5555, // s_mov_b32 exec_hi, 0x55555555
    0x7E18_02FA,
    0xFF09_3C02, // v_mov_b32_dpp v12, v2 wave_ror:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
    0xBEFE_01C1, // s_mov_b64 exec, -1
    0xDC70_8000,
    0x0000_0301, // global_store_dword v1, v3, s[0:1]
    0xDC70_8100,
    0x0000_0401, // global_store_dword v1, v4, s[0:1] offset:256
    0xDC70_8200,
    0x0000_0501, // global_store_dword v1, v5, s[0:1] offset:512
    0xDC70_8300,
    0x0000_0601, // global_store_dword v1, v6, s[0:1] offset:768
    0xDC70_8400,
    0x0000_0701, // global_store_dword v1, v7, s[0:1] offset:1024
    0xDC70_8500,
    0x0000_0801, // global_store_dword v1, v8, s[0:1] offset:1280
    0xDC70_8600,
    0x0000_0901, // global_store_dword v1, v9, s[0:1] offset:1536
    0xDC70_8700,
    0x0000_0A01, // global_store_dword v1, v10, s[0:1] offset:1792
    0xDC70_8800,
    0x0000_0B01, // global_store_dword v1, v11, s[0:1] offset:2048
    0xDC70_8900,
    0x0000_0C01, // global_store_dword v1, v12, s[0:1] offset:2304
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xBF81_0000, // s_endpgm
];

#[test]
fn gfx9_whole_wave_and_16_bit_dpp_run_across_both_halves() {
    const KEPT: u32 = u32::MAX;
    let v2 = |lane: usize| 100 + lane as u32;
    let rows: [&dyn Fn(usize) -> u32; 10] = [
        &|i| if i < 63 { v2(i + 1) } else { KEPT },                   // wave_shl:1
        &|i| v2((i + 1) % 64),                                        // wave_rol:1
        &|i| if i > 0 { v2(i - 1) } else { 0 },                       // wave_shr:1 bound_ctrl
        &|i| v2((i + 63) % 64),                                       // wave_ror:1
        &|i| if i / 16 % 2 == 1 { v2((i & 0x30) - 1) } else { KEPT }, // row_bcast:15 rows 1, 3
        &|i| if i >= 32 { v2(31) } else { KEPT },                     // row_bcast:31 rows 2, 3
        &|i| if i >= 16 { v2((i & 0x30) - 1) + v2(i) } else { KEPT }, // v_add_u32 row_bcast:15
        &|i| if i >= 32 && i % 16 != 0 { v2(i - 1) } else { KEPT },   // row_shr:1 rows 2, 3
        &|i| if i % 16 != 0 { (v2(i - 1) + v2(i)) & 0xFFFF } else { KEPT }, // v_add_u16 row_shr:1
        &|i| if i % 2 == 0 { 0 } else { KEPT },                       // odd lanes inactive
    ];
    for processor in [Processor::Gfx906, Processor::Gfx90a] {
        let out = Kernel::new(WAVE_DPP).run(processor).unwrap_or_else(|error| panic!("{processor:?}: {error}"));
        for (row, expected) in rows.iter().enumerate() {
            let want: Vec<u32> = (0..64).map(expected).collect();
            assert_eq!(out[64 * row..64 * row + 64], want, "{processor:?} row {row}");
        }
    }
}

/// gfx90a's packed f32 and `v_pk_mov_b32` with inline constant sources: the 32-bit constant
/// is the dword op_sel/op_sel_hi 0 picks, and the constant 0 gives 0 as either dword
/// (`from_gfx9/vector.rs`, `pair_fields`). v2 = lane as f32, v3 = v2 + 0.5; row k of the output
/// is the k-th stored register.
const PACKED_CONSTANTS: &[u32] = &[
    0xBE80_00FF,
    0x1111_1111, // s_mov_b32 s0, 0x11111111
    0xBE81_00FF,
    0x2222_2222, // s_mov_b32 s1, 0x22222222
    0x2402_0082, // v_lshlrev_b32_e32 v1, 2, v0
    0x7E04_0D00, // v_cvt_f32_u32_e32 v2, v0
    0x0206_04F0, // v_add_f32_e32 v3, 0.5, v2
    0xD3B2_4004,
    0x0801_E502, // v_pk_add_f32 v[4:5], v[2:3], 1.0 op_sel_hi:[1,0]
    0xD3B0_4006,
    0x0A01_E902, // v_pk_fma_f32 v[6:7], v[2:3], 2.0, 0 op_sel_hi:[1,0,1]
    0xD3B1_4808,
    0x0001_EF02, // v_pk_mul_f32 v[8:9], v[2:3], -4.0 op_sel:[1,0] op_sel_hi:[0,0]
    0xD3B3_400A,
    0x1801_0AC1, // v_pk_mov_b32 v[10:11], -1, 5
    0xD3B3_580C,
    0x1801_0102, // v_pk_mov_b32 v[12:13], v[2:3], 0 op_sel:[1,1]
    0xDC70_8000,
    0x0000_0401, // global_store_dword v1, v4, s[0:1]
    0xDC70_8100,
    0x0000_0501, // global_store_dword v1, v5, s[0:1] offset:256
    0xDC70_8200,
    0x0000_0601, // global_store_dword v1, v6, s[0:1] offset:512
    0xDC70_8300,
    0x0000_0701, // global_store_dword v1, v7, s[0:1] offset:768
    0xDC70_8400,
    0x0000_0801, // global_store_dword v1, v8, s[0:1] offset:1024
    0xDC70_8500,
    0x0000_0901, // global_store_dword v1, v9, s[0:1] offset:1280
    0xDC70_8600,
    0x0000_0A01, // global_store_dword v1, v10, s[0:1] offset:1536
    0xDC70_8700,
    0x0000_0B01, // global_store_dword v1, v11, s[0:1] offset:1792
    0xDC70_8800,
    0x0000_0C01, // global_store_dword v1, v12, s[0:1] offset:2048
    0xDC70_8900,
    0x0000_0D01, // global_store_dword v1, v13, s[0:1] offset:2304
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xBF81_0000, // s_endpgm
];

#[test]
fn gfx90a_packed_f32_and_pk_mov_take_inline_constants() {
    let (lo, hi) = (|i: usize| i as f32, |i: usize| i as f32 + 0.5);
    let rows: [&dyn Fn(usize) -> u32; 10] = [
        &|i| (lo(i) + 1.0).to_bits(), // v_pk_add_f32 ..., 1.0 op_sel_hi:[1,0]
        &|i| (hi(i) + 1.0).to_bits(),
        &|i| lo(i).mul_add(2.0, 0.0).to_bits(), // v_pk_fma_f32 ..., 2.0, 0
        &|i| hi(i).mul_add(2.0, 0.0).to_bits(),
        &|i| (hi(i) * -4.0).to_bits(), // v_pk_mul_f32 op_sel:[1,0]: the low half reads v3
        &|i| (lo(i) * -4.0).to_bits(), // op_sel_hi:[0,0]: the high half reads v2
        &|_| u32::MAX,                 // v_pk_mov_b32 v[10:11], -1, 5
        &|_| 5,
        &|i| hi(i).to_bits(), // v_pk_mov_b32 v[12:13], v[2:3], 0 op_sel:[1,1]
        &|_| 0,
    ];
    let out = Kernel::new(PACKED_CONSTANTS).run(Processor::Gfx90a).unwrap_or_else(|error| panic!("{error}"));
    for (row, expected) in rows.iter().enumerate() {
        let want: Vec<u32> = (0..64).map(expected).collect();
        assert_eq!(out[64 * row..64 * row + 64], want, "row {row}");
    }
    // A non-zero constant's high dword (op_sel_hi set, as `v_pk_add_f32 v[4:5], v[2:3], 1.0`
    // encodes) is refused, naming the instruction.
    let error = Kernel::new(&[0xD3B2_4004, 0x1801_E502, 0xBF81_0000]).run(Processor::Gfx90a).expect_err("refused");
    assert!(matches!(error, ExecError::Unsupported { mnemonic: "v_pk_add_f32", .. }), "{error:?}");
}

/// gfx9's SDWA `v_cmpx` (`Plan::CmpxMask` of its VOP3 form): the mask goes to its sdst (or
/// VCC) and to EXEC, with DWORD selects and with an f16 compare of a source's high word (which
/// VOP3 makes by op_sel); the instructions after each run only in the lanes it left. Rows: v6
/// (7 where lane < 40), s2 and s3, v11 (9 where lane < 20), vcc_lo and vcc_hi.
const SDWA_CMPX: &[u32] = &[
    0xBE80_00FF,
    0x1111_1111, // s_mov_b32 s0, 0x11111111
    0xBE81_00FF,
    0x2222_2222, // s_mov_b32 s1, 0x22222222
    0x2402_0082, // v_lshlrev_b32_e32 v1, 2, v0
    0x7E06_02A8, // v_mov_b32_e32 v3, 40
    0xBE84_017E, // s_mov_b64 s[4:5], exec
    0x7E0C_02C1, // v_mov_b32_e32 v6, -1
    0x7DB2_06F9,
    0x0606_8200, // v_cmpx_lt_u32_sdwa s[2:3], v0, v3 src0_sel:DWORD src1_sel:DWORD
    0x7E0C_0287, // v_mov_b32_e32 v6, 7
    0xBEFE_0104, // s_mov_b64 exec, s[4:5]
    0x7E0E_0202, // v_mov_b32_e32 v7, s2
    0x7E10_0203, // v_mov_b32_e32 v8, s3
    0x7E14_7300, // v_cvt_f16_u16_e32 v10, v0
    0x2408_1490, // v_lshlrev_b32_e32 v4, 16, v10
    0x2808_08FF,
    0x0000_4D00, // v_or_b32_e32 v4, 0x4d00, v4
    0x7E0A_02FF,
    0x0000_4D00, // v_mov_b32_e32 v5, 0x4d00
    0x7E16_02C1, // v_mov_b32_e32 v11, -1
    0x7C62_0AF9,
    0x0405_0004, // v_cmpx_lt_f16_sdwa vcc, v4, v5 src0_sel:WORD_1 src1_sel:WORD_0
    0x7E16_0289, // v_mov_b32_e32 v11, 9
    0xBEFE_0104, // s_mov_b64 exec, s[4:5]
    0x7E18_026A, // v_mov_b32_e32 v12, vcc_lo
    0x7E1A_026B, // v_mov_b32_e32 v13, vcc_hi
    0xDC70_8000,
    0x0000_0601, // global_store_dword v1, v6, s[0:1]
    0xDC70_8100,
    0x0000_0701, // global_store_dword v1, v7, s[0:1] offset:256
    0xDC70_8200,
    0x0000_0801, // global_store_dword v1, v8, s[0:1] offset:512
    0xDC70_8300,
    0x0000_0B01, // global_store_dword v1, v11, s[0:1] offset:768
    0xDC70_8400,
    0x0000_0C01, // global_store_dword v1, v12, s[0:1] offset:1024
    0xDC70_8500,
    0x0000_0D01, // global_store_dword v1, v13, s[0:1] offset:1280
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xBF81_0000, // s_endpgm
];

#[test]
fn gfx9_sdwa_v_cmpx_writes_its_sdst_and_exec() {
    for processor in [Processor::Gfx906, Processor::Gfx90a] {
        let out = Kernel::new(SDWA_CMPX).run(processor).unwrap_or_else(|error| panic!("{processor:?}: {error}"));
        let rows: [&dyn Fn(usize) -> u32; 6] = [
            &|i| if i < 40 { 7 } else { u32::MAX },
            &|_| u32::MAX,
            &|_| 0xFF,
            &|i| if i < 20 { 9 } else { u32::MAX },
            &|_| 0xF_FFFF,
            &|_| 0,
        ];
        for (row, expected) in rows.iter().enumerate() {
            let want: Vec<u32> = (0..64).map(expected).collect();
            assert_eq!(out[64 * row..64 * row + 64], want, "{processor:?} row {row}");
        }
    }
    // A byte select of a 32-bit operand, which gfx11's VOP3 cannot make, is refused:
    // v_cmpx_lt_u32_sdwa vcc, v0, v3 src0_sel:BYTE_0 src1_sel:DWORD.
    let error = Kernel::new(&[0x7DB2_06F9, 0x0600_0000, 0xBF81_0000]).run(Processor::Gfx90a).expect_err("refused");
    assert!(matches!(error, ExecError::Unsupported { mnemonic: "v_cmpx_lt_u32_sdwa", .. }), "{error:?}");
}

/// gfx9's typed MTBUF accesses (`tbuffer_*`), whose dfmt/nfmt become gfx11's unified format:
/// a 32-bit float and a 16-bit uint store, then an 8_8 UNORM load of the float's two low bytes,
/// all raw (offen) through a V# in s[4:7] whose base is the output (word 3: DST_SEL x, y, z, w,
/// which typed loads apply, and gfx9's 32_FLOAT). Rows: the floats, the 16-bit stores (their
/// dwords' high halves untouched, 0), and the two UNORM components.
const TYPED_BUFFER: &[u32] = &[
    0xBE84_00FF,
    0x1111_1111, // s_mov_b32 s4, 0x11111111
    0xBE85_00FF,
    0x2222_2222, // s_mov_b32 s5, 0x22222222
    0xBE86_00FF,
    0x0000_1000, // s_mov_b32 s6, 0x1000
    0xBE87_00FF,
    0x0002_7FAC, // s_mov_b32 s7, 0x27fac
    0x2402_0082, // v_lshlrev_b32_e32 v1, 2, v0
    0x7E06_0D00, // v_cvt_f32_u32_e32 v3, v0
    0x0206_06FF,
    0x3F81_2345, // v_add_f32_e32 v3, 0x3f812345, v3
    0x6808_00FF,
    0x0001_2340, // v_add_u32_e32 v4, 0x12340, v0
    0xEBA2_1000,
    0x8001_0301, // tbuffer_store_format_x v3, v1, s[4:7], 0 format:[BUF_DATA_FORMAT_32,BUF_NUM_FORMAT_FLOAT] offen
    0xEA12_1100,
    0x8001_0401, // tbuffer_store_format_x v4, v1, s[4:7], 0 format:[BUF_DATA_FORMAT_16,BUF_NUM_FORMAT_UINT] offen offset:256
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xE818_9000,
    0x8001_0601, // tbuffer_load_format_xy v[6:7], v1, s[4:7], 0 format:[BUF_DATA_FORMAT_8_8] offen
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xEBA2_1200,
    0x8001_0601, // tbuffer_store_format_x v6, v1, s[4:7], 0 format:[BUF_DATA_FORMAT_32,BUF_NUM_FORMAT_FLOAT] offen offset:512
    0xEBA2_1300,
    0x8001_0701, // tbuffer_store_format_x v7, v1, s[4:7], 0 format:[BUF_DATA_FORMAT_32,BUF_NUM_FORMAT_FLOAT] offen offset:768
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xBF81_0000, // s_endpgm
];

#[test]
fn gfx9_tbuffer_formats_become_gfx11_s_unified_formats() {
    let float = |i: usize| i as f32 + f32::from_bits(0x3F81_2345);
    let rows: [&dyn Fn(usize) -> u32; 4] = [
        &|i| float(i).to_bits(),
        &|i| 0x2340 + i as u32,
        &|i| ((float(i).to_bits() & 0xFF) as f32 / 255.0).to_bits(),
        &|i| ((float(i).to_bits() >> 8 & 0xFF) as f32 / 255.0).to_bits(),
    ];
    for processor in [Processor::Gfx906, Processor::Gfx90a] {
        let out = Kernel::new(TYPED_BUFFER).run(processor).unwrap_or_else(|error| panic!("{processor:?}: {error}"));
        for (row, expected) in rows.iter().enumerate() {
            let want: Vec<u32> = (0..64).map(expected).collect();
            assert_eq!(out[64 * row..64 * row + 64], want, "{processor:?} row {row}");
        }
    }
}

/// Asserts that pair k of `out` (64-bit values, out[128·k + 2·i] low and out[128·k + 2·i + 1]
/// high for lane i) holds `pairs[k](i)` in every lane.
fn assert_pairs(out: &[u32], pairs: &[&dyn Fn(u64) -> u64]) {
    for (pair, expected) in pairs.iter().enumerate() {
        for lane in 0..64 {
            let at = 128 * pair + 2 * lane;
            let got = u64::from(out[at]) | u64::from(out[at + 1]) << 32;
            assert_eq!(got, expected(lane as u64), "pair {pair}, lane {lane}");
        }
    }
}

/// gfx942's `v_lshl_add_u64` (`(S0 << S1[2:0]) + S2`, MI300 ISA guide) and `v_mov_b64`, which
/// clang emits for address arithmetic and 64-bit copies: every shift LLVM selects (0–4,
/// `lshl-add-u64.ll`), a VGPR shift of 0–7 per lane, inline constants widened as 64-bit
/// integers, an SGPR pair, and a destination that is also a source. Pair k of the output holds
/// the k-th result, out[128·k + 2·i] low and out[128·k + 2·i + 1] high for lane i.
const SHIFT_ADD_64: &[u32] = &[
    0xBE80_00FF,
    0x1111_1111, // s_mov_b32 s0, <out low>
    0xBE81_00FF,
    0x2222_2222, // s_mov_b32 s1, <out high>
    0x2402_0083, // v_lshlrev_b32_e32 v1, 3, v0
    0x7E04_0300, // v_mov_b32_e32 v2, v0
    0x7E06_02FF,
    0x8000_0001, // v_mov_b32_e32 v3, 0x80000001
    0x7E08_02D0, // v_mov_b32_e32 v4, -16
    0x7E0A_0287, // v_mov_b32_e32 v5, 7
    0x2610_0087, // v_and_b32_e32 v8, 7, v0
    0xD208_000A,
    0x0411_0102, // v_lshl_add_u64 v[10:11], v[2:3], 0, v[4:5]
    0xD208_000C,
    0x0411_0302, // v_lshl_add_u64 v[12:13], v[2:3], 1, v[4:5]
    0xD208_000E,
    0x0411_0502, // v_lshl_add_u64 v[14:15], v[2:3], 2, v[4:5]
    0xD208_0010,
    0x0411_0702, // v_lshl_add_u64 v[16:17], v[2:3], 3, v[4:5]
    0xD208_0012,
    0x0411_0902, // v_lshl_add_u64 v[18:19], v[2:3], 4, v[4:5]
    0xD208_0014,
    0x0412_1102, // v_lshl_add_u64 v[20:21], v[2:3], v8, v[4:5]
    0xD208_0016,
    0x0305_0502, // v_lshl_add_u64 v[22:23], v[2:3], 2, -1
    0xD208_0018,
    0x0206_1000, // v_lshl_add_u64 v[24:25], s[0:1], v8, 1
    0x7E34_7102, // v_mov_b64_e32 v[26:27], v[2:3]
    0x7E38_70C2, // v_mov_b64_e32 v[28:29], -2
    0xD208_0004,
    0x0411_0304, // v_lshl_add_u64 v[4:5], v[4:5], 1, v[4:5]
    0x7E04_7102, // v_mov_b64_e32 v[2:3], v[2:3]
    0x7E3C_70FF,
    0x1234_5678, // v_mov_b64_e32 v[30:31], 0x12345678
    0xDC74_8000,
    0x0000_0A01, // global_store_dwordx2 v1, v[10:11], s[0:1]
    0xDC74_8200,
    0x0000_0C01, // global_store_dwordx2 v1, v[12:13], s[0:1] offset:512
    0xDC74_8400,
    0x0000_0E01, // global_store_dwordx2 v1, v[14:15], s[0:1] offset:1024
    0xDC74_8600,
    0x0000_1001, // global_store_dwordx2 v1, v[16:17], s[0:1] offset:1536
    0xDC74_8800,
    0x0000_1201, // global_store_dwordx2 v1, v[18:19], s[0:1] offset:2048
    0xDC74_8A00,
    0x0000_1401, // global_store_dwordx2 v1, v[20:21], s[0:1] offset:2560
    0xDC74_8C00,
    0x0000_1601, // global_store_dwordx2 v1, v[22:23], s[0:1] offset:3072
    0xDC74_8E00,
    0x0000_1801, // global_store_dwordx2 v1, v[24:25], s[0:1] offset:3584
    0x6802_02FF,
    0x0000_1000, // v_add_u32_e32 v1, 0x1000, v1
    0xDC74_8000,
    0x0000_1A01, // global_store_dwordx2 v1, v[26:27], s[0:1]
    0xDC74_8200,
    0x0000_1C01, // global_store_dwordx2 v1, v[28:29], s[0:1] offset:512
    0xDC74_8400,
    0x0000_0401, // global_store_dwordx2 v1, v[4:5], s[0:1] offset:1024
    0xDC74_8600,
    0x0000_0201, // global_store_dwordx2 v1, v[2:3], s[0:1] offset:1536
    0xDC74_8800,
    0x0000_1E01, // global_store_dwordx2 v1, v[30:31], s[0:1] offset:2048
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xBF81_0000, // s_endpgm
];

#[test]
fn gfx942_v_lshl_add_u64_and_v_mov_b64_run_as_the_guide_defines_them() {
    let mut kernel = Kernel::new(SHIFT_ADD_64);
    let address = kernel.out.as_ptr() as u64;
    let out = kernel.run(Processor::Gfx942).unwrap_or_else(|error| panic!("{error}"));
    let value = |lane: u64| 0x8000_0001u64 << 32 | lane;
    let addend = 7u64 << 32 | 0xFFFF_FFF0;
    let shift_add = |shift: u64, value: u64, addend: u64| (value << shift).wrapping_add(addend);
    let pairs: [&dyn Fn(u64) -> u64; 13] = [
        &|i| shift_add(0, value(i), addend),
        &|i| shift_add(1, value(i), addend),
        &|i| shift_add(2, value(i), addend),
        &|i| shift_add(3, value(i), addend),
        &|i| shift_add(4, value(i), addend),
        &|i| shift_add(i & 7, value(i), addend),
        &|i| shift_add(2, value(i), u64::MAX),
        &|i| shift_add(i & 7, address, 1),
        &value,
        &|_| (-2i64) as u64,
        &|_| shift_add(1, addend, addend),
        &value,
        &|_| 0x1234_5678,
    ];
    assert_pairs(&out, &pairs);
}

#[test]
fn gfx942_64_bit_moves_and_shift_adds_llvm_cannot_print_are_never_run() {
    // LLVM 19 decodes none of these (llvm-objdump-19 prints `.long`): v_lshl_add_u64 with
    // clamp, and with src0 negated; v_mov_b64_e64 with clamp. Ours reads the modifier bits
    // where the row has none (`gfx942.rs` refuses them), so reaching one fails either way.
    for words in [[0xD208_8000, 0x0411_0302], [0xD208_0000, 0x2411_0302], [0xD178_8000, 0x0000_0102]] {
        let error = Kernel::new(&[words[0], words[1], 0xBF81_0000]).run(Processor::Gfx942).expect_err("refused");
        let refused = matches!(error, ExecError::Unsupported { mnemonic, .. } if mnemonic.starts_with("v_lshl_add_u64") || mnemonic.starts_with("v_mov_b64"));
        assert!(refused || matches!(error, ExecError::Decode(_)), "{words:x?}: {error:?}");
    }
}

/// gfx90a's `row_newbcast:n` (gfx11's `row_share:n`: lane n of each row to the whole row) on a
/// 32-bit move, and its 64-bit ("DP ALU") DPP, which takes no other control: `v_ceil_f64`,
/// gfx942's `v_mov_b64` under a row mask, `v_fmac_f64`, and, with lane 3 of each row disabled,
/// a move without and with `bound_ctrl`. Pair k of the output holds the k-th result, as in
/// [`SHIFT_ADD_64`].
const NEW_BROADCAST: &[u32] = &[
    0xBE80_00FF,
    0x1111_1111, // s_mov_b32 s0, <out low>
    0xBE81_00FF,
    0x2222_2222, // s_mov_b32 s1, <out high>
    0x2402_0083, // v_lshlrev_b32_e32 v1, 3, v0
    0x7E0C_2D00, // v_cvt_f64_u32_e32 v[6:7], v0
    0xD280_0006,
    0x0001_E106, // v_add_f64 v[6:7], v[6:7], 0.5
    0x7E06_0280, // v_mov_b32_e32 v3, 0
    0x7E04_02FA,
    0xFF01_5300, // v_mov_b32_dpp v2, v0 row_newbcast:3 row_mask:0xf bank_mask:0xf
    0x7E08_30FA,
    0xFF01_5106, // v_ceil_f64_dpp v[4:5], v[6:7] row_newbcast:1 row_mask:0xf bank_mask:0xf
    0x7E10_70C1, // v_mov_b64_e32 v[8:9], -1
    0x7E10_70FA,
    0x5F01_5F06, // v_mov_b64_dpp v[8:9], v[6:7] row_newbcast:15 row_mask:0x5 bank_mask:0xf
    0x7E14_2C83, // v_cvt_f64_u32_e32 v[10:11], 3
    0x7E18_2D00, // v_cvt_f64_u32_e32 v[12:13], v0
    0x0814_18FA,
    0xFF01_5206, // v_fmac_f64_dpp v[10:11], v[6:7], v[12:13] row_newbcast:2 row_mask:0xf bank_mask:0xf
    0x7E1C_0287, // v_mov_b32_e32 v14, 7
    0x7E20_0287, // v_mov_b32_e32 v16, 7
    0x7E1E_0280, // v_mov_b32_e32 v15, 0
    0x7E22_0280, // v_mov_b32_e32 v17, 0
    0xBEFE_00FF,
    0xFFF7_FFF7, // s_mov_b32 exec_lo, 0xfff7fff7
    0xBEFF_00FF,
    0xFFF7_FFF7, // s_mov_b32 exec_hi, 0xfff7fff7
    0x7E1C_02FA,
    0xFF01_5300, // v_mov_b32_dpp v14, v0 row_newbcast:3 row_mask:0xf bank_mask:0xf
    0x7E20_02FA,
    0xFF09_5300, // v_mov_b32_dpp v16, v0 row_newbcast:3 row_mask:0xf bank_mask:0xf bound_ctrl:1
    0xBEFE_01C1, // s_mov_b64 exec, -1
    0xDC74_8000,
    0x0000_0201, // global_store_dwordx2 v1, v[2:3], s[0:1]
    0xDC74_8200,
    0x0000_0401, // global_store_dwordx2 v1, v[4:5], s[0:1] offset:512
    0xDC74_8400,
    0x0000_0801, // global_store_dwordx2 v1, v[8:9], s[0:1] offset:1024
    0xDC74_8600,
    0x0000_0A01, // global_store_dwordx2 v1, v[10:11], s[0:1] offset:1536
    0xDC74_8800,
    0x0000_0E01, // global_store_dwordx2 v1, v[14:15], s[0:1] offset:2048
    0xDC74_8A00,
    0x0000_1001, // global_store_dwordx2 v1, v[16:17], s[0:1] offset:2560
    0xBF8C_0F70, // s_waitcnt vmcnt(0)
    0xBF81_0000, // s_endpgm
];

#[test]
fn gfx90a_row_newbcast_broadcasts_a_lane_of_each_row_for_32_and_64_bit_operations() {
    let out = Kernel::new(NEW_BROADCAST).run(Processor::Gfx942).unwrap_or_else(|error| panic!("{error}"));
    let f64_bits = |value: f64| value.to_bits();
    let row = |lane: u64| lane & !15;
    let pairs: [&dyn Fn(u64) -> u64; 6] = [
        &|i| row(i) + 3,
        &|i| f64_bits((row(i) as f64 + 1.5).ceil()),
        &|i| if (i / 16) % 2 == 0 { f64_bits(row(i) as f64 + 15.5) } else { u64::MAX },
        &|i| f64_bits(3.0 + (row(i) as f64 + 2.5) * i as f64),
        // Lane 3 of each row is disabled: it keeps 7, and the others' source is disabled too:
        // not written without bound_ctrl, 0 with it.
        &|_| 7,
        &|i| if i % 16 == 3 { 7 } else { 0 },
    ];
    assert_pairs(&out, &pairs);
}

#[test]
fn gfx9_64_bit_dpp_takes_only_row_newbcast_as_llvm_decodes_it() {
    // v_ceil_f64_dpp v[0:1], v[2:3] row_newbcast:1 decodes on gfx90a; with row_shr:1 LLVM
    // prints "DP ALU dpp only supports row_newbcast", and on gfx906 the row has no DPP form.
    let newbcast = [0x7E00_30FA, 0xFF01_5102];
    let text = decode(&newbcast, 0, Processor::Gfx90a).map(|instruction| instruction.to_string());
    assert_eq!(text.as_deref().ok(), Some("v_ceil_f64_dpp v[0:1], v[2:3] row_newbcast:1 row_mask:0xf bank_mask:0xf"));
    assert!(decode(&[0x7E00_30FA, 0xFF01_1102], 0, Processor::Gfx90a).is_err());
    assert!(decode(&newbcast, 0, Processor::Gfx906).is_err());
    // row_newbcast is reserved before gfx90a: gfx906's v_mov_b32_dpp with it never runs.
    let error = Kernel::new(&[0x7E00_02FA, 0xFF01_5101, 0xBF81_0000]).run(Processor::Gfx906);
    assert!(error.is_err(), "{error:?}");
}

#[test]
fn gfx90a_and_gfx942_refuse_a_vgpr_tuple_at_an_odd_register_that_gfx908_runs() {
    // gfx90a's unified register file aligns 64-bit tuples to two (LLVM's `needsAlignedVGPRs`:
    // `llvm-mc-19 -mcpu=gfx90a` rejects these, `-mcpu=gfx908` encodes them).
    let odd: [[u32; 2]; 2] = [
        [0xD28F_0001, 0x0002_0880], // v_lshlrev_b64 v[1:2], 0, v[4:5]
        [0xD280_0002, 0x0002_1105], // v_add_f64 v[2:3], v[5:6], v[8:9]
    ];
    for words in odd {
        for processor in [Processor::Gfx90a, Processor::Gfx942] {
            let error = Kernel::new(&[words[0], words[1], 0xBF81_0000]).run(processor).expect_err("refused");
            assert!(
                matches!(error, ExecError::Unsupported { mnemonic, .. } if mnemonic.starts_with("v_lshlrev_b64") || mnemonic.starts_with("v_add_f64")),
                "{processor:?} {words:x?}: {error:?}"
            );
        }
        Kernel::new(&[words[0], words[1], 0xBF81_0000]).run(Processor::Gfx908).expect("gfx908 has no such rule");
    }
    // v_lshlrev_b64 v[2:3], 0, v[4:5]: aligned, it runs.
    Kernel::new(&[0xD28F_0002, 0x0002_0880, 0xBF81_0000]).run(Processor::Gfx90a).expect("an aligned tuple runs");
}
