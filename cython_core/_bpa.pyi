"""Type stub of kbench.cython_core._bpa (the BPA-S block loop and its state)."""

from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._types import BlockLoop

@disjoint_base
class BpaState:
    kdiag: Any
    removals: int
    def __init__(self, kdiag: Any = None, removals: int = 0) -> None: ...
    def __reduce__(self) -> Any: ...
    def ensure(self, cap: int) -> None: ...

bpa_s_block: BlockLoop
