#!/usr/bin/env bash
# Measures the figures of docs/BENCHMARKS.md on a GPU machine and rewrites the page, from a built
# clone (scripts/setup; nvcc, and PyTorch with Triton for the comparisons):
#   bash bench/benchmarks.sh [STEP...]     (default: library gemm pnpoly)
# library   every memory-bound config (configs/{gelu,softmax,layernorm,rmsnorm,l1norm}.yaml) tuned into
#           one knowledge base, exported as a Python package and timed in PyTorch's harness
#           beside eager, torch.compile and a copy, cold (bench/torch_reference.py --reset-persisting)
# fused     the same for the fused chains: configs/{add_rmsnorm,add_rmsnorm_fp8,masked_softmax}.yaml
# gemm      cuBLAS, then soltune's tune of configs/matmul-tensor.yaml (bench/gemm_run.sh)
# epilogue  configs/matmul_epilogue.yaml and configs/swiglu.yaml, each exported as a Python package and
#           timed beside the plain GEMM, eager and torch.compile (bench/torch_epilogue.py)
# fp8       configs/matmul-fp8.yaml, beside torch._scaled_mm (bench/torch_scaled_mm.py)
# attention configs/attention.yaml, exported and timed beside scaled_dot_product_attention
#           (bench/torch_attention.py)
# pnpoly    configs/pnpoly.yaml
# A step's tunes fit one 10-minute command with TUNE_SECONDS at about 100 (fused, epilogue: two or
# three configs) or 300 (fp8, attention).
# Each step's records (bench/figures.py) replace those bench/figures.json held for the same tasks;
# what no step measured again stays, with its own date. bench/render_benchmarks.py then writes the
# page. A step that fails is reported and leaves the file's figures as they were.
# Environment: OUT (the logs, knowledge bases, JSON and copies of the rewritten figures.json and
# BENCHMARKS.md; default gpu-out/bench), SOLTUNE_BIN (default
# build/src/cli/soltune), TUNE_SECONDS (caps every tune's time budget; the configs' own otherwise),
# REPS (the memory-bound harness's repetitions, default 300; the GEMM and attention harnesses take
# GREPS, default 20).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out=${OUT:-gpu-out/bench}
soltune=$(realpath "${SOLTUNE_BIN:-build/src/cli/soltune}")
reps=${REPS:-300}
greps=${GREPS:-20}
cap=${TUNE_SECONDS:+ --seconds $TUNE_SECONDS}
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(library gemm pnpoly)
[ -x "$soltune" ] || { echo "benchmarks: no soltune at $soltune (scripts/setup builds it)" >&2; exit 1; }
mkdir -p "$out"
PATH="$(dirname "$soltune"):$PATH"
export PATH SOLTUNE_BIN="$soltune"
now() { date -u '+%Y-%m-%d %H:%M UTC'; }

# The memory-bound configs named: tuned into one knowledge base, exported, timed in PyTorch's harness.
memory_bound() {
  local set=$1 d=$out/$1 date p logs=()
  shift
  rm -rf "$d" && mkdir -p "$d"
  date=$(now)
  for p in "$@"; do
    echo "== soltune tune configs/$p.yaml"
    # shellcheck disable=SC2086  # $cap is empty or two words
    soltune tune "configs/$p.yaml" --backend cuda --kb "$d/kb.sqlite" $cap > "$d/tune_$p.log" 2>&1 || return 1
    grep -A40 '^summary on' "$d/tune_$p.log" | grep -v '^  '
    logs+=("$d/tune_$p.log")
  done
  local exports=()
  for p in "$@"; do exports+=(--problem "$p"); done
  soltune export --kb "$d/kb.sqlite" "${exports[@]}" --format python -o "$d/exp" > "$d/export.log" 2>&1 || return 1
  local harness="python3 bench/torch_reference.py --copy --interleave --order shuffle --reset-persisting --reps $reps"
  local problems
  problems=$(IFS=,; echo "$*")
  echo "== $harness --problems $problems"
  $harness --problems "$problems" --package "$d/exp/soltune_kernels" --json "$d/torch.json" > "$d/torch.log" 2>&1 || return 1
  grep -E 'soltune - torch.compile' "$d/torch.log" | head -40
  python3 bench/figures.py library --set "$set" --date "$date" --tune-log "${logs[@]}" \
    --tune-command "soltune tune configs/{problem}.yaml --backend cuda --kb KB$cap" \
    --harness "$d/torch.json" --harness-command "$harness --problems $problems --package DIR/soltune_kernels --json FILE" \
    > "$d/records.json"
}

