#!/usr/bin/env bash
# The deployment files (deploy/, docs/deployment.md), as far as this
# machine can check them:
#
#   - the systemd unit passes `systemd-analyze verify` with no warning (its
#     ExecStart pointed at the program built here), sends SIGTERM to the
#     worker alone (KillMode=mixed), and waits longer than a leave and a
#     child's grace (the defaults `shoal worker --help` prints) before
#     SIGKILL;
#   - the sample config and environment file are taken by a real worker,
#     which starts with them and leaves on SIGTERM;
#   - the Dockerfile builds on Debian bookworm in two stages, runs as a
#     user that is not root, exposes the ports its options name, and
#     checks /healthz on the metrics port; the image is built only when a
#     Docker daemon answers and SHOAL_TEST_DOCKER=1 says the network may be
#     used (the build installs Debian packages);
#   - the Kubernetes manifests parse as YAML and hang together: a headless
#     service that publishes pods before they are ready, a StatefulSet whose
#     pods start together, join each other by their DNS names, expect as
#     many members as there are replicas, probe /healthz and /readyz, drain
#     and leave in preStop and get longer than both to stop, and a
#     PodDisruptionBudget over the same pods; `kubectl apply
#     --dry-run=client` runs when kubectl reaches an API server.
#
# Every SHOAL_ variable the files set is an option of the worker.
set -u
shoal=$1
src=$2
# shellcheck source=lib/expect.bash
. "$(dirname "$0")/lib/expect.bash"
# shellcheck source=lib/workers.bash
. "$(dirname "$0")/lib/workers.bash"
deploy=$src/deploy
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }

# The defaults a stop must outlast, in seconds, as the program says them.
"$shoal" worker --help >"$work/help"
default_s () { sed -n -E "s/^  --$1 +duration .*default ([0-9]+)s$/\1/p" "$work/help"; }
leave_s=$(default_s leave-timeout)
grace_s=$(default_s grace)
[ -n "$leave_s" ] && [ -n "$grace_s" ] || { fail "the defaults of leave-timeout and grace in --help"; exit 1; }
need_s=$((leave_s + grace_s))
# Options, as SHOAL_ variables.
known_vars=$(sed -n -E 's/^  --([a-z-]+) .*/\1/p' "$work/help" | tr 'a-z-' 'A-Z_' | sed 's/^/SHOAL_/')
known_var () { grep -q -x -- "$1" <<<"$known_vars"; }

# --- systemd ------------------------------------------------------------

unit=$deploy/systemd/shoal.service
value_of () { sed -n -E "s/^$1=(.*)$/\1/p" "$unit"; }
[ "$(value_of KillMode)" = mixed ] || fail "the unit's KillMode is mixed"
[ "$(value_of Type)" = notify ] || fail "the unit is Type=notify"
stop_s=$(value_of TimeoutStopSec | sed -n -E 's/^([0-9]+)s?$/\1/p')
[ -n "$stop_s" ] && [ "$stop_s" -gt "$need_s" ] ||
    fail "TimeoutStopSec ($(value_of TimeoutStopSec)) exceeds leave-timeout + grace (${need_s}s)"
[ "$(value_of StateDirectory)" = shoal ] || fail "StateDirectory=shoal (/var/lib/shoal)"
drain_s=$(value_of ExecStop | sed -n -E 's/.* drain --leave .*--wait ([0-9]+)s.*/\1/p')
[ -n "$drain_s" ] || fail "ExecStop drains and leaves, with a --wait: $(value_of ExecStop)"
[ -n "$drain_s" ] && [ -n "$stop_s" ] && [ "$stop_s" -gt $((drain_s + need_s)) ] ||
    fail "TimeoutStopSec ($stop_s) exceeds the drain's wait + leave-timeout + grace"
[ "$(value_of Restart)" = on-failure ] || fail "Restart=on-failure"
[ -n "$(value_of WatchdogSec)" ] || fail "the unit sets WatchdogSec"
[ "$(value_of User)" = shoal ] || fail "the unit runs as its own user"
if command -v systemd-analyze >/dev/null; then
    sed "s|/usr/local/bin/shoal|$(realpath "$shoal")|" "$unit" >"$work/shoal.service"
    if ! systemd-analyze verify "$work/shoal.service" >"$work/verify.out" 2>&1; then
        fail "systemd-analyze verify: $(cat "$work/verify.out")"
    elif [ -s "$work/verify.out" ]; then
        fail "systemd-analyze verify warns: $(cat "$work/verify.out")"
    else
        echo "systemd-analyze verify: the unit passes"
    fi
else
    echo "skip: no systemd-analyze: the unit is not verified (its keys are checked above)"
fi

# The sample config and environment file, taken by a real worker: only
# what must differ on this machine is overridden by flags.
set -a
# shellcheck source=/dev/null
. "$deploy/systemd/worker.env"
set +a
"$shoal" worker --config "$deploy/systemd/worker.conf" --data-dir "$work/w" --name w \
    --bind 127.0.0.1:0 --advertise '' --join '' --expect 1 --key-file '' --beacon-port 0 \
    --metrics '' --events "$work/events.jsonl" --profile loopback \
    >"$work/w.out" 2>"$work/w.log" &
