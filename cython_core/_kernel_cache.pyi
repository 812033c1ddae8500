"""Type stub of kbench.cython_core._kernel_cache.

The cache's arrays: ``rows`` (n_slots × L float64), ``meta`` (4 × (n_slots + 1) int64:
valid length, key, previous and next on the LRU list), ``key_slot`` (L int64) and
``counters`` (``COUNTERS``: hits, partial hits, misses, kernel values computed). See
``kbench.plugins.algorithms._kernel_cache.KernelCache``, which owns them.
"""

import numpy as np
import numpy.typing as npt

_F64 = npt.NDArray[np.float64]
_I64 = npt.NDArray[np.int64]
_Kernel = tuple[int, float, float, float, float]  # (kind, gamma, scale, offset, degree)

COUNTERS: tuple[str, ...]

def kc_init(meta: _I64, key_slot: _I64) -> None: ...
def kc_lookup(
    rows: _F64, meta: _I64, key_slot: _I64, counters: _I64, key: int, m: int
) -> tuple[int, int]: ...
def kc_filled(meta: _I64, counters: _I64, slot: int, have: int, m: int) -> None: ...
def kc_fetch(
    rows: _F64,
    meta: _I64,
    key_slot: _I64,
    counters: _I64,
    kernel: _Kernel,
    key: int,
    m: int,
    SV: _F64,
    sq: _F64,
    scratch: _F64,
) -> _F64: ...
def kc_store(
    rows: _F64, meta: _I64, key_slot: _I64, counters: _I64, key: int, row: _F64
) -> None: ...
def kc_move(rows: _F64, meta: _I64, key_slot: _I64, counters: _I64, i: int, last: int) -> None: ...
def kc_clear(rows: _F64, meta: _I64, key_slot: _I64, counters: _I64) -> None: ...
def kc_order(meta: _I64) -> list[int]: ...

class CachedStore:
    """The support-vector store of HullerCore and LasvmCore (slots, ids, the row cache)."""

    compiled_kernel: bool
    m: int
    cap: int
    d: int
    n_ids: int
    n_pos: int
    n_neg: int
    n_pending: int
    removed: int
    row_evals: int
    def bind_cache(self, rows: _F64, meta: _I64, key_slot: _I64, counters: _I64) -> None: ...
    def bind_ids(self, id_slot: _I64) -> None: ...
    def slot_of(self, xid: int) -> int: ...
