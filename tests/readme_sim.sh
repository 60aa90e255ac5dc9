#!/usr/bin/env bash
# The README's simulator examples print what the README says: each block
# that starts with "$ build/sim/shoal-sim ..." is run with this build's
# shoal-sim, and every "field value" line it shows (not "...", and not the
# wall-clock fields, which are this machine's) must match the same seed's
# output exactly. A change to a core that moves these numbers must move the
# README with it.
set -eu
shoal=$1 source=$2 build=$3
sim=$build/sim/shoal-sim
[ -x "$sim" ] || { echo "FAIL: no $sim"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Split the README's blocks: one file per command, its shown lines after.
awk -v dir="$work" '
    /^\$ build\/sim\/shoal-sim / { n++; file = dir "/block" n; sub(/^\$ build\/sim\/shoal-sim /, ""); print > file; inblock = 1; next }
    inblock && /^```/ { inblock = 0; close(file); next }
    inblock { print >> file }
' "$source/README.md"

blocks=0 fields=0 failed=0
for block in "$work"/block*; do
    [ -e "$block" ] || break
    blocks=$((blocks + 1))
    args=$(head -1 "$block")
    # shellcheck disable=SC2086
    "$sim" $args >"$block.out" || true
    while IFS= read -r line; do
        line=${line%%#*}
        line=${line%"${line##*[![:space:]]}"}
        [ -n "$line" ] && [ "$line" != "..." ] || continue
        key=${line%% *}
        case $key in wall_s | simulated_s_per_wall_s) continue ;; esac
        fields=$((fields + 1))
        got=$(grep -E "^$key( |$)" "$block.out" | head -1 | sed 's/[[:space:]]*$//' | tr -s ' ')
        want=$(echo "$line" | tr -s ' ')
        if [ "$got" != "$want" ]; then
            echo "FAIL: shoal-sim $args: README shows '$want', the run prints '$got'"
            failed=1
        fi
    done < <(tail -n +2 "$block")
done
[ "$blocks" -ge 1 ] && [ "$fields" -ge 10 ] || { echo "FAIL: found $blocks blocks, $fields fields: the check is broken"; exit 1; }
[ $failed -eq 0 ] || exit 1
echo "ok: $blocks README simulator runs, $fields fields as shown"
