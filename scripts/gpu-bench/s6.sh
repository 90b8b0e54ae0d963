# Modes of session 6 (docs/BENCHMARKS.md, "Session 6").
# Sourced by scripts/gpu-bench.sh, whose helpers (bounded, tune, export_ab, ...) these use.

stream_s6a() {  # the GPU tests at session 5's final code, then ncu on the two softmax bf16 shapes that
  local d=$out/a  # miss 95% of the copy bandwidth (soltune's best beside torch.compile's): what limits them
  soltune devices > "$d/devices.txt" 2>&1
  export PATH=/usr/local/cuda/bin:$PATH
  gpu_tests "$d"
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  bounded bash bench/exported_bench.sh "$d/kb.sqlite" "$d/exp" > "$d/exported_build.log" 2>&1
  for c in "softmax 8192x8192 bf16" "softmax 4096x50304 bf16"; do
    set -- $c
    ncu_exported "$d" "$d/ncu_$1_$2_$3.txt" --clock-control none -k regex:'triton|softmax' --section SpeedOfLight \
      --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis --section InstructionStats \
      --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
      -- --problem $1 --shape $2 --dtype $3 --launches 1
  done
  rm -f "$d/exp/exported_bench" "$d/exp/libsoltune_exported.so" "$d/kb.sqlite"
}

stream_s6b() {  # softmax after the bf16 arithmetic rework (cached, multipass), tuned from call 2 of
  local d=$out/a  # session 5's knowledge base (the old texts' bests are the seeds), then exported and
  soltune devices > "$d/devices.txt" 2>&1  # timed beside eager and torch.compile in PyTorch's harness
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  variant_config configs/softmax.yaml "cached, multipass" 61 > "$d/softmax.yaml"
  tune "$d" "$d/softmax.yaml" --evals ${SM_EVALS:-1200} --seconds ${SM_S:-270}
  export_ab "$d" 100 softmax
}

stream_s6c() {  # the norms' rowreg after the bf16 pair packing, tuned from call 2's knowledge base (the
  local d=$out/a  # old texts' bests are the seeds), then the whole library exported and timed beside
  soltune devices > "$d/devices.txt" 2>&1  # eager and torch.compile in PyTorch's harness
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  for p in layernorm rmsnorm; do
    variant_config configs/$p.yaml "rowreg" 62 > "$d/$p.yaml"
    tune "$d" "$d/$p.yaml" --evals ${NORM_EVALS:-480} --seconds ${NORM_S:-110}
  done
  export_ab "$d" 100
}

stream_s6d() {  # longer searches of the tasks short of a target after call 3: softmax bf16 4096x50304
  local d=$out/a  # (94.4% of copy), LayerNorm f32 8192x4096 (94.9%) and RMSNorm f32 8192x4096 (behind
  soltune devices > "$d/devices.txt" 2>&1  # torch.compile), from call 3's knowledge base; then the A/B
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  local t="templates: $PWD/templates"
  printf 'problem: softmax\nvariants: [cached, multipass]\ndtypes: [bf16]\nshapes: [{rows: 4096, cols: 50304}]\nbudget: {evals: 400, seconds: 120}\nseed: 63\n%s\n' "$t" > "$d/sm.yaml"
  printf 'problem: layernorm\nvariants: [rowreg]\ndtypes: [f32]\nshapes: [{rows: 8192, cols: 4096}]\nbudget: {evals: 300, seconds: 80}\nseed: 63\n%s\n' "$t" > "$d/ln.yaml"
  printf 'problem: rmsnorm\nvariants: [rowreg]\ndtypes: [f32]\nshapes: [{rows: 8192, cols: 4096}]\nbudget: {evals: 300, seconds: 80}\nseed: 63\n%s\n' "$t" > "$d/rms.yaml"
  for c in sm ln rms; do tune "$d" "$d/$c.yaml"; done
  export_ab "$d" 100 softmax,layernorm,rmsnorm
}

stream_s6e() {  # the GPU tests after the early prefetch (8bb6839), then GPU busy on single-task runs
  local d=$out/a  # (call 4's three configs, fresh knowledge bases) and on a four-task run (GELU)
  soltune devices > "$d/devices.txt" 2>&1
  export PATH=/usr/local/cuda/bin:$PATH
  gpu_tests "$d"
  local t="templates: $PWD/templates"
  printf 'problem: softmax\nvariants: [cached]\ndtypes: [bf16]\nshapes: [{rows: 4096, cols: 50304}]\nbudget: {evals: 200, seconds: 60}\nseed: 64\n%s\n' "$t" > "$d/sm.yaml"
  printf 'problem: layernorm\nvariants: [rowreg]\ndtypes: [f32]\nshapes: [{rows: 8192, cols: 4096}]\nbudget: {evals: 200, seconds: 60}\nseed: 64\n%s\n' "$t" > "$d/ln.yaml"
  for c in sm ln; do
    for b in soltune_old soltune; do  # soltune_old: b529059, before the early prefetch (packed beside)
      echo "== $c $b" >> "$d/summary.txt"
      SOLTUNE_CACHE_DIR=/tmp/cache-$c-$b bounded $b tune "$d/$c.yaml" --kb "$d/fresh_${c}_$b.sqlite" > "$d/${c}_$b.log" 2>&1
      grep -E "GPU busy|GPU use|compiles:" "$d/${c}_$b.log" >> "$d/summary.txt"
    done
  done
  echo "== gelu" >> "$d/summary.txt"
  bounded soltune tune configs/gelu.yaml --kb "$d/fresh_gelu.sqlite" --evals 240 --seconds 40 > "$d/gelu.log" 2>&1
  grep -E "GPU busy|GPU use|compiles:" "$d/gelu.log" >> "$d/summary.txt"
  rm -f "$d"/fresh_*.sqlite
}

