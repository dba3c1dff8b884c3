use super::*;
use crate::gfx9::Processor;

/// Each case: a gfx9 instruction's words as `llvm-mc-19 -mcpu=gfx90a -show-encoding` encodes
/// it (the text in the comment), and its translation as gfx11's formatter prints it.
const CASES: &[(&[u32], &str)] = &[
    // s_mov_b32 m0, 0x100
    (&[0xBEFC_00FF, 0x100], "s_mov_b32 m0, 0x100"),
    // s_getreg_b32 s8, hwreg(HW_REG_MODE, 0, 10)
    (&[0xB888_4801], "s_getreg_b32 s8, hwreg(HW_REG_MODE, 0, 10)"),
    // s_waitcnt lgkmcnt(0)
    (&[0xBF8C_C07F], "s_waitcnt lgkmcnt(0)"),
    // s_endpgm
    (&[0xBF81_0000], "s_endpgm"),
    // s_load_dwordx2 s[0:1], s[4:5], 0x0 (offset 0, soffset null: gfx11 prints the null)
    (&[0xC006_0002, 0], "s_load_b64 s[0:1], s[4:5], null"),
    // s_load_dword s0, s[4:5], m0
    (&[0xC000_0002, 0x7C], "s_load_b32 s0, s[4:5], m0"),
    // s_load_dword s1, s[2:3], s4 offset:0x8
    (&[0xC002_4041, 0x0800_0008], "s_load_b32 s1, s[2:3], s4 offset:0x8"),
    // s_load_dword s1, s[2:3], 0x10 glc
    (&[0xC003_0041, 0x10], "s_load_b32 s1, s[2:3], 0x10 glc"),
    // v_lshlrev_b32_e32 v1, 2, v0
    (&[0x2402_0082], "v_lshlrev_b32_e32 v1, 2, v0"),
    // v_add_u32_e32 v2, m0, v0
    (&[0x6804_007C], "v_add_nc_u32_e32 v2, m0, v0"),
    // v_add_co_u32_e32 v1, vcc, v2, v3 (gfx11 has it only as VOP3; its formatter names vcc_lo)
    (&[0x3202_0702], "v_add_co_u32 v1, vcc_lo, v2, v3"),
    // v_addc_co_u32_e32 v4, vcc, 0, v5, vcc
    (&[0x3808_0A80], "v_add_co_ci_u32_e32 v4, vcc_lo, 0, v5, vcc_lo"),
    // v_readfirstlane_b32 m0, v1
    (&[0x7EF8_0501], "v_readfirstlane_b32 m0, v1"),
    // v_cmp_gt_u32_e64 s[0:1], m0, v1
    (&[0xD0CC_0000, 0x0002_027C], "v_cmp_gt_u32_e64 s0, m0, v1"),
    // v_mad_u64_u32 v[0:1], s[2:3], v2, v3, v[4:5]
    (&[0xD1E8_0200, 0x0412_0702], "v_mad_u64_u32 v[0:1], s2, v2, v3, v[4:5]"),
    // v_fma_f16 v1, v2, v3, v4 op_sel:[0,0,0,1]
    (&[0xD206_4001, 0x0412_0702], "v_fma_f16 v1, v2, v3, v4 op_sel:[0,0,0,1]"),
    // v_pk_fma_f16 v0, v1, v2, v3 op_sel:[1,0,0]
    (&[0xD38E_4800, 0x1C0E_0501], "v_pk_fma_f16 v0, v1, v2, v3 op_sel:[1,0,0]"),
    // v_mov_b32_dpp v3, v0 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
    (&[0x7E06_02FA, 0xFF09_1100], "v_mov_b32_dpp v3, v0 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1"),
    // ds_read_b32 v1, v2 offset:8
    (&[0xD86C_0008, 0x0100_0002], "ds_load_b32 v1, v2 offset:8"),
    // ds_cmpst_rtn_b32 v0, v1, v2, v3 offset:8 (comparand v2, new value v3)
    (&[0xD860_0008, 0x0003_0201], "ds_cmpstore_rtn_b32 v0, v1, v3, v2 offset:8"),
    // global_load_dword v1, v[2:3], off offset:-8 glc slc
    (&[0xDC53_9FF8, 0x017F_0002], "global_load_b32 v1, v[2:3], off offset:-8 glc slc"),
    // global_store_dword v1, v2, s[0:1]
    (&[0xDC70_8000, 0x0000_0201], "global_store_b32 v1, v2, s[0:1]"),
    // scratch_load_dword v1, v2, off
    (&[0xDC50_4000, 0x017F_0002], "scratch_load_b32 v1, v2, off"),
    // scratch_store_dword off, v0, s2 offset:8
    (&[0xDC70_4008, 0x0002_0000], "scratch_store_b32 off, v0, s2 offset:8"),
    // flat_load_dword v1, v[2:3] offset:8
    (&[0xDC50_0008, 0x0100_0002], "flat_load_b32 v1, v[2:3] offset:8"),
    // buffer_load_dword v1, v2, s[4:7], s8 offen offset:4 glc slc
    (&[0xE052_5004, 0x0801_0102], "buffer_load_b32 v1, v2, s[4:7], s8 offen offset:4 glc slc"),
    // v_mov_b32_e32 v1, flat_scratch_lo (kept in s102)
    (&[0x7E02_0266], "v_mov_b32_e32 v1, s102"),
    // v_add_f16_e32 v1, v2, v3 (runs as Plan::ZeroHigh: the VOP3 form, then the high half zeroed)
    (&[0x3E02_0702], "v_add_f16_e64 v1, v2, v3"),
    // v_add_u32_sdwa v1, v2, v3 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD
    (&[0x6802_06F9, 0x0606_0602], "v_add_nc_u32_e64 v1, v2, v3"),
    // v_add_f16_sdwa v1, v2, v3 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:WORD_1
    // src1_sel:WORD_1
    (&[0x3E02_06F9, 0x0505_1502], "v_add_f16_e64 v1, v2, v3 op_sel:[1,1,1]"),
    // v_fmac_f64_e32 v[0:1], v[2:3], v[4:5] (gfx11 lacks it: v_fma_f64 with vdst as src2)
    (&[0x0800_0902], "v_fma_f64 v[0:1], v[2:3], v[4:5], v[0:1]"),
    // v_fmac_f64_e32 v[0:1], 1.0, v[4:5]
    (&[0x0800_08F2], "v_fma_f64 v[0:1], 1.0, v[4:5], v[0:1]"),
    // v_fmac_f64_e64 v[0:1], -v[2:3], |v[4:5]| clamp mul:2
    (&[0xD104_8200, 0x2802_0902], "v_fma_f64 v[0:1], -v[2:3], |v[4:5]|, v[0:1] clamp mul:2"),
    // buffer_wbinvl1_vol: a no-op on the interpreter's coherent memory
    (&[0xE0FC_0000, 0], "buffer_gl1_inv"),
];

