"""``python -m kbench``: the ``kbench`` command, for when its script is not on ``PATH``."""

from __future__ import annotations

from kbench.cli.main import program

if __name__ == "__main__":
    program()
