"""Type stub of kbench.cython_core._swkrls (sliding-window KRLS block loop and its state)."""

from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._types import BlockLoop

@disjoint_base
class SwkrlsState:
    P: Any
    targets: Any
    head: int
    def __init__(self, P: Any = None, targets: Any = None, head: int = 0) -> None: ...
    def __reduce__(self) -> Any: ...
    def ensure(self, cap: int) -> None: ...

swkrls_block: BlockLoop
