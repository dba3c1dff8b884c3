#!/usr/bin/env bash
# The device machine's experiments, one build per suspect: ROUNDS rounds, and in each every
# build named (`.peer/aq-NAME`, a stripped bench binary) runs every shape filter of SHAPES, the
# builds in rotated order. Each run's report is $OUT/TAG-NAME-ROUND.json. `TASKSET=0,1` pins
# every run to those cores. scale-builds.sh and edge-builds.sh summarize what it writes.
#
#   SHAPES="scale/:scale edge/submit/512:edge" ROUNDS=4 scripts/rotate-builds.sh base new
set -u
pin=()
[[ -n "${TASKSET:-}" ]] && pin=(taskset -c "$TASKSET")
builds=("$@")
count=${#builds[@]}
for round in $(seq 1 "${ROUNDS:?}"); do
    for i in $(seq 0 $((count - 1))); do
        build=${builds[$(((i + round) % count))]}
        for shape in ${SHAPES:?}; do
            "${pin[@]}" .peer/aq-"$build" bench --filter "${shape%%:*}" --json >"$OUT/${shape##*:}-$build-$round.json" 2>/dev/null
        done
    done
done
