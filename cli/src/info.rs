//! `aqueduct info`: the provider's agents and pools in rocminfo's shape, so a report from the
//! soft runtime reads, and parses, like `rocminfo` on a ROCr machine.
//!
//! [`rocminfo_report`] prints what the provider answers, field for field under rocminfo's
//! names; [`parse_rocminfo`] reads that text (or a real `rocminfo` dump) back into agents and
//! pools, which `tests/topology.rs` compares with a published dump.

use std::fmt::Write;

use aqueduct_hsa::sys::{agent_feature, agent_info, device_type, enums, pool_info};
use aqueduct_hsa::{Hsa, HsaResult};

/// `HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_REC_GRANULE` (ROCm 6.x header; ROCr 5.2.3 lacks it).
const RUNTIME_ALLOC_REC_GRANULE: u32 = 18;

/// The whole report: system attributes, then every agent with its pools and ISAs.
pub fn rocminfo_report(hsa: &Hsa) -> HsaResult<String> {
    let mut out = String::new();
    let frequency = hsa.timestamp_frequency()?;
    let _ = writeln!(out, "=====================\nHSA System Attributes\n=====================");
    let _ = writeln!(out, "System Timestamp Freq.:  {:.6}MHz", frequency as f64 / 1e6);
    let _ = writeln!(out, "\n==========\nHSA Agents\n==========");
    for (index, agent) in hsa.agents()?.into_iter().enumerate() {
        let info = hsa.agent_info(agent)?;
        let u32_of = |attribute| hsa.agent_u32(agent, attribute).unwrap_or(0);
        let gpu = info.device_type == device_type::GPU;
        let _ = writeln!(out, "*******\nAgent {}\n*******", index + 1);
        let _ = writeln!(out, "  Name:                    {}", info.name);
        let _ = writeln!(out, "  Uuid:                    {}", info.uuid);
        let _ = writeln!(out, "  Marketing Name:          {}", info.product_name);
        let _ = writeln!(out, "  Vendor Name:             {}", hsa.agent_string::<64>(agent, agent_info::VENDOR_NAME)?);
        let feature = match u32_of(agent_info::FEATURE) {
            agent_feature::KERNEL_DISPATCH => "KERNEL_DISPATCH",
            agent_feature::AGENT_DISPATCH => "AGENT_DISPATCH",
            _ => "None specified",
        };
        let _ = writeln!(out, "  Feature:                 {feature}");
        let profile = if u32_of(agent_info::PROFILE) == enums::PROFILE_FULL { "FULL_PROFILE" } else { "BASE_PROFILE" };
        let _ = writeln!(out, "  Profile:                 {profile}");
        for (label, attribute) in [
            ("Max Queue Number", agent_info::QUEUES_MAX),
            ("Queue Min Size", agent_info::QUEUE_MIN_SIZE),
            ("Queue Max Size", agent_info::QUEUE_MAX_SIZE),
        ] {
            let value = u32_of(attribute);
            let _ = writeln!(out, "  {:<24} {value}({value:#x})", format!("{label}:"));
        }
        let queue_type = if u32_of(agent_info::QUEUE_TYPE) == enums::QUEUE_TYPE_MULTI { "MULTI" } else { "SINGLE" };
        let _ = writeln!(out, "  Queue Type:              {queue_type}");
        let _ = writeln!(out, "  Node:                    {}", u32_of(agent_info::NODE));
        let _ = writeln!(out, "  Device Type:             {}", if gpu { "GPU" } else { "CPU" });
        let _ = writeln!(out, "  Compute Unit:            {}", info.compute_units);
        if gpu {
            let _ = writeln!(out, "  Wavefront Size:          {}({:#x})", info.wavefront_size, info.wavefront_size);
            let workgroup = u32_of(agent_info::WORKGROUP_MAX_SIZE);
            let _ = writeln!(out, "  Workgroup Max Size:      {workgroup}({workgroup:#x})");
            let grid = u32_of(agent_info::GRID_MAX_SIZE);
            let _ = writeln!(out, "  Grid Max Size:           {grid}({grid:#x})");
        }
        let _ = writeln!(out, "  Pool Info:");
        for (number, pool) in hsa.pools(agent)?.into_iter().enumerate() {
            let segment = match hsa.pool_attribute::<u32>(pool.pool, pool_info::SEGMENT)? {
                pool_info::SEGMENT_GROUP => "GROUP".to_string(),
                pool_info::SEGMENT_GLOBAL => format!("GLOBAL; FLAGS: {}", global_flags(pool.global_flags)),
                other => format!("SEGMENT {other}"),
            };
            let recommended = hsa
                .pool_attribute::<usize>(pool.pool, RUNTIME_ALLOC_REC_GRANULE)
                .map_or("N/A".into(), |bytes| format!("{}KB", bytes >> 10));
            let _ = writeln!(out, "    Pool {}", number + 1);
            let _ = writeln!(out, "      Segment:                 {segment}");
            let _ = writeln!(out, "      Size:                    {}({:#x}) KB", pool.size >> 10, pool.size >> 10);
            let _ = writeln!(out, "      Allocatable:             {}", upper(pool.alloc_allowed));
            let _ = writeln!(out, "      Alloc Granule:           {}KB", pool.granule >> 10);
            let _ = writeln!(out, "      Alloc Recommended Granule:{recommended}");
            let _ = writeln!(out, "      Alloc Alignment:         {}KB", pool.alignment >> 10);
            let _ = writeln!(out, "      Accessible by all:       {}", upper(pool.accessible_by_all));
        }
        let _ = writeln!(out, "  ISA Info:");
        for (number, isa) in info.isa_names.iter().enumerate() {
            let _ = writeln!(out, "    ISA {}\n      Name:                    {isa}", number + 1);
        }
    }
    let _ = writeln!(out, "*** Done ***");
    Ok(out)
}

