//! `s_getreg_b32` of the hardware registers `interp/hw_registers.rs` models, on gfx900, gfx90a,
//! gfx942 (gfx9's own layouts), gfx1100 and gfx1030 (translated to gfx11): kernels assembled with
//! llvm-mc-19 read each modelled field into an output row per work-item, and the values are
//! checked against what the dispatch's shape, the agent's topology and the kernel descriptor
//! give, worked out here from the sources' field definitions (the HW_ID layouts of HIP's
//! `amd_device_functions.h` and AMD's embers `hwid.h`; GPR_ALLOC, LDS_ALLOC and TRAPSTS as the
//! Linux CWSR trap handlers read them; STATUS as ROCdbgapi reads it), and against the invariants a
//! program may rely on: every wave of a workgroup reports the same place, every field is in
//! range for the agent, HIP's `__smid()` is below the CU count. Unmodelled fields fail typed.
//! The gfx1100 kernel also runs on the native tier, which must give the interpreter's rows.

use aqueduct_isa::gfx9::Processor;
use aqueduct_isa::interp::{DecodedKernel, Dispatch, ExecError, Isa, Regions, Topology};
use aqueduct_isa::native::Tier;
use aqueduct_isa::run_workgroup;

/// Dwords each work-item's row holds (the kernels' `v_lshlrev_b32 v1, 7, v1`: 128 bytes).
const ROW: usize = 32;

/// One dispatch of a test kernel: `groups` one-dimensional workgroups of `size` work-items.
struct Launch<'a> {
    isa: Isa,
    code: &'a [u32],
    rsrc1: u32,
    wave32: bool,
    /// The descriptor's GROUP_SEGMENT_FIXED_SIZE, bytes.
    lds: u32,
    size: u32,
    groups: u32,
    topology: Topology,
    tier: Tier,
}

impl Launch<'_> {
    /// Each work-item's row, or the first workgroup's error. The code's literals 0x1111_1111 and
    /// 0x2222_2222 become the output's address, 0x3333_3333 the workgroup size.
    fn run(&self) -> Result<Vec<[u32; ROW]>, ExecError> {
        let items = (self.size * self.groups) as usize;
        let mut out = vec![[0u32; ROW]; items];
        let address = out.as_mut_ptr() as u64;
        let mut words = vec![0u32; 16];
        words[0] = self.lds;
        words[4] = 64; // kernel_code_entry_byte_offset
        words[12] = self.rsrc1;
        words[13] = 1 << 7; // COMPUTE_PGM_RSRC2: USER_SGPR_COUNT 0, workgroup id X in s0
        words[14] = if self.wave32 { 1 << 10 } else { 0 };
        words.extend(self.code.iter().map(|&word| match word {
            0x1111_1111 => address as u32,
            0x2222_2222 => (address >> 32) as u32,
            0x3333_3333 => self.size,
            other => other,
        }));
        let memory =
            Regions(vec![(words.as_ptr() as u64, words.len() as u64 * 4), (address, (items * ROW * 4) as u64)]);
        let kernel = DecodedKernel::load_for(&memory, words.as_ptr() as u64, self.isa)?;
        let dispatch = Dispatch {
            instruction_limit: 10_000,
            topology: self.topology,
            tier: self.tier,
            ..Dispatch::new(&kernel, [self.size * self.groups, 1, 1], [self.size as u16, 1, 1])
        };
        for group in 0..self.groups {
            run_workgroup(&dispatch, &memory, [group, 0, 0], &mut Vec::new())?;
        }
        Ok(out)
    }
}

/// Where the soft runtime places compute unit `cu` (the module's rule in `hw_registers.rs`):
/// `per_array` CUs fill each shader array, arrays fill each engine. (engine, array, slot).
fn place(cu: u32, per_array: u32, topology: Topology) -> (u32, u32, u32) {
    let arrays = topology.shader_arrays_per_engine;
    (cu / (per_array * arrays), cu / per_array % arrays, cu % per_array)
}

