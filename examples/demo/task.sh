#!/usr/bin/env bash
# examples/demo/task.sh: the task of the local demo (scripts/demo), run by
# `shoal worker` as the command of a stateful job.
#
# As a learner it restores the task's state at a visible rate, reporting
# its falling lag on the status descriptor ("lag N", then "ready"). As an
# active it works, and writes down when it acts: each step appends a line
# to DEMO_TRACE/JOB-INDEX,
#
#     begin|act|end  TIME  NODE  EPOCH
#
# TIME in seconds ($EPOCHREALTIME), "begin" before its first act, "end"
# when SIGTERM stops it. The demo merges these files to show that no two
# nodes ever acted for one task at the same time. A promotion ("promote
# TERM.VERSION" from the worker) makes it active in this same process.
#
# DEMO_BACKLOG is the lag a learner starts from (40000 records), and
# DEMO_RESTORE what it restores per step of 0.1 s (2000).
set -u
task=${SHOAL_TASK:?run me as the command of a job of shoal worker}
fd=${SHOAL_STATUS_FD:?}
trace=${DEMO_TRACE:?}/${task//\//-}
role=$SHOAL_ROLE epoch=$SHOAL_EPOCH node=${SHOAL_NODE:0:8}
lag=${DEMO_BACKLOG:-40000} restore=${DEMO_RESTORE:-2000}

note () { echo "$1 $EPOCHREALTIME $node $epoch" >>"$trace"; }
acting=no
begin () {
    acting=yes
    note begin
}
trap '[ $acting = yes ] && note end; exit 0' TERM

if [ "$role" = active ]; then
    lag=0
    begin
fi
listening=yes
while :; do
    # Waiting for the worker's next line paces the steps.
    if [ $listening = yes ]; then
        IFS= read -r -t 0.1 line <&"$fd"
        status=$?
        if [ $status -eq 0 ]; then
            case $line in
            "promote "*)
                role=active epoch=${line#promote }
                begin
                ;;
            esac
        elif [ $status -le 128 ]; then
            listening=no # the worker closed its end
        fi
    else
        sleep 0.1
    fi
    if [ $acting = yes ]; then
        note act
    elif [ "$lag" -gt 0 ]; then
        lag=$((lag > restore ? lag - restore : 0))
        if [ "$lag" -gt 0 ]; then
            echo "lag $lag" >&"$fd"
        else
            echo ready >&"$fd"
        fi
    fi
done
