#!/usr/bin/env bash
# The chaos kit's recorder and checker (docs/chaos.md) can each say no:
#
#   - shoal-chaos-recorder, run as a worker runs a child (its environment and
#     a status descriptor), records its start as a learner, says ready, takes
#     `promote 3.7` (and passes over a status line too long to hold), writes
#     under the epoch it holds, and records stop and exit on SIGTERM, exiting
#     0; a bad or missing variable is named, with exit status 2;
#   - chaos/check.py passes a clean run directory built by hand (exit 0), and
#     fails (exit 1) each broken one, naming the invariant it breaks: two
#     writers at once, a write under a stale epoch, two actives in the event
#     logs, a term that goes back, a lost job, a rescale not kept, no
#     convergence, a leader that does not act, leaders or views that disagree
#     at the end; half lines are skipped and counted; a directory it cannot
#     use gives exit 2.
set -u
shoal=$1
src=$2
build=$3
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
: "$shoal"
recorder=$build/chaos/shoal-chaos-recorder
checker=$src/chaos/check.py
[ -x "$recorder" ] || { fail "no $recorder: the build makes it"; exit 1; }

# --- the recorder refuses a bad environment ------------------------------

node=0123456789abcdef0123456789abcdef
good=(SHOAL_TASK=rec/3 SHOAL_ROLE=learner SHOAL_EPOCH=0.0 "SHOAL_NODE=$node"
    SHOAL_STATUS_FD=0 "CHAOS_RECORD_DIR=$work")
refuse () { # variable-named what... (the environment: good, then the changes)
    local named=$1; shift
    expect_status 2 "the recorder with $*" env -i "${good[@]}" "$@" "$recorder" </dev/null
    grep -q "$named" "$work/err" || fail "the recorder with $* names $named ($(cat "$work/err"))"
}
expect_status 2 "the recorder with no environment" env -i "$recorder"
grep -q SHOAL_TASK "$work/err" || fail "no environment: SHOAL_TASK is named ($(cat "$work/err"))"
refuse SHOAL_TASK SHOAL_TASK=rec
refuse SHOAL_TASK 'SHOAL_TASK=a"b/1'
refuse SHOAL_TASK SHOAL_TASK=rec/x
refuse SHOAL_ROLE SHOAL_ROLE=boss
refuse SHOAL_EPOCH SHOAL_EPOCH=3
refuse SHOAL_EPOCH SHOAL_EPOCH=a.b
refuse SHOAL_NODE SHOAL_NODE=xyz
refuse SHOAL_STATUS_FD SHOAL_STATUS_FD=77
refuse SHOAL_STATUS_FD SHOAL_STATUS_FD=-1
refuse CHAOS_RECORD_DIR CHAOS_RECORD_DIR=
refuse CHAOS_WRITE_MS CHAOS_WRITE_MS=0
refuse CHAOS_WARMUP_MS CHAOS_WARMUP_MS=soon
refuse 'cannot open' "CHAOS_RECORD_DIR=$work/no/such/dir"
expect_status 2 "the recorder with an unknown flag" "$recorder" --frobnicate
expect_status 0 "the recorder --now" "$recorder" --now
grep -Eq '^[0-9]+$' "$work/out" || fail "--now prints milliseconds ($(cat "$work/out"))"
[ -z "$(ls "$work"/*.jsonl 2>/dev/null)" ] || fail "a refused recorder writes no record"

python=$(command -v python3)
if [ -z "$python" ]; then
    echo "note: python3 is not installed: the recorder's records and the checker are not checked"
    [ "$failures" -eq 0 ] || exit 1
    exit 0
fi

# --- the recorder as a worker runs it ---------------------------------------

cat >"$work/recorder.py" <<'EOF'
import json, os, signal, socket, subprocess, sys, time
recorder, folder = sys.argv[1], sys.argv[2]
node = "0123456789abcdef0123456789abcdef"
problems = []
def deadline_wait(what, condition, seconds=60):
    end = time.time() + seconds
    while time.time() < end:
        if condition():
            return True
        time.sleep(0.02)
    problems.append("timed out waiting for " + what)
    return False
