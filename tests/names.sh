#!/usr/bin/env bash
# Two workers given one name (as two nodes on one host are when both take
# the host's name): a node learns the names in use only once it joins, so
# the later one cannot be refused at start; both are told, naming the other
# member's id and address, and `shoal members` shows each with its own id.
#
# Waits are bounded against a hang only.
set -u
shoal=$1
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
# shellcheck source=lib/workers.bash
. "$(dirname "$0")/lib/workers.bash"

start () { # data-dir options...
    local name=$1; shift
    "$shoal" worker --profile loopback --data-dir "$work/$name" --bind 127.0.0.1:0 \
        --beacon-port 0 --name vm --log-format=text "$@" >"$work/$name.out" 2>"$work/$name.log" &
    pid_of[$name]=$!
}

start first
wait_for "the first starts" has_port first || exit 1
start second --join "127.0.0.1:$(port_of first)"
wait_for "the second starts" has_port second || exit 1
wait_for "the later node is told its name is taken, by whom and where" \
    grep -q "name 'vm' is taken: member $(id_of first) at 127.0.0.1:$(port_of first)" \
    "$work/second.log"
wait_for "the first node is told too" \
    grep -q "name 'vm' is taken: member $(id_of second) at 127.0.0.1:$(port_of second)" \
    "$work/first.log"
"$shoal" members --data-dir "$work/second" >"$work/members" 2>&1 || fail "members"
for name in first second; do
    grep -Eq "^$(id_of $name) +vm " "$work/members" || fail "members shows $name with its id"
done
stop first second

if [ "$failures" -eq 0 ]; then echo "names: all checks passed"; fi
exit $((failures > 0))
