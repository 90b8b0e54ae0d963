#!/usr/bin/env bash
# On a GPU machine: a real tuning run killed (SIGKILL) twice and resumed, then checked (no duplicate,
# the whole budget, one finished run), exported, and the header's dispatch run against a CPU
# reference at tuned and untuned sizes. Programs come packed in .gpu/ (see docs/BENCHMARKS.md).
set -u
out=${OUT:-gpu-out}; mkdir -p "$out"
source .gpu/env
export SOLTUNE_CACHE_DIR=/tmp/soltune-cache
kb="$out/resume.sqlite"; evals=96
count() { python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from results').fetchone()[0])" "$kb" 2>/dev/null || echo 0; }
soltune tune configs/gelu.yaml --kb "$kb" --evals $evals -q > "$out/resume1.log" 2>&1 & pid=$!
sleep 7; kill -9 $pid; wait $pid 2>/dev/null; echo "killed after $(count) results"
soltune tune configs/gelu.yaml --kb "$kb" --evals $evals -q --resume > "$out/resume2.log" 2>&1 & pid=$!
sleep 7; kill -9 $pid; wait $pid 2>/dev/null; echo "killed again after $(count) results"
soltune tune configs/gelu.yaml --kb "$kb" --evals $evals --resume > "$out/resume3.log" 2>&1; echo "final resume exit $?"
grep -c '\*  ' "$out/resume3.log" | sed 's/^/replayed lines in the final session: /'
tail -8 "$out/resume3.log"
python3 - "$kb" $evals <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); evals = int(sys.argv[2])
runs = db.execute("select id, status from runs").fetchall()
rows = db.execute("select dtype, shape_key, config_key from results").fetchall()
print(f"runs {runs}; results {len(rows)} (budget {evals}); distinct {len(set(rows))}")
print("RESUME CHECK", "ok" if len(runs) == 1 and runs[0][1] == "finished" and len(rows) == evals == len(set(rows)) else "FAILED")
PY
soltune export --kb "$kb" --problem gelu -o "$out/gelu_resumed.cuh" &&
  nvcc -std=c++17 -O2 -arch=sm_90 -DEXPORTED="\"$out/gelu_resumed.cuh\"" tests/export/gelu_export_check.cu -o /tmp/export_check &&
  /tmp/export_check 2>&1 | tee "$out/export_check.log"
