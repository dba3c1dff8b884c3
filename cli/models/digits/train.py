#!/usr/bin/env python3
"""Train a small MLP on scikit-learn's bundled handwritten digits and write
its weights, the test split and numpy float32 reference logits.

Run through ./regen.sh, which pins the numpy and scikit-learn versions.
All outputs are little-endian raw arrays without headers; see README.md.
"""
import os

# Single-threaded BLAS so results do not depend on thread scheduling.
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
           "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_v] = "1"

import hashlib
import json
import platform
import random
import sys
import warnings

import numpy as np
import sklearn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

SEED = 0
OUT_DIR = os.path.dirname(os.path.abspath(__file__))

random.seed(SEED)
np.random.seed(SEED)

LE_F32 = np.dtype("<f4")
LE_U32 = np.dtype("<u4")


def write_raw(name, array, dtype, shape):
    a = np.ascontiguousarray(np.asarray(array).astype(dtype, copy=False))
    assert a.shape == shape, (name, a.shape, shape)
    path = os.path.join(OUT_DIR, name)
    data = a.tobytes(order="C")
    with open(path, "wb") as f:
        f.write(data)
    return hashlib.sha256(data).hexdigest()


def main():
    digits = load_digits()
    X = digits.data / 16.0          # float64 in [0, 1]
    y = digits.target
    assert X.shape == (1797, 64)

    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.2, random_state=SEED, stratify=y)

    clf = MLPClassifier(hidden_layer_sizes=(64,), activation="relu",
                        solver="adam", alpha=1e-4, max_iter=500,
                        random_state=SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # ConvergenceWarning, if any
        clf.fit(X_train, y_train)
    sklearn_accuracy = float(clf.score(X_test, y_test))

    # Reference forward pass, numpy float32 only.
    Xf = X_test.astype(np.float32)
    W1 = clf.coefs_[0].astype(np.float32)       # (64 inputs, 64 hidden)
    b1 = clf.intercepts_[0].astype(np.float32)  # (64,)
    W2 = clf.coefs_[1].astype(np.float32)       # (64 hidden, 10 classes)
    b2 = clf.intercepts_[1].astype(np.float32)  # (10,)
    assert W1.shape == (64, 64) and W2.shape == (64, 10)
    assert b1.shape == (64,) and b2.shape == (10,)
    hidden = np.maximum(Xf @ W1 + b1, np.float32(0))
    logits = hidden @ W2 + b2
    assert logits.dtype == np.float32

    pred = np.argmax(logits, axis=1)
    correct = int(np.sum(pred == y_test))
    n_test = int(y_test.shape[0])
    n_train = int(y_train.shape[0])
    accuracy = correct / n_test

    files = {}
    files["w1.f32"] = write_raw("w1.f32", W1, LE_F32, (64, 64))
    files["b1.f32"] = write_raw("b1.f32", b1, LE_F32, (64,))
    files["w2.f32"] = write_raw("w2.f32", W2, LE_F32, (64, 10))
    files["b2.f32"] = write_raw("b2.f32", b2, LE_F32, (10,))
    files["test_inputs.f32"] = write_raw("test_inputs.f32", Xf, LE_F32, (n_test, 64))
    files["test_labels.u32"] = write_raw("test_labels.u32", y_test, LE_U32, (n_test,))
    files["reference_logits.f32"] = write_raw("reference_logits.f32", logits, LE_F32, (n_test, 10))

    meta = {
        "dataset": "scikit-learn load_digits(): 1797 8x8 handwritten digit images, "
                   "10 classes, pixel values 0..16 (scaled here to [0,1] by dividing by 16)",
        "source": "https://archive.ics.uci.edu/dataset/80/optical+recognition+of+handwritten+digits",
        "licence": "Data: CC BY 4.0 (UCI ML Repository, 'Optical Recognition of Handwritten "
                   "Digits', E. Alpaydin and C. Kaynak, 1998; scikit-learn's digits set is a copy "
                   "of its test set). scikit-learn, which bundles the data, is BSD-3-Clause.",
        "split": "train_test_split(test_size=0.2, random_state=0, stratify=y)",
        "classifier": "MLPClassifier(hidden_layer_sizes=(64,), activation='relu', solver='adam', "
                      "alpha=1e-4, max_iter=500, random_state=0)",
        "n_train": n_train,
        "n_test": n_test,
        "layers": [[64, 64, "relu"], [64, 10, "none"]],
        "accuracy": accuracy,
        "sklearn_accuracy": sklearn_accuracy,
        "correct": correct,
        "n_iter": int(clf.n_iter_),
        "numpy_version": np.__version__,
        "sklearn_version": sklearn.__version__,
        "python_version": platform.python_version(),
        "files": files,
    }
    with open(os.path.join(OUT_DIR, "model.json"), "w", encoding="utf-8", newline="\n") as f:
        json.dump(meta, f, indent=2, sort_keys=False)
        f.write("\n")

    print(f"n_train={n_train} n_test={n_test} correct={correct} "
          f"accuracy={accuracy:.6f} sklearn_accuracy={sklearn_accuracy:.6f} "
          f"n_iter={clf.n_iter_}", file=sys.stderr)


if __name__ == "__main__":
    main()
