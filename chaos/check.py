#!/usr/bin/env python3
"""chaos/check.py: the chaos kit's checker (docs/chaos.md, "The checker").

    check.py RUN_DIR [--bound-ms N] [--gap-ms N] [--no-timeline] [--quiet]

Merges a run directory (run.json, faults.jsonl, ops.jsonl, nodes/*/events.jsonl,
record/*.jsonl, final/*.json) into one history on CLOCK_MONOTONIC, checks the
invariants on it, measures the figures, and writes RUN_DIR/results.json, then
timeline.svg and timeline.html (chaos/timeline.py). Prints a short summary.

Exit status: 0 when every invariant holds, 1 when one breaks, 2 when the input
cannot be used (named on standard error). A line of an input that is not a
whole JSON object of the expected shape (a killed process may leave half a
line) is skipped and counted, never fatal.

Python 3 standard library only.
"""

import argparse
import glob
import json
import os
import sys

DEFAULT_BOUND_MS = 60000
# A writer whose writes pause longer than this is not active "continuously".
# Generous: a loaded machine may stall a process for a second or more.
DEFAULT_GAP_MS = 2000
EXAMPLES_MAX = 20


class Unusable(Exception):
    """The run directory cannot be checked; the message says why."""


def parse_epoch(text):
    """'T.V' as (T, V), or None."""
    if not isinstance(text, str):
        return None
    parts = text.split(".")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    return (int(parts[0]), int(parts[1]))


def epoch_text(epoch):
    return "%d.%d" % epoch


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


# --- reading -------------------------------------------------------------

class Child:
    """One process of the recorder: one record file."""

    def __init__(self, path, task, node, pid):
        self.path = path
        self.task = task
        self.node = node
        self.pid = pid
        self.records = []
        self.writes = []  # (mono, epoch, seq)
        self.grants = []  # (mono, epoch): started active or promoted
        self.start = None
        self.start_role = None
        self.promote = None
        self.stop = None
        self.exit = None

    @property
    def first_write(self):
        return self.writes[0][0] if self.writes else None

    @property
    def last_write(self):
        return self.writes[-1][0] if self.writes else None


class Run:
    """Everything a run directory holds, merged on the mono clock."""

    def __init__(self, path):
        self.path = path
        self.skipped = {}  # relative path: lines skipped
        self.meta = {}
        self.names = {}  # node id: name
        self.faults = []
        self.ops = []
        self.events = {}  # node name: [lines], each with "_life"
        self.children = []
        self.final_members = {}
        self.final_status = {}
        self.final_jobs = {}
        self.has_final = False
        self.has_records = False

    def rel(self, path):
        return os.path.relpath(path, self.path)

    def skip(self, path, count=1):
        key = self.rel(path)
        self.skipped[key] = self.skipped.get(key, 0) + count

    def name_of(self, node_id):
        return self.names.get(node_id, node_id[:8] if isinstance(node_id, str) else "?")

    def t(self, mono):
        """Seconds from the run's start, for people."""
        return None if mono is None else round((mono - self.start) / 1000.0, 3)


def read_lines(run, path, valid):
    """The JSON objects of a .jsonl file for which valid(obj) holds; every
    other line (cut short, not JSON, not of the expected shape) is counted."""
    lines = []
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return lines
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            run.skip(path)
            continue
        if not isinstance(obj, dict) or not valid(obj):
            run.skip(path)
            continue
        lines.append(obj)
    return lines


def read_object(path):
    try:
        with open(path, "rb") as f:
            obj = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return obj if isinstance(obj, dict) else None


def has(obj, fields):
    """True when obj has every field with its type (int, str, bool, list)."""
    for name, kind in fields.items():
        value = obj.get(name)
        if kind is int:
            # Times, terms and counts are unsigned 64-bit numbers at most.
            if not is_int(value) or not 0 <= value < 2 ** 64:
                return False
        elif not isinstance(value, kind):
            return False
    return True


EVENT_FIELDS = {
    "start": {"life": int},
    "member": {"member": str, "state": str},
    "leader": {"leader": str, "term": int, "leads": bool, "acting": bool},
    "assignment": {"term": int, "version": int},
    "task": {"action": str, "task": str, "role": str, "epoch_term": int, "epoch_version": int},
    "lease": {"held": bool, "until": int},
    "request": {"op": str, "job": str, "code": str},
    "unplaced": {"task": str, "reason": str},
    "move": {"task": str, "step": str, "from": str, "to": str, "reason": str},
    "leave": {"phase": str},
}


def valid_event(line):
    if not has(line, {"mono": int, "node": str, "event": str}):
        return False
    # A type this checker does not know is kept: later versions may add some.
    return has(line, EVENT_FIELDS.get(line["event"], {}))


def strings(value):
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def final_members_shape(obj):
    """A members --json answer with only the parts of the expected shape."""
    if obj is None or not isinstance(obj.get("members"), list):
        return None
    return {"leader": obj.get("leader") if isinstance(obj.get("leader"), str) else "",
            "term": obj.get("term") if is_int(obj.get("term")) else None,
            "members": [m for m in obj["members"] if isinstance(m, dict)
                        and isinstance(m.get("id"), str) and isinstance(m.get("state"), str)]}


