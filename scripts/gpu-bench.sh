#!/usr/bin/env bash
# A measurement session on a GPU machine with two GPUs (device kind nvidia-h200-x2), programs packed
# by ../shared/gpu/pack into .gpu/ (docs/BENCHMARKS.md). Two streams run side by side, one per GPU,
# each process seeing only its own GPU, so no timing shares a device. Everything lands under $OUT,
# packed into one archive at the end (the device tool returns at most 8 files).
#   scripts/gpu-bench.sh tune        the memory-bound library (issue 6) and the GPU tests
#   scripts/gpu-bench.sh landscapes  exhaustive landscapes (issue 4) and PyTorch's figures
#   tune1, landscapes1               the same on a machine with one GPU, one after another
#   tests-l1norm                     the GPU tests, then the l1norm landscape (resumed from
#                                    .gpu/partial/ when an earlier call was cut short)
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out/a" "$out/b"
source .gpu/env
export SOLTUNE_CACHE_DIR=/tmp/soltune-cache SOLTUNE_SOURCE_DIR=$PWD SOLTUNE_BIN=$PWD/.gpu/bin/soltune
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$out/gpu.txt"
date -u >> "$out/gpu.txt"

bounded() {  # runs a command until the session's deadline; SIGINT lets soltune record what it has
  local left=$((deadline - $(date +%s)))
  if [ "$left" -lt 15 ]; then echo "skipped (no time left): $*"; return 124; fi
  timeout -s INT -k 15 "$left" "$@"
}

tune() {  # tune DIR CONFIG [options]: one run, its log, its summary
  local dir=$1 cfg=$2; shift 2
  local name=$(basename "$cfg" .yaml)
  echo "== soltune tune $cfg $*" | tee -a "$dir/summary.txt"
  bounded soltune tune "$cfg" --kb "$dir/kb.sqlite" "$@" > "$dir/$name.log" 2>&1
  echo "exit $?" >> "$dir/$name.log"
  grep -v '^\[' "$dir/$name.log" | tail -n 60 >> "$dir/summary.txt"
}

