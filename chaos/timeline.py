#!/usr/bin/env python3
"""chaos/timeline.py: the picture of a chaos run (docs/chaos.md, "The timeline").

    timeline.py RUN_DIR

Writes RUN_DIR/timeline.svg and RUN_DIR/timeline.html (the same picture with
the checker's verdicts, self-contained: no network needed to view it). One
lane per task, its owner node by color and its role (active solid, learner or
standby hatched); faults shaded with their label; the acting leader and its
term on the top lane; seconds from the run's start below. check.py calls it
after each check; run alone, it checks the run first (without printing).

Python 3 standard library only.
"""

import html
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check  # noqa: E402

PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#e15759", "#76b7b2", "#edc948",
           "#9c755f", "#ff9da7", "#bab0ac"]
FAULT_COLORS = {"network": "#e8a0a0", "process": "#a0a0d8", "cluster": "#a8d0a8"}
NETWORK = ("halves", "bridge", "isolate", "isolate-leader", "one-way-in", "one-way-out", "loss")
PROCESS = ("kill", "stop", "kill-worker", "stop-worker")

WIDTH = 1400
LEFT = 120
RIGHT = 24
LANE = 18
ROW = 13  # an active's bar in a task's lane; two at once take two rows
STRIP = 6  # the learner / standby strip below a task's actives
LANE_GAP = 5
# A pause in a writer's writes longer than this shows as a gap in its bar
# (a frozen child, say).
PAUSE_MS = 250


def fault_kind(name):
    if name in NETWORK or name.startswith("one-way") or name.startswith("isolate"):
        return "network"
    if name in PROCESS or name.startswith("kill") or name.startswith("stop"):
        return "process"
    return "cluster"


def fault_label(fault):
    nodes = fault.get("nodes") or []
    return "%s %s" % (fault["fault"], ",".join(nodes)) if nodes else fault["fault"]


def hatch(color):
    """The fill of a learner's or standby's strip, hatched in its node's color."""
    return "url(#hatch-%s)" % color[1:]


def esc(text):
    return html.escape(str(text), quote=True)


class Canvas:
    def __init__(self, run):
        self.run = run
        self.lo = run.start
        self.hi = max(run.last, run.final, run.start + 1)
        self.parts = []

    def x(self, mono):
        mono = min(max(mono, self.lo), self.hi)
        return LEFT + (mono - self.lo) * (WIDTH - LEFT - RIGHT) / float(self.hi - self.lo)

    def mono_after(self, mono, pixels):
        """The time a number of pixels right of mono."""
        return mono + pixels * (self.hi - self.lo) / float(WIDTH - LEFT - RIGHT)

    def add(self, text):
        self.parts.append(text)

    def rect(self, x1, y, x2, height, fill, title=None, extra=""):
        width = max(x2 - x1, 1.0)
        body = '<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" %s' % (
            x1, y, width, height, fill, extra)
        self.add(body + ("><title>%s</title></rect>" % esc(title) if title else "/>"))

    def text(self, x, y, content, size=11, anchor="start", fill="#222", weight="normal"):
        self.add('<text x="%.1f" y="%.1f" font-size="%d" text-anchor="%s" fill="%s" '
                 'font-weight="%s">%s</text>' % (x, y, size, anchor, fill, weight, esc(content)))


def node_colors(run):
    names = sorted(set(run.names.values()) | set(run.events))
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


def fault_intervals(run):
    """(start, end or None, fault line) for each fault; an end closes the
    earliest open start of the same fault and nodes."""
    out, open_ = [], []
    for fault in run.faults:
        key = (fault["fault"], tuple(fault.get("nodes") or []))
        if fault["op"] == "start":
            open_.append([key, fault["mono"], None, fault])
        else:
            match = next((o for o in open_ if o[0] == key), None) or \
                next((o for o in open_ if o[0][0] == key[0]), None)
            if match:
                open_.remove(match)
                match[2] = fault["mono"]
                out.append(match)
    out += open_
    return sorted(((o[1], o[2], o[3]) for o in out), key=lambda o: o[0])


