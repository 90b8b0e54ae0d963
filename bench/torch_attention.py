#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention at soltune's attention shapes, timed cold the way soltune times.

    python3 bench/torch_attention.py [--config configs/attention.yaml] [--dtypes bf16,f16] [--reps N] [--json FILE]

Q (b, h, s_q, d), K and V (b, h_kv, s_k, d) contiguous, as templates/attention; grouped-query heads
through enable_gqa=True; causal with is_causal=True for s_q = s_k, and for s_q < s_k an explicit
bottom-right mask (SDPA's is_causal aligns at the top left). Every timed repetition follows an L2 flush
(torch_reference.py's); median and quartiles of CUDA event pairs. Prints, per case, the time, TFLOP/s
(the problem's FLOPs: 4 b h d times the kept pairs) and the backend SDPA picked.
"""
import argparse
import json
import sys

import torch
import torch.nn.functional as F
import yaml

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from torch_matmul import kernel_names  # noqa: E402
from torch_reference import make_flush, quantile, reset_persisting, time_fn  # noqa: E402

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}


def pairs(s):
    if s.get("causal", 0):
        return s["s_q"] * (s["s_k"] - s["s_q"]) + s["s_q"] * (s["s_q"] + 1) // 2
    return s["s_q"] * s["s_k"]


def call(s, q, k, v):
    gqa = s["h"] != s["h_kv"]
    if not s.get("causal", 0):
        return lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=gqa)
    if s["s_q"] == s["s_k"]:
        return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
    i = torch.arange(s["s_q"], device="cuda")[:, None]
    j = torch.arange(s["s_k"], device="cuda")[None, :]
    mask = j <= i + (s["s_k"] - s["s_q"])
    return lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=gqa)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="configs/attention.yaml")
    ap.add_argument("--dtypes", default="bf16")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--json")
    a = ap.parse_args()
    shapes = yaml.safe_load(open(a.config))["shapes"]
    _, base = make_flush("read", wait="before")
    flush = reset_persisting(base)
    rows = []
    for dt in a.dtypes.split(","):
        for s in shapes:
            g = torch.Generator(device="cuda").manual_seed(0)
            q = torch.randn(s["b"], s["h"], s["s_q"], s["d"], device="cuda", dtype=DTYPES[dt], generator=g)
            k = torch.randn(s["b"], s["h_kv"], s["s_k"], s["d"], device="cuda", dtype=DTYPES[dt], generator=g)
            v = torch.randn(s["b"], s["h_kv"], s["s_k"], s["d"], device="cuda", dtype=DTYPES[dt], generator=g)
            fn = call(s, q, k, v)
            for _ in range(3):
                fn()
            times = time_fn(fn, (), a.reps, flush)
            med = quantile(times, 0.5)
            flops = 4 * s["b"] * s["h"] * s["d"] * pairs(s)
            row = {"shape": s, "dtype": dt, "median_us": med, "q1_us": quantile(times, 0.25),
                   "q3_us": quantile(times, 0.75), "tflops": flops / med / 1e6, "kernels": kernel_names(fn)}
            row["gpu"] = torch.cuda.get_device_name()
            rows.append(row)
            print(f"{dt} {s}: {med:.1f} us ({row['q1_us']:.1f}-{row['q3_us']:.1f}), {row['tflops']:.0f} TFLOP/s, {' + '.join(row['kernels'])}",
                  flush=True)
    if a.json:
        json.dump({"torch": torch.__version__, "rows": rows}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
