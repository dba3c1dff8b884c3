"""The numpy baseline for the engine's digits-MLP rows (docs/BENCHMARKS.md): the same float32
forward pass (two GEMMs with bias and ReLU, softmax, argmax) over the test split, in batches,
from the checked-in files, timed on this host. Prints one JSON line per batch size.

Run by bench_numpy.sh, which makes the environment (numpy pinned as regen.sh pins it).
"""
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name, dtype, shape):
    return np.fromfile(os.path.join(HERE, name), dtype=dtype).reshape(shape)


def main():
    w1, b1 = load("w1.f32", "<f4", (64, 64)), load("b1.f32", "<f4", (64,))
    w2, b2 = load("w2.f32", "<f4", (64, 10)), load("b2.f32", "<f4", (10,))
    inputs = load("test_inputs.f32", "<f4", (-1, 64))
    labels = load("test_labels.u32", "<u4", (-1,))
    reference = load("reference_logits.f32", "<f4", (-1, 10))
    items = len(labels)
    passes = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    for batch in (8, 32, 128):
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(passes):
                for first in range(0, items, batch):
                    x = inputs[first:first + batch]
                    logits = np.maximum(x @ w1 + b1, 0.0) @ w2 + b2
                    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
                    probabilities = shifted / shifted.sum(axis=1, keepdims=True)
                    classes = logits.argmax(axis=1)
            best = min(best, time.perf_counter() - start)
        logits = np.maximum(inputs @ w1 + b1, 0.0) @ w2 + b2
        assert np.abs(logits - reference).max() < 1e-4 and probabilities.shape[1] == 10 and len(classes) > 0
        accuracy = float((logits.argmax(axis=1) == labels).mean())
        print(json.dumps({"batch": batch, "items_per_second": passes * items / best, "accuracy": accuracy,
                          "threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"), "numpy": np.__version__}))


if __name__ == "__main__":
    main()
