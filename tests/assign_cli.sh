#!/usr/bin/env bash
# `shoal assign` as a user meets it: every example scenario gives an
# assignment in the documented shape, standard input works, input that
# breaks the format gives exit status 2 and one line naming the field, and a
# file that cannot be read gives exit status 1 (docs/assign.md).
set -u
shoal=$1
source=$2
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"

python=$(command -v python3)
[ -n "$python" ] || echo "note: python3 is not installed: the outputs' shape and order independence are not checked"

# Checks outputs against their inputs (arguments: input output ...): the
# required keys, every input node listed with three sorted lists,
# unassigned sorted, moves per role. One run checks every scenario, as
# python takes a while to start.
cat >"$work/check.py" <<'EOF'
import json, os, sys
problems = []
for given_path, out_path in zip(sys.argv[1::2], sys.argv[2::2]):
    def problem(text):
        problems.append("%s: %s" % (os.path.basename(given_path), text))
    given = json.load(open(given_path))
    try:
        out = json.load(open(out_path))
    except ValueError as error:
        problem("the output is not JSON: %s" % error)
        continue
    if sorted(out) != ["assignment", "followup", "moves", "unassigned"]:
        problem("top-level keys are %s" % sorted(out))
        continue
    assignment = out["assignment"]
    if sorted(assignment) != sorted(node["id"] for node in given["nodes"]):
        problem("assignment lists nodes %s" % sorted(assignment))
    for node, lists in assignment.items():
        if not isinstance(lists, dict) or sorted(lists) != ["active", "learner", "standby"]:
            problem("%s is not listed with active, standby, learner" % node)
            continue
        for role, tasks in lists.items():
            if tasks != sorted(tasks):
                problem("%s.%s is not sorted" % (node, role))
    if out["unassigned"] != sorted(out["unassigned"]):
        problem("unassigned is not sorted")
    if not isinstance(out["followup"], bool):
        problem("followup is not true or false")
    moves = out["moves"]
    if sorted(moves) != ["active", "learner", "standby"] or not all(
            isinstance(n, int) and n >= 0 for n in moves.values()):
        problem("moves is %s" % moves)
for text in problems:
    print(text)
sys.exit(1 if problems else 0)
EOF

# Writes each input (arguments: input copy ...) with every list reversed,
# to show that order does not change the output (property 6).
cat >"$work/reverse.py" <<'EOF'
import json, sys
for given_path, copy_path in zip(sys.argv[1::2], sys.argv[2::2]):
    given = json.load(open(given_path))
    given["nodes"].reverse()
    given["tasks"].reverse()
    for roles in given.get("current", {}).values():
        for tasks in roles.values():
            tasks.reverse()
    json.dump(given, open(copy_path, "w"))
EOF

# ---------------------------------------------------------------------------
# Every example scenario gives an assignment.

