"""asv benchmarks of the kbench plugin 'example' (kbench-plugin-example), written by
`kbench asv init`.

kbench.asv.suites gives asv the time, peak-memory and track_ (online error, held-out
error, support vectors) benchmarks of the plugin's algorithms on kbench's fixed seeded
streams, and the kernel-row benchmarks of its kernels beside the BLAS floor.
KBENCH_ASV_PROFILE=fast|regular|large_scale scales them (regular by default).
"""

from __future__ import annotations

import kbench.asv

globals().update(kbench.asv.suites(plugin="example"))