pid_of[w]=$!
wait_for "a worker starts with the sample config" grep -q 'on port' "$work/w.log" || exit 1

# The logrotate file, run for real on this worker's event log: its path,
# user and postrotate command made this test's.
if command -v logrotate >/dev/null; then
    me=$(id -un) group=$(id -gn)
    sed -e "s|/var/log/shoal/events.jsonl|$work/events.jsonl|" -e "s/shoal shoal/$me $group/g" \
        -e "s|systemctl reload shoal.service.*|kill -HUP ${pid_of[w]}|" \
        "$deploy/logrotate/shoal" >"$work/logrotate.conf"
    wait_for "the event log has lines" test -s "$work/events.jsonl"
    logrotate -f -s "$work/logrotate.state" "$work/logrotate.conf" >"$work/logrotate.out" 2>&1 ||
        fail "logrotate: $(cat "$work/logrotate.out")"
    [ -s "$work/events.jsonl.1" ] || fail "logrotate renamed the event log to events.jsonl.1"
    wait_for "the worker opened the log again" grep -q 'the event log is open again' "$work/w.log"
    expect_status 0 "a submit after the rotation" "$shoal" submit rotated --parallelism 1 \
        --command 'exec sleep 600' --data-dir "$work/w"
    wait_for "the new file takes the lines" grep -q '"job":"rotated"' "$work/events.jsonl"
    grep -q '"job":"rotated"' "$work/events.jsonl.1" && fail "a line after the rotation in the old file"
    echo "logrotate: the sample file rotates a worker's event log"
else
    echo "skip: no logrotate: deploy/logrotate/shoal is not run"
fi
stop w
for var in $(sed -n -E 's/^#? *(SHOAL_[A-Z_]+)=.*/\1/p' "$deploy/systemd/worker.env"); do
    known_var "$var" || fail "worker.env: $var is no option"
done

# --- Docker -------------------------------------------------------------

dockerfile=$deploy/docker/Dockerfile
python3 - "$dockerfile" "$src/.dockerignore" <<'EOF' >"$work/docker.vars" || fail "the Dockerfile (above)"
import re, sys
text = open(sys.argv[1]).read().replace("\\\n", " ")
lines = [l.strip() for l in text.splitlines() if l.strip() and not l.strip().startswith("#")]
problems = []
stages = [l.split()[1] for l in lines if l.upper().startswith("FROM ")]
if len(stages) < 2 or not all(s.startswith("debian:bookworm") for s in stages):
    problems.append("two stages or more, each on debian:bookworm: %s" % stages)
last = max(i for i, l in enumerate(lines) if l.upper().startswith("FROM "))
final = lines[last:]
users = [l.split()[1] for l in final if l.upper().startswith("USER ")]
if not users or users[-1].split(":")[0] in ("root", "0"):
    problems.append("the run stage runs as a user that is not root: %s" % users)
if any(re.search(r"\b(build-essential|cmake|-dev)\b", l) for l in final if l.upper().startswith("RUN ")):
    problems.append("the run stage installs build tools or -dev packages")
if not any("COPY --from=" in l for l in final):
    problems.append("the run stage copies the program from the build stage")
env = dict(re.findall(r"(SHOAL_[A-Z_]+)=(\S+)", " ".join(l for l in final if l.upper().startswith("ENV "))))
metrics_port = env.get("SHOAL_METRICS", ":").rsplit(":", 1)[1]
bind_port = env.get("SHOAL_BIND", ":").rsplit(":", 1)[1]
exposed = " ".join(l for l in final if l.upper().startswith("EXPOSE "))
for port in (bind_port + "/tcp", bind_port + "/udp", metrics_port + "/tcp"):
    if port not in exposed.split():
        problems.append("EXPOSE %s (bind and metrics): %s" % (port, exposed))
print("\n".join(sorted(env)))  # the variables its ENV sets, for the caller
health = [l for l in final if l.upper().startswith("HEALTHCHECK ")]
if not health or "/healthz" not in health[0] or ":" + metrics_port + "/" not in health[0]:
    problems.append("HEALTHCHECK on /healthz at the metrics port %s: %s" % (metrics_port, health))
ignore = open(sys.argv[2]).read().split()
for entry in (".git", "build*"):
    if entry not in ignore:
        problems.append(".dockerignore leaves out %s" % entry)
