"""Analysis: statistics, paired comparisons, rankings and verdicts over results tables."""
