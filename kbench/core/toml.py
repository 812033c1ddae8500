"""Reading TOML: the standard library's ``tomllib`` from Python 3.11, ``tomli`` before it.

``tomli`` is the parser that joined the standard library as ``tomllib``; kbench depends on it
only where ``tomllib`` is missing. Every TOML kbench reads (study files, a plugin's
``pyproject.toml``) goes through here, so no module can import ``tomllib`` and break 3.10.
"""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    from tomllib import TOMLDecodeError, loads
else:
    from tomli import TOMLDecodeError, loads

__all__ = ["TOMLDecodeError", "loads"]
