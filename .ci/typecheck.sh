#!/usr/bin/env bash
# CI: mypy on kbench/ (strict on kbench/core, kbench/api.py and kbench/learners, the rest at
# mypy's defaults; configuration in pyproject.toml), then stubtest on every compiled module
# of cython_core/ against its .pyi stub. Both must report no error.
#
#   bash .ci/typecheck.sh
#
# kbench.cython_core and kbench.plugins live in cython_core/ and plugins/ (setuptools'
# package-dir), a layout mypy cannot follow; the checks run on a tree laid out as the
# installed package is: kbench/'s files, with cython_core/ and plugins/ in it, all symbolic
# links to the checkout (so messages name the checkout's files by their package path).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VPY="$ROOT/.venv/bin/python"
TREE=$(mktemp -d "${TMPDIR:-/tmp}/kbench-typecheck.XXXXXX")
trap 'rm -rf "$TREE"' EXIT
mkdir "$TREE/kbench"
for entry in "$ROOT"/kbench/*; do
  ln -s "$entry" "$TREE/kbench/$(basename "$entry")"
done
ln -s "$ROOT/cython_core" "$TREE/kbench/cython_core"
ln -s "$ROOT/plugins" "$TREE/kbench/plugins"
cp "$ROOT/pyproject.toml" "$TREE/"
cd "$TREE"

start=$(date +%s)
"$VPY" -m mypy --config-file pyproject.toml -p kbench --exclude '^kbench/(plugins|cython_core)/'
echo "typecheck: mypy clean in $(( $(date +%s) - start )) s"

# Every compiled extension of cython_core/ (whatever modules it holds), each with its stub.
mapfile -t MODULES < <("$VPY" - <<'PYEOF'
import importlib.machinery, pathlib
core = pathlib.Path("kbench/cython_core")
names = sorted({
    p.name.split(".")[0]
    for suffix in importlib.machinery.EXTENSION_SUFFIXES
    for p in core.glob(f"*{suffix}")
})
missing = [n for n in names if not (core / f"{n}.pyi").exists()]
if missing:
    raise SystemExit(f"typecheck: compiled modules without a .pyi stub: {', '.join(missing)}")
print("\n".join(f"kbench.cython_core.{n}" for n in names))
PYEOF
)
start=$(date +%s)
"$VPY" -m mypy.stubtest --mypy-config-file pyproject.toml \
  --allowlist "$ROOT/.ci/stubtest-allowlist.txt" "${MODULES[@]}"
echo "typecheck: stubtest clean on ${#MODULES[@]} compiled modules in $(( $(date +%s) - start )) s"
