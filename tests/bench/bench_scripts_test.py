#!/usr/bin/env python3
"""The page of figures is built right from what the tools write (no GPU, no torch): bench/figures.py
reads `soltune tune`'s summary rows whether the configuration ends the row or opens the next line,
and bench/render_benchmarks.py shows soltune's fastest tuned record in a row and keeps a GEMM row of
one dtype beside cuBLAS's figure of that dtype only; masked_softmax's shapes are keyed and labelled;
the GEMM epilogue's harness figures join its tuned rows.

    python3 tests/bench/bench_scripts_test.py BENCH_DIR      (exit 0: every check passed)
"""
import os
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import figures  # noqa: E402
import render_benchmarks  # noqa: E402

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


# A summary in both layouts: the configuration after the counts, and on the next line.
log = """summary on NVIDIA H100 80GB HBM3:
task                                           time us   GB/s   %BW   T_ref us  T_SOL us    SOL SOL-EB  evals
add_rmsnorm/looped/bf16/rows=4096,cols=4096       43.6   3077 101.5      221.7      42.2  0.990  0.992     24
  TPR=256,VEC=8,UNROLL=4 (found by explorer.sample)
add_rmsnorm/rowreg/bf16/rows=4096,cols=4096       43.3   3100 102.2      221.5      42.2  0.992  0.994     19
  TPR=512,RPB=1,VEC=8,EPT=1,BPS=1,HINT=2 (found by tuner.climb)
rmsnorm/rowreg/f32/rows=8192,cols=4096       65.6   4092  98.0      400.1      64.0  0.990  0.992     30 TPR=32,RPB=1
"""
with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
    f.write(log)
rows = figures.tune_rows([f.name])
os.unlink(f.name)
best = rows.get(("add_rmsnorm", "rows=4096,cols=4096", "bf16"))
check(best is not None and best["variant"] == "rowreg" and best["config"] == "TPR=512,RPB=1,VEC=8,EPT=1,BPS=1,HINT=2",
      "the fastest variant's row, its configuration from the next line: %s" % best)
old = rows.get(("rmsnorm", "rows=8192,cols=4096", "f32"))
check(old is not None and old["config"] == "TPR=32,RPB=1", "a configuration at the end of its row: %s" % old)


def tune(variant, dtype, us, set_="s", problem="matmul", shape="m=1793,n=1793,k=1793,trans_b=0"):
    return {"set": set_, "source": "tune", "problem": problem, "shape": shape, "dtype": dtype, "condition": "cold",
            "date": "2026-12-07 16:52 UTC", "command": "soltune tune X", "variant": variant, "us": us, "q1_us": us,
            "q3_us": us, "t_ref_us": 2 * us, "t_sol_us": us / 2, "sol": 0.6, "sol_eb": 0.6, "config": "C", "card": "GPU"}


# GEMMs on another card: bf16 and f16 of one variant and shape are two rows; cuBLAS measured bf16 only.
cublas = {"set": "s", "source": "cublas", "problem": "matmul", "shape": "m=1793,n=1793,k=1793,trans_b=0", "dtype": "bf16",
          "condition": "cold", "date": "2026-12-07 16:52 UTC", "command": "torch_matmul", "us": 112.4, "q1_us": 112.3,
          "q3_us": 113.1, "card": "GPU", "kernel": "k"}
text = "\n".join(render_benchmarks.on_card([tune("wgmma_pad", "bf16", 62.0), tune("wgmma_pad", "f16", 61.0), cublas]))
lines = [ln for ln in text.splitlines() if "wgmma_pad" in ln]
check(len(lines) == 2, "a row per dtype: %d rows" % len(lines))
f16 = [ln for ln in lines if "| f16 |" in ln]
check(len(f16) == 1 and "112.4" not in f16[0], "the f16 row stands beside no bf16 figure: %s" % f16)

# Two tuned records of one attention shape (two variants): the row shows the faster.
shape = "b=8,h=16,h_kv=16,s_q=4096,s_k=4096,d=128,causal=0"
recs = [tune("fa2", "bf16", 5223.5, problem="attention", shape=shape), tune("fa3", "bf16", 2877.0, problem="attention", shape=shape)]
text = "\n".join(render_benchmarks.attention(recs))
check("2877.0" in text and "5223.5" not in text, "the faster variant's time in the row")

# The epilogue's harness record (bench/torch_epilogue.py --json) joins its tuned row by shape, act included.
import json  # noqa: E402
harness = [{"shape": {"m": 4096, "n": 4096, "k": 4096, "trans_b": 1, "act": 2}, "dtype": "bf16", "mode": "max-autotune",
            "reps": 20, "gpu": "GPU", "errors": {},
            "times": {"gemm": {"median_us": 200.0}, "eager": {"median_us": 260.0}, "torch.compile": {"median_us": 230.0},
                      "soltune": {"median_us": 204.0}},
            "paired_vs_compile": {"median_diff_us": -26.0, "ci95_us": [-27.0, -25.0], "soltune_faster_in": 20},
            "paired_vs_gemm": {"median_diff_us": 4.0, "ci95_us": [3.0, 5.0], "soltune_faster_in": 0}}]
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    json.dump(harness, f)
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as g:
    json.dump({"best": []}, g)


class Args:
    set, date, condition, tune_command, torch_command, torch, best = "s", "2026-12-07 20:00 UTC", "cold", "t", "h", f.name, g.name


recs = figures.epilogue(Args()) + [tune("wgmma_ws", "bf16", 205.0, problem="matmul_epilogue", shape="m=4096,n=4096,k=4096,trans_b=1,act=2")]
os.unlink(f.name)
os.unlink(g.name)
text = "\n".join(render_benchmarks.epilogue(recs))
row = [ln for ln in text.splitlines() if "4096x4096x4096" in ln]
check(len(row) == 1 and "GELU (tanh)" in row[0] and "| 200.0 |" in row[0] and "102.0%" in row[0] and "-26.0" in row[0],
      "the epilogue's row beside its harness figures: %s" % row)

# masked_softmax's harness shape (heads, s_q, s_k, d, causal) as soltune's shape key, labelled in its table;
# a problem's table without harness rows says it shows soltune's timing only.
key = figures.shape_key({"heads": 32, "s_q": 1, "s_k": 32768, "d": 128, "causal": 1})
check(key == "heads=32,s_q=1,s_k=32768,d=128,causal=1", "masked_softmax's shape key: %s" % key)
label = render_benchmarks.shape_label(key)
check(label == "32 heads, 1 x 32768, d 128, causal", "masked_softmax's shape label: %s" % label)
doc = {"device": {"name": "GPU", "arch": "sm_90", "sms": 132, "driver": "d", "cuda": "13.0", "torch": "t", "triton": "x"},
       "records": [tune("rowreg", "bf16", 30.0, problem="masked_softmax", shape=key)]}
page = render_benchmarks.render(doc)
check("## Attention scores' softmax with the scale and the causal mask (masked_softmax) (soltune's timing only)" in page,
      "a table of tuned rows alone says so")

sys.exit(1 if failures else 0)
