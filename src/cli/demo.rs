//! `aqueduct demo`: the end-to-end workload, with a short report.

use super::CliResult;

pub fn run(handoffs: u32, queues: u32) -> CliResult {
    let report = aqueduct::demo::run(handoffs, queues)?;
    let operations = u64::from(report.handoffs) + 1;
    println!("aqueduct demo: {} handoffs across {} queues on the {} provider ({})", report.handoffs, report.queues, report.provider, report.agent);
    for (queue, packets) in report.packets_per_queue.iter().enumerate() {
        println!("  queue {queue}: {packets} packets");
    }
    println!("  operations: {operations} kernel dispatches + {} cross-queue BARRIER_AND waits = {} packets", report.handoffs, report.packets);
    println!("  submit:      {:>10.3} ms total, {:>8.3} µs per operation (host)", report.submit_time.as_secs_f64() * 1e3, report.submit_time.as_secs_f64() * 1e6 / operations as f64);
    println!("  end to end:  {:>10.3} ms total, {:>8.3} µs per operation", report.end_to_end.as_secs_f64() * 1e3, report.end_to_end.as_secs_f64() * 1e6 / operations as f64);
    println!("  verified:    {} elements, all correct", report.verified_elements);
    Ok(())
}
