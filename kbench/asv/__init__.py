"""airspeed velocity (asv) suites of kbench components, for kbench and for plugin authors.

A plugin's repository tracks its own learner over its own commits with a benchmark module
of two lines, which ``kbench asv init`` writes::

    import kbench.asv

    globals().update(kbench.asv.suites(plugin="example"))

asv then finds the time, peak-memory and ``track_`` (online error, held-out error,
support vectors) benchmarks of every algorithm the plugin registers, on kbench's fixed
seeded streams, and the kernel-row benchmarks of every kernel it registers beside the
bare BLAS product of the same shape. kbench's own ``benchmarks/`` builds its suite from
the same classes over every registered algorithm and kernel.

- :mod:`kbench.asv.streams`: the frozen seeds, streams and profiles, and how a case (an
  algorithm on a stream) is built and run.
- :mod:`kbench.asv.benchmarks`: the suite templates and the factories that fill their grids.
- :mod:`kbench.asv.project`: ``kbench asv init``, the files of a plugin's asv project.
- :mod:`kbench.asv.environment`: the ``kbench`` environment type of asv (imported by asv
  only, through the ``plugins`` entry of ``asv.conf.json``), and
  :mod:`kbench.asv.install`, which installs a commit into it.
- :mod:`kbench.asv.dashboard`: a published dashboard made to work without network.

Importing this package imports neither asv nor the suites; :func:`suites` loads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = ["suites"]


def suites(
    plugin: str | Sequence[str] | None = None,
    *,
    algorithms: Sequence[str] | None = None,
    kernels: Sequence[str] | None = None,
    streams: Sequence[str] | None = None,
    profile: str | None = None,
    config: Path | None = None,
) -> dict[str, type]:
    """The asv suites of some components, by class name, for a benchmark module's namespace.

    Parameters
    ----------
    plugin
        A plugin's entry-point or distribution name (or several): its algorithms and
        kernels, with their default parameters. A plugin that is not installed, not
        loaded or broken is an error naming it, so a suite never silently benchmarks
        nothing.
    algorithms, kernels
        Component specs (``"budget_perceptron[budget=50]"``), instead of or besides the
        plugin's. Without ``plugin``, what is not given is every registered algorithm
        (or kernel), as kbench's own suite does.
    streams
        Keys of :data:`kbench.asv.streams.STREAMS`; by default the streams of every task
        one of the algorithms supports.
    profile
        ``fast``, ``regular`` or ``large_scale``: stream lengths and kernel-row sizes. By
        default ``$KBENCH_ASV_PROFILE``, else ``config``'s, else ``regular``.
    config
        A ``config.json`` holding ``{"profile": ...}``.

    Returns
    -------
    dict
        Suite classes by name: ``LearnOne``, ``PredictOne``, ``LearnPredictMany``,
        ``StreamMemory``, ``StreamQuality`` (and ``Fit`` for batch references) when
        there are algorithms; ``KernelRow`` and ``MatVec`` when there are kernels.

    Raises
    ------
    kbench.core.errors.KbenchError
        When the plugin is not loaded, or a spec names no registered component.
    """
    from kbench.asv import streams as common
    from kbench.asv.benchmarks import algorithm_suites, kernel_suites
    from kbench.core.errors import RegistryError

    reg = common.registry()
    chosen = {"algorithm": algorithms, "kernel": kernels}
    if plugin is not None:
        names = [plugin] if isinstance(plugin, str) else list(plugin)
        owners = {reg.loaded_plugin(name).name for name in names}
        for kind, given in chosen.items():
            own = [n for n in reg.names(kind) if reg.entry(kind, n).plugin in owners]
            chosen[kind] = [*own, *(given or [])]
        if not chosen["algorithm"] and not chosen["kernel"]:
            raise RegistryError(
                f"plugin {', '.join(names)} registers no algorithm and no kernel: kbench's "
                "asv suites benchmark algorithms and kernels"
            )
    else:
        for kind, given in chosen.items():
            chosen[kind] = reg.names(kind) if given is None else list(given)
    active = profile or common.profile_name(config)
    if active not in common.PROFILES:
        raise ValueError(
            f"kbench asv profile {active!r} is not one of {', '.join(common.PROFILES)}"
        )
    found: dict[str, type] = {}
    if chosen["algorithm"]:
        found |= algorithm_suites(chosen["algorithm"], streams=streams, profile=active)
    if chosen["kernel"]:
        found |= kernel_suites(chosen["kernel"], profile=active)
    return found
