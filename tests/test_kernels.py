"""Built-in kernels against direct NumPy formulas; row, matrix and diag agree; rbf takes gamma
or sigma, not both (the range checks of every built-in are tested in test_components)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import make_kernel
from kbench.core.registry import get_registry
from kbench.learners.support_buffer import SupportBuffer


def _poly(A, B, degree, scale=1.0, offset=1.0):
    return (scale * A @ B.T + offset) ** degree


def _sqdist(A, B):
    return ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2)


def _l1dist(A, B):
    return np.abs(A[:, None, :] - B[None, :, :]).sum(axis=2)


def _cosine(base):
    def k(A, B):
        K = base(A, B)
        da = np.array([base(a[None], a[None])[0, 0] for a in A])
        db = np.array([base(b[None], b[None])[0, 0] for b in B])
        return K / np.sqrt(np.outer(da, db))

    return k


REFERENCE = {
    "linear": lambda A, B: A @ B.T,
    "poly": lambda A, B: _poly(A, B, 3),
    "poly[degree=2]": lambda A, B: _poly(A, B, 2),
    "poly[degree=5,scale=0.5,offset=2]": lambda A, B: _poly(A, B, 5, 0.5, 2.0),
    "poly[degree=1,offset=0]": lambda A, B: A @ B.T,
    "rbf": lambda A, B: np.exp(-_sqdist(A, B)),
    "rbf[gamma=0.7]": lambda A, B: np.exp(-0.7 * _sqdist(A, B)),
    "rbf[sigma=2]": lambda A, B: np.exp(-_sqdist(A, B) / (2 * 2.0**2)),
    "laplacian": lambda A, B: np.exp(-_l1dist(A, B)),
    "laplacian[gamma=0.3]": lambda A, B: np.exp(-0.3 * _l1dist(A, B)),
    "cosine": _cosine(lambda A, B: A @ B.T),
    "cosine[base=poly[degree=9]]": _cosine(lambda A, B: _poly(A, B, 9)),
    "cosine[base=poly[degree=4,offset=0.5]]": _cosine(lambda A, B: _poly(A, B, 4, 1.0, 0.5)),
    "cosine[base=rbf[gamma=0.5]]": lambda A, B: np.exp(-0.5 * _sqdist(A, B)),
}
SPECS = list(REFERENCE)


def _data(n=9, m=7, d=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(scale=0.6, size=(n, d)), rng.normal(scale=0.6, size=(m, d))


def test_every_builtin_kernel_is_registered_and_declares_its_diagonal():
    reg = get_registry()
    assert {"linear", "poly", "rbf", "laplacian", "cosine"} <= set(reg.names("kernel"))
    expected = {"linear": False, "poly": False, "rbf": True, "laplacian": True, "cosine": True}
    for name, constant in expected.items():
        cls = reg.entry("kernel", name).cls
        assert "constant_diagonal" in cls.__dict__, f"{name} must declare constant_diagonal itself"
        assert cls.constant_diagonal is constant


@pytest.mark.parametrize("spec", SPECS)
def test_matrix_matches_numpy_formula(spec):
    k = make_kernel(spec)
    A, B = _data()
    assert np.allclose(k.matrix(A, B), REFERENCE[spec](A, B), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("spec", SPECS)
def test_row_and_diag_agree_with_matrix(spec):
    k = make_kernel(spec)
    A, B = _data()
    K = k.matrix(A, B)
    for j in range(len(B)):
        assert np.allclose(k.row(A, B[j]), K[:, j], rtol=1e-12, atol=1e-13)
    G = k.matrix(A, A)
    d = k.diag(A)
    assert d.shape == (len(A),)
    assert np.allclose(d, np.diag(G), rtol=1e-12, atol=1e-13)
    assert np.allclose(d, REFERENCE[spec](A, A).diagonal(), rtol=1e-12)
    for i in range(len(A)):
        assert np.allclose(k.row(A, A[i]), G[i], rtol=1e-12, atol=1e-13)
    if k.constant_diagonal:
        assert np.allclose(d, 1.0)
    else:
        assert np.ptp(d) > 1e-3


@pytest.mark.parametrize("spec", SPECS)
def test_row_with_caches_and_output_buffer(spec):
    k = make_kernel(spec)
    A, B = _data()
    x = B[0]
    expected = REFERENCE[spec](A, x[None])[:, 0]
    sq = (A * A).sum(axis=1)
    out = np.full(len(A) + 4, -7.0)
    got = k.row(A, x, out=out, sq=sq, xsq=float(x @ x))
    assert got.shape == (len(A),)
    assert np.allclose(got, expected, rtol=1e-12, atol=1e-13)
    assert np.allclose(out[: len(A)], expected, rtol=1e-12, atol=1e-13)
    assert np.all(out[len(A) :] == -7.0), "row must not write past the rows of S"
    assert k.row(A[:0], x).shape == (0,)


@pytest.mark.parametrize("spec", SPECS)
def test_gram_matrix_symmetric_psd(spec):
    k = make_kernel(spec)
    rng = np.random.default_rng(11)
    A = rng.normal(size=(25, 3))
    A[7] = A[3]  # a repeated point makes the Gram matrix singular: eigenvalues near 0
    G = k.matrix(A, A)
    assert np.array_equal(G, G.T) or np.allclose(G, G.T, rtol=1e-14, atol=1e-14)
    assert np.linalg.eigvalsh((G + G.T) / 2).min() > -1e-9 * np.abs(G).max()


def test_rbf_sigma_and_gamma_are_one_convention():
    A, B = _data()
    for sigma in (0.3, 1.0, 4.0):
        by_sigma = make_kernel(f"rbf[sigma={sigma}]")
        by_gamma = make_kernel(f"rbf[gamma={1.0 / (2 * sigma**2)!r}]")
        assert by_sigma.effective_gamma == pytest.approx(1.0 / (2 * sigma**2))
        assert np.allclose(by_sigma.matrix(A, B), by_gamma.matrix(A, B), rtol=1e-14)
    # exp(−γ‖x−x'‖²): at squared distance 1 with γ = 2 the value is e⁻².
    k = make_kernel("rbf[gamma=2]")
    assert k.row(np.array([[1.0, 0.0]]), np.array([0.0, 0.0]))[0] == pytest.approx(np.exp(-2.0))
    assert make_kernel("rbf").effective_gamma == 1.0
    doc = type(k).__doc__
    assert "exp(−gamma · ‖x − x'‖²)" in doc and "gamma = 1 / (2 sigma²)" in doc


def test_cosine_normalises_a_high_degree_polynomial():
    k = make_kernel("cosine[base=poly[degree=9]]")
    assert k.base == "poly[degree=9]"
    assert k.spec() == "cosine[base=poly[degree=9]]"
    assert k.base_kernel.spec() == "poly[degree=9,offset=1.0,scale=1.0]"
    rng = np.random.default_rng(5)
    A = rng.normal(scale=3.0, size=(10, 4))  # raw degree-9 values span many decades
    raw = make_kernel("poly[degree=9]").matrix(A, A)
    assert raw.max() / np.abs(raw).min() > 1e6
    G = k.matrix(A, A)
    assert np.all(np.abs(G) <= 1.0) and np.allclose(np.diag(G), 1.0)
    assert np.allclose(G, raw / np.sqrt(np.outer(np.diag(raw), np.diag(raw))), rtol=1e-12)


def test_cosine_of_linear_is_cosine_similarity_and_handles_zero_vectors():
    k = make_kernel("cosine")
    A = np.array([[3.0, 4.0], [0.0, 0.0], [-6.0, -8.0], [0.0, 2.0], [0.0, 0.0]])
    G = k.matrix(A, A)
    assert G[0, 2] == pytest.approx(-1.0) and G[0, 3] == pytest.approx(0.8)
    # zero vectors: unit diagonal, one shared direction orthogonal to the rest
    assert np.array_equal(G[1], [0.0, 1.0, 0.0, 0.0, 1.0])
    assert np.allclose(np.diag(G), 1.0) and np.allclose(k.diag(A), 1.0)
    assert np.linalg.eigvalsh(G).min() > -1e-12
    assert np.array_equal(k.row(A, np.zeros(2)), G[1])
    assert np.allclose(k.row(A, A[0]), G[0])


def test_cosine_accepts_a_kernel_instance():
    base = make_kernel("poly[degree=2]")
    from kbench.plugins.kernels.normalised import Cosine

    k = Cosine(base=base)
    assert k.base == "poly[degree=2,offset=1.0,scale=1.0]"
    A, B = _data()
    assert np.allclose(k.matrix(A, B), make_kernel("cosine[base=poly[degree=2]]").matrix(A, B))


def test_cosine_works_through_the_support_buffer():
    """The learners' buffer falls back to Kernel.row / matrix for a kernel that is not compiled."""
    k = make_kernel("cosine[base=poly[degree=3]]")
    assert k.compiled() is None
    A, B = _data(n=6, m=4, d=3)
    buf = SupportBuffer(3, 8)
    alpha = np.arange(1.0, 7.0)
    for a, c in zip(A, alpha, strict=True):
        buf.add(a, c)
    expected = _cosine(lambda P, Q: _poly(P, Q, 3))(B, A) @ alpha
    assert np.allclose([buf.scores(buf.row(k, b))[0] for b in B], expected, rtol=1e-12)
    assert np.allclose(buf.decision_many(k, B)[:, 0], expected, rtol=1e-12)


