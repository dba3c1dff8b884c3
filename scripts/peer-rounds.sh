#!/usr/bin/env bash
# On the device machine: rounds of an earlier build (`.peer/aqueduct-prev`) and this one
# (`.peer/aqueduct`), alternating, each round followed by CUDA's peer (`.peer/` set up as
# ../shared/peers/README.md says, with this script and scripts/bench-summary.py copied in);
# prints each binary's key rows per round and aqueduct beside CUDA, and leaves summary.json and
# the raw reports in $OUT. ROUNDS="a b c" by default; SCALE_ONLY=1 runs only the `scale/` rows
# (for the 32-core kind) and no CUDA.
set -u
rounds="${ROUNDS:-a b c}"
work=$(mktemp -d)
if [ -z "${SCALE_ONLY:-}" ]; then nvcc -O3 -arch=sm_90 .peer/cuda_queue_bench.cu -o /tmp/cqb || exit 1; fi
nproc > $work/cores.txt
for round in $rounds; do
  if [ -n "${SCALE_ONLY:-}" ]; then
    .peer/aqueduct-prev bench --json --filter scale/ > $work/prev-$round.json 2>/dev/null
    .peer/aqueduct bench --json --filter scale/ > $work/new-$round.json 2>/dev/null
  else
    .peer/aqueduct-prev bench --json > $work/prev-$round.json 2>/dev/null
    .peer/aqueduct bench --json > $work/new-$round.json 2>/dev/null
    /tmp/cqb > $work/cuda-$round.jsonl 2>/dev/null
  fi
done
python3 .peer/bench-summary.py $work
if [ -z "${SCALE_ONLY:-}" ]; then
  for round in $rounds; do echo "== round $round (new)"; python3 .peer/compare.py $work/new-$round.json $work/cuda-$round.jsonl | sed -n 4,12p; done
fi
cp $work/summary.json $OUT/ && tar czf $OUT/raw.tgz -C $work .
