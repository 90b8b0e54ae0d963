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