def test_rbf_with_gamma_and_sigma_is_rejected():
    from kbench.plugins.kernels.radial import RBF

    with pytest.raises(ValueError, match="gamma or sigma, not both"):
        RBF(gamma=1.0, sigma=1.0)
    with pytest.raises(ValueError, match="gamma or sigma, not both"):
        make_kernel("rbf[gamma=0.5,sigma=2]")


def test_poly_degree_must_be_an_integer():
    from kbench.plugins.kernels.dot_product import Polynomial

    with pytest.raises(ValueError, match="degree must be an integer"):
        Polynomial(degree=2.5)
    with pytest.raises(ValueError, match="degree"):
        make_kernel("poly[degree=2.5]")
    assert Polynomial(degree=2.0).compiled()[4] == 2.0


def test_cosine_with_unknown_base_names_the_parameter():
    with pytest.raises(ValueError, match="cosine: base 'nope'"):
        make_kernel("cosine[base=nope]")


def test_shape_mismatches_are_rejected():
    for spec in ("rbf", "cosine"):
        k = make_kernel(spec)
        A, _ = _data()
        with pytest.raises(ValueError):
            k.row(A, np.zeros(A.shape[1] + 1))
        with pytest.raises(ValueError):
            k.matrix(A, np.zeros((2, A.shape[1] + 1)))
