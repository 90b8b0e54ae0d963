# Modes of session 11 (docs/BENCHMARKS.md, "Session 11").
# Sourced by scripts/gpu-bench.sh, whose helpers (bounded, tune, export_libs, ...) these use.

wait_ab() {  # wait_ab DIR PROBLEMS TAG WAITS: DIR/exp's kernels timed in turns (shuffled order) beside PyTorch,
  local d=$1 problems=$2 tag=$3 w  # for each busy-wait position: after the flush (the harness's habit) or
  for w in $4; do                  # before it (the launch right behind the flush, as soltune times)
    bounded python3 bench/torch_reference.py --problems "$problems" --reps ${REPS:-200} --copy --interleave \
      --order shuffle --wait $w --exported "$d/exp/libsoltune_exported.so" --json "$d/torch_${tag}_$w.json" \
      > "$d/torch_${tag}_$w.log" 2>&1
  done
}

stream_s11a() {  # RMSNorm rowreg (WIDTH, HINT 2, BPS 16-32) tuned at its four tasks and softmax cached_sm (one
  local d=$out/a  # row per SM) with cached at bf16 4096x50304, from session 10's last knowledge base; RMSNorm
  export PATH=/usr/local/cuda/bin:$PATH  # timed in turns beside PyTorch with the busy-wait after and before the
  cp .gpu/kb.sqlite "$d/kb.sqlite"        # flush, then softmax with it before
  variant_config configs/rmsnorm.yaml rowreg 121 > "$d/rmsnorm.yaml"
  echo "search: {batch: 16}" >> "$d/rmsnorm.yaml"
  tune "$d" "$d/rmsnorm.yaml" --evals ${EVALS:-320} --seconds ${SECS:-100}
  one_task_config configs/softmax.yaml "cached_sm, cached" 122 bf16 "rows: 4096, cols: 50304" > "$d/softmax.yaml"
  tune "$d" "$d/softmax.yaml" --evals 80 --seconds 50
  export_libs "$d" "" > /dev/null
  wait_ab "$d" rmsnorm rms "after before"
  wait_ab "$d" softmax sm before
  rm -f "$d/exp/exported_bench" "$d/exp/libsoltune_exported.so"
}

timing_config() {  # timing_config TEMPLATES SEED TIMING: RMSNorm f32 32768x1024 with rowreg and looped from
  cat <<YAML  # TEMPLATES, every legal configuration measured (exhaustive), timed as TIMING says
problem: rmsnorm
variants: [rowreg, looped]
dtypes: [f32]
shapes:
  - {rows: 32768, cols: 1024}
budget: {evals: 64, seconds: 120}
seed: $2
templates: $1
backend: cuda
search: {strategy: exhaustive, batch: 8}
timing: $3
YAML
}

stream_s11b() {  # the GPU tests at the run config's timing:; then, at RMSNorm f32 32768x1024, five kernels
  local d=$out/a  # (looped's pick, rowreg's best and Triton's design at BPS 1 and 16) measured by soltune
  export PATH=/usr/local/cuda/bin:$PATH  # under six timings (the default; a 100 us settle; one input set;
  gpu_tests "$d"                          # no gate; all three; the default again), and three of them timed
  mkdir -p "$d/tpl"                         # in turns beside PyTorch
  cp -r templates/rmsnorm "$d/tpl/"
  restrict_knobs "$d/tpl/rmsnorm/rowreg.yaml" 'TPR=[32, 128]' 'RPB=[1]' 'VEC=[4]' 'EPT=[2, 8]' 'RED=[0]' 'PERSIST=[0]' \
    'BPS=[1, 16]' 'WREG=[0]' 'PIPE=[0]' 'HINT=[0]' 'WIDTH=[0]'
  restrict_knobs "$d/tpl/rmsnorm/looped.yaml" 'TPR=[64]' 'RPB=[4]' 'VEC=[2]' 'UNROLL=[4]' 'STAGE=[0]' 'PERSIST=[0]' \
    'BPS=[4]' 'HINT=[2]' 'WIDTH=[1]'
  local i=0 t
  for t in "{}" "{settle_us: 100}" "{input_sets: 1}" "{gate: false}" "{gate: false, settle_us: 100, input_sets: 1}" "{}"; do
    mkdir -p "$d/t$i"
    timing_config "$d/tpl" $((130 + i)) "$t" > "$d/t$i/rmsnorm.yaml"
    tune "$d/t$i" "$d/t$i/rmsnorm.yaml"
    i=$((i + 1))
  done
  cp .gpu/kb.sqlite "$d/kb0.sqlite"
  local k
  for k in "A TPR=64,RPB=4,VEC=2,UNROLL=4,STAGE=0,PERSIST=0,BPS=4,HINT=2,WIDTH=1" \
           "B TPR=32,RPB=1,VEC=4,EPT=8,RED=0,PERSIST=0,BPS=1,WREG=0,PIPE=0,HINT=0,WIDTH=0" \
           "C TPR=128,RPB=1,VEC=4,EPT=2,RED=0,PERSIST=0,BPS=16,WREG=0,PIPE=0,HINT=0,WIDTH=0"; do
    set -- $k
    python3 bench/kb_without_best.py "$d/kb0.sqlite" "$d/kb$1.sqlite" "keep=$2" rmsnorm:f32:rows=32768,cols=1024 >> "$d/keep.txt"
  done
  local libs=$(export_libs "$d" A B C)
  bounded python3 bench/torch_reference.py --problems rmsnorm --dtypes f32 --reps 200 --copy --interleave --order shuffle \
    --exported "$libs" --json "$d/torch_abc.json" > "$d/torch_abc.log" 2>&1
  rm -rf "$d"/kb[0ABC].sqlite "$d"/exp*/exported_bench "$d"/exp*/*.so "$d"/exp*/*.cuh
}
