#!/usr/bin/env python3
"""A markdown table of soltune's GEMMs beside cuBLAS from one measurement's files (bench/gemm_run.sh
prints it; docs/BENCHMARKS.md is rendered from bench/figures.json instead):

    python3 bench/gemm_table.py OUT/best.json OUT/cublas.json

best.json is `soltune kb best --kb KB --problem matmul --json` after `soltune tune
configs/matmul-tensor.yaml`; cublas.json is `bench/torch_matmul.py --json`, timed just before.
One row per task: soltune's best time, its TFLOP/s, cuBLAS's time and soltune's share of its
throughput, T_SOL, both SOL scores, and the configuration.
"""
import json
import sys


def shape_of(key):
    dims = dict(part.split("=") for part in key.split(","))
    return int(dims["m"]), int(dims["n"]), int(dims["k"]), int(dims.get("trans_b", 0))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    best = json.load(open(sys.argv[1]))["best"]
    cublas = {(r["shape"]["m"], r["shape"]["n"], r["shape"]["k"], r.get("trans_b", 0), r["dtype"]): r
              for r in json.load(open(sys.argv[2]))}
    print("| task | soltune (us) | TFLOP/s | cuBLAS (us) | of cuBLAS | T_SOL (us) | SOL | SOL-EB | configuration |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    order = {"mma_sync": 0, "tiled": 1}
    rows = sorted(best, key=lambda r: (order.get(r["variant"], 9), r["dtype"] == "f32", r["dtype"],
                                       shape_of(r["shape"])[3], -shape_of(r["shape"])[0]))
    for r in rows:
        if r["kind"] != "measured":
            continue
        m, n, k, tb = shape_of(r["shape"])
        ref = cublas.get((m, n, k, tb, r["dtype"]))
        cu = f"{ref['median_us']:.1f}" if ref else "-"
        share = f"{100 * ref['median_us'] / r['time_us']:.1f}%" if ref else "-"
        layout = "NT" if tb else "NN"
        size = f"{m}^3" if m == n == k else f"{m}x{n}x{k}"
        print(f"| {r['variant']} {r['dtype']} {size} {layout} | {r['time_us']:.1f} | {2 * m * n * k / r['time_us'] / 1e6:.0f} "
              f"| {cu} | {share} | {r['t_sol_us']:.1f} | {r['sol_score']:.3f} | {r['sol_execbench']:.3f} | "
              f"{r['config_key']} |")


if __name__ == "__main__":
    main()
