#!/usr/bin/env bash
# Runs the loom models of the lock-free structures (loom-models/tests/*.rs) under --cfg loom, in
# release mode and a target directory of its own, so the normal build is not invalidated. Each
# model prints a line: the interleavings loom explored, its bound and its wall time.
# Usage: scripts/loom.sh [test-name-filter]; LOOM_TARGET_DIR overrides target/loom.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTFLAGS="--cfg loom"
export CARGO_TARGET_DIR="${LOOM_TARGET_DIR:-target/loom}"
start=$(date +%s)
status=0
# One test thread keeps each model's timing honest on a small machine.
cargo test --release -p aqueduct-loom-models -- --nocapture --test-threads=1 "$@" || status=$?
echo "loom models: $(($(date +%s) - start)) s in all, build included; exit status ${status}"
exit "${status}"
