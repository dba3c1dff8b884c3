//! Each GPU model's soft agent reports the facts of that model's published `rocminfo` dump
//! (`soft-hsa/src/gpu_models.rs`). The expected values are written out here, copied from
//! docs/gpu-models.md (gfx906, gfx908, gfx90a, gfx942, gfx1030, gfx1200, gfx1201: each model's
//! "Primary dump" table and pools) and from `fixtures/rocminfo-gfx1100.txt`, Agent 2 (gfx1100,
//! docs/rocr-facts.md), so a wrong row in the table fails here rather than agreeing with itself.

use core::ffi::c_void;

use aqueduct_hsa::sys::{agent_info, hsa_agent_t, status};
use aqueduct_hsa::{Hsa, PoolKindInfo};
use aqueduct_soft_hsa::exports as hsa;
use aqueduct_soft_hsa::{SoftAgentConfig, SoftConfig, gpu_models};

/// What `rocminfo` prints for one model (sizes in KB, as it prints them).
struct Dump {
    name: &'static str,
    marketing_name: &'static str,
    isa: &'static str,
    cache_kb: [u32; 3],
    chip_id: u32,
    asic_revision: u32,
    cacheline: u32,
    max_clock_mhz: u32,
    compute_units: u32,
    simds_per_cu: u32,
    shader_engines: u32,
    shader_arrays: u32,
    watch_points: u32,
    wavefront: u32,
    max_waves_per_cu: u32,
    max_work_items_per_cu: u32,
    coarse_kb: u64,
}

