#!/usr/bin/env python3
"""The records of bench/figures.json, from what the measuring tools write (bench/benchmarks.sh runs it).

    python3 bench/figures.py library --set S --date D --tune-command C --harness-command C \\
                                     --tune-log LOG... [--harness TORCH.json] [--condition cold]
    python3 bench/figures.py gemm --set S --date D --tune-command C --cublas-command C \\
                                  --best BEST.json --cublas CUBLAS.json
    python3 bench/figures.py tuned --set S --date D --command C --best BEST.json
    python3 bench/figures.py fp8 --set S --date D --tune-command C --torch-command C \\
                                 --best BEST.json --torch SCALED_MM.json
    python3 bench/figures.py attention --set S --date D --tune-command C --torch-command C \\
                                       --best BEST.json --torch SDPA.json
    python3 bench/figures.py epilogue --set S --date D --tune-command C --torch-command C \
                                      --best BEST.json --torch EPILOGUE.json
    python3 bench/figures.py merge FIGURES.json NEW.json... [--device DEVICE.json]

library: per (problem, shape, dtype) the fastest variant's row of each `soltune tune` log's summary
(soltune's own timing: time, %BW against the copy kernel of the same run, T_ref, T_SOL, both SOL
scores, configuration), and the medians of bench/torch_reference.py --json (eager, torch.compile,
soltune's exported kernels, the copy; soltune paired with torch.compile). gemm: `soltune kb best
--json` of a matmul knowledge base and bench/torch_matmul.py --json (cuBLAS). tuned: `soltune kb
best --json` of any other problem. fp8: `soltune kb best --json` of a matmul_fp8 knowledge base and
bench/torch_scaled_mm.py --json (torch._scaled_mm, or torch ops where it refuses a case). attention:
`soltune kb best --json` of an attention knowledge base and bench/torch_attention.py --json
(scaled_dot_product_attention). epilogue: `soltune kb best --json` of a matmul_epilogue or swiglu knowledge
base and bench/torch_epilogue.py --json (the plain GEMM, eager, torch.compile and the exported kernel,
timed in turns). Each prints a JSON list of records; {problem} in a command is
replaced by the record's problem.

merge prints FIGURES.json with the new records in place of the old ones they measure again: a set
named in NEW replaces that set whole, and any older record of the same problem, shape, dtype,
variant and source goes too. What was not measured again stays, with its own date.

A record: set (the table's measurement, for its legend), source (tune, harness, cublas, ...),
problem, shape (soltune's shape key), dtype, condition, date, command, and the numbers.
docs/BENCHMARKS.md is bench/render_benchmarks.py's rendering of the result.
"""
import argparse
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from library_table import ROW  # noqa: E402  (the summary line of `soltune tune`)


def shape_key(shape):
    """A harness or cuBLAS record's shape dict as soltune's shape key."""
    if "n" in shape and len(shape) == 1:
        return f"n={shape['n']}"
    if "rows" in shape:
        return f"rows={shape['rows']},cols={shape['cols']}"
    if "heads" in shape:  # masked_softmax's
        return ",".join(f"{k}={shape[k]}" for k in ("heads", "s_q", "s_k", "d", "causal"))
    if "s_q" in shape:
        return ",".join(f"{k}={shape[k]}" for k in ("b", "h", "h_kv", "s_q", "s_k", "d", "causal"))
    return ",".join(f"{k}={shape[k]}" for k in ("m", "n", "k", "trans_b", "act") if k in shape)


