"""asv benchmarks (see asv.conf.json)."""