/// docs/gpu-models.md's primary dumps, and the RX 7900 XTX's (rocminfo-gfx1100.txt).
const DUMPS: [Dump; 8] = [
    // "gfx906: AMD Instinct MI50", ROCm/ROCm#1886 (no L3 line).
    Dump {
        name: "gfx906",
        marketing_name: "AMD Instinct MI50/MI60",
        isa: "amdgcn-amd-amdhsa--gfx906:sramecc+:xnack-",
        cache_kb: [16, 8192, 0],
        chip_id: 26273,
        asic_revision: 1,
        cacheline: 64,
        max_clock_mhz: 1725,
        compute_units: 60,
        simds_per_cu: 4,
        shader_engines: 4,
        shader_arrays: 1,
        watch_points: 4,
        wavefront: 64,
        max_waves_per_cu: 40,
        max_work_items_per_cu: 2560,
        coarse_kb: 16760832,
    },
    // "gfx908: AMD Instinct MI100", rccl#1129.
    Dump {
        name: "gfx908",
        marketing_name: "AMD Instinct MI100",
        isa: "amdgcn-amd-amdhsa--gfx908:sramecc+:xnack-",
        cache_kb: [16, 8192, 0],
        chip_id: 29580,
        asic_revision: 2,
        cacheline: 64,
        max_clock_mhz: 1502,
        compute_units: 120,
        simds_per_cu: 4,
        shader_engines: 8,
        shader_arrays: 1,
        watch_points: 4,
        wavefront: 64,
        max_waves_per_cu: 40,
        max_work_items_per_cu: 2560,
        coarse_kb: 33538048,
    },
    // "gfx90a: AMD Instinct MI210", ROCm/ROCm#4563 (ROCm 6.2.4: Cacheline 128).
    Dump {
        name: "gfx90a",
        marketing_name: "AMD Instinct MI210",
        isa: "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-",
        cache_kb: [16, 8192, 0],
        chip_id: 29711,
        asic_revision: 1,
        cacheline: 128,
        max_clock_mhz: 1700,
        compute_units: 104,
        simds_per_cu: 4,
        shader_engines: 8,
        shader_arrays: 1,
        watch_points: 4,
        wavefront: 64,
        max_waves_per_cu: 32,
        max_work_items_per_cu: 2048,
        coarse_kb: 67092480,
    },
    // "gfx942: AMD Instinct MI300X", ROCm/ROCm#4021.
    Dump {
        name: "gfx942",
        marketing_name: "AMD Instinct MI300X",
        isa: "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
        cache_kb: [32, 4096, 262144],
        chip_id: 29857,
        asic_revision: 1,
        cacheline: 64,
        max_clock_mhz: 2100,
        compute_units: 304,
        simds_per_cu: 4,
        shader_engines: 32,
        shader_arrays: 1,
        watch_points: 4,
        wavefront: 64,
        max_waves_per_cu: 32,
        max_work_items_per_cu: 2048,
        coarse_kb: 201310208,
    },
    // "gfx1030: AMD Radeon RX 6900 XT", ROCm/ROCm#4452.
    Dump {
        name: "gfx1030",
        marketing_name: "AMD Radeon RX 6900 XT",
        isa: "amdgcn-amd-amdhsa--gfx1030",
        cache_kb: [16, 4096, 131072],
        chip_id: 29631,
        asic_revision: 1,
        cacheline: 64,
        max_clock_mhz: 2660,
        compute_units: 80,
        simds_per_cu: 2,
        shader_engines: 4,
        shader_arrays: 2,
        watch_points: 4,
        wavefront: 32,
        max_waves_per_cu: 32,
        max_work_items_per_cu: 1024,
        coarse_kb: 16760832,
    },
    // rocminfo-gfx1100.txt, Agent 2: Radeon RX 7900 XTX, ROCm 6.2.2 (ROCm/ROCm#3949).
    Dump {
        name: "gfx1100",
        marketing_name: "Radeon RX 7900 XTX",
        isa: "amdgcn-amd-amdhsa--gfx1100",
        cache_kb: [32, 6144, 98304],
        chip_id: 29772,
        asic_revision: 0,
        cacheline: 64,
        max_clock_mhz: 2482,
        compute_units: 96,
        simds_per_cu: 2,
        shader_engines: 6,
        shader_arrays: 2,
        watch_points: 4,
        wavefront: 32,
        max_waves_per_cu: 32,
        max_work_items_per_cu: 1024,
        coarse_kb: 25149440,
    },
    // "gfx1200: AMD Radeon RX 9060 XT", ROCm/ROCm#5999 (ISA 1).
    Dump {
        name: "gfx1200",
        marketing_name: "AMD Radeon RX 9060 XT",
        isa: "amdgcn-amd-amdhsa--gfx1200",
        cache_kb: [32, 4096, 32768],
        chip_id: 30096,
        asic_revision: 1,
        cacheline: 256,
        max_clock_mhz: 2620,
        compute_units: 32,
        simds_per_cu: 2,
        shader_engines: 2,
        shader_arrays: 2,
        watch_points: 4,
        wavefront: 32,
        max_waves_per_cu: 32,
        max_work_items_per_cu: 1024,
        coarse_kb: 16695296,
    },
    // "gfx1201: AMD Radeon RX 9070 XT", ROCm/ROCm#5848 (ISA 1).
    Dump {
        name: "gfx1201",
        marketing_name: "AMD Radeon RX 9070 XT",
        isa: "amdgcn-amd-amdhsa--gfx1201",
        cache_kb: [32, 8192, 65536],
        chip_id: 30032,
        asic_revision: 1,
        cacheline: 256,
        max_clock_mhz: 2460,
        compute_units: 64,
        simds_per_cu: 2,
        shader_engines: 4,
        shader_arrays: 2,
        watch_points: 4,
        wavefront: 32,
        max_waves_per_cu: 32,
        max_work_items_per_cu: 1024,
        coarse_kb: 16695296,
    },
];

/// A processor without a row: its agent reports the RX 7900 XTX's facts.
const UNKNOWN: &str = "amdgcn-amd-amdhsa--gfx1151";

