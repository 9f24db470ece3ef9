#!/usr/bin/env bash
# Alternating ingest runs (ingest.sh) of builds and stores, with medians and pairwise ratios: the
# method of every A/B and every "empty against 50 M" figure in BENCHMARKS.md.
#
#   scripts/bench/ab.sh ROUNDS RUN [RUN…]
#
#   ROUNDS  how many times each RUN is measured
#   RUN     BIN@STORE[::OPTIONS]: a release `touchpoint`, the store it ingests into (fresh:DIR,
#           DIR, pgfresh:URL or postgres://…, as in common.sh; `fresh` alone is a fresh SQLite
#           store in a temporary folder) and, after `::`, loadgen options of this RUN only,
#           separated by commas (`T@fresh::--v7-ids`)
#
# Each round runs every RUN once, in the given order in odd rounds and reversed in even ones
# (ABBA), so that a drift of the machine's speed weighs on both sides alike. A kept store grows
# by each run's events. Prints, per RUN: the median and range of events/s, p99's range, and the
# medians of the collector's and the writer's CPU an event; then each RUN against the first by
# the medians and by the median of the rounds' ratios.
#
# Examples:
#   ab.sh 5 /tmp/tp/touchpoint-A@fresh /tmp/tp/touchpoint-B@fresh        two commits, fresh stores
#   WARM_CACHE=2 ab.sh 6 T@fresh T@/data/f50                             empty against a 50 M store
#   ab.sh 3 T@fresh T@fresh::--v7-ids                                     random against v7 ids
#   ab.sh 3 T@pgfresh:postgres://postgres@127.0.0.1:55432/postgres       PostgreSQL
# Environment: EVENTS (default 200000), SEED (the first round's seed, default 1) and everything
# ingest.sh reads (WARMUP, PAUSE, CLIENTS, BATCH, LOADGEN_ARGS, WARM_CACHE).
set -euo pipefail
here=$(dirname "$0")
source "$here/common.sh"

[ $# -ge 2 ] || bench_die "usage: $0 ROUNDS BIN@STORE [BIN@STORE…]"
rounds=$1
shift
runs=("$@")
events=${EVENTS:-200000}
seed=${SEED:-1}
results=$(mktemp -u)
scratch=$(mktemp -d)

for run in "${runs[@]}"; do
    case "$run" in *@*) ;; *) bench_die "$run: expected BIN@STORE" ;; esac
    bench_check_binary "${run%%@*}"
done

for round in $(seq "$rounds"); do
    order=$(seq 0 $((${#runs[@]} - 1)))
    [ $((round % 2)) -eq 1 ] || order=$(echo "$order" | sort -n -r)
    for index in $order; do
        run=${runs[$index]}
        bin=${run%%@*} store=${run#*@} options=
        case "$store" in *::*) options=${store#*::} store=${store%%::*} ;; esac
        [ "$store" != fresh ] || store=fresh:$scratch/store-$index
        echo "== round $round of $rounds, run $((index + 1)): $run"
        LOADGEN_ARGS="$LOADGEN_ARGS ${options//,/ }" RESULT=$results.$index "$here/ingest.sh" "$bin" "$store" $((seed + round - 1)) "$events" | grep -E '^(throughput|latency|stored|failure|result|-- store)'
    done
done
rm -rf "$scratch"

field() { # field NAME: the value of NAME= in each result line on standard input
    sed -n "s/.* $1=\([^ ]*\).*/\1/p" | grep -v '^-$' || true
}

echo
echo "== medians over $rounds rounds, $events events a run"
printf '%-4s %-12s %-20s %-14s %-10s %-10s %s\n' run "events/s" range "p99 (ms)" "CPU µs" "writer µs" "RUN"
for index in "${!runs[@]}"; do
    lines=$(cat "$results.$index")
    printf '%-4s %-12s %-20s %-14s %-10s %-10s %s\n' $((index + 1)) \
        "$(echo "$lines" | field eps | bench_median)" "$(echo "$lines" | field eps | bench_range)" \
        "$(echo "$lines" | field p99 | bench_range)" "$(echo "$lines" | field cpu | bench_median)" \
        "$(echo "$lines" | field writer | bench_median)" "${runs[$index]}"
done
if [ ${#runs[@]} -gt 1 ]; then
    first=$(field eps <"$results.0" | bench_median)
    for index in $(seq 1 $((${#runs[@]} - 1))); do
        median=$(field eps <"$results.$index" | bench_median)
        pairwise=$(paste <(field eps <"$results.0") <(field eps <"$results.$index") \
            | awk '{ printf "%.1f\n", 100 * ($2 / $1 - 1) }')
        echo "run $((index + 1)) against run 1: $(echo "$first $median" | awk '{ printf "%+.1f %%", 100 * ($2 / $1 - 1) }')" \
            "by the medians; rounds $(echo "$pairwise" | tr '\n' ' ')(median $(echo "$pairwise" | bench_median) %)"
    done
fi
rm -f "$results".*
