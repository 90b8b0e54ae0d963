#!/usr/bin/env python3
"""Writes docs/BENCHMARKS.md from bench/figures.json (Python's standard library only):

    python3 bench/render_benchmarks.py bench/figures.json > docs/BENCHMARKS.md

The page holds one table per problem, rows joined from the records of one measurement (a set: the
tuning run's figures beside PyTorch's harness, or beside cuBLAS), each set a letter whose date,
condition and commands stand under the table. Nothing here measures or edits a figure: derived
columns (a share of the copy's or cuBLAS's time, TFLOP/s) are computed from the records unless a
record carries them. bench/figures.py writes the records; bench/benchmarks.sh runs both.
"""
import json
import sys

MEMORY_BOUND = [("gelu", "GELU (tanh form)"), ("softmax", "Softmax"), ("layernorm", "LayerNorm"),
                ("rmsnorm", "RMSNorm"), ("l1norm", "L1 norm"), ("add_rmsnorm", "Residual add + RMSNorm"),
                ("add_rmsnorm_fp8", "Residual add + RMSNorm + FP8 quantization (add_rmsnorm_fp8)"),
                ("masked_softmax", "Attention scores' softmax with the scale and the causal mask (masked_softmax)")]
# A table with no harness row says so, and names the card its tuning runs measured on.
TUNED_ONLY_CARD = {"add_rmsnorm": "NVIDIA H100 80GB HBM3"}
DTYPE_ORDER = {"f32": 0, "bf16": 1, "f16": 2}
SOURCES = {"harness": "PyTorch's harness", "tune": "tuning runs, soltune's timing", "cublas": "cuBLAS",
           "sweep": "the exported header's sweep", "baseline": "baselines",
           "scaled_mm": "PyTorch's harness (torch._scaled_mm)", "torch_epilogue": "PyTorch's harness (GEMM, eager, torch.compile, exported)"}
CONDITIONS = {"cold": "cold", "flushed": "L2 flushed only"}


def dims(shape):
    return {k: int(v) for k, v in (p.split("=") for p in shape.split(","))}


def power(v):
    """2^k for the large powers of two the shapes use, else the number."""
    return f"2^{v.bit_length() - 1}" if v >= 1 << 16 and v & (v - 1) == 0 else str(v)


def shape_label(shape):
    d = dims(shape)
    if "rows" in d:
        return f"{power(d['rows'])} x {power(d['cols'])}"
    if "heads" in d:  # masked_softmax's
        return f"{d['heads']} heads, {d['s_q']} x {power(d['s_k'])}, d {d['d']}" + (", causal" if d.get("causal") else "")
    if "m" in d:
        m, n, k = d["m"], d["n"], d["k"]
        size = f"{m}^3" if m == n == k else f"{m}x{n}x{k}"
        return f"{size} {'NT' if d.get('trans_b') else 'NN'}"
    return ", ".join(f"{k} = {power(v)}" for k, v in d.items())


def num(v, digits=1):
    return "-" if v is None else f"{v:.{digits}f}"


def spread(r):
    if r is None or r.get("us") is None:
        return "-"
    if r.get("q1_us") is None:
        return num(r["us"])
    return f"{r['us']:.1f} ({r['q1_us']:.1f}-{r['q3_us']:.1f})"


def pct(v, digits=0):
    return "-" if v is None else f"{100 * v:.{digits}f}%"


def ratio(a, b):
    return a / b if a is not None and b else None


def code(text):
    return f"`{text}`"


