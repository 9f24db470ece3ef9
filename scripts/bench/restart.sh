#!/usr/bin/env bash
# A start of the collector on an existing store: time until it answers, then ingest right after.
#
#   scripts/bench/restart.sh BIN DIR [SEED]
#
#   BIN   a release `touchpoint`
#   DIR   an existing SQLite store (a 50 M store for the figures in BENCHMARKS.md)
#   SEED  loadgen's --seed of the first run (default 401; each further run adds 1)
#
# Starts `BIN serve` on DIR and prints the seconds until /health answered (schema migrations of
# an upgrade included) and the resident size then; waits DELAY seconds (default 0), then sends
# RUNS runs (default 2) of EVENTS web events each (default 100000, random ids, 8 x 100) and prints
# events/s, p99 and the slowest request of each; stops the collector with SIGTERM (which saves the
# message-key filter beside the file for the next start).
# NO_FILTER=1 removes that saved filter before the start, as after a crash.
set -euo pipefail
source "$(dirname "$0")/common.sh"

[ $# -ge 2 ] || bench_die "usage: $0 BIN DIR [SEED]"
bin=$1 dir=$2 seed=${3:-401}
[ -f "$dir/touchpoint.sqlite" ] || bench_die "$dir holds no touchpoint.sqlite"
if [ "${NO_FILTER:-0}" = 1 ]; then
    rm -f "$dir/touchpoint.sqlite-keyfilter"
fi
filter=absent
[ ! -f "$dir/touchpoint.sqlite-keyfilter" ] || filter=present

bench_serve "$bin" "$dir"
echo "== /health after $SERVE_START_SECONDS s (saved key filter: $filter); resident $(bench_rss) MB"
sleep "${DELAY:-0}"
for run in $(seq "${RUNS:-2}"); do
    bench_loadgen "$bin" "${EVENTS:-100000}" $((seed + run - 1)) >/dev/null
    echo "run $run: $LG_EPS events/s, p99 $LG_P99 ms, slowest $LG_MAX ms (lost ${LG_LOST:-?}, stored twice ${LG_DUP:-?})"
done
echo "-- peak resident: $(bench_peak_rss) MB"
bench_stop
