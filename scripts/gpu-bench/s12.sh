# Modes of session 12 (docs/BENCHMARKS.md, "Session 12").
# Sourced by scripts/gpu-bench.sh, whose helpers (bounded, tune, gpu_tests, ...) these use.

stream_s12a() {  # the GPU tests at HEAD; then bench/worker_conditions.cpp's steps (s11m's, plus buffers
  local d=$out/a  # allocated late, the TaskState's buffers and kernels loaded again, with their addresses)
  export PATH=/usr/local/cuda/bin:$PATH
  gpu_tests "$d"
  stream_s11l
}

stream_s12b() {  # worker_conditions' steps again, with the TaskState's flush_l2 and soltune's timed loop
  stream_s11l    # (time_launches) on the TaskState's buffers and on the bench's, gated and not
}
