#!/usr/bin/env bash
# The instruction budget CI holds (issue 46): runs scripts/stage-instructions.sh on every shape
# of .ci/instruction-budgets and fails when one costs more than 5 % over its budget. Instructions
# are deterministic under callgrind, unlike time, so this is a gate on the code, not a timed test.
# Needs valgrind; builds the bench profile (as stage-instructions.sh does) unless AQUEDUCT_BIN
# names a binary.
#
#   scripts/instruction-gate.sh            # every budgeted shape
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
budgets=.ci/instruction-budgets
mapfile -t rows < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$budgets")
shapes=()
for row in "${rows[@]}"; do
    read -r shape _ <<<"$row"
    shapes+=("$shape")
done
measured=$(scripts/stage-instructions.sh "${shapes[@]}")
status=0
printf '%-28s %10s %10s %8s\n' shape budget measured ratio
for row in "${rows[@]}"; do
    read -r shape budget <<<"$row"
    # "SHAPE: N operations, M instructions per operation in all"
    count=$(awk -v shape="$shape:" '$1 == shape { print $4 }' <<<"$measured")
    if [[ -z "$count" ]]; then
        echo "instruction gate: $shape was not measured (no operations counted)" >&2
        status=1
        continue
    fi
    verdict=$(awk -v count="$count" -v budget="$budget" 'BEGIN {
        ratio = count / budget
        printf "%.3f %s", ratio, (ratio > 1.05 ? "OVER" : "ok") }')
    printf '%-28s %10d %10d %8s\n' "$shape" "$budget" "$count" "$verdict"
    [[ "$verdict" == *OVER ]] && status=1
done
if ((status)); then
    echo "instruction gate: a shape is more than 5 % over its budget in $budgets (or was not measured)" >&2
fi
exit "$status"
