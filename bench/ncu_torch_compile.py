#!/usr/bin/env python3
"""torch.compile's kernel for one case, launched once between cudaProfilerStart and Stop, after its
compile and autotuning, for `ncu --profile-from-start off`:

    ncu --profile-from-start off --section SpeedOfLight python3 bench/ncu_torch_compile.py \
        --problem rmsnorm --shape 8192x4096 --dtype f32
"""
import argparse

import torch

import torch_reference as tr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--problem", required=True)
    ap.add_argument("--shape", required=True, help="ROWSxCOLS or N")
    ap.add_argument("--dtype", default="f32")
    a = ap.parse_args()
    shape = tuple(int(v) for v in a.shape.split("x"))
    _, op, _ = tr.PROBLEMS[a.problem]
    gen = torch.Generator(device=tr.DEVICE).manual_seed(1)
    args = tr.make_args(a.problem, shape, tr.DTYPES[a.dtype], gen)
    compiled = torch.compile(op)
    for _ in range(3):
        compiled(*args)  # compile, autotune, warm
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    compiled(*args)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


if __name__ == "__main__":
    main()
