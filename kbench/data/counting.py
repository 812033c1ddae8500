"""The counting order of digit streams: the SVMD paper's counting sequence.

``order=counting`` puts the examples of a digit data set (classes 0-9) in the order a
decimal counter writes its digits, ``000 001 002 ...``; ``counting-D`` and ``counting-DxR``
fix the number of digits and of runs (:func:`counting_sequence`).
"""

from __future__ import annotations

import re

import numpy as np

from kbench.core.components import Data
from kbench.core.errors import DataError, SpecError

#: ``counting``, ``counting-D`` or ``counting-DxR``.
COUNTING_ORDER = re.compile(r"^counting(?:-(\d+)(?:x(\d+))?)?$")
#: The SVMD paper's counting sequence: a D-digit counter run R times (000→999 twice).
COUNTING_DIGITS, COUNTING_RUNS = 3, 2
#: Bare ``counting`` on a pool too small for the paper's sequence keeps it about this long.
COUNTING_LENGTH = COUNTING_RUNS * COUNTING_DIGITS * 10**COUNTING_DIGITS


def counting_shape(order: str) -> tuple[int | None, int | None]:
    """Digits and runs of a ``counting[-D[xR]]`` order; None where the order leaves them to the data."""
    m = COUNTING_ORDER.match(order)
    if not m:
        raise SpecError(f"order={order!r} is not a counting order")
    digits = int(m.group(1)) if m.group(1) else None
    return digits, (int(m.group(2)) if m.group(2) else None)


def counting_sequence(
    y: np.ndarray,
    rng: np.random.Generator,
    digits: int | None = None,
    runs: int | None = None,
    *,
    name: str = "data",
) -> np.ndarray:
    """Row indices that put digit examples in the SVMD paper's counting-sequence order.

    A ``digits``-digit decimal counter runs from 0 to 10^digits − 1, ``runs`` times; each
    number contributes its digits (with leading zeros) in order, so ``000 001 002 ...``
    gives the labels 0 0 0 0 0 1 0 0 2 ... Every run uses each class digits·10^(digits−1)
    times. The examples of each class are drawn at random without replacement (seeded by
    ``rng``), so no example appears twice. ``y`` holds class indices 0..9.

    ``digits`` None (the bare ``order=counting``) asks for the paper's sequence, 000→999
    twice, when every class has the 600 examples it needs; on a smaller pool it takes the
    most digits (at most 3) for which one run fits and as many runs as fit, up to about
    the paper's length of 6000 (scikit-learn's digits: 2 digits, 8 runs). ``runs`` None
    with given ``digits`` takes as many runs as fit.
    """
    counts = np.bincount(y.astype(np.intp), minlength=10)
    fewest = int(counts.min())
    if digits is None:
        fits = [d for d in range(COUNTING_DIGITS, 0, -1) if fewest >= d * 10 ** (d - 1)]
        if not fits:
            raise DataError(
                f"order=counting on {name!r}: class {int(counts.argmin())} has no examples"
            )
        digits = fits[0]
        if runs is None:
            runs = max(
                1,
                min(
                    fewest // (digits * 10 ** (digits - 1)),
                    COUNTING_LENGTH // (digits * 10**digits),
                ),
            )
    elif runs is None:
        runs = max(1, fewest // (digits * 10 ** (digits - 1)))
    need = runs * digits * 10 ** (digits - 1)
    if fewest < need:
        short = int(counts.argmin())
        raise DataError(
            f"order=counting-{digits}x{runs} on {name!r} needs {need} examples of each digit, "
            f"but class {short} has {fewest}; use fewer digits or runs"
        )
    pools = [rng.permutation(np.flatnonzero(y == c))[:need] for c in range(10)]
    numbers = np.arange(10**digits)
    # digit k (most significant first) of every number of one run
    seq = np.stack(
        [(numbers // 10 ** (digits - 1 - k)) % 10 for k in range(digits)], axis=1
    ).ravel()
    seq = np.tile(seq, runs)
    out = np.empty(len(seq), dtype=np.intp)
    for c in range(10):
        at = np.flatnonzero(seq == c)
        out[at] = pools[c][: len(at)]
    return out


def check_digits(data: Data, name: str) -> None:
    """Refuse the counting order on anything but a digit data set (multiclass, classes 0-9)."""
    digits = tuple(str(i) for i in range(10))
    if data.task != "multiclass" or data.n_classes != 10 or (data.class_names or digits) != digits:
        classes = (
            ", ".join(data.class_names[:4]) + ", ..."
            if data.class_names
            else f"{data.n_classes} classes"
        )
        raise DataError(
            f"order=counting orders the digits 0-9 of a digit data set; {name!r} is "
            f"{data.task} with {classes}"
        )
