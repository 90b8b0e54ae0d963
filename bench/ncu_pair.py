#!/usr/bin/env python3
"""torch.compile's kernel and soltune's exported one for one case, a few launches each, for ncu:

    ncu --clock-control none -k regex:'triton|softmax|norm' --section SpeedOfLight \
        python3 bench/ncu_pair.py --exported LIB --problem softmax --shape 32768x1024 --dtype bf16

Same inputs for both (torch_reference.py's), compiled and warmed before the profiled launches.
"""
import argparse
import ctypes

import torch

import torch_reference as tr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exported", required=True)
    ap.add_argument("--problem", required=True)
    ap.add_argument("--shape", required=True, help="ROWSxCOLS or N")
    ap.add_argument("--dtype", default="f32")
    ap.add_argument("--launches", type=int, default=3)
    a = ap.parse_args()
    shape = tuple(int(v) for v in a.shape.split("x"))
    _, op, _ = tr.PROBLEMS[a.problem]
    gen = torch.Generator(device=tr.DEVICE).manual_seed(1)
    args = tr.make_args(a.problem, shape, tr.DTYPES[a.dtype], gen)
    lib = ctypes.CDLL(a.exported)
    mine = tr.exported_fn(lib, a.problem, a.dtype)
    compiled = torch.compile(op)
    for fn in (compiled, mine):
        fn(*args)  # compile, load, warm
    torch.cuda.synchronize()
    for _ in range(a.launches):
        compiled(*args)
        mine(*args)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
