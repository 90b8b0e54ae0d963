#!/usr/bin/env bash
# One build-check-measure cycle on a GPU machine, with programs packed by ../shared/gpu/pack into
# .gpu/ (see docs/BENCHMARKS.md). Writes logs and the knowledge base under $OUT (or ./gpu-out).
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
source .gpu/env
export SOLTUNE_CACHE_DIR=/tmp/soltune-cache SOLTUNE_SOURCE_DIR=$PWD SOLTUNE_BIN=$PWD/.gpu/bin/soltune
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee "$out/gpu.txt"
echo "== devices"; soltune devices 2>&1 | tee -a "$out/gpu.txt"
echo "== gpu tests"
for t in .gpu/bin/*_test; do "$t" --gtest_brief=1 2>&1 | tail -n 25; done | tee "$out/tests.log"
echo "== tune"
soltune tune configs/gelu.yaml --kb "$out/h200.sqlite" "$@" 2>&1 | tee "$out/tune.log" | grep -v '^\[' 
echo "== repeat bench"
repeat_timing .gpu/bin/soltune configs/gelu.yaml f32 268435456 \
  "BLOCK=128,VEC=4,EPT=2,GRID_STRIDE=0,BLOCKS_PER_SM=1,FAST_TANH=0,CACHE_HINT=1" 5 2>&1 | tee "$out/repeat.log"
echo "== export"
soltune export --kb "$out/h200.sqlite" --problem gelu -o "$out/gelu_h200.cuh" &&
  nvcc -std=c++17 -O2 -arch=sm_90 -DEXPORTED="\"$out/gelu_h200.cuh\"" tests/export/gelu_export_check.cu -o /tmp/export_check &&
  /tmp/export_check 2>&1 | tee "$out/export_check.log"
[ -n "${WITH_TORCH:-}" ] || exit 0
echo "== torch reference figures"
python3 - <<'PY' 2>&1 | tee "$out/torch.log"
import torch, triton.testing as tt
for dt in (torch.float32, torch.bfloat16):
    x = torch.randn(1 << 28, device="cuda", dtype=dt) * 3
    f = lambda: torch.nn.functional.gelu(x, approximate="tanh")
    g = lambda: 0.5 * x * (1 + torch.tanh(0.7978845608028654 * (x + 0.044715 * torch.pow(x, 3))))
    c = torch.compile(lambda t: torch.nn.functional.gelu(t, approximate="tanh"))
    for name, fn in (("eager F.gelu(tanh)", f), ("eager formula", g), ("torch.compile", lambda: c(x))):
        ms = tt.do_bench(fn, warmup=50, rep=400, return_mode="median")
        print(f"{dt} 2^28 {name}: {ms*1000:.1f} us, {2*x.numel()*x.element_size()/ms/1e6:.0f} GB/s")
PY
