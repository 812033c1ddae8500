"""Type stub of kbench.cython_core._losses."""

LOSS_KINDS: dict[str, int]

def py_loss_deriv(kind: int, f: float, y: float, p1: float) -> float: ...
