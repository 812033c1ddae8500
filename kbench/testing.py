"""Conformance checks for kbench components, for kbench's own tests and for plugin authors.

kbench runs these checks on every built-in component; a plugin's tests run the same
ones on the plugin's components. :func:`check_component` checks one component, given
by kind and registered name, or as a class or an instance (no installation needed)::

    from kbench.testing import check_component

    check_component("kernel", "cauchy")      # a registered component
    check_component(CauchyKernel)            # a class, with its test_params
    check_component(CauchyKernel(sigma=2.0)) # an instance, with its parameters

:func:`parametrize_components` (or :func:`component_cases`, the list of cases it uses)
parametrises a pytest test over every component one installed plugin registered::

    from kbench.testing import check_component, parametrize_components

    @parametrize_components(plugin="example")
    def test_conformance(kind, name):
        check_component(kind, name)

Each check raises AssertionError with a message that names the component and the rule.
``docs/testing.md`` lists the checks.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import numpy as np

from kbench.core.components import KINDS, Algorithm, Component, Dataset, Kernel, Loss, Parameter
from kbench.core.errors import RegistryError
from kbench.core.plugin_checks import validate_component
from kbench.core.plugin_records import PluginInfo
from kbench.core.registry import Registry, get_registry
from kbench.data.streams import Stream, StreamSpec
from kbench.data.streams.arrays import readonly

CHECKS: dict[str, list[Callable[..., None]]] = {
    "algorithm": [],
    "kernel": [],
    "loss": [],
    "dataset": [],
}


def _check(kind: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    def deco(fn: Callable[..., None]) -> Callable[..., None]:
        CHECKS[kind].append(fn)
        return fn

    return deco


#: Parameters (and, for algorithms, a kernel) of the instance being checked, by class.
_CONFIGURED: ContextVar[dict[type, dict[str, Any]] | None] = ContextVar(
    "kbench_checked", default=None
)

ALL_KINDS = ("algorithm", "kernel", "loss", "dataset")


def component_cases(
    registry: Registry | None = None,
    *,
    plugin: str | None = None,
    kinds: tuple[str, ...] = ALL_KINDS,
) -> list[Any]:
    """``pytest.param(kind, name)`` for every registered component, or one plugin's.

    Parameters
    ----------
    registry
        Where to look (default: the process-wide registry, which loads installed plugins).
    plugin
        Only this plugin's components: its entry-point name (what ``kbench plugins``
        shows) or its distribution name. A plugin that is not installed, is excluded by
        ``KBENCH_LOAD_PLUGINS`` or ``KBENCH_DISABLE_PLUGINS``, or failed to load raises
        RegistryError saying which, rather than giving an empty, silently passing test.
    kinds
        Component kinds to include.

    Returns
    -------
    list
        One ``pytest.param(kind, name, id="kind-name")`` per component.
    """
    import pytest

    registry = registry or get_registry()
    owner = None if plugin is None else registry.loaded_plugin(plugin).name
    cases = []
    for kind in kinds:
        for name in registry.names(kind):
            if owner is None or registry.entry(kind, name).plugin == owner:
                cases.append(pytest.param(kind, name, id=f"{kind}-{name}"))
    return cases


def parametrize_components(
    plugin: str | None = None,
    *,
    registry: Registry | None = None,
    kinds: tuple[str, ...] = ALL_KINDS,
) -> Any:
    """A ``pytest.mark.parametrize("kind, name", ...)`` over :func:`component_cases`.

    Decorate a test that takes ``kind`` and ``name`` arguments; see :func:`component_cases`
    for the parameters.
    """
    import pytest

    cases = component_cases(registry, plugin=plugin, kinds=kinds)
    return pytest.mark.parametrize(("kind", "name"), cases)


def check_component(
    component: str | type[Component] | Component,
    name: str | None = None,
    registry: Registry | None = None,
) -> None:
    """Run every conformance check of one component.

    Parameters
    ----------
    component
        The kind (``"algorithm"``, ``"kernel"``, ``"loss"``, ``"dataset"``) of a
        registered component named by ``name``; or a component class, checked with its
        ``test_params``; or an instance, checked with its parameter values (and, for an
        algorithm, its kernel). A class or instance need not be registered: it is
        validated as the registry would validate it, then checked.
    name
        Registered name, when ``component`` is a kind.
    registry
        Registry that supplies the other components the checks need (kernels and losses
        for algorithms) and, for a kind and name, the component itself.

    Raises
    ------
    AssertionError
        On the first broken rule, naming the component and the rule.
    """
    registry = registry or get_registry()
    if isinstance(component, str):
        if name is None:
            raise TypeError("check_component(kind, name): give the component's registered name")
        _run_checks(component, registry.entry(component, name).cls, registry)
        return
    if name is not None:
        raise TypeError("check_component: give a kind and a name, or a class or instance alone")
    cls = component if isinstance(component, type) else type(component)
    if not issubclass(cls, Component) or cls.kind not in KINDS:
        raise TypeError(
            f"check_component: {component!r} is not a kbench Algorithm, Kernel, "
            "Loss or Dataset (class or instance)"
        )
    checked = _registry_with(registry, cls)
    if isinstance(component, type):
        _run_checks(cls.kind, cls, checked)
        return
    config: dict[str, Any] = {"params": component.get_params()}
    if isinstance(component, Algorithm) and component.kernel is not None:
        config["kernel"] = component.kernel
    token = _CONFIGURED.set({cls: config})
    try:
        _run_checks(cls.kind, cls, checked)
    finally:
        _CONFIGURED.reset(token)


def _run_checks(kind: str, cls: type[Component], registry: Registry) -> None:
    _check_common(cls, registry, kind)
    for check in CHECKS[kind]:
        check(cls, registry)


def _registry_with(registry: Registry, cls: type[Component]) -> Registry:
    """A copy of the registry in which ``cls`` is registered under its name, after validation."""
    kind = cls.kind
    entry = registry.components[kind].get(getattr(cls, "name", ""))
    if entry is not None and entry.cls is cls:
        return registry
    checked = copy.copy(registry)
    checked.components = {k: dict(v) for k, v in registry.components.items()}
    checked.components[kind].pop(getattr(cls, "name", ""), None)
    owner = PluginInfo(name=cls.__module__.split(".")[0], source="extra", version="unknown")
    try:
        new = validate_component(kind, cls, owner, checked.components[kind])
    except RegistryError as exc:
        raise AssertionError(str(exc)) from None
    checked.components[kind][cls.name] = new
    return checked


def _params(cls: type[Component]) -> dict[str, Any]:
    """The parameters checks construct ``cls`` with: an instance's, else its test_params."""
    config = (_CONFIGURED.get() or {}).get(cls)
    return dict(config["params"]) if config else dict(cls.test_params)


