"""Streams: the identical, read-only example sequences every algorithm of a study sees,
built, cached and read here.

A stream is built once per (dataset spec, stream options, seed) and cached on disk, so
worker processes load it rather than rebuild it (:func:`get_stream`). Its ``stream_id``
hashes its spec and contents; results carry it, and comparisons refuse to pair different
ids. A data set whose ``load`` returns a ``scipy.sparse`` matrix gives a sparse stream: its
features stay CSR (float64 values, sorted int32 indices) through ordering, caching and the
runner, and are densified only when the user asks for it with ``dense=true``.

The modules, each importing only those before it:

- :mod:`~kbench.data.streams.spec`: :class:`StreamSpec`, the stream options;
- :mod:`~kbench.data.streams.arrays`: a data set's arrays as loaded and checked, and the
  read-only arrays a stream serves;
- :mod:`~kbench.data.streams.stream`: :class:`Stream` and its id;
- :mod:`~kbench.data.streams.build`: loading a data set and deriving a stream's rows from
  its seed and options (:func:`build_stream`, without the cache);
- :mod:`~kbench.data.streams.files`: the cache's file format, written and mapped;
- :mod:`~kbench.data.streams.cache`: the data cache (:func:`get_stream`);
- :mod:`~kbench.data.streams.usage`: what the cache holds, and clearing it.

This package's namespace is what the rest of kbench uses.
"""

from __future__ import annotations

from kbench.data.streams.build import build_stream
from kbench.data.streams.cache import get_stream
from kbench.data.streams.spec import (
    ORDERS,
    SCALES,
    STREAM_OPTIONS,
    StreamSpec,
    reserved_parameters,
    split_stream_options,
)
from kbench.data.streams.stream import Stream
from kbench.data.streams.usage import CacheUsage, cache_usage, clear_cache

__all__ = [
    "ORDERS",
    "SCALES",
    "STREAM_OPTIONS",
    "CacheUsage",
    "Stream",
    "StreamSpec",
    "build_stream",
    "cache_usage",
    "clear_cache",
    "get_stream",
    "reserved_parameters",
    "split_stream_options",
]
