"""Which built-in plugin module registers which component (generated; do not edit).

The registry imports a built-in module only when one of its components is used; this index
tells it which module that is without importing them all. Regenerate it after adding,
renaming or removing a built-in component: ``python scripts/update_plugin_index.py``
(``tests/test_registry.py`` checks that it matches what the modules register).
"""

from __future__ import annotations

BUILTIN_INDEX: dict[str, dict[str, tuple[str, ...]]] = {
    "kbench.algorithms.active": {
        "algorithm": (
            "active_all",
            "active_greedy",
            "active_margin",
            "active_selective",
        ),
    },
    "kbench.algorithms.alma": {
        "algorithm": ("alma2",),
    },
    "kbench.algorithms.averaged_perceptron": {
        "algorithm": ("averaged_perceptron",),
    },
    "kbench.algorithms.batch": {
        "algorithm": ("libsvm",),
    },
    "kbench.algorithms.bogd": {
        "algorithm": ("bogd",),
    },
    "kbench.algorithms.bsgd": {
        "algorithm": ("bsgd",),
    },
    "kbench.algorithms.budget_pa": {
        "algorithm": ("bpa_s",),
    },
    "kbench.algorithms.budget_perceptrons": {
        "algorithm": (
            "projectron",
            "projectronpp",
            "rbp",
        ),
    },
    "kbench.algorithms.duol": {
        "algorithm": ("duol",),
    },
    "kbench.algorithms.feature_maps": {
        "algorithm": (
            "fogd",
            "nogd",
        ),
    },
    "kbench.algorithms.forgetron": {
        "algorithm": ("forgetron",),
    },
    "kbench.algorithms.huller": {
        "algorithm": ("huller",),
    },
    "kbench.algorithms.idsvm": {
        "algorithm": ("idsvm",),
    },
    "kbench.algorithms.kaf": {
        "algorithm": (
            "klms",
            "knlms",
            "krls",
            "krlst",
            "qklms",
            "swkrls",
        ),
    },
    "kbench.algorithms.lasvm": {
        "algorithm": ("lasvm",),
    },
    "kbench.algorithms.norma": {
        "algorithm": ("norma",),
    },
    "kbench.algorithms.oisvm": {
        "algorithm": ("oisvm",),
    },
    "kbench.algorithms.passive_aggressive": {
        "algorithm": ("pa",),
    },
    "kbench.algorithms.pegasos": {
        "algorithm": ("pegasos",),
    },
    "kbench.algorithms.perceptron": {
        "algorithm": ("perceptron",),
    },
    "kbench.algorithms.pistol": {
        "algorithm": ("pistol",),
    },
    "kbench.algorithms.polk": {
        "algorithm": ("polk",),
    },
    "kbench.algorithms.ramp_svm": {
        "algorithm": (
            "online_asvm_r",
            "online_svm_r",
            "ramp_cccp",
        ),
    },
    "kbench.algorithms.reductions": {
        "algorithm": (
            "ovo",
            "ovr",
        ),
    },
    "kbench.algorithms.river_model": {
        "algorithm": ("river",),
    },
    "kbench.algorithms.second_order": {
        "algorithm": ("second_order_perceptron",),
    },
    "kbench.algorithms.sgd": {
        "algorithm": (
            "asgd",
            "sgd",
        ),
    },
    "kbench.algorithms.stoptron": {
        "algorithm": (
            "remove_oldest_perceptron",
            "stoptron",
        ),
    },
    "kbench.algorithms.svmd": {
        "algorithm": ("svmd",),
    },
    "kbench.datasets.a9a": {
        "dataset": ("a9a",),
    },
    "kbench.datasets.bundled": {
        "dataset": (
            "breast_cancer",
            "diabetes",
            "digits",
            "iris",
            "wine",
        ),
    },
    "kbench.datasets.drift": {
        "dataset": (
            "drift",
            "drift_regression",
        ),
    },
    "kbench.datasets.files": {
        "dataset": (
            "csv",
            "heart_scale",
            "idx",
            "libsvm",
            "npz",
            "url",
        ),
    },
    "kbench.datasets.keel": {
        "dataset": (
            "australian",
            "banana",
            "german",
            "ionosphere",
            "keel",
            "letter",
            "magic",
            "mushroom",
            "optdigits",
            "pendigits",
            "phoneme",
            "pima",
            "ring",
            "satimage",
            "segment",
            "sonar",
            "spambase",
            "splice",
            "texture",
            "vowel",
            "wisconsin",
        ),
    },
    "kbench.datasets.mnist": {
        "dataset": (
            "fashion_mnist",
            "mnist",
            "mnist5k",
            "usps_like",
        ),
    },
    "kbench.datasets.synthetic": {
        "dataset": (
            "checkerboard",
            "haykin",
            "moons",
            "multidist",
            "periodic_beta",
            "periodic_beta_regression",
            "ringnorm",
            "twonorm",
            "waveform",
        ),
    },
    "kbench.datasets.time_series": {
        "dataset": (
            "lorenz",
            "mackey_glass",
        ),
    },
    "kbench.executors.dask": {
        "executor": ("dask",),
    },
    "kbench.executors.local": {
        "executor": ("local",),
    },
    "kbench.kernels.dot_product": {
        "kernel": (
            "linear",
            "poly",
        ),
    },
    "kbench.kernels.normalised": {
        "kernel": ("cosine",),
    },
    "kbench.kernels.radial": {
        "kernel": (
            "laplacian",
            "rbf",
        ),
    },
    "kbench.losses.margin": {
        "loss": (
            "hinge",
            "logistic",
            "ramp",
            "smooth_hinge",
            "squared_hinge",
            "zero_one",
        ),
    },
    "kbench.losses.multiclass": {
        "loss": (
            "multiclass_hinge",
            "multiclass_zero_one",
            "softmax",
        ),
    },
    "kbench.losses.novelty": {
        "loss": ("novelty_hinge",),
    },
    "kbench.losses.regression": {
        "loss": (
            "eps_insensitive",
            "huber",
            "squared",
        ),
    },
}
