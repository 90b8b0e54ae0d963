#!/usr/bin/env python3
"""Does the output's address move a kernel's time? One case of torch_reference.py, with y placed at
several byte offsets in one pool (x fixed): soltune's exported kernels (one per library given),
torch.compile's kernel writing into y (with --compiled: the op's result copied into y, which
Inductor stores directly) and PyTorch's copy of x into y, timed in turns at every offset, as
torch_reference.py --interleave times (L2 flushed by a read, events, medians).

    python3 bench/placement.py --exported LIB --problem softmax --shape 32768x1024 --dtype f32
"""
import argparse
import ctypes

import torch

import torch_reference as tr

OFFSETS = [0, 512, 4096, 65536, 1 << 20, 3 << 20, (5 << 20) + 4096, 12 << 20]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exported", required=True, help="one library or several, comma-separated")
    ap.add_argument("--compiled", action="store_true", help="also torch.compile's kernel, writing into y")
    ap.add_argument("--problem", required=True)
    ap.add_argument("--shape", required=True, help="ROWSxCOLS or N")
    ap.add_argument("--dtype", default="f32")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--offsets", default=",".join(map(str, OFFSETS)), help="bytes, multiples of 512")
    a = ap.parse_args()
    shape = tuple(int(v) for v in a.shape.split("x"))
    dtype = tr.DTYPES[a.dtype]
    offsets = [int(v) for v in a.offsets.split(",")]
    if any(o % 512 for o in offsets):
        ap.error("offsets must be multiples of 512 bytes")
    gen = torch.Generator(device=tr.DEVICE).manual_seed(7)
    args = tr.make_args(a.problem, shape, dtype, gen)
    x = args[0]
    nbytes = x.numel() * x.element_size()
    pool = torch.empty(nbytes + max(offsets), dtype=torch.uint8, device=tr.DEVICE)
    libs = [ctypes.CDLL(p) for p in a.exported.split(",")]
    op = tr.PROBLEMS[a.problem][1]
    into = None
    if a.compiled:
        def op_into(out, *xs):
            out.copy_(op(*xs))
            return out
        into = torch.compile(op_into)
    ref = op(*args)  # eager's output
    _, flush = tr.make_flush("read")
    print(f"{a.problem} {a.shape} {a.dtype}: x at 0x{x.data_ptr():x}, pool at 0x{pool.data_ptr():x}; "
          f"{a.reps} repetitions in turns, median us (p10-p90)")
    for off in offsets:
        y = pool[off:off + nbytes].view(dtype).view(x.shape)
        fns = {("soltune" if i == 0 else f"soltune#{i + 1}"): tr.exported_fn(lib, a.problem, a.dtype, out=y)
               for i, lib in enumerate(libs)}
        if into is not None:
            fns["torch.compile"] = lambda *xs: into(y, *xs)
        err = 0.0
        for fn in fns.values():
            y.fill_(float("nan"))  # poisoned: an unwritten element fails the check below
            err = max(err, tr.rel_l2(fn(*args), ref))
        fns["copy"] = lambda x_, *_: y.copy_(x_)
        tr.time_interleaved(fns, args, 5, flush)
        t = tr.time_interleaved(fns, args, a.reps, flush)
        cells = []
        for n in fns:
            s = sorted(t[n])
            cells.append(f"{n} {tr.quantile(s, 0.5):6.2f} ({tr.quantile(s, 0.1):.1f}-{tr.quantile(s, 0.9):.1f})")
        ok = "" if err <= (1e-4 if a.dtype == "f32" else 2e-2) else f"  WRONG: rel L2 {err:.2e}"
        print(f"y at +{off:>9} (0x{y.data_ptr():x}): " + "  ".join(cells) + ok, flush=True)


if __name__ == "__main__":
    main()
