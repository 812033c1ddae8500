"""Streams: identical read-only arrays, content ids, the on-disk cache and stream options."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import MISBEHAVING
from kbench.core.errors import DataError, SpecError
from kbench.core.registry import Registry, get_registry
from kbench.data.downloads import cache_dir
from kbench.data.streams import StreamSpec, build_stream, get_stream, split_stream_options


@pytest.fixture
def reg() -> Registry:
    return get_registry()


def test_arrays_are_readonly_contiguous_float64(reg: Registry) -> None:
    """Every array of a stream is C-contiguous float64 and cannot be written."""
    s = build_stream(StreamSpec("a9a", n=500), reg)
    for a in (s.X, s.y, s.X_test, s.y_test):
        assert a.dtype == np.float64 and a.flags.c_contiguous and not a.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        s.X[0, 0] = 1.0
    assert s.X.shape == (500, 123) and s.X_test.shape == (16281, 123)


def test_stream_id_is_a_content_hash(reg: Registry) -> None:
    """Same spec, same bytes, same id; another seed shuffles differently and changes the id."""
    a = build_stream(StreamSpec("digits", seed=1), reg)
    b = build_stream(StreamSpec("digits", seed=1), reg)
    c = build_stream(StreamSpec("digits", seed=2), reg)
    assert a.stream_id == b.stream_id and np.array_equal(a.X, b.X)
    assert c.stream_id != a.stream_id and not np.array_equal(a.X, c.X)
    assert sorted(map(tuple, a.X)) == sorted(map(tuple, c.X))  # same examples, other order


def test_file_order_keeps_the_data_set_order(reg: Registry) -> None:
    """order=file leaves the examples as the data set gives them."""
    from sklearn.datasets import load_digits

    s = build_stream(StreamSpec("digits", order="file"), reg)
    assert np.array_equal(s.X, load_digits().data)


def test_cache_is_used_and_a_bad_entry_rebuilt(reg: Registry) -> None:
    """get_stream writes the cache once; a corrupted cache file is rebuilt, not trusted."""
    spec = StreamSpec("digits", seed=3, n=100)
    first = get_stream(spec, reg)
    (path,) = (cache_dir() / "data" / "digits").glob("*.data")
    size = path.stat().st_size
    again = get_stream(spec, reg)
    assert again.stream_id == first.stream_id and np.array_equal(again.X, first.X)
    assert not again.X.flags.writeable
    path.write_bytes(b"not a data file")
    rebuilt = get_stream(spec, reg)
    assert rebuilt.stream_id == first.stream_id and np.array_equal(rebuilt.X, first.X)
    assert path.stat().st_size == size
    for record in path.parent.glob("*.json"):
        record.write_text("{not json")
    rebuilt = get_stream(spec, reg)
    assert rebuilt.stream_id == first.stream_id and np.array_equal(rebuilt.X, first.X)


def test_nan_rows_are_rejected_naming_data_set_and_row(plugin_dist) -> None:
    """A NaN in the data is an error naming the data set and the row."""
    plugin_dist("kb_misbehaving", MISBEHAVING)
    with pytest.raises(
        DataError, match=r"data set 'nandata': training row 7 has a NaN or infinite value"
    ):
        build_stream(StreamSpec("nandata"), get_registry())


def test_empty_data_set_is_rejected(plugin_dist) -> None:
    """A data set without rows is an error."""
    plugin_dist("kb_misbehaving", MISBEHAVING)
    with pytest.raises(DataError, match=r"data set 'emptydata' is empty"):
        build_stream(StreamSpec("emptydata"), get_registry())


def test_positive_groups_classes(reg: Registry) -> None:
    """positive=5-9 turns digits into a ±1 task with the right counts."""
    s = build_stream(StreamSpec("digits", positive="5-9", order="file"), reg)
    from sklearn.datasets import load_digits

    target = load_digits().target
    assert s.task == "binary" and s.n_classes == 2
    assert np.array_equal(s.y, np.where(target >= 5, 1.0, -1.0))
    one = build_stream(StreamSpec("digits", positive="3", order="file"), reg)
    assert one.y.sum() == 2 * (target == 3).sum() - len(target)


@pytest.mark.parametrize(
    ("positive", "message"),
    [("12", "has no class 12"), ("0-9", "some but not all"), ("x", "has no class 'x'")],
)
def test_positive_naming_missing_class(reg: Registry, positive: str, message: str) -> None:
    """A grouping naming a class the data set lacks is an error."""
    with pytest.raises(DataError, match=message):
        build_stream(StreamSpec("digits", positive=positive), reg)


def test_test_split_and_scaling(reg: Registry) -> None:
    """test_size holds out a split; minmax scaling maps training features into [-1, 1]."""
    s = build_stream(StreamSpec("digits", test_size=0.25, scale="minmax"), reg)
    assert len(s.X_test) == round(0.25 * 1797) and len(s.X) == 1797 - len(s.X_test)
    assert s.X.min() >= -1.0 and s.X.max() <= 1.0


def test_split_stream_options() -> None:
    """Stream options are separated from a data set's own parameters and typed."""
    spec, opts = split_stream_options("digits[positive=5-9,n=100,scale=minmax]")
    assert spec == "digits" and opts == {"positive": "5-9", "n": 100, "scale": "minmax"}
    with pytest.raises(SpecError, match="order"):
        StreamSpec("digits", order="sideways")
    with pytest.raises(SpecError, match="n must be at least 1"):
        StreamSpec("digits", n=0)
