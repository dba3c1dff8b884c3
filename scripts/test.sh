#!/usr/bin/env bash
# The one test command, shared by developers (README) and CI (.ci/run) so the two cannot drift.
# Extra arguments go to `cargo test`, e.g. `scripts/test.sh soft_` to filter by test name.
#
# The ROCr conformance tests (hsa/tests/abi_conformance.rs, soft-hsa/tests/rocr_loader.rs) need
# Debian's libhsa-runtime64-1 and libhsa-runtime-dev; without them they print SKIPPED unless
# AQUEDUCT_REQUIRE_HSA_HEADERS=1 / AQUEDUCT_REQUIRE_ROCR=1 (set by CI) make that a failure.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# The soft runtime's drop-in libhsa-runtime64.so.1, for the tests that load it as ROCr would be
# loaded (built first: a `cargo build` from inside `cargo test` would wait on its own lock).
AQUEDUCT_SOFT_LIBHSA_DIR="$(scripts/build-libhsa.sh --debug | tail -n 1)"
export AQUEDUCT_SOFT_LIBHSA_DIR
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cargo test --workspace "$@" 2>&1 | tee "$log" || status=$?
# The engine's integration tests again, through its ROCr provider (the libloading table) on the
# drop-in: each test hands the drop-in its soft configuration (aqueduct_soft_configure) and drives
# its test controls (faults, stalls, queue modes) through the drop-in's vendor extension.
AQUEDUCT_TEST_DEVICE=amdgpu AQUEDUCT_LIBHSA_PATH="$AQUEDUCT_SOFT_LIBHSA_DIR/libhsa-runtime64.so.1" \
    cargo test -p aqueduct-engine --test '*' "$@" 2>&1 | tee -a "$log" || status=$?
# The command-buffer suites again with every execution processed on the device (the device
# library's block processor), where the model would pick the host for most of their programs.
AQUEDUCT_TEST_BLOCK_PROCESSING=device cargo test -p aqueduct-engine --test command_buffers \
    --test command_buffer_bad_input --test kernargs --test profile_executions --test profile_capture \
    --test replay --test deferred_release --test device_processing "$@" 2>&1 | tee -a "$log" || status=$?
# The gfx11 interpreter (AQUEDUCT_SOFT_EXEC=isa; the default, auto, runs it only where no host build is): the device library's suites, the C client and
# the demo through the drop-in on a gfx1100 (the drop-in's own default GPU is a gfx1030, which
# the plain run above covers), with every kernel run from its code object's machine code
# (host_registry.rs and soft_every_target.rs keep host builds: they test them).
AQUEDUCT_SOFT_EXEC=isa cargo test -p aqueduct-builtins "$@" 2>&1 | tee -a "$log" || status=$?
AQUEDUCT_SOFT_AGENTS=gfx1100 AQUEDUCT_SOFT_EXEC=isa cargo test --test soft_drop_in "$@" -- a_c_program_written_against_hsa_h \
    the_demo_and_command_buffers_run hostile_kernels_through_the_drop_in 2>&1 | tee -a "$log" || status=$?
# The hostile packets and kernels (issue 55) on the interpreter too; the plain run above took the
# native tier.
AQUEDUCT_SOFT_EXEC=isa cargo test -p aqueduct-soft-hsa --test hostile_packets --test watchdog --test fault_cycles --test use_after_free \
    "$@" 2>&1 | tee -a "$log" || status=$?
# The same device-library suites on an RDNA2 soft agent: the gfx1030 library from its machine
# code (gfx10.3 re-encoded as gfx11). The one test that names the default agent's library is
# skipped; host_registry.rs and isa_differential.rs load gfx1100 objects by design.
AQUEDUCT_SOFT_AGENTS=gfx1030 AQUEDUCT_SOFT_EXEC=isa cargo test -p aqueduct-builtins --test soft_dispatch \
    --test block_processor --test plan_reference "$@" -- --skip the_soft_agent_gets_the_gfx11_generic_library \
    2>&1 | tee -a "$log" || status=$?
# And the C client (the gfx1030 library's fill) and the demo (its gfx10-3-generic code object,
# picked by Device::select_code_object) through the drop-in on that gfx1030 agent.
AQUEDUCT_SOFT_AGENTS=gfx1030 AQUEDUCT_SOFT_EXEC=isa cargo test --test soft_drop_in "$@" -- \
    a_c_program_written_against_hsa_h the_demo_and_command_buffers_run 2>&1 | tee -a "$log" || status=$?
# cargo prints one "test result" line per test binary, ending on doc-test binaries that may hold
# no tests; close with the totals so the last line says what actually ran.
awk '/^test result:/ { passed += $4; failed += $6 } END { printf "workspace: %d passed, %d failed\n", passed, failed }' "$log"
exit "$status"
