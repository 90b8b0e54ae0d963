# Modes of session 5 (docs/BENCHMARKS.md, "Session 5").
# Sourced by scripts/gpu-bench.sh, whose helpers (bounded, tune, export_ab, ...) these use.

stream_s5a() {  # the GPU tests at this commit, then the exported kernels of call 4's knowledge base
  local d=$out/a  # (.gpu/kb_s4c4.sqlite), now carrying the cubins soltune timed, in PyTorch's harness
  soltune devices > "$d/devices.txt" 2>&1
  export PATH=/usr/local/cuda/bin:$PATH  # nvcc: the export GPU test and the exported kernels' build
  gpu_tests "$d"
  cp .gpu/kb_s4c4.sqlite "$d/kb.sqlite"
  export_ab "$d" 50 ${AB_PROBLEMS:-layernorm,rmsnorm,softmax,gelu,l1norm}
}

stream_s5b() {  # the GPU tests (the timing gate's among them), the library tuned further from call 4's
  local d=$out/a  # knowledge base with the templates' presets, then the exports in PyTorch's harness
  soltune devices > "$d/devices.txt" 2>&1
  export PATH=/usr/local/cuda/bin:$PATH
  gpu_tests "$d"
  cp .gpu/kb_s4c4.sqlite "$d/kb.sqlite"
  tune "$d" configs/softmax.yaml --evals 3000 --seconds ${SM_S:-100}
  tune "$d" configs/layernorm.yaml --evals 800 --seconds 45
  tune "$d" configs/rmsnorm.yaml --evals 600 --seconds 35
  tune "$d" configs/gelu.yaml --evals 400 --seconds 30
  tune "$d" configs/l1norm.yaml --evals 100 --seconds 12
  export_ab "$d" 50 ${AB_PROBLEMS:-layernorm,rmsnorm,softmax,gelu,l1norm}
}

stream_s5c() {  # the GPU tests at the final code, call 2's exports timed again with 200 repetitions
  local d=$out/a  # beside torch.compile, ncu on two shapes where torch.compile leads, and whether a
  soltune devices > "$d/devices.txt" 2>&1  # fresh compile cache records registers for every candidate
  export PATH=/usr/local/cuda/bin:$PATH
  gpu_tests "$d"
  cp .gpu/kb_s5c2.sqlite "$d/kb.sqlite"
  bounded bash bench/exported_bench.sh "$d/kb.sqlite" "$d/exp" > "$d/exported_build.log" 2>&1
  bounded python3 bench/torch_reference.py --problems softmax,layernorm,rmsnorm --reps 200 \
    --exported "$d/exp/libsoltune_exported.so" --json "$d/torch_ab.json" > "$d/torch_ab.log" 2>&1
  for c in "softmax 32768x1024 bf16" "rmsnorm 8192x4096 f32" "layernorm 32768x1024 bf16"; do
    set -- $c
    ncu_exported "$d" "$d/ncu_$1_$2_$3.txt" --clock-control none -k regex:'triton|softmax|norm' --section SpeedOfLight \
      --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats \
      -- --problem $1 --shape $2 --dtype $3
  done
  rm -f "$d/exp/exported_bench" "$d/exp/libsoltune_exported.so"
  SOLTUNE_CACHE_DIR=/tmp/fresh-cache bounded soltune tune configs/gelu.yaml --kb "$d/fresh.sqlite" --evals 200 \
    --seconds 20 > "$d/fresh_gelu.log" 2>&1
  sqlite3 "$d/fresh.sqlite" "select registers = 0, cache_hit, count(*) from results group by 1, 2" > "$d/fresh_registers.txt" 2>&1 ||
    python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select registers = 0, cache_hit, count(*) from results group by 1, 2').fetchall())" "$d/fresh.sqlite" > "$d/fresh_registers.txt" 2>&1
}

stream_s5d() {  # the GPU tests at the final code, then the norms tuned further from call 2's knowledge
  local d=$out/a  # base under spill pruning and the wider register bounds, exported, in PyTorch's harness
  soltune devices > "$d/devices.txt" 2>&1
  export PATH=/usr/local/cuda/bin:$PATH
  gpu_tests "$d"
  cp .gpu/kb_s5c2.sqlite "$d/kb.sqlite"
  tune "$d" configs/rmsnorm.yaml --evals 600 --seconds ${NORM_S:-50}
  tune "$d" configs/layernorm.yaml --evals 800 --seconds ${NORM_S:-50}
  export_ab "$d" 100 rmsnorm,layernorm
}

