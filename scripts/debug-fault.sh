#!/usr/bin/env bash
# Debug aid: do faulting kernels (trap, late trap, far out-of-bounds store) show up as faults through
# `soltune tune`? Runs on a copy of
# the gelu problem with deliberately faulting variants. Writes under $OUT.
set -u
out=${OUT:-gpu-out}; mkdir -p "$out"
source .gpu/env
export SOLTUNE_CACHE_DIR=/tmp/soltune-cache
root=/tmp/faulty; rm -rf $root; mkdir -p $root; cp -r templates/gelu $root/
for v in trap late oob; do
  case $v in
    trap) body='if (i == n / 2) __trap(); if (i < n) y[i] = x[i];';;
    late) body='if (i < n) y[i] = x[i]; __syncthreads(); if (i == n / 2) __trap();';;
    oob)  body='if (i < n) y[i + (1LL << 40)] = x[i];';;
  esac
  printf 'template <typename T, int BLOCK>\n__global__ void k_%s(const T* x, T* y, long long n) {\n  const long long i = blockIdx.x * static_cast<long long>(BLOCK) + threadIdx.x;\n  %s\n}\n' $v "$body" > $root/gelu/$v.cu
  printf 'kernel: k_%s\ntemplate_args: [T, BLOCK]\nknobs: {BLOCK: [256]}\nlaunch: {grid: "cdiv(n, BLOCK)", block: BLOCK}\n' $v > $root/gelu/$v.yaml
done
mkdir -p $root/configs
printf 'problem: gelu\nvariants: [trap, late, oob, vectorized]\ndtypes: [f32]\nshapes: [{n: 1000003}]\nbudget: {evals: 8}\nseed: 1\nkb: %s/dbg.sqlite\ntemplates: ../\n' "$out" > $root/configs/dbg.yaml
soltune tune $root/configs/dbg.yaml --kb "$out/dbg.sqlite" 2>&1 | tail -30
python3 - "$out/dbg.sqlite" <<'PY'
import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute("select variant, status, substr(log,1,300) from results"): print(r)
PY
echo "== sanitizer on the worker"
compute-sanitizer --target-processes all --print-limit 3 soltune tune $root/configs/dbg.yaml --kb /tmp/dbg2.sqlite --evals 3 2>&1 | tail -25
