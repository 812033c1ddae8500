"""Seeds per purpose: one study seed, independent random streams for each use of it.

A study's seed ``s`` is never handed on as it is. Each purpose gets its own stream,
``numpy.random.SeedSequence(s, spawn_key=(code,))`` with the purpose's code below, so
that a learner's random numbers are independent of its data's (a learner seeded with
the data's seed would draw the data's own numbers: FOGD's random frequencies were the
first rows of a generated stream). Another tool rebuilds a kbench stream from the seed
alone with the same two lines (see ``docs/streams.md``).

Plugins receive an integer derived for them, never the study seed: a data set's
``load(seed)`` gets :func:`derive_seed` ``(s, "data")``, an algorithm's ``seed``
parameter ``derive_seed(s, "learner")``. Derived integers are unsigned 32-bit, the range
every random generator a plugin may use accepts (NumPy's legacy ``RandomState``,
scikit-learn's ``random_state``, river's ``seed``). A wrapper that builds learners of its
own (a reduction's sub-learners, an active learner's base) derives theirs from its own
seed with :func:`child_seed`, so that no sub-learner's seed is another task's.
"""

from __future__ import annotations

import numpy as np

#: The purposes a seed serves, with the code that names each one's stream. The codes are
#: part of kbench's results: changing one changes every stream and learner drawn from it.
PURPOSES: dict[str, int] = {
    "data": 1,  # a data set's generator: Dataset.load(seed)
    "split": 2,  # the held-out split of test_size
    "order": 3,  # the shuffle or counting order of the stream
    "learner": 4,  # the algorithm's seed parameter
    "child": 5,  # a wrapper's sub-learners, from the wrapper's own seed
    "tuning": 6,  # the tuning sampler's draws
    "resampling": 7,  # resampling in the statistics (bootstrap, permutations)
}


def seed_sequence(seed: int, purpose: str, *path: int) -> np.random.SeedSequence:
    """The seed sequence of ``purpose`` (and of ``path`` within it) for ``seed``.

    Parameters
    ----------
    seed
        A non-negative integer: the study's seed, or a seed derived for a component.
    purpose
        One of :data:`PURPOSES`.
    *path
        Further non-negative integers that name a stream within the purpose (the index of
        a sub-learner, say).

    Raises
    ------
    ValueError
        An unknown purpose or a negative seed.
    """
    if purpose not in PURPOSES:
        raise ValueError(f"unknown seed purpose {purpose!r}: expected one of {', '.join(PURPOSES)}")
    if seed < 0 or any(p < 0 for p in path):
        raise ValueError(f"seeds are non-negative integers, got {seed} {path}")
    return np.random.SeedSequence(int(seed), spawn_key=(PURPOSES[purpose], *map(int, path)))


def rng(seed: int, purpose: str, *path: int) -> np.random.Generator:
    """A generator (PCG64) on the stream of ``purpose`` for ``seed``."""
    return np.random.default_rng(seed_sequence(seed, purpose, *path))


def derive_seed(seed: int, purpose: str, *path: int) -> int:
    """An unsigned 32-bit integer derived from ``seed`` for ``purpose``: the first word of
    its seed sequence's state."""
    return int(seed_sequence(seed, purpose, *path).generate_state(1, np.uint32)[0])


def child_seed(seed: int, index: int) -> int:
    """The seed of a wrapper's ``index``-th sub-learner, derived from the wrapper's seed."""
    return derive_seed(seed, "child", index)


__all__ = ["PURPOSES", "child_seed", "derive_seed", "rng", "seed_sequence"]
