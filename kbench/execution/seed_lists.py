"""A study's seeds as users write them (``0,1,2`` or ``0-4``), and the limits on seeds and tasks.

Its own module because both the study plan (:mod:`kbench.execution.study`) and tuning
(:mod:`kbench.execution.tuning`, whose ``on = "seeds:0-2"`` names seeds too) parse seed
lists, and the plan imports tuning.
"""

from __future__ import annotations

from kbench.core.errors import SpecError

#: Most tasks one study may plan: each writes its own result file and the plan is held in
#: memory, so a larger grid is almost surely a typo (``--seeds 0-99999999``).
MAX_TASKS = 1_000_000
#: Seeds are unsigned 32-bit integers: every random generator kbench and its plugins use
#: (NumPy's legacy RandomState included) accepts them, and results store them as int64.
MAX_SEED = 2**32 - 1


def parse_seeds(text: str) -> list[int]:
    """Parse ``0,1,2`` or ``0-4`` (inclusive ranges) into a sorted list of seeds."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, dash, hi = part.partition("-")
        try:
            first, last = (int(lo), int(hi)) if dash and lo else (int(part), int(part))
        except ValueError:
            raise SpecError(f"--seeds {text!r}: expected integers such as 0,1,2 or 0-4") from None
        if last < first:
            raise SpecError(f"--seeds {text!r}: the range {part} is empty (write it low-high)")
        if len(seeds) + last - first + 1 > MAX_TASKS:
            raise SpecError(
                f"--seeds {text!r}: {len(seeds) + last - first + 1:,} seeds, more than kbench's "
                f"limit of {MAX_TASKS:,} tasks in a study (each seed is at least one task)"
            )
        if not 0 <= first <= MAX_SEED or not 0 <= last <= MAX_SEED:
            raise SpecError(f"--seeds {text!r}: seeds are integers from 0 to {MAX_SEED}")
        seeds.extend(range(first, last + 1))
    if not seeds:
        raise SpecError(f"--seeds {text!r}: no seeds given")
    return sorted(set(seeds))
