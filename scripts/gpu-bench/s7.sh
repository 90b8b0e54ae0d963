# Modes of session 7 (docs/BENCHMARKS.md, "Session 7").
# Sourced by scripts/gpu-bench.sh, whose helpers (bounded, tune, export_ab, ...) these use.

ln_odd_width1() {  # ln_odd_width1 DIR: LayerNorm looped at the odd widths, WIDTH 1 only (its unguarded path)
  local d=$1
  mkdir -p "$d/odd" && cp -r templates "$d/w1" && restrict_knobs "$d/w1/layernorm/looped.yaml" 'WIDTH=[1]'
  sed -e "s/^problem: layernorm/problem: layernorm\nvariants: [looped]/" -e "s|^kb:.*||" \
    -e "s|^seed: .*|seed: 7\ntemplates: $d/w1|" configs/layernorm-odd.yaml > "$d/odd/layernorm-odd.yaml"
  tune "$d/odd" "$d/odd/layernorm-odd.yaml" --seconds ${ODD_S:-40}
  rm -rf "$d/w1"
}

stream_s7a() {  # LayerNorm looped with its whole chunks unguarded (WIDTH 1, bdf8d30): the GPU tests, the
  local d=$out/a  # odd widths with WIDTH 1 only, the library's LayerNorm looped tuned from session 6's
  export PATH=/usr/local/cuda/bin:$PATH  # knowledge base, exported and timed beside PyTorch
  gpu_tests "$d"
  ln_odd_width1 "$d"
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  variant_config configs/layernorm.yaml "looped" 71 > "$d/layernorm.yaml"
  tune "$d" "$d/layernorm.yaml" --evals ${NORM_EVALS:-320} --seconds ${NORM_S:-70}
  export_ab "$d" 100 layernorm,rmsnorm
}

stream_s7b() {  # the GPU tests at 16f6aec; GPU busy of lone LayerNorm tasks before (soltune_old, 8164a6b:
  local d=$out/a  # one batch ahead) and after (two); the odd widths under WIDTH 1 (after the sparse-space
  export PATH=/usr/local/cuda/bin:$PATH  # fix); the whole library exported from call 1's knowledge base
  gpu_tests "$d"  # and timed beside PyTorch
  local t="templates: $PWD/templates"
  for v in rowreg looped; do
    printf 'problem: layernorm\nvariants: [%s]\ndtypes: [f32]\nshapes: [{rows: 8192, cols: 4096}]\nbudget: {evals: 200, seconds: 60}\nseed: 64\n%s\n' $v "$t" > "$d/ln_$v.yaml"
    for b in soltune_old soltune; do
      echo "== ln_$v $b" >> "$d/summary.txt"
      SOLTUNE_CACHE_DIR=/tmp/cache-$v-$b bounded $b tune "$d/ln_$v.yaml" --kb "$d/fresh_${v}_$b.sqlite" > "$d/ln_${v}_$b.log" 2>&1
      grep -E "GPU busy|GPU use|compiles:|^layernorm/.*us" "$d/ln_${v}_$b.log" >> "$d/summary.txt"
    done
  done
  ln_odd_width1 "$d"
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  export_ab "$d" 100
}

stream_s7c() {  # LayerNorm bf16 32768x1024 looped, every configuration of RMSNorm looped's winning region
  local d=$out/a  # (WIDTH 1, STAGE 0, a block per row group), then the library's LayerNorm beside PyTorch
  export PATH=/usr/local/cuda/bin:$PATH
  cp -r templates "$d/r" && restrict_knobs "$d/r/layernorm/looped.yaml" 'TPR=[32, 64, 128]' 'RPB=[1, 2, 4]' \
    'VEC=[4, 8]' 'UNROLL=[1, 2]' 'STAGE=[0]' 'PERSIST=[0]' 'BPS=[4, 8]' 'HINT=[0, 2]' 'WIDTH=[1]'
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  printf 'problem: layernorm\nvariants: [looped]\ndtypes: [bf16]\nshapes: [{rows: 32768, cols: 1024}]\nbudget: {evals: 500, seconds: 100}\nseed: 5\ntemplates: %s\n' "$d/r" > "$d/lnb.yaml"
  tune "$d" "$d/lnb.yaml"
  rm -rf "$d/r"
  export_ab "$d" 100 layernorm
}

stream_s7d() {  # GPU busy of lone tasks at 16f6aec (two batches ahead), fresh knowledge base and compile
  local d=$out/a  # cache each: LayerNorm and RMSNorm rowreg f32 8192x4096 with batches of 8 and 16
  local t="templates: $PWD/templates"
  for p in layernorm rmsnorm; do
    for b in 8 16; do
      printf 'problem: %s\nvariants: [rowreg]\ndtypes: [f32]\nshapes: [{rows: 8192, cols: 4096}]\nbudget: {evals: 200, seconds: 60}\nsearch: {batch: %s}\nseed: 64\n%s\n' $p $b "$t" > "$d/${p}_$b.yaml"
      echo "== $p rowreg batch $b" >> "$d/summary.txt"
      SOLTUNE_CACHE_DIR=/tmp/cache-$p-$b bounded soltune tune "$d/${p}_$b.yaml" --kb "$d/fresh_${p}_$b.sqlite" > "$d/${p}_$b.log" 2>&1
      grep -E "GPU busy|GPU use|compiles:|^$p/.*us" "$d/${p}_$b.log" >> "$d/summary.txt"
    done
  done
}

stream_s7e() {  # the GPU tests at HEAD; LayerNorm (rowreg, looped) and RMSNorm looped retuned from call 3's
  local d=$out/a  # knowledge base with blocks per SM up to 32, then both exported and timed beside PyTorch
  export PATH=/usr/local/cuda/bin:$PATH
  gpu_tests "$d"
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  variant_config configs/layernorm.yaml "rowreg, looped" 73 > "$d/layernorm.yaml"
  tune "$d" "$d/layernorm.yaml" --evals ${NORM_EVALS:-480} --seconds ${NORM_S:-100}
  variant_config configs/rmsnorm.yaml "looped" 73 > "$d/rmsnorm.yaml"
  tune "$d" "$d/rmsnorm.yaml" --evals ${NORM_EVALS:-320} --seconds ${NORM_S:-70}
  export_ab "$d" 100 layernorm,rmsnorm
}

stream_s7f() {  # ncu at the instruction level on LayerNorm bf16 32768x1024, the one shape behind
  local d=$out/a  # torch.compile: call 5's export beside torch.compile's kernel
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  bounded bash bench/exported_bench.sh "$d/kb.sqlite" "$d/exp" > "$d/exported_build.log" 2>&1
  ncu_exported "$d" "$d/ncu_layernorm_32768x1024_bf16.txt" --clock-control none -k regex:'triton|norm' \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis \
    --section InstructionStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
    -- --problem layernorm --shape 32768x1024 --dtype bf16 --launches 2
  rm -f "$d/exp/exported_bench" "$d/exp/libsoltune_exported.so" "$d/kb.sqlite"
}
