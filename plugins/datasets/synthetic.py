"""Seeded generators of the papers' synthetic data sets, of any size.

Each generator draws its training stream and an independent test sample from
``numpy.random.default_rng(seed)``, so a seed fixes the data exactly. The sizes are
``n_train`` and ``n_test``: ``n`` is the stream option that cuts a stream short, and a
data-set parameter of that name could never be set.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np

from kbench import hookimpl
from kbench.core.components import Data, Dataset, check_range


def expit(x: np.ndarray) -> np.ndarray:
    """SciPy's logistic function, imported when first used (SciPy's modules load slowly,
    and listing or planning with the data sets of this module never calls it)."""
    from scipy.special import expit as _expit

    return _expit(x)


def _sizes(owner: str, n_train: int, n_test: int) -> None:
    check_range(owner, "n_train", n_train, low=1)
    check_range(owner, "n_test", n_test, low=0)


class _Sampled(Dataset):
    """A generator whose training stream and test sample are independent draws of
    ``_draw(rng, n)`` from one ``default_rng(seed)``, the training stream first."""

    source = "generator"
    test_params: ClassVar[dict] = {"n_train": 300, "n_test": 100}
    n_train: int
    n_test: int

    def _draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _data(self, X, y, X_test, y_test) -> Data:
        """The loaded data (binary ±1 labels unless a generator says otherwise)."""
        return Data(X=X, y=y, X_test=X_test, y_test=y_test, task="binary", n_classes=2)

    def load(self, seed: int) -> Data:
        rng = np.random.default_rng(seed)
        X, y = self._draw(rng, self.n_train)
        Xt, yt = self._draw(rng, self.n_test) if self.n_test else (None, None)
        return self._data(X, y, Xt, yt)


class Checkerboard(Dataset):
    """Checkerboard: x ~ U[0, 1)², y = +1 on the white squares of a k×k board, else −1.

    A non-linear task that a linear learner cannot solve. ``noise`` flips each training
    label with that probability (the ramp-SVM paper's NCheckerboard uses 0.15); the
    held-out test sample stays clean, so its error measures the clean concept.

    Parameters
    ----------
    n_train
        Number of training examples.
    n_test
        Number of clean test examples (0 for none).
    k
        Squares per side.
    noise
        Label-flip rate of the training stream, in [0, 0.5].
    """

    name = "checkerboard"
    task = "binary"
    source = "generator"
    test_params: ClassVar[dict] = {"n_train": 300, "n_test": 100}

    def __init__(
        self, *, n_train: int = 10000, n_test: int = 2000, k: int = 4, noise: float = 0.0
    ) -> None:
        _sizes("checkerboard", n_train, n_test)
        check_range("checkerboard", "k", k, low=1)
        check_range("checkerboard", "noise", noise, low=0.0, high=0.5)
        self.n_train, self.n_test, self.k, self.noise = n_train, n_test, k, noise

    def _draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        X = rng.random((n, 2))
        cells = np.floor(self.k * X).astype(int).sum(axis=1)
        return X, np.where(cells % 2 == 0, 1.0, -1.0)

    def load(self, seed: int) -> Data:
        rng = np.random.default_rng(seed)
        X, y = self._draw(rng, self.n_train)
        flip = rng.random(self.n_train) < self.noise
        y[flip] = -y[flip]
        Xt, yt = self._draw(rng, self.n_test) if self.n_test else (None, None)
        return Data(X=X, y=y, X_test=Xt, y_test=yt, task="binary", n_classes=2)

    def info(self):
        return {"n": self.n_train, "n_test": self.n_test, "d": 2, "classes": 2}


class Twonorm(_Sampled):
    """Breiman's twonorm: class ±1 drawn from N(±a·1, I) in d dimensions, a = 2/√d.

    Parameters
    ----------
    n_train
        Number of training examples.
    n_test
        Number of test examples (0 for none).
    d
        Dimension.
    """

    name = "twonorm"
    task = "binary"

    def __init__(self, *, n_train: int = 5000, n_test: int = 2000, d: int = 20) -> None:
        _sizes("twonorm", n_train, n_test)
        check_range("twonorm", "d", d, low=1)
        self.n_train, self.n_test, self.d = n_train, n_test, d

    def _draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        X = rng.standard_normal((n, self.d)) + (2.0 / np.sqrt(self.d)) * y[:, None]
        return X, y

    def info(self):
        return {"n": self.n_train, "n_test": self.n_test, "d": self.d, "classes": 2}


class Ringnorm(_Sampled):
    """Breiman's ringnorm: class +1 ~ N(0, 4I), class −1 ~ N(a·1, I) in d dimensions, a = 1/√d.

    Equal priors. The optimal boundary is a quadric, so linear learners fail; an RBF
    SVM with 2000 examples reaches about 98 % accuracy at d = 20.

    Parameters
    ----------
    n_train
        Number of training examples.
    n_test
        Number of test examples (0 for none).
    d
        Dimension.
    """

    name = "ringnorm"
    task = "binary"

    def __init__(self, *, n_train: int = 5000, n_test: int = 2000, d: int = 20) -> None:
        _sizes("ringnorm", n_train, n_test)
        check_range("ringnorm", "d", d, low=1)
        self.n_train, self.n_test, self.d = n_train, n_test, d

    def _draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        Z = rng.standard_normal((n, self.d))
        X = np.where(y[:, None] > 0, 2.0 * Z, Z + 1.0 / np.sqrt(self.d))
        return X, y

    def info(self):
        return {"n": self.n_train, "n_test": self.n_test, "d": self.d, "classes": 2}


class Moons(_Sampled):
    """Two interleaved half-moons ("banana-shaped"), the usual synthetic analogue of Banana.

    Class −1 lies on the upper arc (cos t, sin t), class +1 on the lower arc
    (1 − cos t, ½ − sin t), t ~ U[0, π], plus isotropic Gaussian noise; the labels are
    drawn with equal probability, one example at a time (scikit-learn's ``make_moons``
    recipe, as an i.i.d. stream).

    Parameters
    ----------
    n_train
        Number of training examples.
    n_test
        Number of test examples (0 for none).
    noise
        Standard deviation of the Gaussian noise added to both coordinates.
    """

    name = "moons"
    task = "binary"

    def __init__(self, *, n_train: int = 5000, n_test: int = 2000, noise: float = 0.2) -> None:
        _sizes("moons", n_train, n_test)
        check_range("moons", "noise", noise, low=0.0)
        self.n_train, self.n_test, self.noise = n_train, n_test, noise

    def _draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        t = np.pi * rng.random(n)
        upper = np.column_stack([np.cos(t), np.sin(t)])
        lower = np.column_stack([1.0 - np.cos(t), 0.5 - np.sin(t)])
        X = np.where(y[:, None] > 0, lower, upper) + self.noise * rng.standard_normal((n, 2))
        return X, y

    def info(self):
        return {"n": self.n_train, "n_test": self.n_test, "d": 2, "classes": 2}


class Haykin(_Sampled):
    """Haykin's two overlapping Gaussians ("Gauss" of the ramp-SVM paper).

    Class +1 ~ N((0, 0), I), class −1 ~ N((separation, 0), var2·I), equal priors. With
    the defaults (separation 2, variance 4; Haykin, *Neural Networks*) the Bayes-optimal
    accuracy is 81.51 %: :meth:`bayes_error` computes it exactly (the optimal boundary
    is a circle; the error is a non-central χ² probability).

    Parameters
    ----------
    n_train
        Number of training examples.
    n_test
        Number of test examples (0 for none).
    separation
        Distance between the class means.
    var2
        Variance of class −1 per coordinate (class +1 has variance 1).
    """

    name = "haykin"
    task = "binary"

    def __init__(
        self,
        *,
        n_train: int = 10000,
        n_test: int = 10000,
        separation: float = 2.0,
        var2: float = 4.0,
    ) -> None:
        _sizes("haykin", n_train, n_test)
        check_range("haykin", "separation", separation, low=0.0)
        check_range("haykin", "var2", var2, low=0.0, low_open=True)
        self.n_train, self.n_test, self.separation, self.var2 = n_train, n_test, separation, var2

    def _draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        Z = rng.standard_normal((n, 2))
        X = np.where(y[:, None] > 0, Z, np.sqrt(self.var2) * Z + np.array([self.separation, 0.0]))
        return X, y

    def info(self):
        return {"n": self.n_train, "n_test": self.n_test, "d": 2, "classes": 2}

    def bayes_error(self) -> float:
        """The error rate of the Bayes-optimal classifier (exact, no sampling)."""
        a, b, s = 1.0, self.var2, self.separation
        if a == b:
            from scipy.stats import norm  # here: scipy.stats takes 0.3 s to import

            return float(norm.cdf(-s / (2.0 * np.sqrt(a))))
        if a > b:  # relabel so that the class at the origin has the smaller variance
            a, b = b, a
        m = np.array([s, 0.0])
        # p_a > p_b exactly inside the disk |x − c|² < r² (c, r² from equating the log densities)
        c = a * m / (a - b)
        r2 = c @ c - (a * (m @ m) + 2.0 * a * b * np.log(b / a)) / (a - b)
        from scipy.stats import ncx2

        inside_a = ncx2.cdf(r2 / a, 2, (c @ c) / a)
        inside_b = ncx2.cdf(r2 / b, 2, ((m - c) @ (m - c)) / b)
        return float(0.5 * (1.0 - inside_a) + 0.5 * inside_b)

    def bayes_labels(self, X: np.ndarray) -> np.ndarray:
        """The Bayes-optimal labels (±1) of the rows of X."""
        X = np.asarray(X, dtype=float)
        m = np.array([self.separation, 0.0])
        log1 = -0.5 * (X**2).sum(axis=1)
        log2 = -0.5 * ((X - m) ** 2).sum(axis=1) / self.var2 - np.log(self.var2)
        return np.where(log1 >= log2, 1.0, -1.0)


class Multidist(Dataset):
    """POLK's "multidist" Gaussian mixture: C classes of K modes each, in the plane.

    The recipe of Koppel et al. (POLK, §5.2), implemented as written: class centres
    θ_c = radius·(cos 2πc/C, sin 2πc/C); per class, K mode means μ_cj ~ N(θ_c, mean_var·I);
    a sample draws y uniformly, a mode j uniformly, and x ~ N(μ_yj, comp_var·I). The
    means are the data set's realisation: they come from ``means_seed`` when given
    (then every stream seed draws new samples of the same mixture), else from the seed.

    As written, the Bayes error varies a lot between realisations (15–46 %, median
    28 %); the paper's ~4 % is not reachable. ``std=true`` reads comp_var as a standard
    deviation (median Bayes error ≈ 10 %), and ``radius=3`` gives ≈ 2 %: both are
    deviations from the text. Report errors as excess over :meth:`bayes_error`.

    Parameters
    ----------
    n_train
        Number of training examples (the paper: 5000).
    n_test
        Number of test examples (the paper: 2500).
    n_classes
        Number of classes C.
    modes
        Mixture components per class K.
    radius
        Radius of the circle of class centres.
    mean_var
        Variance of the mode means around their class centre.
    comp_var
        Variance of each component (a standard deviation when ``std``).
    std
        Read ``comp_var`` as a standard deviation.
    means_seed
        Seed of the mode means; None draws them from the stream seed.
    """

    name = "multidist"
    task = "multiclass"
    source = "generator"
    test_params: ClassVar[dict] = {"n_train": 300, "n_test": 100}

    def __init__(
        self,
        *,
        n_train: int = 5000,
        n_test: int = 2500,
        n_classes: int = 5,
        modes: int = 3,
        radius: float = 1.0,
        mean_var: float = 1.0,
        comp_var: float = 0.2,
        std: bool = False,
        means_seed: int | None = None,
    ) -> None:
        _sizes("multidist", n_train, n_test)
        check_range("multidist", "n_classes", n_classes, low=2)
        check_range("multidist", "modes", modes, low=1)
        check_range("multidist", "radius", radius, low=0.0)
        check_range("multidist", "mean_var", mean_var, low=0.0)
        check_range("multidist", "comp_var", comp_var, low=0.0, low_open=True)
        self.n_train, self.n_test, self.n_classes, self.modes = n_train, n_test, n_classes, modes
        self.radius, self.mean_var, self.comp_var, self.std = radius, mean_var, comp_var, std
        self.means_seed = means_seed

    @property
    def sigma(self) -> float:
        """Standard deviation of each mixture component."""
        return self.comp_var if self.std else float(np.sqrt(self.comp_var))

    def _means(self, rng: np.random.Generator) -> np.ndarray:
        angle = 2.0 * np.pi * np.arange(self.n_classes) / self.n_classes
        centres = self.radius * np.column_stack([np.cos(angle), np.sin(angle)])
        noise = rng.standard_normal((self.n_classes, self.modes, 2)) * np.sqrt(self.mean_var)
        return centres[:, None, :] + noise

    def means(self, seed: int) -> np.ndarray:
        """The mode means of the realisation, shape (C, K, 2)."""
        rng = np.random.default_rng(seed if self.means_seed is None else self.means_seed)
        return self._means(rng)

    def _draw(
        self, rng: np.random.Generator, means: np.ndarray, n: int
    ) -> tuple[np.ndarray, np.ndarray]:
        y = rng.integers(0, self.n_classes, n)
        j = rng.integers(0, self.modes, n)
        X = means[y, j] + self.sigma * rng.standard_normal((n, 2))
        return X, y.astype(float)

    def load(self, seed: int) -> Data:
        rng = np.random.default_rng(seed)
        means = self._means(rng) if self.means_seed is None else self.means(seed)
        X, y = self._draw(rng, means, self.n_train)
        Xt, yt = self._draw(rng, means, self.n_test) if self.n_test else (None, None)
        return Data(
            X=X,
            y=y,
            X_test=Xt,
            y_test=yt,
            task="multiclass",
            n_classes=self.n_classes,
            class_names=tuple(str(c) for c in range(self.n_classes)),
        )

    def info(self):
        return {"n": self.n_train, "n_test": self.n_test, "d": 2, "classes": self.n_classes}

    def _class_densities(self, X: np.ndarray, means: np.ndarray) -> np.ndarray:
        s2 = self.sigma**2
        d2 = ((X[:, None, None, :] - means[None]) ** 2).sum(axis=-1)  # (n, C, K)
        return np.exp(-d2 / (2.0 * s2)).mean(axis=2) / (2.0 * np.pi * s2)

    def bayes_labels(self, X: np.ndarray, seed: int) -> np.ndarray:
        """The Bayes-optimal class of each row of X under the realisation of ``seed``."""
        means = self.means(seed)
        X = np.asarray(X, dtype=float)
        out = np.empty(len(X))
        for i in range(0, len(X), 65536):
            out[i : i + 65536] = self._class_densities(X[i : i + 65536], means).argmax(axis=1)
        return out

    def bayes_error(self, seed: int) -> float:
        """The Bayes error of the realisation of ``seed``: 1 − ∫ max_c p(c) p(x|c) dx.

        Computed by the midpoint rule on a grid of spacing σ/25 over the mixture's support
        (means ± 8σ); accurate to about 1e-4.
        """
        means = self.means(seed).reshape(-1, 2)
        h = self.sigma / 25.0
        lo, hi = means.min(axis=0) - 8 * self.sigma, means.max(axis=0) + 8 * self.sigma
        gx = np.arange(lo[0] + h / 2, hi[0], h)
        gy = np.arange(lo[1] + h / 2, hi[1], h)
        full = self.means(seed)
        total = 0.0
        for i in range(0, len(gx), 64):
            G = np.stack(np.meshgrid(gx[i : i + 64], gy, indexing="ij"), axis=-1).reshape(-1, 2)
            total += self._class_densities(G, full).max(axis=1).sum()
        return float(1.0 - total * h * h / self.n_classes)


class _PeriodicTarget(Dataset):
    """Shared part of the periodic-β sets: the target f* on [0, 1)."""

    beta: float
    eps: float
    terms: int
    amplitude: float

    def _check(self, owner: str) -> None:
        check_range(owner, "beta", self.beta, low=0.0, low_open=True)
        check_range(owner, "eps", self.eps, low=0.0)
        check_range(owner, "terms", self.terms, low=1)

    def target(self, x: np.ndarray) -> np.ndarray:
        """f*(x) = amplitude · Σ_{k=1}^{terms} k^(−2β−1/2−ε) cos(2πkx)."""
        x = np.asarray(x, dtype=float).ravel()
        k = np.arange(1, self.terms + 1, dtype=float)
        coef = self.amplitude * k ** (-2.0 * self.beta - 0.5 - self.eps)
        out = np.empty(len(x))
        step = max(1, 2**22 // self.terms)  # bound the temporary cosine block to ~32 MB
        for i in range(0, len(x), step):
            out[i : i + step] = np.cos(2.0 * np.pi * np.outer(x[i : i + step], k)) @ coef
        return out


class PeriodicBeta(_PeriodicTarget):
    """Periodic-β classification on [0, 1): a target of known smoothness β (PiSTOL's check).

    With the periodic kernel K(x, x') ∝ 1 + Σ_k k^(−2) cos(2πk(x − x')), the target
    f*(x) = Σ_k k^(−2β−1/2−ε) cos(2πkx) lies in L_K^β(L²), so the excess-risk rate of a
    learner can be compared with −2β/(2β+1) (Orabona, PiSTOL, §7 C11–C12). x ~ U[0, 1)
    (one feature). ``labels=logistic`` draws P(y = +1 | x) = σ(f*(x)), for which f* is
    the logistic-loss minimiser; ``labels=sign`` gives the noiseless y = sign f*(x),
    dropping points with |f*(x)| < margin to make a separable task with a margin.

    Parameters
    ----------
    n_train
        Number of training examples.
    n_test
        Number of test examples (0 for none).
    beta
        Smoothness of the target, 0 < β (the theory covers β ≤ 1/2).
    eps
        The small ε that keeps the series in L_K^β.
    terms
        Number of cosine terms of the (truncated) series.
    amplitude
        Factor on f*; larger values make the logistic labels less noisy.
    labels
        ``logistic`` (noisy) or ``sign`` (noiseless).
    margin
        With ``labels=sign``: keep only points with |f*(x)| ≥ margin.
    """

    name = "periodic_beta"
    task = "binary"
    source = "generator"
    test_params: ClassVar[dict] = {"n_train": 300, "n_test": 100}

    def __init__(
        self,
        *,
        n_train: int = 10000,
        n_test: int = 2000,
        beta: float = 0.5,
        eps: float = 0.01,
        terms: int = 1000,
        amplitude: float = 1.0,
        labels: Literal["logistic", "sign"] = "logistic",
        margin: float = 0.0,
    ) -> None:
        _sizes("periodic_beta", n_train, n_test)
        self.n_train, self.n_test, self.beta, self.eps, self.terms = (
            n_train,
            n_test,
            beta,
            eps,
            terms,
        )
        self.amplitude, self.labels, self.margin = amplitude, labels, margin
        self._check("periodic_beta")
        check_range("periodic_beta", "margin", margin, low=0.0)
        if labels == "sign" and margin > 0:
            kept = float((np.abs(self.target(np.arange(4096) / 4096.0)) >= margin).mean())
            if kept < 0.01:
                raise ValueError(
                    f"periodic_beta: margin={margin} keeps {kept:.1%} of [0, 1); lower it"
                )

    def _draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        if self.labels == "logistic":
            x = rng.random(n)
            f = self.target(x)
            y = np.where(rng.random(n) < expit(f), 1.0, -1.0)
            return x[:, None], y
        xs, fs, have = [], [], 0
        while have < n:  # rejection sampling of the margin band
            x = rng.random(max(n - have, 64) * 2)
            f = self.target(x)
            keep = np.abs(f) >= self.margin
            xs.append(x[keep])
            fs.append(f[keep])
            have += int(keep.sum())
        x, f = np.concatenate(xs)[:n], np.concatenate(fs)[:n]
        return x[:, None], np.where(f >= 0, 1.0, -1.0)

    def load(self, seed: int) -> Data:
        rng = np.random.default_rng(seed)
        X, y = self._draw(rng, self.n_train)
        Xt, yt = self._draw(rng, self.n_test) if self.n_test else (None, None)
        return Data(X=X, y=y, X_test=Xt, y_test=yt, task="binary", n_classes=2)

    def info(self):
        return {"n": self.n_train, "n_test": self.n_test, "d": 1, "classes": 2}

    def bayes_error(self) -> float:
        """The Bayes error: ∫ min(σ(f*), 1 − σ(f*)) dx for logistic labels, 0 for sign labels."""
        if self.labels == "sign":
            return 0.0
        x = (np.arange(1 << 16) + 0.5) / (1 << 16)
        p = expit(self.target(x))
        return float(np.minimum(p, 1.0 - p).mean())

    def bayes_logistic_risk(self) -> float:
        """E[log(1 + exp(−y f*(x)))]: the smallest expected logistic loss (logistic labels)."""
        x = (np.arange(1 << 16) + 0.5) / (1 << 16)
        f = self.target(x)
        p = expit(f)
        return float((p * np.logaddexp(0.0, -f) + (1.0 - p) * np.logaddexp(0.0, f)).mean())


class PeriodicBetaRegression(_PeriodicTarget):
    """Periodic-β regression on [0, 1): y = f*(x) + noise·N(0, 1), f* of known smoothness β.

    The target is that of ``periodic_beta``; with the square loss f* is the regression
    function, so the excess risk is the mean squared distance to :meth:`target`.

    Parameters
    ----------
    n_train
        Number of training examples.
    n_test
        Number of test examples (0 for none).
    beta
        Smoothness of the target, 0 < β.
    eps
        The small ε that keeps the series in L_K^β.
    terms
        Number of cosine terms of the (truncated) series.
    amplitude
        Factor on f*.
    noise
        Standard deviation of the Gaussian label noise (0 for none).
    """

    name = "periodic_beta_regression"
    task = "regression"
    source = "generator"
    test_params: ClassVar[dict] = {"n_train": 300, "n_test": 100}

    def __init__(
        self,
        *,
        n_train: int = 10000,
        n_test: int = 2000,
        beta: float = 0.5,
        eps: float = 0.01,
        terms: int = 1000,
        amplitude: float = 1.0,
        noise: float = 0.1,
    ) -> None:
        _sizes("periodic_beta_regression", n_train, n_test)
        self.n_train, self.n_test, self.beta, self.eps, self.terms = (
            n_train,
            n_test,
            beta,
            eps,
            terms,
        )
        self.amplitude, self.noise = amplitude, noise
        self._check("periodic_beta_regression")
        check_range("periodic_beta_regression", "noise", noise, low=0.0)

    def _draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        x = rng.random(n)
        return x[:, None], self.target(x) + self.noise * rng.standard_normal(n)

    def load(self, seed: int) -> Data:
        rng = np.random.default_rng(seed)
        X, y = self._draw(rng, self.n_train)
        Xt, yt = self._draw(rng, self.n_test) if self.n_test else (None, None)
        return Data(X=X, y=y, X_test=Xt, y_test=yt, task="regression", n_classes=0)

    def info(self):
        return {"n": self.n_train, "n_test": self.n_test, "d": 1}


class Drift(Dataset):
    """A drifting stream: a linear concept that changes abruptly at given positions.

    x ~ N(0, I_d). Concept k (after the k-th change point) labels y = sign(w_k·x), with
    w_k the unit normal rotated by k·angle degrees in the plane of the first two axes
    (``kind=rotate``), or the first concept's labels negated on odd k (``kind=swap``).
    ``noise`` flips each training label with that probability. The test sample comes
    from the final concept, clean.

    The order of a drifting stream is its definition: the stream option
    ``order=shuffle`` keeps it (this class is ``time_ordered``); ``n`` cuts it short.

    Parameters
    ----------
    n_train
        Length of the stream.
    n_test
        Number of test examples of the final concept (0 for none).
    d
        Dimension, at least 2.
    drift_at
        Change points separated by ``|``: example indices (``2500|5000``) or fractions of
        the stream (``0.25|0.5``), strictly increasing, inside the stream.
    kind
        ``rotate`` (the boundary turns) or ``swap`` (the labels swap).
    angle
        Rotation per change, in degrees (``kind=rotate``).
    noise
        Label-flip rate of the training stream, in [0, 0.5].
    """

    name = "drift"
    task = "binary"
    source = "generator"
    time_ordered: ClassVar[bool] = True
    test_params: ClassVar[dict] = {"n_train": 300, "n_test": 100}

    def __init__(
        self,
        *,
        n_train: int = 10000,
        n_test: int = 1000,
        d: int = 2,
        drift_at: str = "0.5",
        kind: Literal["rotate", "swap"] = "rotate",
        angle: float = 90.0,
        noise: float = 0.0,
    ) -> None:
        _sizes("drift", n_train, n_test)
        check_range("drift", "d", d, low=2)
        check_range("drift", "noise", noise, low=0.0, high=0.5)
        self.n_train, self.n_test, self.d, self.drift_at = n_train, n_test, d, drift_at
        self.kind, self.angle, self.noise = kind, angle, noise
        self.change_points()  # validate now, so a bad spec fails before anything runs

    def change_points(self) -> list[int]:
        """The change points as example indices."""
        points: list[int] = []
        for tok in str(self.drift_at).replace(";", "|").split("|"):
            tok = tok.strip()
            if not tok:
                continue
            try:
                v = float(tok)
            except ValueError:
                raise ValueError(f"drift: drift_at entry {tok!r} is not a number") from None
            if not np.isfinite(v):
                raise ValueError(f"drift: drift_at entry {tok!r} is not finite")
            i = round(v * self.n_train) if 0.0 < v < 1.0 else int(v)
            if v != int(v) and not 0.0 < v < 1.0:
                raise ValueError(
                    f"drift: drift_at entry {tok!r} must be an index or a fraction in (0, 1)"
                )
            if not 0 < i < self.n_train:
                raise ValueError(
                    f"drift: change point {tok!r} is outside the stream (1..{self.n_train - 1})"
                )
            if points and i <= points[-1]:
                raise ValueError(f"drift: change points must increase ({i} after {points[-1]})")
            points.append(i)
        return points

    def concepts(self) -> np.ndarray:
        """The concept index of every training example."""
        k = np.zeros(self.n_train, dtype=np.intp)
        for p in self.change_points():
            k[p:] += 1
        return k

    def _labels(self, X: np.ndarray, k: np.ndarray) -> np.ndarray:
        if self.kind == "rotate":
            theta = np.deg2rad(self.angle) * k
            score = np.cos(theta) * X[:, 0] + np.sin(theta) * X[:, 1]
        else:
            score = np.where(k % 2 == 0, 1.0, -1.0) * X[:, 0]
        return np.where(score >= 0, 1.0, -1.0)

    def load(self, seed: int) -> Data:
        rng = np.random.default_rng(seed)
        k = self.concepts()
        X = rng.standard_normal((self.n_train, self.d))
        y = self._labels(X, k)
        flip = rng.random(self.n_train) < self.noise
        y[flip] = -y[flip]
        Xt = yt = None
        if self.n_test:
            Xt = rng.standard_normal((self.n_test, self.d))
            yt = self._labels(Xt, np.full(self.n_test, k[-1]))
        return Data(X=X, y=y, X_test=Xt, y_test=yt, task="binary", n_classes=2)

    def info(self):
        return {"n": self.n_train, "n_test": self.n_test, "d": self.d, "classes": 2}


class Waveform(_Sampled):
    """Breiman's waveform generator (CART, 1984): three classes of noisy wave mixtures.

    Three triangular base waves over 21 attributes peak at attributes 7, 11 and 15 (height
    6, half-width 6). Class 0 mixes waves 1 and 2, class 1 waves 1 and 3, class 2 waves 2
    and 3: x = u·h_a + (1 − u)·h_b + ε with u ~ U(0, 1) per example and ε ~ N(0, 1) per
    attribute; classes are equally likely. This is the data set's definition (the UCI
    files are draws of it), so any number of examples can be generated. ``has_noise``
    appends the 19 pure-noise N(0, 1) attributes of the 40-attribute version. The
    Bayes error of the three-class task is about 14 %. The ramp-SVM paper's binary version
    ("class 1 against classes 2 and 3") is taken as class 1, the mix of the outer waves,
    against the rest (stream option ``positive=0|2``): an RBF SVM then keeps about as many
    support vectors as the paper reports, which the other two splits do not.

    Parameters
    ----------
    n_train
        Number of training examples.
    n_test
        Number of test examples (0 for none).
    has_noise
        Append 19 attributes of pure noise (40 in all).
    """

    name = "waveform"
    task = "multiclass"

    #: The three base waves h_1, h_2, h_3 over the 21 attributes.
    WAVES = np.maximum(6.0 - np.abs(np.arange(1, 22)[None, :] - np.array([[7], [11], [15]])), 0.0)
    #: The pair of waves each class mixes.
    PAIRS = np.array([[0, 1], [0, 2], [1, 2]])

    def __init__(
        self, *, n_train: int = 10000, n_test: int = 10000, has_noise: bool = False
    ) -> None:
        _sizes("waveform", n_train, n_test)
        self.n_train, self.n_test, self.has_noise = n_train, n_test, has_noise

    @property
    def d(self) -> int:
        """Number of attributes."""
        return 40 if self.has_noise else 21

    def _draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        y = rng.integers(0, 3, n)
        u = rng.random(n)[:, None]
        a, b = self.WAVES[self.PAIRS[y, 0]], self.WAVES[self.PAIRS[y, 1]]
        X = u * a + (1.0 - u) * b + rng.standard_normal((n, 21))
        if self.has_noise:
            X = np.hstack([X, rng.standard_normal((n, 19))])
        return X, y.astype(float)

    def _data(self, X, y, X_test, y_test) -> Data:
        return Data(
            X=X,
            y=y,
            X_test=X_test,
            y_test=y_test,
            task="multiclass",
            n_classes=3,
            class_names=("0", "1", "2"),
        )

    def info(self):
        return {"n": self.n_train, "n_test": self.n_test, "d": self.d, "classes": 3}


@hookimpl
def kbench_register_datasets(register):
    """Register the generators."""
    for cls in (
        Checkerboard,
        Twonorm,
        Ringnorm,
        Moons,
        Haykin,
        Multidist,
        PeriodicBeta,
        PeriodicBetaRegression,
        Drift,
        Waveform,
    ):
        register(cls)