def final_status_shape(obj):
    if obj is None or not isinstance(obj.get("tasks"), list):
        return None
    return {"leader": obj.get("leader") if isinstance(obj.get("leader"), str) else "",
            "term": obj.get("term") if is_int(obj.get("term")) else None,
            "tasks": [t for t in obj["tasks"] if isinstance(t, dict)
                      and isinstance(t.get("task"), str)]}


def final_jobs_shape(obj):
    if obj is None or not isinstance(obj.get("jobs"), list):
        return None
    return {"jobs": [j for j in obj["jobs"] if isinstance(j, dict)
                     and isinstance(j.get("name"), str) and is_int(j.get("parallelism"))]}


FINAL_SHAPES = {"members": final_members_shape, "status": final_status_shape,
                "jobs": final_jobs_shape}

RECORD_EVENTS = ("start", "promote", "write", "stop", "exit")


def valid_record(line):
    return (has(line, {"mono": int, "ev": str, "task": str, "node": str, "pid": int,
                       "role": str, "epoch": str})
            and line["ev"] in RECORD_EVENTS and parse_epoch(line["epoch"]) is not None
            and "/" in line["task"])


def load(path):
    """Reads a run directory; raises Unusable when it cannot be checked."""
    if not os.path.isdir(path):
        raise Unusable("%s is not a directory" % path)
    run = Run(path)
    meta_path = os.path.join(path, "run.json")
    if not os.path.exists(meta_path):
        raise Unusable("%s: no run.json (is it a run directory of the chaos kit?)" % path)
    run.meta = read_object(meta_path)
    if run.meta is None:
        raise Unusable("%s: not a JSON object" % meta_path)
    if not isinstance(run.meta.get("mode"), str):
        run.meta["mode"] = "quorum"
    for key in ("nodes", "jobs"):
        if not isinstance(run.meta.get(key), list):
            run.meta[key] = []
    for node in run.meta["nodes"]:
        if isinstance(node, dict) and isinstance(node.get("id"), str):
            run.names[node["id"]] = str(node.get("name") or node["id"][:8])

    run.faults = read_lines(run, os.path.join(path, "faults.jsonl"),
                            lambda f: has(f, {"mono": int, "op": str, "fault": str})
                            and f["op"] in ("start", "end") and strings(f.get("nodes", [])))
    run.faults.sort(key=lambda f: f["mono"])
    run.ops = read_lines(run, os.path.join(path, "ops.jsonl"),
                         lambda o: has(o, {"mono": int, "op": str, "job": str, "code": str})
                         and (o.get("parallelism") is None or is_int(o["parallelism"])))
    run.ops.sort(key=lambda o: o["mono"])

    logs = sorted(glob.glob(os.path.join(path, "nodes", "*", "events.jsonl")))
    if not logs:
        raise Unusable("%s: no nodes/*/events.jsonl (the nodes ran without --events?)" % path)
    for log in logs:
        name = os.path.basename(os.path.dirname(log))
        lines = read_lines(run, log, valid_event)
        life = 0
        for line in lines:
            if line["event"] == "start":
                life = line["life"]
            line["_life"] = life
            run.names.setdefault(line["node"], name)
        run.events[name] = lines

    record_dir = os.path.join(path, "record")
    run.has_records = os.path.isdir(record_dir)
    # A file is one process, unless its pid was used again by a later child
    # of the same task on the same node (pids wrap, at 32768 by default):
    # a start record after others begins a new child.
    children = []
    for file in sorted(glob.glob(os.path.join(record_dir, "*.jsonl"))):
        current = {}
        for rec in read_lines(run, file, valid_record):
            child = current.get(rec["pid"])
            if child is None or (rec["ev"] == "start" and child.records):
                child = current[rec["pid"]] = Child(run.rel(file), rec["task"], rec["node"],
                                                    rec["pid"])
                children.append(child)
            child.records.append(rec)
    for child in children:
        child.records.sort(key=lambda r: r["mono"])
        for rec in child.records:
            epoch, ev, mono = parse_epoch(rec["epoch"]), rec["ev"], rec["mono"]
            if ev == "write":
                child.writes.append((mono, epoch, rec.get("seq")))
            elif ev == "start":
                child.start, child.start_role = mono, rec["role"]
                if rec["role"] == "active":
                    child.grants.append((mono, epoch))
            elif ev == "promote":
                child.promote = child.promote or mono
                child.grants.append((mono, epoch))
            elif ev == "stop":
                child.stop = mono
            elif ev == "exit":
                child.exit = mono
        if child.records:
            run.children.append(child)

    final_dir = os.path.join(path, "final")
    run.has_final = os.path.isdir(final_dir)
    for kind, store in (("members", run.final_members), ("status", run.final_status),
                        ("jobs", run.final_jobs)):
        for file in sorted(glob.glob(os.path.join(final_dir, "*.%s.json" % kind))):
            obj = FINAL_SHAPES[kind](read_object(file))
            name = os.path.basename(file)[: -len(".%s.json" % kind)]
            if obj is None:
                run.skip(file)
            else:
                store[name] = obj

    monos = [f["mono"] for f in run.faults] + [o["mono"] for o in run.ops]
    monos += [line["mono"] for lines in run.events.values() for line in lines]
    monos += [r["mono"] for c in run.children for r in c.records]
    if not monos:
        raise Unusable("%s: the event logs and records hold no usable line" % path)
    run.start = run.meta.get("start_mono") if is_int(run.meta.get("start_mono")) else min(monos)
    run.last = max(monos)
    # The end of the run as checked: the final snapshot when the runner says
    # when it took it, else the last thing recorded.
    run.final = run.meta.get("final_mono") if is_int(run.meta.get("final_mono")) else run.last
    run.last = max(run.last, run.final)
    return run


