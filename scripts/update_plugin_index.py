"""Regenerate kbench/core/_plugin_index.py from what the built-in plugin modules register.

    python scripts/update_plugin_index.py          # rewrite the index
    python scripts/update_plugin_index.py --check  # exit 1 if it is out of date

The registry imports a built-in module only when one of its components is used, and finds
the module in this index; a module missing from it still works, but is imported by every
command.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kbench.core.registry import builtin_index

INDEX = Path(__file__).resolve().parents[1] / "kbench" / "core" / "_plugin_index.py"


def render(index: dict[str, dict[str, tuple[str, ...]]]) -> str:
    """The text of kbench/core/_plugin_index.py for an index."""
    head = INDEX.read_text().split("BUILTIN_INDEX", 1)[0]
    lines = [head + "BUILTIN_INDEX: dict[str, dict[str, tuple[str, ...]]] = {"]
    # Laid out as ruff format lays it out, so that formatting the tree leaves it unchanged.
    for module, kinds in sorted(index.items()):
        lines.append(f'    "{module}": {{')
        for kind, names in kinds.items():
            if len(names) == 1:
                lines.append(f'        "{kind}": ("{names[0]}",),')
                continue
            lines.append(f'        "{kind}": (')
            lines.extend(f'            "{n}",' for n in names)
            lines.append("        ),")
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check; exit 1 if stale")
    args = parser.parse_args()
    text = render(builtin_index())
    if args.check:
        if INDEX.read_text() != text:
            print(f"{INDEX} is out of date: run python scripts/update_plugin_index.py")
            return 1
        print(f"{INDEX} is up to date")
        return 0
    INDEX.write_text(text)
    print(f"wrote {INDEX}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
