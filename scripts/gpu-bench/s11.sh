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

timing_templates() {  # timing_templates DIR: RMSNorm's templates in DIR/rmsnorm, their knobs restricted to five
  cp -r templates/common templates/rmsnorm "$1/"  # kernels at f32 32768x1024: looped's pick, rowreg at TPR 32 (Triton's design) and 128, BPS 1 and 16
  restrict_knobs "$1/rmsnorm/rowreg.yaml" 'TPR=[32, 128]' 'RPB=[1]' 'VEC=[4]' 'EPT=[2, 8]' 'RED=[0]' 'PERSIST=[0]' \
    'BPS=[1, 16]' 'WREG=[0]' 'PIPE=[0]' 'HINT=[0]' 'WIDTH=[0]'
  restrict_knobs "$1/rmsnorm/looped.yaml" 'TPR=[64]' 'RPB=[4]' 'VEC=[2]' 'UNROLL=[4]' 'STAGE=[0]' 'PERSIST=[0]' \
    'BPS=[4]' 'HINT=[2]' 'WIDTH=[1]'
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
  timing_templates "$d/tpl"
  local i=0 t
  for t in "{}" "{settle_us: 100}" "{input_sets: 1}" "{gate: false}" "{gate: false, settle_us: 100, input_sets: 1}" "{}"; do
    mkdir -p "$d/t$i"
    timing_config "$d/tpl" $((130 + i)) "$t" > "$d/t$i/rmsnorm.yaml"
    tune "$d/t$i" "$d/t$i/rmsnorm.yaml"
    i=$((i + 1))
  done
  local libs=$(runner_libs "$d")
  bounded python3 bench/torch_reference.py --problems rmsnorm --dtypes f32 --reps 200 --copy --interleave --order shuffle \
    --exported "$libs" --json "$d/torch_abc.json" > "$d/torch_abc.log" 2>&1
  rm -rf "$d"/kb[0ABC].sqlite "$d"/exp*/exported_bench "$d"/exp*/*.so "$d"/exp*/*.cuh
}

runner_libs() {  # runner_libs DIR: RMSNorm f32 32768x1024's looped pick (A), Triton's design (B) and rowreg's
  local d=$1 k  # best (C) kept alone in copies of .gpu/kb.sqlite, each exported and built; prints the libraries
  cp .gpu/kb.sqlite "$d/kb0.sqlite"
  for k in "A TPR=64,RPB=4,VEC=2,UNROLL=4,STAGE=0,PERSIST=0,BPS=4,HINT=2,WIDTH=1" \
           "B TPR=32,RPB=1,VEC=4,EPT=8,RED=0,PERSIST=0,BPS=1,WREG=0,PIPE=0,HINT=0,WIDTH=0" \
           "C TPR=128,RPB=1,VEC=4,EPT=2,RED=0,PERSIST=0,BPS=16,WREG=0,PIPE=0,HINT=0,WIDTH=0"; do
    set -- $k
    python3 bench/kb_without_best.py "$d/kb0.sqlite" "$d/kb$1.sqlite" "keep=$2" rmsnorm:f32:rows=32768,cols=1024 >> "$d/keep.txt"
  done
  export_libs "$d" A B C
}