# --- what the history says ----------------------------------------------

def tasks_of(run):
    by_task = {}
    for child in run.children:
        by_task.setdefault(child.task, []).append(child)
    for children in by_task.values():
        children.sort(key=lambda c: (c.first_write if c.writes else c.records[0]["mono"]))
    return by_task


def fault_ends(run, name):
    """Monos at which faults that kill a node's worker (kill, kill-worker...)
    started: its children die with it."""
    return [f["mono"] for f in run.faults
            if f["op"] == "start" and f["fault"].startswith("kill")
            and name in (f.get("nodes") or [])]


def live_nodes(run):
    """Nodes that answered at the end (their final snapshot exists)."""
    return sorted(set(run.final_members) | set(run.final_status))


def event_intervals(run):
    """Per task, the intervals in which a node's child may act, from the event
    logs (docs/events.md, "Reading logs together"): from a task line with role
    active to the demote or stop of the task; a lease lost ends the node's
    actives at its `until`, and a lease held again resumes those not stopped
    meanwhile. A life ends at its node's kill, the next life, or the end."""
    out = {}
    live = set(live_nodes(run))
    for name, lines in run.events.items():
        by_life = {}
        for line in lines:
            by_life.setdefault(line["_life"], []).append(line)
        lives = sorted(by_life)
        for index, life in enumerate(lives):
            life_lines = by_life[life]
            last_line = life_lines[-1]["mono"]
            kills = [k for k in fault_ends(run, name) if k >= last_line]
            if kills:
                end = kills[0]
            elif index + 1 < len(lives):
                end = by_life[lives[index + 1]][0]["mono"]
            elif name in live or not run.final_members:
                end = run.last
            else:
                end = last_line
            active, paused = {}, {}

            def close(task, at, why):
                start, epoch, node = active.pop(task)
                out.setdefault(task, []).append(
                    {"node": node, "name": name, "life": life, "from": start,
                     "to": max(start, at), "epoch": epoch, "end": why})

            for line in life_lines:
                ev, mono = line["event"], line["mono"]
                if ev == "task":
                    task = line["task"]
                    if line["role"] == "active":
                        epoch = (line["epoch_term"], line["epoch_version"])
                        paused.pop(task, None)
                        if task in active:
                            active[task] = (active[task][0], max(active[task][1], epoch),
                                            line["node"])
                        else:
                            active[task] = (mono, epoch, line["node"])
                    else:
                        paused.pop(task, None)
                        if task in active:
                            close(task, mono, line["action"])
                elif ev == "lease" and not line["held"]:
                    for task in list(active):
                        paused[task] = active[task][1]
                        close(task, min(mono, line["until"]) if line["until"] else mono,
                              "lease lost")
                elif ev == "lease" and line["held"]:
                    for task, epoch in paused.items():
                        active[task] = (mono, epoch, line["node"])
                    paused.clear()
            for task in list(active):
                close(task, end, "end of life" if end != run.last else "end of run")
    return out


def leader_lines(run):
    """Every leader line of every node, in mono order, with its node name."""
    out = []
    for name, lines in run.events.items():
        out += [dict(line, _name=name) for line in lines if line["event"] == "leader"]
    out.sort(key=lambda line: line["mono"])
    return out


def last_heal(run):
    ends = [f["mono"] for f in run.faults if f["op"] == "end"]
    return max(ends) if ends else None


# --- invariants -----------------------------------------------------------

def invariant(name, text, counterexamples, applies=True, note=None):
    result = {"name": name, "text": text, "ok": not counterexamples,
              "count": len(counterexamples),
              "counterexamples": counterexamples[:EXAMPLES_MAX]}
    if not applies:
        result["applies"] = False
    if note:
        result["note"] = note
    return result


def who(run, child):
    return {"pid": child.pid, "node": run.name_of(child.node), "node_id": child.node,
            "file": child.path}


def sweep_double(intervals):
    """Total time in which two or more of the (from, to) intervals hold."""
    points = sorted([(s, 1) for s, e in intervals if e > s] + [(e, -1) for s, e in intervals if e > s],
                    key=lambda p: (p[0], p[1]))
    total, depth, since = 0, 0, None
    for at, step in points:
        if depth >= 2 and since is not None:
            total += at - since
        depth += step
        since = at
    return total


