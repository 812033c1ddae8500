"""The Huller (specs/003): Bordes and Bottou, a simple and efficient online SVM.

One Huller epoch against LIBSVM (test error, support vectors) and against one epoch of the
averaged perceptron, on digit-vs-rest problems of the MNIST sample.
"""

from __future__ import annotations

from kbench.reproduce import evidence
from kbench.reproduce.verdicts import NOT, REPRODUCED, Claim, Finding, Paper
from kbench.results.store import Results


def _huller_vs_libsvm(results: Results) -> Finding:
    """Claim 9: HULLER×1's test error is not significantly different from LIBSVM's.

    An equivalence claim: reproduced when two one-sided tests at α put the mean difference
    within ±0.5 point (:func:`~kbench.reproduce.evidence.equivalent`); no significant difference alone is consistent.
    """
    h1 = evidence.select(results, "huller", epochs=1)
    lib = evidence.select(results, "libsvm")
    evidence.need(h1, lib)
    [t] = evidence.holm_paired((h1, lib, "test_error"))
    gap = 100 * t["mean_diff"]
    value = evidence.side_by_side("test_error", "HULLER×1 {}%, LIBSVM {}%", scale=100)(h1, lib)
    why = f"gap {gap:+.2f} pt; {evidence.seedtest(t)}"
    return evidence.about_the_same(t, value, 0.005, "0.5 pt", why)


def _huller_sparser(results: Results) -> Finding:
    """Claim 10: HULLER×1 keeps fewer support vectors than LIBSVM."""
    h1 = evidence.select(results, "huller", epochs=1)
    lib = evidence.select(results, "libsvm")
    h2 = evidence.select(results, "huller", epochs=2)
    evidence.need(h1, lib)
    [t] = evidence.holm_paired((h1, lib, "n_support"))
    value = f"#SV HULLER×1 {evidence.mean_sd(h1['n_support'], '.0f')}, ×2 {evidence.mean_sd(h2['n_support'], '.0f')}, LIBSVM {evidence.mean_sd(lib['n_support'], '.0f')}"
    return evidence.fewer(t, value, "not fewer")


def _huller_perceptron(results: Results) -> Finding:
    """Claim 13: one epoch of the averaged perceptron is less accurate than HULLER×1.

    Held-out and online errors are each paired over (problem, seed), Holm over the two.
    """
    h1 = evidence.select(results, "huller", epochs=1)
    ap = evidence.select(results, "averaged_perceptron", epochs=1)
    evidence.need(h1, ap)
    t, t_on = evidence.holm_paired((ap, h1, "test_error"), (ap, h1, "online_error"))
    value = evidence.side_by_side("test_error", "AP×1 {}%, HULLER×1 {}%", scale=100)(ap, h1)
    why = f"held-out: {evidence.seedtest(t)} (AP first); online: {evidence.seedtest(t_on)}"
    worse = t["mean_diff"] > 0 and t_on["mean_diff"] > 0
    if worse and (evidence.significant(t, lower=False) or evidence.significant(t_on, lower=False)):
        return Finding(value, REPRODUCED, why)
    if t["mean_diff"] > 0:
        return Finding(value, evidence.consistent(t, t_on), f"worse on average; {why}")
    return Finding(value, NOT, f"the averaged perceptron is not worse; {why}")


MNIST5K = "mnist5k digit-vs-rest (kbench's 5 000-digit MNIST sample for MNIST's 60 000)"
HULLER = Paper(
    key="huller",
    title="Bordes and Bottou, The Huller: a simple and efficient online SVM (ECML 2005)",
    algorithms=("huller", "libsvm", "averaged_perceptron"),
    claims=(
        Claim(
            "9",
            "One Huller epoch is statistically indistinguishable from LIBSVM in test error",
            "not significant (paired tests, Fig. 5)",
            MNIST5K,
            _huller_vs_libsvm,
        ),
        Claim(
            "10",
            "HULLER×1 has fewer support vectors than LIBSVM",
            "always slightly fewer (Fig. 5)",
            MNIST5K,
            _huller_sparser,
        ),
        Claim(
            "13",
            "One epoch of the averaged perceptron is not competitive with HULLER×1",
            "AP×1 worse (Fig. 5)",
            MNIST5K,
            _huller_perceptron,
        ),
    ),
)