stream_s11c() {  # the three kernels of s11b and a plain copy timed in turns by bench/timing_conditions.cu under
  local d=$out/a  # soltune's and PyTorch's conditions, one changed at a time; soltune's own timing of them again
  export PATH=/usr/local/cuda/bin:$PATH
  local libs=$(runner_libs "$d")
  nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/timing_conditions bench/timing_conditions.cu -ldl > "$d/timing_conditions.log" 2>&1
  bounded /tmp/timing_conditions 32768 1024 200 ${libs//,/ } >> "$d/timing_conditions.log" 2>&1
  cat "$d/timing_conditions.log"
  mkdir -p "$d/tpl" "$d/t0"
  timing_templates "$d/tpl"
  timing_config "$d/tpl" 140 "{}" > "$d/t0/rmsnorm.yaml"
  tune "$d/t0" "$d/t0/rmsnorm.yaml"
  rm -rf "$d"/kb[0ABC].sqlite "$d"/exp*/exported_bench "$d"/exp*/*.so "$d"/exp*/*.cuh
}

stream_s11d() {  # bench/timing_conditions.cu again with three more conditions: each implementation's repetitions
  local d=$out/a  # in a row (as soltune times a candidate), and an untimed copy of other buffers before every
  export PATH=/usr/local/cuda/bin:$PATH  # flush, in a row and in turns
  local libs=$(runner_libs "$d")
  nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/timing_conditions bench/timing_conditions.cu -ldl > "$d/timing_conditions.log" 2>&1
  bounded /tmp/timing_conditions 32768 1024 200 ${libs//,/ } >> "$d/timing_conditions.log" 2>&1
  cat "$d/timing_conditions.log"
  rm -rf "$d"/kb[0ABC].sqlite "$d"/exp*/exported_bench "$d"/exp*/*.so "$d"/exp*/*.cuh
}

stream_s11e() {  # bench/timing_conditions.cu with other memory read (pages, no dirty lines) or a little written
  local d=$out/a  # (dirty lines, few pages) before each flush; then all of it after 8 GiB allocated and freed
  export PATH=/usr/local/cuda/bin:$PATH  # first, as soltune's worker allocates for its ceiling probes
  local libs=$(runner_libs "$d")
  nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/timing_conditions bench/timing_conditions.cu -ldl > "$d/timing_conditions.log" 2>&1
  bounded /tmp/timing_conditions 32768 1024 200 ${libs//,/ } >> "$d/timing_conditions.log" 2>&1
  CHURN_GIB=8 bounded /tmp/timing_conditions 32768 1024 200 ${libs//,/ } > "$d/timing_conditions_churn.log" 2>&1
  cat "$d/timing_conditions.log" "$d/timing_conditions_churn.log"
  rm -rf "$d"/kb[0ABC].sqlite "$d"/exp*/exported_bench "$d"/exp*/*.so "$d"/exp*/*.cuh
}

stream_s11f() {  # the GPU tests at timing: flush_mib; s11b's five RMSNorm kernels by soltune with the default
  local d=$out/a  # flush and a 512 MiB one; then softmax, LayerNorm and RMSNorm from s11a's knowledge base timed in
  export PATH=/usr/local/cuda/bin:$PATH  # turns beside PyTorch with 256 MiB of other memory read before each
  gpu_tests "$d"                          # flush (the condition soltune's own timing matches)
  mkdir -p "$d/tpl" "$d/t0" "$d/t1"
  timing_templates "$d/tpl"
  timing_config "$d/tpl" 150 "{}" > "$d/t0/rmsnorm.yaml"
  timing_config "$d/tpl" 151 "{flush_mib: 512}" > "$d/t1/rmsnorm.yaml"
  tune "$d/t0" "$d/t0/rmsnorm.yaml"
  tune "$d/t1" "$d/t1/rmsnorm.yaml"
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  local lib=$(export_libs "$d" "")
  bounded python3 bench/torch_reference.py --problems rmsnorm,layernorm,softmax --reps 200 --copy --interleave \
    --order shuffle --cold-mib 256 --exported "$lib" --json "$d/torch_cold.json" > "$d/torch_cold.log" 2>&1
  rm -rf "$d/kb.sqlite" "$d"/exp*/exported_bench "$d"/exp*/*.so "$d"/exp*/*.cuh
}

stream_s11g() {  # softmax and LayerNorm from s11a's knowledge base timed in turns (shuffled) beside PyTorch, the
  local d=$out/a  # default flush only; then s11b's three RMSNorm f32 kernels with 256 MiB of other memory read
  export PATH=/usr/local/cuda/bin:$PATH  # before each flush
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  local lib=$(export_libs "$d" "")
  bounded python3 bench/torch_reference.py --problems softmax,layernorm --reps 200 --copy --interleave --order shuffle \
    --exported "$lib" --json "$d/torch_warm.json" > "$d/torch_warm.log" 2>&1
  local libs=$(runner_libs "$d")
  bounded python3 bench/torch_reference.py --problems rmsnorm --dtypes f32 --reps 200 --copy --interleave --order shuffle \
    --cold-mib 256 --exported "$libs" --json "$d/torch_abc_cold.json" > "$d/torch_abc_cold.log" 2>&1
  rm -rf "$d"/kb*.sqlite "$d"/exp*/exported_bench "$d"/exp*/*.so "$d"/exp*/*.cuh
}

stream_s11h() {  # s11b's three RMSNorm f32 kernels in turns beside PyTorch with 256 MiB of other memory read
  local d=$out/a  # before each flush and the busy-wait ahead of both (no idle before the launch), the order
  export PATH=/usr/local/cuda/bin:$PATH  # bench/timing_conditions.cu found to match soltune's own timing
  local libs=$(runner_libs "$d")
  bounded python3 bench/torch_reference.py --problems rmsnorm --dtypes f32 --reps 200 --copy --interleave --order shuffle \
    --cold-mib 256 --wait before --exported "$libs" --json "$d/torch_abc_cold_before.json" > "$d/torch_abc_cold_before.log" 2>&1
  rm -rf "$d"/kb*.sqlite "$d"/exp*/exported_bench "$d"/exp*/*.so "$d"/exp*/*.cuh
}

stream_s11i() {  # bench/worker_conditions.cpp: the kernels of s11b timed in one process by CudaRunner::run (as
  local d=$out/a  # the worker does), by time_launches on a TaskState of their own, and by a bare loop; with the
  local k="looped:TPR=64,RPB=4,VEC=2,UNROLL=4,STAGE=0,PERSIST=0,BPS=4,HINT=2,WIDTH=1"  # ceilings measured first, then without
  local c="rowreg:TPR=128,RPB=1,VEC=4,EPT=2,RED=0,PERSIST=0,BPS=16,WREG=0,PIPE=0,HINT=0,WIDTH=0"
  local b="rowreg:TPR=32,RPB=1,VEC=4,EPT=8,RED=0,PERSIST=0,BPS=1,WREG=0,PIPE=0,HINT=0,WIDTH=0"
  bounded .gpu/bin/worker_conditions templates 32768 1024 1 2 "$k" "$c" "$b" > "$d/worker_conditions.log" 2>&1
  bounded .gpu/bin/worker_conditions templates 32768 1024 0 2 "$k" "$c" "$b" >> "$d/worker_conditions.log" 2>&1
  cat "$d/worker_conditions.log"
}

stream_s11j() {  # bench/worker_conditions.cpp with the bare loop also on the edge round's inputs, on the bench's
  local d=$out/a  # own x, w and y, and with its own flush buffer too (without the ceilings)
  local k="looped:TPR=64,RPB=4,VEC=2,UNROLL=4,STAGE=0,PERSIST=0,BPS=4,HINT=2,WIDTH=1"
  local c="rowreg:TPR=128,RPB=1,VEC=4,EPT=2,RED=0,PERSIST=0,BPS=16,WREG=0,PIPE=0,HINT=0,WIDTH=0"
  local b="rowreg:TPR=32,RPB=1,VEC=4,EPT=8,RED=0,PERSIST=0,BPS=1,WREG=0,PIPE=0,HINT=0,WIDTH=0"
  bounded .gpu/bin/worker_conditions templates 32768 1024 0 2 "$k" "$c" "$b" > "$d/worker_conditions.log" 2>&1
  cat "$d/worker_conditions.log"
}

stream_s11k() {  # bench/worker_conditions.cpp in steps: the bare loop on the bench's own buffers from a fresh
  local d=$out/a  # process on, after NVML, mapped host memory, 2 GiB untouched, a TaskState and a CudaRunner in turn
  local k="looped:TPR=64,RPB=4,VEC=2,UNROLL=4,STAGE=0,PERSIST=0,BPS=4,HINT=2,WIDTH=1"
  local c="rowreg:TPR=128,RPB=1,VEC=4,EPT=2,RED=0,PERSIST=0,BPS=16,WREG=0,PIPE=0,HINT=0,WIDTH=0"
  local b="rowreg:TPR=32,RPB=1,VEC=4,EPT=8,RED=0,PERSIST=0,BPS=1,WREG=0,PIPE=0,HINT=0,WIDTH=0"
  bounded .gpu/bin/worker_conditions templates 32768 1024 steps 1 "$k" "$c" "$b" > "$d/worker_steps.log" 2>&1
  bounded .gpu/bin/worker_conditions templates 32768 1024 steps 1 "$k" "$c" "$b" >> "$d/worker_steps.log" 2>&1
  cat "$d/worker_steps.log"
}

stream_s11l() {  # bench/worker_conditions.cpp in steps, four more: after CudaRunner::run of each kernel, after 3 s
  local d=$out/a  # idle, after CudaRunner::run again, after 10 s idle (does soltune's evaluation leave a state?)
  local k="looped:TPR=64,RPB=4,VEC=2,UNROLL=4,STAGE=0,PERSIST=0,BPS=4,HINT=2,WIDTH=1"
  local c="rowreg:TPR=128,RPB=1,VEC=4,EPT=2,RED=0,PERSIST=0,BPS=16,WREG=0,PIPE=0,HINT=0,WIDTH=0"
  local b="rowreg:TPR=32,RPB=1,VEC=4,EPT=8,RED=0,PERSIST=0,BPS=1,WREG=0,PIPE=0,HINT=0,WIDTH=0"
  bounded .gpu/bin/worker_conditions templates 32768 1024 steps 1 "$k" "$c" "$b" > "$d/worker_steps.log" 2>&1
  cat "$d/worker_steps.log"
}

stream_s11m() {  # s11l's steps with worker_conditions.cpp of 9a1b5ab: after the runs and a 3 s idle, the bare loop
  stream_s11l    # borrows the TaskState's stream, its flush kernel handle, its events, all three, then runs on a
}                # stream made then and on its own again (prepared in session 11; not run: no device time left)