#[test]
fn gfx9_instructions_become_the_gfx11_instructions_llvm_names() {
    let mut wrong = Vec::new();
    for (words, expected) in CASES {
        let gfx9 = gfx9::decode(words, 0, Processor::Gfx90a).unwrap_or_else(|error| panic!("{expected}: {error}"));
        match translate(&gfx9) {
            Ok(translated) if translated.to_string() == *expected => {}
            Ok(translated) => wrong.push(format!("{gfx9}: {translated}, not {expected}")),
            Err(refusal) => wrong.push(format!("{gfx9}: refused ({})", refusal.0)),
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Each case: words `llvm-mc-19 -mcpu=gfx90a` encodes (the text) and the refusal's reason.
const REFUSED: &[(&[u32], &str)] = &[
    // s_cbranch_g_fork s[2:3], s[4:5]: gfx11 has no such operation (v_mac_f32, once here, runs
    // as Plan::Unfused)
    (&[0x9480_0402], "gfx11 has no such operation"),
    // v_mfma_f32_16x16x4f32 a[0:3], v0, v1, a[0:3] cbsz:1 (a broadcast on a one-block form:
    // `from_gfx9/mfma.rs` refuses it; `translate` refuses every MFMA, which it never sees)
    (&[0xD3C5_8100, 0x0402_0300], "an MFMA or AGPR operation outside from_gfx9/mfma.rs and agpr_memory.rs"),
    // v_cmpx_lt_u32_sdwa vcc, v0, v3 src0_sel:BYTE_0 src1_sel:DWORD (a select VOP3 cannot make;
    // `translate` never runs a v_cmpx, which `vector::cmpx` plans)
    (&[0x7DB2_06F9, 0x0600_0000], "gfx9's v_cmpx also writes VCC or its sdst; gfx11's writes only EXEC"),
    // (v_add_f16_dpp, once here, runs since 30f09a2: DPP with a 16-bit result.)
    // v_mov_b32_e32 v1, xnack_mask_lo
    (&[0x7E02_0268], "xnack_mask, which gfx11 lacks"),
];

#[test]
fn gfx9_instructions_without_an_equivalent_are_refused_by_name() {
    for (words, reason) in REFUSED {
        let gfx9 = gfx9::decode(words, 0, Processor::Gfx90a).unwrap_or_else(|error| panic!("{reason}: {error}"));
        assert_eq!(translate(&gfx9).err(), Some(Refusal(reason)), "{gfx9}");
        let planned = decoded(&gfx9, 64);
        assert!(matches!(planned.plan, Plan::Unsupported), "{gfx9}");
        assert_eq!(planned.source, Some(gfx9.entry.mnemonic));
    }
}

#[test]
fn gfx9_16_bit_results_zero_their_high_half_after_the_gfx11_operation() {
    // v_add_f16_e32 v1, v2, v3
    let add = gfx9::decode(&[0x3E02_0702], 0, Processor::Gfx90a).expect("decodes");
    assert!(matches!(decoded(&add, 64).plan, Plan::ZeroHigh(_)));
    // v_fma_f16 v1, v2, v3, v4 op_sel:[0,0,0,1] keeps the other half on gfx9 too.
    let fma = gfx9::decode(&[0xD206_4001, 0x0412_0702], 0, Processor::Gfx90a).expect("decodes");
    assert!(matches!(decoded(&fma, 64).plan, Plan::Vector(_)));
}

#[test]
fn gfx9_sdwa_selects_vop3_cannot_make_run_as_sdwa_plans() {
    // v_add_f16_sdwa v1, v2, v3 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1
    // src1_sel:DWORD: the 16-bit result written whole, its high half zeroed (a WORD_0 select
    // with UNUSED_PAD).
    let add = gfx9::decode(&[0x3E02_06F9, 0x0605_0602], 0, Processor::Gfx90a).expect("decodes");
    assert!(matches!(decoded(&add, 64).plan, Plan::Sdwa(_)));
    // v_mov_b32_sdwa v1, v2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_1
    let mov = gfx9::decode(&[0x7E02_02F9, 0x0001_0602], 0, Processor::Gfx90a).expect("decodes");
    assert!(matches!(decoded(&mov, 64).plan, Plan::Sdwa(_)));
}

#[test]
fn gfx90a_f64_atomics_run_on_the_64_bit_integer_atomics_operands() {
    // global_atomic_add_f64 v[0:1], v[2:3], v[4:5], off glc
    let add = gfx9::decode(&[0xDD3D_8000, 0x007F_0402], 0, Processor::Gfx90a).expect("decodes");
    assert_eq!(refusal(&add), None);
    let planned = decoded(&add, 64);
    assert_eq!(planned.instruction.to_string(), "global_atomic_add_u64 v[0:1], v[2:3], v[4:5], off glc");
    let Plan::Memory(access) = planned.plan else { panic!("not a memory plan") };
    assert!(matches!(
        access.operation,
        crate::interp::memory_ops::Operation::Atomic { op: crate::interp::AtomicOp::AddFloat, wide: true }
    ));
    // ds_add_rtn_f64 v[0:1], v2, v[4:5] offset:8
    let ds = gfx9::decode(&[0xD8F8_0008, 0x0000_0402], 0, Processor::Gfx90a).expect("decodes");
    let planned = decoded(&ds, 64);
    assert_eq!(planned.instruction.to_string(), "ds_add_rtn_u64 v[0:1], v2, v[4:5] offset:8");
    let Plan::Memory(access) = planned.plan else { panic!("not a memory plan") };
    assert!(matches!(
        access.operation,
        crate::interp::memory_ops::Operation::Atomic { op: crate::interp::AtomicOp::AddFloat, wide: true }
    ));
}

#[test]
fn gfx90a_v_pk_mov_b32_runs_as_its_own_plan_and_refuses_float_constants() {
    // v_pk_mov_b32 v[0:1], v[2:3], v[4:5] op_sel:[1,0]
    let mov = gfx9::decode(&[0xD3B3_4800, 0x1802_0902], 0, Processor::Gfx90a).expect("decodes");
    let Plan::PkMov(planned) = decoded(&mov, 64).plan else { panic!("not a PkMov plan") };
    assert_eq!(planned.1, 0b01);
    // v_pk_mov_b32 v[0:1], 0, v[4:5] runs; v_pk_mov_b32 v[0:1], 1.0, v[4:5] is refused.
    let zero = gfx9::decode(&[0xD3B3_4000, 0x1802_0880], 0, Processor::Gfx90a).expect("decodes");
    assert_eq!(refusal(&zero), None);
    let float = gfx9::decode(&[0xD3B3_4000, 0x1802_08F2], 0, Processor::Gfx90a).expect("decodes");
    assert_eq!(refusal(&float), Some("a float constant in v_pk_mov_b32 (its f64 stand-in widens it)"));
}

#[test]
fn gfx9_v_cmpx_runs_as_gfx11_v_cmp_then_exec_takes_its_mask() {
    // v_cmpx_gt_u32_e32 vcc, 4, v0; v_cmpx_gt_u32_e64 s[2:3], v0, 4
    for (words, expected) in [
        (&[0x7DB8_0084][..], "v_cmp_gt_u32_e32 vcc_lo, 4, v0"),
        (&[0xD0DC_0002, 0x0001_0900][..], "v_cmp_gt_u32_e64 s2, v0, 4"),
    ] {
        let cmpx = gfx9::decode(words, 0, Processor::Gfx90a).expect("decodes");
        let planned = decoded(&cmpx, 64);
        assert!(matches!(planned.plan, Plan::CmpxMask(_)), "{cmpx}");
        assert_eq!(planned.instruction.to_string(), expected);
    }
}

#[test]
fn gfx90a_packed_f32_runs_as_two_f32_rows_and_refuses_a_constant_s_high_dword() {
    // v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7] op_sel:[1,0,0] op_sel_hi:[0,1,1] neg_lo:[1,0,0]
    let fma = gfx9::decode(&[0xD3B0_4800, 0x341A_0902], 0, Processor::Gfx90a).expect("decodes");
    let Plan::Dual(pair) = decoded(&fma, 64).plan else { panic!("not a Dual plan") };
    assert_eq!((pair.0.operands.vdst, pair.1.operands.vdst), (0, 1));
    // v_pk_add_f32 v[0:1], v[2:3], 1.0
    let constant = gfx9::decode(&[0xD3B2_4000, 0x1801_E502], 0, Processor::Gfx90a).expect("decodes");
    assert_eq!(refusal(&constant), Some("a packed constant's high dword, which the guides do not give"));
}

#[test]
fn gfx9_tbuffer_accesses_take_gfx11_s_unified_format() {
    // tbuffer_load_format_xy v[6:7], v1, s[4:7], 0 format:[BUF_DATA_FORMAT_8_8] offen (UNORM)
    // and tbuffer_load_format_x v1, v2, s[4:7], s8 format:[BUF_DATA_FORMAT_32,BUF_NUM_FORMAT_FLOAT]
    // offen offset:4 glc slc, as llvm-mc-19 -mcpu=gfx1100 prints their gfx11 forms.
    for (words, expected) in [
        (
            &[0xE818_9000u32, 0x8001_0601][..],
            "tbuffer_load_format_xy v[6:7], v1, s[4:7], 0 format:[BUF_FMT_8_8_UNORM] offen",
        ),
        (
            &[0xEBA0_5004, 0x0841_0102][..],
            "tbuffer_load_format_x v1, v2, s[4:7], s8 format:[BUF_FMT_32_FLOAT] offen offset:4 glc slc",
        ),
    ] {
        let gfx9 = gfx9::decode(words, 0, Processor::Gfx90a).expect("decodes");
        assert_eq!(decoded(&gfx9, 64).instruction.to_string(), expected, "{gfx9}");
    }
}

#[test]
fn gfx9_buffer_accesses_keep_idxen_and_plan_gfx9_s_v_sharp_layout() {
    use crate::interp::memory_ops::Descriptor;
    // buffer_load_format_d16_xyzw v[2:3], v[4:5], s[8:11], s12 idxen offen and tbuffer_store_format_x
    // v1, v2, s[4:7], 0 format:[BUF_DATA_FORMAT_16,BUF_NUM_FORMAT_UINT] idxen, and their gfx11
    // forms as llvm-mc-19 -mcpu=gfx1100 prints them.
    for (words, expected) in [
        (&[0xE02C_3000u32, 0x0C02_0204][..], "buffer_load_d16_format_xyzw v[2:3], v[4:5], s[8:11], s12 idxen offen"),
        (&[0xEA12_2000, 0x8001_0102][..], "tbuffer_store_format_x v1, v2, s[4:7], 0 format:[BUF_FMT_16_UINT] idxen"),
    ] {
        let gfx9 = gfx9::decode(words, 0, Processor::Gfx90a).expect("decodes");
        let planned = decoded(&gfx9, 64);
        assert_eq!(planned.instruction.to_string(), expected, "{gfx9}");
        let Plan::Memory(access) = planned.plan else { panic!("{gfx9}: not a memory plan") };
        assert_eq!(access.descriptor, Descriptor::Gfx9, "{gfx9}");
    }
    // buffer_load_format_xyzw a[0:3], v0, s[4:7], 0 idxen: AGPR data keeps the layout too.
    let agprs = gfx9::decode(&[0xE00C_2000, 0x8081_0000], 0, Processor::Gfx90a).expect("decodes");
    let Plan::AgprMemory(plan) = decoded(&agprs, 64).plan else { panic!("not an AGPR memory plan") };
    assert_eq!(plan.access.descriptor, Descriptor::Gfx9);
    // A DS access has no V#: gfx11's default stays.
    let ds = gfx9::decode(&[0xD8F8_0008, 0x0000_0402], 0, Processor::Gfx90a).expect("decodes");
    let Plan::Memory(access) = decoded(&ds, 64).plan else { panic!("not a memory plan") };
    assert_eq!(access.descriptor, Descriptor::Gfx11);
}