/// rocminfo's spelling of a global pool's flags.
fn global_flags(flags: u32) -> String {
    let mut names = Vec::new();
    if flags & pool_info::GLOBAL_FLAG_KERNARG_INIT != 0 {
        names.push("KERNARG");
    }
    if flags & pool_info::GLOBAL_FLAG_FINE_GRAINED != 0 {
        names.push("FINE GRAINED");
    }
    if flags & aqueduct_hsa::rocr_facts::GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED != 0 {
        names.push("EXTENDED FINE GRAINED");
    }
    if flags & pool_info::GLOBAL_FLAG_COARSE_GRAINED != 0 {
        names.push("COARSE GRAINED");
    }
    names.join(", ")
}

fn upper(value: bool) -> &'static str {
    if value { "TRUE" } else { "FALSE" }
}

/// One agent of a rocminfo report: its fields in order, its pools' fields, its ISA names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReportAgent {
    /// The agent's `Key: value` fields, in report order.
    pub fields: Vec<(String, String)>,
    /// Each pool's `Key: value` fields, in report order.
    pub pools: Vec<Vec<(String, String)>>,
    /// The `Name` of each ISA.
    pub isas: Vec<String>,
}

impl ReportAgent {
    /// The value of an agent-level field (`"Device Type"`).
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }
}

/// Reads the agents of a rocminfo report (ours or a real dump); lines starting with `#` are
/// comments. Fields are `Key: value` pairs; nested lists (cache sizes, per-dimension limits) are
/// kept as their own keys.
pub fn parse_rocminfo(text: &str) -> Vec<ReportAgent> {
    #[derive(PartialEq)]
    enum Section {
        Agent,
        Pool,
        Isa,
    }
    let mut agents: Vec<ReportAgent> = Vec::new();
    let mut section = Section::Agent;
    for line in text.lines().filter(|line| !line.starts_with('#')) {
        let trimmed = line.trim();
        if trimmed.starts_with("Agent ") && !trimmed.contains(':') {
            agents.push(ReportAgent::default());
            section = Section::Agent;
            continue;
        }
        let Some(agent) = agents.last_mut() else { continue };
        if trimmed.starts_with("Pool ") && !trimmed.contains(':') {
            agent.pools.push(Vec::new());
            section = Section::Pool;
            continue;
        }
        if trimmed.starts_with("ISA ") && !trimmed.contains(':') || trimmed == "ISA Info:" {
            section = Section::Isa;
            continue;
        }
        let Some((key, value)) = trimmed.split_once(':') else { continue };
        let (key, value) = (key.trim().to_string(), value.trim().to_string());
        match section {
            Section::Pool => {
                if let Some(pool) = agent.pools.last_mut() {
                    pool.push((key, value));
                }
            }
            Section::Isa if key == "Name" => agent.isas.push(value),
            Section::Isa => {}
            Section::Agent => agent.fields.push((key, value)),
        }
    }
    agents
}

/// `aqueduct info --json`: the stable schema ([`INFO_SCHEMA`]). Fields are only ever added, never
/// renamed or removed, within a schema version.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InfoReport {
    /// The schema version: [`INFO_SCHEMA`].
    pub schema: u32,
    /// `soft` or `rocr`.
    pub provider: String,
    /// The ROCr library loaded, when the provider is ROCr.
    pub library: Option<String>,
    /// Why this provider was chosen.
    pub reason: String,
    /// The system timestamp frequency, in Hz.
    pub timestamp_frequency_hz: u64,
    /// Every agent the provider reports, in its order.
    pub agents: Vec<InfoAgent>,
}

/// The version of [`InfoReport`]'s schema.
pub const INFO_SCHEMA: u32 = 1;