def leader_bars(run):
    """(from, to, node name, leader id, term) while a node acts as leader."""
    bars = []
    for name, lines in run.events.items():
        current = None
        for index, line in enumerate(lines):
            ends_life = line["event"] == "start" and current
            if current and (line["event"] == "leader" or ends_life):
                bars.append((current[0], line["mono"], name, current[1], current[2]))
                current = None
            if line["event"] == "leader" and line["acting"]:
                current = (line["mono"], line["leader"], line["term"])
        if current:
            end = run.last if name in check.live_nodes(run) or not run.final_members \
                else lines[-1]["mono"]
            kills = [k for k in check.fault_ends(run, name) if k >= current[0]]
            bars.append((current[0], kills[0] if kills else end, name, current[1], current[2]))
    return sorted(bars)


def pack(bars):
    """Rows for bars that overlap: each bar takes the first row free at its start."""
    rows, out = [], []
    for bar in bars:
        for i, end in enumerate(rows):
            if end <= bar[0]:
                rows[i] = bar[1]
                out.append((i, bar))
                break
        else:
            rows.append(bar[1])
            out.append((len(rows) - 1, bar))
    return max(len(rows), 1), out


def active_pieces(writes):
    """The writer's active time as (from, to) pieces, split at pauses."""
    pieces = []
    for mono, _, _ in writes:
        if pieces and mono - pieces[-1][1] <= PAUSE_MS:
            pieces[-1][1] = mono
        else:
            pieces.append([mono, mono])
    return pieces


def task_sort_key(task):
    job, _, index = task.rpartition("/")
    return (job, int(index) if index.isdigit() else 0, task)


def tick_step(seconds):
    """Seconds between ticks: a round step that gives at most 16 of them."""
    for step in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600):
        if seconds / step <= 16:
            return step
    step = 3600
    while seconds / step > 16:
        step *= 10
    return step


