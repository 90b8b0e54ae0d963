# Modes of session 9 (docs/BENCHMARKS.md, "Session 9").
# Sourced by scripts/gpu-bench.sh, whose helpers (bounded, tune, export_ab, ...) these use.

# s9a-s9c measured the bulk-copy variants (tma) of softmax, RMSNorm and LayerNorm; they lost everywhere
# and were removed after call 3 (BENCHMARKS, session 9): `git checkout 86fe67c -- templates` restores them.
stream_s9a() {  # the bulk-copy variants (tma) of softmax, RMSNorm and LayerNorm tuned alone at the four
  local d=$out/a  # shapes issue 6 still misses, from session 8's last knowledge base; then the three
  export PATH=/usr/local/cuda/bin:$PATH  # problems exported and timed beside PyTorch (100 repetitions)
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  tma_four "$d" 91 ${EVALS:-160} ${SECS:-40}
  export_ab "$d" 100 softmax,layernorm,rmsnorm
}

tma_four() {  # tma_four DIR SEED EVALS SECONDS: the tma variants alone at issue 6's four open shapes
  local d=$1 seed=$2 evals=$3 secs=$4
  one_task_config configs/softmax.yaml tma $seed f32 "rows: 32768" > "$d/sm_f32.yaml"
  one_task_config configs/softmax.yaml tma $seed bf16 "cols: 50304" > "$d/sm_bf16.yaml"
  one_task_config configs/rmsnorm.yaml tma $seed f32 "rows: 8192" > "$d/rms_f32.yaml"
  one_task_config configs/layernorm.yaml tma $seed bf16 "rows: 32768" > "$d/ln_bf16.yaml"
  for c in ln_bf16 sm_f32 rms_f32 sm_bf16; do tune "$d" "$d/$c.yaml" --evals $evals --seconds $secs; done
}

stream_s9b() {  # the tma variants after the proxy fence and GPB (blocks of several row groups), tuned
  local d=$out/a  # again at the four shapes from call 1's knowledge base
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  tma_four "$d" 92 ${EVALS:-200} ${SECS:-45}
}

stream_s9c() {  # does the last partial wave cost softmax at 4096x50304? cached's best point pinned (a
  local d=$out/a  # template copy) at row counts of whole waves and between (2 rows per SM in bf16, 1 in
  mkdir -p "$d/pin" && cp -r templates "$d/pin/"  # f32); then the tma variants at every library shape
  restrict_knobs "$d/pin/templates/softmax/cached.yaml" 'BLOCK=[512]' 'TPR=[512]' 'VEC=[4, 8]' \
    'EPT=[1]' 'STAGE=[2]' 'REDUCE=[1]' 'GRID=[0]' 'HINT=[0]' 'FAST_EXP=[1]' 'PIPE=[0]'
  for dt in bf16 f32; do
    printf 'problem: softmax\nvariants: [cached]\ndtypes: [%s]\nshapes:\n' $dt > "$d/waves_$dt.yaml"
    for r in 3960 4092 4096 4224; do printf '  - {rows: %s, cols: 50304}\n' $r >> "$d/waves_$dt.yaml"; done
    printf 'budget: {evals: 8, seconds: 60}\nseed: 93\ntemplates: %s\n' "$d/pin/templates" >> "$d/waves_$dt.yaml"
    mkdir -p "$d/w" && tune "$d/w" "$d/waves_$dt.yaml"
  done
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  for p in softmax rmsnorm layernorm; do
    variant_config configs/$p.yaml tma 93 > "$d/tma_$p.yaml"
    local n=160; [ $p = softmax ] && n=400
    tune "$d" "$d/tma_$p.yaml" --evals $n --seconds 60
  done
}

