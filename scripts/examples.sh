#!/usr/bin/env bash
# Runs every example on the embedded default, then on gfx90a, gfx942 and gfx1201 soft agents,
# each checking its own results (a mismatch exits non-zero). Debug builds with short runs, as
# CI's test build already compiled them; the README
# gives the full `cargo run --release --example NAME` commands.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

run() {
    echo "examples: $*"
    cargo run -q --example "$@"
}
run multi_queue_pipeline
run own_kernel
run batch_inference -- --passes 1
run tracy_throughput -- --repeats 1
run bevy_frame_compute -- 60
# Again on CDNA2, CDNA3 and RDNA4 agents, every kernel from the machine code of the code object
# each example picks for that agent (issue 57), with shorter runs: the interpreter in a debug build.
for agent in gfx90a gfx942 gfx1201; do
    export AQUEDUCT_SOFT_AGENTS=$agent AQUEDUCT_SOFT_EXEC=isa
    run multi_queue_pipeline
    run own_kernel -- --elements 4096
    run batch_inference -- --passes 1
    run tracy_throughput -- --repeats 1
    run bevy_frame_compute -- 10
done
unset AQUEDUCT_SOFT_AGENTS AQUEDUCT_SOFT_EXEC
