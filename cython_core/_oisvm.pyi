"""Type stub of kbench.cython_core._oisvm (OISVM block loop and its state)."""

from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._types import BlockLoop

@disjoint_base
class OisvmState:
    Kinv: Any
    R: Any
    ss: Any
    basis: Any
    G: Any
    labels: Any
    violator: Any
    history: Any
    t: int
    def __init__(
        self,
        Kinv: Any = None,
        R: Any = None,
        ss: Any = None,
        basis: Any = None,
        G: Any = None,
        labels: Any = None,
        violator: Any = None,
        history: Any = None,
        t: int = 0,
    ) -> None: ...
    def __reduce__(self) -> Any: ...
    def ensure(self, cap: int, seen: int) -> None: ...

oisvm_block: BlockLoop
