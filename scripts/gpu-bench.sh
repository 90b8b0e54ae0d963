#!/usr/bin/env bash
# The GPU tests and the benchmarks on a machine with a GPU, from a clone of this repository alone:
#   scripts/gpu-bench.sh tests          build, then every GPU test (ctest label gpu)
#   scripts/gpu-bench.sh bench [STEP]   build, then bench/benchmarks.sh: measure docs/BENCHMARKS.md's
#                                       figures (steps library, fused, gemm, epilogue, fp8, attention,
#                                       pnpoly; library, gemm and pnpoly by default), merge
#                                       them into bench/figures.json and rewrite the page
#   scripts/gpu-bench.sh resume         build, then a real tune killed twice (SIGKILL) and resumed,
#                                       checked (one finished run, the whole budget, no duplicate) and
#                                       exported, the header's dispatch run against a CPU reference
# The build is scripts/setup's (./build, with what apt must add); BUILD=DIR uses a build already made
# there instead. Logs go under $OUT (default ./gpu-out).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mode=${1:-}
[ $# -gt 0 ] && shift
case "$mode" in
  tests|bench|resume) ;;
  *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
if [ -n "${BUILD:-}" ]; then
  build=$BUILD
else
  scripts/setup
  build=build
fi
soltune=$(realpath "$build/src/cli/soltune")
mkdir -p "$out"
export SOLTUNE_CACHE_DIR=${SOLTUNE_CACHE_DIR:-/tmp/soltune-cache}
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee "$out/gpu.txt"
"$soltune" devices 2>&1 | tee -a "$out/gpu.txt"

tests() {
  ctest --test-dir "$build" -L gpu --output-on-failure 2>&1 | tee "$out/tests.log"
}

bench() {
  SOLTUNE_BIN=$soltune OUT=$out/bench bash bench/benchmarks.sh "$@"
}

resume() {  # GELU with 96 evaluations: killed after 7 s twice, then resumed to the end
  local kb=$out/resume.sqlite evals=96 pid
  rm -f "$kb"
  count() { python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from results').fetchone()[0])" "$kb" 2>/dev/null || echo 0; }
  "$soltune" tune configs/gelu.yaml --backend cuda --kb "$kb" --evals $evals -q > "$out/resume1.log" 2>&1 & pid=$!
  sleep 7; kill -9 $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; echo "killed after $(count) results"
  "$soltune" tune configs/gelu.yaml --backend cuda --kb "$kb" --evals $evals -q --resume > "$out/resume2.log" 2>&1 & pid=$!
  sleep 7; kill -9 $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; echo "killed again after $(count) results"
  "$soltune" tune configs/gelu.yaml --backend cuda --kb "$kb" --evals $evals --resume > "$out/resume3.log" 2>&1
  tail -n 8 "$out/resume3.log"
  python3 - "$kb" $evals <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); evals = int(sys.argv[2])
runs = db.execute("select id, status from runs").fetchall()
rows = db.execute("select dtype, shape_key, config_key from results").fetchall()
print(f"runs {runs}; results {len(rows)} (budget {evals}); distinct {len(set(rows))}")
ok = len(runs) == 1 and runs[0][1] == "finished" and len(rows) == evals == len(set(rows))
print("resume check", "ok" if ok else "FAILED")
sys.exit(0 if ok else 1)
PY
  "$soltune" export --kb "$kb" --problem gelu -o "$out/gelu_resumed.cuh"
  "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" -std=c++17 -O2 -arch=native -DEXPORTED="\"$(realpath "$out/gelu_resumed.cuh")\"" \
    tests/export/gelu_export_check.cu -o "$out/export_check"
  "$out/export_check" 2>&1 | tee "$out/export_check.log"
}

"$mode" "$@"
