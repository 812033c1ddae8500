"""Choose C and the RBF width of the ramp-paper study (kbench/studies/ramp.toml) by cross-validation.

The paper tunes C ∈ {0.1, 1, 5, 10, 50, 100, 500} and δ² ∈ {2M, M, M/2, M/4, M/16, M/64}
(M attributes after z-scoring, k(x, x') = exp(−‖x − x'‖²/(2δ²)), so γ = 1/(2δ²)) by
cross-validation per algorithm and per data set. This script does it per *family*, on a
subsample, to stay affordable: 3-fold cross-validation on the first ``--n`` training
examples of seed 0's stream, over the full 42-point grid, for

* the hinge family (LIBSVM, IDSVM, PA): scikit-learn's SVC;
* the ramp family (OnlineSVM^R, OnlineASVM^R, offline CCCP): kbench's ``ramp_cccp``.

Ties go to the smaller C, then the wider kernel. Usage:
``python scripts/tune_ramp.py [--n 2000] [--datasets gauss,banana,...]``.
"""

from __future__ import annotations

import argparse
import itertools
import json

import numpy as np
from sklearn.svm import SVC

from kbench.core.registry import get_registry
from kbench.data.streams import StreamSpec, get_stream, split_stream_options

#: The study's data sets (stream specs as in kbench/studies/ramp.toml).
DATASETS = {
    "adult": "a9a[n=10000,scale=standard]",
    "banana": "banana[test_size=0.1887,scale=standard]",
    "checkerboard": "checkerboard[n_train=10000,n_test=10000,scale=standard]",
    "ncheckerboard": "checkerboard[n_train=10000,n_test=10000,noise=0.15,scale=standard]",
    "cover-standin": "magic[n=10000,test_size=0.4,scale=standard]",
    "dna": "splice[positive=N,test_size=0.372,scale=standard]",
    "gauss": "haykin[n_train=10000,n_test=10000,scale=standard]",
    "usps-like": "usps_like[positive=0|3|6|8|9,test_size=0.3,scale=standard]",
    "waveform": "waveform[n_train=10000,n_test=10000,positive=0|2,scale=standard]",
}
C_GRID = (0.1, 1.0, 5.0, 10.0, 50.0, 100.0, 500.0)
WIDTHS = (2.0, 1.0, 0.5, 0.25, 1 / 16, 1 / 64)  # δ² / M


def stream_of(spec: str):
    reg = get_registry()
    dataset, options = split_stream_options(spec)
    return get_stream(StreamSpec(dataset=reg.canonical("dataset", dataset), seed=0, **options), reg)


def cv_error(fit_predict, X: np.ndarray, y: np.ndarray, folds: int = 3) -> float:
    idx = np.arange(len(X))
    errors = []
    for f in range(folds):
        test = idx % folds == f
        pred = fit_predict(X[~test], y[~test], X[test])
        errors.append(np.mean(pred != y[test]))
    return float(np.mean(errors))


def svc(C: float, gamma: float):
    def run(X, y, Xt):
        return SVC(C=C, kernel="rbf", gamma=gamma, tol=1e-3).fit(X, y).predict(Xt)

    return run


def ramp(C: float, gamma: float):
    reg = get_registry()

    def run(X, y, Xt):
        algo = reg.create(
            "algorithm", f"ramp_cccp[C={C}]", kernel=reg.create("kernel", f"rbf[gamma={gamma}]")
        )
        algo.fit(np.ascontiguousarray(X), y)
        return algo.predict_many(Xt)

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    args = parser.parse_args()
    out = {}
    for name in args.datasets.split(","):
        s = stream_of(DATASETS[name])
        X, y = np.asarray(s.X[: args.n]), np.asarray(s.y[: args.n])
        M = s.d
        best = {}
        for family, maker in (("hinge", svc), ("ramp", ramp)):
            scores = []
            for C, w in itertools.product(C_GRID, WIDTHS):
                gamma = 1.0 / (2.0 * w * M)
                scores.append((cv_error(maker(C, gamma), X, y), C, -w, gamma))
            err, C, negw, gamma = min(scores)
            best[family] = {
                "C": C,
                "delta2": -negw * M,
                "gamma": float(f"{gamma:.6g}"),
                "cv_error": err,
            }
        out[name] = best
        print(json.dumps({name: best}), flush=True)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