def render(run, results):
    """The timeline as one SVG document (a string)."""
    canvas = Canvas(run)
    colors = node_colors(run)
    by_task = check.tasks_of(run)
    intervals = check.event_intervals(run) if not run.children else {}
    tasks = sorted(set(by_task) | set(intervals), key=task_sort_key)
    faults = fault_intervals(run)
    # Instants: client operations, and cluster changes with no end.
    marks_top = [(f[0], None, f[2], True) for f in faults
                 if f[1] is None and fault_kind(f[2]["fault"]) == "cluster"]
    marks_top += [(op["mono"], None, {"fault": "%s %s%s" % (
        op["op"], op["job"], " %s" % op["parallelism"] if op.get("parallelism") else ""),
        "nodes": [], "code": op["code"]}, True) for op in run.ops]
    spans = [(f[0], f[1], f[2], False) for f in faults
             if not (f[1] is None and fault_kind(f[2]["fault"]) == "cluster")]
    fault_rows, fault_packed = pack(sorted(
        ((f[0], max(f[1] if f[1] is not None else f[0] if f[3] else canvas.hi,
                    canvas.mono_after(f[0], 8 + 6 * len(fault_label(f[2])))), f)
         for f in spans + marks_top), key=lambda b: b[0]))
    leader_rows, leader_packed = pack([(b[0], b[1], b) for b in leader_bars(run)])

    title_h, fault_h = 26, 14 * fault_rows + 4
    leader_top = title_h + fault_h + 6
    leader_h = leader_rows * (LANE + 2)
    tasks_top = leader_top + leader_h + 14
    rows_of = {task: task_rows(by_task.get(task, [])) for task in tasks}
    heights = {task: max(rows_of[task][0], 1) * ROW + STRIP for task in tasks}
    plot_bottom = tasks_top + sum(heights[t] + LANE_GAP for t in tasks)
    axis_y = plot_bottom + 4
    legend_y = axis_y + 50
    height = legend_y + 24

    # Faults, shaded behind everything.
    for row, (start, end, fault, instant) in [(r, b[2]) for r, b in fault_packed]:
        color = FAULT_COLORS[fault_kind(fault["fault"])]
        label = fault_label(fault)
        x1 = canvas.x(start)
        if instant:
            what = "%s at %.1f s%s" % (label, run.t(start), " (%s)" % fault["code"]
                                       if "code" in fault else "")
            canvas.rect(x1 - 1, title_h + 2 + row * 14, x1 + 1, 12, "#3a7a3a", what)
            canvas.add('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#3a7a3a" '
                       'stroke-dasharray="2,3"/>' % (x1, leader_top - 2, x1, plot_bottom))
            canvas.text(x1 + 4, title_h + 12 + row * 14, label, size=10, fill="#2a5a2a")
            continue
        x2 = canvas.x(end if end is not None else canvas.hi)
        what = "%s from %.1f s to %s" % (label, run.t(start),
                                         "%.1f s" % run.t(end) if end is not None else "the end")
        canvas.rect(x1, title_h + 2 + row * 14, x2, 12, color, what)
        canvas.rect(x1, leader_top - 2, x2, plot_bottom - leader_top + 2, color, what,
                    'fill-opacity="0.28"')
        canvas.text(x1 + 3, title_h + 12 + row * 14, label, size=10)

    # Time axis and grid.
    seconds = (canvas.hi - canvas.lo) / 1000.0
    step = tick_step(seconds)
    tick = 0
    while tick <= seconds + 1e-9:
        x = canvas.x(canvas.lo + tick * 1000)
        canvas.add('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000" '
                   'stroke-opacity="0.09"/>' % (x, leader_top - 2, x, plot_bottom))
        canvas.add('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#444"/>' % (
            x, axis_y, x, axis_y + 5))
        canvas.text(x, axis_y + 17, "%d s" % tick, size=10, anchor="middle", fill="#444")
        tick += step
    canvas.add('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444"/>' % (
        LEFT, axis_y, WIDTH - RIGHT, axis_y))

    # The leader lane.
    canvas.text(LEFT - 8, leader_top + 13, "leader", anchor="end", weight="bold")
    for row, bar in leader_packed:
        start, end, name, leader, term = bar[2]
        y = leader_top + row * (LANE + 2)
        x1, x2 = canvas.x(start), canvas.x(end)
        canvas.rect(x1, y, x2, LANE, colors.get(name, "#888"),
                    "%s leads, term %d, from %.1f s to %.1f s" % (name, term, run.t(start),
                                                                   run.t(end)),
                    'stroke="#fff" stroke-width="0.5"')
        if x2 - x1 > 34:
            canvas.text(x1 + 4, y + 13, "%s t%d" % (name, term), size=10, fill="#fff",
                        weight="bold")
        elif x2 - x1 > 14:
            canvas.text(x1 + 2, y + 13, "t%d" % term, size=9, fill="#fff")

    # Task lanes.
    marks = marks_of(results)
    y = tasks_top
    for lane, task in enumerate(tasks):
        lane_h = heights[task]
        canvas.rect(LEFT, y, WIDTH - RIGHT, lane_h, "#f4f4f4" if lane % 2 else "#fafafa")
        canvas.text(LEFT - 8, y + lane_h / 2 + 4, task, anchor="end")
        rows, placed = rows_of[task]
        for child in by_task.get(task, []):
            draw_child(canvas, run, colors, child, y, placed.get(id(child), 0),
                       y + max(rows, 1) * ROW)
        for span in intervals.get(task, []):
            canvas.rect(canvas.x(span["from"]), y, canvas.x(span["to"]), ROW,
                        colors.get(span["name"], "#888"),
                        "%s active on %s, epoch %s, %.1f s to %.1f s (event log)" % (
                            task, span["name"], check.epoch_text(span["epoch"]),
                            run.t(span["from"]), run.t(span["to"])))
        for start, end, what in marks.get(task, []):
            canvas.rect(canvas.x(start), y - 2, canvas.x(end), 4, "#d00000", what)
        y += lane_h + LANE_GAP

    # The last heal, and when everything had settled after it.
    heal = check.last_heal(run)
    converge = results["figures"].get("converge_ms")
    for at, label, color in ((heal, "heal", "#b00000"),
                             (heal + converge if heal is not None and converge is not None
                              else None, "converged", "#006000")):
        if at is None:
            continue
        x = canvas.x(at)
        canvas.add('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="1.2" '
                   'stroke-dasharray="4,3"/>' % (x, leader_top - 4, x, plot_bottom, color))
        canvas.text(x + (3 if label == "converged" else -3), axis_y + 30, label, size=10,
                    anchor="start" if label == "converged" else "end", fill=color)

    legend(canvas, colors, legend_y)
    verdict = "ok" if results["ok"] else "FAILED: " + ", ".join(
        i["name"] for i in results["invariants"] if not i["ok"] and i.get("applies", True))
    canvas.text(LEFT, 16, "%s, seed %s, %s mode: %s" % (
        results.get("scenario"), results.get("seed"), results.get("mode"), verdict), size=13,
        weight="bold", fill="#222" if results["ok"] else "#b00000")
    head = ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
            'font-family="DejaVu Sans, Helvetica, Arial, sans-serif">\n' % (
                WIDTH, height, WIDTH, height))
    defs = ["<defs>"]
    for color in sorted(set(colors.values()) | {"#888"}):
        defs.append('<pattern id="hatch-%s" width="6" height="6" patternUnits="userSpaceOnUse" '
                    'patternTransform="rotate(45)"><rect width="6" height="6" fill="%s" '
                    'fill-opacity="0.22"/><line x1="0" y1="0" x2="0" y2="6" stroke="%s" '
                    'stroke-width="2.2"/></pattern>' % (color[1:], color, color))
    defs.append("</defs>")
    body = '<rect width="100%" height="100%" fill="#fff"/>\n'
    return head + "\n".join(defs) + "\n" + body + "\n".join(canvas.parts) + "\n</svg>\n"