class Table:
    """Rows keyed within a table; each row remembers its set, whose letter names its legend entry."""

    def __init__(self):
        self.rows, self.sets = {}, []

    def add(self, key, r):
        if r["set"] not in self.sets:
            self.sets.append(r["set"])
        row = self.rows.setdefault((r["set"],) + key, {"set": r["set"]})
        # A row shows soltune's best: of several tuned records (variants) the fastest.
        held = row.get(r["source"])
        if held is None or (r["source"] == "tune" and r.get("us") is not None and held.get("us") is not None and r["us"] < held["us"]):
            row[r["source"]] = r
        row.setdefault("records", []).append(r)

    def join(self, name, peers, key):
        """Puts beside each row, as row[name], the peer record of its set and shape (cuBLAS's or
        PyTorch's time) that `peers` holds under key(the row's key), where there is one."""
        for k, row in self.rows.items():
            if (p := peers.get(key(k))) is not None:
                row["records"].append(p)
                row[name] = p

    def letter(self, row):
        return "abcdefghijklmnopqrstuvwxyz"[self.sets.index(row["set"])]

    def render(self, columns, sort):
        rows = sorted(self.rows.values(), key=sort)
        if len(self.sets) > 1:
            columns = columns + [("run", False, self.letter)]
        out = ["| " + " | ".join(c[0] for c in columns) + " |",
               "| " + " | ".join("---:" if c[1] else "---" for c in columns) + " |"]
        out += ["| " + " | ".join(c[2](row) for c in columns) + " |" for row in rows]
        out.append("")
        out += self.legend(rows)
        return out

    def legend(self, rows):
        out = []
        for s in self.sets:
            entries = []
            for row in rows:
                for r in row["records"]:
                    if r["set"] != s:
                        continue
                    e = (SOURCES.get(r["source"], r["source"]), CONDITIONS.get(r["condition"], r["condition"]),
                         r["date"], r["command"], r.get("note", ""))
                    if e not in entries:
                        entries.append(e)
            sources = []
            for e in entries:
                sources += [e[0]] if e[0] not in sources else []
            entries.sort(key=lambda e: sources.index(e[0]))  # a source's commands together
            prefix = f"{self.letter({'set': s})}: " if len(self.sets) > 1 else ""
            parts = [f"{src}, {cond}, {date}: {code(cmd)}" + (f" ({note})" if note else "")
                     for src, cond, date, cmd, note in entries]
            out.append("- " + prefix + "; ".join(parts) + ".")
        return out + [""]


def by_shape(order):
    """Rows by the set's first appearance, then the shape's, then f32, bf16, f16."""
    return lambda row: (row["order_set"], order.index(row["shape"]), DTYPE_ORDER.get(row["dtype"], 9))


def memory_bound(records, problem):
    t, shapes = Table(), []
    for r in records:
        if r["problem"] != problem or r["source"] not in ("harness", "tune"):
            continue
        t.add((r["shape"], r["dtype"]), r)
        if r["shape"] not in shapes:
            shapes.append(r["shape"])
    for (s, shape, dtype), row in t.rows.items():
        row.update(shape=shape, dtype=dtype, order_set=t.sets.index(s))
    if not t.rows:
        return []
    h = lambda row, f, d=1: num(row.get("harness", {}).get(f), d)  # noqa: E731
    tu = lambda row, f, d=1: num(row.get("tune", {}).get(f), d)  # noqa: E731

    def of_copy(row):
        r = row.get("harness", {})
        return pct(r.get("of_copy", ratio(r.get("copy_us"), r.get("soltune_us"))))

    def vs(row):
        r = row.get("harness", {})
        if r.get("vs_compile_us") is None:
            return "-"
        lo, hi = r["vs_compile_ci"]
        return f"{r['vs_compile_us']:+.2f} ({lo:+.2f} to {hi:+.2f})"

    def faster(row):
        r = row.get("harness", {})
        return "-" if r.get("faster_in") is None else f"{r['faster_in']}/{r['reps']}"

    def kernel(row):
        r = row.get("tune", {})
        if not r.get("variant"):
            return "-"
        return f"{r['variant']}: {r['config']}" if r.get("config") else r["variant"]

    columns = [("shape", False, lambda row: shape_label(row["shape"])), ("dtype", False, lambda row: row["dtype"]),
               ("soltune", True, lambda row: h(row, "soltune_us")), ("eager", True, lambda row: h(row, "eager_us")),
               ("torch.compile", True, lambda row: h(row, "compile_us")), ("copy", True, lambda row: h(row, "copy_us")),
               ("of copy", True, of_copy), ("soltune - torch.compile", True, vs), ("faster", True, faster),
               ("tuned", True, lambda row: tu(row, "us")), ("% copy", True, lambda row: tu(row, "pct_copy")),
               ("SOL", True, lambda row: tu(row, "sol", 3)), ("SOL-EB", True, lambda row: tu(row, "sol_eb", 3)),
               ("kernel", False, kernel)]
    return t.render(columns, by_shape(shapes))


