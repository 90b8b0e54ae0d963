# Modes of session 14 (docs/BENCHMARKS.md, "Session 14").
# Sourced by scripts/gpu-bench.sh, whose helpers (bounded, gpu_tests, ncu_exported, ...) and session 13's
# (harness, tune_library, harness_both) these use.

stream_s14a() {  # the GPU tests; store_policy_exp (packed: bench/store_policy.cu built against a working copy
  local d=$out/a  # whose HINT 4-6 keep only y's last 48, 32, 16 MiB in L2 and 7 half of y's lines); RMSNorm
  export PATH=/usr/local/cuda/bin:$PATH  # bf16 32768x1024 of .gpu/kb.sqlite (s13f's) and torch.compile's under ncu, and their SASS
  gpu_tests "$d"
  bounded .gpu/bin/store_policy_exp 32768 200 > "$d/store_policy_exp.log" 2>&1
  cat "$d/store_policy_exp.log"
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  bounded bash bench/exported_bench.sh "$d/kb.sqlite" "$d/exp" > "$d/exported_build.log" 2>&1
  ncu_exported "$d" "$d/ncu_rmsnorm_32768x1024_bf16.txt" --clock-control none -k regex:'triton|norm' \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
    --section MemoryWorkloadAnalysis --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,\
lts__t_sectors_op_write.sum,lts__t_sectors_op_write_lookup_hit.sum,lts__t_sectors_op_read_lookup_hit.sum,\
dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum \
    -- --problem rmsnorm --shape 32768x1024 --dtype bf16 --launches 2
  grep -E "triton|norm|Duration|DRAM Through|dram__|lts__t_sector" "$d/ncu_rmsnorm_32768x1024_bf16.txt" | head -60
  bounded bash bench/sass_pair.sh "$d/kb.sqlite" templates rmsnorm 32768x1024 bf16 "$d/sass" > "$d/sass.log" 2>&1
  rm -rf "$d/exp/exported_bench" "$d/exp/libsoltune_exported.so" "$d/kb.sqlite" "$d/sass"/*.cubin "$d/sass/export.json"
}

stream_s14b() {  # templates/common (0969e39: the same machine code under new source hashes): the GPU tests;
  local d=$out/a  # RMSNorm, LayerNorm and softmax tuned again from .gpu/kb.sqlite (session 13's call 6), each
  export PATH=/usr/local/cuda/bin:$PATH  # old text's best measured first
  gpu_tests "$d"
  tune_library "$d" 155 rmsnorm:160:60 layernorm:160:60 softmax:400:130
}

stream_s14c() {  # .gpu/kb.sqlite (s14b's) exported and timed beside PyTorch, every problem, 300 repetitions:
  local d=$out/a  # cold for all, then by the harness's default
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  harness_both "$d" 300
}

stream_s14d() {  # the two shapes behind torch.compile by the harness's default in s14c (RMSNorm and LayerNorm
  local d=$out/a  # bf16 32768x1024), .gpu/kb.sqlite (s14b's): under ncu beside torch.compile's kernel; then
  export PATH=/usr/local/cuda/bin:$PATH  # the harness both ways with soltune writing into an output of its own
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  bounded bash bench/exported_bench.sh "$d/kb.sqlite" "$d/exp" > "$d/exported_build.log" 2>&1
  local p
  for p in rmsnorm layernorm; do
    ncu_exported "$d" "$d/ncu_${p}_32768x1024_bf16.txt" --clock-control none -k regex:'triton|norm' \
      --section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis \
      --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,gpu__time_duration.sum \
      -- --problem $p --shape 32768x1024 --dtype bf16 --launches 3
    grep -E "^  [a-z]|Duration|DRAM Through|dram__bytes" "$d/ncu_${p}_32768x1024_bf16.txt" | cut -c1-110
  done
  harness_both "$d" 300 "--problems rmsnorm,layernorm --dtypes bf16 --own-output"
}

stream_s14e() {  # as s14c, soltune writing into an output of its own (--own-output): every problem, 300
  local d=$out/a  # repetitions, cold for all and by the harness's default
  export PATH=/usr/local/cuda/bin:$PATH
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  harness_both "$d" 300 "--own-output"
}

stream_s14f() {  # the GPU tests at the final code; session 13's call 6 knowledge base (.gpu/kb.sqlite: results of the
  local d=$out/a  # texts before templates/common only) exported at today's templates, its RMSNorm, LayerNorm and
  export PATH=/usr/local/cuda/bin:$PATH  # softmax carried by machine code, and timed beside PyTorch (checked against eager)
  gpu_tests "$d"
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  bounded bash bench/exported_bench.sh "$d/kb.sqlite" "$d/exp" > "$d/exported_build.log" 2>&1
  grep -h "earlier text" "$d/exported_build.log"
  grep -c "earlier text of the template" "$d"/exp/*.cuh
  harness "$d" torch_carried 100 "--problems rmsnorm,layernorm,softmax --interleave --order shuffle --reset-persisting"
  grep -E "differs from eager|non-finite" "$d/torch_carried.log" | head -5; python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(\"worst rel L2 vs eager:\", max(x.get(\"rel_l2_vs_eager\", 0) for x in r if x[\"impl\"] == \"soltune\"))" "$d/torch_carried.json"
  rm -f "$d/kb.sqlite" "$d/exp/exported_bench" "$d/exp/libsoltune_exported.so"
}

stream_s14g() {  # softmax after templates/common/row_reduce.cuh (cached and multipass: new texts, the same machine
  local d=$out/a  # code): tuned again from .gpu/kb.sqlite (s14b's), each old text's best measured first
  export PATH=/usr/local/cuda/bin:$PATH
  tune_library "$d" 156 softmax:400:130
}

stream_s14h() {  # the GPU tests at the final code (after row_reduce.cuh and export's fastest_per_shape); the
  local d=$out/a  # final knowledge base (.gpu/kb.sqlite, s14g's) exported and its softmax timed beside PyTorch
  export PATH=/usr/local/cuda/bin:$PATH
  gpu_tests "$d"
  cp .gpu/kb.sqlite "$d/kb.sqlite"
  bounded bash bench/exported_bench.sh "$d/kb.sqlite" "$d/exp" > "$d/exported_build.log" 2>&1
  cat "$d/exported_build.log" | grep -v "^/"
  harness "$d" torch_final_softmax 100 "--problems softmax --interleave --order shuffle --reset-persisting"
  rm -f "$d/kb.sqlite" "$d/exp/exported_bench" "$d/exp/libsoltune_exported.so"
}
