//! gfx10.3 code through the interpreter (`DecodedKernel::load_for(.., Isa::Gfx10_3)`): hand-encoded
//! kernels for what the compiled test kernels (`kernels_exec.rs`) do not reach: SDWA selects
//! gfx11 has no form for, the gfx10-only dot products, `m0` and `null` renumbered, one
//! work-item id per VGPR, and an instruction with no gfx11 equivalent. Each word is what
//! `llvm-mc-19 -mcpu=gfx1030 -show-encoding` encodes for the text beside it.

use aqueduct_isa::interp::{DecodedKernel, Dispatch, ExecError, Isa, Regions};
use aqueduct_isa::native::{self, Tier};
use aqueduct_isa::run_workgroup;

/// gfx10's `s_code_end` (SOPP 31).
const S_CODE_END: u32 = 0xBF9F_0000;

/// A wave32 kernel descriptor with 32 VGPRs and `rsrc2`, its gfx10 code after it, and a zeroed
/// output buffer of 64 dwords whose address the code takes in v[20:21].
struct Kernel {
    words: Vec<u32>,
    out: Vec<u32>,
}

impl Kernel {
    /// `code` may name the output's address as the literals 0x1111_1111 (low) and 0x2222_2222
    /// (high), patched here.
    fn new(code: &[u32], rsrc2: u32) -> Kernel {
        let out = vec![0u32; 64];
        let address = out.as_ptr() as u64;
        let mut words = vec![0u32; 16];
        words[4] = 64; // kernel_code_entry_byte_offset
        words[12] = 3; // COMPUTE_PGM_RSRC1: (3 + 1) × 8 VGPRs
        words[13] = rsrc2;
        words[14] = 1 << 10; // ENABLE_WAVEFRONT_SIZE32
        words.extend(code.iter().map(|&word| match word {
            0x1111_1111 => address as u32,
            0x2222_2222 => (address >> 32) as u32,
            other => other,
        }));
        words.push(S_CODE_END);
        Kernel { words, out }
    }

    /// Runs one workgroup of `workgroup` work-items; returns the output.
    fn run(&mut self, workgroup: [u16; 3]) -> Result<Vec<u32>, ExecError> {
        let kernel_object = self.words.as_ptr() as u64;
        let out = self.out.as_mut_ptr() as u64;
        let memory = Regions(vec![(kernel_object, self.words.len() as u64 * 4), (out, 64 * 4)]);
        let kernel = DecodedKernel::load_for(&memory, kernel_object, Isa::Gfx10_3)?;
        let start = self.out.clone();
        let run = |tier| {
            let dispatch = Dispatch {
                instruction_limit: 1000,
                tier,
                ..Dispatch::new(&kernel, workgroup.map(u32::from), workgroup)
            };
            run_workgroup(&dispatch, &memory, [0; 3], &mut Vec::new())
        };
        let interpreted = run(Tier::Interpreter);
        if native::unavailable().is_none() {
            // The native tier, from the same memory (the output's address stays), agrees exactly.
            let expected = self.out.clone();
            self.out.copy_from_slice(&start);
            let compiled = run(Tier::Native);
            assert_eq!(
                (compiled, &self.out),
                (interpreted.clone(), &expected),
                "the native tier and the interpreter disagree"
            );
        }
        interpreted?;
        Ok(self.out.clone())
    }
}

/// A kernel's words: each instruction's, with its text.
fn code(kernel: &[(&[u32], &str)]) -> Vec<u32> {
    kernel.iter().flat_map(|(words, _)| words.iter().copied()).collect()
}

/// Puts the output's address in v[20:21].
const OUTPUT_ADDRESS: &[(&[u32], &str)] = &[
    (&[0x7E28_02FF, 0x1111_1111], "v_mov_b32_e32 v20, <output low>"),
    (&[0x7E2A_02FF, 0x2222_2222], "v_mov_b32_e32 v21, <output high>"),
];