def check_one_active_writes(run, by_task, applies):
    examples, double_ms = [], 0
    for task, children in sorted(by_task.items()):
        writers = [c for c in children if c.writes]
        spans = [(c.first_write, c.last_write) for c in writers]
        double_ms += sweep_double(spans)
        for i, a in enumerate(writers):
            for b in writers[i + 1:]:
                (s1, e1), (s2, e2) = (a.first_write, a.last_write), (b.first_write, b.last_write)
                # Spans that only touch (one's last write in the same ms as
                # the other's first) cannot be told apart from a handoff.
                if not (s2 <= e1 and s1 <= e2) or e1 == s2 or e2 == s1:
                    continue
                first, second = (a, b) if s1 <= s2 else (b, a)
                inside = [w for w in second.writes if first.first_write < w[0] < first.last_write]
                interleaved = bool(inside) and any(w[0] > inside[0][0] for w in first.writes)
                frm, to = max(s1, s2), min(e1, e2)
                examples.append({
                    "task": task,
                    "kind": "interleaved" if interleaved else "overlap",
                    "pids": [first.pid, second.pid],
                    "nodes": [run.name_of(first.node), run.name_of(second.node)],
                    "epochs": [epoch_text(first.writes[0][1]), epoch_text(second.writes[0][1])],
                    "first": dict(who(run, first), first_write=first.first_write,
                                  last_write=first.last_write, t=[run.t(first.first_write),
                                                                  run.t(first.last_write)]),
                    "second": dict(who(run, second), first_write=second.first_write,
                                   last_write=second.last_write, t=[run.t(second.first_write),
                                                                    run.t(second.last_write)]),
                    "from": frm, "to": to, "t": [run.t(frm), run.t(to)], "overlap_ms": to - frm,
                    "writes_inside": len(inside),
                })
    examples.sort(key=lambda e: e["from"])
    return invariant(
        "one-active-writes",
        "at most one active per task at any instant, by the recorder's writes", examples,
        applies=applies), double_ms


def check_one_active_events(run, intervals, applies):
    examples, double_ms = [], 0
    for task, spans in sorted(intervals.items()):
        double_ms += sweep_double([(s["from"], s["to"]) for s in spans])
        for i, a in enumerate(spans):
            for b in spans[i + 1:]:
                if a["name"] == b["name"] and a["life"] == b["life"]:
                    continue
                frm, to = max(a["from"], b["from"]), min(a["to"], b["to"])
                if frm >= to:
                    continue
                pair = sorted((a, b), key=lambda s: s["from"])
                examples.append({
                    "task": task,
                    "nodes": [s["name"] for s in pair],
                    "epochs": [epoch_text(s["epoch"]) for s in pair],
                    "intervals": [{"node": s["name"], "life": s["life"], "from": s["from"],
                                   "to": s["to"], "t": [run.t(s["from"]), run.t(s["to"])],
                                   "ended_by": s["end"]} for s in pair],
                    "from": frm, "to": to, "t": [run.t(frm), run.t(to)], "overlap_ms": to - frm,
                })
    examples.sort(key=lambda e: e["from"])
    return invariant(
        "one-active-events",
        "at most one active per task at any instant, by the event logs' task and lease lines",
        examples, applies=applies), double_ms


def check_stale_writes(run, by_task, applies):
    """A write under epoch e at t, after another child of the task (or another
    node, by its event log) was granted e' > e at t' < t."""
    examples, count = [], 0
    event_grants = {}
    for lines in run.events.values():
        for line in lines:
            if line["event"] == "task" and line["role"] == "active":
                event_grants.setdefault(line["task"], []).append(line)
    for task, children in sorted(by_task.items()):
        grants = [(mono, epoch, "record", c.pid, c.node) for c in children
                  for mono, epoch in c.grants]
        grants += [(line["mono"], (line["epoch_term"], line["epoch_version"]), "events", None,
                    line["node"]) for line in event_grants.get(task, [])]
        grants.sort(key=lambda g: g[0])
        for child in children:
            first = last = newer = None
            stale = 0
            for mono, epoch, seq in child.writes:
                for g in grants:
                    if g[0] >= mono:
                        break
                    other = g[3] != child.pid if g[2] == "record" else g[4] != child.node
                    if other and g[1] > epoch:
                        stale += 1
                        last = (mono, epoch, seq)
                        if first is None:
                            first, newer = (mono, epoch, seq), g
                        break
            if stale:
                count += stale
                mono, source, pid, node = newer[0], newer[2], newer[3], newer[4]
                examples.append({
                    "task": task, "stale_writes": stale,
                    "writer": who(run, child),
                    "first": {"mono": first[0], "t": run.t(first[0]), "epoch": epoch_text(first[1]),
                              "seq": first[2]},
                    "last": {"mono": last[0], "t": run.t(last[0]), "epoch": epoch_text(last[1]),
                             "seq": last[2]},
                    "newer": {"source": source, "pid": pid, "node": run.name_of(node),
                              "mono": mono, "t": run.t(mono), "epoch": epoch_text(newer[1])},
                })
    examples.sort(key=lambda e: e["first"]["mono"])
    return invariant("no-stale-write",
                     "no write under an epoch older than one already granted to another child",
                     examples, applies=applies), count


def check_terms(run):
    examples = []
    for name, lines in sorted(run.events.items()):
        best = {}
        for line in lines:
            if line["event"] != "leader" or line["term"] == 0:
                continue
            life = line["_life"]
            if life in best and line["term"] < best[life][0]:
                examples.append({
                    "node": name, "life": life, "term": line["term"], "mono": line["mono"],
                    "t": run.t(line["mono"]), "before": best[life][0],
                    "before_mono": best[life][1], "before_t": run.t(best[life][1]),
                    "leader": run.name_of(line["leader"]),
                })
            if life not in best or line["term"] > best[life][0]:
                best[life] = (line["term"], line["mono"])
    return invariant("terms-monotonic", "a node's term never goes back within one life", examples)


