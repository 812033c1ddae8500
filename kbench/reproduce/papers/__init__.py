"""The seed papers kbench reproduces, one module each: a :class:`~kbench.reproduce.verdicts.Paper`
with its claims and the evaluations that check them."""

from __future__ import annotations

from kbench.reproduce.papers.duol import DUOL
from kbench.reproduce.papers.huller import HULLER
from kbench.reproduce.papers.krlst import KRLST
from kbench.reproduce.papers.oisvm import OISVM
from kbench.reproduce.papers.pistol import PISTOL
from kbench.reproduce.papers.polk import POLK
from kbench.reproduce.papers.qklms import QKLMS
from kbench.reproduce.papers.ramp import RAMP
from kbench.reproduce.papers.svmd import SVMD
from kbench.reproduce.verdicts import Paper

PAPERS: dict[str, Paper] = {
    p.key: p for p in (SVMD, RAMP, PISTOL, HULLER, POLK, QKLMS, DUOL, KRLST, OISVM)
}