stream_s5e() {  # the final code's exports from call 5's knowledge base (every problem), in PyTorch's
  local d=$out/a  # harness beside eager and torch.compile, 100 repetitions each
  soltune devices > "$d/devices.txt" 2>&1
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb_s5c4.sqlite "$d/kb.sqlite"
  export_ab "$d" 100
}

stream_s5f() {  # the norms' full-occupancy row-in-registers points at 8192x4096, measured outright: a
  local d=$out/a  # copy of the templates whose rowreg knobs list only them (same .cu, so the results
  soltune devices > "$d/devices.txt" 2>&1  # count for the real templates), then exported and A/B'd
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb_s5c4.sqlite "$d/kb.sqlite"
  local t=/tmp/occ-templates
  rm -rf $t && mkdir -p $t && cp -r templates/common templates/rmsnorm templates/layernorm $t/
  for p in rmsnorm layernorm; do
    restrict_knobs $t/$p/rowreg.yaml 'TPR=[256, 512, 1024]' 'RPB=[1]' 'EPT=[1, 2, 4]' 'PERSIST=[0]' 'BPS=[2, 4]' \
      'WREG=[0]' 'PIPE=[0]' 'STATS=[0, 1]'
  done
  for p in rmsnorm layernorm; do
    printf 'problem: %s\nvariants: [rowreg]\ndtypes: [f32, bf16]\nshapes: [{rows: 8192, cols: 4096}]\nbudget: {evals: 96, seconds: 45}\nseed: 5\ntemplates: %s\n' $p $t > $d/$p-occ.yaml
    tune "$d" $d/$p-occ.yaml
  done
  export_ab "$d" 100 rmsnorm,layernorm
}

stream_s5g() {  # ncu on RMSNorm looped at torch.compile's point (TPR=512, VEC=4, UNROLL=1, BPS=4), the
  local d=$out/a  # design Triton runs at 63 us and soltune's template at 80: a template copy that
  export PATH=/usr/local/cuda/bin:$PATH  # holds only that configuration, one evaluation under ncu
  local t=/tmp/looped-templates
  rm -rf $t && mkdir -p $t && cp -r templates/common templates/rmsnorm $t/
  restrict_knobs $t/rmsnorm/looped.yaml 'TPR=[512]' 'RPB=[1]' 'VEC=[4]' 'UNROLL=[1]' 'STAGE=[0]' 'PERSIST=[0]' \
    'BPS=[4]' 'HINT=[0]'
  printf 'problem: rmsnorm\nvariants: [looped]\ndtypes: [f32]\nshapes: [{rows: 8192, cols: 4096}]\nbudget: {evals: 1}\nseed: 5\ntemplates: %s\n' $t > $d/looped1.yaml
  SOLTUNE_CACHE_DIR=/tmp/ncu-cache bounded ncu --clock-control none --target-processes all -k regex:rmsnorm_looped \
    --launch-count 2 --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats --section InstructionStats \
    soltune tune $d/looped1.yaml --kb /tmp/looped1.sqlite -q > "$d/ncu_looped.txt" 2>&1
}

stream_s5h() {  # RMSNorm looped with its whole chunks unguarded (two first-pass loads in flight):
  local d=$out/a  # its small-row-occupancy points tuned outright from a template copy, then the
  export PATH=/usr/local/cuda/bin:$PATH  # export beside torch.compile
  cp .gpu/kb_s5c6.sqlite "$d/kb.sqlite"
  local t=/tmp/looped2-templates
  rm -rf $t && mkdir -p $t && cp -r templates/common templates/rmsnorm $t/
  restrict_knobs $t/rmsnorm/looped.yaml 'TPR=[256, 512, 1024]' 'RPB=[1]' 'UNROLL=[1, 2]' 'STAGE=[0]' 'PERSIST=[0]' \
    'BPS=[1, 2, 4]'
  printf 'problem: rmsnorm\nvariants: [looped]\ndtypes: [f32, bf16]\nshapes: [{rows: 8192, cols: 4096}, {rows: 32768, cols: 1024}]\nbudget: {evals: 200, seconds: 50}\nseed: 5\ntemplates: %s\n' $t > $d/looped2.yaml
  tune "$d" $d/looped2.yaml
  export_ab "$d" 100 rmsnorm
}
