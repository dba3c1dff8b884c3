#!/usr/bin/env bash
# On the device machine: one experiment per build, for the edge. Runs `edge/submit/512` and
# `batch/edge/512` of each build named (`.peer/aq-NAME`, stripped bench binaries), ROUNDS rounds
# (default 5) with the builds in rotated order, and prints each row's medians over the rounds,
# sorted. Raw reports stay in $OUT. `TASKSET=0,1` pins every run to those cores.
#
#   ROUNDS=8 scripts/edge-builds.sh head promise nocounters
set -u
SHAPES="edge/submit/512:e batch/edge/512:f" ROUNDS=${ROUNDS:-5} "$(dirname "$0")/rotate-builds.sh" "$@"
builds=("$@")
python3 - "$OUT" "${builds[@]}" <<'PY'
import json, glob, os, sys
out, builds = sys.argv[1], sys.argv[2:]
rows = {}
for path in glob.glob(os.path.join(out, "[ef]-*.json")):
    _, build, rnd = os.path.basename(path)[:-5].rsplit("-", 2)
    for r in json.load(open(path))["results"]:
        rows.setdefault((build, r["name"]), []).append(round(r["median"]))
names = sorted({n for _, n in rows})
for build in builds:
    print(build, " | ".join(f"{n} {sorted(rows.get((build,n),[]))}" for n in names))
PY
