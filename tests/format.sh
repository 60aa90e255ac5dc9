#!/usr/bin/env bash
# Every C file is formatted by the repo's .clang-format (run
# `clang-format -i FILE` to fix one).
set -u
source=$2
command -v clang-format >/dev/null || { echo "skip: clang-format is not installed"; exit 77; }
cd "$source"
mapfile -t files < <(find include gossip election rebalance peer node worker chaos sim tools tests bench examples \
                          -name '*.c' -o -name '*.h' 2>/dev/null | sort)
clang-format --dry-run -Werror "${files[@]}" || { echo "FAIL: files above are not formatted"; exit 1; }
echo "format: ${#files[@]} files formatted"
