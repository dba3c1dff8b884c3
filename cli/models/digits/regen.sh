#!/usr/bin/env bash
# Regenerate the digits MLP, its test split and the numpy reference logits.
# Makes a throwaway virtual environment outside the repository, installs
# pinned numpy and scikit-learn, and runs train.py (outputs land here).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

PYTHON="${PYTHON:-python3.11}"
NUMPY_VERSION=2.4.6
SKLEARN_VERSION=1.9.1

VENV_DIR="$(mktemp -d)"
trap 'rm -rf "$VENV_DIR"' EXIT

"$PYTHON" -m venv "$VENV_DIR"
"$VENV_DIR/bin/python" -m pip install --quiet --disable-pip-version-check \
    --only-binary=:all: \
    "numpy==${NUMPY_VERSION}" "scikit-learn==${SKLEARN_VERSION}"

export PYTHONHASHSEED=0
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
"$VENV_DIR/bin/python" train.py
