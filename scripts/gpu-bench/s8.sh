# Modes of session 8 (docs/BENCHMARKS.md, "Session 8").
# Sourced by scripts/gpu-bench.sh, whose helpers (bounded, tune, export_ab, ...) these use.

stream_s8a() {  # the GPU tests at HEAD; LayerNorm rowreg with WIDTH (the width compiled in) and WREG
  local d=$out/a  # without PERSIST (weight and bias loaded before the reductions, as Triton does) tuned at
  export PATH=/usr/local/cuda/bin:$PATH  # bf16 32768x1024 from session 7's knowledge base, exported beside
  gpu_tests "$d"  # PyTorch; then softmax bf16 4096x50304 (cached) tuned again beside its run's copy ceiling
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  ln_bf16_ab "$d" 81 ${LN_EVALS:-320} ${LN_S:-90}
  one_task_config configs/softmax.yaml "cached" 81 bf16 "cols: 50304" > "$d/softmax.yaml"
  tune "$d" "$d/softmax.yaml" --evals ${SM_EVALS:-160} --seconds ${SM_S:-70}
}

stream_s8b() {  # the GPU tests at HEAD; then the library from fresh knowledge bases, same seed, by the
  local d=$out/a  # binary before session 8's prior and screen (soltune_old, 1195088, with its templates
  export PATH=/usr/local/cuda/bin:$PATH  # in .gpu/templates_old) and by HEAD's: GPU busy, and what each
  gpu_tests "$d"  # task's first evaluations found (the knowledge bases come back whole)
  local budget="gelu:128:40 l1norm:64:30 rmsnorm:256:50 layernorm:256:50 softmax:960:110"
  for pb in $budget; do
    IFS=: read -r p evals secs <<< "$pb"
    for b in soltune_old soltune; do
      local t=$PWD/templates; [ $b = soltune_old ] && t=$PWD/.gpu/templates_old
      sed -e "s|^kb:.*||" -e "s|^seed: .*|seed: 88\ntemplates: $t|" configs/$p.yaml > "$d/${p}_$b.yaml"
      echo "== $p $b" >> "$d/summary.txt"
      SOLTUNE_CACHE_DIR=/tmp/cache-$b bounded $b tune "$d/${p}_$b.yaml" --evals $evals --seconds $secs \
        --kb "$d/${p}_$b.sqlite" > "$d/${p}_$b.log" 2>&1
      grep -E "GPU busy|compiles:" "$d/${p}_$b.log" >> "$d/summary.txt"
    done
  done
}

stream_s8c() {  # LayerNorm rowreg with HINT 2 (weight and bias evict_last, as Triton loads them) and no
  local d=$out/a  # pivot under STATS 0, tuned at bf16 32768x1024 from call 1's knowledge base (batches of
  export PATH=/usr/local/cuda/bin:$PATH  # 16), then exported and timed beside PyTorch
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  ln_bf16_ab "$d" 83 ${LN_EVALS:-320} ${LN_S:-90}
}

stream_s8d() {  # the GPU tests at HEAD; the whole library exported from call 3's knowledge base and timed
  local d=$out/a  # beside PyTorch (100 repetitions)
  export PATH=/usr/local/cuda/bin:$PATH
  gpu_tests "$d"
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  export_ab "$d" 100
  rm -f "$d/kb.sqlite"
}

stream_s8e() {  # GPU busy of lone LayerNorm f32 8192x4096 tasks at HEAD with the default batch of 8 (fresh
  local d=$out/a  # knowledge base and compile cache each; as session 7's s7b and s7d)
  local t="templates: $PWD/templates"
  for v in rowreg looped; do
    printf 'problem: layernorm\nvariants: [%s]\ndtypes: [f32]\nshapes: [{rows: 8192, cols: 4096}]\nbudget: {evals: 200, seconds: 60}\nseed: 64\n%s\n' $v "$t" > "$d/ln_$v.yaml"
    echo "== ln_$v" >> "$d/summary.txt"
    SOLTUNE_CACHE_DIR=/tmp/cache-$v bounded soltune tune "$d/ln_$v.yaml" --kb "$d/fresh_$v.sqlite" > "$d/ln_$v.log" 2>&1
    grep -E "GPU busy|GPU use|compiles:|^layernorm/.*us" "$d/ln_$v.log" >> "$d/summary.txt"
  done
}

stream_s8f() {  # LayerNorm rowreg with its pivot back under STATS 0, tuned at bf16 32768x1024 from call 3's
  local d=$out/a  # knowledge base (batches of 16), then LayerNorm exported and timed beside PyTorch
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  ln_bf16_ab "$d" 85 ${LN_EVALS:-240} ${LN_S:-70}
}

stream_s8g() {  # the GPU tests at HEAD (after the review's moves of parse_shape and rank_agreement)
  export PATH=/usr/local/cuda/bin:$PATH
  gpu_tests "$out/a"
}
