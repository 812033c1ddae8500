"""The learner toolkit (kbench.learners) and its typed boundary to the compiled loops."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from kbench.api import get_registry
from kbench.cython_core import _pa
from kbench.cython_core._kernels import KernelKind, KernelSpec
from kbench.cython_core._sparse import BlockRows
from kbench.learners import SupportBuffer


def test_kernel_spec_is_typed_picklable_and_made_from_kernels() -> None:
    reg = get_registry()
    rbf = KernelSpec.of(reg.create("kernel", "rbf[gamma=0.25]"))
    assert (rbf.kind, rbf.gamma) == (KernelKind.K_RBF, 0.25) and rbf.compiled
    assert pickle.loads(pickle.dumps(rbf)) == rbf
    assert hash(pickle.loads(pickle.dumps(rbf))) == hash(rbf)
    assert KernelSpec.of(rbf.astuple()) == rbf
    poly = KernelSpec.of(reg.create("kernel", "poly[degree=2,offset=1.0]"))
    assert poly.self_kernel(3.0) == (3.0 + 1.0) ** 2
    cosine = KernelSpec.of(reg.create("kernel", "cosine[base=poly[degree=2]]"))
    assert cosine.kind == KernelKind.K_NOT_COMPILED and not cosine.compiled
    with pytest.raises(ValueError, match="unknown kernel kind 7"):
        KernelSpec(7)


def test_loops_take_a_spec_or_the_tuple_alike() -> None:
    """The tuple of Kernel.compiled() is turned into a spec (the adapter for callers not
    migrated yet): the same learning, bit for bit; anything else is refused in one line."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((40, 3)), np.sign(rng.standard_normal(40))
    spec = KernelSpec(KernelKind.K_RBF, 0.5)
    got = []
    for kernel in (spec, spec.astuple()):
        buf = SupportBuffer(3, 64)
        pred = np.empty(40)
        i, m, evals = _pa.pa_block(
            kernel, buf.X, buf.sq, buf.alpha, 0, X, y, pred, buf.krow, 1, 1.0, False, 0.0, 0
        )
        got.append((i, m, evals, pred, buf.alpha[:m].copy()))
    assert got[0][:3] == got[1][:3] and got[0][1] > 0
    np.testing.assert_array_equal(got[0][3], got[1][3])
    np.testing.assert_array_equal(got[0][4], got[1][4])
    with pytest.raises(TypeError, match="kernel must be a KernelSpec or"):
        _pa.pa_block(
            [1, 0.5, 1.0, 0.0, 1.0],
            buf.X,
            buf.sq,
            buf.alpha,
            0,
            X,
            y,
            pred,
            buf.krow,
            1,
            1.0,
            False,
            0.0,
            0,
        )


def test_block_rows_hold_dense_rows() -> None:
    X = np.ones((4, 3))
    rows = BlockRows(X)
    assert rows.n == 4 and not rows.sparse and rows.block is None
    with pytest.raises(ValueError):
        BlockRows(np.ones((4, 3), dtype=np.float32))
