#!/usr/bin/env bash
# On the device machine: ROUNDS rounds (default 3); in each, every build named (`.peer/aq-NAME`,
# stripped bench binaries) runs every shape filter of SHAPES, the builds in rotated order, then
# CUDA's peer once (`.peer/cuda_queue_bench.cu`, from ../shared/peers; NO_CUDA=1 skips it).
# Prints each row's per-round medians (wall and host CPU, sorted) by build, each round's queue
# scaling against one queue, and CUDA's edge and graph launch; the same goes to $OUT/summary.txt.
#
#   ROUNDS=10 SHAPES="cb/device/512 clip/device/c1d16" scripts/device-rounds.sh head new
set -u
builds=("$@")
count=${#builds[@]}
shapes="${SHAPES:-edge/submit/512 batch/edge/512 batch/dispatch/512 dispatch/submit/bindings=4 cb/device/ clip/device/ scale/ cb/static/512 cb/record/512}"
raw=$(mktemp -d)
echo "cores: $(nproc)"
if [ -z "${NO_CUDA:-}" ]; then nvcc -O3 -arch=sm_90 .peer/cuda_queue_bench.cu -o "$raw/cqb" || exit 1; fi
for round in $(seq 1 "${ROUNDS:-3}"); do
    for i in $(seq 0 $((count - 1))); do
        build=${builds[$(((i + round) % count))]}
        for shape in $shapes; do
            .peer/aq-"$build" bench --filter "$shape" --json >"$raw/$build-$round-$(echo "$shape" | tr '/=' '__').json" 2>/dev/null
        done
    done
    if [ -z "${NO_CUDA:-}" ]; then "$raw/cqb" >"$raw/cuda-$round.jsonl" 2>/dev/null; fi
done
python3 - "$raw" "${builds[@]}" <<'PY' | tee "${OUT:-.}/summary.txt"
import collections, glob, json, os, sys
raw, builds = sys.argv[1], sys.argv[2:]
rows = collections.defaultdict(list)
scale = []
for path in sorted(glob.glob(os.path.join(raw, "*-*-*.json"))):
    build, rnd = os.path.basename(path).split("-")[:2]
    try:
        results = {r["name"]: r for r in json.load(open(path))["results"]}
    except (OSError, ValueError, KeyError):
        continue
    for name, r in results.items():
        rows[(name, build)].append((round(r["median"]), round(r.get("host_cpu_median", 0))))
    if "scale/queues=1" in results:
        one = results["scale/queues=1"]["median"]
        ratios = [f"Q{q} {one / results[f'scale/queues={q}']['median']:.2f}x (cpu {results[f'scale/queues={q}'].get('host_cpu_median', 0):.0f})"
                  for q in (2, 4, 8) if f"scale/queues={q}" in results]
        scale.append(f"scale {build} round {rnd}: " + ", ".join(ratios))
for name in sorted({name for name, _ in rows}):
    for build in builds:
        values = rows.get((name, build), [])
        print(f"{name:30s} {build:6s} wall {sorted(v[0] for v in values)} cpu {sorted(v[1] for v in values)}")
print("\n".join(scale))
for path in sorted(glob.glob(os.path.join(raw, "cuda-*.jsonl"))):
    for line in open(path):
        shape = json.loads(line) if line.strip() else {}
        if shape.get("shape") in ("edge", "graph_launch_512"):
            keep = ("shape", "submit_us_per_edge", "launch_cpu_us")
            print(os.path.basename(path), {k: v for k, v in shape.items() if k in keep})
PY