/// One soft runtime for the whole file (the runtime is per process; every test configures the
/// same agents): one agent per dump, from [`SoftAgentConfig::model`] (gfx1100 from
/// [`SoftAgentConfig::gfx1100`], as the engine configures it), then one of [`UNKNOWN`].
fn runtime() -> Hsa {
    let mut agents: Vec<SoftAgentConfig> = DUMPS
        .iter()
        .map(|dump| {
            if dump.name == "gfx1100" {
                SoftAgentConfig::gfx1100()
            } else {
                SoftAgentConfig::model(dump.name).expect("a row per dump")
            }
        })
        .collect();
    agents.push(SoftAgentConfig::with_isa(UNKNOWN, 32));
    aqueduct_soft_hsa::open(SoftConfig { agents, visible_devices: None, ..SoftConfig::default() })
        .expect("soft runtime")
}

fn info<T: Copy + Default>(agent: hsa_agent_t, attribute: u32) -> T {
    let mut value = T::default();
    // SAFETY: `value` is storage of the attribute's documented type, which each caller names.
    let result = unsafe { hsa::hsa_agent_get_info(agent, attribute, (&raw mut value).cast::<c_void>()) };
    assert_eq!(result, status::SUCCESS, "attribute {attribute:#x}");
    value
}

/// Every fact of `dump` that the agent reports as the dump shows it.
fn check_reported_facts(agent: hsa_agent_t, dump: &Dump) {
    let name = dump.name;
    let kb = dump.cache_kb.map(|size| size << 10);
    assert_eq!(info::<[u32; 4]>(agent, agent_info::CACHE_SIZE), [kb[0], kb[1], kb[2], 0], "{name}: caches");
    assert_eq!(info::<u32>(agent, agent_info::AMD_CHIP_ID), dump.chip_id, "{name}: chip id");
    assert_eq!(info::<u32>(agent, agent_info::AMD_ASIC_REVISION), dump.asic_revision, "{name}: ASIC revision");
    assert_eq!(info::<u32>(agent, agent_info::AMD_CACHELINE_SIZE), dump.cacheline, "{name}: cacheline");
    assert_eq!(info::<u32>(agent, agent_info::AMD_MAX_CLOCK_FREQUENCY), dump.max_clock_mhz, "{name}: clock");
    assert_eq!(info::<u32>(agent, agent_info::AMD_NUM_SIMDS_PER_CU), dump.simds_per_cu, "{name}: SIMDs");
    assert_eq!(info::<u32>(agent, agent_info::AMD_NUM_SHADER_ENGINES), dump.shader_engines, "{name}: SEs");
    assert_eq!(info::<u32>(agent, agent_info::AMD_NUM_SHADER_ARRAYS_PER_SE), dump.shader_arrays, "{name}: SAs");
    assert_eq!(info::<u32>(agent, agent_info::AMD_MAX_ADDRESS_WATCH_POINTS), dump.watch_points, "{name}");
    let waves = info::<u32>(agent, agent_info::AMD_MAX_WAVES_PER_CU);
    assert_eq!(waves, dump.max_waves_per_cu, "{name}: max waves per CU");
    let wavefront = info::<u32>(agent, agent_info::WAVEFRONT_SIZE);
    assert_eq!(wavefront, dump.wavefront, "{name}: wavefront");
    // rocminfo's "Max Work-item Per CU" is the product of the two.
    assert_eq!(waves * wavefront, dump.max_work_items_per_cu, "{name}: work-items per CU");
    assert_eq!(info::<u32>(agent, agent_info::WORKGROUP_MAX_SIZE), 1024, "{name}: every dump's 1024(0x400)");
    assert_eq!(info::<[u16; 3]>(agent, agent_info::WORKGROUP_MAX_DIM), [1024; 3], "{name}");
}

#[test]
fn each_models_agent_reports_its_dumps_facts() {
    let hsa = runtime();
    let agents = hsa.gpu_agents().expect("agents");
    assert_eq!(agents.len(), DUMPS.len() + 1);
    for (agent, dump) in agents.iter().zip(&DUMPS) {
        assert_eq!(agent.name, dump.name);
        assert_eq!(agent.isa_names, [dump.isa], "{}: the dump's ISA 1, target features and all", dump.name);
        // Soft agents keep a name of their own and their configured 8 CUs (docs/DECISIONS.md).
        assert_eq!(agent.product_name, format!("aqueduct soft agent ({})", dump.name));
        assert_eq!(agent.compute_units, 8, "{}", dump.name);
        check_reported_facts(agent.agent, dump);
    }
}