def final_jobs(run):
    """The jobs at the end, {name: parallelism}, and where that was read; None
    when no final snapshot tells them."""
    for name, obj in sorted(run.final_jobs.items()):
        jobs = obj.get("jobs")
        if isinstance(jobs, list):
            return ({j["name"]: j.get("parallelism") for j in jobs
                     if isinstance(j, dict) and isinstance(j.get("name"), str)},
                    "final/%s.jobs.json" % name)
    # The leader's table, as every node's status shows it: prefer the
    # leader's own answer.
    candidates = sorted(run.final_status.items(),
                        key=lambda kv: (run.names.get(kv[1].get("leader")) != kv[0], kv[0]))
    for name, obj in candidates:
        tasks = obj.get("tasks")
        if not obj.get("leader") or not isinstance(tasks, list):
            continue
        jobs = {}
        for row in tasks:
            task = row.get("task") if isinstance(row, dict) else None
            if isinstance(task, str) and "/" in task:
                job, _, index = task.rpartition("/")
                if index.isdigit():
                    jobs[job] = max(jobs.get(job, 0), int(index) + 1)
        return jobs, "final/%s.status.json" % name
    return None, None


def check_jobs(run):
    """Every acknowledged job is there at the end with its parallelism. A
    request answered with anything but ok (timed-out, partial...) may or may
    not have taken effect: either outcome is accepted."""
    accept = {}  # job: set of acceptable parallelisms (None: absent)
    origin = {}
    for job in run.meta.get("jobs") or []:
        if isinstance(job, dict) and isinstance(job.get("name"), str) and \
                is_int(job.get("parallelism")):
            accept[job["name"]] = {job["parallelism"]}
            origin[job["name"]] = {"op": "run.json"}
    for op in run.ops:
        job, code, kind = op["job"], op["code"], op["op"]
        after = None if kind == "remove" else op.get("parallelism")
        if kind not in ("submit", "rescale", "remove") or (after is None and kind != "remove"):
            continue
        if code == "ok":
            accept[job] = {after}
            origin[job] = {"op": kind, "mono": op["mono"], "t": run.t(op["mono"]),
                           "node": op.get("node")}
        elif code not in ("invalid", "not-found"):
            accept.setdefault(job, {None}).add(after)
    jobs, source = final_jobs(run)
    examples = []
    if jobs is None:
        if accept:
            examples.append({"reason": "no final snapshot of any live node names a leader's table"
                             " or the jobs", "jobs": sorted(accept)})
        return invariant("jobs-kept", "every acknowledged job is there at the end, with its "
                         "parallelism", examples), source
    for job, ok in sorted(accept.items()):
        found = jobs.get(job)
        if found not in ok:
            examples.append({"job": job, "expected": sorted(ok, key=lambda p: (p is None, p)),
                             "found": found, "source": source, "acknowledged": origin.get(job)})
    return invariant("jobs-kept", "every acknowledged job is there at the end, with its "
                     "parallelism", examples), source


def task_convergence(run, children, gap_ms, since):
    """When the task came to have one writer, writing without a pause longer
    than gap_ms until the end (run.final); None when it never did."""
    writes = sorted(((w[0], c) for c in children for w in c.writes if w[0] <= run.final),
                    key=lambda wc: (wc[0], wc[1].first_write))
    if not writes or writes[-1][0] < run.final - gap_ms:
        return None, writes[-1][1] if writes else None
    owner = writes[-1][1]
    at = writes[-1][0]
    for mono, child in reversed(writes):
        if child is not owner or at - mono > gap_ms:
            break
        at = mono
    return max(at, since), owner


def converge_by_events(run, intervals, expected, since, bound_ms, examples, task_at):
    """Without the recorder: each task of the final jobs has one active at the
    end by the event logs, since it started."""
    for task in sorted(expected | set(intervals)):
        at_end = [s for s in intervals.get(task, []) if s["from"] <= run.final <= s["to"]]
        if task not in expected:
            if at_end:
                examples.append({"task": task, "reason": "its job no longer has it, yet it is "
                                 "active at the end", "nodes": [s["name"] for s in at_end]})
            continue
        if len(at_end) != 1:
            examples.append({"task": task, "reason": "%d actives at the end by the event logs"
                             % len(at_end), "nodes": [s["name"] for s in at_end]})
            continue
        at = task_at[task] = max(at_end[0]["from"], since)
        if at - since > bound_ms:
            examples.append({"task": task, "reason": "one active only %d ms after the heal, over "
                             "the bound of %d ms" % (at - since, bound_ms),
                             "converged_t": run.t(at), "heal_t": run.t(since),
                             "nodes": [at_end[0]["name"]]})


