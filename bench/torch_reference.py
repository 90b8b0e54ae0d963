#!/usr/bin/env python3
"""PyTorch eager and torch.compile figures to set beside soltune's, on the same GPU.

    python3 bench/torch_reference.py [--problems gelu,softmax,...] [--json FILE] [--reps N]
                                     [--package DIR/soltune_kernels] [--copy] [--interleave]
                                     [--order rotate|shuffle] [--wait after|before] [--cold-mib N]
                                     [--shapes 1x1048576,...]

Measured the way soltune measures (docs/MEASUREMENT.md): warm-up (torch.compile has compiled by
then), L2 flushed before every timed repetition, one pair of CUDA events per repetition, median
and spread over the repetitions, random normal inputs, and the byte counts of soltune's
problem.yaml files for GB/s. With --package, the kernels `soltune export --format python` wrote (the
package bench/exported_bench.sh builds) are timed through the package's functions as a third
implementation in this same harness, on the same inputs, and checked against eager: the comparison
then shares every condition, the package's per-call checks included.
With --interleave, the implementations of a case take turns within every repetition (the order
rotating, or drawn afresh with --order shuffle), so that a drift in clocks or temperature over a
case falls on all of them alike, and each is compared with soltune by the per-repetition
differences: their median, a bootstrap 95% interval of that median, and how many repetitions
soltune won. --wait and --cold-mib change the conditions around each timed launch, to set the
harness beside soltune's own timing (docs/FINDINGS.md, Timing).
"""
import argparse
import ctypes
import datetime
import gc
import importlib.util
import json
import os
import random
import sys

import torch
import torch._dynamo  # reset() between cases; imported here so a missing one fails at once
import torch.nn.functional as F

# Problem -> (shapes, op, byte count). Shapes are (n,) or (rows, cols); the ops take every tensor
# as an argument (no closures) so torch.compile specialises on the inputs themselves.
def gelu_op(x):
    return F.gelu(x, approximate="tanh")


def softmax_op(x):
    return torch.softmax(x, -1)


def layernorm_op(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5)


def rmsnorm_op(x, w):
    return F.rms_norm(x, (x.shape[-1],), w, eps=1e-6)


def l1norm_op(x):
    return torch.linalg.vector_norm(x, 1)


def add_rmsnorm_op(x, r, w):
    h = x + r
    return h, F.rms_norm(h, (h.shape[-1],), w, eps=1e-6)


def add_rmsnorm_fp8_op(x, r, w):
    """The residual add, RMSNorm and e4m3 quantization with a scale per 1 x 128 block, as a user
    writes it; the scales in templates/add_rmsnorm_fp8's layout (the rows innermost)."""
    h = x + r
    y = F.rms_norm(h, (h.shape[-1],), w, eps=1e-6).float()
    blocks = y.view(y.shape[0], -1, 128)
    s = blocks.abs().amax(-1).clamp(min=1e-10) / 448.0
    q = (blocks / s.unsqueeze(-1)).view(y.shape).to(torch.float8_e4m3fn)
    return h, q, s.t().contiguous()


N28 = 1 << 28
MASK_D = 128  # masked_softmax's head dimension: the scores are scaled by MASK_D ** -0.5


def masked_softmax_op(x, mask):
    """Attention's scores softmax on the unfused path: mask is True past each query's position
    (causal, aligned at the bottom right), made once outside the timed call."""
    return (x * MASK_D ** -0.5).masked_fill(mask, float("-inf")).softmax(-1)


