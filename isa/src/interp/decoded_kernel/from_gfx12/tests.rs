use super::*;
use crate::interp::coverage::{Registers, execute};
use crate::interp::{Isa, Regions};

/// Each case: a gfx12 instruction's words as `llvm-mc-19 -mcpu=gfx1200 -show-encoding` encodes
/// it (the text in the comment), and its translation as gfx11's formatter prints it.
const CASES: &[(&[u32], &str)] = &[
    // s_add_co_i32 s2, s0, ttmp9
    (&[0x8102_7500], "s_add_i32 s2, s0, ttmp9"),
    // s_wait_loadcnt 0x1
    (&[0xBFC0_0001], "s_waitcnt vmcnt(1)"),
    // s_wait_kmcnt 0x0
    (&[0xBFC7_0000], "s_waitcnt lgkmcnt(0)"),
    // s_wait_loadcnt_dscnt 0x102
    (&[0xBFC8_0102], "s_waitcnt vmcnt(1) lgkmcnt(2)"),
    // s_wait_storecnt 0x0
    (&[0xBFC1_0000], "s_waitcnt vmcnt(0)"),
    // s_wait_alu 0xfffe
    (&[0xBF88_FFFE], "s_waitcnt_depctr 0xfffe"),
    // s_barrier_signal -1
    (&[0xBE80_4EC1], "s_barrier"),
    // s_barrier_wait 0xffff
    (&[0xBF94_FFFF], "s_nop 0"),
    // s_load_b64 s[0:1], s[4:5], 0x10
    (&[0xF400_2002, 0xF800_0010], "s_load_b64 s[0:1], s[4:5], 0x10"),
    // s_load_b32 s0, s[4:5], s6 offset:0x20
    (&[0xF400_0002, 0x0C00_0020], "s_load_b32 s0, s[4:5], s6 offset:0x20"),
    // v_max_num_f32_e32 v1, v2, v3
    (&[0x2C02_0702], "v_max_f32_e32 v1, v2, v3"),
    // v_mad_co_u64_u32 v[0:1], null, s2, v3, v[4:5]
    (&[0xD6FE_7C00, 0x0412_0602], "v_mad_u64_u32 v[0:1], null, s2, v3, v[4:5]"),
    // v_lshlrev_b64_e32 v[0:1], 2, v[2:3] (gfx12's new VOP2: gfx11's VOP3)
    (&[0x3E00_0482], "v_lshlrev_b64 v[0:1], 2, v[2:3]"),
    // v_add_f64_e32 v[0:1], v[2:3], v[4:5]
    (&[0x0400_0902], "v_add_f64 v[0:1], v[2:3], v[4:5]"),
    // v_add_f32_dpp v1, v1, v1 row_xmask:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
    (&[0x0602_02FA, 0xFF09_6101], "v_add_f32_dpp v1, v1, v1 row_xmask:1 row_mask:0xf bank_mask:0xf bound_ctrl:1"),
    // v_dual_max_num_f32 v0, v1, v2 :: v_dual_mov_b32 v3, v4
    (&[0xCA90_0501, 0x0002_0104], "v_dual_max_f32 v0, v1, v2 :: v_dual_mov_b32 v3, v4"),
    // ds_load_b32 v40, v10 offset:8
    (&[0xD8D8_0008, 0x2800_000A], "ds_load_b32 v40, v10 offset:8"),
    // global_load_b32 v1, v0, s[2:3] offset:-16
    (&[0xEE05_0002, 0x0000_0001, 0xFFFF_F000], "global_load_b32 v1, v0, s[2:3] offset:-16"),
    // global_store_b32 v0, v1, s[2:3] offset:4 th:TH_STORE_NT scope:SCOPE_SYS
    (&[0xEE06_8002, 0x009C_0000, 0x0000_0400], "global_store_b32 v0, v1, s[2:3] offset:4"),
    // global_atomic_add_u32 v1, v0, v2, s[2:3] th:TH_ATOMIC_RETURN
    (&[0xEE0D_4002, 0x0110_0001, 0x0000_0000], "global_atomic_add_u32 v1, v0, v2, s[2:3] glc"),
    // global_atomic_add_u32 v0, v2, s[2:3] scope:SCOPE_DEV
    (&[0xEE0D_4002, 0x0108_0000, 0x0000_0000], "global_atomic_add_u32 v0, v2, s[2:3]"),
    // scratch_load_b32 v1, v2, off offset:8
    (&[0xED05_007C, 0x0002_0001, 0x0000_0802], "scratch_load_b32 v1, v2, off offset:8"),
    // scratch_store_b32 off, v1, s2 offset:8
    (&[0xED06_8002, 0x0080_0000, 0x0000_0800], "scratch_store_b32 off, v1, s2 offset:8"),
    // flat_load_b32 v1, v[2:3] offset:16
    (&[0xEC05_007C, 0x0000_0001, 0x0000_1002], "flat_load_b32 v1, v[2:3] offset:16"),
    // buffer_load_b32 v1, v2, s[4:7], null offen offset:16
    (&[0xC405_007C, 0x4080_0801, 0x0000_1002], "buffer_load_b32 v1, v2, s[4:7], null offen offset:16"),
    // buffer_store_b32 v1, off, s[4:7], s8
    (&[0xC406_8008, 0x0080_0801, 0x0000_0000], "buffer_store_b32 v1, off, s[4:7], s8"),
    // tbuffer_load_format_x v1, v2, s[4:7], null format:[BUF_FMT_32_FLOAT] offen
    (
        &[0xC420_007C, 0x4B00_0801, 0x0000_0002],
        "tbuffer_load_format_x v1, v2, s[4:7], null format:[BUF_FMT_32_FLOAT] offen",
    ),
    // global_inv scope:SCOPE_DEV
    (&[0xEE0A_C07C, 0x0008_0000, 0x0000_0000], "s_nop 0"),
    // s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)
    (&[0xBFB6_0003], "s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)"),
    // s_getreg_b32 s0, hwreg(HW_REG_MODE, 0, 4)
    (&[0xB880_1801], "s_getreg_b32 s0, hwreg(HW_REG_MODE, 0, 4)"),
];

