//! The demo workload as a library call: results are verified inside, counts are checked here.

#[test]
fn chain_across_four_queues_verifies() {
    let report = aqueduct_cli::demo::run_on("soft", 512, 4).expect("demo succeeds");
    assert_eq!(report.provider, "soft");
    assert_eq!(report.queues.len(), 4);
    // 512 saxpy steps + the iota; 2 setup transfers, 8 snapshots, 3 read-backs.
    assert_eq!(report.dispatches, 513);
    assert_eq!(report.transfers, 2 + 8 + 3);
    let submissions: u64 = report.queues.iter().map(|queue| queue.stats.submissions).sum();
    assert_eq!(submissions, report.operations);
    // Every handoff crossed to another queue, so each waited on the device (the read-back's
    // wait on the chain is one more).
    let device_waits: u64 = report.queues.iter().map(|queue| queue.stats.device_waits).sum();
    assert!(device_waits >= 512, "{device_waits} device-side waits");
    assert_eq!(report.verified_elements, 3 * aqueduct_cli::demo::ELEMENTS as usize);
}

/// Handoff counts that are not multiples of 64 leave work after the last snapshot, on other
/// queues: the snapshot copy must be ordered before the next step writes y (and the read-back
/// after the snapshot), which the demo checks element by element.
#[test]
fn snapshots_are_ordered_against_later_steps_on_other_queues() {
    // The race, when present, shows in most rounds; three make a miss unlikely.
    let cases = [(65, 4), (100, 4), (130, 3), (63, 2), (1, 2)];
    for (handoffs, queues) in cases.into_iter().cycle().take(3 * cases.len()) {
        let report = aqueduct_cli::demo::run_on("soft", handoffs, queues)
            .unwrap_or_else(|error| panic!("{handoffs} handoffs on {queues} queues: {error}"));
        let snapshots = handoffs as usize / 64;
        assert_eq!(report.transfers, 2 + snapshots as u64 + 3, "{handoffs} handoffs");
        let expected = if snapshots > 0 { 3 } else { 2 } * aqueduct_cli::demo::ELEMENTS as usize;
        assert_eq!(report.verified_elements, expected, "{handoffs} handoffs");
    }
}

#[test]
fn one_queue_is_refused() {
    assert!(matches!(aqueduct_cli::demo::run_on("soft", 4, 1), Err(aqueduct_cli::demo::DemoError::Setup(_))));
}

#[test]
fn demo_cpu_kernels_read_the_layout_the_code_object_declares() {
    for bytes in aqueduct_cli::demo::DEMO_CODE_OBJECTS {
        demo_cpu_kernels_match(&aqueduct::codeobject::CodeObject::parse(bytes).expect("parses"));
    }
}

fn demo_cpu_kernels_match(code_object: &aqueduct::codeobject::CodeObject) {
    let explicit = |name: &str| -> Vec<(u32, u32, String)> {
        let kernel = code_object.kernel(name).expect("kernel exists");
        kernel
            .args
            .iter()
            .filter(|arg| !arg.value_kind.is_hidden())
            .map(|arg| (arg.offset, arg.size, arg.value_kind.as_str().to_string()))
            .collect()
    };
    // The offsets the host builds of cli/kernels/demo.c read (the soft runtime checks the same).
    assert_eq!(
        explicit("iota"),
        [(0, 8, "global_buffer".into()), (8, 4, "by_value".into()), (12, 4, "by_value".into())]
    );
    assert_eq!(
        explicit("saxpy"),
        [
            (0, 8, "global_buffer".into()),
            (8, 8, "global_buffer".into()),
            (16, 4, "by_value".into()),
            (20, 4, "by_value".into())
        ]
    );
    let symbols: Vec<_> = aqueduct_cli::demo::demo_host_builds().iter().map(|kernel| kernel.symbol).collect();
    assert_eq!(symbols, ["iota.kd", "saxpy.kd"]);
}