/// Checks a gfx9 identity kernel's rows (fields: WAVE_ID, SIMD_ID, CU_ID, SH_ID, SE_ID,
/// GPR_ALLOC.VGPR_SIZE, GPR_ALLOC.SGPR_SIZE, LDS_ALLOC.LDS_SIZE) for `launch`, whose
/// descriptor asks for `vgprs` VGPRs (the unit GPR_ALLOC counts is `vgpr_unit`), `sgprs` SGPRs
/// and `launch.lds` bytes of LDS.
fn check_gfx9_identity(launch: &Launch<'_>, rows: &[[u32; ROW]], vgprs: u32, vgpr_unit: u32, sgprs: u32) {
    let topology = launch.topology;
    let mut places = std::collections::BTreeSet::new();
    for group in 0..launch.groups {
        let cu = group % topology.compute_units;
        let (engine, array, slot) = place(cu, 16, topology);
        for item in 0..launch.size {
            let row = &rows[(group * launch.size + item) as usize];
            let wave = item / 64;
            // Wave w of a workgroup on SIMD w % 4, slot w / 4 (four SIMD16s per CU).
            assert_eq!(row[..5], [wave / 4, wave % 4, slot, array, engine], "group {group} item {item}");
            // Every field in range for the agent.
            assert!(row[1] < 4 && row[2] < 16 && row[3] < topology.shader_arrays_per_engine);
            assert!(row[4] < topology.shader_engines);
            // GPR_ALLOC sizes are allocation units minus one (the trap handlers' `+ 1`).
            assert_eq!(row[5], vgprs / vgpr_unit - 1, "VGPR_SIZE");
            assert_eq!(row[6], sgprs / 16 - 1, "SGPR_SIZE");
            // LDS_ALLOC.LDS_SIZE: 64-dword units of LDS allocated in 128-dword blocks.
            assert_eq!(row[7], launch.lds.div_ceil(512) * 512 / 256, "LDS_SIZE");
        }
        places.insert((engine, array, slot));
        if topology.shader_arrays_per_engine == 1 {
            // HIP 5.2.3's __smid(): (SE_ID << 4) + CU_ID.
            let smid = rows[(group * launch.size) as usize][4] << 4 | rows[(group * launch.size) as usize][2];
            assert!(smid < topology.compute_units, "__smid {smid}");
        }
    }
    // Workgroups on distinct CUs report distinct places.
    assert_eq!(places.len() as u32, launch.groups.min(topology.compute_units));
}

/// Descriptor fields: GRANULATED_WORKITEM_VGPR_COUNT (5:0), GRANULATED_WAVEFRONT_SGPR_COUNT (9:6)
/// in gfx9's encoding (LLVM `getNumSGPRBlocks`: blocks of 16, minus 1, times 2).
fn gfx9_rsrc1(vgprs: u32, vgpr_granule: u32, sgprs: u32) -> u32 {
    (vgprs / vgpr_granule - 1) | (2 * (sgprs / 16 - 1)) << 6
}

#[test]
fn gfx900_hw_id_gpr_and_lds_alloc_follow_the_dispatch_and_a_two_array_topology() {
    let topology = Topology { compute_units: 64, shader_engines: 4, shader_arrays_per_engine: 2 };
    let launch = Launch {
        isa: Isa::Gfx9(Processor::Gfx900),
        code: IDENTITY_GFX900,
        rsrc1: gfx9_rsrc1(64, 4, 48),
        wave32: false,
        lds: 1000,
        size: 256,
        groups: 70,
        topology,
        tier: Tier::Interpreter,
    };
    let rows = launch.run().expect("the kernel runs");
    check_gfx9_identity(&launch, &rows, 64, 4, 48);
}

#[test]
fn gfx90a_hw_id_has_eight_engines_and_gpr_alloc_counts_units_of_eight() {
    // gfx90a's model: 104 CUs, 8 engines of one array (soft-hsa `gpu_models.rs`).
    let topology = Topology { compute_units: 104, shader_engines: 8, shader_arrays_per_engine: 1 };
    let launch = Launch {
        isa: Isa::Gfx9(Processor::Gfx90a),
        code: IDENTITY_GFX90A,
        rsrc1: gfx9_rsrc1(128, 8, 32),
        wave32: false,
        lds: 65536,
        size: 512,
        groups: 110,
        topology,
        tier: Tier::Interpreter,
    };
    let rows = launch.run().expect("the kernel runs");
    check_gfx9_identity(&launch, &rows, 128, 8, 32);
}

