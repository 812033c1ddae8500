"""DUOL: Zhao, Hoi and Jin, double updating online learning (JMLR 2011).

DUOL against the kernel perceptron and PA-I on the online mistake rate, on a9a (Adult)
subsamples in each seed's order. The paper's tables are not transcribed here, so its claims
are checked in their words: fewer mistakes, paired over seeds, not its numbers.
"""

from __future__ import annotations

from kbench.reproduce import evidence
from kbench.reproduce.verdicts import Claim, Finding, Paper
from kbench.results.store import Results


def _fewer_mistakes(rival: str, label: str):
    """The claim that DUOL makes fewer online mistakes than ``rival`` (an algorithm name)."""

    describe = evidence.side_by_side(
        "online_error", f"mistake rate DUOL {{}}%, {label} {{}}%", scale=100
    )

    def evaluate(results: Results) -> Finding:
        return evidence.fewer_than(
            results, "duol", rival, "online_error", describe, otherwise="not fewer"
        )

    evaluate.__doc__ = f"DUOL's online mistake rate is below {label}'s (paired over seeds)."
    return evaluate


A9A = (
    "a9a (Adult), the first 5 000 examples of each seed's order (1 500 in the quick run), "
    "rbf γ = 0.05, C = 1 for DUOL and PA-I, "
    "ρ = 0: the paper's kernel width and C are not transcribed here"
)
DUOL = Paper(
    key="duol",
    title="Zhao, Hoi and Jin, Double updating online learning (JMLR 2011)",
    algorithms=("duol", "perceptron", "pa"),
    claims=(
        Claim(
            "M1",
            "DUOL makes fewer mistakes than the perceptron",
            "a lower online mistake rate (its tables; values not transcribed)",
            A9A,
            _fewer_mistakes("perceptron", "perceptron"),
        ),
        Claim(
            "M2",
            "DUOL makes fewer mistakes than PA-I",
            "a lower online mistake rate (its tables; values not transcribed)",
            A9A,
            _fewer_mistakes("pa", "PA-I"),
        ),
    ),
)
