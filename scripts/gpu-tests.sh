#!/usr/bin/env bash
# Every GPU test binary (*_gpu_test) run directly, not through ctest, whose files name the paths of
# the machine that built them: for a GPU machine that has the test binaries copied over (with the
# libraries it lacks) and not the build tree. The tests read this repository's templates/
# (SOLTUNE_SOURCE_DIR) and run the soltune beside them in BIN_DIR, else the build's, else the one on
# PATH (SOLTUNE_BIN):
#   scripts/gpu-tests.sh [BIN_DIR]     (default: the build tree's tests)
# Prints one line per test (ok with its time, FAILED, or skipped), every failed test's messages, and
# the counts; exits non-zero when a test failed or a binary did not finish.
# Environment: GTEST_FILTER narrows the tests; TEST_TIMEOUT, seconds a binary may take (default 900).
set -uo pipefail
dir=${1:+$(realpath "$1")}
cd "$(dirname "$0")/.." || exit 2
# The tests read templates/ and run soltune from here, not from where they were built.
export SOLTUNE_SOURCE_DIR=${SOLTUNE_SOURCE_DIR:-$PWD}
if [ -z "${SOLTUNE_BIN:-}" ]; then
  for s in "$dir/soltune" build/src/cli/soltune "$(command -v soltune)"; do
    [ -n "$s" ] && [ -x "$s" ] && { export SOLTUNE_BIN=$(realpath "$s"); break; }
  done
fi
if [ -n "$dir" ]; then
  bins=("$dir"/*_gpu_test)
else
  bins=(build/tests/*/*_gpu_test)
fi
[ -x "${bins[0]}" ] || { echo "gpu-tests: no *_gpu_test binary in ${dir:-build/tests/*}" >&2; exit 2; }
status=0
lines=$(mktemp)
trap 'rm -f "$lines"' EXIT
for bin in "${bins[@]}"; do
  name=$(basename "$bin")
  echo "== $name"
  timeout "${TEST_TIMEOUT:-900}" "$bin" --gtest_color=no 2>&1 | awk '
    /^\[ RUN      \] / { test = substr($0, 14); body = ""; last = ""; next }
    test != "" && index($0, "[       OK ] " test " (") == 1 { print "ok       " substr($0, 14); test = ""; next }
    test != "" && index($0, "[  SKIPPED ] " test " (") == 1 { print "skipped  " substr($0, 14) ": " last; test = ""; next }
    test != "" && index($0, "[  FAILED  ] " test " (") == 1 { print "FAILED   " substr($0, 14); printf "%s", body; test = ""; next }
    test != "" { body = body "         " $0 "\n"; last = $0 }
    END { if (test != "") { print "FAILED   " test " (did not end)"; printf "%s", body } }
  ' | tee -a "$lines"
  rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then
    status=1
    [ "$rc" -ge 124 ] && echo "gpu-tests: $name did not finish (exit $rc)"
  fi
done
echo "$(grep -c '^ok ' "$lines") ok, $(grep -c '^FAILED ' "$lines") failed, $(grep -c '^skipped ' "$lines") skipped"
[ "$(grep -c '^FAILED ' "$lines")" -eq 0 ] || status=1
exit $status
