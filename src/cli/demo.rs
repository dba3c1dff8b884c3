//! `aqueduct demo`: the end-to-end workload, with a short report of what ran where.

use super::CliResult;

pub fn run(device: &str, handoffs: u32, queues: u32) -> CliResult {
    let report = aqueduct::demo::run_on(device, handoffs, queues)?;
    println!("aqueduct demo: {} saxpy handoffs across {} queues", report.handoffs, report.queues.len());
    println!("  provider:    {} ({}), agent {}", report.provider, report.provider_reason, report.agent);
    for queue in &report.queues {
        let stats = queue.stats;
        println!(
            "  queue {}:     {:>5} operations, {:>5} AQL packets, {:>4} device-side waits, {} parked",
            queue.index, stats.submissions, stats.packets, stats.device_waits, stats.deferred
        );
    }
    let per_operation = |total: std::time::Duration| total.as_secs_f64() * 1e6 / report.operations as f64;
    println!(
        "  operations:  {} ({} dispatches, {} fills/copies/updates)",
        report.operations, report.dispatches, report.transfers
    );
    println!(
        "  submit:      {:>9.3} ms host time, {:>7.3} µs per operation",
        report.submit_time.as_secs_f64() * 1e3,
        per_operation(report.submit_time)
    );
    println!(
        "  end to end:  {:>9.3} ms, {:>7.3} µs per operation",
        report.end_to_end.as_secs_f64() * 1e3,
        per_operation(report.end_to_end)
    );
    println!("  verified:    {} elements, all correct", report.verified_elements);
    Ok(())
}