scenarios=("$source"/tests/assign/scenarios/*.json)
[ -e "${scenarios[0]}" ] || fail "no scenarios in $source/tests/assign/scenarios"
pairs=() reversals=()
for scenario in "${scenarios[@]}"; do
    name=$(basename "$scenario" .json)
    expect_status 0 "$name" "$shoal" assign "$scenario"
    [ -s "$work/err" ] && fail "$name: says something on standard error: $(head -c 300 "$work/err")"
    cp "$work/out" "$work/$name.out"
    pairs+=("$scenario" "$work/$name.out")
    reversals+=("$scenario" "$work/$name.reversed")
done
if [ -n "$python" ]; then
    "$python" "$work/check.py" "${pairs[@]}" >"$work/problems" 2>&1 ||
        fail "outputs of the scenarios: $(tr '\n' ';' <"$work/problems")"
    "$python" "$work/reverse.py" "${reversals[@]}" || fail "cannot reverse the scenarios"
    for scenario in "${scenarios[@]}"; do
        name=$(basename "$scenario" .json)
        expect_status 0 "$name reversed" "$shoal" assign "$work/$name.reversed"
        cmp -s "$work/out" "$work/$name.out" || fail "$name: the output changes with the order of the input"
    done
fi

# Standard input, as '-' and with no argument, reads the same input.
scenario=${scenarios[0]}
expect_status 0 "file" "$shoal" assign "$scenario"
cp "$work/out" "$work/from-file"
expect_status 0 "stdin as -" "$shoal" assign - <"$scenario"
cmp -s "$work/out" "$work/from-file" || fail "'shoal assign -' reads standard input"
expect_status 0 "stdin without argument" "$shoal" assign <"$scenario"
cmp -s "$work/out" "$work/from-file" || fail "'shoal assign' reads standard input"
printf '{"nodes": [], "tasks": []}' | "$shoal" assign >"$work/out" 2>&1 ||
    fail "stdin from a pipe: $(cat "$work/out")"

# Defaults: a node and a task given by id alone are enough.
printf '{"nodes": [{"id": "n1"}], "tasks": [{"id": "web/0"}]}' >"$work/minimal.json"
expect_status 0 "minimal input" "$shoal" assign "$work/minimal.json"
tr -d ' \n' <"$work/out" | grep -q '"n1":{"active":\["web/0"\]' ||
    fail "minimal input: web/0 is active on n1: $(cat "$work/out")"

# ---------------------------------------------------------------------------
# Input that breaks the format: exit status 2, nothing on standard output,
# and exactly one line on standard error that names the field.

bad=0
expect_bad () { # description input expected-text-in-the-reason
    local what=$1 input=$2 reason=$3
    bad=$((bad + 1))
    printf '%s' "$input" >"$work/bad.json"
    expect_status 2 "$what" "$shoal" assign "$work/bad.json"
    [ -s "$work/out" ] && fail "$what: prints an output"
    [ "$(wc -l <"$work/err")" -eq 1 ] || fail "$what: $(wc -l <"$work/err") lines on standard error: $(cat "$work/err")"
    grep -q '^shoal assign: ' "$work/err" || fail "$what: the reason does not start with 'shoal assign: '"
    grep -qF -- "$reason" "$work/err" || fail "$what: reason '$(cat "$work/err")' lacks '$reason'"
}

ok='"nodes": [{"id": "n1"}], "tasks": [{"id": "t/0"}]'
expect_bad "invalid JSON" '{"nodes": [' "invalid JSON at line 1"
expect_bad "empty input" '' "the input is empty"
expect_bad "not an object" '[1, 2]' "the input must be a JSON object"
expect_bad "nodes not an array" '{"nodes": {}, "tasks": []}' "nodes: must be an array"
expect_bad "nodes missing" '{"tasks": []}' "nodes: is required"
expect_bad "node not an object" '{"nodes": ["n1"], "tasks": []}' "nodes[0]: must be an object"
expect_bad "node id missing" '{"nodes": [{"id": "n1"}, {"capacity": 2}], "tasks": []}' "nodes[1].id: is required"
expect_bad "node id a number" '{"nodes": [{"id": 7}], "tasks": []}' "nodes[0].id: must be a string"
expect_bad "node id empty" '{"nodes": [{"id": ""}], "tasks": []}' "nodes[0].id: must not be empty"
expect_bad "node id twice" '{"nodes": [{"id": "n1"}, {"id": "n2"}, {"id": "n1"}], "tasks": []}' 'nodes[2].id: "n1" given twice'
expect_bad "task id twice" '{"nodes": [], "tasks": [{"id": "web/0"}, {"id": "web/0"}]}' 'tasks[1].id: "web/0" given twice'
expect_bad "capacity 0" '{"nodes": [{"id": "n1", "capacity": 0}], "tasks": []}' "nodes[0].capacity: must be a positive integer"
expect_bad "capacity 2^32" '{"nodes": [{"id": "n1", "capacity": 4294967296}], "tasks": []}' "nodes[0].capacity: must be a positive integer, at most 4294967295"
expect_bad "capacity a string" '{"nodes": [{"id": "n1", "capacity": "2"}], "tasks": []}' "nodes[0].capacity: must be a positive integer"
expect_bad "weight -1" '{"nodes": [], "tasks": [{"id": "t/0", "weight": -1}]}' "tasks[0].weight: must be a positive integer"
expect_bad "weight 1.5" '{"nodes": [], "tasks": [{"id": "t/0", "weight": 1.5}]}' "tasks[0].weight: must be a positive integer"
expect_bad "slots beyond 64 bits" '{"nodes": [{"id": "n1", "slots": 99999999999999999999}], "tasks": []}' "nodes[0].slots: must be a non-negative integer"
expect_bad "lag 2^63" "{$ok, \"lags\": {\"n2\": {\"t/0\": 9223372036854775808}}}" "lags.n2.t/0: must be a non-negative integer"
expect_bad "lag negative" "{$ok, \"lags\": {\"n2\": {\"t/0\": -5}}}" "lags.n2.t/0: must be a non-negative integer"
expect_bad "stateful a string" '{"nodes": [], "tasks": [{"id": "t/0", "stateful": "yes"}]}' "tasks[0].stateful: must be true or false"
expect_bad "unknown task key" '{"nodes": [], "tasks": [{"id": "t/0", "wieght": 2}]}' "tasks[0].wieght: unknown key"
expect_bad "unknown top-level key" "{$ok, \"curent\": {}}" "curent: unknown key"
expect_bad "unknown config key" "{$ok, \"config\": {\"standby\": 1}}" "config.standby: unknown key"
expect_bad "max_warmups -1" "{$ok, \"config\": {\"max_warmups\": -1}}" "config.max_warmups: must be a non-negative integer"
expect_bad "label value a number" '{"nodes": [{"id": "n1", "labels": {"zone": 1}}], "tasks": []}' "nodes[0].labels.zone: must be a string"
expect_bad "handles a string" '{"nodes": [{"id": "n1", "handles": "web"}], "tasks": []}' "nodes[0].handles: must be an array"
expect_bad "current task a number" "{$ok, \"current\": {\"n1\": {\"active\": [1]}}}" "current.n1.active[0]: must be a string"
expect_bad "current role unknown" "{$ok, \"current\": {\"n1\": {\"leader\": []}}}" "current.n1.leader: unknown key"
expect_bad "duplicate object key" '{"nodes": [], "nodes": [], "tasks": []}' "duplicate object key"
expect_bad "string too long" "{\"nodes\": [{\"id\": \"$(printf 'n%.0s' $(seq 257))\"}], \"tasks\": []}" "nodes[0].id: longer than 256 bytes"
expect_bad "name with a newline" "{$ok, \"current\": {\"n\\n1\": 3}}" 'current.n\x0A1: must be an object'
expect_bad "not UTF-8" "$(printf '{"nodes": [{"id": "\xff"}], "tasks": []}')" "unable to decode byte 0xff"
expect_bad "too deep" "$(printf '%.0s[' $(seq 5000))" "maximum parsing depth reached"
[ "$bad" -ge 15 ] || fail "only $bad bad inputs are tried"

# Names in current and lags that are not nodes or tasks are not errors.
expect_status 0 "unknown names in current and lags" "$shoal" assign <<EOF
{$ok, "current": {"gone": {"active": ["t/0", "old/3"]}}, "lags": {"gone": {"old/3": 7}}}
EOF

# More than 64 MiB is refused before it is parsed.
head -c $((64 * 1024 * 1024 + 1)) /dev/zero | tr '\0' ' ' | "$shoal" assign >"$work/out" 2>"$work/err"
status=$?
[ "$status" -eq 2 ] || fail "input over 64 MiB: exit status $status, expected 2"
grep -q "larger than" "$work/err" || fail "input over 64 MiB: says so: $(cat "$work/err")"

# ---------------------------------------------------------------------------
# Files that cannot be read, usage.

expect_status 1 "missing file" "$shoal" assign "$work/no-such-file.json"
grep -q "cannot read .*no-such-file.json" "$work/err" || fail "missing file: names it: $(cat "$work/err")"
expect_status 1 "a directory" "$shoal" assign "$work"
expect_status 0 "assign --help" "$shoal" assign --help
grep -q "docs/assign.md" "$work/out" || fail "assign --help points to docs/assign.md"
expect_status 0 "--help" "$shoal" --help
grep -q "assign" "$work/out" || fail "--help lists assign"
expect_status 2 "assign bad option" "$shoal" assign --bogus
grep -q "unknown option '--bogus'" "$work/err" || fail "assign bad option: names it"
expect_status 2 "assign two files" "$shoal" assign "$scenario" "$scenario"

if [ "$failures" -eq 0 ]; then echo "assign_cli: all checks passed (${#scenarios[@]} scenarios, $bad bad inputs)"; fi
exit $((failures > 0))