def records(pid):
    path = os.path.join(folder, "rec_3.%s.%d.jsonl" % (node[:8], pid))
    if not os.path.exists(path):
        return []
    return [json.loads(line) for line in open(path) if line.endswith("\n")]

worker, child = socket.socketpair()
env = {"SHOAL_TASK": "rec/3", "SHOAL_ROLE": "learner", "SHOAL_EPOCH": "0.0",
       "SHOAL_NODE": node, "SHOAL_STATUS_FD": str(child.fileno()),
       "CHAOS_RECORD_DIR": folder, "CHAOS_WRITE_MS": "10", "CHAOS_WARMUP_MS": "50"}
proc = subprocess.Popen([recorder], env=env, pass_fds=[child.fileno()])
child.close()
worker.settimeout(60)
said = b""
while not said.endswith(b"\n"):
    said += worker.recv(64)
if said != b"ready\n":
    problems.append("a learner says 'ready', not %r" % said)
if any(r["ev"] == "write" for r in records(proc.pid)):
    problems.append("a learner writes before it is promoted")
worker.sendall(b"promote 3.7\n")
deadline_wait("3 writes under 3.7", lambda: len(
    [r for r in records(proc.pid) if r["ev"] == "write" and r["epoch"] == "3.7"]) >= 3)
# A line too long to hold is skipped whole, to its newline: the promote at
# its end is not one.
worker.sendall(b"x" * 300 + b" promote 1.1\n" + b"promote 3.8\n")
deadline_wait("writes under 3.8", lambda: any(
    r["ev"] == "write" and r["epoch"] == "3.8" for r in records(proc.pid)))
proc.send_signal(signal.SIGTERM)
status = proc.wait(60)
if status != 0:
    problems.append("SIGTERM: exit status %s, not 0" % status)
got = records(proc.pid)
events = [r["ev"] for r in got]
if events[:2] != ["start", "promote"] or events[-2:] != ["stop", "exit"]:
    problems.append("records start, promote, ..., stop, exit: %s" % events[:3] + events[-2:])
if got[0]["role"] != "learner" or got[0]["epoch"] != "0.0":
    problems.append("the start record has the environment's role and epoch: %s" % got[0])
if got[1]["role"] != "active" or got[1]["epoch"] != "3.7":
    problems.append("the promote record has role active, epoch 3.7: %s" % got[1])
writes = [r for r in got if r["ev"] == "write"]
if [r["seq"] for r in writes] != list(range(1, len(writes) + 1)):
    problems.append("writes count 1, 2, 3...: %s" % [r["seq"] for r in writes][:10])
epochs = [r["epoch"] for r in writes]
if "1.1" in epochs or epochs != sorted(epochs) or set(epochs) != {"3.7", "3.8"}:
    problems.append("writes under 3.7 then 3.8, never 1.1: %s" % sorted(set(epochs)))
if events.count("promote") != 2:
    problems.append("two promotions recorded: %s" % events.count("promote"))
monos = [r["mono"] for r in got]
if monos != sorted(monos):
    problems.append("mono never goes back")
for r in got:
    if r["task"] != "rec/3" or r["node"] != node or r["pid"] != proc.pid:
        problems.append("a record names its task, node and pid: %s" % r)
        break

# An active starts writing at once, under its epoch, and says nothing.
worker, child = socket.socketpair()
env.update(SHOAL_ROLE="active", SHOAL_EPOCH="2.5", SHOAL_STATUS_FD=str(child.fileno()))
proc = subprocess.Popen([recorder], env=env, pass_fds=[child.fileno()])
child.close()
deadline_wait("an active's writes", lambda: any(r["ev"] == "write" for r in records(proc.pid)))
proc.send_signal(signal.SIGTERM)
proc.wait(60)
got = records(proc.pid)
if got[0]["ev"] != "start" or got[0]["role"] != "active" or got[1]["ev"] != "write" or \
        got[1]["epoch"] != "2.5":
    problems.append("an active records start then writes under 2.5: %s" % got[:2])
