"""Type stub of kbench.cython_core._sparse.

Kernels are passed as a ``KernelSpec`` (or ``(kind, gamma, scale, offset, degree)``).
A sparse row is int32 indices (strictly increasing) and float64 data; stored rows are spans
``[starts[i], ends[i])`` (int64) of a pool of int32 indices and float64 data. Outputs are
written in place.
"""

from typing_extensions import disjoint_base

from kbench.cython_core._sparse_checks import check_indices as check_indices
from kbench.cython_core._sparse_checks import check_rows as check_rows
from kbench.cython_core._types import F64, I32, I64, Kernel

STRATEGY_AUTO: int
STRATEGY_MERGE: int
STRATEGY_SCATTER: int

def kernel_row(
    kernel: Kernel,
    x_indices: I32,
    x_data: F64,
    xsq: float,
    starts: I64,
    ends: I64,
    indices: I32,
    data: F64,
    sq: F64 | None,
    out: F64,
    m: int = -1,
    strategy: int = 0,
    work: F64 | None = None,
) -> None: ...
def kernel_block(
    kernel: Kernel,
    x_starts: I64,
    x_ends: I64,
    x_indices: I32,
    x_data: F64,
    xsq: F64 | None,
    starts: I64,
    ends: I64,
    indices: I32,
    data: F64,
    sq: F64 | None,
    K: F64,
    m: int = -1,
    strategy: int = 0,
    work: F64 | None = None,
) -> None: ...
def row_sq_norms(starts: I64, ends: I64, data: F64, out: F64) -> None: ...

@disjoint_base
class SparseBlock:
    """CSR examples to learn against a sparse store, for one call of a learner's loop."""

    def __init__(
        self,
        kernel: Kernel,
        strategy: int,
        work: F64 | None,
        starts: I64,
        ends: I64,
        room: I64,
        indices: I32,
        data: F64,
        sq: F64,
        pool_end: int,
        owned: int,
        xp: I64,
        x_indices: I32,
        x_data: F64,
    ) -> None: ...
    @property
    def n(self) -> int: ...
    @property
    def pool_end(self) -> int: ...
    @property
    def owned(self) -> int: ...
    def check(self) -> None: ...

def all_signs(y: F64) -> bool: ...

@disjoint_base
class BlockRows:
    """The examples of one call of a block loop: dense rows, or CSR rows of a SparseBlock."""

    def __init__(self, X: F64) -> None: ...
    @staticmethod
    def csr(block: SparseBlock) -> BlockRows: ...
    @property
    def block(self) -> SparseBlock | None: ...
    @property
    def n(self) -> int: ...
    @property
    def sparse(self) -> bool: ...
