#!/usr/bin/env bash
# The README's demo (scripts/demo), past its setup and build: with this
# build's shoal, in a network namespace when root (beacons), else on
# 127.0.0.1 with seeds. It must end with status 0 and no time two nodes
# acted at once for one task.
set -u
shoal=$1 source=$2
command -v jq >/dev/null || { echo "skip: the demo needs jq (scripts/setup installs it)"; exit 77; }
export SHOAL_DEMO_SHOAL=$shoal
if [ "$(id -u)" -eq 0 ] && unshare --net true 2>/dev/null; then
    output=$(SHOAL_DEMO_NETWORK=namespace unshare --net "$source/scripts/demo" --workers 2 --tasks 4 2>&1)
else
    output=$(SHOAL_DEMO_NETWORK=loopback "$source/scripts/demo" --workers 2 --tasks 4 2>&1)
fi
status=$?
echo "$output"
[ $status -eq 0 ] || { echo "FAIL: the demo exited with status $status"; exit 1; }
grep -Eq 'time two nodes acted at once for one task +0 ms' <<<"$output" ||
    { echo "FAIL: the demo did not report 0 ms of double-active time"; exit 1; }
grep -Eq 'handovers from one node to another +[1-9]' <<<"$output" ||
    { echo "FAIL: the demo saw no handover"; exit 1; }
echo "demo: ok"
