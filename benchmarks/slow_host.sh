#!/usr/bin/env bash
# A slower host on this one: run a command, and the local PostgreSQL server's processes
# while it runs, on fewer cores and/or under a CPU quota (Linux control groups, as root).
#
#   benchmarks/slow_host.sh [--cpus 0] [--quota PERCENT] -- COMMAND...
#
#   --cpus LIST      the cores they may use (cpuset: "0" is one core, "0-1" two)
#   --quota PERCENT  the CPU time they may use per 100 ms period, in percent of one core
#                    (cfs quota: 50 is half a core, in 50 ms slices; a cloud VM's burst
#                    credit or a container's limit behaves like this)
#
# Example (docs/performance.md, "A slower host"):
#   benchmarks/slow_host.sh --cpus 0 -- .venv/bin/python manage.py bench review --json
#
# PostgreSQL's server processes (every process named postgres) are moved into the group
# for the run, so new backends forked by the postmaster are limited too, and moved back
# to the root group afterwards, whatever the command's exit.
set -euo pipefail

cpus="" quota=""
while [ $# -gt 0 ]; do
    case "$1" in
        --cpus) cpus="$2"; shift 2 ;;
        --quota) quota="$2"; shift 2 ;;
        --) shift; break ;;
        *) echo "slow_host.sh: unknown option $1 (use --cpus, --quota, then -- COMMAND)" >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || { echo "slow_host.sh: no command after --" >&2; exit 2; }
[ -n "$cpus$quota" ] || { echo "slow_host.sh: give --cpus or --quota" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "slow_host.sh: control groups need root" >&2; exit 2; }

name="kgbench-slow-$$"
groups=()
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then  # cgroup v2: one unified tree
    dir="/sys/fs/cgroup/$name"
    echo "+cpu +cpuset" > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
    mkdir "$dir"
    [ -z "$cpus" ] || echo "$cpus" > "$dir/cpuset.cpus"
    [ -z "$quota" ] || echo "$((quota * 1000)) 100000" > "$dir/cpu.max"
    groups=("$dir")
    root_procs=/sys/fs/cgroup/cgroup.procs
else  # cgroup v1: one tree per controller
    if [ -n "$cpus" ]; then
        dir="/sys/fs/cgroup/cpuset/$name"
        mkdir "$dir"
        echo "$cpus" > "$dir/cpuset.cpus"
        cat /sys/fs/cgroup/cpuset/cpuset.mems > "$dir/cpuset.mems"
        groups+=("$dir")
    fi
    if [ -n "$quota" ]; then
        dir="/sys/fs/cgroup/cpu/$name"
        mkdir "$dir"
        echo 100000 > "$dir/cpu.cfs_period_us"
        echo "$((quota * 1000))" > "$dir/cpu.cfs_quota_us"
        groups+=("$dir")
    fi
fi

move() {  # move() TARGET-PROCS-FILE PIDS...
    local target="$1"; shift
    for pid in "$@"; do echo "$pid" > "$target" 2>/dev/null || true; done
}

restore() {
    local pids
    pids=$(pgrep -x postgres || true)
    for g in "${groups[@]}"; do
        if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
            move "$root_procs" $pids
        else
            move "$(dirname "$g")/cgroup.procs" $pids
        fi
        for p in $(cat "$g/cgroup.procs" 2>/dev/null); do
            if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
                move "$root_procs" "$p"
            else
                move "$(dirname "$g")/cgroup.procs" "$p"
            fi
        done
        rmdir "$g" 2>/dev/null || true
    done
}
trap restore EXIT

for g in "${groups[@]}"; do
    move "$g/cgroup.procs" $(pgrep -x postgres || true)
    move "$g/cgroup.procs" $$
done
"$@"
