#!/usr/bin/env bash
# Run the test suite under several OpenBLAS kernels and thread counts.
#
# A result that holds on one CPU can fail on another because OpenBLAS picks a different
# compute kernel (another summation order, FMA or not) for the same call. OPENBLAS_CORETYPE
# forces the kernel of another CPU family on this one, so one machine checks them all.
#
#   bash scripts/check_blas_variants.sh                 # fast tier, 5 kernels x 1 and 2 threads
#   bash scripts/check_blas_variants.sh tests/test_pa.py -k closed   # any pytest arguments
#
# kbench's own vectorised loops (kernel rows, FOGD's sin/cos) choose AVX-512, AVX2 or the
# SSE2 baseline at run time; KBENCH_SIMD caps that choice, so the same run also tests the
# paths of CPUs without AVX-512 or AVX2 (an arm64 build compiles only the baseline path).
#
# Environment: CORETYPES (default "Haswell SkylakeX Zen Sandybridge Prescott"), THREADS
# (default "1 2"), SIMDS (default "base avx2", each run with the machine's own BLAS kernel
# and one thread), PYTEST_WORKERS (default 2). Prints one line per variant and a summary;
# exits non-zero when any variant fails. Logs go to ${LOGDIR:-/tmp/kbench-blas-variants}.
set -uo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-.venv/bin/python}
CORETYPES=${CORETYPES:-"Haswell SkylakeX Zen Sandybridge Prescott"}
THREADS=${THREADS:-"1 2"}
SIMDS=${SIMDS-"base avx2"}
WORKERS=${PYTEST_WORKERS:-2}
LOGDIR=${LOGDIR:-/tmp/kbench-blas-variants}
mkdir -p "$LOGDIR"

if [ "$#" -eq 0 ]; then
  set -- -m "not slow"
fi

# OpenBLAS honours OPENBLAS_CORETYPE only when built with DYNAMIC_ARCH (the wheels NumPy and
# SciPy ship are); say which library and kernel a variant really used.
probe() {
  "$PY" - <<'EOF'
import numpy, scipy.linalg  # noqa: F401  (load both BLAS builds)
from threadpoolctl import threadpool_info
print("; ".join(f"{i['internal_api']} {i.get('version')} {i.get('architecture')} x{i['num_threads']}"
                for i in threadpool_info() if i["user_api"] == "blas"))
EOF
}

failed=0
summary=()
variant() {  # NAME: run pytest with the environment already exported
  local name=$1 log="$LOGDIR/$1.log" blas start rc tail line
  blas=$(probe 2>&1)
  start=$(date +%s)
  "$PY" -m pytest -n "$WORKERS" -q -p no:cacheprovider "${ARGS[@]}" >"$log" 2>&1
  rc=$?
  tail=$(grep -E "^[=]* ?[0-9]+ (passed|failed)" "$log" | tail -1)
  line="$name [$blas]: exit $rc, $(( $(date +%s) - start )) s: ${tail:-no summary, see $log}"
  echo "$line"
  summary+=("$line")
  [ "$rc" -ne 0 ] && failed=$((failed + 1))
}
ARGS=("$@")
for core in $CORETYPES; do
  for threads in $THREADS; do
    export OPENBLAS_CORETYPE="$core" OPENBLAS_NUM_THREADS="$threads"
    variant "${core}-t${threads}"
  done
done
unset OPENBLAS_CORETYPE
for simd in $SIMDS; do
  export KBENCH_SIMD="$simd" OPENBLAS_NUM_THREADS=1
  variant "simd-${simd}"
done
unset OPENBLAS_NUM_THREADS KBENCH_SIMD
echo
echo "check_blas_variants: ${#summary[@]} variants, $failed failed (logs in $LOGDIR)"
[ "$failed" -eq 0 ]