for problem in problems:
    print(problem)
sys.exit(1 if problems else 0)
EOF
mkdir -p "$work/records"
"$python" "$work/recorder.py" "$recorder" "$work/records" >"$work/problems" 2>&1 ||
    fail "the recorder's records: $(tr '\n' ';' <"$work/problems")"

# --- the checker ------------------------------------------------------------

# Builds a run directory: three nodes, job rec (2 tasks). n1 is isolated from
# 5 s to 15 s: it loses its lease at 5.8 s, n2 leads from 7 s at term 2, rec/0
# moves from n1 (epoch 1.2) to n3 (2.3, promoted at 9 s); rec/1 stays on n2.
# Each variant breaks one thing.
cat >"$work/make_run.py" <<'EOF'
import json, os, sys
folder, variant = sys.argv[1], sys.argv[2]
base = 1000000
ids = {"n1": "a1" * 16, "n2": "b2" * 16, "n3": "c3" * 16}
def write(path, lines):
    os.makedirs(os.path.dirname(os.path.join(folder, path)), exist_ok=True)
    with open(os.path.join(folder, path), "w") as f:
        for line in lines:
            f.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
def event(name, at, kind, **fields):
    return dict({"wall": "", "mono": base + at, "node": ids[name], "event": kind}, **fields)
def task(name, at, action, which, role, epoch=(0, 0)):
    return event(name, at, "task", action=action, task=which, role=role,
                 epoch_term=epoch[0], epoch_version=epoch[1])
def leader(name, at, who, term, acting=False):
    return event(name, at, "leader", leader=ids[who] if who else "", term=term,
                 leads=who == name, acting=acting)
def child(which, name, pid, start, role, epoch, promote=None, writes=(), stop=None):
    common = {"task": which, "node": ids[name], "pid": pid}
    lines = [dict(common, mono=base + start, ev="start", role=role, epoch=epoch)]
    if promote:
        lines.append(dict(common, mono=base + promote[0], ev="promote", role="active",
                          epoch=promote[1]))
        epoch = promote[1]
    for seq, at in enumerate(writes, 1):
        lines.append(dict(common, mono=base + at, ev="write", role="active", epoch=epoch, seq=seq))
    if stop:
        lines += [dict(common, mono=base + stop, ev=ev, role="active", epoch=epoch)
                  for ev in ("stop", "exit")]
    write("record/%s.%s.%d.jsonl" % (which.replace("/", "_"), ids[name][:8], pid), lines)
    return lines

end = 30000
n1_last = {"overlap": 10000, "stale": 9100, "stale-events": 9100}.get(variant, 5700)
n3_first = 9500 if variant in ("stale", "stale-events") else 9000
# stale-events: n3's child hears of its promotion late; only n3's event log
# says that 2.3 was granted before n1's last write.
n3_promote = 9400 if variant == "stale-events" else 9000
events = {
    "n1": [event("n1", 0, "start", life=1), leader("n1", 100, "n1", 1, True),
           task("n1", 1000, "start", "rec/0", "active", (1, 2)),
           event("n1", 1000, "lease", held=True, until=base + 1600)],
    "n2": [event("n2", 0, "start", life=1), leader("n2", 100, "n1", 1),
           task("n2", 1000, "start", "rec/1", "active", (1, 2)),
           leader("n2", 7000, "n2", 2, True)],
    "n3": [event("n3", 0, "start", life=1), leader("n3", 100, "n1", 1),
           leader("n3", 7000, "n2", 2),
           task("n3", 8000, "start", "rec/0", "learner"),
           task("n3", 9000, "promote", "rec/0", "active", (2, 3))],
}
if variant != "events-overlap":
    events["n1"] += [event("n1", 6000, "lease", held=False, until=base + 5800),
                     leader("n1", 6000, None, 0),
                     task("n1", 6001, "demote", "rec/0", "standby")]
