#!/usr/bin/env bash
# valgrind memcheck over the soft runtime's and the engine's core test suites: every invalid
# read or write, use of uninitialized memory, bad free and definite leak fails the run.
# Usage: scripts/memcheck.sh [package:test[:filter] ...]   (default: the suites below)
#
# Suppressions: none. Rust's standard library and our leaked process-lifetime tables (the ROCr
# function table, the drop-in's kernel symbols) are "still reachable", which is not an error.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
suites=("$@")
if ((${#suites[@]} == 0)); then
    suites=(aqueduct-soft-hsa:soft_runtime
        # The drop-in's own entry points: client allocators, loaded images, shared-file remaps.
        aqueduct-soft-hsa:drop_in_entries aqueduct-soft-hsa:drop_in_extensions aqueduct-soft-hsa:drop_in_queries
        aqueduct-soft-hsa:drop_in_executables aqueduct-soft-hsa:drop_in_ipc
        # 2,100 queues that fault and are destroyed: nothing of them may be lost.
        aqueduct-soft-hsa:fault_cycles
        aqueduct-engine:waits aqueduct-engine:command_buffers
        # Executions processed on the device: the target's binding-table ring, read and written.
        aqueduct-engine:device_processing
        aqueduct-engine:bad_input aqueduct-engine:failures
        # Queue-ordered memory, host calls and files: raw-pointer transfers and a pool's reuse.
        aqueduct-engine:pools aqueduct-engine:host_calls aqueduct-engine:files
        # Replay capture: final checksums read freed-to-be memory; the writer thread's buffer.
        aqueduct-engine:replay
        # One of the eight stress runs: all eight take about 7 minutes under valgrind.
        aqueduct-engine:stress:device_side_waits_barrier_value)
fi
status=0
for suite in "${suites[@]}"; do
    IFS=: read -r package test filter <<<"$suite"
    # cargo names the test binary on stderr: "Executable tests/NAME.rs (target/debug/deps/NAME-HASH)".
    binary=$(cargo test -p "$package" --test "$test" --no-run 2>&1 | sed -n 's/.*Executable .*(\(.*\)).*/\1/p' | tail -n 1)
    if [[ -z "$binary" ]]; then
        echo "memcheck: no test binary for $suite" >&2
        exit 1
    fi
    echo "memcheck: $suite ($binary)"
    start=$SECONDS
    # --fair-sched: the runtime's spin-then-park loops need the spinning thread's peers to run.
    if ! valgrind -q --tool=memcheck --error-exitcode=99 --fair-sched=yes --leak-check=full \
        --errors-for-leak-kinds=definite --show-leak-kinds=definite "$binary" --test-threads=2 ${filter:+"$filter"} >/dev/null; then
        echo "memcheck: $suite FAILED" >&2
        status=1
    fi
    echo "memcheck: $suite done in $((SECONDS - start)) s"
done
exit "$status"
