//! The gfx12 path's reach, table-wide: every operation of the gfx1200 decoder's table, tried once
//! through `interp::coverage` (its words decoded as gfx12, translated or given its own plan, run
//! on a blank wave), either runs or is refused with a reason; the counts are printed.

use std::collections::BTreeMap;

use aqueduct_isa::interp::Isa;
use aqueduct_isa::interp::coverage::operations;

#[test]
fn every_gfx1200_table_row_runs_or_is_refused_with_a_reason() {
    let all = operations(Isa::Gfx12);
    let mut refusals: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut unprobed = Vec::new();
    let mut runs = 0;
    for operation in &all {
        if let Some(error) = &operation.probe_error {
            unprobed.push(format!("{} ({}): {error}", operation.mnemonic, operation.encoding));
        } else if operation.runs {
            runs += 1;
        } else {
            refusals
                .entry(operation.refusal.unwrap_or("translated, but the gfx11 plan refuses it"))
                .or_default()
                .push(operation.mnemonic);
        }
    }
    println!("gfx1200: {} table rows; {runs} run; {} refused:", all.len(), all.len() - runs - unprobed.len());
    for (reason, mnemonics) in &refusals {
        println!("  {} — {reason}: {}", mnemonics.len(), mnemonics.join(" "));
    }
    assert!(unprobed.is_empty(), "probe words that do not decode as their row: {unprobed:#?}");
    assert!(all.len() > 1_500 && runs > 1_000, "{} rows, {runs} run", all.len());
    // Every wave32 WMMA and SWMMAC form runs (`valu/wmma.rs`: the dense 16x16x16 ones, the iu4
    // ones, and the sparse-A ones); wave64 is refused when a wave64 wave reaches one.
    let wmma_runs = |name: &str| all.iter().any(|operation| operation.mnemonic == name && operation.runs);
    let matrix: Vec<&str> =
        all.iter().map(|operation| operation.mnemonic).filter(|name| name.contains("wmma")).collect();
    assert_eq!(matrix.len(), 22, "{matrix:?}");
    for name in matrix {
        assert!(wmma_runs(name), "{name} does not run");
    }
}
