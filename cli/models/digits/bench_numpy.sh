#!/usr/bin/env bash
# The numpy baseline of the digits MLP's items per second (bench_numpy.py), in a throwaway
# environment with regen.sh's numpy; one BLAS thread (the engine's rows say their own cores).
# `cli/models/digits/bench_numpy.sh [PASSES]`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
PYTHON="${PYTHON:-python3.11}"
NUMPY_VERSION=$(sed -n 's/^NUMPY_VERSION=//p' regen.sh)
VENV_DIR="$(mktemp -d)"
trap 'rm -rf "$VENV_DIR"' EXIT
"$PYTHON" -m venv "$VENV_DIR"
"$VENV_DIR/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: "numpy==${NUMPY_VERSION}"
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 "$VENV_DIR/bin/python" bench_numpy.py "$@"