#[test]
fn gfx12_instructions_become_the_gfx11_instructions_llvm_names() {
    for (words, expected) in CASES {
        let gfx12 = gfx12::decode(words, 0).unwrap_or_else(|error| panic!("{expected}: {error}"));
        let translated = translate(&gfx12).unwrap_or_else(|refusal| panic!("{gfx12}: {}", refusal.0));
        assert_eq!(translated.to_string(), *expected, "{gfx12}");
        assert!(!matches!(decoded(&gfx12, 64).plan, Plan::Unsupported), "{gfx12}");
    }
}

#[test]
fn what_gfx11_cannot_hold_is_refused_naming_the_gfx12_instruction() {
    let cases: [(&[u32], &str); 5] = [
        // s_load_b32 s0, s[4:5], 0x200000
        (&[0xF400_0002, 0xF820_0000], "an SMEM offset beyond gfx11's 21 bits"),
        // buffer_load_b32 v1, v2, s[4:7], null offen offset:8192
        (&[0xC405_007C, 0x4080_0801, 0x0020_0002], "a buffer offset beyond gfx11's 12 bits"),
        // v_wmma_f32_16x16x16_bf16 v[0:7], v[8:11], v[12:15], v[0:7] neg_lo:[1,0,0] neg_hi:[1,0,0]
        (&[0xCC41_4100, 0x3C02_1908], "gfx12's WMMA operand layout is not gfx11's"),
        // s_getreg_b32 s0, hwreg(HW_REG_STATE_PRIV, 0, 4)
        (&[0xB880_1804], "a hardware register gfx11 numbers differently"),
        // global_load_b32 v1, v0, s[2:3] offset:8192 (a scalar base: no shadow address)
        (&[0xEE05_0002, 0x0000_0001, 0x0020_0000], "a memory offset beyond gfx11's 13 bits"),
    ];
    for (words, reason) in cases {
        let gfx12 = gfx12::decode(words, 0).unwrap();
        assert_eq!(translate(&gfx12).err(), Some(Refusal(reason)), "{gfx12}");
        let planned = decoded(&gfx12, 64);
        assert!(matches!(planned.plan, Plan::Unsupported), "{gfx12}");
        assert_eq!(planned.source, Some(gfx12.mnemonic()));
    }
}

