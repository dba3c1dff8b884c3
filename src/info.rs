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
    if flags & aqueduct_hsa::soft::GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED != 0 {
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
    pub fields: Vec<(String, String)>,
    pub pools: Vec<Vec<(String, String)>>,
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