def _make(cls: type[Component], **context: Any) -> Any:
    return cls(**_params(cls), **context)


def _check_common(cls: type[Component], registry: Registry, kind: str) -> None:
    who = f"{kind} {cls.name!r}"
    assert (cls.__doc__ or "").strip(), f"{who}: needs a docstring"
    for pname, param in cls.parameters().items():
        assert pname not in ("order", "n", "test_size", "positive", "scale") or kind != "dataset", (
            f"{who}: parameter {pname!r} is a reserved stream option name"
        )
        assert param.annotation is not None, f"{who}: parameter {pname!r} has no annotation"
    if kind in ("kernel", "loss", "dataset"):
        obj = _make(cls)
        for pname, value in obj.get_params().items():
            expected = _params(cls).get(pname, cls.parameters()[pname].default)
            assert value == expected or (value != value and expected != expected), (
                f"{who}: attribute {pname} is {value!r} after constructing with {expected!r}; "
                "store each parameter under its own name"
            )
        spec = obj.spec()
        assert repr(obj) == spec and repr(_make(cls)) == spec, f"{who}: repr must be deterministic"
        assert registry.create(kind, spec).spec() == spec, (
            f"{who}: spec {spec!r} does not round-trip"
        )
    _check_declared_ranges(cls, registry, who)


