//! The soft runtime's topology against a published ROCr dump (`soft-hsa/tests/fixtures/
//! rocminfo-gfx1100.txt`, an RX 7900 XTX on ROCm 6.2.2): the same agents in the same order, with
//! the same kinds of pools, field by field. Machine-specific values (names, sizes, UUIDs, CU
//! counts, clocks) are not compared.

use aqueduct::soft_hsa::SoftConfig;
use aqueduct_cli::info::{ReportAgent, parse_rocminfo, rocminfo_report};

const DUMP: &str = include_str!("../soft-hsa/tests/fixtures/rocminfo-gfx1100.txt");

/// Agent fields that describe the kind of agent, not the machine.
const AGENT_FIELDS: &[&str] = &[
    "Vendor Name",
    "Feature",
    "Profile",
    "Max Queue Number",
    "Queue Min Size",
    "Queue Max Size",
    "Queue Type",
    "Node",
    "Device Type",
];
const GPU_FIELDS: &[&str] = &["Wavefront Size", "Workgroup Max Size", "Grid Max Size"];
/// Pool fields that describe the kind of pool.
const POOL_FIELDS: &[&str] =
    &["Segment", "Allocatable", "Alloc Granule", "Alloc Recommended Granule", "Alloc Alignment", "Accessible by all"];

fn pool_field<'a>(pool: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pool.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
}

fn soft_report() -> Vec<ReportAgent> {
    // The default soft configuration: one gfx1100, as in the dump.
    let hsa =
        aqueduct_soft_hsa::open(SoftConfig { visible_devices: None, ..SoftConfig::default() }).expect("soft runtime");
    parse_rocminfo(&rocminfo_report(&hsa).expect("report"))
}

#[test]
fn the_soft_runtime_has_rocrs_agents_and_pools_field_by_field() {
    let real = parse_rocminfo(DUMP);
    let soft = soft_report();
    assert_eq!(real.len(), 2, "the fixture parses into a CPU and a GPU agent");
    assert_eq!(soft.len(), real.len(), "agent count");
    for (index, (real, soft)) in real.iter().zip(&soft).enumerate() {
        let gpu = real.field("Device Type") == Some("GPU");
        let fields = AGENT_FIELDS.iter().chain(if gpu { GPU_FIELDS } else { &[] });
        for field in fields {
            let expected = real.field(field).unwrap_or_else(|| panic!("agent {index}: the dump has no `{field}`"));
            assert_eq!(
                soft.field(field),
                Some(expected),
                "agent {index} ({}): `{field}`",
                real.field("Name").unwrap_or("?")
            );
        }
        assert_eq!(soft.pools.len(), real.pools.len(), "agent {index}: pool count");
        for (number, (real_pool, soft_pool)) in real.pools.iter().zip(&soft.pools).enumerate() {
            for field in POOL_FIELDS {
                assert_eq!(
                    pool_field(soft_pool, field),
                    pool_field(real_pool, field),
                    "agent {index} pool {}: `{field}`",
                    number + 1
                );
            }
        }
        assert_eq!(soft.isas, real.isas, "agent {index}: ISAs");
    }
}

#[test]
fn the_comparison_sees_a_pool_on_the_wrong_agent() {
    // Guards the test above: the layout aqueduct used to model (every pool on the GPU agent)
    // must not pass the comparison.
    let real = parse_rocminfo(DUMP);
    let mut wrong = real.clone();
    let moved = wrong[0].pools.remove(1);
    wrong[1].pools.insert(1, moved);
    let differs = real.iter().zip(&wrong).any(|(real, wrong)| {
        real.pools.len() != wrong.pools.len()
            || real
                .pools
                .iter()
                .zip(&wrong.pools)
                .any(|(a, b)| POOL_FIELDS.iter().any(|field| pool_field(a, field) != pool_field(b, field)))
    });
    assert!(differs);
}
