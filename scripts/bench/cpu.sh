#!/usr/bin/env bash
# Runs a command and prints the CPU every process on the machine spent while it ran, summed by
# program and first argument (`touchpoint serve`, `touchpoint loadgen`, `postgres`,
# `clickhouse-server`): how the cost of a run is shared among the collector and its databases.
#
#   scripts/bench/cpu.sh CMD [ARG…]
#
# Samples /proc/PID/stat (user + system time) every half second from before CMD starts until a
# second after it ends. A process already running is counted from the first sample, one started
# later from its start; one that ends between two samples loses up to half a second of its own.
# The sampler's own cost is listed too. Prints "seconds program:argument" lines, most first, after CMD's own output.
#
# Example (the sizes of the scale path in ARCHITECTURE.md):
#   CATCH_UP=0 SERVE_EVENTS=clickhouse://127.0.0.1:58123/DB \
#       scripts/bench/cpu.sh scripts/bench/fill.sh T pgfresh:$PG/postgres 500000 8
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 CMD [ARG…]" >&2; exit 2; }
ticks=$(getconf CLK_TCK)
declare -A first last name

# sample [initial]: reads every process's time; `initial` counts the ones running from now on.
sample() {
    local stat pid line rest fields argument
    for stat in /proc/[0-9]*/stat; do
        pid=${stat#/proc/}
        pid=${pid%/stat}
        read -r line <"$stat" 2>/dev/null || continue
        rest=${line##*) }
        read -r -a fields <<<"$rest"
        last[$pid]=$((fields[11] + fields[12]))
        if [ -z "${name[$pid]:-}" ]; then
            argument=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -d' ' -f2) || argument=
            line=${line#*(}
            name[$pid]="${line%%)*}:${argument}"
            name[$pid]=${name[$pid]// /_}
            if [ "${1:-}" = initial ]; then first[$pid]=${last[$pid]}; else first[$pid]=0; fi
        fi
    done
}

sample initial
"$@" &
command=$!
while kill -0 "$command" 2>/dev/null; do
    sample
    sleep 0.5
done
status=0
wait "$command" || status=$?
sleep 1
sample
echo "== CPU seconds while it ran, by program:argument"
for pid in "${!last[@]}"; do
    echo "${name[$pid]} $((last[$pid] - first[$pid]))"
done | awk -v ticks="$ticks" '{ spent[$1] += $2 } END {
    for (program in spent) if (spent[program] > 0) printf "%8.2f %s\n", spent[program] / ticks, program }' | sort -nr
exit "$status"