for p in problems:
    print("FAIL:", p, file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
while read -r var; do known_var "$var" || fail "Dockerfile: $var is no option"; done <"$work/docker.vars"
[ -s "$work/docker.vars" ] || fail "the Dockerfile sets the options a container needs (ENV SHOAL_...)"
if ! command -v docker >/dev/null; then
    echo "skip: no docker client: the image is not built"
elif ! timeout 20 docker info >/dev/null 2>&1; then
    echo "skip: no Docker daemon answers (docker info): the image is not built"
elif [ "${SHOAL_TEST_DOCKER:-}" != 1 ]; then
    echo "skip: the image build installs Debian packages (network): set SHOAL_TEST_DOCKER=1 to build it"
else
    docker build -f "$dockerfile" -t shoal-test:deploy "$src" >"$work/docker.log" 2>&1 ||
        fail "docker build: $(tail -20 "$work/docker.log")"
    docker run --rm shoal-test:deploy worker --help >/dev/null || fail "the image runs shoal worker --help"
    echo "docker: the image builds and runs"
fi

# --- Kubernetes ---------------------------------------------------------

k8s=$deploy/kubernetes
metrics_port=$(sed -n -E 's/.*SHOAL_METRICS=[^ ]*:([0-9]+).*/\1/p' "$dockerfile")
python3 - "$need_s" "$metrics_port" "$k8s"/*.yaml <<'EOF' >"$work/k8s.vars" || fail "the Kubernetes manifests (above)"
import sys, yaml
need, metrics_port = int(sys.argv[1]), int(sys.argv[2])
docs = [d for path in sys.argv[3:] for d in yaml.safe_load_all(open(path)) if d]
kinds = {d["kind"]: d for d in docs}
problems = []
def check(ok, what):
    if not ok:
        problems.append(what)
for kind in ("Service", "StatefulSet", "PodDisruptionBudget"):
    check(kind in kinds, "a %s" % kind)
svc, sts, pdb = kinds.get("Service", {}), kinds.get("StatefulSet", {}), kinds.get("PodDisruptionBudget", {})
spec = sts.get("spec", {})
pod = spec.get("template", {}).get("spec", {})
labels = spec.get("template", {}).get("metadata", {}).get("labels", {})
check(svc.get("spec", {}).get("clusterIP") == "None", "the service is headless")
check(svc.get("spec", {}).get("publishNotReadyAddresses") is True,
      "the service publishes pods before they are ready (they join before /readyz)")
check(spec.get("serviceName") == svc.get("metadata", {}).get("name"), "serviceName is the service")
check(all(labels.get(k) == v for k, v in svc.get("spec", {}).get("selector", {}).items()),
      "the service selects the pods")
check(spec.get("podManagementPolicy") == "Parallel", "the pods start together (Parallel)")
check(all(labels.get(k) == v for k, v in pdb.get("spec", {}).get("selector", {}).get("matchLabels", {}).items())
      and pdb.get("spec", {}).get("selector"), "the PodDisruptionBudget selects the pods")
grace = pod.get("terminationGracePeriodSeconds", 30)
check(grace > need, "terminationGracePeriodSeconds %s exceeds leave-timeout + grace (%ds)" % (grace, need))
(container,) = pod.get("containers", [None])
env = {e["name"]: e.get("value") for e in container.get("env", [])}
ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
    get = container.get(probe, {}).get("httpGet", {})
    check(get.get("path") == path, "%s on %s" % (probe, path))
    check(ports.get(get.get("port")) == metrics_port,
          "%s on the metrics port (%d, as the image sets it)" % (probe, metrics_port))
stop = container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
check(len(stop) > 2 and stop[0].endswith("shoal") and stop[1] == "drain" and "--leave" in stop,
      "preStop runs shoal drain --leave: %s" % stop)
wait = stop[stop.index("--wait") + 1] if "--wait" in stop else "600s"
check(int(wait.rstrip("s")) + need < grace,
      "the preStop drain's wait and a leave fit in the grace period")
replicas = spec.get("replicas", 1)
name, ns = sts.get("metadata", {}).get("name"), "$(POD_NAMESPACE)"
want = {"%s-%d.%s.%s.svc.cluster.local:7946" % (name, i, svc["metadata"]["name"], ns) for i in range(replicas)}
check(set((env.get("SHOAL_JOIN") or "").split(",")) == want, "SHOAL_JOIN names every pod: %s" % env.get("SHOAL_JOIN"))
check(env.get("SHOAL_EXPECT") == str(replicas), "SHOAL_EXPECT is the replicas")
mounts = {m["mountPath"] for m in container.get("volumeMounts", [])}
check("/var/lib/shoal" in mounts, "the data directory is on a volume")
check("/var/lib/shoal" in stop, "preStop names the data directory")
for v in env:
    if v.startswith("SHOAL_"):
        print(v)
for p in problems:
    print("FAIL:", p, file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
while read -r var; do known_var "$var" || fail "statefulset.yaml: $var is no option"; done <"$work/k8s.vars"
if ! command -v kubectl >/dev/null; then
    echo "skip: no kubectl: the manifests are checked as YAML only"
elif timeout 60 kubectl apply --dry-run=client --validate=false -f "$k8s" >"$work/kubectl.out" 2>&1; then
    echo "kubectl apply --dry-run=client: $(tr '\n' ';' <"$work/kubectl.out")"
elif grep -q -E 'server API group list|connection refused|no configuration has been provided|Unable to connect' \
    "$work/kubectl.out"; then
    echo "skip: kubectl reaches no API server (it needs one even for --dry-run=client): the manifests are checked as YAML only"
else
    fail "kubectl apply --dry-run=client: $(cat "$work/kubectl.out")"
fi

echo "deploy: $failures failed"
exit $((failures > 0))