/// `words` run once on `registers` as gfx12 code, with the host memory `regions`.
fn run(words: &[u32], registers: &mut Registers, regions: &Regions) -> Result<(), ExecError> {
    execute(Isa::Gfx12, words, registers, regions, &mut [0; 64]).map(|_| ())
}

#[test]
fn the_64_bit_scalar_operations_leave_scc_alone() {
    let mut registers = Registers::new(4);
    registers.sgpr[2] = 0xFFFF_FFFF;
    registers.sgpr[3] = 1;
    registers.scc = true;
    // s_add_nc_u64 s[0:1], s[2:3], 8
    run(&[0xA980_8802], &mut registers, &Regions(Vec::new())).unwrap();
    assert_eq!((registers.sgpr[0], registers.sgpr[1], registers.scc), (7, 2, true));
    // s_mul_u64 s[0:1], s[2:3], s[2:3] (SOP2 op 85): (2^33 - 1)^2 mod 2^64.
    run(&[0x8000_0000 | 85 << 23 | 2 << 8 | 2], &mut registers, &Regions(Vec::new())).unwrap();
    let square = 0x1_FFFF_FFFFu64.wrapping_mul(0x1_FFFF_FFFF);
    assert_eq!((registers.sgpr[0], registers.sgpr[1]), (square as u32, (square >> 32) as u32));
}

#[test]
fn the_f32_scalar_operations_round_as_ieee_and_compare_unordered_nans_false() {
    let mut registers = Registers::new(4);
    let none = Regions(Vec::new());
    registers.sgpr[1] = 1.5f32.to_bits();
    registers.sgpr[2] = 0.1f32.to_bits();
    // s_add_f32 s0, s1, s2 (SOP2 op 64)
    run(&[0xA000_0201], &mut registers, &none).unwrap();
    assert_eq!(registers.sgpr[0], (1.5f32 + 0.1f32).to_bits());
    // s_fmac_f32 s0, s1, s2 (SOP2 op 71): s0 = 1.5 × 0.1 + s0, fused.
    run(&[0x8000_0000 | 71 << 23 | 2 << 8 | 1], &mut registers, &none).unwrap();
    assert_eq!(registers.sgpr[0], 1.5f32.mul_add(0.1, 1.5 + 0.1).to_bits());
    // s_cvt_f32_u32 s0, s1 (SOP1 op 101) of 2^32 - 1: rounds to 2^32.
    registers.sgpr[1] = u32::MAX;
    run(&[0xBE80_6501], &mut registers, &none).unwrap();
    assert_eq!(registers.sgpr[0], 4_294_967_296f32.to_bits());
    // s_cmp_lt_f32 s1, s2 (SOPC op 65) with a NaN: false; s_cmp_nge_f32 (op 73): true.
    registers.sgpr[1] = f32::NAN.to_bits();
    registers.scc = true;
    run(&[0xBF41_0201], &mut registers, &none).unwrap();
    assert!(!registers.scc);
    run(&[0xBF00_0000 | 73 << 16 | 2 << 8 | 1], &mut registers, &none).unwrap();
    assert!(registers.scc);
    // Under round-toward-zero (MODE bits 1:0 = 3) the f32 operations are refused, not rounded
    // to nearest.
    registers.mode |= 3;
    let error = run(&[0xA000_0201], &mut registers, &none).unwrap_err();
    assert!(matches!(error, ExecError::Unsupported { .. }), "{error:?}");
}

