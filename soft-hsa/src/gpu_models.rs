//! The hardware facts a soft GPU agent reports, per GPU model: one row per processor, each fact
//! copied from a published `rocminfo` dump of that model (docs/gpu-models.md; the RX 7900 XTX's
//! from `soft-hsa/tests/fixtures/rocminfo-gfx1100.txt`, docs/rocr-facts.md). `hsa_agent_get_info`
//! (`entry.rs`) reads the row of the agent's processor; an agent whose processor has no row
//! reports the RX 7900 XTX's facts ([`crate::gpu_models::FALLBACK`]), as every soft GPU did before the table.
//!
//! Not every fact of a row is reported as the dump shows it:
//! - **Compute units.** An agent reports its configured `SoftAgentConfig::compute_units` (8 by
//!   default), not the row's: the soft runtime runs that many packets of a queue at once and
//!   clips CU masks to it, so the count it reports is the count it schedules by (docs/DECISIONS.md,
//!   "Soft agents report their configured compute units").
//! - **Memory bus width and clock.** `rocminfo` prints neither, and no source for them was found
//!   for any model but the RX 7900 XTX: every agent reports that card's 384 bits and 1249 MHz
//!   (`entry.rs`, `MEMORY_WIDTH_BITS`).
//! - **VRAM.** The device pools' size is the configured `device_memory_bytes`; [`crate::gpu_models::GpuModel::vram_bytes`]
//!   is the dump's, which [`crate::SoftAgentConfig::model`] configures.

/// One GPU model's facts, as `rocminfo` prints them (caches and sizes here in bytes, where it
/// prints KB).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuModel {
    /// The processor (`Name:`), the key of the table.
    pub processor: &'static str,
    /// `Marketing Name:` (`HSA_AMD_AGENT_INFO_PRODUCT_NAME` on ROCr). A soft agent's product name
    /// stays `aqueduct soft agent (<processor>)`, so no tool mistakes it for the card.
    pub marketing_name: &'static str,
    /// The dump's first ISA, with its target features (`ISA 1: Name:`).
    pub isa_name: &'static str,
    /// `HSA_AMD_AGENT_INFO_CHIP_ID`.
    pub chip_id: u32,
    /// `HSA_AMD_AGENT_INFO_ASIC_REVISION`.
    pub asic_revision: u32,
    /// `HSA_AMD_AGENT_INFO_CACHELINE_SIZE`, bytes.
    pub cacheline_bytes: u32,
    /// `HSA_AGENT_INFO_CACHE_SIZE`: L1 to L4 in bytes, 0 where the dump prints no line.
    pub cache_bytes: [u32; 4],
    /// `HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY`, MHz.
    pub max_clock_mhz: u32,
    /// `Compute Unit:` (not reported; see the module's notes).
    pub compute_units: u32,
    /// `HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU`.
    pub simds_per_cu: u32,
    /// `HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES`.
    pub shader_engines: u32,
    /// `HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE`.
    pub shader_arrays_per_engine: u32,
    /// `HSA_AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS`.
    pub watch_points: u32,
    /// `Wavefront Size:` (64 on gfx9, 32 on gfx10 and later).
    pub wavefront_size: u32,
    /// `HSA_AGENT_INFO_WORKGROUP_MAX_SIZE` (and each dimension's maximum).
    pub workgroup_max_size: u32,
    /// `HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU`. `rocminfo`'s `Max Work-item Per CU` is this times
    /// the wavefront size.
    pub max_waves_per_cu: u32,
    /// The GROUP pool (LDS per workgroup), bytes.
    pub lds_bytes: u64,
    /// The COARSE GRAINED pool, bytes.
    pub vram_bytes: u64,
}

const KB: u32 = 1 << 10;

/// The RX 7900 XTX (gfx1100): `soft-hsa/tests/fixtures/rocminfo-gfx1100.txt`, Agent 2, ROCm
/// 6.2.2, from <https://github.com/ROCm/ROCm/issues/3949> (docs/rocr-facts.md). Also what an agent
/// of a processor without a row reports.
pub const FALLBACK: GpuModel = GpuModel {
    processor: "gfx1100",
    marketing_name: "Radeon RX 7900 XTX",
    isa_name: "amdgcn-amd-amdhsa--gfx1100",
    chip_id: 0x744c,
    asic_revision: 0,
    cacheline_bytes: 64,
    cache_bytes: [32 * KB, 6144 * KB, 98304 * KB, 0],
    max_clock_mhz: 2482,
    compute_units: 96,
    simds_per_cu: 2,
    shader_engines: 6,
    shader_arrays_per_engine: 2,
    watch_points: 4,
    wavefront_size: 32,
    workgroup_max_size: 1024,
    max_waves_per_cu: 32,
    lds_bytes: 64 << 10,
    vram_bytes: 25149440 << 10,
};

