#!/usr/bin/env python3
"""torch._scaled_mm (cuBLASLt's FP8 matmul) at soltune's matmul_fp8 shapes, timed cold the way
soltune times, on the same GPU.

    python3 bench/torch_scaled_mm.py [--shapes 4096x4096x4096:0,64x2112x7168:2] [--dtypes e4m3,e5m2]
                                     [--reps N] [--json FILE]

A shape is MxNxK:SCALE with templates/matmul_fp8's scale modes: 0 one f32 scale per tensor, 1 one
per row of A and of B (torch's rowwise), 2 one per 1 x 128 block of A's rows and per 128 x 128
block of B (DeepGEMM's). C = (sa A)(sb B)^T in bf16, A m x k and B n x k row-major. Per-tensor and
rowwise run torch._scaled_mm; per-block runs it where this torch takes block scales, and otherwise
the product a user writes with torch ops (dequantize both operands to bf16, then matmul), labelled.
Each result is checked against the dequantized product in f32 before timing. Every timed
repetition follows an L2 flush by reads of 256 MiB and cudaCtxResetPersistingL2Cache, one CUDA
event pair each; median and quartiles.
"""
import argparse
import json
import sys

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from torch_matmul import kernel_names  # noqa: E402
from torch_reference import make_flush, quantile, reset_persisting, time_fn  # noqa: E402

DTYPES = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
MODES = {0: "per tensor", 1: "rowwise", 2: "per block"}


def scales(m, n, k, mode, gen):
    """sa and sb as templates/matmul_fp8 lays them out, drawn from uniform(0.25, 4), as torch takes them:
    per block, sa is m x cdiv(k, 128) with the rows innermost (a transposed view) and sb row-major."""
    kb, nb = -(-k // 128), -(-n // 128)
    shape_a, shape_b = {0: ((1,), (1,)), 1: ((m, 1), (1, n)), 2: ((kb, m), (nb, kb))}[mode]
    draw = lambda s: 0.25 + 3.75 * torch.rand(s, generator=gen, device="cuda")  # noqa: E731
    sa, sb = draw(shape_a), draw(shape_b)
    return (sa.t() if mode == 2 else sa), sb


def dequantized(x, s, mode, rows_per_block):
    """x (rows x k, 8-bit) times its scales, in f32."""
    x = x.float()
    if mode == 0:
        return x * s
    if mode == 1:
        return x * s.reshape(-1, 1)
    s = s.repeat_interleave(rows_per_block, 0)[: x.shape[0]].repeat_interleave(128, 1)[:, : x.shape[1]]
    return x * s


def torch_ops(a, b, sa, sb, mode):
    """The per-block product without a library that takes block scales: dequantize, then matmul."""
    return torch.matmul(dequantized(a, sa, mode, 1).bfloat16(), dequantized(b, sb.t() if mode == 1 else sb, mode, 128).bfloat16().t())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", default="4096x4096x4096:0,4096x4096x4096:1,8192x8192x8192:0,8192x8192x8192:1,"
                    "64x2112x7168:2,128x24576x1536:2,4096x32768x512:2,4096x7168x16384:2,4096x4096x7168:2,128x7168x2048:2",
                    help="m x n x k : scale mode, comma-separated (default: configs/matmul-fp8.yaml's)")
    ap.add_argument("--dtypes", default="e4m3")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--json", help="write the records here")
    args = ap.parse_args()
    _, base = make_flush("read", wait="before")
    flush = reset_persisting(base)
    gen = torch.Generator(device="cuda").manual_seed(7)
    records = []
    print(f"{'shape':>20} {'dtype':>5} {'scales':>10} {'median us':>10} {'q1':>9} {'q3':>9} {'TFLOP/s':>8} {'rel err':>8}  how")
    for case in args.shapes.split(","):
        dims, mode = case.split(":")
        m, n, k = (int(v) for v in dims.split("x"))
        mode = int(mode)
        for dname in args.dtypes.split(","):
            dt = DTYPES[dname]
            a = torch.randn(m, k, generator=gen, device="cuda").to(dt)
            b = torch.randn(n, k, generator=gen, device="cuda").to(dt)
            sa, sb = scales(m, n, k, mode, gen)
            # torch reads B's scales against y.t() (k x n): per block, the n x k blocks' transpose.
            sb_mm = sb.t() if mode == 2 else sb
            fn, how = (lambda x, y: torch._scaled_mm(x, y.t(), scale_a=sa, scale_b=sb_mm, out_dtype=torch.bfloat16),
                       "torch._scaled_mm")
            want = dequantized(a, sa, mode, 1) @ dequantized(b, sb.t() if mode == 1 else sb, mode, 128).t()
            try:
                out = fn(a, b)
                err = ((out.float() - want).norm() / want.norm()).item()
                if not err < 1e-2:  # bf16 output rounding is about 2e-3: the scales were read otherwise
                    raise RuntimeError(f"its result is off the dequantized product by {err:.2g} (rel L2)")
            except RuntimeError as e:
                why = str(e).splitlines()[0]
                if mode != 2:
                    print(f"{dims:>20} {dname:>5} {MODES[mode]:>10}  torch._scaled_mm refused or wrong: {why}")
                    records.append({"shape": {"m": m, "n": n, "k": k, "scale": mode}, "dtype": dname, "refused": why})
                    continue
                fn, how = (lambda x, y: torch_ops(x, y, sa, sb, mode)), f"torch ops (torch._scaled_mm: {why})"
                out = fn(a, b)
                err = ((out.float() - want).norm() / want.norm()).item()
            for _ in range(3):
                fn(a, b)
            t = time_fn(fn, (a, b), args.reps, flush)
            med = quantile(t, 0.5)
            rec = {"shape": {"m": m, "n": n, "k": k, "scale": mode}, "dtype": dname, "how": how, "median_us": med,
                   "q1_us": quantile(t, 0.25), "q3_us": quantile(t, 0.75), "reps": len(t), "rel_l2": err,
                   "tflops": 2.0 * m * n * k / med / 1e6, "kernels": kernel_names(fn, a, b),
                   "gpu": torch.cuda.get_device_name()}
            records.append(rec)
            print(f"{dims:>20} {dname:>5} {MODES[mode]:>10} {med:10.1f} {rec['q1_us']:9.1f} {rec['q3_us']:9.1f} "
                  f"{rec['tflops']:8.1f} {err:8.1e}  {how}")
            del a, b, out, want
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