#[test]
fn a_96_bit_scalar_load_fills_three_sgprs() {
    let memory = [0u32, 11, 22, 33, 44];
    let address = memory.as_ptr() as u64;
    let regions = Regions(vec![(address, 20)]);
    let mut registers = Registers::new(4);
    (registers.sgpr[0], registers.sgpr[1]) = (address as u32, (address >> 32) as u32);
    registers.sgpr[7] = 0x5A5A;
    // s_load_b96 s[4:6], s[0:1], 0x4 (SMEM op 5)
    run(&[0xF400_A100, 0xF800_0004], &mut registers, &regions).unwrap();
    assert_eq!(registers.sgpr[4..8], [11, 22, 33, 0x5A5A]);
}

#[test]
fn a_flat_access_with_a_negative_offset_reaches_address_minus_offset_and_keeps_the_address() {
    let memory: Vec<u32> = (0..64).map(|i| 1000 + i).collect();
    let base = memory.as_ptr() as u64;
    let regions = Regions(vec![(base, 256)]);
    let mut registers = Registers::new(4);
    // Each lane's address is 16 bytes past its word.
    let address = |lane: usize| base + 4 * lane as u64 + 16;
    registers.vgpr[2] = std::array::from_fn(|lane| address(lane) as u32);
    registers.vgpr[3] = std::array::from_fn(|lane| (address(lane) >> 32) as u32);
    let before = (registers.vgpr[2], registers.vgpr[3]);
    // flat_load_b32 v1, v[2:3] offset:-16
    run(&[0xEC05_007C, 0x0000_0001, 0xFFFF_F002], &mut registers, &regions).unwrap();
    assert_eq!(registers.vgpr[1].to_vec(), memory[..LANES].to_vec());
    assert_eq!((registers.vgpr[2], registers.vgpr[3]), before);
}

/// Every instruction of `tests/golden/gfx1200.txt` and `gfx1201.txt` (the gfx12 test kernels'
/// distinct instructions, 1,543 each) translates or gets its own plan: none is refused.
#[test]
fn the_gfx12_test_kernels_translate_whole() {
    for golden in
        [include_str!("../../../../tests/golden/gfx1200.txt"), include_str!("../../../../tests/golden/gfx1201.txt")]
    {
        let (mut translated, mut own) = (0, 0);
        let mut refused = std::collections::BTreeMap::new();
        for line in golden.lines() {
            let words: Vec<u32> = line
                .split('\t')
                .next()
                .unwrap()
                .split_whitespace()
                .map(|word| u32::from_str_radix(word, 16).unwrap())
                .collect();
            let instruction = gfx12::decode(&words, 0).unwrap_or_else(|error| panic!("{line}: {error}"));
            match decoded(&instruction, 256).plan {
                Plan::Unsupported => {
                    let reason = translate(&instruction).err().map_or("no plan", |refusal| refusal.0);
                    *refused.entry((instruction.mnemonic(), reason)).or_insert(0) += 1;
                }
                Plan::Gfx12(_) => own += 1,
                _ => translated += 1,
            }
        }
        assert!(refused.is_empty(), "{refused:#?}");
        assert!(translated > 1_400 && own > 10, "{translated} translated, {own} with their own plan");
    }
}

