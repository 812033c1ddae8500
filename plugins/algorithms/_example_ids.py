"""Example ids, now :mod:`kbench.learners.example_ids` (re-exported here for the averaged
perceptron until its family moves to the toolkit).

The module name starts with an underscore, so the registry does not load it as a plugin.
"""

from __future__ import annotations

from kbench.learners.example_ids import ExampleIds, PassIds, row_hashes

__all__ = ["ExampleIds", "PassIds", "row_hashes"]