events["n1"].append(leader("n1", 15500, "n2", 2))
if variant == "not-acting":  # n2 still leads, but without its quorum
    events["n2"].append(leader("n2", 25000, "n2", 2, False))
if variant == "term-back":
    events["n3"] += [leader("n3", 20000, "n1", 1), leader("n3", 20500, "n2", 2)]
for name, lines in events.items():
    write("nodes/%s/events.jsonl" % name, lines)

child("rec/0", "n1", 101, 1000, "active", "1.2", writes=range(1000, n1_last + 1, 100))
last_rec1 = end if variant != "no-converge" else 20000
child("rec/1", "n2", 201, 1000, "active", "1.2", writes=range(1000, last_rec1 + 1, 100))
n3_last = 20000 if variant == "pid-again" else end
n3_lines = child("rec/0", "n3", 301, 8000, "learner", "0.0", promote=(n3_promote, "2.3"),
                 writes=range(n3_first, n3_last + 1, 100), stop=20050 if n3_last < end else None)
if variant == "pid-again":
    # rec/0 goes back to n1 at 20.5 s, to a child that has pid 101 again
    # (pids wrap): its records follow the first one's in the same file.
    events["n3"].append(task("n3", 20000, "stop", "rec/0", "none"))
    events["n1"].append(task("n1", 20500, "start", "rec/0", "active", (2, 5)))
    for name in ("n1", "n3"):
        write("nodes/%s/events.jsonl" % name, events[name])
    path = os.path.join(folder, "record/rec_0.%s.101.jsonl" % ids["n1"][:8])
    first = open(path).read()
    child("rec/0", "n1", 101, 20500, "active", "2.5", writes=range(20500, end + 1, 100))
    second = open(path).read()
    open(path, "w").write(first + second)
if variant == "bad-lines":
    with open(os.path.join(folder, "record/rec_1.%s.201.jsonl" % ids["n2"][:8]), "a") as f:
        f.write('{"mono":%d,"ev":"wri' % (base + end + 5))
    with open(os.path.join(folder, "nodes/n2/events.jsonl"), "a") as f:
        f.write("not json\n" + json.dumps({"mono": "soon", "event": "leader"}) + "\n")

ops = [{"mono": base + 900, "op": "submit", "job": "rec", "parallelism": 2, "code": "ok",
        "node": "n1"}]
if variant == "lost-job":
    ops.append({"mono": base + 950, "op": "submit", "job": "lost", "parallelism": 3,
                "code": "ok", "node": "n2"})
if variant == "rescale-lost":
    ops.append({"mono": base + 20000, "op": "rescale", "job": "rec", "parallelism": 4,
                "code": "ok", "node": "n2"})
if variant == "unsure":  # not acknowledged: either outcome is right
    ops.append({"mono": base + 20000, "op": "rescale", "job": "rec", "parallelism": 4,
                "code": "timed-out", "node": "n2"})
    ops.append({"mono": base + 21000, "op": "submit", "job": "maybe", "parallelism": 1,
                "code": "no-leader", "node": "n2"})
write("ops.jsonl", ops)
write("faults.jsonl", [
    {"mono": base + 5000, "op": "start", "fault": "isolate", "nodes": ["n1"], "detail": {}},
    {"mono": base + 15000, "op": "end", "fault": "isolate", "nodes": ["n1"], "detail": {}}])

for name in ids:
    alive = [n for n in ids if not (variant == "two-views" and name == "n3" and n == "n1")]
    members = {"members": [{"id": ids[n], "name": n, "addr": "", "state":
                            "alive" if n in alive else "dead", "incarnation": 1} for n in ids],
               "leader": ids["n2"], "term": 2}
    if variant == "two-leaders" and name == "n1":
        members.update(leader=ids["n1"], term=1)
    write("final/%s.members.json" % name, [members])
    rows = [{"task": "rec/%d" % i, "node": ids["n3" if i == 0 else "n2"], "role": "active",
             "state": "running", "epoch": [2, 3]} for i in range(2)]
    write("final/%s.status.json" % name, [{"leader": members["leader"], "term": members["term"],
                                           "version": 9, "tasks": rows}])