#[test]
fn gfx942_hw_id_and_allocation() {
    let topology = Topology { compute_units: 96, shader_engines: 32, shader_arrays_per_engine: 1 };
    let launch = Launch {
        isa: Isa::Gfx9(Processor::Gfx942),
        code: IDENTITY_GFX942,
        rsrc1: gfx9_rsrc1(512, 8, 96),
        wave32: false,
        lds: 0,
        size: 1024,
        groups: 100,
        topology,
        tier: Tier::Interpreter,
    };
    let rows = launch.run().expect("the kernel runs");
    check_gfx9_identity(&launch, &rows, 512, 8, 96);
}

#[test]
fn gfx90a_status_ib_sts_trapsts_and_sh_mem_bases_follow_the_wave() {
    for size in [64, 128] {
        let launch = Launch {
            isa: Isa::Gfx9(Processor::Gfx90a),
            code: STATE_GFX90A,
            rsrc1: gfx9_rsrc1(64, 8, 32),
            wave32: false,
            lds: 0,
            size,
            groups: 2,
            topology: Topology::default(),
            tier: Tier::Interpreter,
        };
        for row in &launch.run().expect("the kernel runs") {
            check_state_row(row, size > 64);
        }
    }
}

/// A row of the gfx90a state kernel of a workgroup of more than one wave (`shared`) or not.
fn check_state_row(row: &[u32; ROW], shared: bool) {
    // SCC after s_cmp_eq_u32 0, 0 and 0, 1; EXECZ with EXEC 0 and not; VCCZ with VCC 0 and
    // all ones.
    assert_eq!(row[..6], [1, 0, 1, 0, 1, 0]);
    // IB_STS right after a load no s_waitcnt has waited for: no counter is outstanding.
    assert_eq!(row[6], 0, "IB_STS");
    // SH_MEM_BASES: SHARED_BASE (31:16) and PRIVATE_BASE (15:0) are the apertures' bits
    // 63:48, which src_shared_base and src_private_base give as their high dwords' 31:16.
    assert_eq!(row[7] >> 16, row[8] >> 16, "SHARED_BASE");
    assert_eq!(row[7] & 0xFFFF, row[9] >> 16, "PRIVATE_BASE");
    assert_ne!(row[8], 0);
    // TRAPSTS.MEM_VIOL, SAVECTX and ILLEGAL_INST; STATUS.SPI_PRIO, PRIV and TRAP_EN, HALT.
    assert_eq!(row[10..15], [0, 0, 0, 0, 0]);
    // STATUS.IN_TG: a member of a workgroup of more than one wave; STATUS.VALID.
    assert_eq!(row[15..17], [u32::from(shared), 1]);
}

/// The gfx11 identity kernel's rows (HW_ID1's WAVE_ID, SIMD_ID, WGP_ID, SA_ID, SE_ID; then
/// GPR_ALLOC.VGPR_SIZE or, for gfx1030, IB_STS; LDS_SIZE; STATUS.SCC after a true compare,
/// STATUS.EXECZ with EXEC 0, IB_STS, TRAPSTS.MEM_VIOL).
fn check_gfx11_identity(launch: &Launch<'_>, rows: &[[u32; ROW]], sixth: u32) {
    let topology = launch.topology;
    let wgp_mode = launch.rsrc1 >> 29 & 1 == 1;
    for group in 0..launch.groups {
        // Two CUs a WGP, sixteen WGPs (WGP_ID is 4 bits) an array.
        let (engine, array, slot) = place(group % topology.compute_units, 32, topology);
        for item in 0..launch.size {
            let row = &rows[(group * launch.size + item) as usize];
            let wave = item / 32;
            // WGP mode spreads a workgroup's waves over the WGP's four SIMD32s, CU mode over its
            // CU's two.
            let (simd, id) = if wgp_mode { (wave % 4, wave / 4) } else { (2 * (slot % 2) + wave % 2, wave / 2) };
            assert_eq!(row[..5], [id, simd, slot / 2, array, engine], "group {group} item {item}");
            assert!(row[4] < topology.shader_engines && row[3] < topology.shader_arrays_per_engine);
            assert_eq!(row[5], sixth);
            assert_eq!(row[6], launch.lds.div_ceil(512) * 2);
            assert_eq!(row[7..11], [1, 1, 0, 0]);
        }
    }
}

