"""Compiled inner loops of kbench (built from cython_core/ by setup.py)."""