def task_rows(children):
    """Rows for a task's writers: one, unless two wrote at once."""
    writers = [(c.first_write, c.last_write, c) for c in children if c.writes]
    rows, packed = pack(sorted(writers, key=lambda w: w[0]))
    return (rows if writers else 1), {id(bar[2]): row for row, bar in packed}


def draw_child(canvas, run, colors, child, y, row, strip_y):
    name = run.name_of(child.node)
    color = colors.get(name, "#888")
    end = child.exit or child.stop or child.records[-1]["mono"]
    if child.start_role and child.start_role != "active":
        until = child.promote or end
        canvas.rect(canvas.x(child.start), strip_y, canvas.x(until), STRIP - 1,
                    hatch(color),
                    "%s %s on %s (pid %d), %.1f s to %.1f s" % (
                        child.task, child.start_role, name, child.pid, run.t(child.start),
                        run.t(until)))
    for start, stop in active_pieces(child.writes):
        epochs = sorted({check.epoch_text(w[1]) for w in child.writes if start <= w[0] <= stop})
        canvas.rect(canvas.x(start), y + row * ROW, canvas.x(stop), ROW, color,
                    "%s active on %s (pid %d), epoch %s, writes %.3f s to %.3f s" % (
                        child.task, name, child.pid, ", ".join(epochs), run.t(start),
                        run.t(stop)), 'stroke="#fff" stroke-width="0.6"')


def marks_of(results):
    """Red marks per task where an invariant broke: double writers, stale writes."""
    marks = {}
    for inv in results["invariants"]:
        for example in inv["counterexamples"]:
            task = example.get("task")
            if not task:
                continue
            if inv["name"] in ("one-active-writes", "one-active-events"):
                marks.setdefault(task, []).append(
                    (example["from"], example["to"], check.describe(example)))
            elif inv["name"] == "no-stale-write":
                marks.setdefault(task, []).append(
                    (example["first"]["mono"], example["last"]["mono"], check.describe(example)))
    return marks


def legend(canvas, colors, y):
    x = LEFT
    ids = {name: node_id[:8] for node_id, name in canvas.run.names.items()}
    for name, color in colors.items():
        label = "%s %s" % (name, ids.get(name, ""))
        canvas.rect(x, y - 10, x + 14, 12, color)
        canvas.text(x + 18, y, label.strip())
        x += 30 + 6.5 * len(label)
    x += 12
    first = next(iter(colors), None)
    canvas.rect(x, y - 10, x + 22, 12, "#666")
    canvas.text(x + 26, y, "active")
    x += 74
    if first:
        canvas.rect(x, y - 10, x + 22, 12, hatch(colors[first]))
    canvas.text(x + 26, y, "learner / standby")
    x += 136
    for kind, color in FAULT_COLORS.items():
        canvas.rect(x, y - 10, x + 22, 12, color)
        canvas.text(x + 26, y, "%s fault" % kind)
        x += 112
    canvas.rect(x, y - 6, x + 22, 4, "#d00000")
    canvas.text(x + 26, y, "invariant broken")