def matmul(records):
    t, variants, shapes = Table(), [], []
    for r in records:
        if r["problem"] != "matmul" or r["source"] != "tune" or "card" in r:
            continue
        t.add((r["variant"], r["shape"], r["dtype"]), r)
        variants += [r["variant"]] if r["variant"] not in variants else []
        shapes += [r["shape"]] if r["shape"] not in shapes else []
    cublas = {(r["set"], r["shape"], r["dtype"]): r for r in records if r["problem"] == "matmul" and r["source"] == "cublas"}
    for (s, variant, shape, dtype), row in t.rows.items():
        row.update(variant=variant, shape=shape, dtype=dtype, order_set=t.sets.index(s))
    t.join("cublas", cublas, lambda k: (k[0], k[2], k[3]))
    if not t.rows:
        return []

    def tflops(row):
        d, r = dims(row["shape"]), row["tune"]
        return num(r.get("tflops", 2 * d["m"] * d["n"] * d["k"] / r["us"] / 1e6), 0)

    def of_cublas(row):
        r = row["tune"]
        return pct(r.get("of_cublas", ratio(row.get("cublas", {}).get("us"), r["us"])), 1)

    tu = lambda row, f, d=3: num(row["tune"].get(f), d)  # noqa: E731
    columns = [("variant", False, lambda row: row["variant"]), ("dtype", False, lambda row: row["dtype"]),
               ("shape", False, lambda row: shape_label(row["shape"])), ("soltune", True, lambda row: spread(row["tune"])),
               ("cuBLAS", True, lambda row: spread(row.get("cublas"))), ("of cuBLAS", True, of_cublas),
               ("TFLOP/s", True, tflops), ("SOL", True, lambda row: tu(row, "sol")),
               ("SOL-EB", True, lambda row: tu(row, "sol_eb")), ("configuration", False, lambda row: row["tune"].get("config") or "-")]
    sort = lambda row: (variants.index(row["variant"]), row["order_set"], DTYPE_ORDER.get(row["dtype"], 9),  # noqa: E731
                        shapes.index(row["shape"]))
    return t.render(columns, sort)


def on_card(records):
    """GEMMs measured on another card than the page's (each record names it): soltune's best per shape
    and variant, its T_ref (cuBLAS in the same run) and torch.matmul in PyTorch's harness on that card."""
    t, shapes, variants = Table(), [], []
    for r in records:
        if r["problem"] != "matmul" or "card" not in r or r["set"] == "budget":
            continue
        if r["source"] == "tune":
            t.add((r["variant"], r["shape"], r["dtype"]), r)
            variants += [r["variant"]] if r["variant"] not in variants else []
        shapes += [r["shape"]] if r["shape"] not in shapes else []
    torch = {(r["set"], r["shape"], r["dtype"]): r for r in records if "card" in r and r["source"] == "cublas"}
    for (s, variant, shape, dtype), row in t.rows.items():
        row.update(variant=variant, shape=shape, dtype=dtype, order_set=t.sets.index(s), card=row["tune"]["card"])
    t.join("torch", torch, lambda k: (k[0], k[2], k[3]))
    if not t.rows:
        return []

    def tflops(row):
        d = dims(row["shape"])
        return num(2 * d["m"] * d["n"] * d["k"] / row["tune"]["us"] / 1e6, 0)

    columns = [("shape", False, lambda row: shape_label(row["shape"])), ("variant", False, lambda row: row["variant"]),
               ("dtype", False, lambda row: row["tune"]["dtype"]), ("soltune", True, lambda row: spread(row["tune"])),
               ("T_ref (cuBLAS)", True, lambda row: num(row["tune"].get("t_ref_us"))),
               ("torch.matmul", True, lambda row: spread(row.get("torch"))),
               ("of cuBLAS", True, lambda row: pct(ratio(row["tune"].get("t_ref_us"), row["tune"]["us"]), 1)),
               ("TFLOP/s", True, tflops), ("SOL", True, lambda row: num(row["tune"].get("sol"), 3)),
               ("configuration", False, lambda row: row["tune"].get("config") or "-"), ("card", False, lambda row: row["card"])]
    sort = lambda row: (row["order_set"], dims(row["shape"])["m"], variants.index(row["variant"]), DTYPE_ORDER.get(row["dtype"], 9))  # noqa: E731
    return t.render(columns, sort)


def exported(records):
    """soltune's exported GEMMs called from PyTorch through the package, timed beside torch.matmul in
    PyTorch's harness, the two in turns within every repetition (bench/torch_matmul.py --package)."""
    t = Table()
    for r in records:
        if r["problem"] == "matmul" and r["source"] == "cublas" and r.get("exported_us") is not None:
            t.add((r["shape"], r["dtype"]), r)
    if not t.rows:
        return []
    for (s, shape, dtype), row in t.rows.items():
        row.update(shape=shape, dtype=dtype, order_set=t.sets.index(s))
    mine = lambda r: {"us": r["exported_us"], "q1_us": r["exported_q1_us"], "q3_us": r["exported_q3_us"]}  # noqa: E731

    def diff(row):
        p = row["cublas"].get("paired")
        return "-" if not p else f"{p['median_diff_us']:+.1f} ({p['ci95_us'][0]:+.1f} to {p['ci95_us'][1]:+.1f})"

    columns = [("shape", False, lambda row: shape_label(row["shape"])), ("dtype", False, lambda row: row["dtype"]),
               ("soltune (exported)", True, lambda row: spread(mine(row["cublas"]))),
               ("torch.matmul", True, lambda row: spread(row["cublas"])),
               ("of cuBLAS", True, lambda row: pct(ratio(row["cublas"]["us"], row["cublas"]["exported_us"]), 1)),
               ("soltune - cuBLAS, per repetition", True, diff), ("card", False, lambda row: row["cublas"].get("card", "-"))]
    sort = lambda row: (row["order_set"], dims(row["shape"])["m"], DTYPE_ORDER.get(row["dtype"], 9))  # noqa: E731
    return t.render(columns, sort)


