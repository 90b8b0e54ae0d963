#!/usr/bin/env python3
"""Prints the Triton kernels torch.compile generates for soltune's row-wise problems, and the launch
configuration its autotuner picked, so a template can be set against what beats it.

    python3 bench/inductor_code.py [--problems softmax,layernorm,rmsnorm,l1norm] > inductor.txt
"""
import argparse
import gc
import os
import sys

os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")  # generate, never reuse a cache
import torch
import torch._dynamo
from torch._inductor.runtime.triton_heuristics import CachingAutotuner

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_reference as ref  # noqa: E402  (the same ops and inputs as the timed figures)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", default="softmax,layernorm,rmsnorm,l1norm")
    ap.add_argument("--shapes", default="", help="comma-separated labels (32768x1024,n=268435456); all if empty")
    a = ap.parse_args()
    only = set(filter(None, a.shapes.split(",")))
    seen = set()
    gen = torch.Generator(device=ref.DEVICE).manual_seed(1)
    for problem in a.problems.split(","):
        shapes, op, _ = ref.PROBLEMS[problem]
        for shape in shapes:
            if only and ref.shape_label(shape) not in only:
                continue
            for dname, dtype in ref.DTYPES.items():
                print(f"\n######## {problem} {ref.shape_label(shape)} {dname}", flush=True)
                torch._dynamo.reset()
                args = ref.make_args(problem, shape, dtype, gen)
                fn = torch.compile(op)
                fn(*args)
                torch.cuda.synchronize()
                # The winning launcher of every kernel the compiled graph ran.
                for o in gc.get_objects():
                    try:  # gc also lists weak proxies whose object is gone
                        fresh = isinstance(o, CachingAutotuner) and getattr(o, "launchers", None) and id(o) not in seen
                    except ReferenceError:
                        continue
                    if fresh:
                        seen.add(id(o))
                        for l in o.launchers:
                            print(f"#### chosen {o.fn.__name__}: {getattr(l, 'config', None)} "
                                  f"regs={getattr(l, 'n_regs', '?')} spills={getattr(l, 'n_spills', '?')} "
                                  f"shared={getattr(l, 'shared', '?')}", flush=True)
                        print(getattr(o.fn, "src", "(no source)"), flush=True)
                del args, fn
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
