"""Batch reference learners, trained once on the whole stream: the accuracy an online learner aims at."""

from __future__ import annotations

import numpy as np

from kbench.api import Algorithm, Rows, SparseSupportBuffer, dense, hookimpl, is_sparse, param
from kbench.cython_core._kernels import KernelKind


class LibSVMReference(Algorithm):
    """Batch soft-margin SVM (LIBSVM through scikit-learn's ``SVC``), trained once on the stream.

    An offline reference: the runner fits it on every training example of the stream and
    records its held-out error; reports draw it as a horizontal line beside the online
    curves. RBF, linear and polynomial kernels map onto LIBSVM's own; any other kernel
    is passed as a precomputed Gram matrix (memory grows with n²).

    Parameters
    ----------
    C
        Soft-margin constant, > 0.
    tol
        LIBSVM's stopping tolerance.
    cache_mb
        LIBSVM's kernel cache in MB.
    """

    name = "libsvm"
    paper = "Chang and Lin (2011). LIBSVM: a library for support vector machines. ACM Transactions on Intelligent Systems and Technology 2(3)."
    tasks = frozenset({"binary", "multiclass"})
    offline = True
    test_params = {"C": 1.0}
    sparse_input = True

    C: float = param(1.0, low=0.0, low_open=True)
    tol: float = param(1e-3, low=0.0, low_open=True)
    cache_mb: float = param(500.0, low=1.0)

    def __post_init__(self) -> None:
        self._svc = None
        self._X: np.ndarray | None = None
        self._fit_sparse = False

    def _block(self, X):
        """Rows to predict as the fitted model takes them: CSR rows densified for a model
        fitted on dense rows (a model fitted on CSR rows takes dense ones as they are)."""
        return dense(X) if is_sparse(X) and not self._fit_sparse else X

    def _one(self, x):
        """One row (dense 1-D or one-row CSR) as a one-row block, as :meth:`_block` gives it."""
        return self._block(Rows.one(x).csr if is_sparse(x) else x[None, :])

    def _make(self):
        from sklearn.svm import SVC

        c = self.kernel.compiled()
        common = {
            "C": self.C,
            "tol": self.tol,
            "cache_size": self.cache_mb,
            "random_state": self.seed,
        }
        if c is not None and c[0] == KernelKind.K_RBF:
            return SVC(kernel="rbf", gamma=c[1], **common), False
        if c is not None and c[0] == KernelKind.K_LINEAR:
            return SVC(kernel="linear", **common), False
        if c is not None and c[0] == KernelKind.K_POLY:
            return SVC(kernel="poly", gamma=c[2], coef0=c[3], degree=int(c[4]), **common), False
        return SVC(kernel="precomputed", **common), True

    def fit(self, X, y):
        self._svc, self._precomputed = self._make()
        self._fit_sparse = is_sparse(X)
        if self._precomputed:
            self._X = X.copy() if is_sparse(X) else np.array(X)
            self._svc.fit(self._gram(X), y)
        else:
            self._svc.fit(X, y)

    def _gram(self, X) -> np.ndarray:
        """The kernel matrix between the rows of X and the training rows."""
        if not is_sparse(self._X):
            return self.kernel.matrix(X, self._X)
        if not is_sparse(X):  # one dense row against sparse training rows (decision_one)
            import scipy.sparse as sp

            X = sp.csr_matrix(X)
        store = SparseSupportBuffer(self._X.shape[1], self._X.shape[0])
        for i in range(self._X.shape[0]):
            a, b = self._X.indptr[i], self._X.indptr[i + 1]
            store.add((self._X.indices[a:b], self._X.data[a:b]), 0.0)
        return store.gram(self.kernel, X)

    def predict_many(self, X):
        if self._svc is None:
            return np.full(X.shape[0], 0.0 if self.task == "multiclass" else 1.0)
        X = self._block(X)
        Z = self._gram(X) if self._precomputed else X
        return np.asarray(self._svc.predict(Z), dtype=float)

    def decision_one(self, x):
        if self._svc is None:
            return np.zeros(self.n_classes) if self.task == "multiclass" else 0.0
        X = self._one(x)
        Z = self._gram(X) if self._precomputed else X
        f = self._svc.decision_function(Z)[0]
        if self.task == "multiclass":
            scores = np.full(self.n_classes, -np.inf)
            scores[self._svc.classes_.astype(int)] = f
            return scores
        return float(f)

    def predict_one(self, x):
        return float(self.predict_many(self._one(x))[0])

    def stats(self):
        n_sv = int(self._svc.n_support_.sum()) if self._svc is not None else 0
        # LIBSVM does not report how many kernel values it computed; 0 means "not counted".
        return {"n_support": n_sv, "kernel_evals": 0}


@hookimpl
def kbench_register_algorithms(register):
    """Register the batch references."""
    register(LibSVMReference)