SCALE_MODES = {0: "per tensor", 1: "per row", 2: "per block"}
ACTIVATIONS = {0: "none", 1: "ReLU", 2: "GELU (tanh)", 3: "GELU (erf)", 4: "SiLU"}


def beside_peer(records, problem, source, name):
    """A table of soltune's best per shape and dtype of `problem`, each row joined (as `name`) to the
    record of `source` (a peer's harness) of the same set, shape and dtype; and the shapes in order."""
    t, shapes = Table(), []
    for r in records:
        if r["problem"] == problem and r["source"] == "tune":
            t.add((r["shape"], r["dtype"]), r)
            shapes += [r["shape"]] if r["shape"] not in shapes else []
    peer = {(r["set"], r["shape"], r["dtype"]): r for r in records if r["source"] == source}
    for (s, shape, dtype), row in t.rows.items():
        row.update(shape=shape, dtype=dtype, order_set=t.sets.index(s))
    t.join(name, peer, lambda k: k)
    return t, shapes


def fp8(records):
    """matmul_fp8: soltune's best per shape beside T_ref (cuBLASLt in the same run) and
    torch._scaled_mm in PyTorch's harness."""
    t, shapes = beside_peer(records, "matmul_fp8", "scaled_mm", "torch")
    if not t.rows:
        return []

    def label(row):
        d = dims(row["shape"])
        return f"{d['m']}^3" if d["m"] == d["n"] == d["k"] else f"{d['m']}x{d['n']}x{d['k']}"

    def tflops(row):
        d = dims(row["shape"])
        return num(2 * d["m"] * d["n"] * d["k"] / row["tune"]["us"] / 1e6, 0)

    def torch_time(row):
        r = row.get("torch")
        return spread(r) + ("" if r is None or r["how"] == "torch._scaled_mm" else " (torch ops)")

    tu = lambda row, f, d=3: num(row["tune"].get(f), d)  # noqa: E731
    columns = [("shape", False, label), ("scales", False, lambda row: SCALE_MODES[dims(row["shape"])["scale"]]),
               ("dtype", False, lambda row: row["dtype"]), ("soltune", True, lambda row: spread(row["tune"])),
               ("T_ref (cuBLASLt)", True, lambda row: tu(row, "t_ref_us", 1)),
               ("of T_ref", True, lambda row: pct(ratio(row["tune"].get("t_ref_us"), row["tune"]["us"]), 1)),
               ("torch._scaled_mm", True, torch_time), ("TFLOP/s", True, tflops),
               ("SOL", True, lambda row: tu(row, "sol")), ("SOL-EB", True, lambda row: tu(row, "sol_eb")),
               ("configuration", False, lambda row: row["tune"].get("config") or "-"),
               ("card", False, lambda row: row["tune"].get("card", "-"))]
    return t.render(columns, by_shape(shapes))


def attention(records):
    """Attention forward: soltune's best per shape beside T_ref (the unfused baseline in the same run)
    and scaled_dot_product_attention in PyTorch's harness on the same card."""
    t, shapes = beside_peer(records, "attention", "sdpa", "sdpa")
    if not t.rows:
        return []

    def label(row):
        d = dims(row["shape"])
        heads = f"{d['h']}" if d["h"] == d["h_kv"] else f"{d['h']}/{d['h_kv']}"
        seq = f"{d['s_q']}" if d["s_q"] == d["s_k"] else f"{d['s_q']} x {d['s_k']}"
        return f"b {d['b']}, h {heads}, s {seq}, d {d['d']}" + (", causal" if d["causal"] else "")

    def tflops(row):
        d = dims(row["shape"])
        pairs = d["s_q"] * (d["s_k"] - d["s_q"]) + d["s_q"] * (d["s_q"] + 1) // 2 if d["causal"] else d["s_q"] * d["s_k"]
        return num(4 * d["b"] * d["h"] * d["d"] * pairs / row["tune"]["us"] / 1e6, 0)

    tu = lambda row, f, d=3: num(row["tune"].get(f), d)  # noqa: E731
    columns = [("shape", False, label), ("dtype", False, lambda row: row["dtype"]),
               ("soltune", True, lambda row: spread(row["tune"])), ("variant", False, lambda row: row["tune"]["variant"]),
               ("SDPA", True, lambda row: spread(row.get("sdpa"))),
               ("of SDPA", True, lambda row: pct(ratio((row.get("sdpa") or {}).get("us"), row["tune"]["us"]), 1)),
               ("T_ref (unfused)", True, lambda row: tu(row, "t_ref_us", 1)), ("TFLOP/s", True, tflops),
               ("SOL", True, lambda row: tu(row, "sol")), ("SOL-EB", True, lambda row: tu(row, "sol_eb")),
               ("configuration", False, lambda row: row["tune"].get("config") or "-"),
               ("card", False, lambda row: row["tune"].get("card", "-"))]
    return t.render(columns, by_shape(shapes))


