//! `aqueduct demo`: the end-to-end workload, with a short report of what ran where, or with
//! `--json` the same as one JSON document (schema 1).

use crate::demo::DemoReport;

use super::CliResult;
use super::output::{duration, duration_ns, table};

pub fn run(device: &str, options: crate::demo::DemoOptions, json: bool) -> CliResult {
    let config = aqueduct_engine::EngineConfig { device: device.parse()?, ..aqueduct_engine::EngineConfig::default() };
    let report = crate::demo::run_with(config, options)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&to_json(&report))?);
        return Ok(());
    }
    println!("aqueduct demo: {} saxpy handoffs across {} queues", report.handoffs, report.queues.len());
    println!("  provider:    {} ({}), agent {}", report.provider, report.provider_reason, report.agent);
    let mut queues = table(&["queue", "operations", "AQL packets", "device-side waits", "parked"], 0);
    for queue in &report.queues {
        let stats = queue.stats;
        queues.add_row([queue.index.into(), stats.submissions, stats.packets, stats.device_waits, stats.deferred]);
    }
    println!("{queues}");
    let per_operation =
        |total: std::time::Duration| duration_ns(total.as_secs_f64() * 1e9 / report.operations.max(1) as f64);
    println!(
        "  operations:  {} ({} dispatches, {} fills/copies/updates)",
        report.operations, report.dispatches, report.transfers
    );
    println!(
        "  submit:      {} host time, {} per operation",
        duration(report.submit_time),
        per_operation(report.submit_time)
    );
    println!("  end to end:  {}, {} per operation", duration(report.end_to_end), per_operation(report.end_to_end));
    println!("  verified:    {} elements, all correct", report.verified_elements);
    let Some(model) = &report.model else { return Ok(()) };
    println!(
        "  model:       digits MLP (64-64-10, f32; kernels from cli/kernels/mlp.hip), {} items in batches of {} on {} queues",
        model.items,
        crate::demo::MODEL_BATCH,
        report.queues.len()
    );
    println!(
        "               accuracy {:.4} ({} of {}), numpy's {:.4}; every item's logits within {} of numpy's",
        model.accuracy,
        model.correct,
        model.items,
        model.reference_accuracy,
        crate::digits::LOGIT_TOLERANCE
    );
    println!(
        "               {:.0} items/s, host {:.2} us/item, batch latency p50 {}, p99 {}",
        model.items_per_second(),
        model.host_us_per_item(),
        duration(model.latency(0.5)),
        duration(model.latency(0.99))
    );
    Ok(())
}

/// The report as `--json` prints it; times in nanoseconds.
fn to_json(report: &DemoReport) -> serde_json::Value {
    let queues: Vec<serde_json::Value> = report
        .queues
        .iter()
        .map(|queue| {
            serde_json::json!({
                "index": queue.index,
                "operations": queue.stats.submissions,
                "packets": queue.stats.packets,
                "device_waits": queue.stats.device_waits,
                "parked": queue.stats.deferred,
            })
        })
        .collect();
    serde_json::json!({
        "schema": 1,
        "provider": report.provider,
        "provider_reason": report.provider_reason,
        "agent": report.agent,
        "handoffs": report.handoffs,
        "queues": queues,
        "operations": report.operations,
        "dispatches": report.dispatches,
        "transfers": report.transfers,
        "submit_ns": report.submit_time.as_nanos() as u64,
        "end_to_end_ns": report.end_to_end.as_nanos() as u64,
        "verified_elements": report.verified_elements,
        "verified": true,
        "model": report.model.as_ref().map(|model| serde_json::json!({
            "name": "digits-mlp-f32",
            "items": model.items,
            "correct": model.correct,
            "accuracy": model.accuracy,
            "reference_accuracy": model.reference_accuracy,
            "max_logit_error": model.max_logit_error,
            "items_per_second": model.items_per_second(),
            "host_us_per_item": model.host_us_per_item(),
            "batch_latency_p50_ns": model.latency(0.5).as_nanos() as u64,
            "batch_latency_p99_ns": model.latency(0.99).as_nanos() as u64,
        })),
    })
}
