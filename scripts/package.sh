#!/usr/bin/env bash
# Packages every crate of the workspace as crates.io would take it, and builds each from its
# package alone (`cargo package --workspace`): a crate whose build needs a file outside its own
# folder, or a dependency without a version, fails here (issue 47). CI runs it last.
set -euo pipefail
cd "$(dirname "$0")/.."
# A previous run's copies. Cargo takes a registry crate of one version as unchanging, so a rerun
# would reuse the sources it unpacked into CARGO_HOME and their build outputs in target/, and miss
# every change since: remove both (the workspace's own builds go too). The sources in CARGO_HOME
# go always: another checkout's run (a fresh clone of the same CARGO_HOME) leaves them too.
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/aqueduct-*
if [[ -d target/package ]]; then
    rm -rf target/package
    crates=$(cargo metadata --no-deps --format-version 1 |
        python3 -c 'import json, sys; print(" ".join("-p " + p["name"] for p in json.load(sys.stdin)["packages"]))')
    # shellcheck disable=SC2086
    cargo clean -q $crates
fi
cargo package --workspace