def _outside(param: Parameter) -> Any:
    """A value just outside a declared range (the open bound itself, else one beyond)."""
    if param.low is not None:
        return param.low if param.low_open else param.low - 1
    assert param.high is not None  # a parameter with no range is not tested outside it
    return param.high if param.high_open else param.high + 1


def _check_declared_ranges(cls: type[Component], registry: Registry, who: str) -> None:
    """A value just outside each declared range is refused with check_range's message."""
    for pname, param in cls.parameters().items():
        if not param.bounded:
            continue  # a written __init__ checks in its own code; only declared ranges are known
        bad = _outside(param)
        message = f"{cls.name}: {pname} must be in {param.range_text}, got {bad!r}"
        try:
            if issubclass(cls, Algorithm):
                task = sorted(cls.tasks)[0]
                make = _params(cls) | {pname: bad}
                token = _CONFIGURED.set(
                    {cls: {**((_CONFIGURED.get() or {}).get(cls, {})), "params": make}}
                )
                try:
                    make_test_algorithm(cls, task, registry)
                finally:
                    _CONFIGURED.reset(token)
            else:
                cls(**(_params(cls) | {pname: bad}))
        except ValueError as exc:
            assert str(exc) == message, f"{who}: {pname}={bad!r} gave {str(exc)!r}, not {message!r}"
        else:
            raise AssertionError(
                f"{who}: {pname}={bad!r} is outside {param.range_text} but was accepted"
            )


# --------------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------------


@_check("kernel")
def check_kernel_consistency(cls: type[Kernel], registry: Registry) -> None:
    """row equals the matrix's rows, diag its diagonal; the Gram matrix is symmetric PSD."""
    k = _make(cls)
    rng = np.random.default_rng(0)
    A = rng.standard_normal((12, 4)) * 0.5
    x = rng.standard_normal(4) * 0.5
    K = np.asarray(k.matrix(A, A))
    assert K.shape == (12, 12), f"kernel {cls.name!r}: matrix shape {K.shape}"
    assert np.allclose(K, K.T, atol=1e-10), f"kernel {cls.name!r}: Gram matrix not symmetric"
    assert np.linalg.eigvalsh(K).min() > -1e-8 * max(1.0, np.abs(K).max()), (
        f"kernel {cls.name!r}: Gram matrix not PSD"
    )
    for i in (0, 5, 11):
        assert np.allclose(k.row(A, A[i]), K[:, i], atol=1e-10), (
            f"kernel {cls.name!r}: row != matrix column"
        )
    assert np.allclose(k.row(A, x), np.asarray(k.matrix(A, x[None, :]))[:, 0], atol=1e-10), (
        f"kernel {cls.name!r}: row(S, x) != matrix(S, [x])"
    )
    d = np.asarray(k.diag(A))
    assert np.allclose(d, np.diag(K), atol=1e-10), f"kernel {cls.name!r}: diag != matrix diagonal"
    if cls.constant_diagonal:
        assert np.allclose(d, d[0]), (
            f"kernel {cls.name!r}: declares a constant diagonal but it varies"
        )
    assert k.row(A[:0], x).shape == (0,), (
        f"kernel {cls.name!r}: a row against no vectors must be empty"
    )


# --------------------------------------------------------------------------------------------
# Losses
# --------------------------------------------------------------------------------------------


def _loss_points(loss: Loss) -> list[tuple[Any, Any]]:
    rng = np.random.default_rng(1)
    if "multiclass" in loss.tasks:
        return [(rng.standard_normal(4) * 2, int(rng.integers(4))) for _ in range(20)]
    if "regression" in loss.tasks:
        return [(float(f), float(y)) for f, y in rng.standard_normal((20, 2)) * 2]
    return [
        (float(f), float(y))
        for f, y in zip(rng.standard_normal(20) * 2, rng.choice([-1.0, 1.0], 20), strict=True)
    ]


