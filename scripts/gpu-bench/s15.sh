# Modes of session 15 (docs/BENCHMARKS.md, "Session 15").
# Sourced by scripts/gpu-bench.sh, whose helpers (bounded, gpu_tests, ...) and session 13's
# (harness, tune_library, harness_both) these use.

stream_s15a() {  # bench/release_policy.cu (packed): RMSNorm rowreg bf16 and f32 32768x1024 with all of y kept,
  local d=$out/a  # only its end kept, or nothing kept, in turns with Triton's design, cold and by
  bounded .gpu/bin/release_policy 400 > "$d/release_policy.log" 2>&1  # PyTorch's harness's default
  cat "$d/release_policy.log"
}
