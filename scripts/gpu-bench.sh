#!/usr/bin/env bash
# A measurement session on a lent GPU machine, programs packed by ../shared/gpu/pack into .gpu/
# (docs/BENCHMARKS.md): `LIMIT=SECONDS bash scripts/gpu-bench.sh MODE`. Everything lands under $OUT,
# packed into one archive at the end (the device tool returns at most 8 files). The modes live in
# scripts/gpu-bench/, one file per session, as the benchmarks cite them:
#   tune, landscapes                 the library and the landscapes on two GPUs (two streams side by
#                                    side, each process seeing only its own GPU)
#   tune1, landscapes1, last, ...    the same on one GPU, one after another (gpu-bench/s1-3.sh)
#   s4 ... s15g                      the sessions' calls (gpu-bench/s4.sh ... s15.sh)
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

gpu_tests() {  # every packed test binary, one line per test (ctest's files name this machine's paths)
  local d=$1
  for t in .gpu/bin/*_test; do bounded "$t" 2>&1 | grep -E '^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED|tests ran'; done > "$d/tests.log"
  tail -n 8 "$d/tests.log"
}

export_libs() {  # export_libs DIR K...: each DIR/kbK.sqlite exported and built into DIR/expK
  local d=$1 libs=() k  # (bench/exported_bench.sh); prints the libraries comma-separated, for
  shift                 # torch_reference.py --exported
  for k in "$@"; do
    bounded bash bench/exported_bench.sh "$d/kb$k.sqlite" "$d/exp$k" > "$d/exported_build$k.log" 2>&1
    libs+=("$d/exp$k/libsoltune_exported.so")
  done
  (IFS=,; echo "${libs[*]}")
}

export_ab() {  # export_ab DIR REPS [PROBLEMS [HARNESS OPTIONS]]: DIR/kb.sqlite exported and built, its
  local d=$1 reps=$2 problems=${3:-}  # kernels timed in PyTorch's harness beside eager and torch.compile
  local lib=$(export_libs "$d" "")
  bounded python3 bench/torch_reference.py ${problems:+--problems $problems} --reps $reps ${4:-} \
    --exported "$lib" --json "$d/torch_ab.json" > "$d/torch_ab.log" 2>&1
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

# Every command stops at the deadline (LIMIT seconds from now), so that the archive below is always
# written within the device tool's 10 minutes.
deadline=$(($(date +%s) + ${LIMIT:-540}))
run2() {
  (export CUDA_VISIBLE_DEVICES=0; $1) &
  (export CUDA_VISIBLE_DEVICES=1; $2) &
  wait
}

one_task_config() {  # one_task_config CONFIG VARIANTS SEED DTYPE SHAPE-LINE-TO-KEEP: one shape, one dtype, batches of 16
  variant_config "$1" "$2" "$3" | sed -e "s/^dtypes: .*/dtypes: [$4]/" -e "/^  - {/{/$5/!d}"
  echo "search: {batch: 16}"
}

ncu_exported() {  # ncu_exported DIR OUT NCU-OPTION... -- NCU_PAIR-OPTION...: bench/ncu_pair.py under ncu,
  local d=$1 f=$2; shift 2  # torch.compile's kernel and DIR/exp's exported one on the same inputs, into OUT
  local opts=()
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  (cd bench && bounded ncu "${opts[@]}" python3 ncu_pair.py --exported "$d/exp/libsoltune_exported.so" "$@" > "$f" 2>&1)
}

ln_bf16_ab() {  # ln_bf16_ab DIR SEED EVALS SECONDS: LayerNorm rowreg alone at bf16 32768x1024 from
  local d=$1  # DIR/kb.sqlite, then LayerNorm exported and timed beside PyTorch (100 repetitions)
  one_task_config configs/layernorm.yaml "rowreg" "$2" bf16 "rows: 32768" > "$d/layernorm.yaml"
  tune "$d" "$d/layernorm.yaml" --evals "$3" --seconds "$4"
  export_ab "$d" 100 layernorm
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
for f in "$here"/gpu-bench/*.sh; do source "$f"; done
usage() { echo "usage: $0 tune|landscapes|tune1|landscapes1|last|tests-l1norm|l1norm-tune|tune-big|final|s4..s15g" >&2; exit 2; }

mode=${1:-tune}
case "$mode" in
  tune) run2 stream_tune_a stream_tune_b ;;
  landscapes) run2 stream_landscapes_a stream_landscapes_b ;;
  tune1) stream_tune_single ;;
  last) stream_last ;;
  tests-l1norm) stream_tests_l1norm ;;
  l1norm-tune) stream_l1norm_tune ;;
  tune-big) stream_tune_big ;;
  final) stream_final ;;
  landscapes1) out_b=1; stream_landscapes_a; stream_landscapes_b ;;
  s[0-9]*) if declare -F "stream_$mode" > /dev/null; then "stream_$mode"; else usage; fi ;;
  *) usage ;;
esac
tar -C "$out" -czf "$out/results.tgz" a b gpu.txt && rm -rf "$out/a" "$out/b"
cat "$out/gpu.txt"
