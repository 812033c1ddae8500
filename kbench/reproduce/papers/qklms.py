"""QKLMS: Chen, Zhao, Zhu and Príncipe, quantized kernel least mean square (IEEE TNNLS 2012).

The quantized filter against KLMS on Mackey–Glass prediction: its dictionary far smaller,
its testing MSE about the same. The paper's figure is not transcribed here, so its claims
are checked in their words, not against its numbers.
"""

from __future__ import annotations

from kbench.reproduce import evidence
from kbench.reproduce.verdicts import Claim, Finding, Paper
from kbench.results.store import Results

#: Testing MSEs within this many decibels count as the same accuracy.
MARGIN_DB = 1.0


def _smaller_dictionary(results: Results) -> Finding:
    """Fig. 2: QKLMS's network is far smaller than KLMS's (which keeps every example)."""

    describe = evidence.side_by_side("n_support", "QKLMS {} centres, KLMS {}", ".0f")
    return evidence.fewer_than(
        results, "qklms", "klms", "n_support", describe, otherwise="not smaller"
    )


def _same_accuracy(results: Results) -> Finding:
    """Fig. 2: at about KLMS's testing MSE (in dB, equivalent within MARGIN_DB by TOST)."""

    return evidence.same_as(
        results,
        "qklms",
        "klms",
        "test_db",
        evidence.side_by_side("test_db", "testing MSE QKLMS {} dB, KLMS {} dB"),
        margin=MARGIN_DB,
        within=f"{MARGIN_DB:g} dB",
        unit=" dB",
        prepare=evidence.in_db("test_error", "test_db"),
    )


MACKEY_GLASS = (
    "mackey_glass (τ = 30, a sample every 6, 7 past values, no noise), rbf γ = 1, η = 0.2, "
    "ε = 0.2: the paper's step sizes and quantization size are not transcribed here"
)
QKLMS = Paper(
    key="qklms",
    title="Chen, Zhao, Zhu and Príncipe, Quantized kernel least mean square algorithm (IEEE TNNLS 2012)",
    algorithms=("qklms", "klms"),
    claims=(
        Claim(
            "F2a",
            "QKLMS's network is far smaller than KLMS's",
            "a far smaller network (Fig. 2; its values not transcribed)",
            MACKEY_GLASS,
            _smaller_dictionary,
        ),
        Claim(
            "F2b",
            "QKLMS reaches about KLMS's testing MSE",
            "about the same testing MSE (Fig. 2; its values not transcribed)",
            MACKEY_GLASS,
            _same_accuracy,
        ),
    ),
)