#[test]
fn gfx1100_hw_id1_gpr_alloc_and_status_in_wgp_and_cu_mode_on_both_tiers() {
    let topology = Topology { compute_units: 96, shader_engines: 6, shader_arrays_per_engine: 2 };
    for wgp_mode in [true, false] {
        let mut interpreted = None;
        for tier in [Tier::Interpreter, Tier::Native] {
            let launch = Launch {
                isa: Isa::Gfx11,
                code: IDENTITY_GFX1100,
                // 40 VGPRs (granule 8 for wave32), WGP_MODE (bit 29).
                rsrc1: (40 / 8 - 1) | u32::from(wgp_mode) << 29,
                wave32: true,
                lds: 3000,
                size: 256,
                groups: 100,
                topology,
                tier,
            };
            let rows = launch.run().expect("the kernel runs");
            // GPR_ALLOC.VGPR_SIZE 19:12 counts units of 4 VGPRs, minus one.
            check_gfx11_identity(&launch, &rows, 40 / 4 - 1);
            match &interpreted {
                None => interpreted = Some(rows),
                Some(reference) => assert!(reference == &rows, "the native tier's rows differ"),
            }
        }
    }
}

#[test]
fn gfx1030_reads_hw_id1_and_status_through_gfx11_and_refuses_gpr_alloc() {
    let topology = Topology { compute_units: 80, shader_engines: 4, shader_arrays_per_engine: 2 };
    let launch = Launch {
        isa: Isa::Gfx10_3,
        code: IDENTITY_GFX1030,
        rsrc1: 1 << 29,
        wave32: true,
        lds: 512,
        size: 128,
        groups: 90,
        topology,
        tier: Tier::Interpreter,
    };
    let rows = launch.run().expect("the kernel runs");
    // The sixth field is IB_STS here: 0.
    check_gfx11_identity(&launch, &rows, 0);
    // gfx10's GPR_ALLOC lays VGPR_SIZE at 13:8, gfx11's at 19:12: refused at translation.
    let error = single(Isa::Gfx10_3, GPR_ALLOC_GFX1030, Topology::default()).unwrap_err();
    assert!(matches!(error, ExecError::Unsupported { mnemonic: "s_getreg_b32", .. }), "{error:?}");
}

/// One wave64 (wave32 for gfx10 and later) workgroup of `code`, which stores nothing.
fn single(isa: Isa, code: &[u32], topology: Topology) -> Result<Vec<[u32; ROW]>, ExecError> {
    let wave32 = !matches!(isa, Isa::Gfx9(_));
    Launch { isa, code, rsrc1: 0, wave32, lds: 0, size: 64, groups: 1, topology, tier: Tier::Interpreter }.run()
}

/// The refusal's text, which names the register and what is not modelled.
fn refusal(isa: Isa, code: &[u32], topology: Topology) -> &'static str {
    match single(isa, code, topology) {
        Err(ExecError::Unsupported { mnemonic, .. }) => mnemonic,
        other => panic!("{other:?}"),
    }
}

#[test]
fn unmodelled_fields_and_writes_fail_naming_what_is_missing() {
    let gfx90a = Isa::Gfx9(Processor::Gfx90a);
    let none = Topology::default();
    assert!(refusal(gfx90a, PIPE_ID_GFX90A, none).contains("PIPE_ID"));
    assert!(refusal(gfx90a, WHOLE_HW_ID_GFX90A, none).contains("HW_ID"));
    assert!(refusal(gfx90a, EXCP_GFX90A, none).contains("EXCP"));
    assert_eq!(refusal(gfx90a, SET_STATUS_GFX90A, none), "s_setreg_b32");
    assert!(refusal(Isa::Gfx11, HW_ID2_GFX1100, none).contains("HW_ID2"));
    assert!(refusal(Isa::Gfx11, DP_RATE_GFX1100, none).contains("DP_RATE"));
    // gfx12's STATUS shares gfx11's id but its layout is not checked: refused at translation.
    assert_eq!(refusal(Isa::Gfx12, STATUS_GFX1200, none), "s_getreg_b32");
    // More CUs than four engines of one array hold (16 each), on gfx900 whose SE_ID is 2 bits:
    // workgroup 0 sits on CU 0 and reads; a CU past 63 would not fit.
    let crowded = Topology { compute_units: 200, shader_engines: 4, shader_arrays_per_engine: 1 };
    assert!(single(Isa::Gfx9(Processor::Gfx900), SE_ID_GFX900, crowded).is_ok());
    let launch = Launch {
        isa: Isa::Gfx9(Processor::Gfx900),
        code: SE_ID_GFX900,
        rsrc1: 0,
        wave32: false,
        lds: 0,
        size: 64,
        groups: 65,
        topology: crowded,
        tier: Tier::Interpreter,
    };
    match launch.run() {
        Err(ExecError::Unsupported { mnemonic, .. }) => assert!(mnemonic.contains("more compute units"), "{mnemonic}"),
        other => panic!("{other:?}"),
    }
}

