# Modes of sessions 1-3: the library, the landscapes and PyTorch's figures (two GPUs or one).
# Sourced by scripts/gpu-bench.sh, whose helpers (bounded, tune, export_ab, ...) these use.

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

stream_landscapes_b() {
  local d=$out/b
  bounded python3 bench/torch_reference.py --reps ${TORCH_REPS:-60} --json "$d/torch.json" > "$d/torch.log" 2>&1
}