def iso_date(text):
    """'2026-11-30T09:55:50+00:00' -> '2026-11-30 09:55 UTC'."""
    return datetime.datetime.fromisoformat(text).astimezone(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def base(a, source, problem, shape, dtype, command, date=None):
    return {"set": a.set, "source": source, "problem": problem, "shape": shape, "dtype": dtype,
            "condition": a.condition, "date": date or a.date, "command": command.replace("{problem}", problem)}


def tune_rows(logs):
    """The fastest variant's summary row per (problem, shape, dtype) over the logs."""
    best = {}
    for path in logs:
        lines = open(path, errors="replace").read().splitlines()
        for i, line in enumerate(lines):
            m = ROW.match(line)
            if not m:
                continue
            problem, variant, dtype, shape = m.group(1), m.group(2), m.group(3), m.group(4)
            config = m.group(13) or (lines[i + 1].split()[0] if i + 1 < len(lines) and lines[i + 1].startswith("  ") else None)
            rec = {"variant": variant, "us": float(m.group(5)), "gbps": int(m.group(6)), "pct_copy": float(m.group(7)),
                   "t_ref_us": float(m.group(8)), "t_sol_us": float(m.group(9)), "sol": float(m.group(10)),
                   "sol_eb": float(m.group(11)), "config": config}
            key = (problem, shape, dtype)
            if key not in best or rec["us"] < best[key]["us"]:
                best[key] = rec
    return best


def library(a):
    out = []
    for (problem, shape, dtype), r in tune_rows(a.tune_log).items():  # in the logs' order
        out.append({**base(a, "tune", problem, shape, dtype, a.tune_command), **r})
    cases = {}
    for r in json.load(open(a.harness)) if a.harness else []:
        cases.setdefault((r["problem"], shape_key(r["shape"]), r["dtype"]), {})[r["impl"]] = r
    for (problem, shape, dtype), impls in cases.items():
        sol = impls.get("soltune")
        if not sol or sol.get("error"):
            continue
        rec = base(a, "harness", problem, shape, dtype, a.harness_command, iso_date(sol["date"]))
        rec.update(reps=sol["reps"], soltune_us=sol["median_us"], soltune_gbps=sol["gbps"])
        for impl, field in (("eager", "eager_us"), ("torch.compile", "compile_us"), ("copy", "copy_us")):
            if impl in impls and not impls[impl].get("error"):
                rec[field] = impls[impl]["median_us"]
        p = sol.get("paired", {}).get("torch.compile")
        if p:
            rec.update(vs_compile_us=p["median_diff_us"], vs_compile_ci=p["ci95_us"], faster_in=p["soltune_faster_in"])
        out.append(rec)
    return out


def kb_best(path):
    return [r for r in json.load(open(path))["best"] if r.get("kind") == "measured"]


def tuned_record(a, r, command):
    rec = base(a, "tune", r["problem"], r["shape"], r["dtype"], command)
    rec.update(variant=r["variant"], us=r["time_us"], q1_us=r["q1_us"], q3_us=r["q3_us"], t_ref_us=r["t_ref_us"],
               t_sol_us=r["t_sol_us"], sol=r["sol_score"], sol_eb=r["sol_execbench"], config=r["config_key"])
    return rec


def gemm(a):
    out = [{**tuned_record(a, r, a.tune_command), "card": r["gpu"]} for r in kb_best(a.best)]
    for r in json.load(open(a.cublas)):
        shape = shape_key({**r["shape"], "trans_b": r.get("trans_b", 0)})
        rec = base(a, "cublas", "matmul", shape, r["dtype"], a.cublas_command)
        rec.update(us=r["median_us"], q1_us=r["q1_us"], q3_us=r["q3_us"], card=r["gpu"],
                   kernel=" + ".join(k for k in r["kernels"] if not k.startswith("Memset")))
        # The exported kernels timed beside it (torch_matmul.py --package), interleaved.
        rec.update({f: r[f] for f in ("exported_us", "exported_q1_us", "exported_q3_us", "paired") if f in r})
        out.append(rec)
    return out


def tuned(a):
    return [tuned_record(a, r, a.command) for r in kb_best(a.best)]


def fastest_tuned(a):
    """The tuned records of --best, the fastest variant's per shape and dtype, with their card."""
    fastest = {}
    for r in kb_best(a.best):
        k = (r["shape"], r["dtype"])
        if k not in fastest or r["time_us"] < fastest[k]["time_us"]:
            fastest[k] = r
    return [{**tuned_record(a, r, a.tune_command), "card": r["gpu"]} for r in fastest.values()]


def fp8(a):
    out = fastest_tuned(a)
    for r in json.load(open(a.torch)):
        if "refused" in r:
            continue
        shape = ",".join(f"{k}={r['shape'][k]}" for k in ("m", "n", "k", "scale"))
        rec = base(a, "scaled_mm", "matmul_fp8", shape, r["dtype"], a.torch_command)
        rec.update(us=r["median_us"], q1_us=r["q1_us"], q3_us=r["q3_us"], how=r["how"], card=r["gpu"],
                   kernel=" + ".join(k for k in r["kernels"] if not k.startswith("Memset")))
        out.append(rec)
    return out


def attention(a):
    out = [{**tuned_record(a, r, a.tune_command), "card": r["gpu"]} for r in kb_best(a.best)]
    for r in json.load(open(a.torch))["rows"]:
        shape = shape_key({"causal": 0, **r["shape"]})  # the config leaves causal 0 out
        rec = base(a, "sdpa", "attention", shape, r["dtype"], a.torch_command)
        rec.update(us=r["median_us"], q1_us=r["q1_us"], q3_us=r["q3_us"], card=r["gpu"],
                   kernel=" + ".join(k for k in r["kernels"] if not k.startswith("Memset")))
        out.append(rec)
    return out


def epilogue(a):
    out = fastest_tuned(a)
    for r in json.load(open(a.torch)):
        rec = base(a, "torch_epilogue", r.get("problem", "matmul_epilogue"), shape_key(r["shape"]), r["dtype"], a.torch_command)
        t = r["times"]
        rec.update(card=r["gpu"], mode=r["mode"], reps=r["reps"], gemm_us=t["gemm"]["median_us"],
                   eager_us=t["eager"]["median_us"], compile_us=t["torch.compile"]["median_us"])
        if "soltune" in t:
            rec.update(exported_us=t["soltune"]["median_us"], vs_compile=r["paired_vs_compile"], vs_gemm=r["paired_vs_gemm"])
        out.append(rec)
    return out


def key(r):
    """What a record measures. cuBLAS's figures belong to their set: they stand beside its rows only."""
    variant = r.get("variant") if r["source"] == "tune" and r.get("problem") == "matmul" else None
    return (r.get("problem"), r.get("shape"), r.get("dtype"), variant, r["source"], r["set"] if r["source"] == "cublas" else None)


def merge(a):
    doc = json.load(open(a.figures))
    new = [r for f in a.new for r in json.load(open(f))]
    sets, keys = {r["set"] for r in new}, {key(r) for r in new}
    kept = [r for r in doc["records"] if r["set"] not in sets and key(r) not in keys] + new
    # cuBLAS figures with no row left go, but those with soltune's exported kernels timed beside them
    tuned = {r["set"] for r in kept if r["source"] == "tune"}
    doc["records"] = [r for r in kept if r["source"] != "cublas" or r["set"] in tuned or "exported_us" in r]
    if a.device:
        doc["device"] = json.load(open(a.device))
    return doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    for name in ("library", "gemm", "tuned", "fp8", "attention", "epilogue"):
        p = sub.add_parser(name)
        p.add_argument("--set", required=True, help="the measurement's name, one legend entry per table")
        p.add_argument("--date", required=True, help="when it was measured, e.g. '2026-12-04 21:30 UTC'")
        p.add_argument("--condition", default="cold", help="cold: L2 flushed, evict_last lines demoted, every run")
    lib, gem, tun = sub.choices["library"], sub.choices["gemm"], sub.choices["tuned"]
    lib.add_argument("--tune-log", nargs="+", required=True)
    lib.add_argument("--tune-command", required=True)
    lib.add_argument("--harness")
    lib.add_argument("--harness-command", default="")
    gem.add_argument("--best", required=True)
    gem.add_argument("--cublas", required=True)
    gem.add_argument("--tune-command", required=True)
    gem.add_argument("--cublas-command", required=True)
    tun.add_argument("--best", required=True)
    tun.add_argument("--command", required=True)
    f8 = sub.choices["fp8"]
    f8.add_argument("--best", required=True)
    f8.add_argument("--torch", required=True)
    f8.add_argument("--tune-command", required=True)
    f8.add_argument("--torch-command", required=True)
    att = sub.choices["attention"]
    att.add_argument("--best", required=True)
    att.add_argument("--torch", required=True)
    att.add_argument("--tune-command", required=True)
    att.add_argument("--torch-command", required=True)
    epi = sub.choices["epilogue"]
    epi.add_argument("--best", required=True)
    epi.add_argument("--torch", required=True)
    epi.add_argument("--tune-command", required=True)
    epi.add_argument("--torch-command", required=True)
    mer = sub.add_parser("merge")
    mer.add_argument("figures")
    mer.add_argument("new", nargs="+")
    mer.add_argument("--device", help="the card's JSON (name, arch, sms, driver, cuda, torch, triton)")
    a = ap.parse_args()
    doc = {"library": library, "gemm": gemm, "tuned": tuned, "fp8": fp8, "attention": attention, "epilogue": epilogue,
           "merge": merge}[a.what](a)
    json.dump(doc, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