def check_convergence(run, by_task, intervals, jobs, bound_ms, gap_ms):
    heal = last_heal(run)
    since = heal if heal is not None else run.start
    examples, task_at = [], {}
    expected = None
    if jobs is not None:
        expected = {"%s/%d" % (job, i) for job, p in jobs.items() if is_int(p)
                    for i in range(p)}
    recorded_jobs = {task.rpartition("/")[0] for task in by_task}
    names = sorted(by_task) if expected is None else sorted(
        t for t in expected | set(by_task) if t.rpartition("/")[0] in recorded_jobs)
    if not run.children and expected is not None:
        converge_by_events(run, intervals, expected, since, bound_ms, examples, task_at)
        names = sorted(expected)
    for task in names if run.children else []:
        children = by_task.get(task, [])
        at, owner = task_convergence(run, children, gap_ms, since)
        gone = expected is not None and task not in expected
        if gone:
            if at is not None:
                examples.append({"task": task, "reason": "its job no longer has it, yet it is "
                                 "written to the end", "writer": who(run, owner)})
            continue
        if at is None:
            last = max((c.last_write for c in children if c.writes), default=None)
            examples.append({"task": task, "reason": "no single writer until the end",
                             "last_write": last, "last_write_t": run.t(last),
                             "last_writer": who(run, owner) if owner else None,
                             "end_t": run.t(run.final)})
            continue
        task_at[task] = at
        if at - since > bound_ms:
            examples.append({"task": task, "reason": "one writer only %d ms after the heal, over "
                             "the bound of %d ms" % (at - since, bound_ms),
                             "converged_t": run.t(at), "heal_t": run.t(since),
                             "writer": who(run, owner)})

    # The leader: every live node's last leader line names the same one.
    # The leader itself, when live, must act as one (hold its quorum).
    leader_at, leaders, acting = since, {}, {}
    for name in live_nodes(run):
        lines = [line for line in run.events.get(name, []) if line["event"] == "leader"
                 and line["mono"] <= run.final]
        if lines:
            last = lines[-1]
            leaders[name] = (last["leader"], last["term"])
            leader_at = max(leader_at, last["mono"])
            if last["leads"]:
                acting[name] = last["acting"]
    agreed = len(set(leaders.values())) == 1 and next(iter(leaders.values()))[0] != ""
    if agreed and not all(acting.values()):
        examples.append({"reason": "the leader the live nodes follow does not act as one",
                         "leaders": {n: {"leader": run.name_of(l), "term": t,
                                         "acting": acting.get(n)}
                                     for n, (l, t) in sorted(leaders.items())}})
        agreed = False
    elif leaders and not agreed:
        examples.append({"reason": "the live nodes' last leader lines disagree",
                         "leaders": {n: {"leader": run.name_of(l) if l else "", "term": t}
                                     for n, (l, t) in sorted(leaders.items())}})
    elif leaders and leader_at - since > bound_ms:
        examples.append({"reason": "the live nodes agreed on a leader only %d ms after the heal,"
                         " over the bound of %d ms" % (leader_at - since, bound_ms),
                         "agreed_t": run.t(leader_at), "heal_t": run.t(since)})
    figures = {
        "heal_t": run.t(since) if heal is not None else None,
        "tasks_converged_ms": (max(task_at.values()) - since) if task_at else None,
        "leader_converged_ms": (leader_at - since) if agreed else None,
    }
    converged = None
    if task_at and agreed and len(task_at) == len([t for t in names if expected is None
                                                   or t in expected]):
        converged = max(max(task_at.values()), leader_at) - since
    figures["converge_ms"] = converged
    figures["per_task_converged_ms"] = {t: at - since for t, at in sorted(task_at.items())}
    text = ("after the last heal, within %d ms: every task active exactly once, to the end, "
            "and every live node following the same leader" % bound_ms)
    if not run.children:
        text += " (by the event logs: no recorder's files)"
    return invariant("converged", text, examples), figures


def check_one_leader(run):
    examples, seen = [], {}
    for name in live_nodes(run):
        for kind, store in (("members", run.final_members), ("status", run.final_status)):
            obj = store.get(name)
            if obj is None:
                continue
            seen["%s.%s" % (name, kind)] = (obj.get("leader") or "", obj.get("term"))
    if not seen:
        examples.append({"reason": "no live node's final snapshot"})
    elif len(set(seen.values())) != 1 or next(iter(seen.values()))[0] == "":
        examples.append({"reason": "the live nodes do not name one leader",
                         "leaders": {k: {"leader": run.name_of(l) if l else "", "term": t}
                                     for k, (l, t) in sorted(seen.items())}})
    return invariant("one-leader", "at the end, every live node names the same leader and term",
                     examples)


def check_one_view(run):
    examples, views = [], {}
    for name, obj in sorted(run.final_members.items()):
        members = obj.get("members")
        if not isinstance(members, list):
            continue
        views[name] = sorted(m.get("id") for m in members
                             if isinstance(m, dict) and m.get("state") == "alive"
                             and isinstance(m.get("id"), str))
    if not views:
        examples.append({"reason": "no live node's final members"})
    elif len({tuple(v) for v in views.values()}) != 1:
        examples.append({"reason": "the live nodes see different members alive",
                         "alive": {n: [run.name_of(i) for i in v] for n, v in views.items()}})
    else:
        view = set(next(iter(views.values())))
        answering = {i for i, n in run.names.items() if n in views}
        missing = answering - view
        if missing:
            examples.append({"reason": "nodes that answered at the end are not alive in the view",
                             "missing": sorted(run.name_of(i) for i in missing)})
    return invariant("one-view", "at the end, every live node sees the same members alive",
                     examples)


# --- figures ----------------------------------------------------------------