library() { memory_bound library gelu softmax layernorm rmsnorm l1norm; }
fused() { memory_bound fused add_rmsnorm add_rmsnorm_fp8 masked_softmax; }

# A config tuned into the step's knowledge base, its best results written as JSON.
tune_best() {  # DIR CONFIG PROBLEM
  echo "== soltune tune $2"
  # shellcheck disable=SC2086  # $cap is empty or two words
  soltune tune "$2" --backend cuda --kb "$1/kb.sqlite" $cap > "$1/tune_$3.log" 2>&1 || return 1
  grep -A40 '^summary on' "$1/tune_$3.log" | grep -v '^  '
  soltune kb best --kb "$1/kb.sqlite" --problem "$3" --json > "$1/best_$3.json"
}

epilogue() {
  local d=$out/epilogue date p op harness parts=()
  rm -rf "$d" && mkdir -p "$d"
  date=$(now)
  for p in matmul_epilogue swiglu; do
    op=epilogue
    [ "$p" = swiglu ] && op=swiglu
    tune_best "$d" "configs/$p.yaml" "$p" || return 1
    soltune export --kb "$d/kb.sqlite" --problem "$p" --format python --name "$p" -o "$d/pkg" > "$d/export_$p.log" 2>&1 || return 1
    harness="python3 bench/torch_epilogue.py --op $op --reps $greps"
    echo "== $harness"
    $harness --package "$d/pkg/$p" --json "$d/torch_$p.json" > "$d/torch_$p.log" 2>&1 || return 1
    tail -n 12 "$d/torch_$p.log"
    python3 bench/figures.py epilogue --set "$p" --date "$date" --best "$d/best_$p.json" --torch "$d/torch_$p.json" \
      --tune-command "soltune tune configs/$p.yaml --backend cuda --kb KB$cap" \
      --torch-command "$harness --package DIR/$p (DIR: soltune export --format python --name $p)" > "$d/records_$p.json" || return 1
    parts+=("$d/records_$p.json")
  done
  python3 -c 'import json, sys; print(json.dumps([r for f in sys.argv[1:] for r in json.load(open(f))], indent=1))' \
    "${parts[@]}" > "$d/records.json"
}

fp8() {
  local d=$out/fp8 date harness
  rm -rf "$d" && mkdir -p "$d"
  date=$(now)
  tune_best "$d" configs/matmul-fp8.yaml matmul_fp8 || return 1
  harness="python3 bench/torch_scaled_mm.py --reps $greps"
  echo "== $harness"
  $harness --json "$d/torch.json" > "$d/torch.log" 2>&1 || return 1
  tail -n 14 "$d/torch.log"
  python3 bench/figures.py fp8 --set fp8 --date "$date" --best "$d/best_matmul_fp8.json" --torch "$d/torch.json" \
    --tune-command "soltune tune configs/matmul-fp8.yaml --backend cuda --kb KB$cap" --torch-command "$harness" \
    > "$d/records.json"
}

attention() {
  local d=$out/attention date harness
  rm -rf "$d" && mkdir -p "$d"
  date=$(now)
  tune_best "$d" configs/attention.yaml attention || return 1
  soltune export --kb "$d/kb.sqlite" --problem attention --format python --name attn -o "$d/pkg" > "$d/export.log" 2>&1 || return 1
  harness="python3 bench/torch_attention.py --reps $greps"
  echo "== $harness"
  $harness --package "$d/pkg/attn" --json "$d/torch.json" > "$d/torch.log" 2>&1 || return 1
  tail -n 14 "$d/torch.log"
  python3 bench/figures.py attention --set attention --date "$date" --best "$d/best_attention.json" \
    --torch "$d/torch.json" --tune-command "soltune tune configs/attention.yaml --backend cuda --kb KB$cap" \
    --torch-command "$harness --package DIR/attn (DIR: soltune export --format python --name attn)" > "$d/records.json"
}