def epilogue(records, problem="matmul_epilogue"):
    """A GEMM with what follows it fused (matmul_epilogue, swiglu): soltune's best per shape beside T_ref
    (the unfused pair, in the same run), and PyTorch's harness: the plain GEMM, eager and torch.compile,
    with the exported kernel timed in the same turns."""
    t, shapes = beside_peer([r for r in records if r["problem"] == problem], problem, "torch_epilogue", "torch")
    if not t.rows:
        return []

    def label(row):
        d = dims(row["shape"])
        act = f", {ACTIVATIONS.get(d['act'], d['act'])}" if "act" in d else ""
        return f"{d['m']}x{d['n']}x{d['k']}{act}"

    def torch(row, field):
        return num((row.get("torch") or {}).get(field))

    def of_gemm(row):
        p = row.get("torch") or {}
        return pct(ratio(p.get("exported_us"), p.get("gemm_us")), 1)

    def vs_compile(row):
        p = (row.get("torch") or {}).get("vs_compile")
        return "-" if not p else f"{p['median_diff_us']:+.1f} ({p['ci95_us'][0]:+.1f}, {p['ci95_us'][1]:+.1f})"

    tu = lambda row, f, d=3: num(row["tune"].get(f), d)  # noqa: E731
    columns = [("shape, act" if problem == "matmul_epilogue" else "shape", False, label), ("dtype", False, lambda row: row["dtype"]),
               ("soltune", True, lambda row: spread(row["tune"])), ("variant", False, lambda row: row["tune"]["variant"]),
               ("T_ref (unfused)", True, lambda row: tu(row, "t_ref_us", 1)),
               ("of T_ref", True, lambda row: pct(ratio(row["tune"].get("t_ref_us"), row["tune"]["us"]), 1)),
               ("exported", True, lambda row: torch(row, "exported_us")), ("GEMM alone", True, lambda row: torch(row, "gemm_us")),
               ("exported of GEMM alone", True, of_gemm), ("eager", True, lambda row: torch(row, "eager_us")),
               ("torch.compile", True, lambda row: torch(row, "compile_us")),
               ("exported - torch.compile", True, vs_compile),
               ("SOL", True, lambda row: tu(row, "sol")),
               ("configuration", False, lambda row: row["tune"].get("config") or "-"),
               ("card", False, lambda row: row["tune"].get("card", "-"))]
    return t.render(columns, by_shape(shapes))


