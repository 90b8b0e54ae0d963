#!/usr/bin/env python3
"""A markdown table of the memory-bound library from one measurement's logs (a quick look; the page,
docs/BENCHMARKS.md, is rendered from bench/figures.json, whose collector bench/figures.py reads the
same summary lines).

    python3 bench/library_table.py --logs DIR [--torch FILE.json ...] [--exported FILE]

--logs: a folder of `soltune tune` logs (DIR/*.log, e.g. bench/benchmarks.sh's tune_<problem>.log); per
problem, shape and dtype the fastest variant's summary row is kept. --torch: records written by
bench/torch_reference.py --json (later files win). --exported: the output of bench/exported_bench
(the same kernels timed through `soltune export`'s header). Prints one markdown table; a figure
that was not measured prints as '-'.
"""
import argparse
import json
import os
import re

# A summary row; its configuration ends the line, or (as `soltune tune` prints it now) opens the next.
ROW = re.compile(r"^(\w+)/(\w+)/(f32|bf16)/(\S+)\s+([\d.]+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)(?:\s+(\S+))?\s*$")
SHAPE_ORDER = ["softmax", "layernorm", "rmsnorm", "l1norm", "gelu"]


def shape_key(problem, text):
    """'rows=8192,cols=4096' / 'n=268435456' -> '8192x4096' / 'n=268435456' (exported_bench's form)."""
    d = dict(kv.split("=") for kv in text.split(","))
    return f"{d['rows']}x{d['cols']}" if "rows" in d else f"n={d['n']}"


def tuned(logs):
    best = {}
    for name in sorted(os.listdir(logs)):
        if not name.endswith(".log") or "-odd" in name:
            continue
        for line in open(os.path.join(logs, name), errors="replace"):
            m = ROW.match(line)
            if not m:
                continue
            problem, variant, dtype, shape = m.group(1), m.group(2), m.group(3), m.group(4)
            rec = dict(variant=variant, us=float(m.group(5)), gbps=int(m.group(6)), bw=float(m.group(7)),
                       t_ref=float(m.group(8)), t_sol=float(m.group(9)), sol=float(m.group(10)), eb=float(m.group(11)),
                       evals=int(m.group(12)), config=m.group(13))
            key = (problem, shape_key(problem, shape), dtype)
            if key not in best or rec["us"] < best[key]["us"]:
                best[key] = rec
    return best


def torch_figures(files):
    out = {}
    for f in files:
        for r in json.load(open(f)):
            s = r["shape"]
            shape = f"{s['rows']}x{s['cols']}" if "rows" in s else f"n={s['n']}"
            out[(r["problem"], shape, r["dtype"], r["impl"])] = r["median_us"]
    return out


def exported(file):
    out = {}
    if file:
        for line in open(file):
            p = line.split()
            if len(p) >= 5 and p[4] == "us":
                out[(p[0], p[1], p[2])] = float(p[3])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--logs", required=True)
    ap.add_argument("--torch", nargs="*", default=[])
    ap.add_argument("--exported")
    a = ap.parse_args()
    best, torch, exp = tuned(a.logs), torch_figures(a.torch), exported(a.exported)
    fmt = lambda v: "-" if v is None else f"{v:.1f}"
    print("| problem, shape | dtype | variant | us | GB/s | % copy BW | SOL / EB | T_ref us | exported us | torch eager / compile us | faster than both |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for key in sorted(best, key=lambda k: (SHAPE_ORDER.index(k[0]) if k[0] in SHAPE_ORDER else 9, k[2] != "f32")):
        problem, shape, dtype = key
        r = best[key]
        eager, comp = torch.get((problem, shape, dtype, "eager")), torch.get((problem, shape, dtype, "torch.compile"))
        wins = "-" if eager is None or comp is None else ("yes" if r["us"] < min(eager, comp) else "no")
        print(f"| {problem} {shape} | {dtype} | {r['variant']} | {r['us']:.1f} | {r['gbps']} | {r['bw']:.1f} | "
              f"{r['sol']:.3f} / {r['eb']:.3f} | {r['t_ref']:.1f} | {fmt(exp.get(key))} | {fmt(eager)} / {fmt(comp)} | {wins} |")


if __name__ == "__main__":
    main()