def new_leader_figures(run):
    lines = leader_lines(run)
    out = []
    starts = [f for f in run.faults if f["op"] == "start"]
    for index, fault in enumerate(starts):
        at = fault["mono"]
        # A leader that comes once the next fault began is that fault's.
        until = starts[index + 1]["mono"] if index + 1 < len(starts) else run.last + 1
        before = [l for l in lines if l["mono"] <= at and l["acting"]]
        current = (before[-1]["leader"], before[-1]["term"]) if before else None
        new = next((l for l in lines if at < l["mono"] < until and l["acting"]
                    and (l["leader"], l["term"]) != current), None)
        item = {"fault": fault["fault"], "nodes": fault.get("nodes") or [], "t": run.t(at),
                "leader_before": run.name_of(current[0]) if current else None,
                "term_before": current[1] if current else None, "new_leader_ms": None}
        # The highest term any node saw until the next fault: how many terms
        # this one cost.
        item["term_max"] = max((l["term"] for l in lines if at < l["mono"] < until),
                               default=item["term_before"])
        if new:
            item.update(new_leader_ms=new["mono"] - at, leader=run.name_of(new["leader"]),
                        term=new["term"])
        out.append(item)
    return out


def handoff_figures(run, by_task):
    handoffs = []
    for task, children in sorted(by_task.items()):
        writers = sorted((c for c in children if c.writes), key=lambda c: c.first_write)
        for prev, nxt in zip(writers, writers[1:]):
            handoffs.append({"task": task, "from": run.name_of(prev.node), "from_pid": prev.pid,
                             "to": run.name_of(nxt.node), "to_pid": nxt.pid,
                             "t": run.t(nxt.first_write),
                             "gap_ms": nxt.first_write - prev.last_write})
    return handoffs


def term_figures(run):
    lines = leader_lines(run)
    first_fault = run.faults[0]["mono"] if run.faults else None
    heal = last_heal(run)
    terms = [l["term"] for l in lines]
    return {
        "term_before_faults": max((l["term"] for l in lines
                                   if first_fault is None or l["mono"] < first_fault), default=0),
        "term_max": max(terms, default=0),
        "term_after_heal": max((l["term"] for l in lines if heal is not None
                                and l["mono"] >= heal), default=None),
        "term_at_end": max((l["term"] for l in lines if l["mono"] <= run.final), default=0),
    }


def schedule(run):
    return [dict(f, t=run.t(f["mono"])) for f in run.faults]


# --- the whole check ----------------------------------------------------------

def check(run, bound_ms=DEFAULT_BOUND_MS, gap_ms=DEFAULT_GAP_MS):
    mode = run.meta.get("mode", "quorum")
    quorum = mode != "available"
    by_task = tasks_of(run)
    intervals = event_intervals(run)
    writes_inv, double_ms = check_one_active_writes(run, by_task, quorum)
    events_inv, double_events_ms = check_one_active_events(run, intervals, quorum)
    stale_inv, stale = check_stale_writes(run, by_task, quorum)
    jobs_inv, _ = check_jobs(run)
    jobs, _ = final_jobs(run)
    conv_inv, conv_figures = check_convergence(run, by_task, intervals, jobs, bound_ms, gap_ms)
    invariants = [writes_inv, events_inv, stale_inv, check_terms(run), jobs_inv, conv_inv,
                  check_one_leader(run), check_one_view(run)]
    if not run.has_records:
        for inv in (writes_inv, stale_inv):
            inv["note"] = "no record/ directory: the workload was not the recorder"
    handoffs = handoff_figures(run, by_task)
    heal = last_heal(run)
    figures = {
        "double_active_ms": double_ms,
        "double_active_events_ms": double_events_ms,
        "stale_writes": stale,
        "new_leader": new_leader_figures(run),
        "handoffs": handoffs,
        "max_handoff_gap_ms": max((h["gap_ms"] for h in handoffs), default=None),
        "moves": len(handoffs),
        "moves_after_heal": len([h for h in handoffs if heal is not None
                                 and h["t"] >= run.t(heal)]),
        "writes": sum(len(c.writes) for c in run.children),
        "children": len(run.children),
        "duration_s": run.t(run.final),
        "skipped_lines": dict(sorted(run.skipped.items())),
    }
    figures.update(conv_figures)
    figures.update(term_figures(run))
    ok = all(inv["ok"] for inv in invariants if inv.get("applies", True))
    return {
        "ok": ok,
        "seed": run.meta.get("seed"),
        "scenario": run.meta.get("scenario"),
        "mode": mode,
        "replay": run.meta.get("replay"),
        "bound_ms": bound_ms,
        "gap_ms": gap_ms,
        "start_mono": run.start,
        "final_mono": run.final,
        "nodes": {i: n for i, n in sorted(run.names.items(), key=lambda kv: kv[1])},
        "invariants": invariants,
        "figures": figures,
        "schedule": schedule(run),
    }


def ms(value):
    return "-" if value is None else "%.1f s" % (value / 1000.0)


