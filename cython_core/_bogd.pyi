"""Type stub of kbench.cython_core._bogd (the BOGD block loop and its state)."""

from typing_extensions import disjoint_base

from kbench.cython_core._types import BlockLoop

@disjoint_base
class BogdState:
    cs: float
    removals: int
    def __init__(self, cs: float = 1.0, removals: int = 0) -> None: ...
    def __reduce__(self) -> tuple[type[BogdState], tuple[float, int]]: ...

bogd_block: BlockLoop