/// `llvm-mc-19 -mcpu=gfx900` of the text beside each word.
const IDENTITY_GFX900: &[u32] = &[
    0xBE8200FF, 0x11111111, // s_mov_b32 s2, 0x11111111
    0xBE8300FF, 0x22222222, // s_mov_b32 s3, 0x22222222
    0x7E0202FF, 0x33333333, // v_mov_b32_e32 v1, 0x33333333
    0x10020200, // v_mul_u32_u24_e32 v1, s0, v1
    0x68020101, // v_add_u32_e32 v1, v1, v0
    0x24020287, // v_lshlrev_b32_e32 v1, 7, v1
    0xB88A1804, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID, 0, 4)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708000, 0x00020201, // global_store_dword v1, v2, s[2:3]
    0xB88A0904, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID, 4, 2)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708004, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:4
    0xB88A1A04, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID, 8, 4)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708008, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:8
    0xB88A0304, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID, 12, 1)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC70800C, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:12
    0xB88A0B44, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID, 13, 2)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708010, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:16
    0xB88A2A05, // s_getreg_b32 s10, hwreg(HW_REG_GPR_ALLOC, 8, 6)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708014, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:20
    0xB88A1E05, // s_getreg_b32 s10, hwreg(HW_REG_GPR_ALLOC, 24, 4)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708018, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:24
    0xB88A4306, // s_getreg_b32 s10, hwreg(HW_REG_LDS_ALLOC, 12, 9)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC70801C, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:28
    0xBF8C0F70, // s_waitcnt vmcnt(0)
    0xBF810000, // s_endpgm
];
/// `llvm-mc-19 -mcpu=gfx90a` of the text beside each word.
const IDENTITY_GFX90A: &[u32] = &[
    0xBE8200FF, 0x11111111, // s_mov_b32 s2, 0x11111111
    0xBE8300FF, 0x22222222, // s_mov_b32 s3, 0x22222222
    0x7E0202FF, 0x33333333, // v_mov_b32_e32 v1, 0x33333333
    0x10020200, // v_mul_u32_u24_e32 v1, s0, v1
    0x68020101, // v_add_u32_e32 v1, v1, v0
    0x24020287, // v_lshlrev_b32_e32 v1, 7, v1
    0xB88A1804, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID, 0, 4)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708000, 0x00020201, // global_store_dword v1, v2, s[2:3]
    0xB88A0904, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID, 4, 2)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708004, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:4
    0xB88A1A04, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID, 8, 4)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708008, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:8
    0xB88A0304, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID, 12, 1)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC70800C, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:12
    0xB88A1344, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID, 13, 3)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708010, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:16
    0xB88A2985, // s_getreg_b32 s10, hwreg(HW_REG_GPR_ALLOC, 6, 6)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708014, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:20
    0xB88A1E05, // s_getreg_b32 s10, hwreg(HW_REG_GPR_ALLOC, 24, 4)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708018, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:24
    0xB88A4306, // s_getreg_b32 s10, hwreg(HW_REG_LDS_ALLOC, 12, 9)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC70801C, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:28
    0xBF8C0F70, // s_waitcnt vmcnt(0)
    0xBF810000, // s_endpgm
];
/// `llvm-mc-19 -mcpu=gfx942` of the text beside each word.
const IDENTITY_GFX942: &[u32] = &[
    0xBE8200FF, 0x11111111, // s_mov_b32 s2, 0x11111111
    0xBE8300FF, 0x22222222, // s_mov_b32 s3, 0x22222222
    0x7E0202FF, 0x33333333, // v_mov_b32_e32 v1, 0x33333333
    0x10020200, // v_mul_u32_u24_e32 v1, s0, v1
    0x68020101, // v_add_u32_e32 v1, v1, v0
    0x24020287, // v_lshlrev_b32_e32 v1, 7, v1
    0xB88A1804, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID, 0, 4)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708000, 0x00020201, // global_store_dword v1, v2, s[2:3]
    0xB88A0904, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID, 4, 2)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708004, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:4
    0xB88A1A04, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID, 8, 4)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708008, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:8
    0xB88A0304, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID, 12, 1)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC70800C, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:12
    0xB88A1344, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID, 13, 3)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708010, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:16
    0xB88A2985, // s_getreg_b32 s10, hwreg(HW_REG_GPR_ALLOC, 6, 6)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708014, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:20
    0xB88A1E05, // s_getreg_b32 s10, hwreg(HW_REG_GPR_ALLOC, 24, 4)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708018, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:24
    0xB88A4306, // s_getreg_b32 s10, hwreg(HW_REG_LDS_ALLOC, 12, 9)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC70801C, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:28
    0xBF8C0F70, // s_waitcnt vmcnt(0)
    0xBF810000, // s_endpgm
];
/// `llvm-mc-19 -mcpu=gfx90a` of the text beside each word.
const STATE_GFX90A: &[u32] = &[
    0xBE8200FF, 0x11111111, // s_mov_b32 s2, 0x11111111
    0xBE8300FF, 0x22222222, // s_mov_b32 s3, 0x22222222
    0x7E0202FF, 0x33333333, // v_mov_b32_e32 v1, 0x33333333
    0x10020200, // v_mul_u32_u24_e32 v1, s0, v1
    0x68020101, // v_add_u32_e32 v1, v1, v0
    0x24020287, // v_lshlrev_b32_e32 v1, 7, v1
    0xBF068080, // s_cmp_eq_u32 0, 0
    0xB88A0002, // s_getreg_b32 s10, hwreg(HW_REG_STATUS, 0, 1)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708000, 0x00020201, // global_store_dword v1, v2, s[2:3]
    0xBF068180, // s_cmp_eq_u32 0, 1
    0xB88A0002, // s_getreg_b32 s10, hwreg(HW_REG_STATUS, 0, 1)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708004, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:4
    0xBE94017E, // s_mov_b64 s[20:21], exec
    0xBEFE0180, // s_mov_b64 exec, 0
    0xB88B0242, // s_getreg_b32 s11, hwreg(HW_REG_STATUS, 9, 1)
    0xBEFE0114, // s_mov_b64 exec, s[20:21]
    0x7E04020B, // v_mov_b32_e32 v2, s11
    0xDC708008, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:8
    0xB88A0242, // s_getreg_b32 s10, hwreg(HW_REG_STATUS, 9, 1)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC70800C, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:12
    0xBEEA0180, // s_mov_b64 vcc, 0
    0xB88A0282, // s_getreg_b32 s10, hwreg(HW_REG_STATUS, 10, 1)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708010, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:16
    0xBEEA01C1, // s_mov_b64 vcc, -1
    0xB88A0282, // s_getreg_b32 s10, hwreg(HW_REG_STATUS, 10, 1)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708014, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:20
    0xDC508000, 0x03020001, // global_load_dword v3, v1, s[2:3]
    0xB88AF807, // s_getreg_b32 s10, hwreg(HW_REG_IB_STS)
    0xBF8C0F70, // s_waitcnt vmcnt(0)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708018, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:24
    0xB88AF80F, // s_getreg_b32 s10, hwreg(HW_REG_SH_MEM_BASES)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC70801C, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:28
    0xBE8C01EB, // s_mov_b64 s[12:13], src_shared_base
    0xBE8E01ED, // s_mov_b64 s[14:15], src_private_base
    0x7E04020D, // v_mov_b32_e32 v2, s13
    0xDC708020, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:32
    0x7E04020F, // v_mov_b32_e32 v2, s15
    0xDC708024, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:36
    0xB88A0203, // s_getreg_b32 s10, hwreg(HW_REG_TRAPSTS, 8, 1)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708028, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:40
    0xB88A0A83, // s_getreg_b32 s10, hwreg(HW_REG_TRAPSTS, 10, 2)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC70802C, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:44
    0xB88A0842, // s_getreg_b32 s10, hwreg(HW_REG_STATUS, 1, 2)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708030, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:48
    0xB88A0942, // s_getreg_b32 s10, hwreg(HW_REG_STATUS, 5, 2)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708034, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:52
    0xB88A0342, // s_getreg_b32 s10, hwreg(HW_REG_STATUS, 13, 1)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708038, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:56
    0xB88A02C2, // s_getreg_b32 s10, hwreg(HW_REG_STATUS, 11, 1)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC70803C, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:60
    0xB88A0402, // s_getreg_b32 s10, hwreg(HW_REG_STATUS, 16, 1)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708040, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:64
    0xBF8C0F70, // s_waitcnt vmcnt(0)
    0xBF810000, // s_endpgm
];
/// `llvm-mc-19 -mcpu=gfx1100 -mattr=+wavefrontsize32` of the text beside each word.
const IDENTITY_GFX1100: &[u32] = &[
    0xBE8200FF, 0x11111111, // s_mov_b32 s2, 0x11111111
    0xBE8300FF, 0x22222222, // s_mov_b32 s3, 0x22222222
    0x7E0202FF, 0x33333333, // v_mov_b32_e32 v1, 0x33333333
    0x16020200, // v_mul_u32_u24_e32 v1, s0, v1
    0x4A020101, // v_add_nc_u32_e32 v1, v1, v0
    0x30020287, // v_lshlrev_b32_e32 v1, 7, v1
    0xB88A2017, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID1, 0, 5)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC6A0000, 0x00020201, // global_store_b32 v1, v2, s[2:3]
    0xB88A0A17, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID1, 8, 2)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC6A0004, 0x00020201, // global_store_b32 v1, v2, s[2:3] offset:4
    0xB88A1A97, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID1, 10, 4)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC6A0008, 0x00020201, // global_store_b32 v1, v2, s[2:3] offset:8
    0xB88A0417, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID1, 16, 1)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC6A000C, 0x00020201, // global_store_b32 v1, v2, s[2:3] offset:12
    0xB88A1497, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID1, 18, 3)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC6A0010, 0x00020201, // global_store_b32 v1, v2, s[2:3] offset:16
    0xB88A3B05, // s_getreg_b32 s10, hwreg(HW_REG_GPR_ALLOC, 12, 8)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC6A0014, 0x00020201, // global_store_b32 v1, v2, s[2:3] offset:20
    0xB88A4306, // s_getreg_b32 s10, hwreg(HW_REG_LDS_ALLOC, 12, 9)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC6A0018, 0x00020201, // global_store_b32 v1, v2, s[2:3] offset:24
    0xBF068080, // s_cmp_eq_u32 0, 0
    0xB88A0002, // s_getreg_b32 s10, hwreg(HW_REG_STATUS, 0, 1)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC6A001C, 0x00020201, // global_store_b32 v1, v2, s[2:3] offset:28
    0xBE94007E, // s_mov_b32 s20, exec_lo
    0xBEFE0080, // s_mov_b32 exec_lo, 0
    0xB88B0242, // s_getreg_b32 s11, hwreg(HW_REG_STATUS, 9, 1)
    0xBEFE0014, // s_mov_b32 exec_lo, s20
    0x7E04020B, // v_mov_b32_e32 v2, s11
    0xDC6A0020, 0x00020201, // global_store_b32 v1, v2, s[2:3] offset:32
    0xB88AF807, // s_getreg_b32 s10, hwreg(HW_REG_IB_STS)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC6A0024, 0x00020201, // global_store_b32 v1, v2, s[2:3] offset:36
    0xB88A0203, // s_getreg_b32 s10, hwreg(HW_REG_TRAPSTS, 8, 1)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC6A0028, 0x00020201, // global_store_b32 v1, v2, s[2:3] offset:40
    0xBF8903F7, // s_waitcnt vmcnt(0)
    0xBFB00000, // s_endpgm
];
/// `llvm-mc-19 -mcpu=gfx1030 -mattr=+wavefrontsize32` of the text beside each word.
const IDENTITY_GFX1030: &[u32] = &[
    0xBE8203FF, 0x11111111, // s_mov_b32 s2, 0x11111111
    0xBE8303FF, 0x22222222, // s_mov_b32 s3, 0x22222222
    0x7E0202FF, 0x33333333, // v_mov_b32_e32 v1, 0x33333333
    0x16020200, // v_mul_u32_u24_e32 v1, s0, v1
    0x4A020101, // v_add_nc_u32_e32 v1, v1, v0
    0x34020287, // v_lshlrev_b32_e32 v1, 7, v1
    0xB90A2017, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID1, 0, 5)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708000, 0x00020201, // global_store_dword v1, v2, s[2:3]
    0xB90A0A17, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID1, 8, 2)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708004, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:4
    0xB90A1A97, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID1, 10, 4)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708008, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:8
    0xB90A0417, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID1, 16, 1)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC70800C, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:12
    0xB90A1497, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID1, 18, 3)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708010, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:16
    0xB90AF807, // s_getreg_b32 s10, hwreg(HW_REG_IB_STS)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708014, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:20
    0xB90A4306, // s_getreg_b32 s10, hwreg(HW_REG_LDS_ALLOC, 12, 9)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708018, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:24
    0xBF068080, // s_cmp_eq_u32 0, 0
    0xB90A0002, // s_getreg_b32 s10, hwreg(HW_REG_STATUS, 0, 1)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC70801C, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:28
    0xBE94037E, // s_mov_b32 s20, exec_lo
    0xBEFE0380, // s_mov_b32 exec_lo, 0
    0xB90B0242, // s_getreg_b32 s11, hwreg(HW_REG_STATUS, 9, 1)
    0xBEFE0314, // s_mov_b32 exec_lo, s20
    0x7E04020B, // v_mov_b32_e32 v2, s11
    0xDC708020, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:32
    0xB90AF807, // s_getreg_b32 s10, hwreg(HW_REG_IB_STS)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708024, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:36
    0xB90A0203, // s_getreg_b32 s10, hwreg(HW_REG_TRAPSTS, 8, 1)
    0x7E04020A, // v_mov_b32_e32 v2, s10
    0xDC708028, 0x00020201, // global_store_dword v1, v2, s[2:3] offset:40
    0xBF8C3F70, // s_waitcnt vmcnt(0)
    0xBF810000, // s_endpgm
];
/// `llvm-mc-19 -mcpu=gfx90a` of the text beside each word.
const PIPE_ID_GFX90A: &[u32] = &[
    0xB88A0984, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID, 6, 2)
    0xBF810000, // s_endpgm
];

