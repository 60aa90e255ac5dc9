#!/usr/bin/env bash
# A user's or a packager's build never fails on a compiler warning: a tree
# configured with no options has no -Werror (scripts/test and CI turn it on
# with -DSHOAL_WERROR=ON). Configures a scratch tree only; builds nothing.
set -eu
shoal=$1 source=$2 build=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake -S "$source" -B "$work/b" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$work/configure.log" 2>&1 \
    || { echo "FAIL: a default configure"; cat "$work/configure.log"; exit 1; }
grep -q '^SHOAL_WERROR:BOOL=OFF$' "$work/b/CMakeCache.txt" \
    || { echo "FAIL: SHOAL_WERROR is not OFF by default"; grep SHOAL_WERROR "$work/b/CMakeCache.txt"; exit 1; }
commands=$(grep -c '"command"' "$work/b/compile_commands.json")
[ "$commands" -gt 10 ] || { echo "FAIL: only $commands compile commands"; exit 1; }
if grep -q -- '-Werror' "$work/b/compile_commands.json"; then
    echo "FAIL: a default build compiles with -Werror:"
    grep -m1 -- '-Werror' "$work/b/compile_commands.json"
    exit 1
fi

# And the option still works for development and CI.
cmake -S "$source" -B "$work/w" -DSHOAL_WERROR=ON -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    >"$work/configure.log" 2>&1 || { echo "FAIL: configure with SHOAL_WERROR=ON"; exit 1; }
grep -q -- '-Werror' "$work/w/compile_commands.json" \
    || { echo "FAIL: SHOAL_WERROR=ON does not add -Werror"; exit 1; }
echo "ok: default build has no -Werror; SHOAL_WERROR=ON adds it ($commands compile commands)"
