import numpy as np

def shared_row(
    kind: int,
    gamma: float,
    scale: float,
    offset: float,
    degree: float,
    S: np.ndarray,
    m: int,
    x: np.ndarray,
    stamp: np.ndarray,
    values: np.ndarray,
    norms: np.ndarray,
    out: np.ndarray,
) -> int: ...