/// Every row. Each cites the dump docs/gpu-models.md calls its primary one; where other dumps of
/// the model disagree, the row's comment says which value it took.
pub const MODELS: &[GpuModel] = &[
    // AMD Instinct MI50, ROCm 5.3.3, Agent 4: https://github.com/ROCm/ROCm/issues/1886 . The dump
    // prints no L3 line. AMD's spec table gives L2 4 MiB; rocminfo's 8192 KB is what ROCr reports.
    GpuModel {
        processor: "gfx906",
        marketing_name: "AMD Instinct MI50/MI60",
        isa_name: "amdgcn-amd-amdhsa--gfx906:sramecc+:xnack-",
        chip_id: 0x66a1,
        asic_revision: 1,
        cacheline_bytes: 64,
        cache_bytes: [16 * KB, 8192 * KB, 0, 0],
        max_clock_mhz: 1725,
        compute_units: 60,
        simds_per_cu: 4,
        shader_engines: 4,
        shader_arrays_per_engine: 1,
        watch_points: 4,
        wavefront_size: 64,
        workgroup_max_size: 1024,
        max_waves_per_cu: 40,
        lds_bytes: 64 << 10,
        vram_bytes: 16760832 << 10,
    },
    // AMD Instinct MI100, ROCm 6.0.0, Agent 2: https://github.com/ROCm/rccl/issues/1129 . No L3
    // line.
    GpuModel {
        processor: "gfx908",
        marketing_name: "AMD Instinct MI100",
        isa_name: "amdgcn-amd-amdhsa--gfx908:sramecc+:xnack-",
        chip_id: 0x738c,
        asic_revision: 2,
        cacheline_bytes: 64,
        cache_bytes: [16 * KB, 8192 * KB, 0, 0],
        max_clock_mhz: 1502,
        compute_units: 120,
        simds_per_cu: 4,
        shader_engines: 8,
        shader_arrays_per_engine: 1,
        watch_points: 4,
        wavefront_size: 64,
        workgroup_max_size: 1024,
        max_waves_per_cu: 40,
        lds_bytes: 64 << 10,
        vram_bytes: 33538048 << 10,
    },
    // AMD Instinct MI210, ROCm 6.2.4, Agent 2: https://github.com/ROCm/ROCm/issues/4563 . No L3
    // line. Cacheline 128 as ROCm 6.2.4 and later print it (ROCm 5.3.3 to 6.0.0 printed 64).
    GpuModel {
        processor: "gfx90a",
        marketing_name: "AMD Instinct MI210",
        isa_name: "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-",
        chip_id: 0x740f,
        asic_revision: 1,
        cacheline_bytes: 128,
        cache_bytes: [16 * KB, 8192 * KB, 0, 0],
        max_clock_mhz: 1700,
        compute_units: 104,
        simds_per_cu: 4,
        shader_engines: 8,
        shader_arrays_per_engine: 1,
        watch_points: 4,
        wavefront_size: 64,
        workgroup_max_size: 1024,
        max_waves_per_cu: 32,
        lds_bytes: 64 << 10,
        vram_bytes: 67092480 << 10,
    },
    // AMD Instinct MI300X (bare metal), ROCm 6.2.3, Agent 3: https://github.com/ROCm/ROCm/issues/4021
    // (ROCm 6.3.3 agrees: https://github.com/ROCm/legacy-rocm-build/issues/4414). L2 is the
    // per-XCD 4 MB, as rocminfo prints it. Cacheline 64 as bare metal prints it (the VF on ROCm
    // 6.4.0 prints 128; a bare-metal dump from ROCm 6.4 or later was not found).
    GpuModel {
        processor: "gfx942",
        marketing_name: "AMD Instinct MI300X",
        isa_name: "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
        chip_id: 0x74a1,
        asic_revision: 1,
        cacheline_bytes: 64,
        cache_bytes: [32 * KB, 4096 * KB, 262144 * KB, 0],
        max_clock_mhz: 2100,
        compute_units: 304,
        simds_per_cu: 4,
        shader_engines: 32,
        shader_arrays_per_engine: 1,
        watch_points: 4,
        wavefront_size: 64,
        workgroup_max_size: 1024,
        max_waves_per_cu: 32,
        lds_bytes: 64 << 10,
        vram_bytes: 201310208 << 10,
    },
    // AMD Radeon RX 6900 XT, ROCm 6.3.3, Agent 2: https://github.com/ROCm/ROCm/issues/4452 (ROCm
    // 6.0.0 agrees: https://github.com/ROCm/ROCm/issues/2783). The LDS is the dump's GROUP pool,
    // 64 KB (AMD's spec table says 128 KiB).
    GpuModel {
        processor: "gfx1030",
        marketing_name: "AMD Radeon RX 6900 XT",
        isa_name: "amdgcn-amd-amdhsa--gfx1030",
        chip_id: 0x73bf,
        asic_revision: 1,
        cacheline_bytes: 64,
        cache_bytes: [16 * KB, 4096 * KB, 131072 * KB, 0],
        max_clock_mhz: 2660,
        compute_units: 80,
        simds_per_cu: 2,
        shader_engines: 4,
        shader_arrays_per_engine: 2,
        watch_points: 4,
        wavefront_size: 32,
        workgroup_max_size: 1024,
        max_waves_per_cu: 32,
        lds_bytes: 64 << 10,
        vram_bytes: 16760832 << 10,
    },
    FALLBACK,
    // AMD Radeon RX 9060 XT, ROCm 7.2.0, Agent 2: https://github.com/ROCm/ROCm/issues/5999 . Its
    // ISA 2, gfx12-generic, is not listed (a soft agent has one ISA).
    GpuModel {
        processor: "gfx1200",
        marketing_name: "AMD Radeon RX 9060 XT",
        isa_name: "amdgcn-amd-amdhsa--gfx1200",
        chip_id: 0x7590,
        asic_revision: 1,
        cacheline_bytes: 256,
        cache_bytes: [32 * KB, 4096 * KB, 32768 * KB, 0],
        max_clock_mhz: 2620,
        compute_units: 32,
        simds_per_cu: 2,
        shader_engines: 2,
        shader_arrays_per_engine: 2,
        watch_points: 4,
        wavefront_size: 32,
        workgroup_max_size: 1024,
        max_waves_per_cu: 32,
        lds_bytes: 64 << 10,
        vram_bytes: 16695296 << 10,
    },
    // AMD Radeon RX 9070 XT, ROCm 7.1.1, Agent 2: https://github.com/ROCm/ROCm/issues/5848 . Clock
    // 2460 MHz as that dump prints it (others print 2570 and 2400); ISA 2, gfx12-generic, not
    // listed.
    GpuModel {
        processor: "gfx1201",
        marketing_name: "AMD Radeon RX 9070 XT",
        isa_name: "amdgcn-amd-amdhsa--gfx1201",
        chip_id: 0x7550,
        asic_revision: 1,
        cacheline_bytes: 256,
        cache_bytes: [32 * KB, 8192 * KB, 65536 * KB, 0],
        max_clock_mhz: 2460,
        compute_units: 64,
        simds_per_cu: 2,
        shader_engines: 4,
        shader_arrays_per_engine: 2,
        watch_points: 4,
        wavefront_size: 32,
        workgroup_max_size: 1024,
        max_waves_per_cu: 32,
        lds_bytes: 64 << 10,
        vram_bytes: 16695296 << 10,
    },
];

