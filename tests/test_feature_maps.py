"""FOGD's vectorised cos/sin and phases, NOGD's rank-k map, and their bad-input errors.

The learners' reference tests (NumPy re-implementations) are in test_budget.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kbench.core.registry import get_registry
from kbench.cython_core import _feature_maps

#: The error bound stated in _sincos_simd.h (absolute, on cos and sin of the phase).
SINCOS_BOUND = 4e-16


@pytest.fixture(params=[0, 1, 2], ids=["baseline", "avx2", "avx512"])
def level(request):
    """Each instruction-set path of the vector loops (capped at what the CPU has)."""
    best = _feature_maps.simd_level(99)
    yield _feature_maps.simd_level(request.param)
    _feature_maps.simd_level(best)


def make(spec: str, **context):
    reg = get_registry()
    context.setdefault("kernel", reg.create("kernel", "rbf[gamma=0.5]"))
    context.setdefault("loss", reg.create("loss", "hinge"))
    return reg.create("algorithm", spec, **context)


def _sincos(u: np.ndarray, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    c, s = np.empty_like(u), np.empty_like(u)
    _feature_maps.sincos_block(np.ascontiguousarray(u), scale, c, s)
    return c, s


def _exact(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin from extended precision where the platform has it, else libm.

    libm's cos/sin are within 1 ulp; the comparison below allows the stated bound plus
    that ulp, so it holds with either reference.
    """
    ld = np.longdouble(u)
    return np.cos(ld).astype(np.float64), np.sin(ld).astype(np.float64)


@pytest.mark.parametrize("spread", [1e-3, 0.5, 3.0, 50.0, 1e4, 9.9e4])
def test_sincos_block_is_within_the_stated_bound(spread: float, level: int) -> None:
    """Random phases of every magnitude FOGD meets (and up to the polynomial's limit)."""
    u = np.random.default_rng(0).normal(0.0, spread, 4001)
    c, s = _sincos(u)
    ec, es = _exact(u)
    # The bound of the header plus one ulp of the reference (libm is within 1 ulp).
    tol = SINCOS_BOUND + np.spacing(1.0)
    assert np.max(np.abs(c - ec)) <= tol
    assert np.max(np.abs(s - es)) <= tol


def test_sincos_block_quadrants_and_special_phases(level: int) -> None:
    """Multiples of π/4 (the quadrant boundaries), ±0, and signs in all four quadrants."""
    k = np.arange(-40, 41)
    u = np.concatenate([k * (math.pi / 4), k * (math.pi / 2) + 1e-9, [0.0, -0.0]])
    c, s = _sincos(u)
    ec, es = _exact(u)
    tol = SINCOS_BOUND + np.spacing(1.0)
    assert np.max(np.abs(c - ec)) <= tol and np.max(np.abs(s - es)) <= tol
    # u = 0 gives exactly (1, 0): the phases of an all-zero example.
    assert c[-1] == 1.0 and s[-1] == 0.0 and c[-2] == 1.0 and s[-2] == 0.0


def test_sincos_block_large_and_non_finite_phases_go_to_libm(level: int) -> None:
    """Beyond the reduction's range the values are libm's; NaN and ±inf give NaN."""
    u = np.array([0.3, 2e5, -3.7e7, 1e300, np.nan, np.inf, -np.inf, 1.0])
    c, s = _sincos(u, 2.0)
    with np.errstate(invalid="ignore"):
        assert np.array_equal(c[1:4], 2.0 * np.cos(u[1:4]))
        assert np.array_equal(s[1:4], 2.0 * np.sin(u[1:4]))
    assert np.all(np.isnan(c[4:7])) and np.all(np.isnan(s[4:7]))
    ec, es = _exact(u[[0, 7]])
    assert np.allclose(c[[0, 7]], 2.0 * ec, rtol=0, atol=1e-15)
    assert np.allclose(s[[0, 7]], 2.0 * es, rtol=0, atol=1e-15)


@pytest.mark.parametrize("n", [*range(19), 63, 64, 65, 400])
def test_sincos_block_every_length(n: int, level: int) -> None:
    """Every block length (vector tails included) gives the same per-phase values."""
    u = np.random.default_rng(n).uniform(-10, 10, n)
    c, s = _sincos(u, 0.25)
    ref_c, ref_s = _sincos(np.concatenate([u, np.zeros(16)]), 0.25)
    # Same process, same instruction sequence for every element: exact equality.
    assert np.array_equal(c, ref_c[:n]) and np.array_equal(s, ref_s[:n])


def test_fogd_sparse_phases_with_more_non_zeros_than_one_chunk(level: int) -> None:
    """A sparse example with more non-zeros than the loop gathers at once (64)."""
    d, D = 1000, 37
    rng = np.random.default_rng(3)
    x = np.zeros(d)
    x[rng.choice(d, 150, replace=False)] = rng.standard_normal(150)
    algo = make(f"fogd[D={D}]", seed=2)
    z = algo.features(x)
    u = x @ algo._Omega
    ref = np.concatenate([np.cos(u), np.sin(u)]) / math.sqrt(D)
    # The phases are summed in another order than NumPy's matmul: relative 1e-13 of |u|.
    assert np.allclose(z, ref, rtol=0, atol=1e-13)


def test_fogd_rejects_zero_features() -> None:
    """D = 0 and examples without features: one-line errors naming what is wrong."""
    with pytest.raises(ValueError, match=r"^fogd: D must be in \[1, inf\], got 0$"):
        make("fogd[D=0]")
    algo = make("fogd[D=8]")
    with pytest.raises(ValueError, match=r"^fogd: the examples have 0 features") as info:
        algo.learn_predict_many(np.zeros((3, 0)), np.ones(3))
    assert "\n" not in str(info.value)


def test_nogd_rank_defaults_to_a_fifth_of_the_budget() -> None:
    """k = ⌈0.2·B⌉ by default (the paper's setting); rank and rank_fraction override it."""
    for spec, k in (
        ("nogd[budget=100]", 20),
        ("nogd[budget=7]", 2),
        ("nogd[budget=1]", 1),
        ("nogd[budget=100,rank_fraction=1.0]", 100),
        ("nogd[budget=100,rank_fraction=0.5]", 50),
        ("nogd[budget=100,rank=33]", 33),
    ):
        assert make(spec)._k == k, spec


def test_nogd_rank_k_map_costs_b_times_k() -> None:
    """After the switch the map is k×B and the weights have k rows."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 5))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(300) > 0, 1.0, -1.0)
    algo = make("nogd[budget=40,eta=0.3]")
    algo.learn_predict_many(X, y)
    assert algo._state.M.shape == (8, 40) and algo._state.W.shape == (8, 1)
    assert algo.stats()["nystrom_rank"] == 8


def test_nogd_rank_above_budget_is_one_line_error() -> None:
    with pytest.raises(ValueError, match=r"^nogd: rank must be at most budget \(10\)") as info:
        make("nogd[budget=10,rank=20]")
    assert "\n" not in str(info.value) and "rank=20" in str(info.value)
