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
    // The gfx11 operations the kernels use run; WMMA is refused for its layout.
    let refused_wmma = &refusals["gfx12's WMMA operand layout is not gfx11's"];
    assert!(refused_wmma.contains(&"v_wmma_f32_16x16x16_f16"), "{refused_wmma:?}");
}
