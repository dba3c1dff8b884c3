#!/usr/bin/env bash
# Host instructions per interpreted wave instruction, per benchmark kernel of
# isa/benches/interpret.rs, counted by callgrind (deterministic, unlike times on a shared
# machine). Usage: scripts/isa-instructions.sh [NAME...] (default: every kernel).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench -q -p aqueduct-isa --bench interpret --no-run 2>/dev/null
binary=$(ls -t target/release/deps/interpret-* | grep -v '\.d$' | head -n 1)
names=("$@")
((${#names[@]})) || names=(gemm_f32_256 gemm_f32_256_wave64 reduce_dpp_1M hgemm_dot2_128 fill_1MiB)
for name in "${names[@]}"; do
    out=$(mktemp)
    waves=$(AQUEDUCT_ISA_BENCH_ONCE=$name valgrind --tool=callgrind --callgrind-out-file="$out" \
        --toggle-collect='*measured_once*' "$binary" --bench 2>/dev/null | sed -n 's/.*: \([0-9]*\) wave instructions/\1/p')
    host=$(callgrind_annotate "$out" 2>/dev/null | sed -n 's/^\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
    rm -f "$out"
    awk -v name="$name" -v host="$host" -v waves="$waves" \
        'BEGIN { printf "%-16s %12d wave instructions %14.0f host instructions %8.1f per wave instruction\n", name, waves, host, host / waves }'
done
