"""Type stub of kbench.cython_core._krlst (KRLS-T block loop and its state)."""

from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._types import BlockLoop

@disjoint_base
class KrlstState:
    Q: Any
    K: Any
    S: Any
    mu: Any
    def __init__(self, Q: Any = None, K: Any = None, S: Any = None, mu: Any = None) -> None: ...
    def __reduce__(self) -> Any: ...
    def ensure(self, cap: int) -> None: ...

krlst_block: BlockLoop
