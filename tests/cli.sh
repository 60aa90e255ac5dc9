#!/usr/bin/env bash
# The shoal command as a user meets it: --version, --help, keygen, and clear
# errors with exit status 2 for bad usage.
set -u
shoal=$1
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"

expect_status 0 "--version" "$shoal" --version
grep -Eq '^shoal [0-9]+\.[0-9]+\.[0-9]+$' "$work/out" || fail "--version prints 'shoal X.Y.Z'"

expect_status 0 "--help" "$shoal" --help
grep -q 'keygen' "$work/out" || fail "--help lists keygen"

expect_status 2 "no command" "$shoal"
grep -q 'no command given' "$work/err" || fail "no command: says so"

expect_status 2 "unknown command" "$shoal" frobnicate
grep -q "unknown command 'frobnicate'" "$work/err" || fail "unknown command: names it"
[ -s "$work/out" ] && fail "unknown command: nothing on standard output"

# keygen: a 32-byte key in padded base64, a new one every time.
expect_status 0 "keygen" "$shoal" keygen
key1=$(cat "$work/out")
[ "$(printf '%s' "$key1" | base64 -d 2>/dev/null | wc -c)" -eq 32 ] || fail "keygen prints 32 bytes in base64: '$key1'"
expect_status 0 "keygen again" "$shoal" keygen
[ "$(cat "$work/out")" != "$key1" ] || fail "two keygens give two keys"

expect_status 0 "keygen --json" "$shoal" keygen --json
grep -Eq '^\{"key": "[A-Za-z0-9+/]{43}=", "id": "[0-9a-f]{8}"\}$' "$work/out" || fail "keygen --json: $(cat "$work/out")"

expect_status 0 "keygen --help" "$shoal" keygen --help
grep -q -- '--out FILE' "$work/out" || fail "keygen --help documents --out"

# --out writes a private file and never overwrites one.
expect_status 0 "keygen --out" "$shoal" keygen --out "$work/cluster.key"
[ "$(stat -c %a "$work/cluster.key")" = "600" ] || fail "key file has mode 600"
[ "$(base64 -d <"$work/cluster.key" | wc -c)" -eq 32 ] || fail "key file holds a key"
before=$(cat "$work/cluster.key")
expect_status 1 "keygen --out existing" "$shoal" keygen --out "$work/cluster.key"
grep -q "cannot create" "$work/err" || fail "keygen --out existing: says why"
[ "$(cat "$work/cluster.key")" = "$before" ] || fail "an existing key file is left as it was"

expect_status 2 "keygen --out without a file" "$shoal" keygen --out
expect_status 2 "keygen bad option" "$shoal" keygen --bogus
grep -q "unknown option '--bogus'" "$work/err" || fail "keygen bad option: names it"

if [ "$failures" -eq 0 ]; then echo "cli: all checks passed"; fi
exit $((failures > 0))
