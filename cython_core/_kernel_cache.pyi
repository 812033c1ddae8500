"""Type stub of kbench.cython_core._kernel_cache.

The cache's arrays: ``rows`` (n_slots × L float64), ``meta`` (4 × (n_slots + 1) int64:
valid length, key, previous and next on the LRU list), ``key_slot`` (L int64) and
``counters`` (``COUNTERS``: hits, partial hits, misses, kernel values computed). See
``kbench.plugins.algorithms._kernel_cache.KernelCache``, which owns them.
"""

from typing_extensions import disjoint_base

from kbench.cython_core._sparse import SparseBlock
from kbench.cython_core._types import F64, I64, Kernel

COUNTERS: tuple[str, ...]

def kc_init(meta: I64, key_slot: I64) -> None: ...
def kc_lookup(
    rows: F64, meta: I64, key_slot: I64, counters: I64, key: int, m: int
) -> tuple[int, int]: ...
def kc_filled(meta: I64, counters: I64, slot: int, have: int, m: int) -> None: ...
def kc_fetch(
    rows: F64,
    meta: I64,
    key_slot: I64,
    counters: I64,
    kernel: Kernel,
    key: int,
    m: int,
    SV: F64,
    sq: F64,
    scratch: F64,
) -> F64: ...
def kc_store(rows: F64, meta: I64, key_slot: I64, counters: I64, key: int, row: F64) -> None: ...
def kc_move(rows: F64, meta: I64, key_slot: I64, counters: I64, i: int, last: int) -> None: ...
def kc_clear(rows: F64, meta: I64, key_slot: I64, counters: I64) -> None: ...
def kc_order(meta: I64) -> list[int]: ...
def check_block(store: CachedStore, n: int, who: str) -> None: ...

@disjoint_base
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
    def bind_cache(self, rows: F64, meta: I64, key_slot: I64, counters: I64) -> None: ...
    def bind_ids(self, id_slot: I64) -> None: ...
    def slot_of(self, xid: int) -> int: ...
    def attach(self, block: SparseBlock | None) -> None: ...
    def detach(self) -> None: ...
    @property
    def sparse(self) -> bool: ...