gemm() {
  local d=$out/gemm date
  rm -rf "$d" && mkdir -p "$d"
  date=$(now)
  echo "== bench/gemm_run.sh"
  OUT=$d bash bench/gemm_run.sh > "$d/table.md" 2> "$d/gemm_run.log" || return 1
  cat "$d/table.md"
  python3 bench/figures.py gemm --set gemm --date "$date" --best "$d/best.json" --cublas "$d/cublas.json" \
    --tune-command "soltune tune configs/matmul-tensor.yaml --backend cuda --evals 320 --seconds ${TUNE_SECONDS:-354} --kb DIR/kb.sqlite -q" \
    --cublas-command "python3 bench/torch_matmul.py --reps 30 --json DIR/cublas.json" > "$d/records.json"
}

pnpoly() {
  local d=$out/pnpoly date
  rm -rf "$d" && mkdir -p "$d"
  date=$(now)
  echo "== soltune tune configs/pnpoly.yaml"
  # shellcheck disable=SC2086
  soltune tune configs/pnpoly.yaml --backend cuda --kb "$d/kb.sqlite" $cap > "$d/tune.log" 2>&1 || return 1
  soltune kb best --kb "$d/kb.sqlite" --problem pnpoly --json > "$d/best.json" || return 1
  python3 bench/figures.py tuned --set pnpoly --date "$date" --best "$d/best.json" \
    --command "soltune tune configs/pnpoly.yaml --backend cuda --kb KB$cap" > "$d/records.json"
}

# The card, as the page states it.
cuda=$("${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
CUDA_RELEASE=$cuda python3 - > "$out/device.json" <<'PY' || { echo "benchmarks: PyTorch with CUDA is needed" >&2; exit 1; }
import json, os, subprocess
import torch
p = torch.cuda.get_device_properties(0)
driver = subprocess.check_output(["nvidia-smi", "-i", "0", "--query-gpu=driver_version", "--format=csv,noheader"],
                                 text=True).strip()
try:
    import triton
    triton_version = triton.__version__
except ImportError:
    triton_version = "absent"
print(json.dumps({"name": torch.cuda.get_device_name(0), "arch": f"sm_{p.major}{p.minor}",
                  "sms": p.multi_processor_count, "driver": driver, "cuda": os.environ["CUDA_RELEASE"],
                  "torch": torch.__version__, "triton": triton_version}))
PY

records=() failed=()
for s in "${steps[@]}"; do
  case "$s" in
    library|fused|gemm|epilogue|fp8|attention|pnpoly) ;;
    *) echo "usage: bash bench/benchmarks.sh [library|fused|gemm|epilogue|fp8|attention|pnpoly]..." >&2; exit 2 ;;
  esac
  if "$s"; then records+=("$out/$s/records.json"); else failed+=("$s"); echo "benchmarks: $s failed (logs in $out/$s)" >&2; fi
done
[ ${#records[@]} -gt 0 ] || exit 1
python3 bench/figures.py merge bench/figures.json "${records[@]}" --device "$out/device.json" > "$out/figures.json" &&
  mv "$out/figures.json" bench/figures.json &&
  python3 bench/render_benchmarks.py bench/figures.json > docs/BENCHMARKS.md || exit 1
cp bench/figures.json docs/BENCHMARKS.md "$out/"  # beside the logs: what a machine that is given back returns
echo "bench/figures.json and docs/BENCHMARKS.md rewritten, copies in $out (${records[*]})"
[ ${#failed[@]} -eq 0 ] || { echo "failed: ${failed[*]}" >&2; exit 1; }
