#!/usr/bin/env python3
"""The package `soltune export --format python` writes, on a GPU with PyTorch: each problem's function
against PyTorch's own operation at many shapes, from torch tensors (and CuPy arrays where CuPy is
installed, and one known only by DLPack), with out=, under torch.compile(fullgraph=True) through torch.ops.soltune, inside a
captured CUDA graph; bad arguments refused; and the host time of a call from Python against the same
entry point called through ctypes alone.

    python3 tests/python/check_package.py PKG_DIR NAME      (exit 0: every check passed)
"""
import importlib
import random
import sys
import time

import torch
import torch.nn.functional as F

pkg_dir, name = sys.argv[1], sys.argv[2]
sys.path.insert(0, pkg_dir)
k = importlib.import_module(name)
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def rows(rng):
    return (rng.randint(1, 3000), rng.randint(1, 9000))


def flat(rng):
    return (rng.randint(1, 1 << 22),)


def with_params(*params):
    """x, then each parameter over x's last dimension (a norm's weight, bias), drawn around `params`."""
    def make(shape, dtype):
        x = torch.randn(shape, device="cuda", dtype=dtype) * 4
        return (x,) + tuple(torch.randn(shape[-1:], device="cuda", dtype=dtype) * 0.5 + c for c in params)
    return make


# PyTorch's operation per problem in float64 (over the problem's inputs, in the order the package's
# function takes them), the shapes drawn, the inputs built for a shape, and the scale below which an
# output's error counts as absolute (1e-3 where none is given): a norm's y = xhat w + b cancels to
# near 0 where b meets xhat w, and there its f32 error is a few ulps of the terms (up to about 4),
# not of y.
REFS = {
    "softmax": (lambda x: torch.softmax(x.double(), -1), rows, with_params()),
    "gelu": (lambda x: F.gelu(x.double(), approximate="tanh"), flat, with_params()),
    "l1norm": (lambda x: x.double().abs().sum().reshape(1), flat, with_params()),
    "layernorm": (lambda x, w, b: F.layer_norm(x.double(), x.shape[-1:], w.double(), b.double(), eps=1e-5), rows,
                  with_params(1.0, 0.0), 0.1),
    "rmsnorm": (lambda x, w: F.rms_norm(x.double(), x.shape[-1:], w.double(), eps=1e-6), rows, with_params(1.0)),
}
TOL = {torch.float32: 2e-5, torch.bfloat16: 1.6e-2}
rng = random.Random(7)
present = [p for p in REFS if hasattr(k, p)]  # attention is checked on its own, below
for p in present:
    ref, shape_of, inputs_of = REFS[p][:3]
    floor = REFS[p][3] if len(REFS[p]) > 3 else 1e-3
    fn = getattr(k, p)
    for dtype in (torch.float32, torch.bfloat16):
        worst, unserved = 0.0, []
        choice = getattr(k, p + "_choice")
        for _ in range(30):
            args = inputs_of(shape_of(rng), dtype)
            if choice(*args)["index"] < 0:  # no kernel (not even a fallback): the call must say so
                unserved.append(tuple(args[0].shape))
                try:
                    fn(*args)
                    check(False, "%s %s at %s: no kernel, yet no error" % (p, dtype, tuple(args[0].shape)))
                except RuntimeError:
                    pass
                continue
            y = fn(*args)
            torch.cuda.synchronize()
            want = ref(*args)
            err = ((y.double() - want).abs() / (want.abs() + floor)).max().item() if args[0].numel() else 0
            worst = max(worst, err)
        check(not unserved, "%s %s: every one of 30 shapes served (unserved: %s)" % (p, dtype, unserved[:4]))
        check(worst <= TOL[dtype] * 4, "%s %s at 30 shapes: worst relative error %.3g" % (p, dtype, worst))
        args = inputs_of(shape_of(rng), dtype)
        out = torch.full_like(fn(*args), float("nan"))  # the output's shape (l1norm's is one element)
        r = fn(*args, out=out)
        check(r is out and not torch.isnan(out).any().item(), "%s %s writes out=" % (p, dtype))
    args = inputs_of(shape_of(random.Random(1)), torch.float32)
    if p == "l1norm":
        args = (args[0][: 1 << 16].contiguous(),)  # a sum's rounding: a short one compares tightly
    x, params = args[0], args[1:]
    # torch.compile without a graph break, through the custom op.
    op = getattr(torch.ops.soltune, p)
    compiled = torch.compile(lambda *t: op(*t) * 2, fullgraph=True)
    check(torch.allclose(compiled(*args), fn(*args) * 2), "%s under torch.compile(fullgraph=True)" % p)
    # A captured CUDA graph replays the launch on new data in place.
    static_x, g = x.clone(), torch.cuda.CUDAGraph()
    static_y = fn(static_x, *params)
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        static_y = fn(static_x, *params)
    static_x.copy_(torch.randn_like(static_x))
    g.replay()
    torch.cuda.synchronize()
    check(torch.allclose(static_y, fn(static_x, *params)), "%s inside a captured CUDA graph" % p)
    # Bad arguments: refused with ValueError, the output untouched.
    for what, bad in (("a CPU tensor", lambda: fn(x.cpu(), *params)), ("an int tensor", lambda: fn(x.int(), *params)),
                      ("a transposed view", lambda: fn(x.t(), *params) if x.dim() == 2 else fn(x[::2]))):
        try:
            bad()
            check(False, "%s: %s refused" % (p, what))
        except ValueError as e:
            check(True, "%s: %s refused (%s)" % (p, what, e))
    # An array known only by DLPack (as JAX's spread over GPUs): read from its DLTensor; out= given.
    class OnlyDLPack:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    want = fn(*args)
    got = torch.full_like(want, float("nan"))
    fn(*(OnlyDLPack(a) for a in args), out=got)
    torch.cuda.synchronize()
    check(torch.allclose(got, want), "%s from an array known only by DLPack" % p)
    try:
        import cupy
        cargs = [cupy.asarray(a.cpu().numpy()) for a in args]
        check(bool(cupy.allclose(fn(*cargs), cupy.asarray(fn(*args).cpu().numpy()), rtol=1e-5)), "%s from a CuPy array" % p)
    except ImportError:
        print("skip %s from CuPy: not installed" % p)