/// `llvm-mc-19 -mcpu=gfx90a` of the text beside each word.
const WHOLE_HW_ID_GFX90A: &[u32] = &[
    0xB88AF804, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID)
    0xBF810000, // s_endpgm
];

/// `llvm-mc-19 -mcpu=gfx90a` of the text beside each word.
const EXCP_GFX90A: &[u32] = &[
    0xB88A3803, // s_getreg_b32 s10, hwreg(HW_REG_TRAPSTS, 0, 8)
    0xBF810000, // s_endpgm
];

/// `llvm-mc-19 -mcpu=gfx900` of the text beside each word.
const SE_ID_GFX900: &[u32] = &[
    0xB88A0B44, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID, 13, 2)
    0xBF810000, // s_endpgm
];

/// `llvm-mc-19 -mcpu=gfx90a` of the text beside each word.
const SET_STATUS_GFX90A: &[u32] = &[
    0xB9000002, // s_setreg_b32 hwreg(HW_REG_STATUS, 0, 1), s0
    0xBF810000, // s_endpgm
];

/// `llvm-mc-19 -mcpu=gfx1100` of the text beside each word.
const HW_ID2_GFX1100: &[u32] = &[
    0xB88A1818, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID2, 0, 4)
    0xBFB00000, // s_endpgm
];

/// `llvm-mc-19 -mcpu=gfx1100` of the text beside each word.
const DP_RATE_GFX1100: &[u32] = &[
    0xB88A1757, // s_getreg_b32 s10, hwreg(HW_REG_HW_ID1, 29, 3)
    0xBFB00000, // s_endpgm
];

/// `llvm-mc-19 -mcpu=gfx1030` of the text beside each word.
const GPR_ALLOC_GFX1030: &[u32] = &[
    0xB90A3B05, // s_getreg_b32 s10, hwreg(HW_REG_GPR_ALLOC, 12, 8)
    0xBF810000, // s_endpgm
];

/// `llvm-mc-19 -mcpu=gfx1200` of the text beside each word.
const STATUS_GFX1200: &[u32] = &[
    0xB88A0002, // s_getreg_b32 s10, hwreg(HW_REG_STATUS, 0, 1)
    0xBFB00000, // s_endpgm
];
