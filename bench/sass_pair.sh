#!/usr/bin/env bash
# SASS of one soltune kernel and of torch.compile's kernel for the same case, side by side, for
# reading why one is faster (run on a GPU machine with PyTorch; cuobjdump from the CUDA toolkit):
#   bash bench/sass_pair.sh KB TEMPLATES PROBLEM ROWSxCOLS DTYPE OUTDIR
# KB holds the soltune result to export (its best for the problem); TEMPLATES the templates it used.
set -euo pipefail
kb=$1 templates=$2 problem=$3 shape=$4 dtype=$5 out=$6
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
soltune export --kb "$kb" --problem "$problem" --templates "$templates" --format json -o "$out/export.json"
python3 - "$out" <<'PY'
import base64, json, sys
out = sys.argv[1]
doc = json.load(open(f"{out}/export.json"))
n = 0
def walk(o):
    global n
    if isinstance(o, dict):
        if "cubin" in o and isinstance(o["cubin"], dict):
            open(f"{out}/soltune_{n}.cubin", "wb").write(base64.b64decode(o["cubin"]["base64"]))
            n += 1
        for v in o.values(): walk(v)
    elif isinstance(o, list):
        for v in o: walk(v)
walk(doc)
print(f"{n} soltune cubin(s)")
PY
for c in "$out"/soltune_*.cubin; do cuobjdump -sass "$c" > "${c%.cubin}.sass"; done
export TRITON_CACHE_DIR="$out/triton-cache"
(cd "$here" && python3 - "$problem" "$shape" "$dtype" <<'PY'
import sys, torch
import torch_reference as tr
problem, shape, dtype = sys.argv[1], tuple(int(v) for v in sys.argv[2].split("x")), sys.argv[3]
_, op, _ = tr.PROBLEMS[problem]
gen = torch.Generator(device=tr.DEVICE).manual_seed(1)
args = tr.make_args(problem, shape, tr.DTYPES[dtype], gen)
torch.compile(op)(*args)
torch.cuda.synchronize()
PY
)
i=0
for c in $(find "$TRITON_CACHE_DIR" -name '*.cubin'); do cuobjdump -sass "$c" > "$out/triton_$i.sass"; i=$((i + 1)); done
rm -rf "$TRITON_CACHE_DIR"
echo "$i triton cubin(s)"