@_check("loss")
def check_loss_derivatives(cls: type[Loss], registry: Registry) -> None:
    """Derivatives match central finite differences wherever the loss is differentiable."""
    loss = _make(cls)
    h = 1e-6
    for f, y in _loss_points(loss):
        v = np.asarray(loss.value(f, y), dtype=float)
        assert np.all(np.isfinite(v)), f"loss {cls.name!r}: value {v} at f={f}, y={y}"
        g = np.asarray(loss.derivative(f, y), dtype=float)
        f_arr = np.atleast_1d(np.asarray(f, dtype=float))
        g_arr = np.atleast_1d(g)
        assert g_arr.shape == f_arr.shape, (
            f"loss {cls.name!r}: derivative shape {g_arr.shape} != score shape {f_arr.shape}"
        )
        for j in range(len(f_arr)):
            e = np.zeros_like(f_arr)
            e[j] = h
            fp, fm = (f_arr + e), (f_arr - e)
            up = float(loss.value(fp if f_arr.size > 1 else float(fp[0]), y))
            dn = float(loss.value(fm if f_arr.size > 1 else float(fm[0]), y))
            mid = float(v)
            fwd, bwd = (up - mid) / h, (mid - dn) / h
            if abs(fwd - bwd) > 1e-4 * max(1.0, abs(fwd)):
                continue  # a kink: no derivative to compare with
            assert abs(g_arr[j] - (up - dn) / (2 * h)) < 1e-4 * max(1.0, abs(g_arr[j])), (
                f"loss {cls.name!r}: derivative {g_arr[j]} != finite difference {(up - dn) / (2 * h)} at f={f}, y={y}"
            )
        lip = loss.lipschitz
        if np.isfinite(lip):
            assert np.all(np.abs(g_arr) <= lip * (1 + 1e-9) + 1e-12) or f_arr.size > 1, (
                f"loss {cls.name!r}: |derivative| {np.abs(g_arr).max()} exceeds its Lipschitz constant {lip}"
            )
        if cls.has_second_derivative and f_arr.size == 1:
            s = float(loss.second_derivative(f, y))
            num = (float(loss.derivative(f + h, y)) - float(loss.derivative(f - h, y))) / (2 * h)
            assert abs(s - num) < 1e-4 * max(1.0, abs(s)), (
                f"loss {cls.name!r}: second derivative {s} != {num}"
            )


# --------------------------------------------------------------------------------------------
# Data sets
# --------------------------------------------------------------------------------------------


@_check("dataset")
def check_dataset(cls: type[Dataset], registry: Registry) -> None:
    """load is deterministic and consistent with the declared task and info()."""
    ds = _make(cls)
    if ds.unavailable() is not None:
        why = ds.unavailable()
        assert isinstance(why, str) and why and "\n" not in why, (
            f"dataset {cls.name!r}: unavailable() must be one line"
        )
        return
    a, b = ds.load(0), ds.load(0)
    who = f"dataset {cls.name!r}"
    assert a.X.ndim == 2 and len(a.X) == len(a.y) > 0, (
        f"{who}: X {a.X.shape} and y {a.y.shape} do not match"
    )
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y), (
        f"{who}: load(seed) is not deterministic"
    )
    assert a.task == ds.task, f"{who}: loads a {a.task} task but declares {ds.task}"
    _check_labels(who, a.task, a.y, a.n_classes)
    if a.X_test is not None:
        assert a.X_test.shape[1] == a.X.shape[1], (
            f"{who}: test split has {a.X_test.shape[1]} columns, training {a.X.shape[1]}"
        )
        _check_labels(who, a.task, a.y_test, a.n_classes)
    info = ds.info()
    for key, actual in (("n", len(a.X)), ("d", a.X.shape[1]), ("classes", a.n_classes)):
        if (key in info and a.task in ("binary", "multiclass")) or (
            key in ("n", "d") and key in info
        ):
            assert info[key] == actual, (
                f"{who}: info() says {key}={info[key]} but the data have {actual}"
            )