mode = "available" if variant == "available" else "quorum"
write("run.json", [{"scenario": "by-hand-" + variant, "seed": 7, "mode": mode,
                    "nodes": [{"name": n, "ns": "", "addr": "", "id": i} for n, i in ids.items()],
                    "lease_ms": 600, "profile": "loopback", "hold_ms": 10000,
                    "replay": "by hand", "jobs": [{"name": "rec", "parallelism": 2,
                                                   "stateful": True}],
                    "start_mono": base, "final_mono": base + end}])
EOF
# The invariants that failed, by name, and whether the timeline was drawn.
cat >"$work/failed.py" <<'EOF'
import json, os, sys
results = json.load(open(os.path.join(sys.argv[1], "results.json")))
for key in ("ok", "seed", "scenario", "replay", "invariants", "figures", "schedule"):
    assert key in results, key
for inv in results["invariants"]:
    assert len(inv["counterexamples"]) <= 20
    if not inv["ok"]:
        assert inv["counterexamples"], inv["name"] + " fails without a counterexample"
        print(inv["name"] + ("" if inv.get("applies", True) else "(not-required)"))
for name in ("timeline.svg", "timeline.html"):
    assert os.path.getsize(os.path.join(sys.argv[1], name)) > 0, name
EOF
make_run () { # variant
    rm -rf "$work/run"
    "$python" "$work/make_run.py" "$work/run" "$1" || fail "cannot make run $1"
}
# Runs the checker on $work/run, expecting an exit status; $failed is then
# the invariants that failed, by name.
check_run () { # status what [flags...]
    local status=$1 what=$2; shift 2
    expect_status "$status" "the checker on run $what" "$python" "$checker" "$work/run" "$@"
    failed=$("$python" "$work/failed.py" "$work/run" 2>&1 | sort | tr '\n' ' ')
}
expect_ok () { # variant
    make_run "$1"
    check_run 0 "$1"
    [ -z "$failed" ] || fail "run $1: no invariant fails, yet '$failed'"
}
expect_broken () { # variant invariant...
    local variant=$1 name; shift
    make_run "$variant"
    check_run 1 "$variant"
    for name in "$@"; do
        grep -qw -- "$name" <<<"$failed" || fail "run $variant breaks $name (failed: $failed)"
        grep -q "FAIL  $name" "$work/out" || fail "run $variant: the summary names $name"
    done
}

expect_ok clean
grep -q 'converged 0.5 s after the heal' "$work/out" ||
    fail "clean: converged 0.5 s after the heal, when n1 follows n2 ($(cat "$work/out"))"
# The figures of the clean run, as built: n2 leads 2 s after n1 is cut off,
# rec/0 moves once, from n1's last write at 5.7 s to n3's first at 9 s.
"$python" -c '
import json, sys
f = json.load(open(sys.argv[1]))["figures"]
leader = f["new_leader"][0]
assert (leader["new_leader_ms"], leader["leader"], leader["term"], leader["term_max"]) == \
    (2000, "n2", 2, 2), leader
assert [(h["task"], h["from"], h["to"], h["gap_ms"]) for h in f["handoffs"]] == \
    [("rec/0", "n1", "n3", 3300)], f["handoffs"]
assert (f["moves"], f["converge_ms"], f["double_active_ms"], f["stale_writes"]) == (1, 500, 0, 0)
assert (f["term_before_faults"], f["term_at_end"], f["term_max"]) == (1, 2, 2)
' "$work/run/results.json" || fail "the clean run's figures"
expect_ok unsure
expect_ok pid-again
expect_ok bad-lines
"$python" -c '
import json, sys
skipped = json.load(open(sys.argv[1]))["figures"]["skipped_lines"]
assert skipped == {"nodes/n2/events.jsonl": 2, "record/rec_1.b2b2b2b2.201.jsonl": 1}, skipped
' "$work/run/results.json" || fail "bad lines are skipped and counted"