#[test]
fn a_pseudo_scalar_transcendental_writes_its_sgpr_whatever_exec_holds() {
    let mut registers = Registers::new(4);
    let none = Regions(Vec::new());
    registers.sgpr[2] = 3.0f32.to_bits();
    registers.sgpr[126] = 0;
    // v_s_exp_f32 s3, s2
    run(&[0xD680_0003, 0x0000_0002], &mut registers, &none).unwrap();
    assert_eq!(f32::from_bits(registers.sgpr[3]), 8.0);
    // v_s_sqrt_f32 s4, 4.0 (inline constant 246)
    run(&[0xD688_0004, 0x0000_00F6], &mut registers, &none).unwrap();
    assert_eq!(f32::from_bits(registers.sgpr[4]), 2.0);
    assert_eq!(registers.sgpr[126], 0, "EXEC is restored");
    assert!(registers.vgpr.iter().all(|row| row.iter().all(|&lane| lane == 0)), "no VGPR of the kernel's is written");
    // v_s_exp_f16 s3, s2: refused, naming it.
    let f16 = gfx12::decode(&[0xD681_0003, 0x0000_0002], 0).unwrap();
    let planned = decoded(&f16, 64);
    assert!(matches!(planned.plan, Plan::Unsupported));
    assert_eq!(planned.source, Some("v_s_exp_f16"));
}

/// A deterministic stream of small values for the WMMA tests (a 32-bit LCG).
fn stream(seed: u32) -> impl FnMut() -> u32 {
    let mut state = seed;
    move || {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        state >> 8
    }
}

/// gfx12's WMMA layout as the sources in `valu/wmma.rs` state it, written out independently:
/// A's (row m, k) is lane m + 16 × (k / 8), element k % 8 of that lane's packed vector; B's
/// (k, column n) the same with n; C's and D's (row, column) is lane column + 16 × (row / 8),
/// element row % 8.
fn ab_place(line: usize, k: usize) -> (usize, usize) {
    (line + 16 * (k / 8), k % 8)
}

fn cd_place(row: usize, column: usize) -> (usize, usize) {
    (column + 16 * (row / 8), row % 8)
}

/// Writes 16-bit element `index` of `lane`'s vector starting at VGPR `first`.
fn put16(registers: &mut Registers, first: usize, lane: usize, index: usize, bits: u16) {
    let word = &mut registers.vgpr[first + index / 2][lane];
    let shift = 16 * (index % 2);
    *word = (*word & !(0xFFFF << shift)) | (bits as u32) << shift;
}

/// Writes 8-bit element `index` of `lane`'s vector starting at VGPR `first`.
fn put8(registers: &mut Registers, first: usize, lane: usize, index: usize, bits: u8) {
    let word = &mut registers.vgpr[first + index / 4][lane];
    let shift = 8 * (index % 4);
    *word = (*word & !(0xFF << shift)) | (bits as u32) << shift;
}

#[test]
// Row and column indices read as the matrix arithmetic they check.
#[allow(clippy::needless_range_loop)]
fn gfx12_wmma_f32_f16_multiplies_in_rdna4s_layout() {
    let mut next = stream(7);
    // Small integers in f16: every product and sum is exact, so D must equal the reference.
    let a: Vec<Vec<f32>> = (0..16).map(|_| (0..16).map(|_| (next() % 9) as f32 - 4.0).collect()).collect();
    let b: Vec<Vec<f32>> = (0..16).map(|_| (0..16).map(|_| (next() % 9) as f32 - 4.0).collect()).collect();
    let c: Vec<Vec<f32>> = (0..16).map(|_| (0..16).map(|_| (next() % 64) as f32 - 32.0).collect()).collect();
    let mut registers = Registers::new(16);
    for line in 0..16 {
        for k in 0..16 {
            let (lane, index) = ab_place(line, k);
            put16(&mut registers, 8, lane, index, half::f16::from_f32(a[line][k]).to_bits());
            put16(&mut registers, 12, lane, index, half::f16::from_f32(b[k][line]).to_bits());
        }
    }
    for row in 0..16 {
        for column in 0..16 {
            let (lane, element) = cd_place(row, column);
            registers.vgpr[element][lane] = c[row][column].to_bits();
        }
    }
    // v_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[12:15], v[0:7]
    run(&[0xCC40_4000, 0x1C02_1908], &mut registers, &Regions(Vec::new())).unwrap();
    for row in 0..16 {
        for column in 0..16 {
            let expected = c[row][column] + (0..16).map(|k| a[row][k] * b[k][column]).sum::<f32>();
            let (lane, element) = cd_place(row, column);
            assert_eq!(f32::from_bits(registers.vgpr[element][lane]), expected, "D[{row}][{column}]");
        }
    }
}

