#!/usr/bin/env python3
"""Writes the measured baselines of knowledge bases as the JSON the model backend's test reads.

Usage: extract.py OUT.json KB.sqlite...  (after `soltune tune bench/baselines/<problem>.yaml`)
Per (problem, dtype, shape) the first measured baseline is kept, with the GPU it ran on.
"""
import json
import sqlite3
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, rows, gpus = sys.argv[1], {}, set()
    for path in sys.argv[2:]:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        q = ("SELECT b.problem, b.dtype, b.shape_key, b.t_ref_us, g.name, r.started_at FROM baselines b "
             "JOIN runs r ON r.id = b.run_id JOIN gpus g ON g.id = r.gpu_id "
             "WHERE b.time_kind = 'measured' ORDER BY b.id")
        for problem, dtype, shape, t_ref, gpu, started in db.execute(q):
            gpus.add(gpu)
            rows.setdefault((problem, dtype, shape), {"problem": problem, "dtype": dtype, "shape": shape,
                                                      "t_ref_us": round(t_ref, 2), "measured": started[:10]})
    if len(gpus) != 1:
        sys.exit(f"expected the baselines of one GPU, found {sorted(gpus)}")
    doc = {"gpu": gpus.pop(), "command": "soltune tune bench/baselines/<problem>.yaml", "baselines": list(rows.values())}
    head = {k: v for k, v in doc.items() if k != "baselines"}
    with open(out, "w") as f:  # one baseline per line: diffs stay readable
        f.write(json.dumps(head)[:-1] + ', "baselines": [\n')
        f.write(",\n".join("  " + json.dumps(r) for r in doc["baselines"]) + "\n]}\n")
    print(f"{out}: {len(rows)} baselines")


if __name__ == "__main__":
    main()
