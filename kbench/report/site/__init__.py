"""``kbench publish``: a static results site over many studies (:mod:`.build`)."""
