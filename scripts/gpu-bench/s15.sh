# Modes of session 15 (docs/BENCHMARKS.md, "Session 15").
# Sourced by scripts/gpu-bench.sh, whose helpers (bounded, gpu_tests, ...) and session 13's
# (harness, tune_library, harness_both) these use.

stream_s15a() {  # bench/release_policy.cu (packed): RMSNorm rowreg bf16 and f32 32768x1024 with all of y kept,
  local d=$out/a  # only its end kept, or nothing kept, in turns with Triton's design, cold and by
  bounded .gpu/bin/release_policy 400 > "$d/release_policy.log" 2>&1  # PyTorch's harness's default
  cat "$d/release_policy.log"
}

stream_s15b() {  # templates/common's group_allreduce, ln_stats and eager_ops (the norms' texts changed; RMSNorm
  local d=$out/a o  # rowreg's tree compiles to other code): the GPU tests; RMSNorm and LayerNorm tuned again from
  export PATH=/usr/local/cuda/bin:$PATH  # .gpu/kb.sqlite (s14g's), each old text's best measured first; both exported
  gpu_tests "$d"  # and timed beside PyTorch, every output in the shared block and soltune's in its own, each cold
  tune_library "$d" 157 rmsnorm:160:60 layernorm:160:60  # for all and by the harness's default
  export_libs "$d" "" > /dev/null
  for o in shared own; do
    local more="--problems rmsnorm,layernorm --copy --interleave --order shuffle"
    [ $o = own ] && more="$more --own-output"
    harness "$d" torch_${o}_cold 300 "$more --reset-persisting"
    harness "$d" torch_${o}_default 300 "$more"
  done
  rm -f "$d/exp/exported_bench" "$d/exp/libsoltune_exported.so"
}

stream_s15c() {  # the final code: the GPU tests; .gpu/kb.sqlite (s15b's) exported (a kernel today's text measured
  local d=$out/a o more  # by today's measurement; notes beside the kernels) and timed beside PyTorch, every
  export PATH=/usr/local/cuda/bin:$PATH  # problem, 300 repetitions: every output in the shared block, then
  gpu_tests "$d"                          # soltune's in its own, each cold for all and by the harness's default
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  export_libs "$d" "" > /dev/null
  for o in shared own; do
    more="--copy --interleave --order shuffle"
    [ $o = own ] && more="$more --own-output"
    harness "$d" torch_${o}_cold 300 "$more --reset-persisting"
    harness "$d" torch_${o}_default 300 "$more"
  done
  rm -f "$d/exp/exported_bench" "$d/exp/libsoltune_exported.so" "$d/kb.sqlite"
}

stream_s15d() {  # bench/release_policy.cu (packed) built against s15d_rowreg_head_kept.patch: only y's first
  local d=$out/a  # 16-48 MiB kept (what a kernel keeps is then what it writes first), in turns with Triton's design
  bounded .gpu/bin/release_policy 400 > "$d/release_policy.log" 2>&1
  cat "$d/release_policy.log"
}

stream_s15e() {  # bench/release_policy.cu (packed) built against s15e_rowreg_x_loads.patch: x loaded with an L2
  local d=$out/a  # prefetch size (256 or 128 bytes) or without L1 allocation, y by default or kept
  bounded .gpu/bin/release_policy 400 > "$d/release_policy.log" 2>&1
  cat "$d/release_policy.log"
}

stream_s15f() {  # RMSNorm and LayerNorm bf16 32768x1024 with nothing kept beside the picks (y kept), both in
  local d=$out/a o more lib  # PyTorch's harness in the four conditions: .gpu/kb.sqlite as is (soltune) and
  export PATH=/usr/local/cuda/bin:$PATH  # with those two tasks cut down to their fastest configuration that
  cp .gpu/kb.sqlite "$d/kb.sqlite"       # keeps nothing (soltune#2; bench/kb_without_best.py keep=...)
  python3 bench/kb_without_best.py .gpu/kb.sqlite "$d/kb_t.sqlite" \
    keep=TPR=32,RPB=8,VEC=8,UNROLL=2,STAGE=0,PERSIST=0,BPS=4,HINT=2,WIDTH=1 rmsnorm:bf16:rows=32768,cols=1024
  python3 bench/kb_without_best.py "$d/kb_t.sqlite" "$d/kb2.sqlite" \
    keep=TPR=32,RPB=1,VEC=8,EPT=4,STATS=0,RED=0,PERSIST=0,BPS=32,WREG=0,PIPE=0,HINT=0,WIDTH=1 layernorm:bf16:rows=32768,cols=1024
  lib=$(export_libs "$d" "" 2)
  for o in shared own; do
    more="--problems rmsnorm,layernorm --dtypes bf16 --copy --interleave --order shuffle"
    [ $o = own ] && more="$more --own-output"
    for c in cold default; do
      local extra=""
      [ $c = cold ] && extra="--reset-persisting"
      bounded python3 bench/torch_reference.py --reps 300 $more $extra --exported "$lib" \
        --json "$d/torch_${o}_$c.json" > "$d/torch_${o}_$c.log" 2>&1
      echo "== $o $c"; grep -E "soltune(#2)? +- torch.compile" "$d/torch_${o}_$c.log" | grep -v "^$" | head -8
    done
  done
  rm -f "$d"/exp*/exported_bench "$d"/exp*/libsoltune_exported.so "$d"/kb*.sqlite
}

stream_s15g() {  # the GPU tests at the final code (after the review mend of kb/query.cpp and cli/export_earlier.cpp)
  local d=$out/a
  export PATH=/usr/local/cuda/bin:$PATH
  gpu_tests "$d"
}
