#!/bin/sh
# no_user_cache.sh PROGRAM FILTER [PROGRAM FILTER ...]: runs each test program (with its gtest
# filter) as a user with an empty home would, SOLTUNE_CACHE_DIR unset, and fails if any of them
# left a soltune cache in that home.
set -u
home=$(mktemp -d /tmp/soltune-home-XXXXXX) || exit 1
trap 'rm -rf "$home"' EXIT
while [ $# -ge 2 ]; do
  env -u SOLTUNE_CACHE_DIR HOME="$home" XDG_CACHE_HOME="$home/.cache" "$1" --gtest_filter="$2" >"$home/log" 2>&1 ||
    { cat "$home/log"; echo "no_user_cache: $1 --gtest_filter=$2 failed"; exit 1; }
  shift 2
done
if [ -e "$home/.cache/soltune" ]; then
  echo "no_user_cache: the tests wrote to the user's compile cache:"
  find "$home/.cache/soltune" | head -n 20
  exit 1
fi
echo "no_user_cache: nothing written to $home/.cache"
