#!/usr/bin/env bash
# asv smoke test: the benchmark suite imports, its signatures check out, a quick run of a
# representative subset succeeds against the installed environment, and the results
# publish as a dashboard that works offline. tests/test_asv.py runs this script and then
# opens the dashboard in headless Chromium.
#
#   .ci/asv_smoke.sh          results and dashboard in .asv/ at the repository root
#   .ci/asv_smoke.sh OUT      ... in OUT instead (a copy of the configuration points there)
#
# PYTHON selects the interpreter with kbench and asv installed (default: .venv/bin/python).
# asv saves results only for a commit of a git repository: this one's HEAD.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PY=${PYTHON:-$ROOT/.venv/bin/python}
CONF=$ROOT/benchmarks/asv.conf.json
HTML=$ROOT/.asv/html

if [ $# -ge 1 ]; then
  mkdir -p "$1"
  OUT=$(cd "$1" && pwd)
  # The same configuration with absolute paths and env, results and html inside OUT, so
  # that a test run neither reads nor overwrites the developer's .asv/; its branch is the
  # one checked out (asv publish shows only commits of the configured branches, and a
  # branch's HEAD is not on main before it is merged).
  BRANCH=$(git symbolic-ref --quiet --short HEAD || echo main)
  "$PY" - "$CONF" "$OUT" "$ROOT" "$BRANCH" <<'PYEOF'
import json, sys
conf, out, root, branch = sys.argv[1:]
text = "\n".join(line for line in open(conf) if not line.lstrip().startswith("//"))
cfg = json.loads(text)
cfg.update(repo=root, benchmark_dir=f"{root}/benchmarks", env_dir=f"{out}/env",
           results_dir=f"{out}/results", html_dir=f"{out}/html", branches=[branch])
json.dump(cfg, open(f"{out}/asv.conf.json", "w"), indent=4)
PYEOF
  CONF=$OUT/asv.conf.json
  HTML=$OUT/html
fi

# Every algorithm on the small binary stream through every algorithm suite, the smallest
# kernel rows, matrix-vector products and weighted sums, the runner and the command's
# start-up: every benchmark function runs once, in well under two minutes on two cores.
BENCH="'binary-d2'\)|KernelRow.*\('rbf', 256, |MatVec.*\(256, |WeightedSum.*\(256, |bench_runner|bench_startup"

asv() { "$PY" -m asv --config "$CONF" "$@"; }
asv machine --yes
asv check -E existing:same
asv run -E existing:same --set-commit-hash "$(git rev-parse HEAD)" --quick --show-stderr --launch-method forkserver --bench "$BENCH"
asv publish
"$PY" -m kbench.cli.main asv offline "$HTML"
echo "kbench: asv smoke test passed; dashboard in $HTML"