stream_s6f() {  # GPU busy on a lone LayerNorm task with batches of 8 and of 16 (fresh knowledge base and
  local d=$out/a  # compile cache each)
  local t="templates: $PWD/templates"
  for b in 8 16; do
    printf 'problem: layernorm\nvariants: [rowreg]\ndtypes: [f32]\nshapes: [{rows: 8192, cols: 4096}]\nbudget: {evals: 200, seconds: 60}\nseed: 64\nsearch: {batch: %s}\n%s\n' $b "$t" > "$d/ln$b.yaml"
    echo "== ln batch $b" >> "$d/summary.txt"
    SOLTUNE_CACHE_DIR=/tmp/cache-ln$b bounded soltune tune "$d/ln$b.yaml" --kb "$d/fresh_ln$b.sqlite" > "$d/ln$b.log" 2>&1
    grep -E "GPU busy|GPU use|compiles:|^layernorm/rowreg/f32/rows=8192,cols=4096 " "$d/ln$b.log" >> "$d/summary.txt"
  done
  rm -f "$d"/fresh_*.sqlite
}

stream_s6g() {  # RMSNorm f32 8192x4096 at torch.compile's design: soltune's looped kernel (a template copy
  local d=$out/a  # holding only TPR=512, VEC=4, UNROLL=1, BPS=4) and Triton's, their SASS and ncu
  export PATH=/usr/local/cuda/bin:$PATH  # with source counters (where each one's warps stall)
  local t=/tmp/looped-templates
  rm -rf $t && mkdir -p $t && cp -r templates/common templates/rmsnorm $t/
  restrict_knobs $t/rmsnorm/looped.yaml 'TPR=[512]' 'RPB=[1]' 'VEC=[4]' 'UNROLL=[1]' 'STAGE=[0]' 'PERSIST=[0]' \
    'BPS=[4]' 'HINT=[0]'
  printf 'problem: rmsnorm\nvariants: [looped]\ndtypes: [f32]\nshapes: [{rows: 8192, cols: 4096}]\nbudget: {evals: 1}\nseed: 5\ntemplates: %s\n' $t > $d/looped1.yaml
  local sections="--section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats --section SourceCounters --section InstructionStats"
  SOLTUNE_CACHE_DIR=/tmp/ncu-cache bounded ncu --clock-control none --target-processes all -k regex:rmsnorm_looped \
    --launch-count 1 $sections soltune tune $d/looped1.yaml --kb $d/l1.sqlite > "$d/ncu_looped.txt" 2>&1
  bounded bash bench/sass_pair.sh $d/l1.sqlite $t rmsnorm 8192x4096 f32 $d/sass > "$d/sass.log" 2>&1
  (cd bench && bounded ncu --clock-control none --profile-from-start off $sections \
    python3 ncu_torch_compile.py --problem rmsnorm --shape 8192x4096 --dtype f32 > "$d/ncu_triton.txt" 2>&1)
  rm -f $d/l1.sqlite
}

stream_s6h() {  # the GPU tests after size template arguments (cc58362), then RMSNorm looped with WIDTH
  local d=$out/a  # (1fba9c3) tuned from call 4's knowledge base, its odd widths checked, and the
  soltune devices > "$d/devices.txt" 2>&1  # export timed beside PyTorch
  export PATH=/usr/local/cuda/bin:$PATH
  gpu_tests "$d"
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  variant_config configs/rmsnorm.yaml "looped" 66 > "$d/rmsnorm.yaml"
  tune "$d" "$d/rmsnorm.yaml" --evals ${NORM_EVALS:-400} --seconds ${NORM_S:-100}
  variant_config configs/rmsnorm-odd.yaml "looped" 66 > "$d/rmsnorm-odd.yaml"
  bounded soltune tune "$d/rmsnorm-odd.yaml" --kb "$d/odd.sqlite" --evals 160 --seconds 40 > "$d/rmsnorm-odd.log" 2>&1
  grep -E "wrong|launch|status|ok " "$d/rmsnorm-odd.log" | grep -v "^\[" | tail -n 12 >> "$d/summary.txt"
  python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select status, count(*) from results group by 1').fetchall())" \
    "$d/odd.sqlite" >> "$d/summary.txt" 2>&1
  export_ab "$d" 100 rmsnorm
  rm -f "$d/odd.sqlite"
}