#[test]
// Row and column indices read as the matrix arithmetic they check.
#[allow(clippy::needless_range_loop)]
fn gfx12_wmma_f16_result_packs_two_rows_a_register() {
    let mut next = stream(11);
    let a: Vec<Vec<f32>> = (0..16).map(|_| (0..16).map(|_| (next() % 5) as f32 - 2.0).collect()).collect();
    let b: Vec<Vec<f32>> = (0..16).map(|_| (0..16).map(|_| (next() % 5) as f32 - 2.0).collect()).collect();
    let c: Vec<Vec<f32>> = (0..16).map(|_| (0..16).map(|_| (next() % 16) as f32).collect()).collect();
    let mut registers = Registers::new(20);
    for line in 0..16 {
        for k in 0..16 {
            let (lane, index) = ab_place(line, k);
            put16(&mut registers, 8, lane, index, half::f16::from_f32(a[line][k]).to_bits());
            put16(&mut registers, 12, lane, index, half::f16::from_f32(b[k][line]).to_bits());
        }
    }
    for row in 0..16 {
        for column in 0..16 {
            let (lane, element) = cd_place(row, column);
            put16(&mut registers, 16, lane, element, half::f16::from_f32(c[row][column]).to_bits());
        }
    }
    // v_wmma_f16_16x16x16_f16 v[0:3], v[8:11], v[12:15], v[16:19]
    run(&[0xCC42_4000, 0x1C42_1908], &mut registers, &Regions(Vec::new())).unwrap();
    for row in 0..16 {
        for column in 0..16 {
            let expected = c[row][column] + (0..16).map(|k| a[row][k] * b[k][column]).sum::<f32>();
            let (lane, element) = cd_place(row, column);
            let bits = (registers.vgpr[element / 2][lane] >> (16 * (element % 2))) as u16;
            assert_eq!(half::f16::from_bits(bits).to_f32(), expected, "D[{row}][{column}]");
        }
    }
}

#[test]
// Row and column indices read as the matrix arithmetic they check.
#[allow(clippy::needless_range_loop)]
fn gfx12_wmma_iu8_reads_signedness_from_neg_lo_and_saturates_with_clamp() {
    let mut next = stream(3);
    let a: Vec<Vec<i8>> = (0..16).map(|_| (0..16).map(|_| next() as i8).collect()).collect();
    let b: Vec<Vec<i8>> = (0..16).map(|_| (0..16).map(|_| next() as i8).collect()).collect();
    let mut registers = Registers::new(16);
    for line in 0..16 {
        for k in 0..16 {
            let (lane, index) = ab_place(line, k);
            put8(&mut registers, 8, lane, index, a[line][k] as u8);
            put8(&mut registers, 12, lane, index, b[k][line] as u8);
        }
    }
    let c = |row: usize, column: usize| -> i32 {
        // Row 0 starts near i32::MAX, so clamp must saturate some sums there.
        if row == 0 { i32::MAX - 100 } else { (row * 16 + column) as i32 - 128 }
    };
    for row in 0..16 {
        for column in 0..16 {
            let (lane, element) = cd_place(row, column);
            registers.vgpr[element][lane] = c(row, column) as u32;
        }
    }
    // v_wmma_i32_16x16x16_iu8 v[0:7], v[8:9], v[12:13], v[0:7] neg_lo:[1,1,0] clamp
    run(&[0xCC44_C000, 0x7C02_1908], &mut registers, &Regions(Vec::new())).unwrap();
    let mut saturated = 0;
    for row in 0..16 {
        for column in 0..16 {
            let sum = c(row, column) as i64 + (0..16).map(|k| a[row][k] as i64 * b[k][column] as i64).sum::<i64>();
            let expected = sum.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
            saturated += (sum != expected as i64) as u32;
            let (lane, element) = cd_place(row, column);
            assert_eq!(registers.vgpr[element][lane] as i32, expected, "D[{row}][{column}]");
        }
    }
    assert!(saturated > 0, "the clamp case must saturate something");
}

