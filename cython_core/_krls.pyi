"""Type stub of kbench.cython_core._krls (ALD-KRLS block loop and its state)."""

from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._types import BlockLoop

@disjoint_base
class KrlsState:
    Kinv: Any
    P: Any
    def __init__(self, Kinv: Any = None, P: Any = None) -> None: ...
    def __reduce__(self) -> Any: ...
    @property
    def cap(self) -> int: ...
    def ensure(self, cap: int) -> None: ...

krls_block: BlockLoop
