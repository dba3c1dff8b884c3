#!/usr/bin/env bash
# Runs every example on the embedded default, each checking its own results (a mismatch exits
# non-zero). Debug builds with short runs, as CI's test build already compiled them; the README
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
