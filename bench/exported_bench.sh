#!/usr/bin/env bash
# Exports the tuned kernels of every memory-bound problem from a knowledge base and builds
# bench/exported_bench.cu against the headers (nvcc, sm_90): an independent timing of soltune's
# results through its export path, and the program ncu profiles.
#   bench/exported_bench.sh KB OUT_DIR      -> OUT_DIR/{*.cuh, exported_bench, soltune_kernels/}
# Then, on the GPU:  OUT_DIR/exported_bench                      (medians of 50 flushed runs)
#                    EXPORTED_BENCH_PROFILE=1 ncu --clock-control none -k regex:'softmax|norm|gelu' OUT_DIR/exported_bench
set -euo pipefail
kb=$1 out=$2
here=$(cd "$(dirname "$0")/.." && pwd)
soltune=${SOLTUNE_BIN:-$here/build/src/cli/soltune}
templates=${SOLTUNE_TEMPLATES:-$here/templates}  # those of the tuning run (export checks)
cuda=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$out"
# A problem without a result in the knowledge base (not tuned, or timed only another way) is left
# out of both builds (SOLTUNE_NO_<PROBLEM>), with a note; none at all is an error.
skip=() kept=()
for p in gelu softmax layernorm rmsnorm l1norm; do
  if "$soltune" export --kb "$kb" --problem "$p" --templates "$templates" -o "$out/$p.cuh" > /dev/null; then
    kept+=(--problem "$p")
  else
    echo "exported_bench: $p left out (no kernel to export)" >&2
    rm -f "$out/$p.cuh"
    skip+=("-DSOLTUNE_NO_${p^^}")
  fi
done
[ "${#kept[@]}" -gt 0 ] || { echo "exported_bench: nothing to export from $kb" >&2; exit 1; }
"$cuda/bin/nvcc" -std=c++20 -O2 -arch=sm_90 "${skip[@]}" -I"$out" -I"$cuda/include/cccl" "$here/bench/exported_bench.cu" -o "$out/exported_bench"
echo "$out/exported_bench"
# The same kernels as a Python package for bench/torch_reference.py --package (PyTorch's harness).
"$soltune" export --kb "$kb" "${kept[@]}" --templates "$templates" --format python -o "$out" > /dev/null
echo "$out/soltune_kernels"