PROBLEMS = {
    "gelu": ([(N28,)], gelu_op, lambda s, b: 2 * s[0] * b),
    "softmax": ([(4096, 4096), (8192, 8192), (32768, 1024), (4096, 50304), (16384, 256),
                 (1, 1 << 20), (8, 1 << 18), (32, 1 << 17)],
                softmax_op, lambda s, b: 2 * s[0] * s[1] * b),
    "layernorm": ([(8192, 4096), (32768, 1024), (1, 1 << 20), (8, 1 << 18), (32, 1 << 17)], layernorm_op,
                  lambda s, b: 2 * s[0] * s[1] * b + 2 * s[1] * b),
    "rmsnorm": ([(8192, 4096), (32768, 1024), (1, 1 << 20), (8, 1 << 18), (32, 1 << 17)], rmsnorm_op,
                lambda s, b: 2 * s[0] * s[1] * b + s[1] * b),
    "l1norm": ([(N28,)], l1norm_op, lambda s, b: s[0] * b + b),
    # x and r read, h and y written; with e4m3: q one byte an element and the scales
    "add_rmsnorm": ([(4096, 4096), (16384, 4096), (4096, 8192), (16, 4096), (1000, 5120)], add_rmsnorm_op,
                    lambda s, b: 4 * s[0] * s[1] * b + s[1] * b),
    "add_rmsnorm_fp8": ([(4096, 7168), (4096, 4096), (64, 7168)], add_rmsnorm_fp8_op,
                        lambda s, b: 3 * s[0] * s[1] * b + s[1] * b + s[0] * s[1] + 4 * s[0] * (s[1] // 128)),
    # heads x s_q x s_k scores, causal: y written, x's unmasked keys read (problem.yaml's count)
    "masked_softmax": ([(32, 2048, 2048), (32, 512, 4096), (32, 1, 32768)], masked_softmax_op,
                       lambda s, b: (s[0] * s[1] * s[2] + s[0] * (s[1] * (s[2] - s[1]) + s[1] * (s[1] + 1) // 2)) * b),
}
# Problems with several outputs: the exported function allocates them and returns them all.
SEVERAL_OUTPUTS = {"add_rmsnorm", "add_rmsnorm_fp8"}
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
DEVICE = "cuda"
FLUSH_BYTES = 256 << 20
# GPU cycles (about 100 us at 2 GHz) of busy-wait queued before each timed launch: the CPU then
# always runs ahead of the GPU, so Python and launch overhead never fall inside the event pair
# (soltune launches from C++; this keeps the comparison about GPU time).
SLEEP_CYCLES = 200_000


def shape_label(s):
    return f"n={s[0]}" if len(s) == 1 else "x".join(str(v) for v in s)


def shape_dict(s):
    if len(s) == 3:  # masked_softmax's
        return {"heads": s[0], "s_q": s[1], "s_k": s[2], "d": MASK_D, "causal": 1}
    return {"n": s[0]} if len(s) == 1 else {"rows": s[0], "cols": s[1]}


def make_args(problem, shape, dtype, gen):
    """Random normal inputs, never zeros: x*3 for gelu (as problem.yaml's normal(0, 3))."""
    def randn(*size):
        return torch.randn(size, generator=gen, device=DEVICE, dtype=torch.float32)

    x = randn(*shape)
    if problem == "gelu":
        x *= 3
    if problem == "masked_softmax":
        x *= 8  # scores of spread 8, about 1 after the scale (problem.yaml's normal(0, 8))
    args = [x.to(dtype)]
    del x
    cols = shape[-1]
    if problem == "masked_softmax":
        s_q, s_k = shape[1], shape[2]
        args.append(torch.ones(s_q, s_k, dtype=torch.bool, device=DEVICE).triu(s_k - s_q + 1))
    if problem == "layernorm":
        args += [randn(cols).to(dtype), randn(cols).to(dtype)]
    elif problem == "rmsnorm":
        args += [randn(cols).to(dtype)]
    elif problem in SEVERAL_OUTPUTS:  # the residual r and the weight
        args += [randn(*shape).to(dtype), randn(cols).to(dtype)]
    return args


def quantile(sorted_v, q):
    pos = q * (len(sorted_v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_v) - 1)
    return sorted_v[lo] + (sorted_v[hi] - sorted_v[lo]) * (pos - lo)


def make_flush(mode, nbytes=FLUSH_BYTES, wait="after", cold_bytes=0):
    """The flush buffers, and what runs before every timed launch: the L2 flush and the busy-wait.
    wait "after": the wait between the flush and the launch (the DRAM idle when the launch starts);
    "before": ahead of the flush, so the launch follows the flush directly, as soltune times it
    (its gate holds the launch without a gap). cold_bytes: that much other memory read before each
    flush, so the launch finds its pages' translations evicted (soltune's timing measured as if so:
    docs/FINDINGS.md)."""
    buf = torch.ones(nbytes // 4, device=DEVICE, dtype=torch.float32)
    other = torch.ones(cold_bytes // 4, device=DEVICE, dtype=torch.float32) if cold_bytes else None
    if mode == "read":
        # soltune's way: a read leaves clean lines, so the timed kernel pays no write-back for them.
        base = lambda: buf.sum()
    else:
        # triton.testing.do_bench's way: up to L2's size of dirty lines left for the kernel to evict.
        base = lambda: buf.zero_()
    flush = base if other is None else (lambda: (other.sum(), base()))
    sleep = getattr(torch.cuda, "_sleep", None)
    if sleep is None:
        return buf, flush
    if wait == "before":
        return buf, lambda: (sleep(SLEEP_CYCLES), flush())
    return buf, lambda: (flush(), sleep(SLEEP_CYCLES))


def reset_persisting(flush):
    """The flush preceded by cudaCtxResetPersistingL2Cache (the stream idle first: a context-wide host
    call): L2 lines a kernel loaded under an evict_last policy outlast a flush by reads, and the next
    repetition, of any implementation reading the same tensor, finds them (soltune's timing resets
    them too: docs/MEASUREMENT.md). torch has already loaded libcudart; its soname is looked up."""
    name = next((l.split()[-1] for l in open("/proc/self/maps") if "libcudart" in l), None)
    if name is None:
        sys.exit("--reset-persisting: no libcudart in this process")
    rt = ctypes.CDLL(name)

    def run():
        torch.cuda.synchronize()
        err = rt.cudaCtxResetPersistingL2Cache()
        if err != 0:
            sys.exit(f"cudaCtxResetPersistingL2Cache failed: error {err}")
        flush()
    return run


def time_fn(fn, args, reps, flush):
    """Microseconds per repetition, sorted; each repetition after an L2 flush (and the busy-wait), own event pair."""
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    torch.cuda.synchronize()
    for i in range(reps):
        flush()
        starts[i].record()
        fn(*args)
        ends[i].record()
    torch.cuda.synchronize()
    return sorted(s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends))


def rel_l2(out, ref):
    """||out - ref|| / ||ref|| in float64: a sanity check of torch.compile against eager; of several
    outputs, the largest."""
    if isinstance(out, tuple):
        return max(rel_l2(o, r) for o, r in zip(out, ref))
    a, b = out.double(), ref.double()
    r = ((a - b).norm() / b.norm()).item()
    del a, b
    return r


def sm_clock_mhz():
    try:  # needs pynvml; absent is fine
        return torch.cuda.clock_rate()
    except Exception:
        return None


def load_package(path, name):
    """The package `soltune export --format python` wrote at path (DIR/<its name>), imported as name so
    that several packages of one name can be compared in one process."""
    path = os.path.abspath(path)
    spec = importlib.util.spec_from_file_location(name, os.path.join(path, "__init__.py"),
                                                  submodule_search_locations=[path])
    if spec is None:
        sys.exit(f"{path}: no __init__.py (expected the folder soltune export --format python wrote)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def package_serves(pkg, problem, dname):
    """Whether the package has a kernel for (problem, dtype)."""
    return any(m["name"] == problem and dname in m["dtypes"] for m in pkg._META["problems"])


def exported_fn(pkg, problem, out=None):
    """soltune's exported kernel for a problem as a callable like the torch ops, through the package's
    function: it returns its output, allocated per call from PyTorch's caching allocator as eager's
    and torch.compile's are, so that in turn they write to the same freed block (no condition
    differs, though bench/placement.py found the address moving no time by more than 0.5 us); or into
    `out`, a given tensor. l1norm's one-element output is allocated once."""
    f = getattr(pkg, problem)
    kept = {}

    def call(*args):
        x = args[0]
        if problem in SEVERAL_OUTPUTS:
            return f(*args)
        if problem == "masked_softmax":  # the mask is soltune's own (causal), the sizes beside x's
            return f(x, out=out if out is not None else torch.empty_like(x), d=MASK_D, causal=1)
        if problem == "l1norm":
            if "y" not in kept:
                kept["y"] = torch.empty((), dtype=x.dtype, device=x.device)
            y = kept["y"]
        else:
            y = out if out is not None else torch.empty_like(x)
        return f(*args, out=y)

    return call


def prepare(problem, dname, impl, args, ref, lib, own_output=False):
    """The callable for impl (lib: soltune's packages by impl name), run once, checked against
    eager's output and warmed up; returns (fn, output, fields to record). torch.compile compiles here.
    own_output: soltune's kernels write into a tensor of their own (a fixed address, as under CUDA
    graphs) instead of the block the caching allocator hands every implementation in turn."""
    op = PROBLEMS[problem][1]
    fields = {}
    if impl == "torch.compile":
        torch._dynamo.reset()  # a fresh, static-shape compile for every case
        fn = torch.compile(op)
    elif impl.startswith("soltune"):  # soltune, soltune#2, ...: one per exported package
        fn = exported_fn(lib[impl], problem, out=torch.empty_like(args[0]) if own_output else None)
    elif impl == "copy":  # the ceiling in this harness: x copied to y, the bytes of a read and a write
        fn = lambda x, *_: torch.empty_like(x).copy_(x)  # the output allocated per call, as the others'
        ref = None  # its output is x, not the problem's
    else:
        fn = op
    out = fn(*args)
    torch.cuda.synchronize()
    if not all(torch.isfinite(o.float()).all().item() for o in (out if isinstance(out, tuple) else (out,))):
        fields["note"] = "non-finite output"
    if ref is not None:
        err = rel_l2(out, ref)
        fields["rel_l2_vs_eager"] = err
        if not err <= (1e-4 if dname == "f32" else 2e-2):
            fields["note"] = f"differs from eager: rel L2 {err:.2e}"
    for _ in range(10):
        fn(*args)
    return fn, out, fields


def new_record(problem, shape, dname, impl, reps, nbytes):
    return {"problem": problem, "shape": shape_dict(shape), "dtype": dname, "impl": impl,
            "median_us": None, "p10_us": None, "p90_us": None, "gbps": None,
            "torch_version": torch.__version__, "bytes": nbytes, "reps": reps}


def summarise(rec, times, nbytes):
    t = sorted(times)
    med = quantile(t, 0.5)
    rec.update(median_us=med, p10_us=quantile(t, 0.1), p90_us=quantile(t, 0.9),
               q1_us=quantile(t, 0.25), q3_us=quantile(t, 0.75), min_us=t[0],
               gbps=nbytes / (med * 1e-6) / 1e9)


def error_text(e):
    msg = f"{type(e).__name__}: {e}".strip().splitlines()
    return msg[0][:500] if msg else type(e).__name__


def run_case(problem, shape, dname, impl, args, reps, flush, nbytes, ref, lib=None, own_output=False):
    """Warm up, check, time; returns (record fields, output to keep as reference or None)."""
    rec = new_record(problem, shape, dname, impl, reps, nbytes)
    try:
        fn, out, fields = prepare(problem, dname, impl, args, ref, lib, own_output)
        rec.update(fields)
        time_fn(fn, args, 5, flush)  # warm-up with the flush pattern too
        rec["sm_clock_mhz_before"] = sm_clock_mhz()
        t = time_fn(fn, args, reps, flush)
        rec["sm_clock_mhz_after"] = sm_clock_mhz()
        summarise(rec, t, nbytes)
        return rec, out if impl == "eager" else None
    except Exception as e:  # e.g. a torch.compile failure: record it, go on with the next case
        rec["error"] = error_text(e)
        return rec, None


def time_interleaved(fns, args, reps, flush, order="rotate", seed=0):
    """Per implementation, its microseconds in repetition order: in repetition i every implementation
    runs once, after its own flush and busy-wait, in an order rotated by i ("rotate": each always
    follows the same one) or drawn afresh ("shuffle", seeded: no fixed predecessor)."""
    names = list(fns)
    rng = random.Random(seed)
    ev = {n: [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(reps)] for n in names}
    torch.cuda.synchronize()
    for i in range(reps):
        turn = [names[(i + k) % len(names)] for k in range(len(names))]
        if order == "shuffle":
            rng.shuffle(turn)
        for n in turn:
            flush()
            ev[n][i][0].record()
            fns[n](*args)
            ev[n][i][1].record()
    torch.cuda.synchronize()
    return {n: [s.elapsed_time(e) * 1000.0 for s, e in ev[n]] for n in names}


def paired(sol, other, seed=0, resamples=2000):
    """soltune minus other per repetition: the median, a bootstrap 95% interval of the median (seeded),
    and the repetitions soltune was faster in."""
    d = sorted(a - b for a, b in zip(sol, other))
    rng = random.Random(seed)
    meds = sorted(quantile(sorted(rng.choice(d) for _ in d), 0.5) for _ in range(resamples))
    return {"median_diff_us": quantile(d, 0.5), "ci95_us": [quantile(meds, 0.025), quantile(meds, 0.975)],
            "soltune_faster_in": sum(1 for v in d if v < 0), "of": len(d)}


def run_interleaved(problem, shape, dname, impls, args, reps, flush, nbytes, lib, order="rotate", own_output=False):
    """Every implementation of one case, timed in turns; soltune paired with each of the others."""
    recs, fns, ref = {}, {}, None
    for impl in impls:
        recs[impl] = new_record(problem, shape, dname, impl, reps, nbytes)
        recs[impl]["interleaved"] = True
        try:
            fn, out, fields = prepare(problem, dname, impl, args, ref, lib, own_output)
            recs[impl].update(fields)
            fns[impl] = fn
            if impl == "eager":
                ref = out
        except Exception as e:
            recs[impl]["error"] = error_text(e)
    try:
        time_interleaved(fns, args, 5, flush, order)
        times = time_interleaved(fns, args, reps, flush, order)
    except Exception as e:
        for impl in fns:
            recs[impl]["error"] = error_text(e)
        return [recs[i] for i in impls]
    for impl, t in times.items():
        summarise(recs[impl], t, nbytes)
    for mine in (i for i in times if i.startswith("soltune")):
        for impl, t in times.items():
            if not impl.startswith("soltune"):
                recs[mine].setdefault("paired", {})[impl] = paired(times[mine], t)
    return [recs[i] for i in impls]


def print_row(rec, shape):
    if rec.get("error"):
        tail = f"ERROR {rec['error']}"
    else:
        spread = f"{rec['p10_us']:.1f}-{rec['p90_us']:.1f}"
        tail = f"{rec['median_us']:>10.1f} {spread:>19} {rec['gbps']:>7.0f}"
        if rec.get("note"):
            tail += f"  ({rec['note']})"
    print(f"{rec['problem']:<10} {shape_label(shape):<12} {rec['dtype']:<5} {rec['impl']:<14} {tail}",
          flush=True)
    for other, p in rec.get("paired", {}).items():
        lo, hi = p["ci95_us"]
        print(f"{'':<10} {'':<12} {'':<5}   {rec['impl']} - {other}: median {p['median_diff_us']:+.2f} us "
              f"(95% CI {lo:+.2f} to {hi:+.2f}), faster in {p['soltune_faster_in']} of {p['of']}",
              flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", default=",".join(PROBLEMS),
                    help="comma-separated subset of " + ",".join(PROBLEMS))
    ap.add_argument("--json", metavar="FILE", help="write the records as a JSON list")
    ap.add_argument("--reps", type=int, default=100, help="timed repetitions per case (>= 50)")
    ap.add_argument("--dtypes", default="f32,bf16", help="comma-separated subset of f32,bf16")
    ap.add_argument("--shapes", default="",
                    help="only these shapes, comma-separated, as labelled in the output (4096x4096, n=268435456)")
    ap.add_argument("--package", metavar="DIR",
                    help="also time soltune's exported kernels through this Python package (soltune export --format "
                         "python, as bench/exported_bench.sh runs it); several, comma-separated, are timed as "
                         "soltune, soltune#2, ...")
    ap.add_argument("--copy", action="store_true",
                    help="also time PyTorch's copy of x into y (x's bytes read and written): the harness's own ceiling")
    ap.add_argument("--order", choices=["rotate", "shuffle"], default="rotate",
                    help="--interleave: rotate the order (each implementation follows the same one) or draw it "
                         "afresh every repetition (seeded)")
    ap.add_argument("--flush-mib", type=int, default=FLUSH_BYTES >> 20,
                    help="the L2 flush's buffer in MiB (default 256, as triton.testing.do_bench)")
    ap.add_argument("--interleave", action="store_true",
                    help="the implementations of a case take turns in every repetition; soltune is paired with each")
    ap.add_argument("--flush", choices=["read", "write"], default="read",
                    help="L2 flush by reading (soltune's way, default) or writing a buffer of --flush-mib")
    ap.add_argument("--cold-mib", type=int, default=0,
                    help="read this much other memory before each flush (the TLB cold, as soltune's timing finds it; "
                         "default 0: the timed kernel's pages stay translated between repetitions)")
    ap.add_argument("--reset-persisting", action="store_true",
                    help="before each flush, wait for the GPU and demote L2 lines loaded under an evict_last "
                         "policy (cudaCtxResetPersistingL2Cache), which a flush by reads leaves, as soltune does")
    ap.add_argument("--own-output", action="store_true",
                    help="soltune's kernels write into a tensor of their own, allocated once per case (a fixed "
                         "address, as under CUDA graphs), not into the freed block every implementation gets in turn")
    ap.add_argument("--wait", choices=["after", "before"], default="after",
                    help="the busy-wait before each timed launch: after the flush (default; the DRAM idles before "
                         "the launch) or before it (the launch follows the flush directly, as in soltune's timing)")
    a = ap.parse_args()
    problems = [p for p in a.problems.split(",") if p]
    dnames = [d for d in a.dtypes.split(",") if d]
    bad = [p for p in problems if p not in PROBLEMS] + [d for d in dnames if d not in DTYPES]
    if bad:
        ap.error(f"unknown: {', '.join(bad)}")
    if a.reps < 50:
        print(f"warning: --reps {a.reps} is under the 50 this project's rules ask for", file=sys.stderr)
    if not torch.cuda.is_available():
        sys.exit("no CUDA device")

    try:  # torch.compile's backend; its version belongs in the header
        import triton
        triton_version = triton.__version__
    except ImportError:
        triton_version = "absent"
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    print(f"torch {torch.__version__} (CUDA {torch.version.cuda}), triton {triton_version}")
    print(f"GPU {torch.cuda.get_device_name()}, {now}")
    print(f"{a.reps} repetitions per case, L2 flushed by {a.flush} of {a.flush_mib} MiB before each, "
          f"the busy-wait {a.wait} the flush"
          + (f", {a.cold_mib} MiB of other memory read before it" if a.cold_mib else "")
          + (", evict_last lines demoted before it (the GPU idle first)" if a.reset_persisting else "")
          + ("; soltune writes into an output of its own" if a.own_output else "") + "; "
          f"GB/s from soltune's byte counts"
          + ("" if hasattr(torch.cuda, "_sleep") else "; no torch.cuda._sleep: launch overhead may show"))
    print(f"{'problem':<10} {'shape':<12} {'dtype':<5} {'impl':<14} {'median us':>10} "
          f"{'p10-p90 us':>19} {'GB/s':>7}", flush=True)

    # After torch: its libcudart serves all. Several packages (comma-separated) are soltune, soltune#2, ...
    paths = a.package.split(",") if a.package else []
    lib = {("soltune" if i == 0 else f"soltune#{i + 1}"): load_package(p, f"soltune_bench_{i}")
           for i, p in enumerate(paths)}
    impls = ("eager", "torch.compile") + tuple(lib)
    flush_buf, flush = make_flush(a.flush, a.flush_mib << 20, a.wait, a.cold_mib << 20)
    if a.reset_persisting:
        flush = reset_persisting(flush)
    gen = torch.Generator(device=DEVICE)
    gen.manual_seed(42)
    records = []
    for problem in problems:
        shapes, _, count = PROBLEMS[problem]
        for shape in shapes:
            if a.shapes and shape_label(shape) not in a.shapes.split(","):
                continue
            for dname in dnames:
                dtype = DTYPES[dname]
                nbytes = count(shape, torch.empty((), dtype=dtype).element_size())
                args = make_args(problem, shape, dtype, gen)
                ref = out = None
                # The copy moves x's bytes each way: a ceiling for every problem but l1norm (read only).
                case_impls = impls + (("copy",) if a.copy and problem != "l1norm" else ())
                # A package exported without this problem or dtype (its knowledge base had no result
                # for it: bench/exported_bench.sh) is left out of this case, with a note.
                missing = [i for i in case_impls if i in lib and not package_serves(lib[i], problem, dname)]
                for i in missing:
                    print(f"{problem} {dname}: {i} has no kernel for it (not exported)", flush=True)
                case_impls = tuple(i for i in case_impls if i not in missing)
                if a.interleave:
                    case = run_interleaved(problem, shape, dname, case_impls, args, a.reps, flush, nbytes, lib, a.order,
                                           a.own_output)
                else:
                    case = []
                    for impl in case_impls:
                        rec, out = run_case(problem, shape, dname, impl, args, a.reps, flush, nbytes, ref, lib,
                                            a.own_output)
                        if impl == "eager":
                            ref = out
                        case.append(rec)
                for rec in case:
                    rec["gpu"] = torch.cuda.get_device_name()
                    rec["date"] = now
                    records.append(rec)
                    print_row(rec, shape)
                if a.json:  # rewritten after every case: a crash late in the run loses nothing
                    with open(a.json, "w") as f:
                        json.dump(records, f, indent=1)
                # Free this case's tensors and compiled code before the next (2^28 f32 is 1 GiB).
                del args, ref, out, case
                torch._dynamo.reset()
                gc.collect()
                torch.cuda.empty_cache()
    del flush_buf


if __name__ == "__main__":
    main()