stream_tune_a() {
  local d=$out/a
  soltune devices > "$d/devices.txt" 2>&1
  for p in softmax layernorm rmsnorm l1norm; do tune "$d" configs/$p-odd.yaml --seconds 25; done
  tune "$d" configs/softmax.yaml --evals 900 --seconds 240
  tune "$d" configs/layernorm.yaml --evals 300 --seconds 100
}
stream_tune_b() {
  local d=$out/b
  soltune devices > "$d/devices.txt" 2>&1
  for t in .gpu/bin/*_test; do "$t" --gtest_brief=1 2>&1 | tail -n 25; done > "$d/tests.log"
  tune "$d" configs/gelu.yaml --evals 320 --seconds 90
  tune "$d" configs/l1norm.yaml --evals 160 --seconds 60
  tune "$d" configs/rmsnorm.yaml --evals 300 --seconds 100
}
stream_tune_single() {  # one GPU: the library with smaller budgets, one run after another
  local d=$out/a
  soltune devices > "$d/devices.txt" 2>&1
  for p in softmax layernorm rmsnorm l1norm; do tune "$d" configs/$p-odd.yaml --evals 64 --seconds 18; done
  tune "$d" configs/softmax.yaml --evals 600 --seconds 150
  tune "$d" configs/layernorm.yaml --evals 200 --seconds 50
  tune "$d" configs/rmsnorm.yaml --evals 200 --seconds 50
  tune "$d" configs/l1norm.yaml --evals 100 --seconds 35
  tune "$d" configs/gelu.yaml --evals 160 --seconds 40
}
stream_landscapes_a() {
  local d=$out/a
  soltune devices > "$d/devices.txt" 2>&1
  bounded soltune landscape configs/gelu.yaml --dtype f32 --shape n=268435456 -o "$d/gelu_f32_landscape.json" > "$d/landscape_gelu.log" 2>&1
  bounded soltune landscape configs/softmax.yaml --variant cluster --dtype f32 --shape rows=8192,cols=8192 \
    -o "$d/softmax_f32_landscape.json" > "$d/landscape_softmax.log" 2>&1
  bounded soltune landscape configs/landscapes/l1norm.yaml --dtype f32 --batch 96 \
    -o "$d/l1norm_f32_landscape.json" > "$d/landscape_l1norm.log" 2>&1
}
stream_last() {  # the third landscape, then PyTorch's figures for the row-wise problems
  local d=$out/a
  bounded soltune landscape configs/landscapes/rmsnorm.yaml --variant rowreg --batch 64 \
    -o "$d/rmsnorm_f32_landscape.json" > "$d/landscape_rmsnorm.log" 2>&1
  bounded python3 bench/torch_reference.py --problems softmax,layernorm,rmsnorm --reps 30 --json "$d/torch.json" > "$d/torch.log" 2>&1
}
gpu_tests() {  # every packed test binary, one line per test (ctest's files name this machine's paths)
  local d=$1
  for t in .gpu/bin/*_test; do bounded "$t" 2>&1 | grep -E '^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED|tests ran'; done > "$d/tests.log"
  tail -n 8 "$d/tests.log"
}
export_ab() {  # export_ab DIR REPS [PROBLEMS [HARNESS OPTIONS]]: DIR/kb.sqlite exported and built
  local d=$1 reps=$2 problems=${3:-}  # (bench/exported_bench.sh), its kernels timed in PyTorch's harness
  bounded bash bench/exported_bench.sh "$d/kb.sqlite" "$d/exp" > "$d/exported_build.log" 2>&1  # beside eager and torch.compile
  bounded python3 bench/torch_reference.py ${problems:+--problems $problems} --reps $reps ${4:-} \
    --exported "$d/exp/libsoltune_exported.so" --json "$d/torch_ab.json" > "$d/torch_ab.log" 2>&1
  rm -f "$d/exp/exported_bench" "$d/exp/libsoltune_exported.so"
}
restrict_knobs() {  # restrict_knobs YAML 'KNOB=[values]'...: a template copy whose knobs list only these
  local f=$1; shift
  python3 - "$f" "$@" <<'PY'
import re, sys
f = sys.argv[1]
s = open(f).read()
for kv in sys.argv[2:]:
    knob, vals = kv.split("=", 1)
    s = re.sub(rf"^(  {knob}: \{{values: )\[[^\]]*\]", rf"\g<1>{vals}", s, flags=re.M)
open(f, "w").write(s)
PY
}
variant_config() {  # variant_config CONFIG VARIANTS SEED: the config with only these variants (e.g.
  local cfg=$1 variants=$2 seed=$3  # "rowreg" or "cached, multipass"), this seed, this checkout's
  local p=$(sed -n 's/^problem: *//p' "$cfg")  # templates and no knowledge base of its own, on stdout
  sed -e "s/^problem: $p/problem: $p\nvariants: [$variants]/" -e "s|^kb:.*||" -e "s|^seed: .*|seed: $seed\ntemplates: $PWD/templates|" "$cfg"
}
landscape_resumed() {  # landscape_resumed DIR FILE CONFIG [options]: continues .gpu/partial/FILE if there
  local d=$1 f=$2 cfg=$3; shift 3
  [ -f ".gpu/partial/$f" ] && cp ".gpu/partial/$f" "$d/$f"
  bounded soltune landscape "$cfg" --resume -o "$d/$f" "$@" > "$d/${f%.json}.log" 2>&1
  echo "exit $?" >> "$d/${f%.json}.log"
  tail -n 2 "$d/${f%.json}.log"
}
stream_tests_l1norm() {
  local d=$out/a
  soltune devices > "$d/devices.txt" 2>&1
  gpu_tests "$d"
  landscape_resumed "$d" l1norm_f32_landscape.json configs/landscapes/l1norm.yaml --dtype f32 --batch 96
}
stream_l1norm_tune() {  # finish the l1norm landscape, then the row-wise problems with larger budgets
  local d=$out/a
  landscape_resumed "$d" l1norm_f32_landscape.json configs/landscapes/l1norm.yaml --dtype f32 --batch 96
  tune "$d" configs/layernorm.yaml --evals 240 --seconds ${LN_S:-170}
  tune "$d" configs/softmax.yaml --evals 600 --seconds ${SM_S:-260}
}
stream_tune_big() {  # the library with budgets of about 60-100 evaluations per task, then PyTorch's
  local d=$out/a    # GELU and L1 norm figures
  soltune devices > "$d/devices.txt" 2>&1
  tune "$d" configs/softmax.yaml --evals 2400 --seconds ${SM_S:-270}
  tune "$d" configs/layernorm.yaml --evals 640 --seconds 70
  tune "$d" configs/rmsnorm.yaml --evals 480 --seconds 45
  tune "$d" configs/gelu.yaml --evals 240 --seconds 30
  tune "$d" configs/l1norm.yaml --evals 200 --seconds 30
  bounded python3 bench/torch_reference.py --problems gelu,l1norm --reps 30 --json "$d/torch.json" > "$d/torch.log" 2>&1
}
stream_final() {  # the GPU tests, the library with budgets of about 100-150 evaluations per task
  local d=$out/a  # (GPU busy measured on each), then PyTorch's row-wise figures beside them
  soltune devices > "$d/devices.txt" 2>&1
  gpu_tests "$d"
  tune "$d" configs/gelu.yaml --evals 240 --seconds 30
  tune "$d" configs/softmax.yaml --evals ${SM_EVALS:-3600} --seconds ${SM_S:-190}
  tune "$d" configs/layernorm.yaml --evals 1200 --seconds 70
  tune "$d" configs/rmsnorm.yaml --evals 960 --seconds 50
  tune "$d" configs/l1norm.yaml --evals 300 --seconds 30
  bounded python3 bench/torch_reference.py --problems softmax,layernorm,rmsnorm --reps 50 --json "$d/torch.json" > "$d/torch.log" 2>&1
}
stream_s4b() {  # the library as in final (GPU busy measured on each), then the Triton code
  local d=$out/a  # torch.compile generates for the shapes where it still wins
  soltune devices > "$d/devices.txt" 2>&1
  tune "$d" configs/gelu.yaml --evals 240 --seconds 30
  tune "$d" configs/softmax.yaml --evals ${SM_EVALS:-3600} --seconds ${SM_S:-170}
  tune "$d" configs/layernorm.yaml --evals 1200 --seconds 60
  tune "$d" configs/rmsnorm.yaml --evals 960 --seconds 45
  tune "$d" configs/l1norm.yaml --evals 300 --seconds 30
  bounded python3 bench/inductor_code.py --shapes 32768x1024,16384x256,8192x4096,n=268435456 \
    > "$d/inductor.txt" 2>&1
}
stream_s4() {  # the GPU tests, then s4b
  gpu_tests "$out/a"
  stream_s4b
}
stream_s4c() {  # the library with the pipelined templates, soltune's exported kernels beside eager and
  local d=$out/a  # torch.compile in PyTorch's own harness (same process, flush, inputs), the tails
  mkdir -p "$d/odd"  # the odd-shape sweeps keep their own knowledge base: the export reads the library's
  soltune devices > "$d/devices.txt" 2>&1
  tune "$d" configs/softmax.yaml --evals 3600 --seconds ${SM_S:-90}
  tune "$d" configs/layernorm.yaml --evals 1200 --seconds 45
  tune "$d" configs/rmsnorm.yaml --evals 960 --seconds 35
  tune "$d" configs/gelu.yaml --evals 160 --seconds 15
  tune "$d" configs/l1norm.yaml --evals 200 --seconds 15
  export PATH=/usr/local/cuda/bin:$PATH  # nvcc builds the exported kernels there
  export_ab "$d" 50 ${AB_PROBLEMS:-layernorm,rmsnorm,softmax,l1norm,gelu}
  for p in layernorm-pipe rmsnorm-pipe softmax-pipe; do tune "$d/odd" configs/$p-odd.yaml --evals 96 --seconds 12; done
}
stream_s4d() {  # the pipelined softmax's tails, then softmax tuned further from call 3's knowledge base
  local d=$out/a  # (.gpu/kb_s4c3.sqlite), and the exported kernels in PyTorch's harness again
  mkdir -p "$d/odd"
  cp .gpu/kb_s4c3.sqlite "$d/kb.sqlite"
  soltune devices > "$d/devices.txt" 2>&1
  tune "$d/odd" configs/softmax-pipe-odd.yaml --evals 192 --seconds 40
  tune "$d" configs/softmax.yaml --evals 4800 --seconds ${SM_S:-150}
  export PATH=/usr/local/cuda/bin:$PATH
  export_ab "$d" 50 softmax,rmsnorm,layernorm
}
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
    (cd bench && bounded ncu --clock-control none -k regex:'triton|softmax|norm' --section SpeedOfLight \
      --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats \
      python3 ncu_pair.py --exported "$d/exp/libsoltune_exported.so" --problem $1 --shape $2 --dtype $3 \
      > "$d/ncu_$1_$2_$3.txt" 2>&1)
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
  rm -rf $t && mkdir -p $t && cp -r templates/rmsnorm templates/layernorm $t/
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
  rm -rf $t && mkdir -p $t && cp -r templates/rmsnorm $t/
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
  rm -rf $t && mkdir -p $t && cp -r templates/rmsnorm $t/
  restrict_knobs $t/rmsnorm/looped.yaml 'TPR=[256, 512, 1024]' 'RPB=[1]' 'UNROLL=[1, 2]' 'STAGE=[0]' 'PERSIST=[0]' \
    'BPS=[1, 2, 4]'
  printf 'problem: rmsnorm\nvariants: [looped]\ndtypes: [f32, bf16]\nshapes: [{rows: 8192, cols: 4096}, {rows: 32768, cols: 1024}]\nbudget: {evals: 200, seconds: 50}\nseed: 5\ntemplates: %s\n' $t > $d/looped2.yaml
  tune "$d" $d/looped2.yaml
  export_ab "$d" 100 rmsnorm
}
stream_s6a() {  # the GPU tests at session 5's final code, then ncu on the two softmax bf16 shapes that
  local d=$out/a  # miss 95% of the copy bandwidth (soltune's best beside torch.compile's): what limits them
  soltune devices > "$d/devices.txt" 2>&1
  export PATH=/usr/local/cuda/bin:$PATH
  gpu_tests "$d"
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  bounded bash bench/exported_bench.sh "$d/kb.sqlite" "$d/exp" > "$d/exported_build.log" 2>&1
  for c in "softmax 8192x8192 bf16" "softmax 4096x50304 bf16"; do
    set -- $c
    (cd bench && bounded ncu --clock-control none -k regex:'triton|softmax' --section SpeedOfLight \
      --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis --section InstructionStats \
      --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
      python3 ncu_pair.py --exported "$d/exp/libsoltune_exported.so" --problem $1 --shape $2 --dtype $3 --launches 1 \
      > "$d/ncu_$1_$2_$3.txt" 2>&1)
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
  rm -rf $t && mkdir -p $t && cp -r templates/rmsnorm $t/
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
  rm -rf $t && mkdir -p $t && cp -r templates/rmsnorm $t/
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
stream_landscapes_b() {
  local d=$out/b
  bounded python3 bench/torch_reference.py --reps ${TORCH_REPS:-60} --json "$d/torch.json" > "$d/torch.log" 2>&1
}

# Every command stops at the deadline (LIMIT seconds from now), so that the archive below is always
# written within the device tool's 10 minutes.
deadline=$(($(date +%s) + ${LIMIT:-540}))
run2() {
  (export CUDA_VISIBLE_DEVICES=0; $1) &
  (export CUDA_VISIBLE_DEVICES=1; $2) &
  wait
}
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
  (cd bench && bounded ncu --clock-control none -k regex:'triton|norm' --section SpeedOfLight \
    --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis --section InstructionStats \
    --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
    python3 ncu_pair.py --exported "$d/exp/libsoltune_exported.so" --problem layernorm --shape 32768x1024 \
    --dtype bf16 --launches 2 > "$d/ncu_layernorm_32768x1024_bf16.txt" 2>&1)
  rm -f "$d/exp/exported_bench" "$d/exp/libsoltune_exported.so" "$d/kb.sqlite"
}
one_task_config() {  # one_task_config CONFIG VARIANTS SEED DTYPE SHAPE-LINE-TO-KEEP: one shape, one dtype, batches of 16
  variant_config "$1" "$2" "$3" | sed -e "s/^dtypes: .*/dtypes: [$4]/" -e "/^  - {/{/$5/!d}"
  echo "search: {batch: 16}"
}
ln_bf16_ab() {  # ln_bf16_ab DIR SEED EVALS SECONDS: LayerNorm rowreg alone at bf16 32768x1024 from
  local d=$1  # DIR/kb.sqlite, then LayerNorm exported and timed beside PyTorch (100 repetitions)
  one_task_config configs/layernorm.yaml "rowreg" "$2" bf16 "rows: 32768" > "$d/layernorm.yaml"
  tune "$d" "$d/layernorm.yaml" --evals "$3" --seconds "$4"
  export_ab "$d" 100 layernorm
}
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
# s9a-s9c measured the bulk-copy variants (tma) of softmax, RMSNorm and LayerNorm; they lost everywhere
# and were removed after call 3 (BENCHMARKS, session 9): `git checkout 86fe67c -- templates` restores them.
stream_s9a() {  # the bulk-copy variants (tma) of softmax, RMSNorm and LayerNorm tuned alone at the four
  local d=$out/a  # shapes issue 6 still misses, from session 8's last knowledge base; then the three
  export PATH=/usr/local/cuda/bin:$PATH  # problems exported and timed beside PyTorch (100 repetitions)
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  tma_four "$d" 91 ${EVALS:-160} ${SECS:-40}
  export_ab "$d" 100 softmax,layernorm,rmsnorm
}
tma_four() {  # tma_four DIR SEED EVALS SECONDS: the tma variants alone at issue 6's four open shapes
  local d=$1 seed=$2 evals=$3 secs=$4
  one_task_config configs/softmax.yaml tma $seed f32 "rows: 32768" > "$d/sm_f32.yaml"
  one_task_config configs/softmax.yaml tma $seed bf16 "cols: 50304" > "$d/sm_bf16.yaml"
  one_task_config configs/rmsnorm.yaml tma $seed f32 "rows: 8192" > "$d/rms_f32.yaml"
  one_task_config configs/layernorm.yaml tma $seed bf16 "rows: 32768" > "$d/ln_bf16.yaml"
  for c in ln_bf16 sm_f32 rms_f32 sm_bf16; do tune "$d" "$d/$c.yaml" --evals $evals --seconds $secs; done
}
stream_s9b() {  # the tma variants after the proxy fence and GPB (blocks of several row groups), tuned
  local d=$out/a  # again at the four shapes from call 1's knowledge base
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  tma_four "$d" 92 ${EVALS:-200} ${SECS:-45}
}