/// One agent of an [`InfoReport`]. The GPU-only numbers are 0 for a CPU agent.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InfoAgent {
    /// The agent's name (`HSA_AGENT_INFO_NAME`), e.g. `gfx90a` for a GPU.
    pub name: String,
    /// The agent's UUID (`HSA_AMD_AGENT_INFO_UUID`); empty if the provider has none.
    pub uuid: String,
    /// The marketing name (`HSA_AMD_AGENT_INFO_PRODUCT_NAME`); empty if the provider has none.
    pub product_name: String,
    /// `cpu` or `gpu`.
    pub device_type: String,
    /// Full ISA names (`amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`); empty for a CPU.
    pub isas: Vec<String>,
    /// Compute units (`HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT`); 0 if the provider has none.
    pub compute_units: u32,
    /// Work-items per wavefront (GPU only).
    pub wavefront_size: u32,
    /// The most queues the agent can have at once (GPU only).
    pub queues_max: u32,
    /// The smallest queue size, in packets (GPU only).
    pub queue_min_packets: u32,
    /// The largest queue size, in packets (GPU only).
    pub queue_max_packets: u32,
    /// The agent's memory pools.
    pub pools: Vec<InfoPool>,
}

/// One memory pool of an [`InfoAgent`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InfoPool {
    /// `coarse-grained`, `fine-grained`, `extended-fine-grained`, `kernarg`, `group` or
    /// `other-<flags>`.
    pub kind: String,
    /// The pool's size in bytes.
    pub size: u64,
    /// Whether the runtime may allocate from the pool.
    pub alloc_allowed: bool,
    /// Allocation sizes are multiples of this (`RUNTIME_ALLOC_GRANULE`), in bytes.
    pub granule: u64,
    /// Alignment of allocations (`RUNTIME_ALLOC_ALIGNMENT`), in bytes.
    pub alignment: u64,
    /// Whether every agent can access the pool (`ACCESSIBLE_BY_ALL`).
    pub accessible_by_all: bool,
}

/// What [`rocminfo_report`] prints, as the stable JSON report.
pub fn info_report(hsa: &Hsa, reason: &str) -> HsaResult<InfoReport> {
    use aqueduct_hsa::PoolKindInfo;
    let mut agents = Vec::new();
    for agent in hsa.agents()? {
        let info = hsa.agent_info(agent)?;
        let pools = hsa
            .pools(agent)?
            .into_iter()
            .map(|pool| InfoPool {
                kind: match pool.kind {
                    PoolKindInfo::CoarseGrained => "coarse-grained".into(),
                    PoolKindInfo::FineGrained => "fine-grained".into(),
                    PoolKindInfo::ExtendedFineGrained => "extended-fine-grained".into(),
                    PoolKindInfo::Kernarg => "kernarg".into(),
                    PoolKindInfo::Group => "group".into(),
                    PoolKindInfo::Other(flags) => format!("other-{flags:#x}"),
                },
                size: pool.size as u64,
                alloc_allowed: pool.alloc_allowed,
                granule: pool.granule as u64,
                alignment: pool.alignment as u64,
                accessible_by_all: pool.accessible_by_all,
            })
            .collect();
        agents.push(InfoAgent {
            name: info.name,
            uuid: info.uuid,
            product_name: info.product_name,
            device_type: if info.device_type == device_type::GPU { "gpu" } else { "cpu" }.into(),
            isas: info.isa_names,
            compute_units: info.compute_units,
            wavefront_size: info.wavefront_size,
            queues_max: info.queues_max,
            queue_min_packets: info.queue_min_packets,
            queue_max_packets: info.queue_max_packets,
            pools,
        });
    }
    Ok(InfoReport {
        schema: INFO_SCHEMA,
        provider: hsa.kind().name().into(),
        library: hsa.library_path().map(str::to_string),
        reason: reason.into(),
        timestamp_frequency_hz: hsa.timestamp_frequency()?,
        agents,
    })
}

/// The providers this build can use, for `aqueduct --version`: the embedded soft runtime always,
/// and ROCr when its library loads, initializes and reports a GPU (or, in one line, why not).
pub fn providers_summary() -> String {
    let rocr = match Hsa::rocr() {
        Ok(hsa) => match hsa.gpu_agents() {
            Ok(gpus) if !gpus.is_empty() => {
                format!("rocr ({}, {} GPU agents)", hsa.library_path().unwrap_or("?"), gpus.len())
            }
            Ok(_) => "rocr: not usable: no GPU agents".to_string(),
            Err(error) => format!("rocr: not usable: {error}"),
        },
        Err(error) => aqueduct_hsa::rocr_unusable_reason(&error),
    };
    format!("providers: soft (embedded); {rocr}")
}

/// ROCr's own answer when it is brought up, for `--verbose`: the status behind the one-line
/// reason the provider line gives.
pub fn rocr_status() -> String {
    match Hsa::rocr() {
        Ok(hsa) => format!("rocr status: loaded from {}", hsa.library_path().unwrap_or("?")),
        Err(error) => format!("rocr status: {error}"),
    }
}