stream_s9d() {  # SASS of soltune's exported LayerNorm and RMSNorm beside torch.compile's, bf16 32768x1024
  local d=$out/a  # (the one shape still behind torch.compile), from call 3's knowledge base
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  for p in layernorm rmsnorm; do
    bounded bash bench/sass_pair.sh "$d/kb.sqlite" templates $p 32768x1024 bf16 "$d/sass_$p" > "$d/sass_$p.log" 2>&1
    rm -rf "$d/sass_$p"/*.cubin "$d/sass_$p/export.json"
  done
  rm -f "$d/kb.sqlite"
}

ln_rowreg_ab() {  # ln_rowreg_ab DIR SEED EVALS SECONDS: LayerNorm rowreg at its four shapes (batches of
  local d=$1  # 16) from .gpu/kb.sqlite, then LayerNorm exported and timed beside PyTorch (100 repetitions)
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  variant_config configs/layernorm.yaml rowreg "$2" > "$d/layernorm.yaml"
  echo "search: {batch: 16}" >> "$d/layernorm.yaml"
  tune "$d" "$d/layernorm.yaml" --evals "$3" --seconds "$4"
  export_ab "$d" 100 layernorm
}

stream_s9e() {  # LayerNorm rowreg without the bf16 pivot and without per-vector zeroing for rows past the
  ln_rowreg_ab "$out/a" 95 ${EVALS:-640} ${SECS:-120}  # last, from call 3's knowledge base
}

stream_s9f() {  # LayerNorm rowreg with WPRE (weight and bias vectors loaded before the last reduction)
  local d=$out/a  # tuned alone at bf16 32768x1024 from call 5's knowledge base, then timed beside PyTorch
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  ln_bf16_ab "$d" 96 ${LN_EVALS:-240} ${LN_S:-70}
}

stream_s9g() {  # the GPU tests at HEAD; the whole library exported from call 6's knowledge base (LayerNorm
  local d=$out/a  # rowreg's final text measured in call 5) and timed beside PyTorch (100 repetitions)
  export PATH=/usr/local/cuda/bin:$PATH
  gpu_tests "$d"
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  export_ab "$d" 100
  rm -f "$d/kb.sqlite"
}

stream_s9h() {  # LayerNorm rowreg with HINT 2's x by plain loads (Triton's LDG.E, where ours read through
  ln_rowreg_ab "$out/a" 97 ${EVALS:-480} ${SECS:-100}  # the read-only path), from call 6's knowledge base
}

stream_s9i() {  # experiment: softmax cached with three blocks per SM at bf16 4096x50304 (a template copy
  local d=$out/a  # whose __launch_bounds__ asks for 3: STAGE 3 with 16 KB of each row in 40 registers and
  mkdir -p "$d/x" && cp -r templates "$d/x/"  # 66 KB in shared memory), beside STAGE 2's best in the same run
  sed -i 's/__global__ void __launch_bounds__(BLOCK)/__global__ void __launch_bounds__(BLOCK, 3)/' "$d/x/templates/softmax/cached.cu"
  restrict_knobs "$d/x/templates/softmax/cached.yaml" 'BLOCK=[512]' 'TPR=[512]' 'VEC=[8]' 'EPT=[1, 2, 3, 4]' \
    'STAGE=[2, 3]' 'REDUCE=[0, 1]' 'GRID=[0]' 'HINT=[0]' 'FAST_EXP=[1]' 'PIPE=[0]'
  printf 'problem: softmax\nvariants: [cached]\ndtypes: [bf16]\nshapes: [{rows: 4096, cols: 50304}]\nbudget: {evals: 16, seconds: 60}\nseed: 98\ntemplates: %s\n' \
    "$d/x/templates" > "$d/x3.yaml"
  tune "$d" "$d/x3.yaml"
}

stream_s9j() {  # the final templates' softmax, LayerNorm and RMSNorm beside PyTorch again, with PyTorch's
  local d=$out/a  # own copy of x into y timed in the same harness: the ceiling the level shapes sit at
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  export_ab "$d" 100 softmax,layernorm,rmsnorm --copy
  rm -f "$d/kb.sqlite"
}

stream_s9k() {  # LayerNorm bf16 32768x1024 at the final templates: ncu and SASS of soltune's export beside
  local d=$out/a  # torch.compile's kernel (the one shape still behind it)
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  bounded bash bench/exported_bench.sh "$d/kb.sqlite" "$d/exp" > "$d/exported_build.log" 2>&1
  ncu_exported "$d" "$d/ncu_layernorm_32768x1024_bf16.txt" --clock-control none -k regex:'triton|norm' \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section InstructionStats \
    --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --metrics \
    dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct \
    -- --problem layernorm --shape 32768x1024 --dtype bf16 --launches 2
  bounded bash bench/sass_pair.sh "$d/kb.sqlite" templates layernorm 32768x1024 bf16 "$d/sass" > "$d/sass.log" 2>&1
  rm -rf "$d/exp/exported_bench" "$d/exp/libsoltune_exported.so" "$d/kb.sqlite" "$d/sass"/*.cubin "$d/sass/export.json"
}

stream_s9l() {  # softmax bf16 4096x50304 at the final templates under ncu (soltune's export only): what
  local d=$out/a  # holds its steady state at 95% of the copy kernel
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  bounded bash bench/exported_bench.sh "$d/kb.sqlite" "$d/exp" > "$d/exported_build.log" 2>&1
  ncu_exported "$d" "$d/ncu_softmax_4096x50304_bf16.txt" --clock-control none -k regex:softmax_cached \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis \
    --section InstructionStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum -- --problem softmax --shape 4096x50304 --dtype bf16 --launches 1
  rm -rf "$d/exp/exported_bench" "$d/exp/libsoltune_exported.so" "$d/kb.sqlite"
}

stream_s9m() {  # soltune's copy probe (the ceiling every run measures) under ncu, as s9l profiled softmax
  local d=$out/a
  export PATH=/usr/local/cuda/bin:$PATH
  bounded ncu --clock-control none --target-processes all -k regex:soltune_copy_probe --launch-count 4 --section SpeedOfLight \
    --section LaunchStats --section ComputeWorkloadAnalysis --section SchedulerStats \
    --section MemoryWorkloadAnalysis --metrics dram__bytes_read.sum,dram__bytes_write.sum \
    soltune devices > "$d/ncu_copy_probe.txt" 2>&1
}
