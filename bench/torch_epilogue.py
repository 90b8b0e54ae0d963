#!/usr/bin/env python3
"""GEMMs with what follows them fused, in PyTorch eager, under torch.compile and as soltune's fused
kernel, beside the plain GEMM, on the same GPU.

    python3 bench/torch_epilogue.py [--op epilogue|swiglu] [--shapes 8192x4096x1024,4096x4096x4096]
                                    [--dtypes bf16] [--mode max-autotune] [--reps N] [--json FILE]
                                    [--package DIR/NAME]

--op epilogue (templates/matmul_epilogue at trans_b 1, act 2, alpha = beta = 1): y = GELU(x @ w.t() + b)
+ r, x m x k, w n x k (as torch keeps a linear layer's weight), b n, r m x n; the GEMM alone is
x @ w.t(). --op swiglu (templates/swiglu): h = SiLU(x @ w_gate.t()) * (x @ w_up.t()) with both weights
stacked in w (2n x k), as a merged gate_up projection runs it: gu = x @ w.t(), then SiLU(gu[:, :n]) *
gu[:, n:]; the GEMM alone is x @ w.t(). Timed as torch_reference.py times: every
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


def swiglu(x, w):
    gu = x @ w.t()
    n = gu.shape[1] // 2
    return F.silu(gu[:, :n]) * gu[:, n:]


def gemm_stacked(x, w):
    return x @ w.t()


# op -> (its function, the GEMM alone, inputs (m, n, k, dtype, gen), the package's call, default shapes)
OPS = {
    "epilogue": (linear_gelu_residual, gemm_only,
                 lambda m, n, k, dt, g: (rand(g, dt, m, k), rand(g, dt, n, k), rand(g, dt, n), rand(g, dt, m, n)),
                 lambda pkg: (lambda x, w, b, r: pkg.matmul_epilogue(x, w, b, r, trans_b=1, act=2)), "matmul_epilogue",
                 "8192x4096x1024,4096x4096x4096,512x14336x4096,4096x6144x4096,2048x4096x14336"),
    "swiglu": (swiglu, gemm_stacked, lambda m, n, k, dt, g: (rand(g, dt, m, k), rand(g, dt, 2 * n, k)),
               lambda pkg: (lambda x, w: pkg.swiglu(x, w)), "swiglu", "4096x14336x4096,512x14336x4096,16384x14336x4096"),
}


def rand(gen, dt, *size):
    return torch.randn(size, generator=gen, device="cuda").to(dt)


def rel_err(got, want):
    return ((got.float() - want.float()).norm() / want.float().norm()).item()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--op", default="epilogue", choices=sorted(OPS))
    ap.add_argument("--shapes", help="m x n x k, comma-separated (default: the op's config shapes)")
    ap.add_argument("--dtypes", default="bf16")
    ap.add_argument("--mode", default="max-autotune", help="torch.compile's mode")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--json", help="write the records here")
    ap.add_argument("--package", help="a package of soltune's exported kernels (DIR/NAME) with the op's problem")
    args = ap.parse_args()
    op, gemm_fn, make_inputs, package_call, problem, default_shapes = OPS[args.op]
    pkg = load_package(args.package, "soltune_exported") if args.package else None
    _, base = make_flush("read", wait="before")
    flush = reset_persisting(base)
    gen = torch.Generator(device="cuda").manual_seed(7)
    records = []
    print(f"{'shape':>18} {'dtype':>5} {'implementation':>16} {'median us':>10} {'q1':>9} {'q3':>9}  of the GEMM's time")
    for shape in (args.shapes or default_shapes).split(","):
        m, n, k = (int(v) for v in shape.split("x"))
        for dname in args.dtypes.split(","):
            if dname not in DTYPES:
                ap.error(f"unknown dtype {dname!r} (bf16 or f16)")
            dt = DTYPES[dname]
            inputs = make_inputs(m, n, k, dt, gen)
            want = op(*inputs)
            torch._dynamo.reset()
            compiled = torch.compile(op, mode=args.mode)
            fns = {"gemm": gemm_fn, "eager": op, "torch.compile": compiled}
            errors = {"torch.compile": rel_err(compiled(*inputs), want)}
            if pkg and package_serves(pkg, problem, dname):
                mine = package_call(pkg)
                errors["soltune"] = rel_err(mine(*inputs), want)
                if not errors["soltune"] < 1e-2:  # NaN fails too
                    sys.exit(f"soltune's {problem} at {shape} ({dname}): relative L2 error {errors['soltune']:.3g} against eager")
                fns["soltune"] = mine
            for fn in fns.values():
                for _ in range(3):
                    fn(*inputs)
            times = time_interleaved(fns, inputs, args.reps, flush)
            gemm = quantile(sorted(times["gemm"]), 0.5)
            dims = {"m": m, "n": n, "k": k, **({"trans_b": 1, "act": 2} if args.op == "epilogue" else {})}
            rec = {"problem": problem, "shape": dims, "dtype": dname, "mode": args.mode,
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
            del inputs, want, compiled
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