def _check_labels(who: str, task: str, y: np.ndarray, n_classes: int) -> None:
    if task == "binary":
        assert set(np.unique(y)) <= {-1.0, 1.0}, (
            f"{who}: binary labels must be ±1, got {np.unique(y)[:5]}"
        )
    elif task == "multiclass":
        assert np.all((y >= 0) & (y < n_classes) & (y == np.round(y))), (
            f"{who}: multiclass labels must be 0..{n_classes - 1}"
        )


# --------------------------------------------------------------------------------------------
# Algorithms
# --------------------------------------------------------------------------------------------


def toy_stream(task: str, n: int = 160, d: int = 5, seed: int = 0) -> Stream:
    """A small read-only stream of the given task for checks and tests."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Xt = rng.standard_normal((40, d))
    n_classes = 2
    if task == "multiclass":
        n_classes = 3
        centers = rng.standard_normal((3, d)) * 2
        y, yt = rng.integers(0, 3, n).astype(float), rng.integers(0, 3, 40).astype(float)
        X, Xt = X + centers[y.astype(int)], Xt + centers[yt.astype(int)]
    elif task == "regression":
        y, yt = np.sin(X[:, 0]) + 0.1 * X[:, 1], np.sin(Xt[:, 0]) + 0.1 * Xt[:, 1]
    elif task == "novelty":
        y, yt = np.ones(n), np.ones(40)
    else:
        y, yt = (
            np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 > 0.3, 1.0, -1.0),
            np.where(Xt[:, 0] + 0.5 * Xt[:, 1] ** 2 > 0.3, 1.0, -1.0),
        )
    X_ro, y_ro, Xt_ro, yt_ro = (readonly(a) for a in (X, y, Xt, yt))
    assert X_ro is not None and y_ro is not None  # read-only copies of the arrays above
    spec = StreamSpec(dataset=f"toy-{task}", seed=seed)
    return Stream.of(spec, (X_ro, y_ro, Xt_ro, yt_ro, task, n_classes))


def _loss_for(cls: type[Algorithm], task: str, registry: Registry) -> Loss | None:
    if not cls.uses_loss:
        return None
    names = ([cls.default_loss] if cls.default_loss else []) + registry.names("loss")
    for name in names:
        loss = _make(registry.entry("loss", name).cls)
        if task in loss.tasks:
            return loss
    raise AssertionError(f"algorithm {cls.name!r}: no registered loss supports its task {task}")


def make_test_algorithm(
    cls: type[Algorithm], task: str, registry: Registry, seed: int = 0
) -> Algorithm:
    """Construct an algorithm with its test parameters, an RBF kernel and a suitable loss."""
    config = (_CONFIGURED.get() or {}).get(cls, {})
    kernel = None
    if cls.uses_kernel:
        kernel = config.get("kernel") or registry.create("kernel", "rbf[gamma=0.3]")
    stream = toy_stream(task)
    return cls(
        **_params(cls),
        kernel=kernel,
        loss=_loss_for(cls, task, registry),
        task=task,
        n_classes=stream.n_classes,
        seed=seed,
    )


@_check("algorithm")
def check_algorithm(cls: type[Algorithm], registry: Registry) -> None:
    """Protocol rules for every task the algorithm declares."""
    assert cls.tasks, f"algorithm {cls.name!r}: declares no task"
    for task in sorted(cls.tasks):
        _check_algorithm_task(cls, task, registry)


def _check_offline(cls: type[Algorithm], task: str, registry: Registry) -> None:
    """A batch reference: fit is deterministic, leaves the stream alone, and predicts labels."""
    who = f"algorithm {cls.name!r} ({task}, offline)"
    s = toy_stream(task)
    assert s.X_test is not None  # a toy stream has a test split
    X0 = s.X.copy()
    a, b = make_test_algorithm(cls, task, registry), make_test_algorithm(cls, task, registry)
    a.fit(s.X, s.y)
    b.fit(s.X, s.y)
    assert np.array_equal(s.X, X0), f"{who}: wrote into the stream"
    pa, pb = (
        np.asarray(a.predict_many(s.X_test), dtype=np.float64),
        np.asarray(b.predict_many(s.X_test), dtype=np.float64),
    )
    assert np.array_equal(pa, pb), f"{who}: not deterministic for a fixed seed"
    po = np.array([a.predict_one(x) for x in s.X_test])
    assert np.array_equal(pa, po), f"{who}: predict_many differs from predict_one"
    st = a.stats()
    for key in ("n_support", "kernel_evals"):
        assert key in st and np.isfinite(st[key]), f"{who}: stats() lacks a finite {key!r}"


def _check_algorithm_task(cls: type[Algorithm], task: str, registry: Registry) -> None:
    if cls.offline:
        _check_offline(cls, task, registry)
        return
    who = f"algorithm {cls.name!r} ({task})"
    s = toy_stream(task)
    assert s.X_test is not None  # a toy stream has a test split
    X0, y0 = s.X.copy(), s.y.copy()

    a = make_test_algorithm(cls, task, registry)
    spec = a.spec()
    assert repr(a) == spec, f"{who}: repr must be its spec"
    for pname, value in a.get_params().items():
        expected = _params(cls).get(pname, cls.parameters()[pname].default)
        assert value == expected, (
            f"{who}: attribute {pname} is {value!r}, constructed with {expected!r}"
        )

    # The fast path and the one-by-one protocol give the same predictions.
    half = len(s.X) // 2
    p_fast = np.concatenate(
        [a.learn_predict_many(s.X[:half], s.y[:half]), a.learn_predict_many(s.X[half:], s.y[half:])]
    )
    b = make_test_algorithm(cls, task, registry)
    # The base class's learn_predict_many is the one-by-one loop, whatever b overrides.
    p_slow = Algorithm.learn_predict_many(b, s.X, s.y)
    assert p_fast.shape == (len(s.X),), f"{who}: learn_predict_many returned shape {p_fast.shape}"
    if task == "regression":
        assert np.allclose(p_fast, p_slow, rtol=1e-7, atol=1e-9), (
            f"{who}: learn_predict_many differs from predict_one/learn_one"
        )
    else:
        agree = np.mean(p_fast == p_slow)
        assert agree == 1.0, (
            f"{who}: learn_predict_many differs from predict_one/learn_one on {1 - agree:.1%} of examples"
        )
    assert np.array_equal(s.X, X0) and np.array_equal(s.y, y0), f"{who}: wrote into the stream"

    # Deterministic for a fixed seed.
    c = make_test_algorithm(cls, task, registry)
    assert np.array_equal(c.learn_predict_many(s.X, s.y), p_fast) or (
        task == "regression" and np.allclose(c.learn_predict_many(s.X, s.y), p_fast)
    ), f"{who}: not deterministic for a fixed seed"

    # stats() has the required keys, finite.
    st = a.stats()
    for key in ("n_support", "kernel_evals"):
        assert key in st, f"{who}: stats() lacks {key!r}"
    for key, value in st.items():
        if isinstance(value, (int, float, np.number)):
            assert np.isfinite(value), f"{who}: stats()[{key!r}] = {value}"

    # predict_many matches predict_one, and prediction alone does not learn.
    before = a.stats().get("n_support")
    pm = np.asarray(a.predict_many(s.X_test), dtype=np.float64)
    po = np.array([a.predict_one(x) for x in s.X_test], dtype=np.float64)
    if task == "regression":
        assert np.allclose(pm, po, rtol=1e-7, atol=1e-9), (
            f"{who}: predict_many differs from predict_one"
        )
    else:
        assert np.mean(pm == po) == 1.0, f"{who}: predict_many differs from predict_one"
        labels = (
            {-1.0, 1.0} if task in ("binary", "novelty") else set(map(float, range(s.n_classes)))
        )
        assert set(np.unique(pm)) <= labels, (
            f"{who}: predictions {np.unique(pm)} are not labels of the task"
        )
    assert a.stats().get("n_support") == before, f"{who}: predicting changed the model"
