#!/usr/bin/env python3
"""A linear layer with what follows it, y = GELU(x @ w.t() + b) + r, in PyTorch eager, under
torch.compile and as soltune's fused kernel, beside the plain GEMM x @ w.t(), on the same GPU.

    python3 bench/torch_epilogue.py [--shapes 8192x4096x1024,4096x4096x4096] [--dtypes bf16]
                                    [--mode max-autotune] [--reps N] [--json FILE] [--package DIR/NAME]

templates/matmul_epilogue at trans_b 1, act 2 (GELU, tanh form), alpha = beta = 1: x is m x k, w n x k
(as torch keeps a linear layer's weight), b n, r m x n. Timed as torch_reference.py times: every
repetition after an L2 flush and cudaCtxResetPersistingL2Cache, one CUDA event pair each, the
implementations of a case in turns within every repetition (so a drift in clocks falls on all
alike); median and quartiles. torch.compile compiles afresh for each case (static shapes) before it
is timed, in --mode (max-autotune by default: Inductor tries its own GEMM templates beside cuBLAS and
may fuse the epilogue into them). With --package (what `soltune export --format python` wrote), its
matmul_epilogue is checked against eager on the case's inputs, then timed in the same turns.
"""
import argparse
import json
import sys

import torch
import torch._dynamo
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from torch_reference import (load_package, make_flush, package_serves, paired, quantile,  # noqa: E402
                             reset_persisting, time_interleaved)

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}


def linear_gelu_residual(x, w, b, r):
    return F.gelu(x @ w.t() + b, approximate="tanh") + r


def gemm_only(x, w, b, r):
    return x @ w.t()


def rel_err(got, want):
    return ((got.float() - want.float()).norm() / want.float().norm()).item()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", default="8192x4096x1024,4096x4096x4096,512x14336x4096,4096x6144x4096,2048x4096x14336")
    ap.add_argument("--dtypes", default="bf16")
    ap.add_argument("--mode", default="max-autotune", help="torch.compile's mode")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--json", help="write the records here")
    ap.add_argument("--package", help="a package of soltune's exported kernels (DIR/NAME) with matmul_epilogue")
    args = ap.parse_args()
    pkg = load_package(args.package, "soltune_exported") if args.package else None
    _, base = make_flush("read", wait="before")
    flush = reset_persisting(base)
    gen = torch.Generator(device="cuda").manual_seed(7)
    records = []
    print(f"{'shape':>18} {'dtype':>5} {'implementation':>16} {'median us':>10} {'q1':>9} {'q3':>9}  of the GEMM's time")
    for shape in args.shapes.split(","):
        m, n, k = (int(v) for v in shape.split("x"))
        for dname in args.dtypes.split(","):
            if dname not in DTYPES:
                ap.error(f"unknown dtype {dname!r} (bf16 or f16)")
            dt = DTYPES[dname]
            x = torch.randn(m, k, generator=gen, device="cuda").to(dt)
            w = torch.randn(n, k, generator=gen, device="cuda").to(dt)
            b = torch.randn(n, generator=gen, device="cuda").to(dt)
            r = torch.randn(m, n, generator=gen, device="cuda").to(dt)
            inputs = (x, w, b, r)
            want = linear_gelu_residual(*inputs)
            torch._dynamo.reset()
            compiled = torch.compile(linear_gelu_residual, mode=args.mode)
            fns = {"gemm": gemm_only, "eager": linear_gelu_residual, "torch.compile": compiled}
            errors = {"torch.compile": rel_err(compiled(*inputs), want)}
            if pkg and package_serves(pkg, "matmul_epilogue", dname):
                def mine(x, w, b, r):
                    return pkg.matmul_epilogue(x, w, b, r, trans_b=1, act=2)
                errors["soltune"] = rel_err(mine(*inputs), want)
                if not errors["soltune"] < 1e-2:  # NaN fails too
                    sys.exit(f"soltune's matmul_epilogue at {shape} ({dname}): relative L2 error {errors['soltune']:.3g} against eager")
                fns["soltune"] = mine
            for fn in fns.values():
                for _ in range(3):
                    fn(*inputs)
            times = time_interleaved(fns, inputs, args.reps, flush)
            gemm = quantile(sorted(times["gemm"]), 0.5)
            rec = {"shape": {"m": m, "n": n, "k": k, "trans_b": 1, "act": 2}, "dtype": dname, "mode": args.mode,
                   "reps": args.reps, "gpu": torch.cuda.get_device_name(), "errors": errors, "times": {}}
            for name, t in times.items():
                t = sorted(t)
                med = quantile(t, 0.5)
                rec["times"][name] = {"median_us": med, "q1_us": quantile(t, 0.25), "q3_us": quantile(t, 0.75)}
                print(f"{shape:>18} {dname:>5} {name:>16} {med:10.1f} {quantile(t, 0.25):9.1f} {quantile(t, 0.75):9.1f}"
                      f"  {100 * med / gemm:.1f}%")
            if "soltune" in times:
                rec["paired_vs_compile"] = paired(times["soltune"], times["torch.compile"])
                rec["paired_vs_gemm"] = paired(times["soltune"], times["gemm"])
            records.append(rec)
            del x, w, b, r, want, compiled
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
