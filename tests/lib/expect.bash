# tests/lib/expect.bash: what the command-line test scripts share.
# Source it after setting nothing; it sets $work (a scratch folder, removed
# on exit) and $failures, and gives:
#   fail MESSAGE...                        count a failure and say it
#   expect_status STATUS WHAT COMMAND...   run COMMAND, its output in
#                                          $work/out and $work/err, and
#                                          fail unless it exits with STATUS
failures=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail () { echo "FAIL: $*"; failures=$((failures + 1)); }
expect_status () { # expected-status description command...
    local want=$1 what=$2; shift 2
    "$@" >"$work/out" 2>"$work/err"
    local got=$?
    [ "$got" -eq "$want" ] || fail "$what: exit status $got, expected $want ($(head -c 300 "$work/err"))"
}
