# Modes of session 12 (docs/BENCHMARKS.md, "Session 12").
# Sourced by scripts/gpu-bench.sh, whose helpers (bounded, tune, gpu_tests, ...) these use.

# worker_steps MODE: bench/worker_conditions.cpp's steps (MODE: steps, steps-nvml-first or
# steps-runner-first) at RMSNorm f32 32768x1024 on A (looped, the pick), C and B (Triton's design).
worker_steps() {
  bounded .gpu/bin/worker_conditions templates 32768 1024 "$1" 1 \
    "looped:TPR=64,RPB=4,VEC=2,UNROLL=4,STAGE=0,PERSIST=0,BPS=4,HINT=2,WIDTH=1" \
    "rowreg:TPR=128,RPB=1,VEC=4,EPT=2,RED=0,PERSIST=0,BPS=16,WREG=0,PIPE=0,HINT=0,WIDTH=0" \
    "rowreg:TPR=32,RPB=1,VEC=4,EPT=8,RED=0,PERSIST=0,BPS=1,WREG=0,PIPE=0,HINT=0,WIDTH=0"
}

library_config() {  # library_config PROBLEM SEED: configs/PROBLEM.yaml with this seed, this checkout's
  sed -e "s|^kb:.*||" -e "s|^seed: .*|seed: $2\ntemplates: $PWD/templates|" "configs/$1.yaml"  # templates, no
  echo "search: {batch: 16}"  # knowledge base of its own, batches of 16
}

stream_s12a() {  # the GPU tests at HEAD; then bench/worker_conditions.cpp's steps (s11m's, plus buffers
  local d=$out/a  # allocated late, the TaskState's buffers and kernels loaded again, with their addresses)
  export PATH=/usr/local/cuda/bin:$PATH
  gpu_tests "$d"
  stream_s11l
}

stream_s12b() {  # worker_conditions' steps again, with the TaskState's flush_l2 and soltune's timed loop
  stream_s11l    # (time_launches) on the TaskState's buffers and on the bench's, gated and not
}

