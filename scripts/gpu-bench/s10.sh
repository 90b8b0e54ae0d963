# Modes of session 10 (docs/BENCHMARKS.md, "Session 10").
# Sourced by scripts/gpu-bench.sh, whose helpers (bounded, tune, export_ab, ...) these use.

row_copy_probe() {  # row_copy_probe DIR: bench/row_copy_probe.cu built and run at softmax's widest
  local d=$1  # rows (bf16 a 512-thread block per row, f32 1024) and at 8192x8192 bf16
  export PATH=/usr/local/cuda/bin:$PATH
  nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/row_copy_probe bench/row_copy_probe.cu > "$d/row_copy_probe.log" 2>&1
  for a in "4096 50304 2 50 512" "4096 50304 4 50 1024" "8192 8192 2 50 512"; do
    bounded /tmp/row_copy_probe $a >> "$d/row_copy_probe.log" 2>&1
  done
  cat "$d/row_copy_probe.log"
}

stream_s10a() {  # the GPU tests; softmax's access pattern as a plain copy; the new `chunked` softmax
  local d=$out/a  # tuned at softmax's ten tasks from session 9's last knowledge base; softmax, LayerNorm
  export PATH=/usr/local/cuda/bin:$PATH  # and RMSNorm exported and timed beside PyTorch, interleaved
  gpu_tests "$d"
  row_copy_probe "$d"
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  variant_config configs/softmax.yaml chunked 101 > "$d/softmax.yaml"
  echo "search: {batch: 16}" >> "$d/softmax.yaml"
  tune "$d" "$d/softmax.yaml" --evals ${EVALS:-480} --seconds ${SECS:-170}
  export_ab "$d" ${REPS:-200} softmax,layernorm,rmsnorm "--copy --interleave"
}

stream_s10b() {  # the row-wise copies again (one block per SM added); does y's address move the time
  local d=$out/a  # (bench/placement.py at the shapes level with torch.compile)? Then softmax, LayerNorm
  export PATH=/usr/local/cuda/bin:$PATH  # and RMSNorm timed in turns again, every output from the allocator
  row_copy_probe "$d"
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  bounded bash bench/exported_bench.sh "$d/kb.sqlite" "$d/exp" > "$d/exported_build.log" 2>&1
  for c in "softmax 32768x1024 f32" "rmsnorm 8192x4096 f32" "layernorm 32768x1024 bf16" "rmsnorm 32768x1024 bf16" \
           "softmax 4096x50304 bf16"; do
    set -- $c
    (cd bench && bounded python3 placement.py --exported "$d/exp/libsoltune_exported.so" --problem $1 --shape $2 \
       --dtype $3 --reps 100) >> "$d/placement.log" 2>&1
  done
  cat "$d/placement.log"
  bounded python3 bench/torch_reference.py --problems softmax,layernorm,rmsnorm --reps ${REPS:-200} --copy --interleave \
    --exported "$d/exp/libsoltune_exported.so" --json "$d/torch_ab.json" > "$d/torch_ab.log" 2>&1
  rm -f "$d/exp/exported_bench" "$d/exp/libsoltune_exported.so" "$d/kb.sqlite"
}

LEVEL_TASKS="softmax:f32:rows=32768,cols=1024 layernorm:bf16:rows=32768,cols=1024 rmsnorm:bf16:rows=32768,cols=1024
  rmsnorm:f32:rows=8192,cols=4096 rmsnorm:f32:rows=32768,cols=1024 layernorm:f32:rows=32768,cols=1024"

stream_s10c() {  # runners_up_ab at 42204d7 (call 3: the runners-up launched the winner's kernels, fixed by 07089e7)
  runners_up_ab "$out/a"
}

stream_s10d() {  # the GPU tests at 07089e7 (exports in a namespace of their own); runners_up_ab again
  gpu_tests "$out/a"
  runners_up_ab "$out/a"
}

runners_up_ab() {  # runners_up_ab DIR: at the shapes level with torch.compile, soltune's winner and its two
  local d=$1  # runners-up (knowledge bases without the best one or two configurations) exported and timed
  export PATH=/usr/local/cuda/bin:$PATH  # in turns beside PyTorch, every output from the allocator; then y's
  cp .gpu/kb.sqlite "$d/kb0.sqlite"     # address swept for all three and for torch.compile's kernel writing into y
  python3 bench/kb_without_best.py "$d/kb0.sqlite" "$d/kb1.sqlite" 1 $LEVEL_TASKS > "$d/runners_up.txt"
  python3 bench/kb_without_best.py "$d/kb0.sqlite" "$d/kb2.sqlite" 2 $LEVEL_TASKS >> "$d/runners_up.txt"
  local all=$(export_libs "$d" 0 1 2)
  bounded python3 bench/torch_reference.py --problems softmax,layernorm,rmsnorm --reps ${REPS:-200} --copy --interleave \
    --exported "$all" --json "$d/torch_ab.json" > "$d/torch_ab.log" 2>&1
  for c in "softmax 32768x1024 f32" "layernorm 32768x1024 bf16" "rmsnorm 32768x1024 bf16" "rmsnorm 8192x4096 f32"; do
    set -- $c
    (cd bench && bounded python3 placement.py --exported "$all" --compiled --problem $1 --shape $2 --dtype $3 \
       --reps 100 --offsets 0,512,4096,65536,1048576,3145728) >> "$d/placement.log" 2>&1
  done
  rm -rf "$d"/kb*.sqlite "$d"/exp*/exported_bench "$d"/exp*/*.so "$d"/exp*/*.cuh
}

