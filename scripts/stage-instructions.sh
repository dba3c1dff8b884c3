#!/usr/bin/env bash
# Instructions per call of the submission path's stage functions, from callgrind, for one bench
# shape: `scripts/stage-instructions.sh edge/submit/512` (default). Deterministic, unlike time:
# run it before and after a change to the path. Needs valgrind and a release build
# (`cargo build --release`); `AQUEDUCT_BIN` overrides the binary.
set -euo pipefail
shape="${1:-edge/submit/512}"
bin="${AQUEDUCT_BIN:-$(dirname "$0")/../target/release/aqueduct}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$bin" bench --filter "$shape" --quick >/dev/null 2>&1
callgrind_annotate --threshold=100 --tree=calling "$out/cg" >"$out/tree" 2>/dev/null
python3 - "$out/tree" <<'EOF'
import re, sys
# A callee line: "  1,234 (0.01%)  >   file:function (512x) [object]": inclusive cost of those calls.
line_re = re.compile(r"^\s*([\d,]+)\s+\([^)]*\)\s+>\s+\S+?:(.+?) \(([\d,]+)x\)")
wanted = {
    "submit (immediate, whole)": "aqueduct_engine::queue::submission::<impl aqueduct_engine::queue::core::QueueShared>::submit",
    "stage_params (one fetch)": "aqueduct_systems::stage_params",
    "run_pass": "aqueduct_systems::run_pass",
    "run_row (immediate, one row)": "aqueduct_systems::run_row",
    "admission::admit": "aqueduct_systems::admission::admit",
    "  resolve_waits": "aqueduct_systems::admission::resolve_waits",
    "  record_producers": "aqueduct_systems::admission::record_producers",
    "kernarg::patch_kernargs": "aqueduct_systems::kernarg::patch_kernargs",
    "publication::publish": "aqueduct_systems::publication::publish",
    "  record_epoch": "aqueduct_systems::publication::record_epoch",
    "reclaim::drain (per call)": "aqueduct_systems::reclaim::drain",
    "reclaim::drain_retired_batch": "aqueduct_systems::reclaim::drain_retired_batch",
}
totals = {}
for line in open(sys.argv[1]):
    match = line_re.match(line)
    if not match:
        continue
    cost, function, calls = int(match[1].replace(",", "")), match[2], int(match[3].replace(",", ""))
    for label, name in wanted.items():
        if function == name:
            total = totals.setdefault(label, [0, 0])
            total[0] += cost
            total[1] += calls
for label in wanted:
    if label in totals and totals[label][1]:
        cost, calls = totals[label]
        print(f"{label:32} {cost / calls:8.0f} instructions per call ({calls} calls)")
    else:
        print(f"{label:32}        - (not called or inlined)")
EOF
