#!/usr/bin/env bash
# The GEMM figures of docs/BENCHMARKS.md on a GPU machine, from the repository root with soltune on
# PATH (bench/benchmarks.sh runs it): cuBLAS through torch.matmul, then soltune's tune of
# configs/matmul-tensor.yaml, both timed cold. Writes $OUT/{cublas.json, tune.txt,
# best.json} and the knowledge base, and prints the table (bench/gemm_table.py).
#   OUT=DIR [TUNE_SECONDS=354] bash bench/gemm_run.sh
set -euo pipefail
: "${OUT:?set OUT to the folder the results go to}"
python3 bench/torch_matmul.py --reps 30 --json "$OUT/cublas.json"
soltune tune configs/matmul-tensor.yaml --backend cuda --evals 320 --seconds "${TUNE_SECONDS:-354}" \
  --kb "$OUT/kb.sqlite" -q > "$OUT/tune.txt"
soltune kb best --kb "$OUT/kb.sqlite" --problem matmul --json > "$OUT/best.json"
python3 bench/gemm_table.py "$OUT/best.json" "$OUT/cublas.json"
