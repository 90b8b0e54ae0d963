# Modes of session 13 (docs/BENCHMARKS.md, "Session 13").
# Sourced by scripts/gpu-bench.sh, whose helpers (bounded, tune, gpu_tests, ...) these use.

harness() {  # harness DIR NAME REPS [HARNESS OPTIONS]: DIR/exp's library timed beside PyTorch into DIR/NAME.*
  local d=$1 name=$2 reps=$3
  bounded python3 bench/torch_reference.py --reps "$reps" ${4:-} \
    --exported "$d/exp/libsoltune_exported.so" --json "$d/$name.json" > "$d/$name.log" 2>&1
  awk '/soltune  /{p=$1" "$2" "$3" "$5} /soltune - torch.compile/{print p, $5, $9, $11}' "$d/$name.log"
}

tune_library() {  # tune_library DIR SEED PROBLEM:EVALS:SECONDS...: these configs tuned in turn from
  local d=$1 seed=$2 c p e s  # .gpu/kb.sqlite (copied to DIR/kb.sqlite), then their summaries
  shift 2
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  for c in "$@"; do
    IFS=: read -r p e s <<< "$c"
    library_config $p $seed > "$d/$p.yaml"
    tune "$d" "$d/$p.yaml" --evals $e --seconds $s
  done
  grep -h -A40 "^summary on" "$d"/*.log | grep -v "^--$" | cut -c1-200
}

harness_both() {  # harness_both DIR REPS [MORE OPTIONS]: DIR/kb.sqlite exported, built and timed beside PyTorch,
  local d=$1 reps=$2 opts="--copy --interleave --order shuffle ${3:-}"  # cold for all, then by the
  export_libs "$d" "" > /dev/null                                          # harness's default
  harness "$d" torch_cold "$reps" "$opts --reset-persisting"
  harness "$d" torch_default "$reps" "$opts"
  rm -f "$d/exp/exported_bench" "$d/exp/libsoltune_exported.so"
}

stream_s13a() {  # 0.2's timing for the whole library: the GPU tests; all five configs tuned again from
  local d=$out/a  # .gpu/kb.sqlite (session 12's call 19); every problem exported and timed beside PyTorch,
  export PATH=/usr/local/cuda/bin:$PATH  # cold for all (--reset-persisting), then the harness's default
  gpu_tests "$d"
  tune_library "$d" 151 gelu:24:25 l1norm:24:25 rmsnorm:96:45 layernorm:96:45 softmax:400:130
  harness_both "$d" ${REPS:-200}
}

stream_s13b() {  # RMSNorm rowreg's HINT values, every other knob near the picks: every legal configuration at
  local d=$out/a  # both shapes and dtypes (calls 2 and 3 ran a working copy with HINT 3: x evict-first, y by
  mkdir -p "$d/tpl"  # default; 4: x evict-first, y kept in L2; 5: today's 3, y kept)
  cp -r templates/common templates/rmsnorm "$d/tpl/"
  restrict_knobs "$d/tpl/rmsnorm/rowreg.yaml" 'TPR=[32, 64, 256, 512]' 'RPB=[1, 2]' 'VEC=[4, 8]' 'RED=[0]' \
    'PERSIST=[0]' 'BPS=[2]' 'WREG=[0]' 'PIPE=[0]' 'WIDTH=[1]'
  sed -e "s/^problem: rmsnorm/problem: rmsnorm\nvariants: [rowreg]/" -e "s|^kb:.*||" -e "s|^seed: .*|seed: 152\ntemplates: $d/tpl|" \
    configs/rmsnorm.yaml > "$d/rmsnorm.yaml"
  echo "search: {strategy: exhaustive, batch: 16}" >> "$d/rmsnorm.yaml"
  tune "$d" "$d/rmsnorm.yaml" --evals 600 --seconds 200
  sqlite3 "$d/kb.sqlite" "select dtype, shape_key, substr(config_key, instr(config_key, 'HINT='), 6), count(*),
    round(min(time_us), 2), round(avg(time_us), 2) from results where status = 'ok' group by 1, 2, 3"
}

stream_s13c() {  # bench/store_policy.cu (packed): rowreg at Triton's design with each HINT, the kernel and the
  local d=$out/a  # flush after it timed apart and together (does keeping y in L2 only defer its writes?);
  bounded .gpu/bin/store_policy 32768 300 > "$d/store_policy.log" 2>&1  # then s13b's sweep
  cat "$d/store_policy.log"
  stream_s13b
}

stream_s13d() {  # bench/store_policy.cu again, with what a kept y costs the kernels after it (a 24 MiB buffer
  local d=$out/a  # read twice, right after the kernel and after a 512 MiB read, nothing demoted)
  bounded .gpu/bin/store_policy 32768 200 > "$d/store_policy.log" 2>&1
  cat "$d/store_policy.log"
}

stream_s13e() {  # y kept in L2 (HINT 3 in the norms' four templates, 2 in softmax's cached): store_policy at the
  local d=$out/a  # final numbering; RMSNorm, LayerNorm and softmax tuned again from .gpu/kb.sqlite (s13a's);
  export PATH=/usr/local/cuda/bin:$PATH  # all five problems exported and timed beside PyTorch, cold for all
  bounded .gpu/bin/store_policy 32768 200 > "$d/store_policy.log" 2>&1  # and by the harness's default
  cat "$d/store_policy.log"
  tune_library "$d" 153 rmsnorm:160:60 layernorm:160:60 softmax:400:130
  harness_both "$d" ${REPS:-200}
}

stream_s13f() {  # an edited template's new values tried on the old best first: the GPU tests; RMSNorm, LayerNorm
  local d=$out/a  # and softmax tuned again from .gpu/kb.sqlite (s13e's); all five problems exported and timed
  export PATH=/usr/local/cuda/bin:$PATH  # beside PyTorch, cold for all and by the harness's default
  gpu_tests "$d"
  tune_library "$d" 154 rmsnorm:160:60 layernorm:160:60 softmax:400:130
  harness_both "$d" ${REPS:-200}
}

stream_s13g() {  # store_policy with the harness's default (nothing demoted: what a repetition keeps in L2 stays
  local d=$out/a  # for the next); RMSNorm and LayerNorm of .gpu/kb.sqlite (s13f's) timed beside PyTorch again,
  export PATH=/usr/local/cuda/bin:$PATH  # 300 repetitions, cold for all and by the harness's default
  bounded .gpu/bin/store_policy 32768 200 > "$d/store_policy.log" 2>&1
  cat "$d/store_policy.log"
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  harness_both "$d" 300 "--problems rmsnorm,layernorm"
}

stream_s13h() {  # the library of .gpu/kb.sqlite (s13f's) exported and timed beside PyTorch, every problem, 300
  local d=$out/a  # repetitions: cold for all, then by the harness's default
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  harness_both "$d" 300
}

stream_s13i() {  # as s13h for the problems whose picks keep y in L2, soltune writing into an output of its own
  local d=$out/a  # (--own-output): do others gain from the lines it keeps at the block they all share?
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  harness_both "$d" 300 "--problems rmsnorm,layernorm,softmax --own-output"
}
