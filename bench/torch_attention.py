#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention at soltune's attention shapes, timed cold the way soltune times.

    python3 bench/torch_attention.py [--config configs/attention.yaml] [--dtypes bf16,f16] [--reps N] [--json FILE]
                                     [--package DIR/NAME]

Q (b, h, s_q, d), K and V (b, h_kv, s_k, d) contiguous, as templates/attention; grouped-query heads
through enable_gqa=True; causal with is_causal=True for s_q = s_k, and for s_q < s_k an explicit
bottom-right mask (SDPA's is_causal aligns at the top left). Every timed repetition follows an L2 flush
(torch_reference.py's); median and quartiles of CUDA event pairs. Prints, per case, the time, TFLOP/s
(the problem's FLOPs: 4 b h d times the kept pairs) and the backend SDPA picked.

With --package (the folder `soltune export --format python` wrote), its attention is checked against
SDPA's output on the same inputs and then timed beside it in turns, each run after its own flush, so
that both see the same clock (torch_reference.py's interleaving); the case's times are then both of
that timing, with their paired differences.
"""
import argparse
import json
import sys

import torch
import torch.nn.functional as F
import yaml

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from torch_matmul import kernel_names  # noqa: E402
from torch_reference import (load_package, make_flush, package_serves, paired, quantile,  # noqa: E402
                             reset_persisting, time_fn, time_interleaved)

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


def exported(pkg, s, dt, fn, q, k, v):
    """The package's attention for the case, its O checked against SDPA's (relative L2 error under
    1e-2: both round to the 16-bit output); None where the package has no kernel for the dtype. A
    wrong answer stops the run: its time would mean nothing."""
    if not package_serves(pkg, "attention", dt):
        return None
    causal = int(s.get("causal", 0))

    def mine():
        return pkg.attention(q, k, v, causal=causal) if causal else pkg.attention(q, k, v)

    got, want = mine()[0].float(), fn().float()
    err = ((got - want).norm() / want.norm()).item()
    if not err < 1e-2:  # NaN fails too
        sys.exit(f"soltune's exported attention at {s} ({dt}): relative L2 error {err:.3g} against SDPA")
    for _ in range(2):
        mine()  # warm, and on the package's fast path from here on
    return mine


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="configs/attention.yaml")
    ap.add_argument("--dtypes", default="bf16")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--json")
    ap.add_argument("--package", help="a package of soltune's exported kernels (DIR/NAME): its attention timed beside SDPA")
    a = ap.parse_args()
    pkg = load_package(a.package, "soltune_exported") if a.package else None
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
            mine = exported(pkg, s, dt, fn, q, k, v) if pkg else None
            if mine:
                both = time_interleaved({"sdpa": fn, "soltune": mine}, (), a.reps, flush)
                times, own = sorted(both["sdpa"]), sorted(both["soltune"])
            else:
                times = time_fn(fn, (), a.reps, flush)
            med = quantile(times, 0.5)
            flops = 4 * s["b"] * s["h"] * s["d"] * pairs(s)
            row = {"shape": s, "dtype": dt, "median_us": med, "q1_us": quantile(times, 0.25),
                   "q3_us": quantile(times, 0.75), "tflops": flops / med / 1e6, "kernels": kernel_names(fn)}
            row["gpu"] = torch.cuda.get_device_name()
            if mine:
                row.update(exported_us=quantile(own, 0.5), exported_q1_us=quantile(own, 0.25), exported_q3_us=quantile(own, 0.75),
                           interleaved=True, paired=paired(both["soltune"], both["sdpa"]))
            rows.append(row)
            print(f"{dt} {s}: {med:.1f} us ({row['q1_us']:.1f}-{row['q3_us']:.1f}), {row['tflops']:.0f} TFLOP/s, {' + '.join(row['kernels'])}",
                  flush=True)
            if mine:
                print(f"  soltune: {row['exported_us']:.1f} us ({row['exported_q1_us']:.1f}-{row['exported_q3_us']:.1f}), "
                      f"{flops / row['exported_us'] / 1e6:.0f} TFLOP/s, {100 * med / row['exported_us']:.1f}% of SDPA's speed, interleaved",
                      flush=True)
    if a.json:
        json.dump({"torch": torch.__version__, "rows": rows}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