stream_s12c() {  # one input set (0.2's timing): the GPU tests; the five RMSNorm f32 32768x1024 kernels
  local d=$out/a  # of session 11 measured by soltune (exhaustive); then all five configs tuned again
  export PATH=/usr/local/cuda/bin:$PATH  # from session 11's knowledge base (its runs relabelled by the
  gpu_tests "$d"                          # migration: every result is measured anew, the old bests seeding)
  mkdir -p "$d/tpl" "$d/t0"
  timing_templates "$d/tpl"
  timing_config "$d/tpl" 131 "{}" > "$d/t0/rmsnorm.yaml"
  tune "$d/t0" "$d/t0/rmsnorm.yaml"
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  local c
  for c in gelu:24:30 l1norm:24:30 rmsnorm:120:70 layernorm:120:70 softmax:480:150; do
    IFS=: read -r p e s <<< "$c"
    library_config $p 132 > "$d/$p.yaml"
    tune "$d" "$d/$p.yaml" --evals $e --seconds $s
  done
  grep -A40 "^summary on" "$d"/*.log | grep -v "^--$" | cut -c1-200
}

stream_s12d() {  # s12c's knowledge base (.gpu/kb.sqlite): every problem exported and timed in turns beside
  local d=$out/a  # PyTorch (shuffled order, 200 repetitions)
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  export_ab "$d" ${REPS:-200} "" "--copy --interleave --order shuffle"
  tail -n 80 "$d/torch_ab.log"
}

stream_s12e() {  # worker_conditions' steps from a fresh process three ways: as before; with NVML started
  local d=$out/a  # before the bench allocates anything; with a CudaRunner started first (as soltune's worker)
  local m
  for m in steps steps-nvml-first steps-runner-first; do
    worker_steps $m > "$d/worker_$m.log" 2>&1
    grep -E "^steps|^fresh|^\+ a Task|run:|^after Cuda|TaskState made now|1-set TaskState again|as run" "$d/worker_$m.log" | cut -c1-75
  done
}

stream_s12f() {  # worker_conditions' steps, with each timing's spread (min, quartiles, max) beside its median
  local d=$out/a
  worker_steps steps > "$d/worker_steps.log" 2>&1
  grep -E "run:|TaskState made now|1-set TaskState again|as run" "$d/worker_steps.log" | cut -c1-160
}

stream_s12g() {  # worker_conditions' steps, ending with the same CUBINs loaded six times over (all kept),
  local d=$out/a  # each instance timed in the bare loop: does a kernel's time follow its code's placement?
  worker_steps steps > "$d/worker_steps.log" 2>&1
  grep -E "^fresh|^\+ a Cuda|^after Cuda|module instance|buffers again" "$d/worker_steps.log" | cut -c1-75
  grep -E "run:" "$d/worker_steps.log" | tail -4 | cut -c1-150
}

stream_s12h() {  # the read ceiling (T_SOL's bandwidth the better of copy and read): the GPU tests; GELU and
  local d=$out/a  # L1 norm tuned again from s12c's knowledge base (.gpu/kb.sqlite, migrated to schema 7);
  export PATH=/usr/local/cuda/bin:$PATH  # their picks, then both timed beside PyTorch
  gpu_tests "$d"
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  local p
  for p in l1norm gelu; do
    library_config $p 133 > "$d/$p.yaml"
    tune "$d" "$d/$p.yaml" --evals 48 --seconds 45
    soltune kb best --kb "$d/kb.sqlite" --problem $p | cut -c1-150
  done
  grep -h "^ceilings" "$d"/*.log
  export_ab "$d" ${REPS:-200} l1norm,gelu "--copy --interleave --order shuffle"
  grep -B1 -A3 "soltune  " "$d/torch_ab.log" | cut -c1-120
}

stream_s12i() {  # worker_conditions' steps, ending with CudaRunner::run's body copied into the bench, whole
  local d=$out/a  # and without one part at a time, beside CudaRunner::run itself
  worker_steps steps > "$d/worker_steps.log" 2>&1
  grep -E "as run|copy:|run:|copied|then Cuda|without" "$d/worker_steps.log" | tail -24 | cut -c1-150
}

stream_s12j() {  # worker_conditions' steps, ending with fresh buffers timed with and without `looped` (HINT=2:
  local d=$out/a  # the weight loaded with an L2 evict_last policy) before the warp-per-row kernels
  worker_steps steps > "$d/worker_steps.log" 2>&1
  grep -E "^fresh process|copied, whole|fresh x|looped first|rowregs only|w written|Persisting" "$d/worker_steps.log" | cut -c1-100
}

stream_s12k() {  # evict_last lines demoted before each flush (cudaCtxResetPersistingL2Cache): the GPU tests;
  local d=$out/a  # the five RMSNorm kernels measured by soltune; RMSNorm and LayerNorm tuned again from
  export PATH=/usr/local/cuda/bin:$PATH  # .gpu/kb.sqlite (s12h's, this session's earlier runs relabelled
  gpu_tests "$d"                          # by hand as timed another way); both timed beside PyTorch with
  mkdir -p "$d/tpl" "$d/t0"               # the harness's flush preceded by the same reset
  timing_templates "$d/tpl"
  timing_config "$d/tpl" 141 "{}" > "$d/t0/rmsnorm.yaml"
  tune "$d/t0" "$d/t0/rmsnorm.yaml"
  sqlite3 "$d/t0/kb.sqlite" "select variant, config_key, round(time_us, 2) from results order by time_us" 2>/dev/null \
    || grep -A4 "^summary" "$d/t0/rmsnorm.log"
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  local p
  for p in rmsnorm layernorm; do
    library_config $p 142 > "$d/$p.yaml"
    tune "$d" "$d/$p.yaml" --evals 120 --seconds 60
    soltune kb best --kb "$d/kb.sqlite" --problem $p | cut -c1-150
  done
  export_ab "$d" ${REPS:-200} rmsnorm,layernorm "--copy --interleave --order shuffle --reset-persisting"
  awk '/soltune  /{p=$1" "$2" "$3" "$5} /soltune - torch.compile/{print p, $5, $8, $10}' "$d/torch_ab.log"
}