#[test]
// Row and column indices read as the matrix arithmetic they check.
#[allow(clippy::needless_range_loop)]
fn gfx12_wmma_fp8_bf8_decodes_ocp_formats_with_c_zero() {
    let mut next = stream(5);
    // E4M3 and E5M2 bytes with exponents in a range whose products and sums f32 holds exactly
    // (|value| <= 2^4, at most 4 mantissa bits): D must equal the reference.
    let e4m3 = |n: u32| -> (u8, f32) {
        let (sign, exponent, mantissa) = (n & 1, 5 + (n >> 1) % 6, (n >> 4) & 7);
        let value = (1.0 + mantissa as f32 / 8.0) * 2f32.powi(exponent as i32 - 7);
        (((sign << 7) | exponent << 3 | mantissa) as u8, if sign == 1 { -value } else { value })
    };
    let e5m2 = |n: u32| -> (u8, f32) {
        let (sign, exponent, mantissa) = (n & 1, 13 + (n >> 1) % 6, (n >> 4) & 3);
        let value = (1.0 + mantissa as f32 / 4.0) * 2f32.powi(exponent as i32 - 15);
        (((sign << 7) | exponent << 2 | mantissa) as u8, if sign == 1 { -value } else { value })
    };
    let a: Vec<Vec<(u8, f32)>> = (0..16).map(|_| (0..16).map(|_| e4m3(next())).collect()).collect();
    let b: Vec<Vec<(u8, f32)>> = (0..16).map(|_| (0..16).map(|_| e5m2(next())).collect()).collect();
    let mut registers = Registers::new(16);
    for line in 0..16 {
        for k in 0..16 {
            let (lane, index) = ab_place(line, k);
            put8(&mut registers, 8, lane, index, a[line][k].0);
            put8(&mut registers, 12, lane, index, b[k][line].0);
        }
    }
    registers.vgpr[0] = [0xDEAD_BEEF; LANES];
    // v_wmma_f32_16x16x16_fp8_bf8 v[0:7], v[8:9], v[12:13], 0
    run(&[0xCC47_4000, 0x1A02_1908], &mut registers, &Regions(Vec::new())).unwrap();
    for row in 0..16 {
        for column in 0..16 {
            let expected = (0..16).map(|k| a[row][k].1 as f64 * b[k][column].1 as f64).sum::<f64>() as f32;
            let (lane, element) = cd_place(row, column);
            assert_eq!(f32::from_bits(registers.vgpr[element][lane]), expected, "D[{row}][{column}]");
        }
    }
}

#[test]
fn gfx12_wmma_forms_without_an_established_layout_are_refused() {
    // v_wmma_f32_16x16x16_f16 ... neg_lo:[1,0,0]: float negation is not modelled.
    let negated = gfx12::decode(&[0xCC40_4000, 0x3C02_1908], 0).unwrap();
    assert!(matches!(decoded(&negated, 64).plan, Plan::Unsupported));
    // An 8-bit form in a wave64 wave: only the f16/bf16 forms' wave64 layout is established.
    // v_wmma_f32_16x16x16_fp8_fp8 v[0:7], v[8:9], v[12:13], v[0:7]
    let planned = decoded(&gfx12::decode(&[0xCC46_4000, 0x1C02_1908], 0).unwrap(), 64);
    let Plan::Gfx12(own) = &planned.plan else { panic!("v_wmma_f32_16x16x16_fp8_fp8 plans as a gfx12 step") };
    let mut wave = Wave::blank();
    wave.vgpr = vec![[0; LANES]; 16];
    wave.wide = true;
    let Err(error) = step(&mut wave, own, &planned.instruction, &Regions(Vec::new()), &mut []) else {
        panic!("a gfx12 WMMA ran in wave64");
    };
    assert!(matches!(error, ExecError::Unsupported { mnemonic: "a gfx12 WMMA in wave64", .. }), "{error:?}");
}

