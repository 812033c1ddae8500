"""Execution: the study plan, tasks, the prequential loop run in each task's process, its isolation, and the executors (local processes, Dask)."""
