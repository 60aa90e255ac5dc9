#!/usr/bin/env bash
# Random fault schedules with tasks: shoal-sim --scenario random-tasks (a job
# of 60 tasks, stateful on odd seeds and stateless on even ones) over seeds
# 1 .. SCHEDULES, on every core. Prints one JSON object like
# bench/election_faults.sh, which it runs; exit status 1 when a schedule
# broke an invariant (two nodes running a task as active, among others).
#
#   bench/task_faults.sh [SCHEDULES [NODES [FAULTS [BUILD]]]]
#
# Defaults: 1000 schedules of 10 faults on 12 nodes, build/plain.
# SHOAL_TASK_FAULTS_LEAVES=1 adds graceful leaves to the faults (--leaves).
leaves=
[ "${SHOAL_TASK_FAULTS_LEAVES:-0}" = 1 ] && leaves=--leaves
export SHOAL_FAULTS_SCENARIO=random-tasks SHOAL_FAULTS_EVEN=--stateless \
    SHOAL_FAULTS_EVEN_NAME=stateless SHOAL_FAULTS_ODD_NAME=stateful \
    SHOAL_FAULTS_EXTRA="--tasks 60 $leaves" SHOAL_FAULTS_BENCHMARK=task_faults${leaves:+_leaves}
exec "$(dirname "$0")/election_faults.sh" "${1:-1000}" "${2:-12}" "${3:-10}" "${4:-build/plain}"
