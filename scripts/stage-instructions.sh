#!/usr/bin/env bash
# Instructions per operation of every stage of the submission path, immediate and batched, from
# callgrind: deterministic, unlike time, so run it before and after a change to the path.
#
#   scripts/stage-instructions.sh [SHAPE ...]
#
# Shapes default to the immediate and batched edge and dispatch rows. Each shape runs the full
# (non-quick) bench under callgrind, collecting only inside the submitting call
# (`PassDriver::submit` in `queue/pass_driver.rs` for immediate shapes, an execution's included,
# `Queue::batch` for
# batches), so the numbers are the submitting thread's, divided by the operations it enqueued;
# `cb/record/N` collects inside the bench's `record_chain` and divides by the dispatches recorded. Needs valgrind; it builds the
# binary with the bench profile (release with line tables, which callgrind names functions by);
# `AQUEDUCT_BIN` overrides the binary (an older build for "before": stage functions it lacks
# print as "-").
set -euo pipefail
shapes=("$@")
if ((${#shapes[@]} == 0)); then
    shapes=(edge/submit/512 batch/edge/512 dispatch/submit/bindings=4 batch/dispatch/512)
fi
if [[ -z "${AQUEDUCT_BIN:-}" ]]; then
    (cd "$(dirname "$0")/.." && cargo build -q --profile bench --bin aqueduct)
fi
bin="${AQUEDUCT_BIN:-$(dirname "$0")/../target/release/aqueduct}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for shape in "${shapes[@]}"; do
    case "$shape" in
        batch/*) collect=('*Queue*batch*') ;;
        # Recording: one call records and finishes an N-dispatch chain; an operation is a dispatch.
        cb/record/*) collect=('*Materials::record_chain') ;;
        # The pass driver's; builds before it was a type of its own named it `Queue::submit`
        # (and before the queue was three types, `QueueShared::submit`). Only one is in a binary.
        *) collect=('*queue::*PassDriver::submit' '*queue::*Queue>::submit') ;;
    esac
    toggles=()
    for pattern in "${collect[@]}"; do toggles+=(--toggle-collect="$pattern"); done
    valgrind --tool=callgrind --callgrind-out-file="$out/cg" "${toggles[@]}" \
        "$bin" bench --filter "$shape" >/dev/null 2>&1
    callgrind_annotate --threshold=100 --tree=calling "$out/cg" >"$out/tree" 2>/dev/null
    python3 - "$out/tree" "$shape" <<'EOF'
import re, sys
# A callee line: "  1,234 (0.01%)  >   file:function (512x) [object]": inclusive cost of those calls.
line_re = re.compile(r"^\s*([\d,]+)\s+\([^)]*\)\s+>\s+\S+?:(.+?) \(([\d,]+)x\)")
total_re = re.compile(r"^\s*([\d,]+)\s+\([^)]*\)\s+PROGRAM TOTALS")
queue = "aqueduct_engine::queue::pass_driver::PassDriver::"
# (label, function); the first three count the operations (enqueue was named stage before) (one call each per operation).
wanted = [
    ("submit (immediate call)", queue + "submit"),
    ("enqueue (batch)", queue + "enqueue"),
    ("stage (batch, before 2026-12-04)", queue + "stage"),
    ("record_chain (one chain)", "aqueduct_cli::bench::command_buffers::Materials::record_chain"),
    ("  stage_params (state fetch)", "aqueduct_systems::stage_params"),
    ("  SubmissionRows::push", "aqueduct_components::submission::SubmissionRows::push"),
    ("schedule run (batch)", "bevy_ecs::schedule::schedule::Schedule::run"),
    ("run_pass (immediate)", "aqueduct_systems::run_pass"),
    ("run_row (before issue 30)", "aqueduct_systems::run_row"),
    ("admission", "aqueduct_systems::admission::admit_pending"),
    ("admission (one row, before)", "aqueduct_systems::admission::admit"),
    ("  record_producers (out of line, before)", "aqueduct_systems::admission::record_producers"),
    ("kernarg patching", "aqueduct_systems::kernarg::patch_admitted"),
    ("kernarg patching (one row, before)", "aqueduct_systems::kernarg::patch_kernargs"),
    ("publication", "aqueduct_systems::publication::publish_admitted"),
    ("publication (one row, before)", "aqueduct_systems::publication::publish"),
    ("  record_epoch (out of line, before)", "aqueduct_systems::publication::record_epoch"),
    ("reclaim (submitter's batch)", "aqueduct_systems::reclaim::reclaim_retired_batch"),
    ("reclaim (before)", "aqueduct_systems::reclaim::drain_retired_batch"),
    ("  drain (per call)", "aqueduct_systems::reclaim::drain"),
]
totals, program, contended = {}, 0, 0
for line in open(sys.argv[1]):
    if match := total_re.match(line):
        program = int(match[1].replace(",", ""))
    match = line_re.match(line)
    if not match:
        continue
    cost, function, calls = int(match[1].replace(",", "")), match[2], int(match[3].replace(",", ""))
    # std's mutex slow path: spinning and sleeping while another thread (the completion thread
    # draining) holds the queue lock. That is waiting, not the path's work, and how much of it
    # lands in the collected frame depends on thread timing; it is reported, not counted.
    if function.endswith("Mutex>::lock_contended"):
        contended += cost
    # Older builds: the driver's functions were the handle's, in `submission.rs` (and `shared.rs`).
    function = function.replace("queue::shared::QueueShared>", "queue::Queue>")
    function = function.replace("aqueduct_engine::queue::submission::<impl aqueduct_engine::queue::Queue>::", queue)
    for label, name in wanted:
        if function == name:
            total = totals.setdefault(label, [0, 0])
            total[0] += cost
            total[1] += calls
operations = sum(totals.get(label, [0, 0])[1] for label, _ in wanted[:3])
# A recorded chain is N operations (its dispatches); N ends the shape's name.
recorded = totals.get(wanted[3][0], [0, 0])[1]
operations += recorded * int(sys.argv[2].rsplit("/", 1)[-1]) if recorded else 0
print(f"{sys.argv[2]}: {operations} operations, {(program - contended) / max(operations, 1):.0f} instructions per operation in all")
if contended:
    print(f"  {'lock waits (not counted above)':36} {contended / max(operations, 1):8.0f} per operation")
for label, _ in wanted:
    if label in totals and totals[label][1]:
        cost, calls = totals[label]
        per = "per call" if label.endswith("(per call)") else "per operation"
        print(f"  {label:36} {cost / (calls if per == 'per call' else operations):8.0f} {per} ({calls} calls)")
EOF
done