def budgets(records):
    """Whole tuning runs under a time budget: the command's wall time against it, what the run reached."""
    rows = [r for r in records if r["set"] == "budget"]
    if not rows:
        return []
    out = ["| config | budget (s) | wall time (s) | tasks measured | re-timed at the end | evaluations | per candidate on the GPU (ms) | of it outside the timed runs (ms) | card | date |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for r in rows:
        out.append(f"| {code(r['command'])} | {r['budget_s']} | {r['wall_s']:.1f} | {r['measured']} of {r['tasks']} | "
                   f"{r['retimed']} of {r['tasks']} | {r['evaluations']} | {r['per_candidate_ms']:.1f} | "
                   f"{r['outside_timed_ms']:.1f} | {r['card']} | {r['date']} |")
    return out + [""]


def python_calls(records):
    """The host time of one call of an exported kernel: from C++, ctypes, the Python package, torch."""
    rows = [r for r in records if r["set"] == "python_call"]
    if not rows:
        return []
    out = ["| call | us a call (median of 7 rounds) | rounds | card | date | command |", "| --- | ---: | --- | --- | --- | --- |"]
    for r in rows:
        for name, what in (("cpp", "the package's C entry point from a C++ loop"), ("ctypes", "the same through ctypes"),
                           ("package", "the package's function, out= given"),
                           ("package+", "the package's function, its output allocated"),
                           ("torch", "torch's own operation (eager)")):
            t = r["times_us"][name]
            out.append(f"| {what} | {r['median_us'][name]:.2f} | {min(t):.2f}-{max(t):.2f} | {r['card']} | {r['date']} | "
                       f"{code(r['command'])} |")
    return out + [""]


def tuned_only(records, problem):
    t, shapes = Table(), []
    for r in records:
        if r["problem"] == problem and r["source"] == "tune":
            t.add((r["shape"], r["dtype"]), r)
            shapes += [r["shape"]] if r["shape"] not in shapes else []
    for (s, shape, dtype), row in t.rows.items():
        row.update(shape=shape, dtype=dtype, order_set=t.sets.index(s))
    tu = lambda row, f, d=1: num(row["tune"].get(f), d)  # noqa: E731
    columns = [("shape", False, lambda row: shape_label(row["shape"])), ("dtype", False, lambda row: row["dtype"]),
               ("variant", False, lambda row: row["tune"]["variant"]), ("soltune", True, lambda row: tu(row, "us")),
               ("T_ref", True, lambda row: tu(row, "t_ref_us")), ("T_SOL", True, lambda row: tu(row, "t_sol_us")),
               ("SOL", True, lambda row: tu(row, "sol", 3)), ("SOL-EB", True, lambda row: tu(row, "sol_eb", 3)),
               ("configuration", False, lambda row: row["tune"].get("config") or "-")]
    return t.render(columns, by_shape(shapes)) if t.rows else []


def sweep(records):
    t, order = Table(), [p for p, _ in MEMORY_BOUND]
    for r in records:
        if r["source"] == "sweep":
            t.add((r["problem"],), r)
    for (s, problem), row in t.rows.items():
        row.update(problem=problem)
    names = dict(MEMORY_BOUND)
    g = lambda row, f: row["sweep"][f]  # noqa: E731
    columns = [("problem", False, lambda row: names.get(row["problem"], row["problem"])),
               ("cases correct", True, lambda row: f"{g(row, 'correct')} of {g(row, 'cases')}"),
               ("served by tuned / nearest / fallback", False,
                lambda row: f"{g(row, 'tuned')} / {g(row, 'nearest')} / {g(row, 'fallback')}"),
               ("median time / copy, f32", True, lambda row: f"{g(row, 'ratio_f32'):.2f}x"),
               ("bf16", True, lambda row: f"{g(row, 'ratio_bf16'):.2f}x"),
               ("slowest case", False, lambda row: g(row, "slowest"))]
    return t.render(columns, lambda row: order.index(row["problem"])) if t.rows else []


def baselines(records):
    t, order = Table(), []
    for r in records:
        if r["source"] == "baseline":
            t.add((r["problem"], r["shape"], r["dtype"]), r)
            order += [(r["problem"], r["shape"])]
    for (s, problem, shape, dtype), row in t.rows.items():
        row.update(problem=problem, shape=shape, dtype=dtype)
    b = lambda row: row["baseline"]  # noqa: E731
    columns = [("problem", False, lambda row: row["problem"]), ("shape", False, lambda row: shape_label(row["shape"])),
               ("dtype", False, lambda row: row["dtype"]), ("T_ref measured", True, lambda row: num(b(row)["t_ref_us"])),
               ("model", True, lambda row: num(b(row)["model_us"])),
               ("model / measured", True, lambda row: num(b(row).get("ratio", ratio(b(row)["model_us"], b(row)["t_ref_us"])), 2))]
    return t.render(columns, lambda row: order.index((row["problem"], row["shape"]))) if t.rows else []


def render(doc):
    d, recs = doc["device"], doc["records"]
    out = [
        "# Benchmarks",
        "",
        f"soltune's current figures on an {d['name']} ({d['arch']}, {d['sms']} SMs), driver {d['driver']}, CUDA {d['cuda']},",
        f"beside PyTorch {d['torch']} (Triton {d['triton']}) on the same card: eager, torch.compile and cuBLAS. What",
        "was learned on the way, and why the designs are what they are: [FINDINGS.md](FINDINGS.md). How soltune",
        "measures: [MEASUREMENT.md](MEASUREMENT.md).",
        "",
        "This page is generated from the records in `bench/figures.json`:",
        "`python3 bench/render_benchmarks.py bench/figures.json > docs/BENCHMARKS.md` writes it. On a GPU machine",
        "`scripts/gpu-bench.sh bench` measures the figures again, merges them into that file and rewrites the page",
        "(bench/README.md).",
        "",
        "## Reading the tables",
        "- Times are medians in microseconds. **Cold**: before every timed run L2 is flushed by a read of at least",
        "  256 MiB and lines loaded under an evict_last policy are demoted (`cudaCtxResetPersistingL2Cache`), as",
        "  soltune times every candidate; PyTorch's harness does the same with `--reset-persisting`. soltune is",
        "  compared with PyTorch cold only: by the harness's default, the kernels that keep their output in L2",
        "  (docs/TEMPLATES.md) leave those lines to whatever is timed next (FINDINGS.md).",
        "- soltune, eager, torch.compile, copy: PyTorch's harness (`bench/torch_reference.py`), the same process,",
        "  inputs, flush and CUDA events for all, the implementations in turns in a shuffled order; soltune is",
        "  the kernel `soltune export` ships, copy is PyTorch's `y.copy_(x)` of the same bytes. of copy: the copy's",
        "  time over soltune's. soltune - torch.compile: the median of the paired differences with its bootstrap",
        "  95% interval; faster: the repetitions soltune won.",
        "- tuned, % copy, SOL, SOL-EB, kernel: the tuning run's best (soltune's own timing, cold) for the",
        "  fastest variant, its share of the copy kernel's bandwidth measured in the same run, and its",
        "  configuration. `soltune export` takes the fastest result of the knowledge base, which may be another",
        "  configuration of the same time.",
        "- SOL = 0.5 (1 + ln(T_ref/T) / ln(T_ref/T_SOL)): 0.5 is the problem's unfused baseline T_ref, 1.0 the",
        "  hardware's limit T_SOL (FLOPs over the peak rate or bytes over the bandwidth, from ceilings measured on",
        "  the card). SOL-EB is SOL-ExecBench's 1 / (1 + (T - T_SOL) / (T_ref - T_SOL)).",
        "- run: the measurement a row comes from, listed under its table; '-': not measured there.",
        "",
    ]
    for problem, title in MEMORY_BOUND:
        table = memory_bound(recs, problem)
        if not table:
            continue
        if not any(r["problem"] == problem and r["source"] == "harness" for r in recs):
            card = TUNED_ONLY_CARD.get(problem)
            title += f" ({card + ', ' if card else ''}soltune's timing only)"
        out += [f"## {title}", ""] + table
    # Each section: its title, the paragraph above its table, the table (empty: the section is left out).
    sections = [
        ("Matmul (GEMM)",
         ["soltune's best per variant beside cuBLAS (`torch.matmul`, TF32 off) timed in the same measurement;",
          "of cuBLAS is cuBLAS's time over soltune's, soltune's and cuBLAS's quartiles in brackets. SOL counts",
          "16-bit GEMMs against the 16-bit tensor ceiling whatever unit a template uses, f32 against FP32."],
         matmul(recs)),
        ("Matmul at Llama-3's linear layers",
         ["`configs/matmul-models.yaml`: y = x @ w.t() in bf16 at eight layers' shapes, every variant in one run.",
          "T_ref is cuBLAS, through cuBLASLt as torch.matmul plans it, timed by soltune in the same run; of cuBLAS",
          "is T_ref over soltune's time, SOL 0.5 is cuBLAS's time. torch.matmul is PyTorch's harness on the",
          "same card minutes later. Each row names its card."],
         on_card(recs)),
        ("Exported GEMMs beside torch.matmul",
         ["The best kernels of a tuning run as `soltune export --format python` packs them, called from PyTorch",
          "and timed in PyTorch's harness beside `torch.matmul`: in every repetition each runs once after its own",
          "L2 flush, in turns, so both see the same SM clock. The last column is soltune's time minus cuBLAS's",
          "per repetition: the median and a bootstrap 95% interval."],
         exported(recs)),
        ("FP8 GEMM (matmul_fp8)",
         ["C = (sa A)(sb B)^T in e4m3 with bf16 out, at torch._scaled_mm's per-tensor and per-row scales and",
          "DeepGEMM's per-block ones (1 x 128 of A, 128 x 128 of B) at its shapes. T_ref is cuBLASLt's FP8",
          "matmul as torch._scaled_mm plans it, timed by soltune in the same run; of T_ref is its time over",
          "soltune's. torch._scaled_mm is PyTorch's harness on the same card (torch ops where it refuses a",
          "case). SOL counts against the 8-bit tensor ceiling. At 8192^3 the H100 ran under power: its SM clock",
          "fell from 1980 to about 1450 MHz while soltune timed candidates and T_ref back to back (re-timed",
          "interleaved: 851.1 against 853.7 us per tensor), and torch._scaled_mm, timed alone minutes later, ran",
          "at a higher clock: compare soltune with T_ref. 4096x32768x512 has no row: every wgmma_ws candidate",
          "there failed the check's band (1 to 20 elements of 5e8, docs/FINDINGS.md)."],
         fp8(recs)),
        ("Attention forward",
         ["`configs/attention.yaml`: O = softmax(Q K^T / sqrt(d)) V with the rows' log-sum-exp, bf16, at 32768",
          "tokens of 16 heads and at decoding sizes with grouped-query heads (d 256: the fallback's own task).",
          "T_ref is the unfused product, softmax and product timed by soltune in the same run: plain tiled",
          "kernels in run a (which is why SOL reads high there), PyTorch's math path with both products on",
          "cuBLASLt in run b. SDPA is PyTorch's `scaled_dot_product_attention` (cuDNN's kernels on this card)",
          "in PyTorch's harness in the same device call; of SDPA is its time over soltune's. fa3 is the",
          "warp-specialised Hopper kernel (wgmma, TMA), fa2 the portable mma.sync kernel and the fallback. In",
          "run a nine tasks shared 180 s (the long sequences got one or two evaluations); in run b four fa3",
          "tasks shared 100 s (7 evaluations each, the 16384-token one 1)."],
         attention(recs)),
        ("GEMM with a fused epilogue (matmul_epilogue)",
         ["`configs/matmul_epilogue.yaml`: y = GELU(x @ w.t() + b) + r in bf16 at a transformer's layer shapes.",
          "T_ref is the unfused pair timed by soltune in the same run: cuBLAS (through cuBLASLt as torch.matmul",
          "plans it), then one elementwise kernel. The next columns are PyTorch's harness on the same card",
          "(`bench/torch_epilogue.py`): the kernel `soltune export` ships, the GEMM x @ w.t() alone, eager and",
          "torch.compile (max-autotune), timed in turns in every repetition; exported - torch.compile is the",
          "median of the paired differences with its bootstrap 95% interval."],
         epilogue(recs)),
        ("SwiGLU's gated projection (swiglu)",
         ["`configs/swiglu.yaml`: h = SiLU(x W_gate^T) * (x W_up^T) in bf16 at Llama-3-8B's MLP (width 4096,",
          "intermediate 14336), the weights stacked gate-then-up as a merged gate_up projection stores them.",
          "T_ref is the unfused pair timed by soltune in the same run: cuBLAS's GEMM into m x 2n, then",
          "SiLU-and-mul. PyTorch's harness (`bench/torch_epilogue.py --op swiglu`): the GEMM x @ w.t() alone,",
          "eager and torch.compile (max-autotune) of `gu = x @ w.t(); silu(gu[:, :n]) * gu[:, n:]`, and the",
          "exported kernel, in turns."],
         epilogue(recs, "swiglu")),
        ("Time budgets",
         ["The whole command's wall time (`date` before and after) against `--seconds`, which counts from the",
          "command's start and includes starting the GPU worker, the ceilings and the re-timing at the end."],
         budgets(recs)),
        ("pnpoly (point in polygon)", [], tuned_only(recs, "pnpoly")),
        ("A call from Python",
         ["The host's time per call of the exported GELU (f32, n = 1024, where the host bounds back-to-back",
          "calls: the GPU synchronized after 20,000 of them), through the Python package `soltune export",
          "--format python` writes and beside the same entry point called from C++. The package's checks",
          "(dtype, shape, contiguity, alignment, device) and its stream lookup are the difference."],
         python_calls(recs)),
        ("Every memory-bound problem through the exported header at 30 drawn shapes",
         ["Each problem tuned briefly at two shapes, exported, then called through the header at 30 shapes",
          "drawn from a fixed seed (`tests/export/flat_sweep_check.cu`, `rows_sweep_check.cu`), checked against a",
          "double-precision reference, and timed against a device copy of the same bytes (10 runs each, L2",
          "flushed by a buffer twice its size read and written)."],
         sweep(recs)),
        ("Baselines and the model backend",
         ["T_ref, each problem's unfused baseline (its kernels back to back), measured by soltune, and the model",
          "backend's prediction of it (f32; all 67 tasks are in `tests/data/h200_baselines.json`)."],
         baselines(recs)),
    ]
    for title, intro, table in sections:
        if table:
            out += [f"## {title}", ""] + (intro + [""] if intro else []) + table
    while out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.stdout.write(render(json.load(open(sys.argv[1]))))


if __name__ == "__main__":
    main()