#[test]
fn gfx12_wmma_modifiers_without_a_stated_meaning_are_refused() {
    let cases: [(&[u32], &str); 9] = [
        // v_wmma_bf16_16x16x16_bf16 v[0:3], v[8:11], v[12:15], 1.0 (LLVM 19 folds no bf16 splat)
        (&[0xCC43_4000, 0x1BCA_1908], "a gfx12 WMMA whose C is this constant"),
        // v_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[12:15], 0.15915494 (1/(2π))
        (&[0xCC40_4000, 0x1BE2_1908], "a gfx12 WMMA whose C is this constant"),
        // v_wmma_bf16_16x16x16_bf16 v[0:3], v[8:11], v[12:15], v[16:19] neg_lo:[0,0,1]
        (&[0xCC43_4000, 0x9C42_1908], "a gfx12 WMMA with negation or float clamp modifiers"),
        // v_wmma_f32_16x16x16_bf16 ... neg_lo:[1,0,0] neg_hi:[1,0,0] (bf16 A negation)
        (&[0xCC41_4100, 0x3C02_1908], "a gfx12 WMMA with negation or float clamp modifiers"),
        // v_wmma_f32_16x16x16_fp8_fp8 ... with neg_lo[0] set (llvm-mc-19 refuses it)
        (&[0xCC46_4000, 0x3C02_1908], "a gfx12 WMMA with negation or float clamp modifiers"),
        // v_wmma_f32_16x16x16_f16 ... with clamp set (llvm-mc-19 refuses it)
        (&[0xCC40_C000, 0x1C02_1908], "a gfx12 WMMA with negation or float clamp modifiers"),
        // v_wmma_f32_16x16x16_f16 ... with op_sel[0] set (llvm-mc-19 refuses it)
        (&[0xCC40_4800, 0x1C02_1908], "a gfx12 WMMA with op_sel"),
        // v_swmmac_i32_16x16x64_iu4 v[0:7], v[8:9], v[12:15], v20 with op_sel[0] (no index_key)
        (&[0xCC56_4800, 0x1C52_1908], "a gfx12 WMMA with op_sel"),
        // v_swmmac_f32_16x16x32_f16 v[0:7], v[8:11], v[12:19], v20 with neg_lo[2] (C is D)
        (&[0xCC50_4000, 0x9C52_1908], "a gfx12 WMMA with negation or float clamp modifiers"),
    ];
    for (words, reason) in cases {
        let gfx12 = gfx12::decode(words, 0).unwrap();
        assert_eq!(wmma(&gfx12).err(), Some(Refusal(reason)), "{gfx12}");
        assert!(matches!(decoded(&gfx12, 64).plan, Plan::Unsupported), "{gfx12}");
    }
}

#[test]
fn gfx12_wmma_constant_c_reads_as_llvm_encodes_a_splat() {
    // llc-19 -mcpu=gfx1200: <8 x half> of 0x0001 is `1`, <8 x half> of -2.0 is `-2.0`, <8 x i32>
    // of 0x3F80_0000 is `1.0`, <8 x float> of 0x0000_0001 is `1`.
    assert_eq!(splat(129, Output::F16), Some(0x0001_0001));
    assert_eq!(splat(245, Output::F16), Some(0xC000_C000));
    assert_eq!(splat(242, Output::I32), Some(0x3F80_0000));
    assert_eq!(splat(129, Output::F32), Some(1));
    assert_eq!(splat(195, Output::I32), Some(-3i32 as u32));
    assert_eq!(splat(247, Output::F32), Some((-4.0f32).to_bits()));
    assert_eq!(splat(128, Output::Bf16), Some(0));
    assert_eq!(splat(242, Output::Bf16), None);
    assert_eq!(splat(248, Output::F32), None);
}
