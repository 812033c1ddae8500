"""The stable API for plugin authors: every name a kbench plugin needs, in one module.

A plugin may import these names from here, or from the modules that define them (the
paths in the table below stay valid too). Their names, signatures and meaning change
only with a new major version of kbench, and a change is announced in ``docs/``.
Anything else in kbench is internal and may change without notice.

=====================================  ==================================================
name                                   defined in
=====================================  ==================================================
``hookimpl``                           :mod:`kbench`
``Algorithm``, ``Kernel``, ``Loss``,   :mod:`kbench.core.components`
``Dataset``, ``Data``, ``Component``,
``Parameter``, ``TASKS``,
``check_range``, ``param``
``SupportBuffer``,                     :mod:`kbench.learners` (the learner toolkit:
``SparseSupportBuffer``, ``Rows``,     stores, row sources, the typed boundary to the
``Expansion``, ``ExpansionLearner``,   compiled loops; see ``docs/contracts.md``)
``KernelSpec``, ``BlockRows``
``kernel_row``, ``as_matrix``,         :mod:`kbench.core.kernel_rows`
``as_vector``, ``sq_norms``,
``CompiledKernel``
``LogUniform``, ``IntLogUniform``,     :mod:`kbench.core.search_space` (tuning ranges)
``Choice``
``suggest``, ``parse_spec``            :mod:`kbench.core.specs` (a did-you-mean; a spec
                                       string's name and parameters)
``is_sparse``                          :mod:`kbench.core.arrays`
``dense``, ``dense_blocks``,           :mod:`kbench.core.dense_rows` (CSR rows
``takes_csr``                          densified, whole or in 8 MB blocks, for a learner
                                       on dense rows only)
``read_csv``, ``read_npz``,            :mod:`kbench.data.readers` (data-set files, their
``npz_shapes``, ``read_idx``,          checks and label encoding; a reader that reads
``read_idx_pair``, ``idx_header``,     a file notes it as a source of the stream)
``encode_labels``, ``note_source``,
``MAX_ELEMENTS``
``read_libsvm``, ``read_libsvm_csr``   :mod:`kbench.data.libsvm_format`
``cache_dir``, ``fetch_url``           :mod:`kbench.data.downloads`
``Entry``, ``catalogue``, ``fetch``,   :mod:`kbench.data.libsvm_catalogue` (the LIBSVM
``folder``, ``is_cached``              data sets, downloaded and checked)
``kernel_expansion``                   :mod:`kbench.api`
``Stream``, ``StreamSpec``,            :mod:`kbench.data.streams`
``get_stream``
``Registry``, ``get_registry``         :mod:`kbench.core.registry`
``child_seed``, ``derive_seed``        :mod:`kbench.core.seeds`
``KbenchError``, ``SpecError``,        :mod:`kbench.core.errors`
``DataError``, ``RegistryError``
=====================================  ==================================================

The conformance checks for plugin tests are in :mod:`kbench.testing` (it imports pytest
only when asked for test cases).

Examples
--------
>>> import numpy as np
>>> from kbench.api import get_registry, kernel_expansion
>>> rbf = get_registry().create("kernel", "rbf[gamma=0.5]")
>>> S = np.array([[0.0, 0.0], [1.0, 0.0]])
>>> alpha = np.array([1.0, -1.0])
>>> kernel_expansion(rbf, S, alpha, np.array([0.0, 0.0])).round(4)
array([0.3935])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kbench import hookimpl
from kbench.core.arrays import is_sparse
from kbench.core.components import (
    TASKS,
    Algorithm,
    Component,
    Data,
    Dataset,
    Kernel,
    Loss,
    Parameter,
    check_range,
    param,
)
from kbench.core.dense_rows import dense, dense_blocks, takes_csr
from kbench.core.errors import DataError, KbenchError, RegistryError, SpecError
from kbench.core.executors import Executor, ExecutorSettings
from kbench.core.kernel_rows import CompiledKernel, as_matrix, as_vector, kernel_row, sq_norms
from kbench.core.registry import Registry, get_registry
from kbench.core.search_space import Choice, IntLogUniform, LogUniform
from kbench.core.seeds import child_seed, derive_seed
from kbench.core.specs import parse_spec, suggest
from kbench.data.downloads import cache_dir, fetch_url
from kbench.data.libsvm_catalogue import Entry, catalogue, fetch, folder, is_cached
from kbench.data.libsvm_format import read_libsvm, read_libsvm_csr
from kbench.data.readers import (
    MAX_ELEMENTS,
    encode_labels,
    idx_header,
    note_source,
    npz_shapes,
    read_csv,
    read_idx,
    read_idx_pair,
    read_npz,
)
from kbench.data.streams import Stream, StreamSpec, get_stream

if TYPE_CHECKING:
    from kbench.execution.dask_executor import DaskExecutor
    from kbench.execution.executors import LocalExecutor, execute, execute_isolated
from kbench.learners import (
    BlockRows,
    Expansion,
    ExpansionLearner,
    KernelSpec,
    Rows,
    SparseSupportBuffer,
    SupportBuffer,
)

__all__ = [
    "MAX_ELEMENTS",
    "TASKS",
    "Algorithm",
    "BlockRows",
    "Choice",
    "CompiledKernel",
    "Component",
    "DaskExecutor",
    "Data",
    "DataError",
    "Dataset",
    "Entry",
    "Executor",
    "ExecutorSettings",
    "Expansion",
    "ExpansionLearner",
    "IntLogUniform",
    "KbenchError",
    "Kernel",
    "KernelSpec",
    "LocalExecutor",
    "LogUniform",
    "Loss",
    "Parameter",
    "Registry",
    "RegistryError",
    "Rows",
    "SparseSupportBuffer",
    "SpecError",
    "Stream",
    "StreamSpec",
    "SupportBuffer",
    "as_matrix",
    "as_vector",
    "cache_dir",
    "catalogue",
    "check_range",
    "child_seed",
    "dense",
    "dense_blocks",
    "derive_seed",
    "encode_labels",
    "execute",
    "execute_isolated",
    "fetch",
    "fetch_url",
    "folder",
    "get_registry",
    "get_stream",
    "hookimpl",
    "idx_header",
    "is_cached",
    "is_sparse",
    "kernel_expansion",
    "kernel_row",
    "note_source",
    "npz_shapes",
    "param",
    "parse_spec",
    "read_csv",
    "read_idx",
    "read_idx_pair",
    "read_libsvm",
    "read_libsvm_csr",
    "read_npz",
    "sq_norms",
    "suggest",
    "takes_csr",
]


def kernel_expansion(
    kernel: Kernel, S: np.ndarray, alpha: np.ndarray, X: np.ndarray, *, block: int = 2048
) -> np.ndarray:
    """The kernel expansion ``f(x) = Σᵢ alpha[i] · k(S[i], x)`` at one point or many.

    Built-in kernels compute it in kbench's compiled core, one kernel row (or one
    Gram block of at most ``block`` rows) at a time; other kernels through their
    ``row`` and ``matrix`` methods. Learners that keep a model between examples should
    hold it in a :class:`SupportBuffer`, which caches the squared norms this function
    recomputes on every call.

    Parameters
    ----------
    kernel
        The kernel k.
    S
        Support vectors, shape ``(m, d)``.
    alpha
        Coefficients, shape ``(m,)`` or ``(m, n_outputs)``.
    X
        One point, shape ``(d,)``, or a block of points, shape ``(n, d)``.
    block
        Rows of X per Gram block.

    Returns
    -------
    numpy.ndarray
        Shape ``(n_outputs,)`` for one point, ``(n, n_outputs)`` for a block.
    """
    S = as_matrix(S, "S")
    A = np.asarray(alpha, dtype=np.float64)
    if A.ndim not in (1, 2) or len(A) != len(S):
        raise ValueError(
            f"kernel expansion: {len(S)} support vectors but alpha has shape {A.shape}"
        )
    A = A[:, None] if A.ndim == 1 else A
    one = np.ndim(X) == 1
    X = as_vector(X, "x")[None, :] if one else as_matrix(X, "X")
    if X.shape[1] != S.shape[1]:
        raise ValueError(f"kernel expansion: S has {S.shape[1]} columns but x has {X.shape[1]}")
    buf = SupportBuffer(S.shape[1], max(1, len(S)), n_outputs=A.shape[1])
    buf.X[: len(S)], buf.alpha[: len(S)], buf.size = S, A, len(S)
    buf.sq[: len(S)] = sq_norms(S) if len(S) else 0.0
    if one:
        return buf.scores(buf.row(kernel, X[0]))
    return buf.decision_many(kernel, X, block=block)


#: What an executor plugin needs from the execution layer: loaded on first use, so that a
#: plugin of any other kind (and ``kbench list``) does not import the executors.
_EXECUTION_NAMES = ("DaskExecutor", "LocalExecutor", "execute", "execute_isolated")


def __getattr__(name: str) -> Any:
    if name == "DaskExecutor":
        from kbench.execution import dask_executor

        return dask_executor.DaskExecutor
    if name in _EXECUTION_NAMES:
        from kbench.execution import executors

        return getattr(executors, name)
    raise AttributeError(f"module 'kbench.api' has no attribute {name!r}")
