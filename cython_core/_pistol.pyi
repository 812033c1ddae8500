"""Type stub of kbench.cython_core._pistol (PiSTOL's and kernel SGD's block loop and state).

The store holds 2C columns, ``[c | u]``; ``cfg`` is the ``OnlineConfig`` of
:func:`kbench.learners.make_cfg`.
"""

from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._types import F64, BlockLoop

LOG_W_MAX: float

class MultiplierOverflow(FloatingPointError): ...

@disjoint_base
class PistolState:
    sgd: bool
    last: bool
    inv_sqrt: bool
    log_b: float
    a: float
    eta: float
    t: float
    norm2: float
    acc_alpha: float
    W: float
    max_exponent: float
    sup_kxx: float
    overflow: float
    def __init__(
        self,
        *,
        sgd: bool = False,
        last: bool = False,
        inv_sqrt: bool = False,
        log_b: float = 0.0,
        a: float = 1.0,
        eta: float = 1.0,
        acc_alpha: float = 1.0,
        t: float = 0.0,
        norm2: float = 0.0,
        W: float = 0.0,
        max_exponent: float = 0.0,
        sup_kxx: float = 0.0,
        overflow: float = 0.0,
    ) -> None: ...
    def fields(self) -> dict[str, Any]: ...
    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]: ...
    def log_w(self) -> float: ...
    def outputs(self, raw: F64, out: F64) -> None: ...
    def overflow_error(self) -> MultiplierOverflow: ...

pistol_block: BlockLoop