def page(run, results, svg):
    """A self-contained HTML page: verdicts, figures, the picture, the schedule."""
    f = results["figures"]
    rows = []
    for inv in results["invariants"]:
        state = "ok" if inv["ok"] else "FAIL" if inv.get("applies", True) else "fail (not required)"
        examples = "".join("<li>%s</li>" % esc(check.describe(e)) for e in inv["counterexamples"])
        rows.append('<tr class="%s"><td>%s</td><td><b>%s</b></td><td>%s%s</td></tr>' % (
            "ok" if inv["ok"] else "bad", state, esc(inv["name"]), esc(inv["text"]),
            "<ul>%s</ul>" % examples if examples else ""))
    figures = [("double-active", "%d ms" % f["double_active_ms"]),
               ("stale writes", f["stale_writes"]),
               ("converged after the last heal", check.ms(f["converge_ms"])),
               ("moves", f["moves"]),
               ("longest handoff gap", check.ms(f["max_handoff_gap_ms"])),
               ("terms", "%d before the faults, %d at the end, %d at most" % (
                   f["term_before_faults"], f["term_at_end"], f["term_max"]))]
    figures += [("new leader after %s at %.1f s" % (x["fault"], x["t"]),
                 check.ms(x["new_leader_ms"]) + (" (%s, term %s)" % (x["leader"], x["term"])
                                                 if x["new_leader_ms"] is not None else ""))
                for x in f["new_leader"]]
    schedule = "".join("<tr><td>%.1f s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
        s["t"], esc(s["op"]), esc(s["fault"]), esc(",".join(s.get("nodes") or [])))
        for s in results["schedule"])
    return """<!doctype html>
<html><head><meta charset="utf-8"><title>chaos run: %(title)s</title>
<style>
body { font-family: DejaVu Sans, Helvetica, Arial, sans-serif; margin: 16px; color: #222; }
table { border-collapse: collapse; margin: 8px 0 16px; }
td, th { border: 1px solid #ddd; padding: 3px 8px; vertical-align: top; font-size: 13px; }
tr.bad td { background: #fbe3e3; }
ul { margin: 2px 0; padding-left: 18px; }
code { background: #f2f2f2; padding: 1px 4px; }
</style></head><body>
<h2>%(title)s</h2>
<p>replay: <code>%(replay)s</code></p>
%(svg)s
<h3>Invariants</h3><table>%(rows)s</table>
<h3>Figures</h3><table>%(figures)s</table>
<h3>Schedule</h3><table><tr><th>time</th><th>op</th><th>fault</th><th>nodes</th></tr>%(schedule)s</table>
</body></html>
""" % {"title": esc("%s, seed %s: %s" % (results.get("scenario"), results.get("seed"),
                                          "ok" if results["ok"] else "FAILED")),
       "replay": esc(results.get("replay") or ""), "svg": svg, "rows": "".join(rows),
       "figures": "".join("<tr><td>%s</td><td>%s</td></tr>" % (esc(k), esc(v))
                          for k, v in figures),
       "schedule": schedule}


def write(run, results, out_dir):
    svg = render(run, results)
    for name, content in (("timeline.svg", svg), ("timeline.html", page(run, results, svg))):
        path = os.path.join(out_dir, name)
        with open(path + ".tmp", "w") as f:
            f.write(content)
        os.replace(path + ".tmp", path)


def main(argv):
    if len(argv) != 2:
        print("usage: timeline.py RUN_DIR", file=sys.stderr)
        return 2
    try:
        run = check.load(argv[1])
    except check.Unusable as error:
        print("timeline.py: %s" % error, file=sys.stderr)
        return 2
    write(run, check.check(run), argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
