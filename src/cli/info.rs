//! `aqueduct info`: provider, agents, pools and queue limits, in the style of rocminfo.

use aqueduct_hsa::soft::SoftConfig;
use aqueduct_hsa::{Hsa, PoolKindInfo};

use super::CliResult;

pub fn run(provider: &str) -> CliResult {
    let (hsa, reason) = match provider {
        "auto" => {
            let selection = Hsa::auto(SoftConfig::default())?;
            (selection.hsa, selection.reason)
        }
        "soft" => (Hsa::soft(SoftConfig::default())?, "requested with --provider soft".to_string()),
        "rocr" => (Hsa::rocr()?, "requested with --provider rocr".to_string()),
        other => return Err(format!("unknown provider `{other}` (expected auto, soft or rocr)").into()),
    };
    println!("Provider: {}", hsa.kind().name());
    if let Some(path) = hsa.library_path() {
        println!("Library:  {path}");
    }
    println!("Reason:   {reason}");
    println!("Timestamp frequency: {} Hz", hsa.timestamp_frequency()?);
    for (index, agent) in hsa.gpu_agents()?.iter().enumerate() {
        println!();
        println!("Agent {index}: {}", agent.name);
        println!("  Product:        {}", agent.product_name);
        println!("  UUID:           {}", agent.uuid);
        for isa in &agent.isa_names {
            println!("  ISA:            {isa}");
        }
        println!("  Wavefront size: {}", agent.wavefront_size);
        println!("  Compute units:  {}", agent.compute_units);
        println!("  Queues:         up to {} queues of {}..={} packets", agent.queues_max, agent.queue_min_packets, agent.queue_max_packets);
        for pool in hsa.pools(agent.agent)? {
            let kind = match pool.kind {
                PoolKindInfo::CoarseGrained => "device-local (coarse-grained)".to_string(),
                PoolKindInfo::FineGrained => "host (fine-grained)".to_string(),
                PoolKindInfo::Kernarg => "kernarg (fine-grained)".to_string(),
                PoolKindInfo::Other(segment) => format!("segment {segment}"),
            };
            println!(
                "  Pool:           {kind:<30} {:>8} MiB, granule {} B, alloc {}, accessible by all: {}",
                pool.size >> 20,
                pool.granule,
                if pool.alloc_allowed { "allowed" } else { "not allowed" },
                pool.accessible_by_all
            );
        }
    }
    Ok(())
}