stream_s10e() {  # the GPU tests at the larger L2 flush (4 x L2, at least 256 MiB); the level tasks measured
  local d=$out/a  # again from nothing with it (their results removed), beside the old winners and runners-up
  export PATH=/usr/local/cuda/bin:$PATH  # in PyTorch's harness (256 MiB flush), then softmax at a 120 MiB flush
  gpu_tests "$d"
  cp .gpu/kb.sqlite "$d/kb0.sqlite"
  python3 bench/kb_without_best.py "$d/kb0.sqlite" "$d/kb2.sqlite" 2 $LEVEL_TASKS > "$d/runners_up.txt"
  python3 bench/kb_without_best.py "$d/kb0.sqlite" "$d/kbN.sqlite" all $LEVEL_TASKS \
    rmsnorm:bf16:rows=8192,cols=4096 >> "$d/runners_up.txt"
  mkdir -p "$d/t"
  cp "$d/kbN.sqlite" "$d/t/kb.sqlite"
  one_task_config configs/softmax.yaml "cached, multipass, chunked" 111 f32 "rows: 32768" > "$d/t/softmax.yaml"
  variant_config configs/layernorm.yaml "rowreg, looped" 112 | sed '/rows: 8192/d' > "$d/t/layernorm.yaml"
  variant_config configs/rmsnorm.yaml "rowreg, looped" 113 > "$d/t/rmsnorm.yaml"
  tune "$d/t" "$d/t/softmax.yaml" --evals 100 --seconds 40
  tune "$d/t" "$d/t/layernorm.yaml" --evals 200 --seconds 60
  tune "$d/t" "$d/t/rmsnorm.yaml" --evals 400 --seconds 90
  mv "$d/t/kb.sqlite" "$d/kbN.sqlite"
  local all=$(export_libs "$d" 0 2 N)
  bounded python3 bench/torch_reference.py --problems softmax,layernorm,rmsnorm --reps 200 --copy --interleave \
    --exported "$all" --json "$d/torch_ab.json" > "$d/torch_ab.log" 2>&1
  bounded python3 bench/torch_reference.py --problems softmax --reps 200 --copy --interleave --flush-mib 120 \
    --exported "$all" --json "$d/torch_ab120.json" > "$d/torch_ab120.log" 2>&1
  cp "$d/kbN.sqlite" "$d/kb.sqlite"
  rm -rf "$d"/kb[0-9N]*.sqlite "$d"/exp*/exported_bench "$d"/exp*/*.so "$d"/exp*/*.cuh
}

stream_s10f() {  # GELU and L1 norm exported from call 5's knowledge base and timed in turns beside PyTorch (200
  local d=$out/a  # repetitions); then Triton's own design (a warp per row, the templates' inductor presets)
  export PATH=/usr/local/cuda/bin:$PATH  # kept alone where soltune's pick is behind torch.compile, timed in turns
  cp .gpu/kb.sqlite "$d/kb.sqlite"       # beside that pick
  export_ab "$d" 200 gelu,l1norm "--copy --interleave"
  local k1="TPR=32,RPB=1,VEC=8,EPT=4,RED=0,PERSIST=0,BPS=1,WREG=0,PIPE=0,HINT=0"
  local k2="TPR=32,RPB=1,VEC=4,EPT=8,RED=0,PERSIST=0,BPS=1,WREG=0,PIPE=0,HINT=0"
  local k3="TPR=32,RPB=1,VEC=8,EPT=4,STATS=0,RED=0,PERSIST=0,BPS=32,WREG=0,PIPE=0,HINT=0,WIDTH=1"
  python3 bench/kb_without_best.py "$d/kb.sqlite" "$d/p1.sqlite" "keep=$k1" rmsnorm:bf16:rows=32768,cols=1024 > "$d/presets.txt"
  python3 bench/kb_without_best.py "$d/p1.sqlite" "$d/p2.sqlite" "keep=$k2" rmsnorm:f32:rows=32768,cols=1024 >> "$d/presets.txt"
  python3 bench/kb_without_best.py "$d/p2.sqlite" "$d/kbP.sqlite" "keep=$k3" layernorm:bf16:rows=32768,cols=1024 >> "$d/presets.txt"
  local both=$(export_libs "$d" "" P)
  bounded python3 bench/torch_reference.py --problems rmsnorm,layernorm --reps 200 --copy --interleave \
    --exported "$both" --json "$d/torch_presets.json" > "$d/torch_presets.log" 2>&1
  rm -rf "$d"/*.sqlite "$d"/exp*/exported_bench "$d"/exp*/*.so "$d"/exp*/*.cuh
}
