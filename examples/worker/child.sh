#!/usr/bin/env bash
# examples/worker/child.sh: a task's child for `shoal worker`, in bash.
#
# As a learner or a standby it restores the task's state: it reports its
# falling lag on the status descriptor (SHOAL_STATUS_FD), "lag N" at each
# step, then "ready". When the worker writes "promote TERM.VERSION" there,
# the task is active from then on, in this same process: it counts. SIGTERM
# stops it, saying where it stopped. Each thing it does is one line on
# standard output.
#
#   shoal submit counter --parallelism 4 --stateful \
#       --command 'bash examples/worker/child.sh'
#
# CHILD_BACKLOG is the lag a learner starts from (50000), CHILD_RESTORE what
# it restores at each step of 0.2 s (10000). examples/worker/child.c is the
# same in C.
#
# CHILD_TRACE, a directory, makes it write down when it acts, one line per
# step as active in CHILD_TRACE/JOB-INDEX:
#
#     begin|act|end  TIME  NODE  EPOCH
#
# TIME in seconds ($EPOCHREALTIME), "begin" before its first act, "end" when
# SIGTERM stops it. The demo (scripts/demo) merges these files to show that
# no two nodes ever acted for one task at the same time.
set -u
task=${SHOAL_TASK:?run me as the command of a job of shoal worker}
fd=${SHOAL_STATUS_FD:?}
role=$SHOAL_ROLE epoch=$SHOAL_EPOCH count=0
lag=${CHILD_BACKLOG:-50000} restore=${CHILD_RESTORE:-10000}
[ "$role" = active ] && lag=0

say () { echo "$task: $* (pid $$)"; }
trace=${CHILD_TRACE:+$CHILD_TRACE/${task//\//-}}
note () { [ -z "$trace" ] || echo "$1 $EPOCHREALTIME ${SHOAL_NODE:0:8} $epoch" >>"$trace"; }
trap '[ "$role" = active ] && note end; say "stopping as $role at count $count"; exit 0' TERM

say "started as $role, epoch $epoch"
[ "$role" = active ] && note begin
listening=yes
while :; do
    # The wait for the worker's next line is the step's pace: 0.2 s.
    if [ $listening = yes ]; then
        IFS= read -r -t 0.2 line <&"$fd"
        status=$?
        if [ $status -eq 0 ]; then
            case $line in
            "promote "*)
                # The role in the environment is stale from now on.
                role=active epoch=${line#promote }
                note begin
                say "promoted to active, epoch $epoch" ;;
            esac
        elif [ $status -le 128 ]; then
            listening=no # the worker closed its end
        fi
    else
        sleep 0.2
    fi
    if [ "$role" = active ]; then
        count=$((count + 1))
        note act
        [ $((count % 25)) -eq 0 ] && say "count $count"
    elif [ "$lag" -gt 0 ]; then
        lag=$((lag > restore ? lag - restore : 0))
        if [ "$lag" -gt 0 ]; then
            echo "lag $lag" >&"$fd"
            say "restoring, lag $lag"
        else
            echo ready >&"$fd"
            say "ready"
        fi
    fi
done