#[test]
fn sdwa_selects_gfx10_dots_and_renumbered_scalars_compute_what_rdna2_does() {
    let kernel: &[(&[u32], &str)] = &[
        (&[0x7E02_02FF, 0x80F2_3456], "v_mov_b32_e32 v1, 0x80f23456"),
        (&[0x7E04_02FF, 0x1234_8001], "v_mov_b32_e32 v2, 0x12348001"),
        (
            &[0x4A06_04F9, 0x0403_0901],
            "v_add_nc_u32_sdwa v3, v1, v2 dst_sel:BYTE_1 dst_unused:UNUSED_SEXT src0_sel:BYTE_3 src1_sel:WORD_0",
        ),
        (&[0x7E08_02FF, 0xAAAA_AAAA], "v_mov_b32_e32 v4, 0xaaaaaaaa"),
        (
            &[0x3808_04F9, 0x000A_1501],
            "v_or_b32_sdwa v4, sext(v1), v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_2 src1_sel:BYTE_0",
        ),
        (&[0x7E0A_02FF, 0x0000_0056], "v_mov_b32_e32 v5, 0x56"),
        (&[0x7D54_0AF9, 0x0600_0001], "v_cmp_eq_u16_sdwa vcc_lo, v1, v5 src0_sel:BYTE_0 src1_sel:DWORD"),
        (&[0xD501_0005, 0x01A9_0280], "v_cndmask_b32_e64 v5, 0, 1, vcc_lo"),
        (&[0x7E0E_02C5], "v_mov_b32_e32 v7, -5"),
        (&[0xCC14_4006, 0x1C1E_0501], "v_dot2_i32_i16 v6, v1, v2, v7"),
        (&[0xCC15_C007, 0x1C1E_0501], "v_dot2_u32_u16 v7, v1, v2, v7 clamp"),
        (&[0xBEFC_0387], "s_mov_b32 m0, 7"),
        (&[0xBE89_0385], "s_mov_b32 s9, 5"),
        (&[0xBE88_037C], "s_mov_b32 s8, m0"),
        (&[0xBE89_037D], "s_mov_b32 s9, null"),
        (&[0x7E10_0208], "v_mov_b32_e32 v8, s8"),
        (&[0x7E12_0209], "v_mov_b32_e32 v9, s9"),
        (&[0x7E14_02FF, 0x0102_0304], "v_mov_b32_e32 v10, 0x1020304"),
        (&[0x1A14_0501], "v_dot4c_i32_i8 v10, v1, v2"),
        (&[0xCC16_400B, 0x1B0E_0501], "v_dot4_i32_i8 v11, v1, v2, -3"),
    ];
    let mut code = code(OUTPUT_ADDRESS);
    code.extend(self::code(kernel));
    for register in 3..=11u32 {
        // global_store_dword v[20:21], v<register>, off offset:<4 × (register − 3)>
        code.extend([0xDC70_8000 | ((register - 3) * 4), 0x007D_0014 | (register << 8)]);
    }
    code.push(0xBF81_0000); // s_endpgm
    let out = Kernel::new(&code, 0).run([1, 1, 1]).unwrap_or_else(|error| panic!("{error}"));

    let (a, b) = (0x80F2_3456u32, 0x1234_8001u32);
    let halves = |word: u32| [word as u16, (word >> 16) as u16];
    let bytes = |word: u32| word.to_le_bytes();
    let dot2_signed: i64 = (0..2).map(|i| i64::from(halves(a)[i] as i16) * i64::from(halves(b)[i] as i16)).sum();
    let dot2_unsigned: i64 = (0..2).map(|i| i64::from(halves(a)[i]) * i64::from(halves(b)[i])).sum();
    let dot4: i32 = (0..4).map(|i| i32::from(bytes(a)[i] as i8) * i32::from(bytes(b)[i] as i8)).sum();
    let expected = [
        // byte 3 of a (0x80) + word 0 of b (0x8001) = 0x8081: its low byte into byte 1, the
        // byte's sign (1) above it, zeros below.
        0xFFFF_8100,
        // byte 2 of a sign-extended (0xFFFFFFF2) | byte 0 of b (1): its low word into word 1,
        // word 0 kept.
        0xFFF3_AAAA,
        // byte 0 of a (0x56) == 0x56 as u16.
        1,
        (dot2_signed - 5) as i32 as u32,
        // The unsigned sum with 0xFFFFFFFB passes u32's range: clamped.
        (dot2_unsigned + 0xFFFF_FFFB).min(u32::MAX.into()) as u32,
        7, // m0
        0, // null reads 0
        0x0102_0304u32.wrapping_add(dot4 as u32),
        (dot4 - 3) as u32,
    ];
    assert_eq!(out[..9], expected, "got {:08x?}, want {expected:08x?}", &out[..9]);
}

#[test]
fn gfx10_work_item_ids_arrive_one_per_vgpr() {
    let kernel: &[(&[u32], &str)] = &[
        (&[0xD746_0003, 0x0401_0501], "v_lshl_add_u32 v3, v1, 2, v0"),
        (&[0x3406_0683], "v_lshlrev_b32_e32 v3, 3, v3"),
        (&[0xD70F_6A04, 0x0002_0714], "v_add_co_u32 v4, vcc_lo, v20, v3"),
        (&[0x500A_2A80], "v_add_co_ci_u32_e32 v5, vcc_lo, 0, v21, vcc_lo"),
        (&[0xDC74_8000, 0x007D_0004], "global_store_dwordx2 v[4:5], v[0:1], off"),
        (&[0xBF81_0000], "s_endpgm"),
    ];
    let mut code = code(OUTPUT_ADDRESS);
    code.extend(self::code(kernel));
    // ENABLE_VGPR_WORKITEM_ID = 1 (rsrc2 bits 12:11): X in v0, Y in v1.
    let out = Kernel::new(&code, 1 << 11).run([4, 2, 1]).unwrap_or_else(|error| panic!("{error}"));
    let expected: Vec<u32> = (0..8).flat_map(|item| [item % 4, item / 4]).collect();
    assert_eq!(out[..16], expected);
}

#[test]
fn a_gfx10_instruction_without_a_gfx11_equivalent_fails_naming_it() {
    // gfx11 dropped find-first-zero.
    let kernel: &[(&[u32], &str)] =
        &[(&[0xBF80_0000], "s_nop 0"), (&[0xBE80_1101], "s_ff0_i32_b32 s0, s1"), (&[0xBF81_0000], "s_endpgm")];
    let mut kernel = Kernel::new(&code(kernel), 0);
    let entry = kernel.words.as_ptr() as u64 + 64;
    let error = kernel.run([32, 1, 1]).expect_err("s_ff0_i32_b32 does not run");
    assert_eq!(error, ExecError::Unsupported { pc: entry + 4, mnemonic: "s_ff0_i32_b32" });
}
