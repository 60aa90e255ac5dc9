#!/usr/bin/env bash
# The repository stands on its own: every relative link in the README and
# docs/ (and the folders' READMEs) names a file that is here, and nothing
# points at the design files the project started from, which are not.
set -eu
shoal=$1 source=$2 build=$3
cd "$source"

failed=0
checked=0
while IFS= read -r md; do
    dir=$(dirname "$md")
    # Markdown links: ](target). Skip web addresses and in-page anchors.
    while IFS= read -r target; do
        path=${target%%#*}
        case $target in http://* | https://* | mailto:* | '#'*) continue ;; esac
        [ -n "$path" ] || continue
        checked=$((checked + 1))
        if [ ! -e "$dir/$path" ]; then
            echo "FAIL: $md links to $target, which is not in the repository"
            failed=1
        fi
    done < <(grep -o '](\([^)]*\))' "$md" | sed 's/^](\(.*\))$/\1/')
done < <(find . -name '*.md' -not -path './build/*' -not -path './.git/*')

names=$(grep -rIl --exclude-dir=build --exclude-dir=.git --exclude=docs.sh -e 'ARCHITECTURE\.md' -e 'STYLE\.md' \
    -e 'assign-json\.md' -e 'shared/design' . || true)
if [ -n "$names" ]; then
    echo "FAIL: these name a design file that is not in the repository:"
    echo "$names"
    failed=1
fi
[ "$checked" -gt 20 ] || { echo "FAIL: only $checked links found: the check itself is broken"; exit 1; }
[ $failed -eq 0 ] || exit 1
echo "ok: $checked relative links resolve; no file names the design's files"
