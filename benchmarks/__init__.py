"""kbench's airspeed velocity (asv) suite; see ``asv.conf.json`` and the README."""

from __future__ import annotations