stream_s6i() {  # RMSNorm looped with HINT 2 (Triton's L1 policy) tuned from call 8's knowledge base, the
  local d=$out/a  # torch.compile preset measured first; then the export timed beside PyTorch
  soltune devices > "$d/devices.txt" 2>&1
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  variant_config configs/rmsnorm.yaml "looped" 67 > "$d/rmsnorm.yaml"
  tune "$d" "$d/rmsnorm.yaml" --evals ${NORM_EVALS:-400} --seconds ${NORM_S:-100}
  export_ab "$d" 100 rmsnorm
}

stream_s6j() {  # where RMSNorm f32 8192x4096 loses to Triton: DRAM and L2 bytes, stall reasons, for
  local d=$out/a  # soltune's looped (WIDTH 1, torch.compile's point), its rowreg best, and Triton's kernel
  export PATH=/usr/local/cuda/bin:$PATH
  local t=/tmp/one-templates
  rm -rf $t && mkdir -p $t && cp -r templates/common templates/rmsnorm $t/
  restrict_knobs $t/rmsnorm/looped.yaml 'TPR=[512]' 'RPB=[1]' 'VEC=[4]' 'UNROLL=[1]' 'STAGE=[0]' 'PERSIST=[0]' \
    'BPS=[4]' 'HINT=[0]' 'WIDTH=[1]'
  restrict_knobs $t/rmsnorm/rowreg.yaml 'TPR=[128]' 'RPB=[1]' 'VEC=[4]' 'EPT=[8]' 'RED=[1]' 'PERSIST=[0]' 'BPS=[2]' \
    'WREG=[0]' 'PIPE=[0]' 'HINT=[0]'
  local m="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sector_op_read_hit_rate.pct,l1tex__t_sector_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum"
  for v in looped rowreg; do
    printf 'problem: rmsnorm\nvariants: [%s]\ndtypes: [f32]\nshapes: [{rows: 8192, cols: 4096}]\nbudget: {evals: 1}\nseed: 5\ntemplates: %s\n' $v $t > $d/$v.yaml
    SOLTUNE_CACHE_DIR=/tmp/ncu-cache-$v bounded ncu --clock-control none --target-processes all -k regex:rmsnorm_$v \
      --launch-count 1 --metrics $m --section WarpStateStats soltune tune $d/$v.yaml --kb /tmp/$v.sqlite > "$d/ncu_$v.txt" 2>&1
  done
  (cd bench && bounded ncu --clock-control none --profile-from-start off --metrics $m --section WarpStateStats \
    python3 ncu_torch_compile.py --problem rmsnorm --shape 8192x4096 --dtype f32 > "$d/ncu_triton.txt" 2>&1)
}

stream_s6k() {  # the final code's export of the whole library from call 9's knowledge base, timed beside
  local d=$out/a  # eager and torch.compile in PyTorch's harness (100 repetitions)
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  export_ab "$d" 100
  rm -f "$d/kb.sqlite"
}

stream_s6l() {  # LayerNorm looped with WIDTH tuned from call 9's knowledge base, its odd widths checked,
  local d=$out/a  # and the export timed beside PyTorch
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  variant_config configs/layernorm.yaml "looped" 68 > "$d/layernorm.yaml"
  tune "$d" "$d/layernorm.yaml" --evals ${NORM_EVALS:-400} --seconds ${NORM_S:-100}
  variant_config configs/layernorm-odd.yaml "looped" 68 > "$d/layernorm-odd.yaml"
  bounded soltune tune "$d/layernorm-odd.yaml" --kb "$d/odd.sqlite" --evals 160 --seconds 40 > "$d/layernorm-odd.log" 2>&1
  python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select status, count(*) from results group by 1').fetchall())" \
    "$d/odd.sqlite" >> "$d/summary.txt" 2>&1
  export_ab "$d" 100 layernorm
  rm -f "$d/odd.sqlite"
}

stream_s6m() {  # experiment: RMSNorm looped with Triton's whole load policy (L1 eviction priority and L2
  local d=$out/a  # cache hint together), from .gpu/exp (a patched template copy), HINT 0 against 2
  printf 'problem: rmsnorm\nvariants: [looped]\ndtypes: [f32, bf16]\nshapes: [{rows: 8192, cols: 4096}]\nbudget: {evals: 60}\nseed: 9\ntemplates: %s\n' $PWD/.gpu/exp > $d/exp.yaml
  bounded soltune tune $d/exp.yaml --kb $d/exp.sqlite > "$d/exp.log" 2>&1
  python3 - "$d/exp.sqlite" >> "$d/summary.txt" 2>&1 <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for r in c.execute("select dtype, config_key, round(time_us, 2), status from results order by dtype, time_us"):
    print(*r)
PY
}

stream_s6n() {  # the norms' looped variants with HINT 2 (Triton's L1 + L2 policy) tuned from call 12's
  local d=$out/a  # knowledge base, then both exported and timed beside PyTorch
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  for p in rmsnorm layernorm; do
    variant_config configs/$p.yaml "looped" 69 > "$d/$p.yaml"
    tune "$d" "$d/$p.yaml" --evals ${NORM_EVALS:-300} --seconds ${NORM_S:-55}
  done
  export_ab "$d" 100 rmsnorm,layernorm
}
