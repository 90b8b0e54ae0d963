#!/usr/bin/env python3
"""A copy of a knowledge base without the N best configurations of some tasks, so that `soltune
export` takes the next one: runner-up kernels to time beside the winner outside soltune (is the
winner still the winner in another harness, at another output address?).

    python3 bench/kb_without_best.py KB OUT N|all problem:dtype:rows=R,cols=C ...

With `all`, every result of those tasks goes: they are measured again from nothing. With
`keep=CONFIG_KEY`, every result of those tasks but that configuration's goes: export takes it.

Ranks a task's configurations by their best measured time among results that passed and were
measured with the variant's current text (TEMPLATES/problem/variant.cu, as export requires); prints
what it removed and what is left on top.
"""

import os
import re
import shutil
import sqlite3
import sys

TEMPLATES = os.environ.get("SOLTUNE_TEMPLATES", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "templates"))


INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"[ \t]*\r?$')


def expanded(path, seen):
    """The text soltune loads and hashes: quoted includes written in place, each file once (as
    src/core/problem.cpp's expand_includes)."""
    out = []
    with open(path) as f:
        text = f.read()
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = INCLUDE.match(line) if "#" in line else None
        if m:
            inc_path = os.path.realpath(os.path.join(os.path.dirname(path), m.group(1)))
            if inc_path not in seen:
                seen.add(inc_path)
                inc = expanded(inc_path, seen)
                out.append(inc if inc.endswith("\n") or not inc else inc + "\n")
        else:
            out.append(line + ("\n" if i + 1 < len(lines) else ""))
    return "".join(out)


def current_hashes(db, problem):
    """The source hashes of the problem's variants as their .cu files read now (export's check)."""
    hashes = []
    for (variant,) in db.execute("SELECT DISTINCT variant FROM results WHERE problem=?", (problem,)):
        path = os.path.join(TEMPLATES, problem, variant + ".cu")
        if os.path.exists(path):
            text = expanded(os.path.realpath(path), {os.path.realpath(path)})
            hashes += [h for (h,) in db.execute("SELECT hash FROM sources WHERE text=?", (text,))]
    return hashes


def remove_all(db, task, problem, dtype, shape):
    gone = db.execute("DELETE FROM results WHERE problem=? AND dtype=? AND shape_key=?", (problem, dtype, shape))
    print(f"{task}: removed all {gone.rowcount} results")


def keep_only(db, task, problem, dtype, shape, key):
    gone = db.execute("DELETE FROM results WHERE problem=? AND dtype=? AND shape_key=? AND config_key<>?",
                      (problem, dtype, shape, key))
    left = db.execute("SELECT COUNT(*) FROM results WHERE problem=? AND dtype=? AND shape_key=? AND status='ok'",
                      (problem, dtype, shape)).fetchone()[0]
    if left == 0:
        sys.exit(f"{task}: no measured result of {key}")
    print(f"{task}: removed {gone.rowcount} results, kept {left} of {key}")


def remove_best(db, task, problem, dtype, shape, n, current):
    marks = ",".join("?" * len(current))
    ranked = db.execute(
        "SELECT variant, config_key, MIN(time_us) FROM results WHERE problem=? AND dtype=? AND shape_key=?"
        f" AND status='ok' AND time_kind='measured' AND source_hash IN ({marks})"
        " GROUP BY variant, config_key ORDER BY 3 LIMIT ?",
        (problem, dtype, shape, *current, n + 1)).fetchall()
    if len(ranked) <= n:
        sys.exit(f"{task}: only {len(ranked)} measured configurations")
    for variant, key, t in ranked[:n]:
        db.execute("DELETE FROM results WHERE problem=? AND dtype=? AND shape_key=? AND variant=? AND config_key=?",
                   (problem, dtype, shape, variant, key))
        print(f"{task}: removed {variant} {key} ({t:.2f} us)")
    variant, key, t = ranked[n]
    print(f"{task}: best left {variant} {key} ({t:.2f} us)")


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    src, dst, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    shutil.copyfile(src, dst)
    db = sqlite3.connect(dst)
    hashes = {}  # per problem, read once
    for task in sys.argv[4:]:
        problem, dtype, shape = task.split(":")
        if mode == "all":
            remove_all(db, task, problem, dtype, shape)
        elif mode.startswith("keep="):
            keep_only(db, task, problem, dtype, shape, mode[len("keep="):])
        else:
            if problem not in hashes:
                hashes[problem] = current_hashes(db, problem)
            remove_best(db, task, problem, dtype, shape, int(mode), hashes[problem])
    db.commit()
    db.close()


if __name__ == "__main__":
    main()