expect_broken overlap one-active-writes
grep -q 'rec/0: pid 101 on n1 (epoch 1.2) and pid 301 on n3 (epoch 2.3) both wrote from 9.000 s to 10.000 s' \
    "$work/out" || fail "overlap: the counterexample names the pids, nodes, epochs and times"
expect_broken stale no-stale-write
[ "$failed" = "no-stale-write " ] || fail "stale: only no-stale-write fails ($failed)"
grep -q 'pid 101 on n1 made 1 write under 1.2 from 9.100 s, after 2.3 was granted' "$work/out" ||
    fail "stale: the counterexample names the write and the newer grant ($(cat "$work/out"))"
expect_broken stale-events no-stale-write
grep -q 'after 2.3 was granted to a child on n3 at 9.000 s' "$work/out" ||
    fail "stale-events: the grant in n3's event log is named ($(cat "$work/out"))"
expect_broken events-overlap one-active-events
[ "$failed" = "one-active-events " ] || fail "events-overlap: only one-active-events fails ($failed)"
expect_broken term-back terms-monotonic
[ "$failed" = "terms-monotonic " ] || fail "term-back: only terms-monotonic fails ($failed)"
expect_broken lost-job jobs-kept
expect_broken rescale-lost jobs-kept
expect_broken no-converge converged
grep -q 'rec/1: no single writer until the end' "$work/out" || fail "no-converge names rec/1"
expect_broken not-acting converged
grep -q 'the leader the live nodes follow does not act as one' "$work/out" ||
    fail "not-acting: the leader that does not act is named"
expect_broken two-leaders one-leader
expect_broken two-views one-view
make_run clean
check_run 1 "clean, with a bound of 0.1 s" --bound-ms 100
[ "$failed" = "converged " ] || fail "a bound of 0.1 s: converged fails ($failed)"
# In available mode, both sides of a partition may act: reported, not failed.
make_run overlap
sed -i 's/"quorum"/"available"/' "$work/run/run.json"
check_run 0 "overlap in available mode"
grep -q 'one-active-writes(not-required)' <<<"$failed" ||
    fail "available mode: the overlap is reported as not required ($failed)"

# A workload that is not the recorder (no record/): the tasks converge by the
# event logs, and a task active nowhere at the end breaks it.
make_run clean
rm -r "$work/run/record"
check_run 0 "clean without record/"
grep -q 'converged 0.5 s after the heal' "$work/out" ||
    fail "without record/: converged by the event logs ($(cat "$work/out"))"
sed -i '/"task": "rec\/0"/d' "$work/run/nodes/n3/events.jsonl"
check_run 1 "without record/, rec/0 active nowhere at the end"
[ "$failed" = "converged " ] || fail "without record/: rec/0 active nowhere: converged fails ($failed)"
grep -q 'rec/0: 0 actives at the end by the event logs' "$work/out" ||
    fail "without record/: rec/0 is named ($(cat "$work/out"))"

# --- input it cannot use ----------------------------------------------------

expect_status 2 "the checker on no directory" "$python" "$checker" "$work/nowhere"
grep -q nowhere "$work/err" || fail "no directory: it is named"
make_run clean
rm "$work/run/run.json"
expect_status 2 "the checker without run.json" "$python" "$checker" "$work/run"
grep -q run.json "$work/err" || fail "no run.json: it is named ($(cat "$work/err"))"
make_run clean
echo '{"scenario":' >"$work/run/run.json"
expect_status 2 "the checker on a cut run.json" "$python" "$checker" "$work/run"
make_run clean
rm -r "$work/run/nodes"
expect_status 2 "the checker without event logs" "$python" "$checker" "$work/run"
grep -q events.jsonl "$work/err" || fail "no event logs: said so ($(cat "$work/err"))"

[ "$failures" -eq 0 ]
