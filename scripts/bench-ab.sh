#!/usr/bin/env bash
# A/B of aqueduct binaries on the bench rows matching FILTER, alternating ROUNDS times so drift
# and neighbours' load hit both alike; prints one line per row and run.
# Usage: scripts/bench-ab.sh FILTER ROUNDS BINARY...   (e.g. old and new release binaries)
set -euo pipefail
filter="$1"; rounds="$2"; shift 2
for round in $(seq 1 "$rounds"); do
  for binary in "$@"; do
    "$binary" bench --filter "$filter" --json 2>/dev/null | python3 -c '
import json, sys
binary, round = sys.argv[1], sys.argv[2]
for row in json.load(sys.stdin)["results"]:
    if row["name"].startswith("limit/"):
        continue
    cpu = row.get("host_cpu_median") or 0
    print("%s round %s %-28s median %9.1f p10 %9.1f p90 %9.1f cpu %9.1f"
          % (binary, round, row["name"], row["median"], row["p10"], row["p90"], cpu))
' "$binary" "$round"
  done
done
