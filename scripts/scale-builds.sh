#!/usr/bin/env bash
# On the device machine: one experiment per build. Runs `scale/` and `edge/submit/512` of each
# build named (`.peer/aq-NAME`, stripped bench binaries copied in beside ../shared/peers/), ROUNDS
# rounds (default 4) with the builds in rotated order, and prints per build the throughput of
# Q queues against one queue in the same round, the submitting threads' CPU per operation, and
# the edge's wall time, each as a range over the rounds. Raw reports stay in $OUT.
#
#   scripts/scale-builds.sh base row nowake nocache new
set -u
SHAPES="scale/:scale edge/submit/512:edge" ROUNDS=${ROUNDS:-4} "$(dirname "$0")/rotate-builds.sh" "$@"
builds=("$@")
python3 - "$OUT" "${builds[@]}" <<'PY'
import json, glob, os, sys
out, builds = sys.argv[1], sys.argv[2:]
rows = {}
for path in glob.glob(os.path.join(out, "*.json")):
    _, build, rnd = os.path.basename(path)[:-5].rsplit("-", 2)
    for r in json.load(open(path))["results"]:
        rows.setdefault((build, r["name"]), []).append((int(rnd), r["median"], r.get("host_cpu_median")))
for build in builds:
    one = {rnd: median for rnd, median, _ in rows[(build, "scale/queues=1")]}
    line = [build]
    for q in (2, 4, 8):
        speed = sorted(one[rnd] / median for rnd, median, _ in rows[(build, f"scale/queues={q}")])
        cpu = sorted(round(c) for _, _, c in rows[(build, f"scale/queues={q}")])
        line.append(f"Q={q} {speed[0]:.2f}-{speed[-1]:.2f}x cpu {cpu[0]}-{cpu[-1]}")
    edge = sorted(round(median) for _, median, _ in rows[(build, "edge/submit/512")])
    line.append(f"edge {edge[0]}-{edge[-1]} ns")
    print(" | ".join(line))
PY
