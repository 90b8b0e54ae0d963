# Modes of session 4 (docs/BENCHMARKS.md, "Session 4").
# Sourced by scripts/gpu-bench.sh, whose helpers (bounded, tune, export_ab, ...) these use.

stream_s4b() {  # the library as in final (GPU busy measured on each), then the Triton code
  local d=$out/a  # torch.compile generates for the shapes where it still wins
  soltune devices > "$d/devices.txt" 2>&1
  tune "$d" configs/gelu.yaml --evals 240 --seconds 30
  tune "$d" configs/softmax.yaml --evals ${SM_EVALS:-3600} --seconds ${SM_S:-170}
  tune "$d" configs/layernorm.yaml --evals 1200 --seconds 60
  tune "$d" configs/rmsnorm.yaml --evals 960 --seconds 45
  tune "$d" configs/l1norm.yaml --evals 300 --seconds 30
  bounded python3 bench/inductor_code.py --shapes 32768x1024,16384x256,8192x4096,n=268435456 \
    > "$d/inductor.txt" 2>&1
}

stream_s4() {  # the GPU tests, then s4b
  gpu_tests "$out/a"
  stream_s4b
}

stream_s4c() {  # the library with the pipelined templates, soltune's exported kernels beside eager and
  local d=$out/a  # torch.compile in PyTorch's own harness (same process, flush, inputs), the tails
  mkdir -p "$d/odd"  # the odd-shape sweeps keep their own knowledge base: the export reads the library's
  soltune devices > "$d/devices.txt" 2>&1
  tune "$d" configs/softmax.yaml --evals 3600 --seconds ${SM_S:-90}
  tune "$d" configs/layernorm.yaml --evals 1200 --seconds 45
  tune "$d" configs/rmsnorm.yaml --evals 960 --seconds 35
  tune "$d" configs/gelu.yaml --evals 160 --seconds 15
  tune "$d" configs/l1norm.yaml --evals 200 --seconds 15
  export PATH=/usr/local/cuda/bin:$PATH  # nvcc builds the exported kernels there
  export_ab "$d" 50 ${AB_PROBLEMS:-layernorm,rmsnorm,softmax,l1norm,gelu}
  for p in layernorm-pipe rmsnorm-pipe softmax-pipe; do tune "$d/odd" configs/$p-odd.yaml --evals 96 --seconds 12; done
}

stream_s4d() {  # the pipelined softmax's tails, then softmax tuned further from call 3's knowledge base
  local d=$out/a  # (.gpu/kb_s4c3.sqlite), and the exported kernels in PyTorch's harness again
  mkdir -p "$d/odd"
  cp .gpu/kb_s4c3.sqlite "$d/kb.sqlite"
  soltune devices > "$d/devices.txt" 2>&1
  tune "$d/odd" configs/softmax-pipe-odd.yaml --evals 192 --seconds 40
  tune "$d" configs/softmax.yaml --evals 4800 --seconds ${SM_S:-150}
  export PATH=/usr/local/cuda/bin:$PATH
  export_ab "$d" 50 softmax,rmsnorm,layernorm
}