#[test]
fn an_agent_of_a_processor_without_a_row_reports_the_rx_7900_xtx() {
    let hsa = runtime();
    let agents = hsa.gpu_agents().expect("agents");
    let unknown = agents.last().expect("the unknown agent");
    assert_eq!(unknown.isa_names, [UNKNOWN]);
    let rx_7900_xtx = DUMPS.iter().find(|dump| dump.name == "gfx1100").expect("gfx1100");
    check_reported_facts(unknown.agent, rx_7900_xtx);
}

#[test]
fn each_models_pools_are_its_dumps_vram_beside_a_64_kb_group_pool() {
    let hsa = runtime();
    let agents = hsa.gpu_agents().expect("agents");
    for (agent, dump) in agents.iter().zip(&DUMPS) {
        let pools = hsa.pools(agent.agent).expect("pools");
        let kinds: Vec<PoolKindInfo> = pools.iter().map(|pool| pool.kind).collect();
        // The gfx9 dumps of ROCm 6.0 (MI100, Radeon VII) show these three; MI210's and MI300X's
        // from 6.2 add a FINE GRAINED pool (ROCr shows it in an XGMI hive), and the gfx1200 and
        // gfx1201 dumps have no EXTENDED FINE GRAINED pool (ROCr skips it on gfx12.0). Every soft
        // GPU keeps the three, a deviation from those dumps (docs/gpu-models.md).
        assert_eq!(
            kinds,
            [PoolKindInfo::CoarseGrained, PoolKindInfo::ExtendedFineGrained, PoolKindInfo::Group],
            "{}",
            dump.name
        );
        // gfx1100 is configured as the engine configures it: 16 GiB, not the card's 24 GB.
        let vram = if dump.name == "gfx1100" { 16 << 30 } else { dump.coarse_kb << 10 };
        assert_eq!(pools[0].size as u64, vram, "{}: COARSE GRAINED", dump.name);
        assert_eq!(pools[1].size as u64, vram, "{}: EXTENDED FINE GRAINED", dump.name);
        assert_eq!(pools[2].size, 64 << 10, "{}: GROUP, 64(0x40) KB in every dump", dump.name);
    }
}

#[test]
fn the_table_holds_each_dumps_marketing_name_and_compute_units() {
    for dump in &DUMPS {
        let model = gpu_models::model(dump.name).expect("a row per dump");
        assert_eq!(model.marketing_name, dump.marketing_name);
        assert_eq!(model.compute_units, dump.compute_units, "{}", dump.name);
        assert_eq!(model.isa_name, dump.isa);
        assert_eq!(model.vram_bytes, dump.coarse_kb << 10, "{}", dump.name);
    }
    assert!(gpu_models::model("gfx1151").is_none());
    assert!(SoftAgentConfig::model("gfx1151").is_none());
}

#[test]
fn agents_named_in_the_environment_keep_their_isa_as_written_and_eight_cus() {
    let agents = aqueduct_soft_hsa::parse_agents("gfx90a,gfx942:sramecc+:xnack-,gfx1201").expect("parses");
    let isas: Vec<&str> = agents.iter().map(|agent| agent.isa_name.as_str()).collect();
    assert_eq!(
        isas,
        ["amdgcn-amd-amdhsa--gfx90a", "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", "amdgcn-amd-amdhsa--gfx1201"]
    );
    assert!(agents.iter().all(|agent| agent.compute_units == 8 && agent.device_memory_bytes == 16 << 30));
    assert_eq!(agents.iter().map(|agent| agent.wavefront_size).collect::<Vec<_>>(), [64, 64, 32]);
}
