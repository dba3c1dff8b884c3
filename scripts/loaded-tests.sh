#!/usr/bin/env bash
# The workspace's tests on a loaded machine (issue 47, item 7): every test binary, built once,
# runs in COPIES copies at once (default 2), ROUNDS times (default 3), each copy from its
# package's directory as `cargo test` runs it. A test that passes alone and fails here depends on
# timing or on running alone; the failing binaries and their output are printed at the end.
#
# Usage: scripts/loaded-tests.sh [ROUNDS] [COPIES]
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds=${1:-3}
copies=${2:-2}
AQUEDUCT_SOFT_LIBHSA_DIR="$(scripts/build-libhsa.sh --debug | tail -n 1)"
export AQUEDUCT_SOFT_LIBHSA_DIR
list=$(mktemp)
logs=$(mktemp -d)
trap 'rm -rf "$list" "$logs"' EXIT
# One line per test binary: its package directory, then the executable.
cargo test --workspace --no-run --message-format=json 2>/dev/null | python3 -c '
import json, os, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message.get("executable") and message["profile"]["test"]:
        print(os.path.dirname(message["manifest_path"]), message["executable"])
' > "$list"
echo "loaded-tests: $(wc -l < "$list") test binaries, $copies copies at once, $rounds rounds"

# Runs every binary of the list in order; records each failure as a log file.
run_copy() {
    local round=$1 copy=$2
    while read -r directory executable; do
        local name
        name=$(basename "$executable")
        if ! (cd "$directory" && "$executable" -q > "$logs/$round-$copy-$name.log" 2>&1); then
            echo "$name" >> "$logs/failed-$round"
        else
            rm -f "$logs/$round-$copy-$name.log"
        fi
    done < "$list"
}

failed=0
for round in $(seq 1 "$rounds"); do
    start=$(date +%s)
    for copy in $(seq 1 "$copies"); do
        run_copy "$round" "$copy" &
    done
    wait
    if [[ -s "$logs/failed-$round" ]]; then
        failed=1
        echo "round $round ($(( $(date +%s) - start )) s): failed: $(sort "$logs/failed-$round" | tr '\n' ' ')"
        for log in "$logs/$round"-*.log; do
            echo "--- $log"
            grep -E "panicked|FAILED|failures:|assert" "$log" | head -20
        done
    else
        echo "round $round ($(( $(date +%s) - start )) s): every binary passed in every copy"
    fi
done
exit "$failed"