stream_s9c() {  # does the last partial wave cost softmax at 4096x50304? cached's best point pinned (a
  local d=$out/a  # template copy) at row counts of whole waves and between (2 rows per SM in bf16, 1 in
  mkdir -p "$d/pin" && cp -r templates "$d/pin/"  # f32); then the tma variants at every library shape
  restrict_knobs "$d/pin/templates/softmax/cached.yaml" 'BLOCK=[512]' 'TPR=[512]' 'VEC=[4, 8]' \
    'EPT=[1]' 'STAGE=[2]' 'REDUCE=[1]' 'GRID=[0]' 'HINT=[0]' 'FAST_EXP=[1]' 'PIPE=[0]'
  for dt in bf16 f32; do
    printf 'problem: softmax\nvariants: [cached]\ndtypes: [%s]\nshapes:\n' $dt > "$d/waves_$dt.yaml"
    for r in 3960 4092 4096 4224; do printf '  - {rows: %s, cols: 50304}\n' $r >> "$d/waves_$dt.yaml"; done
    printf 'budget: {evals: 8, seconds: 60}\nseed: 93\ntemplates: %s\n' "$d/pin/templates" >> "$d/waves_$dt.yaml"
    mkdir -p "$d/w" && tune "$d/w" "$d/waves_$dt.yaml"
  done
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  for p in softmax rmsnorm layernorm; do
    variant_config configs/$p.yaml tma 93 > "$d/tma_$p.yaml"
    local n=160; [ $p = softmax ] && n=400
    tune "$d" "$d/tma_$p.yaml" --evals $n --seconds 60
  done
}
stream_s9d() {  # SASS of soltune's exported LayerNorm and RMSNorm beside torch.compile's, bf16 32768x1024
  local d=$out/a  # (the one shape still behind torch.compile), from call 3's knowledge base
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  for p in layernorm rmsnorm; do
    bounded bash bench/sass_pair.sh "$d/kb.sqlite" templates $p 32768x1024 bf16 "$d/sass_$p" > "$d/sass_$p.log" 2>&1
    rm -rf "$d/sass_$p"/*.cubin "$d/sass_$p/export.json"
  done
  rm -f "$d/kb.sqlite"
}
stream_s9e() {  # LayerNorm rowreg without the bf16 pivot and without per-vector zeroing for rows past the
  local d=$out/a  # last, tuned at its four shapes from call 3's knowledge base; LayerNorm exported and
  export PATH=/usr/local/cuda/bin:$PATH  # timed beside PyTorch (100 repetitions)
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  variant_config configs/layernorm.yaml rowreg 95 > "$d/layernorm.yaml"
  echo "search: {batch: 16}" >> "$d/layernorm.yaml"
  tune "$d" "$d/layernorm.yaml" --evals ${EVALS:-640} --seconds ${SECS:-120}
  export_ab "$d" 100 layernorm
}
stream_s9f() {  # LayerNorm rowreg with WPRE (weight and bias vectors loaded before the last reduction)
  local d=$out/a  # tuned alone at bf16 32768x1024 from call 5's knowledge base, then timed beside PyTorch
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  ln_bf16_ab "$d" 96 ${LN_EVALS:-240} ${LN_S:-70}
}
stream_s9g() {  # the GPU tests at HEAD; the whole library exported from call 6's knowledge base (LayerNorm
  local d=$out/a  # rowreg's final text measured in call 5) and timed beside PyTorch (100 repetitions)
  export PATH=/usr/local/cuda/bin:$PATH
  gpu_tests "$d"
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  export_ab "$d" 100
  rm -f "$d/kb.sqlite"
}
stream_s9h() {  # LayerNorm rowreg with HINT 2's x by plain loads (Triton's LDG.E, where ours read through
  local d=$out/a  # the read-only path), tuned at its four shapes from call 6's knowledge base; LayerNorm
  export PATH=/usr/local/cuda/bin:$PATH  # exported and timed beside PyTorch (100 repetitions)
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  variant_config configs/layernorm.yaml rowreg 97 > "$d/layernorm.yaml"
  echo "search: {batch: 16}" >> "$d/layernorm.yaml"
  tune "$d" "$d/layernorm.yaml" --evals ${EVALS:-480} --seconds ${SECS:-100}
  export_ab "$d" 100 layernorm
}
stream_s9i() {  # experiment: softmax cached with three blocks per SM at bf16 4096x50304 (a template copy
  local d=$out/a  # whose __launch_bounds__ asks for 3: STAGE 3 with 16 KB of each row in 40 registers and
  mkdir -p "$d/x" && cp -r templates "$d/x/"  # 66 KB in shared memory), beside STAGE 2's best in the same run
  sed -i 's/__global__ void __launch_bounds__(BLOCK)/__global__ void __launch_bounds__(BLOCK, 3)/' "$d/x/templates/softmax/cached.cu"
  restrict_knobs "$d/x/templates/softmax/cached.yaml" 'BLOCK=[512]' 'TPR=[512]' 'VEC=[8]' 'EPT=[1, 2, 3, 4]' \
    'STAGE=[2, 3]' 'REDUCE=[0, 1]' 'GRID=[0]' 'HINT=[0]' 'FAST_EXP=[1]' 'PIPE=[0]'
  printf 'problem: softmax\nvariants: [cached]\ndtypes: [bf16]\nshapes: [{rows: 4096, cols: 50304}]\nbudget: {evals: 16, seconds: 60}\nseed: 98\ntemplates: %s\n' \
    "$d/x/templates" > "$d/x3.yaml"
  tune "$d" "$d/x3.yaml"
  sqlite3 "$d/kb.sqlite" "select printf('%.1f', time_us), occupancy_blocks, registers, status, config_key from results order by time_us" > "$d/x3_points.txt" 2>&1
}
stream_s9j() {  # the final templates' softmax, LayerNorm and RMSNorm beside PyTorch again, with PyTorch's
  local d=$out/a  # own copy of x into y timed in the same harness: the ceiling the level shapes sit at
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  export_ab "$d" 100 softmax,layernorm,rmsnorm --copy
  rm -f "$d/kb.sqlite"
}
stream_s9k() {  # LayerNorm bf16 32768x1024 at the final templates: ncu and SASS of soltune's export beside
  local d=$out/a  # torch.compile's kernel (the one shape still behind it)
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  bounded bash bench/exported_bench.sh "$d/kb.sqlite" "$d/exp" > "$d/exported_build.log" 2>&1
  (cd bench && bounded ncu --clock-control none -k regex:'triton|norm' --section SpeedOfLight \
    --section LaunchStats --section Occupancy --section InstructionStats --section WarpStateStats \
    --section SchedulerStats --section MemoryWorkloadAnalysis --metrics \
    dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct \
    python3 ncu_pair.py --exported "$d/exp/libsoltune_exported.so" --problem layernorm --shape 32768x1024 \
    --dtype bf16 --launches 2 > "$d/ncu_layernorm_32768x1024_bf16.txt" 2>&1)
  bounded bash bench/sass_pair.sh "$d/kb.sqlite" templates layernorm 32768x1024 bf16 "$d/sass" > "$d/sass.log" 2>&1
  rm -rf "$d/exp/exported_bench" "$d/exp/libsoltune_exported.so" "$d/kb.sqlite" "$d/sass"/*.cubin "$d/sass/export.json"
}
case "${1:-tune}" in
  tune) run2 stream_tune_a stream_tune_b ;;
  landscapes) run2 stream_landscapes_a stream_landscapes_b ;;
  tune1) stream_tune_single ;;
  last) stream_last ;;
  tests-l1norm) stream_tests_l1norm ;;
  l1norm-tune) stream_l1norm_tune ;;
  tune-big) stream_tune_big ;;
  final) stream_final ;;
  s4) stream_s4 ;;
  s4b) stream_s4b ;;
  s4c) stream_s4c ;;
  s4d) stream_s4d ;;
  s5a) stream_s5a ;;
  s5b) stream_s5b ;;
  s5c) stream_s5c ;;
  s5d) stream_s5d ;;
  s5e) stream_s5e ;;
  s5f) stream_s5f ;;
  s5g) stream_s5g ;;
  s5h) stream_s5h ;;
  s7a) stream_s7a ;;
  s7b) stream_s7b ;;
  s7c) stream_s7c ;;
  s7d) stream_s7d ;;
  s7e) stream_s7e ;;
  s7f) stream_s7f ;;
  s8a) stream_s8a ;;
  s8b) stream_s8b ;;
  s8c) stream_s8c ;;
  s8d) stream_s8d ;;
  s8e) stream_s8e ;;
  s8f) stream_s8f ;;
  s8g) stream_s8g ;;
  s9a) stream_s9a ;;
  s9b) stream_s9b ;;
  s9c) stream_s9c ;;
  s9d) stream_s9d ;;
  s9e) stream_s9e ;;
  s9f) stream_s9f ;;
  s9g) stream_s9g ;;
  s9h) stream_s9h ;;
  s9i) stream_s9i ;;
  s9j) stream_s9j ;;
  s9k) stream_s9k ;;
  s6a) stream_s6a ;;
  s6b) stream_s6b ;;
  s6c) stream_s6c ;;
  s6d) stream_s6d ;;
  s6e) stream_s6e ;;
  s6f) stream_s6f ;;
  s6g) stream_s6g ;;
  s6h) stream_s6h ;;
  s6i) stream_s6i ;;
  s6j) stream_s6j ;;
  s6k) stream_s6k ;;
  s6l) stream_s6l ;;
  s6m) stream_s6m ;;
  s6n) stream_s6n ;;
  landscapes1) out_b=1; stream_landscapes_a; stream_landscapes_b ;;
  *) echo "usage: $0 tune|landscapes|tune1|landscapes1" >&2; exit 2 ;;
esac
tar -C "$out" -czf "$out/results.tgz" a b gpu.txt && rm -rf "$out/a" "$out/b"
cat "$out/gpu.txt"