def attention_reference(q, k, v, causal):
    """O and the rows' log-sum-exp in float64: each key/value head repeated for its query heads, the
    causal mask aligned at the bottom right."""
    g = q.shape[1] // k.shape[1]
    qd, kd, vd = q.double(), k.double().repeat_interleave(g, 1), v.double().repeat_interleave(g, 1)
    s = qd @ kd.transpose(-1, -2) / q.shape[-1] ** 0.5
    if causal:
        s_q, s_k = q.shape[2], k.shape[2]
        i = torch.arange(s_q, device=q.device)[:, None]
        j = torch.arange(s_k, device=q.device)[None, :]
        s = s.masked_fill(j > i + (s_k - s_q), float("-inf"))
    return torch.softmax(s, -1) @ vd, torch.logsumexp(s, -1)


# Attention: O and the log-sum-exp at drawn shapes (grouped-query heads, causal or not, every head
# dimension), against float64; then under torch.compile through its custom op.
def check_graph(name, fn, inputs):
    """fn captured in a CUDA graph on copies of inputs, replayed on new data in them: its outputs
    (one or several) equal a fresh call's on that data."""
    static = [t.clone() for t in inputs]
    fn(*static)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        got = fn(*static)
    for t in static:
        t.copy_(torch.randn_like(t))
    g.replay()
    torch.cuda.synchronize()
    got = got if isinstance(got, tuple) else (got,)
    want = fn(*static)
    want = want if isinstance(want, tuple) else (want,)
    check(all(torch.allclose(a.float(), b.float(), rtol=1e-2, atol=1e-2) for a, b in zip(got, want)),
          "%s inside a captured CUDA graph" % name)