/// The row of `processor` (`gfx90a`; target features and an `amdgcn-amd-amdhsa--` prefix are
/// ignored, so a full ISA name finds its row too).
pub fn model(processor: &str) -> Option<&'static GpuModel> {
    let processor = processor.rsplit("--").next().unwrap_or(processor);
    let processor = processor.split(':').next().unwrap_or(processor);
    MODELS.iter().find(|model| model.processor == processor)
}

/// The facts an agent of `isa_name` reports: its model's row, or [`FALLBACK`]'s.
pub(crate) fn reported(isa_name: &str) -> &'static GpuModel {
    model(isa_name).unwrap_or(&FALLBACK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_found_by_its_processor_and_its_isa_and_agrees_with_the_runtime() {
        for row in MODELS {
            assert_eq!(model(row.processor), Some(row));
            assert_eq!(model(row.isa_name), Some(row), "{}", row.isa_name);
            // The processor's group-segment limit is one constant for every agent.
            assert_eq!(row.lds_bytes, crate::memory::GROUP_BYTES, "{}", row.processor);
            assert_eq!(row.workgroup_max_size, crate::processor::WORKGROUP_MAX_SIZE, "{}", row.processor);
            let wave64 = row.processor.starts_with("gfx9");
            assert_eq!(row.wavefront_size, if wave64 { 64 } else { 32 }, "{}", row.processor);
        }
        assert_eq!(model("gfx1100"), Some(&FALLBACK));
        assert_eq!(reported("amdgcn-amd-amdhsa--gfx1151"), &FALLBACK, "no row: the RX 7900 XTX");
    }
}
