#!/usr/bin/env python3
"""The host cost of one call of an exported kernel from Python, against the same entry point called
from C++ (the Python package's per-call overhead: checks, stream lookup, ctypes).

    python3 bench/python_overhead.py --package DIR/soltune_kernels [--problem gelu] [--n 1024]
                                     [--calls 20000] [--json FILE]

At a size whose kernel takes a few microseconds, back-to-back calls are bound by the host: the
wall time of N calls (the GPU synchronized after them) over N is the cost of a call. Timed, each as
the median of 7 rounds of --calls calls, one after another in every round:
  cpp       the package's C entry point from a C++ loop in a process of its own (g++, dlopen;
            arguments built once, on buffers of its own);
  ctypes    the same entry point from Python through ctypes (arguments built once);
  package   the package's function, out= given (the call a user makes, all checks included);
  package+  the same, its output allocated per call;
  torch     the PyTorch eager operation (the problem's, for scale).
The overhead reported is package - cpp. Needs PyTorch with CUDA.
"""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

from torch_reference import load_package  # bench/ is this script's folder, first on the path

CPP = r"""
#include <dlfcn.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
// The package's entry point: device, argument pointers, sizes, stream -> CUDA error.
using Entry = int (*)(int, void**, long long*, void*);
using Sync = int (*)();
using Malloc = int (*)(void**, size_t);
using Memset = int (*)(void*, int, size_t);
int main(int argc, char** argv) {
  void* lib = dlopen(argv[1], RTLD_NOW);
  void* rt = dlopen("libcudart.so", RTLD_NOW | RTLD_GLOBAL);
  if (!lib || !rt) { std::fprintf(stderr, "%s\n", dlerror()); return 1; }
  auto f = reinterpret_cast<Entry>(dlsym(lib, argv[2]));
  auto sync = reinterpret_cast<Sync>(dlsym(rt, "cudaDeviceSynchronize"));
  auto alloc = reinterpret_cast<Malloc>(dlsym(rt, "cudaMalloc"));
  auto zero = reinterpret_cast<Memset>(dlsym(rt, "cudaMemset"));
  if (!f || !sync || !alloc || !zero) { std::fprintf(stderr, "no %s\n", argv[2]); return 1; }
  long long n = std::atoll(argv[3]);
  const int calls = std::atoi(argv[4]), device = std::atoi(argv[5]);
  void* ptrs[2] = {};  // x and y: this process's own
  for (void*& p : ptrs)
    if (alloc(&p, n * 4) || zero(p, 0, n * 4)) { std::fprintf(stderr, "cudaMalloc failed\n"); return 1; }
  for (int round = 0; round < 8; ++round) {  // the first warms up
    sync();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i)
      if (int e = f(device, ptrs, &n, nullptr)) { std::fprintf(stderr, "error %d\n", e); return 1; }
    sync();
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    if (round > 0) std::printf("%.4f\n", us / calls);
  }
  return 0;
}
"""


def per_call(fn, calls, rounds=7):
    """Median and range over rounds of the wall time per call of `calls` back-to-back calls (us)."""
    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) * 1e6 / calls)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--package", required=True, help="the folder soltune export --format python wrote (DIR/NAME)")
    ap.add_argument("--problem", default="gelu", choices=["gelu"], help="an elementwise problem of the package")
    ap.add_argument("--n", type=int, default=1024, help="elements (small: the host bounds the calls)")
    ap.add_argument("--calls", type=int, default=20000, help="calls per round")
    ap.add_argument("--json", metavar="FILE", help="write the figures as JSON")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device")
    pkg = load_package(a.package, os.path.basename(os.path.abspath(a.package)))
    x = torch.randn(a.n, device="cuda")
    y = torch.empty_like(x)
    f = getattr(pkg, a.problem)
    lib = pkg._library()
    entry = getattr(lib, f"soltune_py_{a.problem}_f32")
    device = x.device.index or 0
    ptrs = (ctypes.c_void_p * 2)(x.data_ptr(), y.data_ptr())
    sizes = (ctypes.c_longlong * 1)(a.n)
    null = ctypes.c_void_p(0)
    stream = torch.cuda.current_stream().cuda_stream
    if stream != 0:
        sys.exit("the current stream is not the legacy default stream; the C++ loop launches on that")
    times = {
        "ctypes": per_call(lambda: entry(device, ptrs, sizes, null), a.calls),
        "package": per_call(lambda: f(x, out=y), a.calls),
        "package+": per_call(lambda: f(x), a.calls),
        "torch": per_call(lambda: F.gelu(x, approximate="tanh"), a.calls),
    }
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "loop.cpp"), os.path.join(tmp, "loop")
        with open(src, "w") as fh:
            fh.write(CPP)
        subprocess.run(["g++", "-O2", "-std=c++17", src, "-o", exe, "-ldl"], check=True)
        so = os.path.join(os.path.abspath(a.package), "_kernels.so")
        r = subprocess.run([exe, so, f"soltune_py_{a.problem}_f32", str(a.n), str(a.calls), str(device)],
                           capture_output=True, text=True, check=True)
        times["cpp"] = [float(v) for v in r.stdout.split()]
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"GPU {torch.cuda.get_device_name()}, {a.problem} f32 n={a.n}, {a.calls} calls a round, 7 rounds")
    for k in ("cpp", "ctypes", "package", "package+", "torch"):
        print(f"{k:<9} {med[k]:7.2f} us a call (rounds {min(times[k]):.2f}-{max(times[k]):.2f})")
    print(f"overhead of the package over the C++ call: {med['package'] - med['cpp']:.2f} us")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"gpu": torch.cuda.get_device_name(), "problem": a.problem, "n": a.n, "calls": a.calls,
                       "times_us": times, "median_us": med}, fh, indent=1)


if __name__ == "__main__":
    main()
