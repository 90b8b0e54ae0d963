#!/usr/bin/env python3
"""cuBLAS (torch.matmul) at soltune's GEMM shapes, timed cold the way soltune times, on the same GPU.

    python3 bench/torch_matmul.py [--shapes 4096x4096x4096,1793x1793x1793] [--dtypes bf16,f16,f32]
                                  [--layouts nn,nt] [--reps N] [--json FILE] [--package DIR/NAME]

C = A B with A m x k row-major, as templates/matmul: layout nn, B k x n row-major (trans_b 0,
torch.matmul(a, b)); nt, B stored n x k (trans_b 1, torch.matmul(a, w.t()) with w n x k
contiguous, a linear layer's product). Every timed repetition follows an
L2 flush by reads of 256 MiB and cudaCtxResetPersistingL2Cache (torch_reference.py's
--reset-persisting), one CUDA event pair each; median and quartiles. f32 runs without TF32
(torch.backends.cuda.matmul.allow_tf32 = False), as soltune's f32 problem requires. Prints, per
case, the time, TFLOP/s and the kernel cuBLAS chose (from torch.profiler).

With --package (the folder `soltune export --format python` wrote), its matmul is checked against
torch.matmul on the case's inputs and then timed beside it in the same harness: in every repetition
each runs once after its own flush, in turns (torch_reference.py's --interleave), so that both see
the same clock; the case's times are then both of that interleaved timing, with the paired
difference (soltune minus cuBLAS per repetition, a bootstrap 95% interval of its median).
"""
import argparse
import json
import sys

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from torch_reference import (load_package, make_flush, package_serves, paired, quantile,  # noqa: E402
                             reset_persisting, time_fn, time_interleaved)

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def matmul_nt(a, w):
    return torch.matmul(a, w.t())


def kernel_names(fn, *args):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn(*args)
        torch.cuda.synchronize()
    return sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})


def exported(pkg, dname, trans_b, fn, a, b):
    """The package's matmul for the case, checked against cuBLAS's result on its inputs (relative L2
    error under 1e-2: both round to the 16-bit output); None where the package has no kernel for the
    dtype. A wrong answer stops the run: its time would mean nothing."""
    if not package_serves(pkg, "matmul", dname):
        return None

    def mine(x, y):
        return pkg.matmul(x, y, trans_b=trans_b)

    got, want = mine(a, b).float(), fn(a, b).float()
    err = ((got - want).norm() / want.norm()).item()
    if not err < 1e-2:  # NaN fails too
        sys.exit(f"soltune's exported matmul at {tuple(a.shape)} x {tuple(b.shape)} ({dname}): relative L2 error {err:.3g} against cuBLAS")
    for _ in range(2):
        mine(a, b)  # warm, and on the package's fast path from here on
    return mine


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", default="4096x4096x4096,1793x1793x1793,1000x1000x1000")
    ap.add_argument("--dtypes", default="bf16,f16,f32")
    ap.add_argument("--layouts", default="nn,nt", help="nn: B k x n row-major; nt: B stored n x k")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--json", help="write the records here")
    ap.add_argument("--package", help="a package of soltune's exported kernels (DIR/NAME): its matmul timed beside cuBLAS")
    args = ap.parse_args()
    pkg = load_package(args.package, "soltune_exported") if args.package else None
    torch.backends.cuda.matmul.allow_tf32 = False
    _, base = make_flush("read", wait="before")
    flush = reset_persisting(base)
    gen = torch.Generator(device="cuda").manual_seed(7)
    records = []
    layouts = args.layouts.split(",")
    for lay in layouts:
        if lay not in ("nn", "nt"):
            ap.error(f"unknown layout {lay!r} (nn or nt)")
    print(f"{'shape':>16} {'dtype':>5} {'layout':>6} {'median us':>10} {'q1':>9} {'q3':>9} {'TFLOP/s':>8}  kernel")
    for shape in args.shapes.split(","):
        m, n, k = (int(v) for v in shape.split("x"))
        for dname in args.dtypes.split(","):
            dt = DTYPES[dname]
            for lay in layouts:
                a = torch.randn(m, k, generator=gen, device="cuda").to(dt)
                if lay == "nt":
                    b, fn = torch.randn(n, k, generator=gen, device="cuda").to(dt), matmul_nt
                else:
                    b, fn = torch.randn(k, n, generator=gen, device="cuda").to(dt), torch.matmul
                for _ in range(3):
                    fn(a, b)
                mine = exported(pkg, dname, int(lay == "nt"), fn, a, b) if pkg else None
                if mine:
                    both = time_interleaved({"cublas": fn, "soltune": mine}, (a, b), args.reps, flush)
                    t, own = sorted(both["cublas"]), sorted(both["soltune"])
                else:
                    t = time_fn(fn, (a, b), args.reps, flush)
                med = quantile(t, 0.5)
                rec = {"shape": {"m": m, "n": n, "k": k}, "dtype": dname, "trans_b": int(lay == "nt"),
                       "median_us": med, "q1_us": quantile(t, 0.25), "q3_us": quantile(t, 0.75), "reps": len(t),
                       "tflops": 2.0 * m * n * k / med / 1e6, "kernels": kernel_names(fn, a, b),
                       "gpu": torch.cuda.get_device_name()}
                if mine:
                    rec.update(exported_us=quantile(own, 0.5), exported_q1_us=quantile(own, 0.25),
                               exported_q3_us=quantile(own, 0.75), interleaved=True,
                               paired=paired(both["soltune"], both["cublas"]))
                records.append(rec)
                print(f"{shape:>16} {dname:>5} {lay:>6} {med:10.1f} {rec['q1_us']:9.1f} {rec['q3_us']:9.1f} "
                      f"{rec['tflops']:8.1f}  " + " + ".join(rec["kernels"]))
                if mine:
                    print(f"{'':>16} {'':>5} {'':>6} {rec['exported_us']:10.1f} {rec['exported_q1_us']:9.1f} "
                          f"{rec['exported_q3_us']:9.1f} {2.0 * m * n * k / rec['exported_us'] / 1e6:8.1f}  soltune, "
                          f"{100 * med / rec['exported_us']:.1f}% of cuBLAS's speed, interleaved")
                del a, b
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