def describe(example):
    """One line for a counterexample, for people; results.json has it whole."""
    if "reason" in example:
        text = example["reason"]
        if "task" in example:
            text = "%s: %s" % (example["task"], text)
        for key in ("leaders", "alive", "missing"):
            if key in example:
                text += " %s" % json.dumps(example[key], sort_keys=True)
        return text
    if "overlap_ms" in example and "pids" in example:
        return ("%s: pid %d on %s (epoch %s) and pid %d on %s (epoch %s) both wrote from %.3f s "
                "to %.3f s (%d ms, %s)" % (
                    example["task"], example["pids"][0], example["nodes"][0],
                    example["epochs"][0], example["pids"][1], example["nodes"][1],
                    example["epochs"][1], example["t"][0], example["t"][1],
                    example["overlap_ms"], example["kind"]))
    if "overlap_ms" in example:
        return ("%s: active on %s (epoch %s) and %s (epoch %s) from %.3f s to %.3f s (%d ms)" % (
            example["task"], example["nodes"][0], example["epochs"][0], example["nodes"][1],
            example["epochs"][1], example["t"][0], example["t"][1], example["overlap_ms"]))
    if "stale_writes" in example:
        w, n = example["writer"], example["newer"]
        return ("%s: pid %d on %s made %d write%s under %s from %.3f s, after %s was granted to "
                "%s on %s at %.3f s" % (
                    example["task"], w["pid"], w["node"], example["stale_writes"],
                    "" if example["stale_writes"] == 1 else "s",
                    example["first"]["epoch"], example["first"]["t"], n["epoch"],
                    "pid %s" % n["pid"] if n["pid"] else "a child", n["node"], n["t"]))
    if "before" in example:
        return ("%s (life %d): term %d at %.3f s after term %d at %.3f s" % (
            example["node"], example["life"], example["term"], example["t"], example["before"],
            example["before_t"]))
    if "job" in example:
        return "%s: expected parallelism %s, found %s (%s)" % (
            example["job"], " or ".join("absent" if p is None else str(p)
                                        for p in example["expected"]),
            "absent" if example["found"] is None else example["found"], example["source"])
    return json.dumps(example, sort_keys=True)


def summary(results):
    f = results["figures"]
    lines = ["chaos check: %s, seed %s, %s mode: %s" % (
        results["scenario"], results["seed"], results["mode"],
        "ok" if results["ok"] else "FAILED")]
    for inv in results["invariants"]:
        state = "ok" if inv["ok"] else ("FAIL" if inv.get("applies", True) else "(fail)")
        line = "  %-5s %-18s %s" % (state, inv["name"], inv["text"])
        if not inv.get("applies", True):
            line += " [not required in %s mode]" % results["mode"]
        lines.append(line)
        for example in inv["counterexamples"][:3]:
            lines.append("          %s" % describe(example))
        if inv["count"] > 3:
            lines.append("          ... %d in all (results.json)" % inv["count"])
    leaders = [x for x in f["new_leader"] if x["new_leader_ms"] is not None]
    lines.append("  figures: double-active %d ms, stale writes %d, moves %d, max handoff gap %s, "
                 "converged %s after the heal, terms %d -> %d (max %d)" % (
                     f["double_active_ms"], f["stale_writes"], f["moves"],
                     ms(f["max_handoff_gap_ms"]), ms(f["converge_ms"]),
                     f["term_before_faults"], f["term_at_end"], f["term_max"]))
    if leaders:
        lines.append("  new leader after: " + ", ".join(
            "%s at %.1f s: %s" % (x["fault"], x["t"], ms(x["new_leader_ms"])) for x in leaders))
    if f["skipped_lines"]:
        lines.append("  skipped %d bad lines: %s" % (
            sum(f["skipped_lines"].values()),
            ", ".join("%s (%d)" % kv for kv in f["skipped_lines"].items())))
    if results.get("replay"):
        lines.append("  replay: %s" % results["replay"])
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="check.py", description="Check a chaos run directory (docs/chaos.md).")
    parser.add_argument("run_dir")
    parser.add_argument("--bound-ms", type=int, default=DEFAULT_BOUND_MS,
                        help="after the last heal, the time every task and the leader have to "
                        "settle (default %(default)s)")
    parser.add_argument("--gap-ms", type=int, default=DEFAULT_GAP_MS,
                        help="the longest pause in a writer's writes that still counts as "
                        "continuous (default %(default)s)")
    parser.add_argument("--no-timeline", action="store_true", help="write no timeline")
    parser.add_argument("--quiet", action="store_true", help="print nothing on success")
    args = parser.parse_args(argv)
    if args.bound_ms < 0 or args.gap_ms <= 0:
        print("check.py: --bound-ms must be >= 0 and --gap-ms > 0", file=sys.stderr)
        return 2
    try:
        run = load(args.run_dir)
    except Unusable as error:
        print("check.py: %s" % error, file=sys.stderr)
        return 2
    results = check(run, args.bound_ms, args.gap_ms)
    out = os.path.join(args.run_dir, "results.json")
    try:
        with open(out + ".tmp", "w") as f:
            json.dump(results, f, indent=1, sort_keys=False)
            f.write("\n")
        os.replace(out + ".tmp", out)
    except OSError as error:
        print("check.py: cannot write %s: %s" % (out, error), file=sys.stderr)
        return 2
    if not args.no_timeline:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import timeline
        try:
            timeline.write(run, results, args.run_dir)
        except OSError as error:
            print("check.py: cannot write the timeline: %s" % error, file=sys.stderr)
            return 2
    if not (args.quiet and results["ok"]):
        print(summary(results))
    return 0 if results["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