if hasattr(k, "attention"):
    fn = k.attention
    for dtype, tol in ((torch.bfloat16, 2e-2), (torch.float16, 4e-3)):
        worst_o = worst_l = 0.0
        kinds = set()  # (O's dtype, the log-sum-exp's, whether its shape is (b, h, s_q))
        for _ in range(30):
            d, h_kv = rng.choice((64, 128, 256)), rng.choice((1, 2, 4))
            h, b, s_q = h_kv * rng.choice((1, 2, 4)), rng.randint(1, 3), rng.randint(1, 300)
            s_k, causal = rng.randint(s_q, 700), rng.randint(0, 1)
            q = torch.randn(b, h, s_q, d, device="cuda", dtype=dtype)
            kk, v = (torch.randn(b, h_kv, s_k, d, device="cuda", dtype=dtype) for _ in range(2))
            # Twice: the second call of a shape takes the torch fast path (the outputs it allocates).
            for _ in range(2):
                o, lse = fn(q, kk, v, causal=causal) if causal else fn(q, kk, v)
                torch.cuda.synchronize()
                ref_o, ref_l = attention_reference(q, kk, v, causal)
                # NaN never passes: max() would skip it, so it counts as an infinite error.
                err_o = ((o.double() - ref_o).abs().max() / (ref_o.abs().max() + 1e-3)).nan_to_num(float("inf"))
                worst_o = max(worst_o, err_o.item())
                worst_l = max(worst_l, (lse.double() - ref_l).abs().max().nan_to_num(float("inf")).item())
                kinds.add((o.dtype, lse.dtype, lse.shape == q.shape[:3]))
        check(kinds == {(dtype, torch.float32, True)}, "attention %s: O in the inputs' dtype, the log-sum-exp f32 "
              "of shape (b, h, s_q): %s" % (dtype, kinds))
        check(worst_o <= tol, "attention %s at 30 shapes: worst error of O %.3g of its largest element" % (dtype, worst_o))
        check(worst_l <= 1e-2, "attention %s at 30 shapes: worst error of the log-sum-exp %.3g" % (dtype, worst_l))
    try:  # CuPy's arrays in and out (f16), the same kernel's results
        import cupy
        q16, k16, v16 = q.half(), kk.half(), v.half()
        o_c, lse_c = fn(cupy.asarray(q16), cupy.asarray(k16), cupy.asarray(v16))
        o_t, lse_t = fn(q16, k16, v16)
        check(isinstance(o_c, cupy.ndarray) and bool(cupy.array_equal(o_c, cupy.asarray(o_t))) and
              bool(cupy.array_equal(lse_c, cupy.asarray(lse_t))), "attention from CuPy arrays")
    except ImportError:
        print("skip attention from CuPy: not installed")
    compiled = torch.compile(lambda *t: torch.ops.soltune.attention(*t)[0] * 2, fullgraph=True)
    check(torch.allclose(compiled(q, kk, v), fn(q, kk, v)[0] * 2), "attention under torch.compile(fullgraph=True)")
    check_graph("attention", fn, (q, kk, v))
    try:
        fn(q, kk[:, :, :, : d // 2].contiguous(), v)
        check(False, "attention: keys of another head dimension refused")
    except ValueError as e:
        check(True, "attention: keys of another head dimension refused (%s)" % e)

# Matmul: C = A B (trans_b 0: B k x n) or A B^T (trans_b 1: B stored n x k, a linear layer's weight)
# at drawn shapes, odd ones included (served by the fallback where the tuned kernels' rows must be
# 16-byte aligned), against float64; then out=, torch.compile and a refused mismatch.
if hasattr(k, "matmul"):
    fn = k.matmul
    for dtype in (torch.bfloat16, torch.float16):
        worst = 0.0
        for i in range(30):
            m, n, kk = rng.randint(1, 600), rng.choice((rng.randint(1, 600), 8 * rng.randint(1, 80))), rng.randint(1, 600)
            tb = i % 2
            a = torch.randn(m, kk, device="cuda", dtype=dtype)
            b = torch.randn(n, kk, device="cuda", dtype=dtype) if tb else torch.randn(kk, n, device="cuda", dtype=dtype)
            c = fn(a, b, trans_b=tb)
            ref = a.double() @ (b.double().t() if tb else b.double())
            # Relative L2 over the output: the 16-bit rounding of C (2^-9, 2^-12) and f32 sums; NaN fails.
            err = ((c.double() - ref).norm() / (ref.norm() + 1e-30)).nan_to_num(float("inf")).item()
            worst = max(worst, err)
        check(worst < 1e-2, "matmul %s at 30 shapes (odd ones too): worst relative L2 error %.3g" % (dtype, worst))
    a = torch.randn(64, 128, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(256, 128, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(64, 256, device="cuda", dtype=torch.bfloat16)
    fn(a, w, trans_b=1, out=out)
    check(torch.equal(out, fn(a, w, trans_b=1)), "matmul into out=")
    compiled = torch.compile(lambda x, y: torch.ops.soltune.matmul(x, y, trans_b=1) * 2, fullgraph=True)
    check(torch.equal(compiled(a, w), fn(a, w, trans_b=1) * 2), "matmul under torch.compile(fullgraph=True)")
    check_graph("matmul", lambda x, y: fn(x, y, trans_b=1), (a, w))
    try:  # CuPy's arrays in (f16: CuPy has no bf16), CuPy's out, the same kernel's result
        import cupy
        a16, w16 = a.half(), w.half()
        got = fn(cupy.asarray(a16), cupy.asarray(w16), trans_b=1)
        check(isinstance(got, cupy.ndarray) and bool(cupy.array_equal(got, cupy.asarray(fn(a16, w16, trans_b=1)))),
              "matmul from CuPy arrays")
    except ImportError:
        print("skip matmul from CuPy: not installed")
    try:
        fn(a, w[:, :64].contiguous(), trans_b=1)
        check(False, "matmul: a weight of another k refused")
    except ValueError as e:
        check(True, "matmul: a weight of another k refused (%s)" % e)

# Host time per call: the package's function against its entry point through ctypes alone.
if present:
    p = present[0]
    fn = getattr(k, p)
    x = torch.randn((8, 64) if p == "softmax" else (512,), device="cuda")
    y = torch.empty_like(x)
    import ctypes
    entry = getattr(k._library(), "soltune_py_%s_f32" % p)
    sizes = (ctypes.c_longlong * x.dim())(*x.shape)
    ptrs = (ctypes.c_void_p * 2)(x.data_ptr(), y.data_ptr())
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def per_call(f, n=2000):
        for _ in range(100):
            f()
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(n):
            f()
        torch.cuda.synchronize()
        return (time.perf_counter() - t) / n * 1e6

    py = per_call(lambda: fn(x, out=y))
    raw = per_call(lambda: entry(0, ptrs, sizes, stream))
    print("host time per call of %s: %.1f us from Python, %.1f us through ctypes alone (overhead %.1f us)" % (p, py, raw, py - raw))
print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
