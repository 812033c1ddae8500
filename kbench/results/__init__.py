"""Results: the results folder (one file per task, written atomically), the Results tables and the per-run degenerate flags."""
