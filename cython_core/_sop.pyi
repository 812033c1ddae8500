"""Type stub of kbench.cython_core._sop (kernel second-order perceptron block loop)."""

from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._types import BlockLoop

@disjoint_base
class SopState:
    M: Any
    labels: Any
    def __init__(self, M: Any = None, labels: Any = None) -> None: ...
    def __reduce__(self) -> Any: ...
    def ensure(self, cap: int) -> None: ...

sop_block: BlockLoop
